"""The active queue, and the pods being scheduled ("in flight") with the events seen meanwhile.

Mirrors pkg/scheduler/backend/queue/active_queue.go with SchedulerQueueingHints on (GA and locked
since v1.34). Upstream's blocking Pop waits on a condition variable; here ``pop`` returns None at
once when there is nothing to pop, and the scheduling loop decides what to do next.

In-flight bookkeeping: every popped pod gets a marker in one ordered log; cluster events are
appended to the log while any pod is in flight. When a pod comes back, the events after its marker
are the ones that happened while it was being scheduled. ``done`` drops the marker and the events
that no remaining in-flight pod can still need.
"""

from __future__ import annotations

import itertools
from collections import OrderedDict
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from schedviz.kube.objects import Pod
from schedviz.scheduler.backend.queue.backoff_queue import BackoffQueue
from schedviz.scheduler.backend.queue.heap import Heap
from schedviz.scheduler.framework.types import ClusterEvent, QueuedPodInfo


@dataclass(frozen=True, slots=True)
class InFlightEvent:
    """A cluster event and its objects (upstream ``clusterEvent``)."""

    event: ClusterEvent
    old_obj: object = None
    new_obj: object = None


def _key(pinfo: QueuedPodInfo) -> str:
    return pinfo.key


def _stamp(pinfo: QueuedPodInfo) -> int:
    return pinfo.stamp


class ActiveQueue:
    def __init__(
        self,
        less: Callable[[QueuedPodInfo, QueuedPodInfo], bool],
        backoff_q_popper: BackoffQueue | None,
    ) -> None:
        # Ties go by when the pods' timestamps were taken (PrioritySort compares timestamps).
        self._queue: Heap[QueuedPodInfo] = Heap(_key, less, tie_rank=_stamp)
        # Set only with SchedulerPopFromBackoffQ: where to pop from when the heap is empty.
        self._backoff_q_popper = backoff_q_popper
        self._sequence = itertools.count()
        # One log of in-flight pod markers (Pod) and events (InFlightEvent), oldest first.
        self._in_flight_log: OrderedDict[int, Pod | InFlightEvent] = OrderedDict()
        # pod key -> (position of its marker in the log, the popped pod)
        self._in_flight_pods: dict[str, tuple[int, QueuedPodInfo]] = {}
        self.scheduling_cycle = 0
        self.last_popped_from_backoff_q = False

    # the heap ---------------------------------------------------------------------------------

    def add(self, pinfo: QueuedPodInfo) -> None:
        self._queue.add_or_update(pinfo)

    def update(self, new_pod: Pod, old_key: str) -> QueuedPodInfo | None:
        pinfo = self._queue.get(old_key)
        if pinfo is None:
            return None
        pinfo.pod_info.update(new_pod)
        self._queue.add_or_update(pinfo)
        return pinfo

    def delete(self, key: str) -> QueuedPodInfo | None:
        return self._queue.delete(key)

    def has(self, key: str) -> bool:
        return key in self._queue

    def get(self, key: str) -> QueuedPodInfo | None:
        return self._queue.get(key)

    def __len__(self) -> int:
        return len(self._queue)

    def items(self) -> list[QueuedPodInfo]:
        return self._queue.items()

    def ordered(self, limit: int | None = None) -> list[QueuedPodInfo]:
        return self._queue.ordered(limit)

    def pop(self) -> QueuedPodInfo | None:
        """The head of the queue, now in flight; None when there is nothing to pop."""
        while True:
            pinfo = self._queue.pop()
            from_backoff_q = False
            if pinfo is None and self._backoff_q_popper is not None:
                pinfo = self._backoff_q_popper.pop_backoff()
                from_backoff_q = True
            if pinfo is None:
                return None
            pinfo.attempts += 1
            if pinfo.key in self._in_flight_pods:
                # The same pod tracked twice is a bug upstream reports and survives: the
                # duplicate is discarded and the next pod popped.
                continue
            position = next(self._sequence)
            self._in_flight_log[position] = pinfo.pod
            self._in_flight_pods[pinfo.key] = (position, pinfo)
            self.scheduling_cycle += 1
            self.last_popped_from_backoff_q = from_backoff_q
            # A new attempt: the rejections of the last one no longer hold.
            pinfo.unschedulable_plugins.clear()
            pinfo.pending_plugins.clear()
            return pinfo

    # in-flight pods and events -----------------------------------------------------------------

    def is_in_flight(self, key: str) -> bool:
        return key in self._in_flight_pods

    def add_events_if_pod_in_flight(
        self, old_pod: Pod | None, new_pod: Pod, events: Sequence[ClusterEvent]
    ) -> bool:
        if new_pod.key not in self._in_flight_pods:
            return False
        for event in events:
            self._in_flight_log[next(self._sequence)] = InFlightEvent(event, old_pod, new_pod)
        return True

    def add_event_if_any_in_flight(
        self, old_obj: object, new_obj: object, event: ClusterEvent
    ) -> bool:
        if not self._in_flight_pods:
            return False
        self._in_flight_log[next(self._sequence)] = InFlightEvent(event, old_obj, new_obj)
        return True

    def cluster_events_for_pod(self, key: str) -> list[InFlightEvent] | None:
        """The events received since the pod was popped; None if the pod is not in flight."""
        entry = self._in_flight_pods.get(key)
        if entry is None:
            return None
        position = entry[0]
        return [
            value
            for at, value in self._in_flight_log.items()
            if at > position and isinstance(value, InFlightEvent)
        ]

    def done(self, key: str) -> None:
        entry = self._in_flight_pods.pop(key, None)
        if entry is None:
            return
        del self._in_flight_log[entry[0]]
        # Events before the oldest remaining pod marker can no longer concern anyone.
        while self._in_flight_log:
            first = next(iter(self._in_flight_log))
            if not isinstance(self._in_flight_log[first], InFlightEvent):
                break
            del self._in_flight_log[first]

    # saving and restoring (persistence.py) --------------------------------------------------

    def storage(self) -> tuple[list[tuple[QueuedPodInfo, int]], int]:
        """The heap's storage (``Heap.storage``) and its next arrival number."""
        return self._queue.storage(), self._queue.next_arrival

    def in_flight_storage(self) -> list[QueuedPodInfo | InFlightEvent]:
        """The in-flight log, oldest first, each pod marker as the popped pod."""
        pods = {position: pinfo for position, pinfo in self._in_flight_pods.values()}
        return [
            value if isinstance(value, InFlightEvent) else pods[position]
            for position, value in self._in_flight_log.items()
        ]

    def load(
        self,
        heap: list[tuple[QueuedPodInfo, int]],
        next_arrival: int,
        in_flight: list[QueuedPodInfo | InFlightEvent],
        scheduling_cycle: int,
        last_popped_from_backoff_q: bool,
    ) -> None:
        """Restores what ``storage`` and ``in_flight_storage`` gave, into an empty queue."""
        self._queue.load(heap, next_arrival)
        self._in_flight_log.clear()
        self._in_flight_pods.clear()
        for value in in_flight:
            position = next(self._sequence)
            if isinstance(value, InFlightEvent):
                self._in_flight_log[position] = value
            else:
                self._in_flight_log[position] = value.pod
                self._in_flight_pods[value.key] = (position, value)
        self.scheduling_cycle = scheduling_cycle
        self.last_popped_from_backoff_q = last_popped_from_backoff_q

    def in_flight_pods(self) -> list[QueuedPodInfo]:
        return [pinfo for _, pinfo in self._in_flight_pods.values()]

    def in_flight_log(self) -> list[Pod | InFlightEvent]:
        return list(self._in_flight_log.values())
