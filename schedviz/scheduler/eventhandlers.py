"""How watched changes reach the cache and the scheduling queue.

Mirrors pkg/scheduler/eventhandlers.go. Bound pods go to the cache; pods waiting for this
scheduler go to the queue; a pod that becomes bound leaves the queue and enters the cache. Every
change is also a cluster event that may move rejected pods back (with queueing hints on, as in
current releases, every handler calls ``move_all_to_active_or_backoff_queue``). Pods reach the
handlers through the pod informer's field selector: terminal pods (Succeeded, Failed) are never
seen, and a pod that turns terminal is deleted (``store.pod_informer_event``).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from schedviz.kube.objects import (
    CSINode,
    Node,
    PersistentVolume,
    PersistentVolumeClaim,
    Pod,
    StorageClass,
)
from schedviz.scheduler.framework.events import (
    node_scheduling_properties_change,
    pod_scheduling_properties_change,
)
from schedviz.scheduler.framework.types import (
    EVENT_ASSIGNED_POD_ADD,
    EVENT_ASSIGNED_POD_DELETE,
    EVENT_NODE_ADD,
    ActionType,
    ClusterEvent,
    EventResource,
)
from schedviz.scheduler.store import ADDED, DELETED, MODIFIED, pod_informer_event

if TYPE_CHECKING:
    from schedviz.scheduler.backend.cache.cache import Cache
    from schedviz.scheduler.backend.queue.scheduling_queue import PriorityQueue
    from schedviz.scheduler.framework.runtime.framework import Framework

EVENT_NODE_DELETE = ClusterEvent(EventResource.Node, ActionType.Delete)
_OTHER_KINDS: dict[type[Any], str] = {
    PersistentVolume: EventResource.PersistentVolume,
    PersistentVolumeClaim: EventResource.PersistentVolumeClaim,
    StorageClass: EventResource.StorageClass,
    CSINode: EventResource.CSINode,
}


class EventHandlers:
    """The informers' handlers; mixed into ``Scheduler``, which owns this state."""

    queue: PriorityQueue
    cache: Cache
    profiles: dict[str, Framework]
    # Counts the cluster changes the scheduler has seen; a pod's own PodScheduled condition is
    # not one (upstream's isPodUpdated ignores status). ``run_until_idle`` compares it with the
    # count a pod's last attempt saw to know a retry would decide the same.
    cluster_generation: int

    def handle_watch_event(self, event_type: str, old: Any, new: Any) -> None:
        obj = new if new is not None else old
        if not _only_conditions_changed(old, new):
            self.cluster_generation += 1
        if isinstance(obj, Pod):
            seen = pod_informer_event(event_type, old, new)
            if seen is not None:
                self._on_pod(*seen)
        elif isinstance(obj, Node):
            if event_type == ADDED:
                self.add_node_to_cache(new)
            elif event_type == MODIFIED:
                self.update_node_in_cache(old, new)
            elif event_type == DELETED:
                self.delete_node_from_cache(old)
        elif type(obj) in _OTHER_KINDS:
            resource = _OTHER_KINDS[type(obj)]
            action = {
                ADDED: ActionType.Add,
                MODIFIED: ActionType.Update,
                DELETED: ActionType.Delete,
            }[event_type]
            self.queue.move_all_to_active_or_backoff_queue(
                ClusterEvent(resource, action), old, new, None
            )

    def _on_pod(self, event_type: str, old: Pod | None, new: Pod | None) -> None:
        was_assigned = old is not None and bool(old.node_name)
        is_assigned = new is not None and bool(new.node_name)
        if event_type == ADDED and new is not None:
            if is_assigned:
                self.add_pod_to_cache(new)
            elif self.responsible_for_pod(new):
                self.add_pod_to_scheduling_queue(new)
        elif event_type == MODIFIED and old is not None and new is not None:
            if was_assigned and is_assigned:
                self.update_pod_in_cache(old, new)
            elif is_assigned:
                # A bind: leaving the queue's filter is a delete of the old object for the
                # queue's handler (nomination included), an add for the cache's.
                if self.responsible_for_pod(old):
                    self.delete_pod_from_scheduling_queue(old)
                self.add_pod_to_cache(new)
            elif self.responsible_for_pod(new):
                self.update_pod_in_scheduling_queue(old, new)
        elif event_type == DELETED and old is not None:
            if was_assigned:
                self.delete_pod_from_cache(old)
            elif self.responsible_for_pod(old):
                self.delete_pod_from_scheduling_queue(old)

    def responsible_for_pod(self, pod: Pod) -> bool:
        return pod.scheduler_name in self.profiles

    # ------------------------------------------------------------------ nodes

    def add_node_to_cache(self, node: Node) -> None:
        self.cache.add_node(node)
        self.queue.move_all_to_active_or_backoff_queue(EVENT_NODE_ADD, None, node, None)

    def update_node_in_cache(self, old: Node, new: Node) -> None:
        self.cache.update_node(old, new)
        for event in node_scheduling_properties_change(new, old):
            self.queue.move_all_to_active_or_backoff_queue(event, old, new, None)

    def delete_node_from_cache(self, node: Node) -> None:
        self.cache.remove_node(node)
        self.queue.move_all_to_active_or_backoff_queue(EVENT_NODE_DELETE, node, None, None)

    # ------------------------------------------------------------------ pods in the queue

    def add_pod_to_scheduling_queue(self, pod: Pod) -> None:
        self.queue.add(pod)

    def update_pod_in_scheduling_queue(self, old: Pod, new: Pod) -> None:
        if self.cache.is_assumed_pod(new):
            return
        self.queue.update(old, new)
        if old.nominated_node_name and old.nominated_node_name != new.nominated_node_name:
            # A nominated pod counts as placed for pods of lower or equal priority; losing or
            # moving the nomination is like deleting it from the old node.
            self.queue.move_all_to_active_or_backoff_queue(
                EVENT_ASSIGNED_POD_DELETE, old, None, lower_or_equal_priority(old)
            )

    def delete_pod_from_scheduling_queue(self, pod: Pod) -> None:
        """An unscheduled pod left the queue's informer filter: deleted, or bound (the old
        object, which still carries its nomination). A pod rejected while waiting at Permit
        held its node in the cache: every pod may now fit. A pod that held a nominated node
        counted as placed there for pods of lower or equal priority: those may now fit."""
        self.queue.delete(pod)
        framework = self.profiles.get(pod.scheduler_name)
        if framework is None:
            return
        if framework.reject_waiting_pod(pod.key):
            self.queue.move_all_to_active_or_backoff_queue(
                EVENT_ASSIGNED_POD_DELETE, pod, None, None
            )
        elif pod.nominated_node_name:
            # The waiting pod's own deletion covered the lower priority pods already.
            self.queue.move_all_to_active_or_backoff_queue(
                EVENT_ASSIGNED_POD_DELETE, pod, None, lower_or_equal_priority(pod)
            )

    # ------------------------------------------------------------------ pods in the cache

    def add_pod_to_cache(self, pod: Pod) -> None:
        self.cache.add_pod(pod)
        self.queue.move_all_to_active_or_backoff_queue(EVENT_ASSIGNED_POD_ADD, None, pod, None)

    def update_pod_in_cache(self, old: Pod, new: Pod) -> None:
        self.cache.update_pod(old, new)
        for event in pod_scheduling_properties_change(new, old):
            self.queue.move_all_to_active_or_backoff_queue(event, old, new, None)

    def delete_pod_from_cache(self, pod: Pod) -> None:
        self.cache.remove_pod(pod)
        self.queue.move_all_to_active_or_backoff_queue(EVENT_ASSIGNED_POD_DELETE, pod, None, None)


def lower_or_equal_priority(pod: Pod) -> Callable[[Pod], bool]:
    """The pre-check that keeps pods of priority at most ``pod``'s (getLEPriorityPreCheck)."""
    priority = pod.effective_priority
    return lambda other: other.effective_priority <= priority


def _only_conditions_changed(old: Any, new: Any) -> bool:
    """Whether a pending pod's update changed only its conditions (the scheduler writing
    PodScheduled=False after a failed attempt)."""
    if not isinstance(old, Pod) or not isinstance(new, Pod) or old.node_name or new.node_name:
        return False
    return dataclasses.replace(old, conditions=new.conditions) == new
