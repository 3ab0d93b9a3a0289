"""Celery tasks (distributed mode): the per-cluster scheduler runner, resuming clusters whose
runner died, and the variants of comparison runs.

A runner that dies keeps its lease until it expires, and nothing else would start one for its
cluster until the next change: ``resume_orphaned_clusters`` starts a runner for every cluster
whose lease has expired with a holder, for every cluster with a change no runner has seen (its
task was lost with the broker), and for every cluster whose wake-up is overdue (lost likewise).
It runs once when a worker starts (after the leases held then have had time to expire) and,
with ``celery beat``, every ``SCHEDVIZ_RESUME_SECONDS``.
"""

from __future__ import annotations

import time
from datetime import datetime
from typing import Any

from celery import shared_task
from celery.signals import worker_ready

from schedviz.cluster import selectors
from worker import compare, dispatch, runner


@shared_task(acks_late=True)
def run_cluster(
    cluster_id: int, requested_at: str | None = None, wake_at: float | None = None
) -> dict[str, Any]:
    """Schedules the cluster until it is idle; returns at once when another worker has it, or
    when a runner has run since ``requested_at`` (ISO 8601), or, for a wake-up (``wake_at``,
    Unix seconds), when a later runner asked for another. A runner that stops with work due
    later sends this task again for then (``dispatch.wake_later``): no worker process waits."""
    when = datetime.fromisoformat(requested_at) if requested_at else None
    result = runner.run_cluster(cluster_id, requested_at=when, wake_at=wake_at)
    dispatch.wake_later(result)
    return {
        "cluster": result.cluster_id,
        "holder": result.holder,
        "acquired": result.acquired,
        "cycles": result.cycles,
        "stopped": result.stopped,
    }


@shared_task(acks_late=True)
def run_compare_variant(variant_id: int) -> dict[str, Any]:
    """Runs one variant of a comparison (worker.compare); a finished variant is not run again.
    Answers what became of it and which worker process ran it."""
    outcome = compare.execute_variant(variant_id)
    return {"variant": variant_id, "outcome": outcome, "worker": compare.process_name()}


@shared_task
def resume_orphaned_clusters() -> list[int]:
    """Every cluster that needs a runner and may not get one otherwise (the module docstring)."""
    stranded = selectors.stranded_clusters()
    for cluster_id in stranded:
        dispatch.ensure_runner(cluster_id)
    return stranded + _take_over()


@shared_task
def take_over_expired_leases() -> list[int]:
    """The clusters whose runner died, hangs or is cut off (lease expired with a holder), and
    those whose wake-up is overdue: a runner for each. Two small reads (the leases, the saved
    queues' wake-ups), so ``celery beat`` runs it every ``SCHEDVIZ_TAKEOVER_SECONDS``: a
    frozen holder is replaced that long after its lease expired."""
    return _take_over()


def _take_over() -> list[int]:
    clusters = selectors.orphaned_clusters() + selectors.overdue_clusters(now=time.time())
    for cluster_id in clusters:
        dispatch.ensure_runner(cluster_id)
    return clusters


@worker_ready.connect
def _resume_after_start(**_: Any) -> None:
    # A worker that was killed and restarted finds its own old leases still held.
    countdown = selectors.seconds_until_held_leases_expire() + 1.0
    resume_orphaned_clusters.apply_async(countdown=countdown)
