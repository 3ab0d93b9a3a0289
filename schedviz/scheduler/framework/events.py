"""Which cluster events an object change is.

Mirrors pkg/scheduler/framework/events.go (``PodSchedulingPropertiesChange``,
``NodeSchedulingPropertiesChange``): an update is reported as the specific events plugins
register for, so a queueing hint runs only when its kind of change happened.
"""

from __future__ import annotations

import math

from schedviz.kube.objects import Node, Pod
from schedviz.kube.resources import pod_requests
from schedviz.scheduler.framework.types import ActionType, ClusterEvent, EventResource


def pod_scheduling_properties_change(new: Pod, old: Pod) -> list[ClusterEvent]:
    resource = EventResource.AssignedPod if new.node_name else EventResource.UnschedulablePod
    actions: list[ActionType] = []
    if new.labels != old.labels:
        actions.append(ActionType.UpdatePodLabel)
    if _scaled_down(new, old):
        actions.append(ActionType.UpdatePodScaleDown)
    if old.scheduling_gates and not new.scheduling_gates:
        actions.append(ActionType.UpdatePodSchedulingGatesEliminated)
    if len(new.tolerations) != len(old.tolerations):
        actions.append(ActionType.UpdatePodToleration)
    if not actions:
        # v1.34 reports any other change as updatePodOther, which only plugins registering a
        # general Pod/Update hear of (later releases send the general Update instead).
        actions.append(ActionType.UpdatePodOther)
    return [ClusterEvent(resource, action) for action in actions]


def _scaled_down(new: Pod, old: Pod) -> bool:
    """extractPodScaleDown: a request removed, or lowered (compared in milli-units)."""
    new_requests = pod_requests(new, use_status_resources=True)
    for name, amount in pod_requests(old, use_status_resources=True).items():
        if name not in new_requests:
            return True
        if math.ceil(amount * 1000) > math.ceil(new_requests[name] * 1000):
            return True
    return False


def node_scheduling_properties_change(new: Node, old: Node) -> list[ClusterEvent]:
    actions: list[ActionType] = []
    if new.unschedulable != old.unschedulable and not new.unschedulable:
        # A node becoming schedulable counts as a taint change (the unschedulable taint left).
        actions.append(ActionType.UpdateNodeTaint)
    if new.allocatable != old.allocatable:
        actions.append(ActionType.UpdateNodeAllocatable)
    if new.labels != old.labels:
        actions.append(ActionType.UpdateNodeLabel)
    if new.taints != old.taints:
        actions.append(ActionType.UpdateNodeTaint)
    if _conditions(new) != _conditions(old):
        actions.append(ActionType.UpdateNodeCondition)
    if new.annotations != old.annotations:
        actions.append(ActionType.UpdateNodeAnnotation)
    return [ClusterEvent(EventResource.Node, action) for action in actions]


def _conditions(node: Node) -> dict[str, str]:
    return {condition.type: condition.status for condition in node.conditions}
