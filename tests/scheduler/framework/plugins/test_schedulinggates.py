"""Ports pkg/scheduler/framework/plugins/schedulinggates/scheduling_gates_test.go."""

from __future__ import annotations

import pytest

from schedviz.kube.objects import Pod
from schedviz.scheduler.framework.interface import Code, Status, new_status
from schedviz.scheduler.framework.plugins.schedulinggates import NAME, SchedulingGates, new
from schedviz.scheduler.framework.types import (
    ActionType,
    ClusterEvent,
    EventResource,
    QueueingHint,
)
from schedviz.scheduler.testing.framework_helpers import FakeHandle
from schedviz.scheduler.testing.wrappers import make_pod


@pytest.mark.parametrize(
    ("pod", "want"),
    [
        pytest.param(make_pod().name("p").obj(), None, id="pod does not carry scheduling gates"),
        pytest.param(
            make_pod().name("p").scheduling_gates(["foo", "bar"]).obj(),
            new_status(
                Code.UnschedulableAndUnresolvable, "waiting for scheduling gates: [foo bar]"
            ),
            id="pod carries scheduling gates",
        ),
    ],
)
def test_pre_enqueue(pod: Pod, want: Status | None) -> None:
    assert new(None, FakeHandle()).pre_enqueue(pod) == want


def test_it_registers_for_gates_eliminated() -> None:
    (registered,) = SchedulingGates().events_to_register()
    assert registered.event == ClusterEvent(
        EventResource.Pod, ActionType.UpdatePodSchedulingGatesEliminated
    )
    assert registered.queueing_hint_fn is not None
    assert SchedulingGates().name() == NAME == "SchedulingGates"


GATED = make_pod().name("p").scheduling_gates(["foo"]).obj()
UNGATED = make_pod().name("p").obj()


@pytest.mark.parametrize(
    ("old_obj", "new_obj", "expected"),
    [
        pytest.param("not-a-pod", UNGATED, QueueingHint.Queue, id="backoff-wrong-old-object"),
        pytest.param(GATED, "not-a-pod", QueueingHint.Queue, id="backoff-wrong-new-object"),
        pytest.param(
            make_pod().name("other").scheduling_gates(["foo"]).obj(),
            make_pod().name("other").obj(),
            QueueingHint.QueueSkip,
            id="skip-queue-on-other-pod-updated",
        ),
        pytest.param(GATED, UNGATED, QueueingHint.Queue, id="queue-on-the-unsched-pod-updated"),
    ],
)
def test_is_schedulable_after_update_pod_scheduling_gates_eliminated(
    old_obj: object, new_obj: object, expected: QueueingHint
) -> None:
    hint = SchedulingGates().is_schedulable_after_update_pod_scheduling_gates_eliminated
    assert hint(GATED, old_obj, new_obj) == expected
