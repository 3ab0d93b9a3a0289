"""The runner session's clock: how far away (in wall seconds) a scheduler time is, the wake-up
a stopping runner leaves, and the paused step's jump to the next wake-up (docs/live-system.md,
"Clock modes")."""

from __future__ import annotations

import math
import time

from schedviz.cluster.clock import clock_advance
from schedviz.scheduler.clock import ScaledWallClock, VirtualClock
from worker.binding import GroupBindingScheduler
from worker.run_result import STOP_IDLE, RunResult

# A runner that gave its worker up with only futile work left (worker/session.py, FUTILE_SLICE)
# is woken up again no sooner than FUTILE_WAKE_FLOOR wall seconds later; one that stopped idle
# with only futile retries due (a flush of unschedulablePods every 30 ms at speed 10000), no
# sooner than IDLE_FUTILE_WAKE_FLOOR: not a new session, listing the cluster, at every flush.
FUTILE_WAKE_FLOOR = 5.0
IDLE_FUTILE_WAKE_FLOOR = 1.0


class SessionClock:
    """The clock part of a runner's session (worker/session.py)."""

    cluster_id: int
    result: RunResult
    scheduler: GroupBindingScheduler
    clock: VirtualClock | ScaledWallClock
    virtual: bool
    paused: bool
    # The cluster's clock anchor: (scheduler time, wall time) (schedviz/cluster/clock.py).
    anchor: tuple[float, float | None]
    # The session gave its worker up with only futile work left, and how soon it may be woken
    # up (wall seconds; worker/session.py, FUTILE_SLICE).
    gave_up: bool
    wake_floor: float

    def _wall_seconds_until(self, when: float) -> float:
        speed = self.clock.speed if isinstance(self.clock, ScaledWallClock) else 0.0
        if speed <= 0:
            return math.inf
        return max(0.0, (when - self.clock.now()) / speed)

    def _plan_wake(self) -> None:
        """When a runner must start again with no change to start it: the next backoff expiry
        or Permit timeout, or the queue flush that retries a pod waiting past
        podMaxInUnschedulablePodsDuration. Live and running only (paused, the clock stands
        still; virtual time runs to idle before the runner stops)."""
        if self.virtual or self.paused or self.result.stopped != STOP_IDLE:
            return
        dues = [
            due
            for due in (self.scheduler.next_wakeup(), self.scheduler.next_unschedulable_flush())
            if due is not None
        ]
        if self.gave_up and not dues:
            delay = self.wake_floor  # pods left to try: woken up to go on with them
        elif not dues:
            return
        else:
            # Only futile work left (worker/session.py, FUTILE_SLICE): no sooner than the floor.
            delay = max(self.wake_floor, self._wall_seconds_until(min(dues)))
        if math.isinf(delay):
            return
        self.result.wake_in = delay
        self.result.wake_at = time.time() + delay

    def _advance(self, when: float) -> None:
        if isinstance(self.clock, VirtualClock):
            self.clock.set(max(when, self.clock.now()))
            return
        # A paused step to the next wake-up moves the cluster's clock, not only this one's.
        when = max(when, self.clock.now())
        wall = time.time()
        if clock_advance(cluster_id=self.cluster_id, old=self.anchor, when=when, wall=wall):
            self.anchor = (when, wall)
        self.clock.advance_to(when)
