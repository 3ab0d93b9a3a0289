"""The scheduling queue between runners: saved by a runner, resumed by the next.

A runner saves its scheduler's state (``Scheduler.state_to_data``: activeQ, backoffQ with
expiries, unschedulablePods with their plugins and timestamps, attempts, in-flight pods and
events, nominations, the flush ticks) in the cluster's ``PendingPods`` row with a batch of Cycle
rows it commits (at most every second, less often for a queue that takes long to save) and when
it stops, together with the change-log position the queue had followed up to and a digest of
the scheduler configuration.
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

from schedviz.cluster.models import Cluster, PendingPods, Pod
from schedviz.kube.objects import DEFAULT_SCHEDULER_NAME
from schedviz.scheduler.framework.plugins.names import SCHEDULING_GATES


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


def queue_before_first_run(*, cluster: Cluster, limit: int) -> dict[str, Any]:
    """The queue a cluster's first runner starts with, in the trace's ``queue`` form (lists cut
    at ``limit``): every pending pod of one of its profiles in activeQ, in the order it pops
    them (higher priority first, then the order they are listed in, which is the order they
    were created), pods with scheduling gates in ``gated``. What the dashboard shows, and
    predicts from, before any runner has saved a queue."""
    names = set(cluster.profiles.values_list("scheduler_name", flat=True)) or {
        DEFAULT_SCHEDULER_NAME
    }
    pods = (
        Pod.objects.filter(cluster=cluster, node_name="", scheduler_name__in=names)
        .exclude(phase__in=["Succeeded", "Failed"])
        .order_by("-priority", "id")
        .values_list("namespace", "name", "manifest")
    )
    active: list[dict[str, Any]] = []
    gated: list[dict[str, Any]] = []
    for namespace, name, manifest in pods.iterator():
        entry: dict[str, Any] = {"pod": f"{namespace}/{name}", "attempts": 0}
        if (manifest.get("spec") or {}).get("schedulingGates"):
            if len(gated) < limit:
                gated.append({**entry, "gatingPlugin": SCHEDULING_GATES, "since": None})
        elif len(active) < limit:
            active.append(entry)
        if len(active) >= limit and len(gated) >= limit:
            break
    return {
        "activeQ": active,
        "backoffQ": [],
        "unschedulablePods": [],
        "gated": gated,
        "inFlight": [],
        "inFlightEvents": [],
    }


def next_to_pop(queue: dict[str, Any]) -> str:
    """The pod the next cycle pops from a queue in the trace's ``queue`` form: the head of
    activeQ; with activeQ empty, the head of backoffQ's pods rejected by plugins
    (SchedulerPopFromBackoffQ, on by default), never one backing off after an error."""
    active = queue.get("activeQ") or []
    if active:
        return str(active[0].get("pod", ""))
    for entry in queue.get("backoffQ") or []:
        if not entry.get("error"):
            return str(entry.get("pod", ""))
    return ""
