"""ScaledWallClock: the live mode's clock, scheduler seconds = start + wall elapsed * speed."""

from __future__ import annotations

import pytest

from schedviz.scheduler.clock import ScaledWallClock


class Wall:
    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


def test_it_runs_at_its_speed_from_its_start() -> None:
    wall = Wall()
    clock = ScaledWallClock(start=50.0, speed=10.0, wall=wall)
    assert clock.now() == 50.0
    wall.now += 1.5
    assert clock.now() == 65.0


def test_a_new_speed_applies_from_now_on_and_time_never_goes_back() -> None:
    wall = Wall()
    clock = ScaledWallClock(speed=2.0, wall=wall)
    wall.now += 1
    clock.set_speed(0.0)  # paused
    wall.now += 100
    assert clock.now() == 2.0
    clock.set_speed(1.0)
    wall.now += 3
    assert clock.now() == 5.0
    assert clock.speed == 1.0


def test_advancing_jumps_forward_only() -> None:
    wall = Wall()
    clock = ScaledWallClock(start=10.0, speed=0.0, wall=wall)
    clock.advance_to(12.5)
    assert clock.now() == 12.5
    clock.advance_to(3.0)
    assert clock.now() == 12.5


def test_a_negative_speed_is_refused() -> None:
    with pytest.raises(ValueError, match="negative"):
        ScaledWallClock(speed=-1)
    with pytest.raises(ValueError, match="negative"):
        ScaledWallClock().set_speed(-0.5)
