"""What kube-apiserver and the informers give the scheduler, held in memory.

Upstream's scheduler reads the cluster through informers and writes it through a client: pod
bindings (the pods/binding subresource), pod status (conditions, nominatedNodeName), pod
deletions (preemption victims) and events. ``ClusterStore`` is that API for an in-memory
cluster, used by ``manage.py simulate``; the live system implements the same calls over the
database. Every write is delivered to the watchers synchronously, in order, like a watch stream
with no lag.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from typing import Any, Protocol

from schedviz.kube.objects import (
    POD_FAILED,
    POD_SUCCEEDED,
    KubeObject,
    Namespace,
    Pod,
    PodCondition,
)
from schedviz.scheduler.framework.interface import Code, Status

ADDED = "ADDED"
MODIFIED = "MODIFIED"
DELETED = "DELETED"

# (event type, old object or None, new object or None)
Watcher = Callable[[str, Any, Any], None]


@dataclass(slots=True)
class Event:
    """A v1 Event as the scheduler records it."""

    type: str  # Normal or Warning
    reason: str  # Scheduled, FailedScheduling, Preempted, ...
    object: str  # the pod's namespace/name
    message: str
    time: float = 0.0

    def to_json(self) -> dict[str, Any]:
        return dataclasses.asdict(self)


class ClusterAPI(Protocol):
    """What the scheduler needs of the API server and its informers.

    Reads come from the informer's cache; writes go to the API. ``ClusterStore`` implements it
    in memory (writes are watched back at once); the live system implements it over the
    database (writes land in the change log and come back when the runner follows it).
    """

    now: Callable[[], float]

    def list_objects(self, kind: str) -> Sequence[Any]: ...

    def get(self, kind: str, key: str) -> Any: ...

    def namespace_labels(self, namespace: str) -> dict[str, str] | None: ...

    def pods(self) -> list[Pod]: ...

    def watch(self, watcher: Watcher) -> None: ...

    def apply(self, obj: KubeObject) -> None: ...

    def delete(self, kind: str, key: str) -> Any: ...

    def bind(self, pod: Pod, node_name: str) -> Status | None: ...

    def update_pod_status(
        self, pod: Pod, condition: PodCondition | None, nominated_node_name: str | None
    ) -> Pod | None: ...

    def record_event(self, type_: str, reason: str, pod: Pod, message: str) -> Event: ...


class ConflictError(RuntimeError):
    """A write lost a compare-and-set (the API server's 409 Conflict)."""


class NotFoundError(LookupError):
    pass


class ClusterStore:
    def __init__(self, objects: Iterable[KubeObject] = (), now: Callable[[], float] = lambda: 0.0):
        self._objects: dict[str, dict[str, KubeObject]] = {}
        self._watchers: list[Watcher] = []
        self._settled: list[Callable[[], None]] = []
        self._delivering = 0
        self.events: list[Event] = []
        self.now = now
        for obj in objects:
            self._objects.setdefault(type(obj).__name__, {})[obj.key] = obj

    # ------------------------------------------------------------------ reads

    def list_objects(self, kind: str) -> Sequence[Any]:
        return list(self._objects.get(kind, {}).values())

    def get(self, kind: str, key: str) -> Any:
        return self._objects.get(kind, {}).get(key)

    def namespace_labels(self, namespace: str) -> dict[str, str] | None:
        obj = self.get("Namespace", namespace)
        return obj.labels if isinstance(obj, Namespace) else None

    def pods(self) -> list[Pod]:
        return [pod for pod in self._objects.get("Pod", {}).values() if isinstance(pod, Pod)]

    # ------------------------------------------------------------------ watch

    def watch(self, watcher: Watcher, *, first: bool = False) -> None:
        """``first``: the watcher hears each write before those already watching, so before
        any reaction to it (a recorder that keeps writes in the order they were made)."""
        if first:
            self._watchers.insert(0, watcher)
        else:
            self._watchers.append(watcher)

    def on_settled(self, callback: Callable[[], None]) -> None:
        """Calls ``callback`` after each write once every watcher has heard of it (and of the
        writes the watchers made meanwhile): where controllers work their queues, as
        kube-controller-manager's workers take keys only after the informer has handed the
        event to every handler."""
        self._settled.append(callback)

    def _notify(self, event_type: str, old: Any, new: Any) -> None:
        self._delivering += 1
        try:
            for watcher in self._watchers:
                watcher(event_type, old, new)
        finally:
            self._delivering -= 1
        if not self._delivering:
            for callback in self._settled:
                callback()

    # ------------------------------------------------------------------ writes

    def apply(self, obj: KubeObject) -> None:
        kind = type(obj).__name__
        bucket = self._objects.setdefault(kind, {})
        old = bucket.get(obj.key)
        bucket[obj.key] = obj
        self._notify(MODIFIED if old is not None else ADDED, old, obj)

    def delete(self, kind: str, key: str) -> Any:
        bucket = self._objects.get(kind, {})
        old = bucket.pop(key, None)
        if old is None:
            raise NotFoundError(f'{kind.lower()}s "{key}" not found')
        self._notify(DELETED, old, None)
        return old

    def bind(self, pod: Pod, node_name: str) -> Status | None:
        """The pods/binding subresource: sets spec.nodeName once, never twice."""
        current = self.get("Pod", pod.key)
        if not isinstance(current, Pod):
            return Status(Code.Error, (f'pods "{pod.name}" not found',))
        if current.node_name:
            message = (
                f'Operation cannot be fulfilled on pods/binding "{pod.name}": pod {pod.name} '
                f'is already assigned to node "{current.node_name}"'
            )
            return Status(Code.Error, (message,), error=message)
        if self.get("Node", node_name) is None:
            return Status(Code.Error, (f'nodes "{node_name}" not found',))
        conditions = _set_condition(current.conditions, PodCondition("PodScheduled", "True"))
        self.apply(dataclasses.replace(current, node_name=node_name, conditions=conditions))
        return None

    def update_pod_status(
        self, pod: Pod, condition: PodCondition | None, nominated_node_name: str | None
    ) -> Pod | None:
        """Writes the PodScheduled condition and nominatedNodeName (None leaves it)."""
        current = self.get("Pod", pod.key)
        if not isinstance(current, Pod):
            return None
        conditions = current.conditions
        if condition is not None:
            conditions = _set_condition(conditions, condition)
        nominated = (
            current.nominated_node_name if nominated_node_name is None else nominated_node_name
        )
        if conditions == current.conditions and nominated == current.nominated_node_name:
            return current
        updated = dataclasses.replace(current, conditions=conditions, nominated_node_name=nominated)
        self.apply(updated)
        return updated

    def record_event(self, type_: str, reason: str, pod: Pod, message: str) -> Event:
        event = Event(type_, reason, pod.key, message, self.now())
        self.events.append(event)
        return event


def is_terminal_pod(pod: Pod) -> bool:
    """A pod in phase Succeeded or Failed: its containers are done and it holds nothing."""
    return pod.phase in (POD_SUCCEEDED, POD_FAILED)


def pod_informer_event(event_type: str, old: Any, new: Any) -> tuple[str, Any, Any] | None:
    """A pod watch event as the scheduler's pod informer delivers it, or None when it hears
    nothing.

    Upstream's scheduler watches pods with the field selector
    ``status.phase!=Succeeded,status.phase!=Failed`` (scheduler.go, ``newPodInformer``), so a
    terminal pod is never listed, and a pod that turns terminal leaves the watch: the API
    server's cacher sends a DELETED event carrying the last state that matched
    (``cacheWatcher.convertToWatchEvent``).
    """
    old_seen = isinstance(old, Pod) and not is_terminal_pod(old)
    new_seen = isinstance(new, Pod) and not is_terminal_pod(new)
    if old_seen and new_seen:
        return event_type, old, new
    if old_seen:
        return DELETED, old, None
    if new_seen:
        return ADDED, None, new
    return None


class InformerView:
    """The scheduler's informers over a ``ClusterAPI``: every object kind as the API has it,
    except the pods the pod informer's field selector leaves out (terminal ones)."""

    def __init__(self, api: ClusterAPI) -> None:
        self._api = api

    def list_objects(self, kind: str) -> Sequence[Any]:
        objects = self._api.list_objects(kind)
        if kind != "Pod":
            return objects
        return [obj for obj in objects if not (isinstance(obj, Pod) and is_terminal_pod(obj))]

    def get(self, kind: str, key: str) -> Any:
        obj = self._api.get(kind, key)
        if isinstance(obj, Pod) and is_terminal_pod(obj):
            return None
        return obj

    def namespace_labels(self, namespace: str) -> dict[str, str] | None:
        return self._api.namespace_labels(namespace)

    def pods(self) -> list[Pod]:
        return [pod for pod in self._api.pods() if not is_terminal_pod(pod)]

    def apply(self, obj: KubeObject) -> None:
        self._api.apply(obj)


def _set_condition(
    conditions: tuple[PodCondition, ...], condition: PodCondition
) -> tuple[PodCondition, ...]:
    others = tuple(c for c in conditions if c.type != condition.type)
    return (*others, condition)
