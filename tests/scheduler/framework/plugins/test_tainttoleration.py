"""Ports pkg/scheduler/framework/plugins/tainttoleration/taint_toleration_test.go."""

from __future__ import annotations

import pytest

from schedviz.kube.objects import Node, Pod, Taint, Toleration
from schedviz.scheduler.framework.cycle_state import CycleState
from schedviz.scheduler.framework.interface import (
    MAX_NODE_SCORE,
    Code,
    NodeScore,
    Status,
    new_status,
)
from schedviz.scheduler.framework.plugins.tainttoleration import (
    ERR_REASON_NOT_MATCH,
    NAME,
    TaintToleration,
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

PREFER = "PreferNoSchedule"
NO_SCHEDULE = "NoSchedule"


def node_with_taints(name: str, taints: list[Taint]) -> Node:
    return Node(name=name, taints=tuple(taints))


def pod_with_tolerations(name: str, tolerations: list[Toleration]) -> Pod:
    return Pod(name=name, tolerations=tuple(tolerations))


SCORE_CASES = [
    (
        "node with taints tolerated by the pod gets a higher score than intolerable taints",
        pod_with_tolerations("pod1", [Toleration("foo", "Equal", "bar", PREFER)]),
        [
            node_with_taints("nodeA", [Taint("foo", PREFER, "bar")]),
            node_with_taints("nodeB", [Taint("foo", PREFER, "blah")]),
        ],
        [MAX_NODE_SCORE, 0],
    ),
    (
        "nodes whose taints are all tolerated get the same score, whatever their number",
        pod_with_tolerations(
            "pod1",
            [
                Toleration("cpu-type", "Equal", "arm64", PREFER),
                Toleration("disk-type", "Equal", "ssd", PREFER),
            ],
        ),
        [
            node_with_taints("nodeA", []),
            node_with_taints("nodeB", [Taint("cpu-type", PREFER, "arm64")]),
            node_with_taints(
                "nodeC", [Taint("cpu-type", PREFER, "arm64"), Taint("disk-type", PREFER, "ssd")]
            ),
        ],
        [MAX_NODE_SCORE, MAX_NODE_SCORE, MAX_NODE_SCORE],
    ),
    (
        "the more intolerable taints a node has, the lower score it gets",
        pod_with_tolerations("pod1", [Toleration("foo", "Equal", "bar", PREFER)]),
        [
            node_with_taints("nodeA", []),
            node_with_taints("nodeB", [Taint("cpu-type", PREFER, "arm64")]),
            node_with_taints(
                "nodeC", [Taint("cpu-type", PREFER, "arm64"), Taint("disk-type", PREFER, "ssd")]
            ),
        ],
        [MAX_NODE_SCORE, 50, 0],
    ),
    (
        "only taints and tolerations of effect PreferNoSchedule count",
        pod_with_tolerations(
            "pod1",
            [
                Toleration("cpu-type", "Equal", "arm64", NO_SCHEDULE),
                Toleration("disk-type", "Equal", "ssd", NO_SCHEDULE),
            ],
        ),
        [
            node_with_taints("nodeA", []),
            node_with_taints("nodeB", [Taint("cpu-type", NO_SCHEDULE, "arm64")]),
            node_with_taints(
                "nodeC", [Taint("cpu-type", PREFER, "arm64"), Taint("disk-type", PREFER, "ssd")]
            ),
        ],
        [MAX_NODE_SCORE, MAX_NODE_SCORE, 0],
    ),
    (
        "no taints and no tolerations: the node without taints wins",
        pod_with_tolerations("pod1", []),
        [
            node_with_taints("nodeA", []),
            node_with_taints("nodeB", [Taint("cpu-type", PREFER, "arm64")]),
        ],
        [MAX_NODE_SCORE, 0],
    ),
]


@pytest.mark.parametrize(
    ("pod", "nodes", "expected"), [c[1:] for c in SCORE_CASES], ids=[c[0] for c in SCORE_CASES]
)
def test_taint_toleration_score(pod: Pod, nodes: list[Node], expected: list[int]) -> None:
    handle = FakeHandle(nodes=nodes)
    plugin = new(None, handle)
    state = CycleState()
    infos = list(handle.snapshot.list())
    assert plugin.pre_score(state, pod, infos) is None
    scores = []
    for info in infos:
        score, status = plugin.score(state, pod, info)
        assert status is None
        scores.append(NodeScore(info.name, score))
    extensions = plugin.score_extensions()
    assert extensions is not None
    assert extensions.normalize_score(state, pod, scores) is None
    assert scores == [NodeScore(n.name, s) for n, s in zip(nodes, expected, strict=True)]


def untolerated(reason: str) -> Status:
    return new_status(Code.UnschedulableAndUnresolvable, reason)


DEDICATED_USER1 = Taint("dedicated", NO_SCHEDULE, "user1")

FILTER_CASES = [
    (
        "a pod without tolerations can't land on a node with taints",
        pod_with_tolerations("pod1", []),
        node_with_taints("nodeA", [DEDICATED_USER1]),
        untolerated("node(s) had untolerated taint {dedicated: user1}"),
    ),
    (
        "a pod tolerating the dedicated taint of user1",
        pod_with_tolerations("pod1", [Toleration("dedicated", value="user1", effect=NO_SCHEDULE)]),
        node_with_taints("nodeA", [DEDICATED_USER1]),
        None,
    ),
    (
        "a pod tolerating user2 can't land on the node of user1",
        pod_with_tolerations("pod1", [Toleration("dedicated", "Equal", "user2", NO_SCHEDULE)]),
        node_with_taints("nodeA", [DEDICATED_USER1]),
        untolerated("node(s) had untolerated taint {dedicated: user1}"),
    ),
    (
        "a toleration with operator Exists tolerates the taint",
        pod_with_tolerations("pod1", [Toleration("foo", "Exists", effect=NO_SCHEDULE)]),
        node_with_taints("nodeA", [Taint("foo", NO_SCHEDULE, "bar")]),
        None,
    ),
    (
        "all of several taints are tolerated",
        pod_with_tolerations(
            "pod1",
            [
                Toleration("dedicated", "Equal", "user2", NO_SCHEDULE),
                Toleration("foo", "Exists", effect=NO_SCHEDULE),
            ],
        ),
        node_with_taints(
            "nodeA", [Taint("dedicated", NO_SCHEDULE, "user2"), Taint("foo", NO_SCHEDULE, "bar")]
        ),
        None,
    ),
    (
        "key and value match but the non-empty effect does not",
        pod_with_tolerations("pod1", [Toleration("foo", "Equal", "bar", PREFER)]),
        node_with_taints("nodeA", [Taint("foo", NO_SCHEDULE, "bar")]),
        untolerated("node(s) had untolerated taint {foo: bar}"),
    ),
    (
        "an empty toleration effect tolerates NoSchedule",
        pod_with_tolerations("pod1", [Toleration("foo", "Equal", "bar")]),
        node_with_taints("nodeA", [Taint("foo", NO_SCHEDULE, "bar")]),
        None,
    ),
    (
        "a PreferNoSchedule taint does not filter, whatever the tolerations",
        pod_with_tolerations("pod1", [Toleration("dedicated", "Equal", "user2", NO_SCHEDULE)]),
        node_with_taints("nodeA", [Taint("dedicated", PREFER, "user1")]),
        None,
    ),
    (
        "a PreferNoSchedule taint does not filter a pod without tolerations",
        pod_with_tolerations("pod1", []),
        node_with_taints("nodeA", [Taint("dedicated", PREFER, "user1")]),
        None,
    ),
    (
        "a NoExecute taint filters too",
        pod_with_tolerations("pod1", []),
        node_with_taints("nodeA", [Taint("node.kubernetes.io/not-ready", "NoExecute")]),
        untolerated("node(s) had untolerated taint {node.kubernetes.io/not-ready: }"),
    ),
]


@pytest.mark.parametrize(
    ("pod", "node", "want"), [c[1:] for c in FILTER_CASES], ids=[c[0] for c in FILTER_CASES]
)
def test_taint_toleration_filter(pod: Pod, node: Node, want: Status | None) -> None:
    assert new(None, FakeHandle()).filter(CycleState(), pod, NodeInfo(node)) == want


def test_reason_constant_name_and_events() -> None:
    assert ERR_REASON_NOT_MATCH == "node(s) had taints that the pod didn't tolerate"
    assert TaintToleration().name() == NAME == "TaintToleration"
    assert [e.event for e in TaintToleration().events_to_register()] == [
        ClusterEvent(EventResource.Node, ActionType.Add | ActionType.UpdateNodeTaint),
        ClusterEvent(EventResource.Pod, ActionType.UpdatePodToleration),
    ]


def test_score_without_pre_score_is_an_error() -> None:
    _, status = TaintToleration().score(CycleState(), Pod(name="p"), NodeInfo(Node(name="n")))
    assert status is not None and status.code == Code.Error


USER2 = pod_with_tolerations("pod1", [Toleration("dedicated", "Equal", "user2", NO_SCHEDULE)])


@pytest.mark.parametrize(
    ("old_obj", "new_obj", "expected"),
    [
        pytest.param(None, "not-a-node", QueueingHint.Queue, id="backoff-wrong-new-object"),
        pytest.param(
            "not-a-node",
            node_with_taints("nodeA", [DEDICATED_USER1]),
            QueueingHint.Queue,
            id="backoff-wrong-old-object",
        ),
        pytest.param(
            None,
            node_with_taints("nodeA", [DEDICATED_USER1]),
            QueueingHint.QueueSkip,
            id="skip-queue-on-untoleratedtaint-node-added",
        ),
        pytest.param(
            None,
            node_with_taints("nodeA", [Taint("dedicated", NO_SCHEDULE, "user2")]),
            QueueingHint.Queue,
            id="queue-on-toleratedtaint-node-added",
        ),
        pytest.param(
            node_with_taints("nodeA", [DEDICATED_USER1]),
            node_with_taints("nodeA", [DEDICATED_USER1, Taint("dedicated", NO_SCHEDULE, "user3")]),
            QueueingHint.QueueSkip,
            id="skip-unrelated-change",
        ),
        pytest.param(
            node_with_taints("nodeA", [DEDICATED_USER1]),
            node_with_taints("nodeA", [Taint("dedicated", NO_SCHEDULE, "user2")]),
            QueueingHint.Queue,
            id="queue-on-taint-change",
        ),
    ],
)
def test_is_schedulable_after_node_change(
    old_obj: object, new_obj: object, expected: QueueingHint
) -> None:
    assert TaintToleration().is_schedulable_after_node_change(USER2, old_obj, new_obj) == expected


POD_1 = Pod(name="pod-1", namespace="ns-1")
FOO_TOLERATION = Toleration("foo", effect=NO_SCHEDULE)


@pytest.mark.parametrize(
    ("old_obj", "new_obj", "expected"),
    [
        pytest.param(None, "not-a-pod", QueueingHint.Queue, id="backoff-wrong-new-object"),
        pytest.param("not-a-pod", Pod(name="p"), QueueingHint.Queue, id="backoff-wrong-old-object"),
        pytest.param(
            Pod(name="pod-2", namespace="ns-1"),
            Pod(name="pod-2", namespace="ns-1", tolerations=(FOO_TOLERATION,)),
            QueueingHint.QueueSkip,
            id="skip-updates-other-pod",
        ),
        pytest.param(
            POD_1,
            Pod(name="pod-1", namespace="ns-1", labels={"foo": "bar"}),
            QueueingHint.QueueSkip,
            id="skip-updates-not-toleration",
        ),
        pytest.param(
            POD_1,
            Pod(name="pod-1", namespace="ns-1", tolerations=(FOO_TOLERATION,)),
            QueueingHint.Queue,
            id="queue-on-toleration-added",
        ),
    ],
)
def test_is_schedulable_after_pod_change(
    old_obj: object, new_obj: object, expected: QueueingHint
) -> None:
    assert TaintToleration().is_schedulable_after_pod_change(POD_1, old_obj, new_obj) == expected
