"""The scheduling queue between runners: saved by a runner, resumed by the next.

A runner saves its scheduler's state (``Scheduler.state_to_data``: activeQ, backoffQ with
expiries, unschedulablePods with their plugins and timestamps, attempts, in-flight pods and
events, nominations, the flush ticks) in the cluster's ``PendingPods`` row with every batch of
Cycle rows it commits (at most every ``SAVE_INTERVAL``) and when it stops, together with the
change-log position the queue had followed up to and a digest of the scheduler configuration.
The next runner lists the cluster as it was at that position, restores the queue, and follows
the change log from there, so what changed meanwhile reaches the queue as the events it is.
A state saved for another configuration is not resumed (the scheduler starts afresh, as a
restarted kube-scheduler does).
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass
from typing import Any

from schedviz.cluster.models import Cluster, PendingPods


@dataclass(frozen=True)
class SavedQueue:
    state: dict[str, Any]
    change_id: int
    config_digest: str
    wake_at: float | None


def config_digest(*, document: dict[str, Any], clock_mode: str) -> str:
    """What a saved queue is valid for: the scheduler configuration and the clock mode."""
    text = json.dumps([document, clock_mode], sort_keys=True, separators=(",", ":"))
    return hashlib.sha256(text.encode()).hexdigest()


def queue_state_save(
    *,
    cluster: Cluster,
    state: dict[str, Any],
    change_id: int,
    config_digest: str,
    wake_at: float | None,
) -> None:
    """Saves the queue (call inside the runner's fenced write transaction)."""
    fields = {
        "state": state,
        "change_id": change_id,
        "config_digest": config_digest,
        "wake_at": wake_at,
    }
    if not PendingPods.objects.filter(cluster=cluster).update(**fields):
        PendingPods.objects.create(cluster=cluster, **fields)


def queue_state_get(*, cluster_id: int) -> SavedQueue | None:
    row = (
        PendingPods.objects.filter(cluster_id=cluster_id, state__isnull=False)
        .values_list("state", "change_id", "config_digest", "wake_at")
        .first()
    )
    if row is None:
        return None
    state, change_id, digest, wake_at = row
    if not isinstance(state, dict):
        return None
    return SavedQueue(state, change_id, digest, wake_at)


def queue_state_forget(*, cluster_id: int) -> None:
    """Drops a saved queue that cannot be resumed (a reset, or unreadable data)."""
    PendingPods.objects.filter(cluster_id=cluster_id).update(state=None, change_id=0, wake_at=None)


def clusters_due(*, now: float) -> list[int]:
    """Clusters whose saved queue asked to be woken up by now (a wake-up task lost with the
    broker, or queued behind others): for the periodic resume."""
    return list(
        PendingPods.objects.filter(wake_at__lte=now, state__isnull=False).values_list(
            "cluster_id", flat=True
        )
    )
