"""Clusters: create, delete, reset, run state, speed and clock mode; and the runner each
user-facing write asks for once committed (through schedviz/cluster/ports.py).
"""

from __future__ import annotations

import time
from typing import Any

from django.conf import settings
from django.contrib.auth.models import User
from django.db import transaction
from django.db.models import F

from schedviz.cluster import ports, validation
from schedviz.cluster.clock import clock_reanchor
from schedviz.cluster.models import (
    KIND_MODELS,
    Change,
    Cluster,
    Cycle,
    DebugSession,
    Event,
    Lease,
    NodeOrder,
    PendingPods,
    Prediction,
)
from schedviz.cluster.services.errors import Conflict, ServiceError
from schedviz.cluster.services.stored import _manager
from schedviz.kube.errors import (
    go_quote,
)

# ---------------------------------------------------------------------------------------------
# Runners


def _start_runner_on_commit(cluster_id: int) -> None:
    """Once committed, make sure a runner schedules the cluster (if runners are enabled here):
    through the port the worker app registers (schedviz/cluster/ports.py)."""
    if not settings.SCHEDVIZ_START_RUNNERS:
        return
    transaction.on_commit(lambda: ports.start_runner(cluster_id))


# ---------------------------------------------------------------------------------------------
# Clusters

CLUSTER_NAME_MAX_LENGTH = 100


def _validate_cluster_name(name: str) -> list[str]:
    if not name.strip():
        return ["name: Required value"]
    if len(name) > CLUSTER_NAME_MAX_LENGTH:
        return [f"name: Too long: must have at most {CLUSTER_NAME_MAX_LENGTH} characters"]
    if name != name.strip():
        return ["name: Invalid value: must not have leading or trailing whitespace"]
    return validation.text_errors("name", name)


def _validate_clock_mode(clock_mode: str) -> list[str]:
    if clock_mode not in Cluster.ClockMode.values:
        supported = ", ".join(go_quote(v) for v in Cluster.ClockMode.values)
        return [
            f"clockMode: Unsupported value: {go_quote(clock_mode)}: supported values: {supported}"
        ]
    return []


def cluster_create(
    *,
    name: str,
    owner: User | None = None,
    clock_mode: str = Cluster.ClockMode.LIVE,
    speed: float = 1.0,
    seed: int | None = None,
    run_state: str = Cluster.RunState.RUNNING,
) -> Cluster:
    """A new, empty cluster; its name is unique per owner (and among clusters without one)."""
    errors = _validate_cluster_name(name) + _validate_clock_mode(clock_mode)
    errors += validation.speed_errors(speed)
    errors += validation.seed_errors(seed) if seed is not None else []
    if run_state not in Cluster.RunState.values:
        errors.append(f"runState: Unsupported value: {go_quote(run_state)}")
    if errors:
        raise ServiceError(errors)
    with transaction.atomic():
        # The unique constraint does not hold for a NULL owner, so ask first for every owner.
        if Cluster.objects.filter(owner=owner, name=name).exists():
            raise Conflict([f"clusters {go_quote(name)} already exists"])
        return Cluster.objects.create(
            name=name,
            owner=owner,
            clock_mode=clock_mode,
            speed=speed,
            seed=settings.SCHEDVIZ_DEFAULT_SEED if seed is None else seed,
            run_state=run_state,
            # The live clock starts now, at 0 (schedviz/cluster/clock.py).
            clock_anchor_wall=time.time(),
        )


def cluster_get_or_create(*, name: str, owner: User | None = None) -> tuple[Cluster, bool]:
    """The owner's cluster of that name, created (with defaults) if there is none."""
    with transaction.atomic():
        existing = Cluster.objects.filter(owner=owner, name=name).first()
        if existing is not None:
            return existing, False
        return cluster_create(name=name, owner=owner), True


def _fence_out_runner(cluster_id: int) -> None:
    """Inside a transaction that deletes what a runner writes: locks the cluster's lease row,
    then the cluster row, until it ends. A runner's write under way (its fence holds the lease
    row, worker/lease.py) commits first and is deleted with the rest; a later one is refused by
    its fence (the row locked), and nothing that names the cluster (a cycle, a change) commits
    in between: on PostgreSQL it would be left naming a deleted cluster, the deletion refused
    at commit by the foreign key. The lease row first, as the runner's writes take them."""
    list(Lease.objects.select_for_update().filter(cluster_id=cluster_id).values_list("pk"))
    list(Cluster.objects.select_for_update().filter(pk=cluster_id).values_list("pk"))


def cluster_delete(*, cluster: Cluster) -> None:
    """The cluster and everything in it (objects, changes, cycles, events, profiles, lease). A
    runner at work on it stops at its next write or look: its writes are fenced off first."""
    with transaction.atomic():
        _fence_out_runner(cluster.pk)
        cluster.delete()


def cluster_reset(*, cluster: Cluster) -> None:
    """Every object, cycle, event and change deleted; profiles and settings kept.

    The lease goes too, so a runner still scheduling the old objects loses it at its next
    renewal and stops; the runner started on commit lists the empty cluster.
    """
    with transaction.atomic():
        _fence_out_runner(cluster.pk)
        for model in KIND_MODELS.values():
            _manager(model).filter(cluster=cluster).delete()
        Change.objects.filter(cluster=cluster).delete()
        Cycle.objects.filter(cluster=cluster).delete()
        NodeOrder.objects.filter(cluster=cluster).delete()
        Event.objects.filter(cluster=cluster).delete()
        # Guesses about the deleted cycles' pods go with them (cycle numbers start again at 1).
        Prediction.objects.filter(cluster=cluster).delete()
        Lease.objects.filter(cluster=cluster).delete()
        PendingPods.objects.filter(cluster=cluster).delete()
        DebugSession.objects.filter(cluster=cluster).delete()
        Cluster.objects.filter(id=cluster.id).update(
            scheduler_time=0.0,
            pending_steps=0,
            clock_anchor_time=0.0,
            clock_anchor_wall=time.time(),
        )
        cluster.scheduler_time, cluster.pending_steps = 0.0, 0
        _start_runner_on_commit(cluster.id)


# Changing these moves the live clock's anchor to the moment of the change first.
_CLOCK_FIELDS = frozenset({"speed", "run_state", "clock_mode"})


def _cluster_update(cluster: Cluster, **fields: Any) -> Cluster:
    with transaction.atomic():
        if _CLOCK_FIELDS & set(fields):
            clock_reanchor(cluster_id=cluster.id)
        Cluster.objects.filter(id=cluster.id).update(**fields)
        cluster.refresh_from_db(fields=list(fields))
        _start_runner_on_commit(cluster.id)
    return cluster


def cluster_set_run_state(*, cluster: Cluster, run_state: str) -> Cluster:
    """Running, or paused (then only ``cluster_step`` makes cycles happen)."""
    if run_state not in Cluster.RunState.values:
        supported = ", ".join(go_quote(v) for v in Cluster.RunState.values)
        raise ServiceError(
            [f"runState: Unsupported value: {go_quote(run_state)}: supported values: {supported}"]
        )
    fields: dict[str, Any] = {"run_state": run_state}
    with transaction.atomic():
        if run_state == Cluster.RunState.RUNNING:
            fields["pending_steps"] = 0
            # A step into that no runner took yet is dropped; a stopped cycle runs to its end.
            DebugSession.objects.filter(
                cluster=cluster, state=DebugSession.State.REQUESTED
            ).delete()
        return _cluster_update(cluster, **fields)


def cluster_step(*, cluster: Cluster) -> Cluster:
    """One more scheduling cycle for a paused cluster (the step button)."""
    return _cluster_update(cluster, pending_steps=F("pending_steps") + 1)


def cluster_set_speed(*, cluster: Cluster, speed: float) -> Cluster:
    """The live clock's pace: scheduler seconds per wall second."""
    errors = validation.speed_errors(speed)
    if errors:
        raise ServiceError(errors)
    return _cluster_update(cluster, speed=speed)


def cluster_set_clock_mode(*, cluster: Cluster, clock_mode: str) -> Cluster:
    errors = _validate_clock_mode(clock_mode)
    if errors:
        raise ServiceError(errors)
    return _cluster_update(cluster, clock_mode=clock_mode)
