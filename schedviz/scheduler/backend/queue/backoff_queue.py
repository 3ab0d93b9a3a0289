"""The backoff queue: pods that wait out a penalty before they are retried.

Mirrors pkg/scheduler/backend/queue/backoff_queue.go as of v1.34/v1.35:
- two heaps, one for pods rejected by plugins (podBackoffQ) and one for pods that failed with an
  error (podErrorBackoffQ), both ordered by backoff expiry;
- the backoff doubles with each consecutive rejection, counted by ``unschedulable_count``, or by
  ``consecutive_errors_count`` when the last attempt ended in an error (kubernetes#128748), and is
  capped at the maximum; a maximum of 0 disables backoff (kubernetes#131965);
- with SchedulerPopFromBackoffQ (beta, on by default since v1.33) expiries are truncated to
  1-second ordering windows, podBackoffQ orders pods of one window as the active queue does
  (lessBackoffCompletedWithPriority: the queue-sort plugin's less, PrioritySort's priority then
  timestamp), and the head of podBackoffQ may be popped early when the active queue is empty.
  Upstream's timestamps are nanoseconds and practically never equal; in virtual time they often
  are, and such ties go by the order the queue took the timestamps (``QueuedPodInfo.stamp``), as
  in activeQ. podErrorBackoffQ compares expiries only and keeps container/heap's order of ties.

Times are float seconds; an expiry of ``-inf`` plays the part of Go's zero ``time.Time``.
"""

from __future__ import annotations

import math
from collections.abc import Callable

from schedviz.kube.objects import Pod
from schedviz.scheduler.backend.queue.heap import Heap
from schedviz.scheduler.clock import Clock
from schedviz.scheduler.framework.types import QueuedPodInfo

# KEP-5142: the width of an ordering window; also the period of the flush to the active queue.
BACKOFF_Q_ORDERING_WINDOW = 1.0

NO_BACKOFF = -math.inf

LessFunc = Callable[[QueuedPodInfo, QueuedPodInfo], bool]


def _key(pinfo: QueuedPodInfo) -> str:
    return pinfo.key


def _stamp(pinfo: QueuedPodInfo) -> int:
    return pinfo.stamp


def is_error_backoff(pinfo: QueuedPodInfo) -> bool:
    """A pod with no rejecting plugin came back because of an error, not a rejection."""
    return not pinfo.unschedulable_plugins and not pinfo.pending_plugins


class BackoffQueue:
    def __init__(
        self,
        *,
        clock: Clock,
        pod_initial_backoff: float,
        pod_max_backoff: float,
        active_q_less: LessFunc,
        pop_from_backoff_q: bool,
    ) -> None:
        self._clock = clock
        self.pod_initial_backoff = pod_initial_backoff
        self.pod_max_backoff = pod_max_backoff
        self._active_q_less = active_q_less
        self.pop_from_backoff_q = pop_from_backoff_q
        backoff_less = (
            self._less_backoff_completed_with_priority
            if pop_from_backoff_q
            else self._less_backoff_completed
        )
        self._pod_backoff_q: Heap[QueuedPodInfo] = Heap(
            _key, backoff_less, tie_rank=_stamp if pop_from_backoff_q else None
        )
        self._pod_error_backoff_q: Heap[QueuedPodInfo] = Heap(_key, self._less_backoff_completed)

    # ordering --------------------------------------------------------------------------------

    def align_to_window(self, t: float) -> float:
        if not self.pop_from_backoff_q:
            return t
        return math.floor(t / BACKOFF_Q_ORDERING_WINDOW) * BACKOFF_Q_ORDERING_WINDOW

    def _less_backoff_completed_with_priority(self, a: QueuedPodInfo, b: QueuedPodInfo) -> bool:
        expiry_a, expiry_b = self.get_backoff_time(a), self.get_backoff_time(b)
        if expiry_a != expiry_b:
            return expiry_a < expiry_b
        return self._active_q_less(a, b)

    def _less_backoff_completed(self, a: QueuedPodInfo, b: QueuedPodInfo) -> bool:
        return self.get_backoff_time(a) < self.get_backoff_time(b)

    # backoff arithmetic ---------------------------------------------------------------------

    def is_pod_backing_off(self, pinfo: QueuedPodInfo) -> bool:
        """Still waiting; a pod whose expiry falls in the current window is still waiting."""
        return not self.get_backoff_time(pinfo) < self.align_to_window(self._clock.now())

    def get_backoff_time(self, pinfo: QueuedPodInfo) -> float:
        """When the pod's backoff ends; computed once and cached in ``backoff_expiration``."""
        if self.pod_max_backoff == 0:
            return NO_BACKOFF
        count = pinfo.unschedulable_count
        if pinfo.consecutive_errors_count > 0:
            count = pinfo.consecutive_errors_count
        if count == 0:
            return NO_BACKOFF
        if pinfo.backoff_expiration is None:
            duration = self.calculate_backoff_duration(count)
            pinfo.backoff_expiration = self.align_to_window(pinfo.timestamp + duration)
        return pinfo.backoff_expiration

    def calculate_backoff_duration(self, count: int) -> float:
        """initial * 2^(count-1), capped at the maximum."""
        if count == 0:
            return 0.0
        shift = count - 1
        # Compare against max >> shift first, as upstream does to avoid overflow.
        if self.pod_initial_backoff > math.ldexp(self.pod_max_backoff, -shift):
            return self.pod_max_backoff
        return math.ldexp(self.pod_initial_backoff, shift)

    # queue operations -----------------------------------------------------------------------

    def add(self, pinfo: QueuedPodInfo) -> None:
        """Puts the pod in the heap that matches why it failed, and out of the other one."""
        if is_error_backoff(pinfo):
            self._pod_error_backoff_q.add_or_update(pinfo)
            self._pod_backoff_q.delete(pinfo.key)
        else:
            self._pod_backoff_q.add_or_update(pinfo)
            self._pod_error_backoff_q.delete(pinfo.key)

    def update(self, new_pod: Pod, old_key: str) -> QueuedPodInfo | None:
        for heap in (self._pod_backoff_q, self._pod_error_backoff_q):
            pinfo = heap.get(old_key)
            if pinfo is not None:
                pinfo.pod_info.update(new_pod)
                heap.add_or_update(pinfo)
                return pinfo
        return None

    def delete(self, key: str) -> QueuedPodInfo | None:
        removed = self._pod_backoff_q.delete(key)
        if removed is not None:
            return removed
        return self._pod_error_backoff_q.delete(key)

    def get(self, key: str) -> QueuedPodInfo | None:
        pinfo = self._pod_backoff_q.get(key)
        return pinfo if pinfo is not None else self._pod_error_backoff_q.get(key)

    def has(self, key: str) -> bool:
        return key in self._pod_backoff_q or key in self._pod_error_backoff_q

    def pop_all_backoff_completed(self) -> list[QueuedPodInfo]:
        """Pops every pod whose backoff is over, podBackoffQ first, then podErrorBackoffQ."""
        completed: list[QueuedPodInfo] = []
        for heap in (self._pod_backoff_q, self._pod_error_backoff_q):
            while (head := heap.peek()) is not None and not self.is_pod_backing_off(head):
                heap.pop()
                completed.append(head)
        return completed

    def pop_backoff(self) -> QueuedPodInfo | None:
        """The head of podBackoffQ, backoff over or not (never from podErrorBackoffQ)."""
        return self._pod_backoff_q.pop()

    def len_backoff(self) -> int:
        return len(self._pod_backoff_q)

    def __len__(self) -> int:
        return len(self._pod_backoff_q) + len(self._pod_error_backoff_q)

    def items(self) -> list[QueuedPodInfo]:
        return self._pod_backoff_q.items() + self._pod_error_backoff_q.items()

    def ordered(self, limit: int | None = None) -> list[tuple[QueuedPodInfo, bool]]:
        """The first ``limit`` pods (all by default) by expiry, each heap in its own pop order,
        with whether the pod is an error backoff."""
        regular = [(p, False) for p in self._pod_backoff_q.ordered(limit)]
        errors = [(p, True) for p in self._pod_error_backoff_q.ordered(limit)]
        # A stable sort keeps each heap's own order among equal expiries.
        merged = sorted(regular + errors, key=lambda entry: self.get_backoff_time(entry[0]))
        return merged if limit is None else merged[:limit]

    def storage(self) -> tuple[list[tuple[QueuedPodInfo, int]], list[tuple[QueuedPodInfo, int]]]:
        """Both heaps' storage (``Heap.storage``): podBackoffQ, podErrorBackoffQ."""
        return self._pod_backoff_q.storage(), self._pod_error_backoff_q.storage()

    def load(
        self,
        regular: list[tuple[QueuedPodInfo, int]],
        errors: list[tuple[QueuedPodInfo, int]],
    ) -> None:
        """Restores what ``storage`` gave, into empty heaps."""
        self._pod_backoff_q.load(regular, 0)
        self._pod_error_backoff_q.load(errors, 0)

    def next_completion(self) -> float | None:
        """The earliest time a flush would find a pod whose backoff is over."""
        peeked = (self._pod_backoff_q.peek(), self._pod_error_backoff_q.peek())
        heads = [head for head in peeked if head is not None]
        if not heads:
            return None
        expiry = min(self.get_backoff_time(h) for h in heads)
        if expiry == NO_BACKOFF:
            return self._clock.now()
        if self.pop_from_backoff_q:
            # Done once the current window is past the expiry's window.
            return expiry + BACKOFF_Q_ORDERING_WINDOW
        # Without windows a pod is done strictly after its expiry; the nearest float does.
        return math.nextafter(expiry, math.inf)
