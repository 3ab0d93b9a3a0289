"""SchedulingGates: pods with ``spec.schedulingGates`` wait outside the active queue.

Mirrors pkg/scheduler/framework/plugins/schedulinggates/scheduling_gates.go, with queueing hints
enabled (the default since v1.34). Pods are told apart by ``namespace/name`` where upstream
compares UIDs.
"""

from __future__ import annotations

from schedviz.kube.objects import Pod
from schedviz.scheduler.framework.interface import (
    Code,
    EnqueueExtensions,
    Handle,
    PreEnqueuePlugin,
    Status,
    new_status,
)
from schedviz.scheduler.framework.plugins.names import SCHEDULING_GATES
from schedviz.scheduler.framework.types import (
    ActionType,
    ClusterEvent,
    ClusterEventWithHint,
    EventResource,
    QueueingHint,
)

NAME = SCHEDULING_GATES


def gates_reason(gates: tuple[str, ...]) -> str:
    """The PreEnqueue reason, with the gates printed as Go prints a []string."""
    return f"waiting for scheduling gates: [{' '.join(gates)}]"


class SchedulingGates(PreEnqueuePlugin, EnqueueExtensions):
    def name(self) -> str:
        return NAME

    def pre_enqueue(self, pod: Pod) -> Status | None:
        if not pod.scheduling_gates:
            return None
        return new_status(Code.UnschedulableAndUnresolvable, gates_reason(pod.scheduling_gates))

    def events_to_register(self) -> list[ClusterEventWithHint]:
        return [
            ClusterEventWithHint(
                ClusterEvent(EventResource.Pod, ActionType.UpdatePodSchedulingGatesEliminated),
                self.is_schedulable_after_update_pod_scheduling_gates_eliminated,
            )
        ]

    def is_schedulable_after_update_pod_scheduling_gates_eliminated(
        self, pod: Pod, old_obj: object, new_obj: object
    ) -> QueueingHint:
        if not isinstance(new_obj, Pod) or (old_obj is not None and not isinstance(old_obj, Pod)):
            return QueueingHint.Queue
        if new_obj.key != pod.key:
            # Another pod's gates were removed: that does not make this one schedulable.
            return QueueingHint.QueueSkip
        return QueueingHint.Queue


def new(args: object | None, handle: Handle) -> SchedulingGates:
    return SchedulingGates()
