"""The clock of a live cluster: wall time times speed since the cluster started, whether or not
a runner is alive.

A live ("Live (wall clock)") cluster stores an anchor: its clock read ``clock_anchor_time`` at
wall time ``clock_anchor_wall`` (Unix seconds). From then on it reads
``clock_anchor_time + (wall - clock_anchor_wall) * speed`` while running, and stands still at
the anchor's reading while paused. Every change of speed or run state moves the anchor to the
moment of the change first (``clock_reanchor``, in the change's transaction), so time runs on
continuously; a runner builds its ``ScaledWallClock`` from the anchor and follows it when it
moves, so a runner that starts minutes after the last one stopped finds the clock minutes
ahead, and backoff expiries and queue flushes that fell due meanwhile happen at once. Virtual
clusters keep ``scheduler_time``, the time their last runner reached.
"""

from __future__ import annotations

import time

from django.db.models import F

from schedviz.cluster.models import Cluster


def live_time(
    *, anchor_time: float, anchor_wall: float | None, speed: float, paused: bool, wall: float
) -> float:
    """The reading of a live clock with this anchor at wall time ``wall``."""
    if anchor_wall is None or paused:
        return anchor_time
    return anchor_time + max(0.0, wall - anchor_wall) * speed


def cluster_clock_time(*, cluster: Cluster, wall: float | None = None) -> float:
    """The cluster's scheduler time now: the live clock's reading, or the virtual clock's last
    time."""
    if cluster.clock_mode == Cluster.ClockMode.VIRTUAL:
        return cluster.scheduler_time
    return live_time(
        anchor_time=cluster.clock_anchor_time,
        anchor_wall=cluster.clock_anchor_wall,
        speed=cluster.speed,
        paused=cluster.run_state == Cluster.RunState.PAUSED,
        wall=time.time() if wall is None else wall,
    )


def clock_reanchor(*, cluster_id: int, wall: float | None = None) -> tuple[float, float]:
    """Moves the anchor to now (or ``wall``), keeping the reading: to be called in the
    transaction that changes the speed, the run state or the clock mode, before the change.
    Locks the row, so two changes at once each start from the other's anchor. A cluster never
    anchored, or in virtual time, starts now from its ``scheduler_time``. Returns the new
    (time, wall)."""
    wall = time.time() if wall is None else wall
    row = (
        Cluster.objects.select_for_update()
        .filter(pk=cluster_id)
        .values(
            "clock_mode",
            "clock_anchor_time",
            "clock_anchor_wall",
            "speed",
            "run_state",
            "scheduler_time",
        )
        .get()
    )
    if row["clock_anchor_wall"] is None or row["clock_mode"] == Cluster.ClockMode.VIRTUAL:
        # Not started, or virtual time: a live clock would go on from the time reached.
        reading = row["scheduler_time"]
    else:
        reading = live_time(
            anchor_time=row["clock_anchor_time"],
            anchor_wall=row["clock_anchor_wall"],
            speed=row["speed"],
            paused=row["run_state"] == Cluster.RunState.PAUSED,
            wall=wall,
        )
    # scheduler_time too: a switch to virtual time goes on from the live clock's reading.
    Cluster.objects.filter(pk=cluster_id).update(
        clock_anchor_time=reading, clock_anchor_wall=wall, scheduler_time=reading
    )
    return reading, wall


def clock_start(*, cluster_id: int, wall: float | None = None) -> tuple[float, float]:
    """The anchor of a cluster, set now from ``scheduler_time`` if it has none yet (a cluster
    from before anchors, or made without one). Returns (time, wall)."""
    wall = time.time() if wall is None else wall
    Cluster.objects.filter(pk=cluster_id, clock_anchor_wall__isnull=True).update(
        clock_anchor_time=F("scheduler_time"), clock_anchor_wall=wall
    )
    anchor_time, anchor_wall = (
        Cluster.objects.filter(pk=cluster_id)
        .values_list("clock_anchor_time", "clock_anchor_wall")
        .get()
    )
    assert anchor_wall is not None
    return anchor_time, anchor_wall


def clock_advance(
    *, cluster_id: int, old: tuple[float, float | None], when: float, wall: float | None = None
) -> bool:
    """A paused step that jumps the clock to ``when`` (the next backoff ending): the anchor
    moves, if it is still ``old`` (time, wall); whether it did."""
    wall = time.time() if wall is None else wall
    return (
        Cluster.objects.filter(
            pk=cluster_id, clock_anchor_time=old[0], clock_anchor_wall=old[1]
        ).update(clock_anchor_time=when, clock_anchor_wall=wall)
        == 1
    )
