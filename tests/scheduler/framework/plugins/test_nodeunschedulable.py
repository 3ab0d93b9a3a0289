"""Ports pkg/scheduler/framework/plugins/nodeunschedulable/node_unschedulable_test.go."""

from __future__ import annotations

import pytest

from schedviz.kube.objects import TAINT_NODE_UNSCHEDULABLE, Node, Pod, Taint, Toleration
from schedviz.scheduler.framework.cycle_state import CycleState
from schedviz.scheduler.framework.interface import Code, Status, new_status
from schedviz.scheduler.framework.plugins.nodeunschedulable import (
    ERR_REASON_UNSCHEDULABLE,
    NAME,
    NodeUnschedulable,
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

UNSCHEDULABLE_TOLERATION = Toleration(key=TAINT_NODE_UNSCHEDULABLE, effect="NoSchedule")


@pytest.mark.parametrize(
    ("pod", "node", "want"),
    [
        pytest.param(
            make_pod().obj(),
            make_node().name("n").unschedulable().obj(),
            new_status(Code.UnschedulableAndUnresolvable, ERR_REASON_UNSCHEDULABLE),
            id="does not schedule pod to unschedulable node",
        ),
        pytest.param(
            make_pod().obj(), make_node().name("n").obj(), None, id="schedule pod to normal node"
        ),
        pytest.param(
            make_pod().toleration(UNSCHEDULABLE_TOLERATION).obj(),
            make_node().name("n").unschedulable().obj(),
            None,
            id="schedule pod with toleration to unschedulable node",
        ),
    ],
)
def test_node_unschedulable(pod: Pod, node: Node, want: Status | None) -> None:
    assert new(None, FakeHandle()).filter(CycleState(), pod, NodeInfo(node)) == want


def test_reason_and_name() -> None:
    assert ERR_REASON_UNSCHEDULABLE == "node(s) were unschedulable"
    assert NodeUnschedulable().name() == NAME == "NodeUnschedulable"


def test_events_to_register() -> None:
    events = [e.event for e in NodeUnschedulable().events_to_register()]
    assert events == [
        ClusterEvent(EventResource.Node, ActionType.Add | ActionType.UpdateNodeTaint),
        ClusterEvent(EventResource.Pod, ActionType.UpdatePodToleration),
    ]


UNSCHEDULABLE = make_node().name("n").unschedulable().obj()
SCHEDULABLE = make_node().name("n").obj()


@pytest.mark.parametrize(
    ("old_obj", "new_obj", "expected"),
    [
        pytest.param(None, "not-a-node", QueueingHint.Queue, id="backoff-wrong-new-object"),
        pytest.param(
            "not-a-node", UNSCHEDULABLE, QueueingHint.Queue, id="backoff-wrong-old-object"
        ),
        pytest.param(
            None, UNSCHEDULABLE, QueueingHint.QueueSkip, id="skip-queue-on-unschedulable-node-added"
        ),
        pytest.param(None, SCHEDULABLE, QueueingHint.Queue, id="queue-on-schedulable-node-added"),
        pytest.param(
            UNSCHEDULABLE,
            make_node()
            .name("n")
            .unschedulable()
            .taints([Taint("node.kubernetes.io/not-ready", "NoExecute")])
            .obj(),
            QueueingHint.QueueSkip,
            id="skip-unrelated-change",
        ),
        pytest.param(
            UNSCHEDULABLE, SCHEDULABLE, QueueingHint.Queue, id="queue-on-unschedulable-field-change"
        ),
    ],
)
def test_is_schedulable_after_node_change(
    old_obj: object, new_obj: object, expected: QueueingHint
) -> None:
    hint = NodeUnschedulable().is_schedulable_after_node_change(make_pod().obj(), old_obj, new_obj)
    assert hint == expected


TARGET = make_pod().name("p").obj()


@pytest.mark.parametrize(
    ("old_obj", "new_obj", "expected"),
    [
        pytest.param(TARGET, "not-a-pod", QueueingHint.Queue, id="backoff-wrong-new-object"),
        pytest.param("not-a-pod", TARGET, QueueingHint.Queue, id="backoff-wrong-old-object"),
        pytest.param(
            make_pod().name("other").obj(),
            make_pod().name("other").toleration(UNSCHEDULABLE_TOLERATION).obj(),
            QueueingHint.QueueSkip,
            id="skip-updates-other-pod",
        ),
        pytest.param(
            TARGET,
            make_pod().name("p").toleration(Toleration("foo", effect="NoSchedule")).obj(),
            QueueingHint.QueueSkip,
            id="skip-unrelated-toleration",
        ),
        pytest.param(
            TARGET,
            make_pod().name("p").toleration(UNSCHEDULABLE_TOLERATION).obj(),
            QueueingHint.Queue,
            id="queue-when-the-pod-tolerates-unschedulable",
        ),
    ],
)
def test_is_schedulable_after_pod_toleration_change(
    old_obj: object, new_obj: object, expected: QueueingHint
) -> None:
    hint = NodeUnschedulable().is_schedulable_after_pod_toleration_change
    assert hint(TARGET, old_obj, new_obj) == expected
