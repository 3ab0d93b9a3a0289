"""Injectable time: wall time for the live UI, virtual time for instant, deterministic runs.

Upstream injects k8s.io/utils/clock (``clock.Clock``, ``testingclock.FakeClock``) the same way.
Times are float seconds.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Protocol


class Clock(Protocol):
    def now(self) -> float: ...


class WallClock:
    def now(self) -> float:
        return time.time()


class VirtualClock:
    """Time that moves only when told to; starts at ``start`` seconds."""

    def __init__(self, start: float = 0.0) -> None:
        self._now = start

    def now(self) -> float:
        return self._now

    def step(self, seconds: float) -> None:
        if seconds < 0:
            raise ValueError("virtual time cannot go back")
        self._now += seconds

    def set(self, when: float) -> None:
        if when < self._now:
            raise ValueError("virtual time cannot go back")
        self._now = when


class ScaledWallClock:
    """The wall clock run at ``speed`` scheduler seconds per wall second, from ``start``.

    The live mode's clock: ``now = start + (wall - wall_start) * speed``, ``wall_start`` being
    the wall time when the clock read ``start`` (by default when it was made). Changing the
    speed (or pausing, speed 0) restarts the formula from the current time; ``set_anchor``
    takes a formula decided elsewhere (the cluster's stored anchor). Time never goes back: a
    reading below one already given gives that one again.
    """

    def __init__(
        self,
        start: float = 0.0,
        speed: float = 1.0,
        wall: Callable[[], float] = time.monotonic,
        wall_start: float | None = None,
    ) -> None:
        if speed < 0:
            raise ValueError("speed cannot be negative")
        self._wall = wall
        self._start = start
        self._wall_start = wall() if wall_start is None else wall_start
        self._speed = speed
        self._last = start

    @property
    def speed(self) -> float:
        return self._speed

    def now(self) -> float:
        now = max(self._last, self._start + (self._wall() - self._wall_start) * self._speed)
        self._last = now
        return now

    def set_speed(self, speed: float) -> None:
        if speed < 0:
            raise ValueError("speed cannot be negative")
        self._start = self.now()
        self._wall_start = self._wall()
        self._speed = speed

    def set_anchor(self, start: float, wall_start: float, speed: float) -> None:
        """Runs from now on as ``start + (wall - wall_start) * speed``."""
        if speed < 0:
            raise ValueError("speed cannot be negative")
        self._start, self._wall_start, self._speed = start, wall_start, speed

    def advance_to(self, when: float) -> None:
        """Jumps forward to ``when`` (a step while paused); earlier times are ignored."""
        now = self.now()
        self._start = max(now, when)
        self._wall_start = self._wall()
