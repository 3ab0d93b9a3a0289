"""Ports pkg/scheduler/framework/plugins/nodeports/node_ports_test.go."""

from __future__ import annotations

import pytest

from schedviz.kube.objects import Container, ContainerPort, Pod
from schedviz.scheduler.framework.cycle_state import CycleState
from schedviz.scheduler.framework.interface import Code, Status, new_status
from schedviz.scheduler.framework.plugins.nodeports import (
    ERR_REASON,
    NAME,
    NodePorts,
    fits,
    get_host_ports,
    new,
)
from schedviz.scheduler.framework.types import (
    ActionType,
    ClusterEvent,
    EventResource,
    NodeInfo,
    QueueingHint,
)
from schedviz.scheduler.testing.framework_helpers import FakeHandle
from schedviz.scheduler.testing.wrappers import make_node, make_pod


def new_pod(host: str, *host_port_infos: str) -> Pod:
    """``"UDP/127.0.0.1/8080"`` per port, as upstream's newPod."""
    ports = []
    for info in host_port_infos:
        protocol, host_ip, port = info.split("/")
        ports.append(ContainerPort(0, int(port), protocol, host_ip))
    return make_pod().node(host).container_port(ports).obj()


def node_info(*pods: Pod) -> NodeInfo:
    return NodeInfo(make_node().name("m1").obj(), list(pods))


CONFLICT = new_status(Code.Unschedulable, ERR_REASON)

CASES = [
    (
        "other port",
        new_pod("m1", "UDP/127.0.0.1/8080"),
        node_info(new_pod("m1", "UDP/127.0.0.1/9090")),
        None,
    ),
    (
        "same udp port",
        new_pod("m1", "UDP/127.0.0.1/8080"),
        node_info(new_pod("m1", "UDP/127.0.0.1/8080")),
        CONFLICT,
    ),
    (
        "same tcp port",
        new_pod("m1", "TCP/127.0.0.1/8080"),
        node_info(new_pod("m1", "TCP/127.0.0.1/8080")),
        CONFLICT,
    ),
    (
        "different host ip",
        new_pod("m1", "TCP/127.0.0.1/8080"),
        node_info(new_pod("m1", "TCP/127.0.0.2/8080")),
        None,
    ),
    (
        "different protocol",
        new_pod("m1", "UDP/127.0.0.1/8080"),
        node_info(new_pod("m1", "TCP/127.0.0.1/8080")),
        None,
    ),
    (
        "second udp port conflict",
        new_pod("m1", "UDP/127.0.0.1/8000", "UDP/127.0.0.1/8080"),
        node_info(new_pod("m1", "UDP/127.0.0.1/8080")),
        CONFLICT,
    ),
    (
        "first tcp port conflict",
        new_pod("m1", "TCP/127.0.0.1/8001", "UDP/127.0.0.1/8080"),
        node_info(new_pod("m1", "TCP/127.0.0.1/8001", "UDP/127.0.0.1/8081")),
        CONFLICT,
    ),
    (
        "first tcp port conflict due to 0.0.0.0 hostIP",
        new_pod("m1", "TCP/0.0.0.0/8001"),
        node_info(new_pod("m1", "TCP/127.0.0.1/8001")),
        CONFLICT,
    ),
    (
        "TCP hostPort conflict due to 0.0.0.0 hostIP",
        new_pod("m1", "TCP/10.0.10.10/8001", "TCP/0.0.0.0/8001"),
        node_info(new_pod("m1", "TCP/127.0.0.1/8001")),
        CONFLICT,
    ),
    (
        "second tcp port conflict to 0.0.0.0 hostIP",
        new_pod("m1", "TCP/127.0.0.1/8001"),
        node_info(new_pod("m1", "TCP/0.0.0.0/8001")),
        CONFLICT,
    ),
    (
        "second different protocol",
        new_pod("m1", "UDP/127.0.0.1/8001"),
        node_info(new_pod("m1", "TCP/0.0.0.0/8001")),
        None,
    ),
    (
        "UDP hostPort conflict due to 0.0.0.0 hostIP",
        new_pod("m1", "UDP/127.0.0.1/8001"),
        node_info(new_pod("m1", "TCP/0.0.0.0/8001", "UDP/0.0.0.0/8001")),
        CONFLICT,
    ),
]


@pytest.mark.parametrize(("pod", "info", "want"), [c[1:] for c in CASES], ids=[c[0] for c in CASES])
def test_node_ports(pod: Pod, info: NodeInfo, want: Status | None) -> None:
    plugin = new(None, FakeHandle())
    state = CycleState()
    result, status = plugin.pre_filter(state, pod, [info])
    assert (result, status) == (None, None)
    assert plugin.filter(state, pod, info) == want
    assert fits(pod, info) is (want is None)


def test_pre_filter_skips_a_pod_without_host_ports() -> None:
    result, status = NodePorts().pre_filter(CycleState(), make_pod().obj(), [])
    assert result is None
    assert status == Status(Code.Skip)


def test_filter_without_pre_filter_is_an_error() -> None:
    status = NodePorts().filter(CycleState(), make_pod().obj(), node_info())
    assert status is not None and status.code == Code.Error
    assert status.message() == 'reading "PreFilterNodePorts" from cycleState: not found'


def test_get_host_ports_keeps_ports_with_a_host_port_of_containers_and_sidecars() -> None:
    pod = (
        make_pod()
        .container_port([ContainerPort(8001, 8001), ContainerPort(8002, 8002)])
        .container_port([ContainerPort(8003, 8003), ContainerPort(8004, 8004)])
        .container_port([ContainerPort(8005)])
        .obj()
    )
    sidecar = Container("sidecar", ports=(ContainerPort(9001, 9001),), restart_policy="Always")
    init = Container("init", ports=(ContainerPort(9002, 9002),))
    pod.init_containers = (init, sidecar)
    assert [p.host_port for p in get_host_ports(pod)] == [9001, 8001, 8002, 8003, 8004]


def test_reason_name_and_events() -> None:
    assert ERR_REASON == "node(s) didn't have free ports for the requested pod ports"
    assert NodePorts().name() == NAME == "NodePorts"
    events = NodePorts().events_to_register()
    assert [e.event for e in events] == [
        ClusterEvent(EventResource.Pod, ActionType.Delete),
        ClusterEvent(EventResource.Node, ActionType.Add),
    ]
    assert events[0].queueing_hint_fn is not None
    assert events[1].queueing_hint_fn is None


POD_WITH_HOST_PORT = make_pod().name("p").host_port(8080).obj()


@pytest.mark.parametrize(
    ("old_obj", "expected"),
    [
        pytest.param("not-a-pod", QueueingHint.Queue, id="backoff-wrong-old-object"),
        pytest.param(
            make_pod().name("d").obj(), QueueingHint.QueueSkip, id="skip-queue-on-unscheduled"
        ),
        pytest.param(
            make_pod().name("d").node("fake-node").obj(),
            QueueingHint.QueueSkip,
            id="skip-queue-on-non-hostport",
        ),
        pytest.param(
            make_pod().name("d").node("fake-node").host_port(8081).obj(),
            QueueingHint.QueueSkip,
            id="skip-queue-on-unrelated-hostport",
        ),
        pytest.param(
            make_pod().name("d").node("fake-node").host_port(8080).obj(),
            QueueingHint.Queue,
            id="queue-on-released-hostport",
        ),
        pytest.param(
            make_pod().name("d").nominated_node_name("fake-node").host_port(8080).obj(),
            QueueingHint.Queue,
            id="queue-on-released-hostport-of-nominated-pod",
        ),
    ],
)
def test_is_schedulable_after_pod_deleted(old_obj: object, expected: QueueingHint) -> None:
    hint = NodePorts().is_schedulable_after_pod_deleted(POD_WITH_HOST_PORT, old_obj, None)
    assert hint == expected
