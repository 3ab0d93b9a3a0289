"""A live cluster's clock: wall time times speed since the cluster started, runner or not;
still while paused; continuous across changes of speed, run state and clock mode."""

from __future__ import annotations

from typing import Any

import pytest

from schedviz.cluster import clock as cluster_clock
from schedviz.cluster import services
from schedviz.cluster.clock import cluster_clock_time, live_time
from schedviz.cluster.models import Cluster
from schedviz.cluster.services import clusters as services_clusters

pytestmark = pytest.mark.django_db


class Wall:
    def __init__(self) -> None:
        self.now = 1_700_000_000.0

    def __call__(self) -> float:
        return self.now


@pytest.fixture
def wall(monkeypatch: Any, settings: Any) -> Wall:
    settings.SCHEDVIZ_START_RUNNERS = False
    fake = Wall()
    monkeypatch.setattr(cluster_clock.time, "time", fake)
    monkeypatch.setattr(services_clusters.time, "time", fake)
    return fake


def reading(cluster: Cluster) -> float:
    cluster.refresh_from_db()
    return cluster_clock_time(cluster=cluster)


def test_a_live_clock_runs_at_its_speed_from_creation_with_no_runner(wall: Wall) -> None:
    cluster = services.cluster_create(name="c", speed=4.0)
    assert reading(cluster) == 0.0
    wall.now += 720  # 12 minutes
    assert reading(cluster) == 2880.0


def test_paused_it_stands_still_and_resumed_it_goes_on_from_there(wall: Wall) -> None:
    cluster = services.cluster_create(name="c", speed=2.0)
    wall.now += 10
    services.cluster_set_run_state(cluster=cluster, run_state=Cluster.RunState.PAUSED)
    wall.now += 100
    assert reading(cluster) == 20.0
    services.cluster_set_run_state(cluster=cluster, run_state=Cluster.RunState.RUNNING)
    wall.now += 5
    assert reading(cluster) == 30.0


def test_a_new_speed_applies_from_the_change_on(wall: Wall) -> None:
    cluster = services.cluster_create(name="c", speed=1.0)
    wall.now += 10
    services.cluster_set_speed(cluster=cluster, speed=10.0)
    wall.now += 1
    assert reading(cluster) == 20.0


def test_switching_to_virtual_time_goes_on_from_the_live_reading_and_back(wall: Wall) -> None:
    cluster = services.cluster_create(name="c", speed=3.0)
    wall.now += 10
    services.cluster_set_clock_mode(cluster=cluster, clock_mode=Cluster.ClockMode.VIRTUAL)
    wall.now += 50
    assert reading(cluster) == 30.0
    services.cluster_set_clock_mode(cluster=cluster, clock_mode=Cluster.ClockMode.LIVE)
    wall.now += 1
    assert reading(cluster) == 33.0


def test_a_reset_starts_the_clock_again_at_zero(wall: Wall) -> None:
    cluster = services.cluster_create(name="c", speed=1.0)
    wall.now += 10
    services.cluster_reset(cluster=cluster)
    wall.now += 2
    assert reading(cluster) == 2.0


def test_a_clock_never_anchored_reads_its_last_time() -> None:
    assert live_time(anchor_time=7.0, anchor_wall=None, speed=5.0, paused=False, wall=1e9) == 7.0
    assert live_time(anchor_time=7.0, anchor_wall=100.0, speed=5.0, paused=False, wall=99.0) == 7.0
