"""Ports pkg/scheduler/framework/plugins/nodename/node_name_test.go."""

from __future__ import annotations

import pytest

from schedviz.kube.objects import Node, Pod
from schedviz.scheduler.framework.cycle_state import CycleState
from schedviz.scheduler.framework.interface import Code, FilterPlugin, Status, new_status
from schedviz.scheduler.framework.plugins.nodename import ERR_REASON, NAME, NodeName, new
from schedviz.scheduler.framework.types import (
    ActionType,
    ClusterEvent,
    EventResource,
    NodeInfo,
    QueueingHint,
)
from schedviz.scheduler.testing.framework_helpers import FakeHandle
from schedviz.scheduler.testing.wrappers import make_node, make_pod


@pytest.mark.parametrize(
    ("pod", "node", "want"),
    [
        pytest.param(make_pod().obj(), make_node().obj(), None, id="no host specified"),
        pytest.param(
            make_pod().node("foo").obj(), make_node().name("foo").obj(), None, id="host matches"
        ),
        pytest.param(
            make_pod().node("bar").obj(),
            make_node().name("foo").obj(),
            new_status(Code.UnschedulableAndUnresolvable, ERR_REASON),
            id="host doesn't match",
        ),
    ],
)
def test_node_name(pod: Pod, node: Node, want: Status | None) -> None:
    plugin = new(None, FakeHandle())
    assert isinstance(plugin, FilterPlugin)
    assert plugin.filter(CycleState(), pod, NodeInfo(node)) == want


def test_reason_and_name() -> None:
    assert ERR_REASON == "node(s) didn't match the requested node name"
    assert NodeName().name() == NAME == "NodeName"


def test_it_registers_for_node_add() -> None:
    (registered,) = NodeName().events_to_register()
    assert registered.event == ClusterEvent(EventResource.Node, ActionType.Add)


@pytest.mark.parametrize(
    ("pod", "new_obj", "expected"),
    [
        pytest.param(
            make_pod().node("foo").obj(),
            "not-a-node",
            QueueingHint.Queue,
            id="backoff-wrong-new-object",
        ),
        pytest.param(
            make_pod().node("foo").obj(),
            make_node().name("bar").obj(),
            QueueingHint.QueueSkip,
            id="skip-queue-on-unrelated-node-added",
        ),
        pytest.param(
            make_pod().node("foo").obj(),
            make_node().name("foo").obj(),
            QueueingHint.Queue,
            id="queue-on-specified-node-added",
        ),
        pytest.param(
            make_pod().obj(),
            make_node().name("foo").obj(),
            QueueingHint.Queue,
            id="queue-on-pod-without-node-name",
        ),
    ],
)
def test_is_schedulable_after_node_add(pod: Pod, new_obj: object, expected: QueueingHint) -> None:
    assert NodeName().is_schedulable_after_node_add(pod, None, new_obj) == expected
