"""Celery tasks (distributed mode): the per-cluster scheduler runner, resuming clusters whose
runner died, and the variants of comparison runs.

A runner that dies keeps its lease until it expires, and nothing else would start one for its
cluster until the next change: ``resume_orphaned_clusters`` starts a runner for every cluster
whose lease has expired with a holder, and for every cluster with a change no runner has seen (its
task was lost with the broker). It runs once when a worker starts (after the leases held
then have had time to expire) and, with ``celery beat``, every ``SCHEDVIZ_RESUME_SECONDS``.
"""

from __future__ import annotations

from datetime import datetime
from typing import Any

from celery import shared_task
from celery.signals import worker_ready

from schedviz.cluster import selectors
from worker import compare, dispatch, runner


@shared_task(acks_late=True)
def run_cluster(cluster_id: int, requested_at: str | None = None) -> dict[str, Any]:
    """Schedules the cluster until it is idle; returns at once when another worker has it, or
    when a runner has run since ``requested_at`` (ISO 8601)."""
    when = datetime.fromisoformat(requested_at) if requested_at else None
    result = runner.run_cluster(cluster_id, requested_at=when)
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
    clusters = selectors.orphaned_clusters() + selectors.stranded_clusters()
    for cluster_id in clusters:
        dispatch.ensure_runner(cluster_id)
    return clusters


@worker_ready.connect
def _resume_after_start(**_: Any) -> None:
    # A worker that was killed and restarted finds its own old leases still held.
    countdown = selectors.seconds_until_held_leases_expire() + 1.0
    resume_orphaned_clusters.apply_async(countdown=countdown)
