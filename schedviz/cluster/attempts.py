"""Reads about a pod's scheduling attempts: why it is Pending, and what changed between two.

Selectors (no writes) over the stored cycles, the objects and the change log; the explaining
itself is the pure ``schedviz.scheduler.diagnosis`` and ``schedviz.scheduler.attempts``.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

from django.db.models import QuerySet

from schedviz.cluster import selectors
from schedviz.cluster.models import (
    Change,
    Cluster,
    Cycle,
    Namespace,
    Node,
    PersistentVolume,
    PersistentVolumeClaim,
    Pod,
    StorageClass,
)
from schedviz.cluster.services import ObjectNotFound
from schedviz.kube.decode import decode_object
from schedviz.kube.errors import go_quote
from schedviz.kube.objects import KubeObject
from schedviz.kube.objects import Pod as KubePod
from schedviz.scheduler.apis.config.validation import ConfigError
from schedviz.scheduler.attempts import AttemptDiff, diff_attempts
from schedviz.scheduler.diagnosis import PendingDiagnosis, diagnose, profile_events
from schedviz.scheduler.framework.runtime.framework import FrameworkError
from schedviz.scheduler.framework.types import ClusterEvent
from schedviz.scheduler.trace import RESULT_ERROR, RESULT_UNSCHEDULABLE

# The kinds a diagnosis reads.
_DIAGNOSIS_MODELS = (Node, Pod, Namespace, PersistentVolume, PersistentVolumeClaim, StorageClass)
# At most this many cluster changes are listed between two attempts.
MAX_CHANGES_LISTED = 200


def _objects(cluster: Cluster) -> list[KubeObject]:
    objects = []
    for model in _DIAGNOSIS_MODELS:
        for manifest in model.objects.filter(cluster=cluster).values_list("manifest", flat=True):
            objects.append(decode_object(manifest))
    return objects


def _pod_cycles(cluster: Cluster, namespace: str, name: str) -> QuerySet[Cycle]:
    return Cycle.objects.filter(cluster=cluster, pod_namespace=namespace, pod_name=name)


@dataclass(slots=True)
class PodDiagnosis:
    """The pod now, and the diagnosis of its last failed attempt (None: it never failed)."""

    namespace: str
    name: str
    exists: bool
    node_name: str
    phase: str
    pending: bool
    diagnosis: PendingDiagnosis | None
    # spec.schedulingGates: while any is left, the pod waits in the queue's gated pool
    # (PreEnqueue SchedulingGates) and is never attempted.
    scheduling_gates: tuple[str, ...] = ()

    def to_json(self) -> dict[str, Any]:
        return {
            "pod": f"{self.namespace}/{self.name}",
            "exists": self.exists,
            "nodeName": self.node_name or None,
            "phase": self.phase or None,
            "pending": self.pending,
            "diagnosis": self.diagnosis.to_json() if self.diagnosis is not None else None,
            "schedulingGates": list(self.scheduling_gates),
        }


def _plugin_events(cluster: Cluster, trace: dict[str, Any]) -> dict[str, list[ClusterEvent]]:
    """The registered events of the profile that ran the cycle, as the cluster's scheduler is
    configured now; none when that configuration cannot build its frameworks (the runner
    refuses it too, and says why)."""
    try:
        config = selectors.scheduler_configuration(cluster=cluster)
        return profile_events(config, str(trace.get("profile") or ""))
    except (ConfigError, FrameworkError, ValueError):
        return {}


def pod_diagnosis(*, cluster: Cluster, namespace: str, name: str) -> PodDiagnosis:
    """Why the pod is (or was) Pending: its last Unschedulable or Error cycle explained against
    the cluster as it is now. ObjectNotFound when there is no such pod and no attempt of it."""
    row = Pod.objects.filter(cluster=cluster, namespace=namespace, name=name).first()
    cycles = _pod_cycles(cluster, namespace, name)
    if row is None and not cycles.exists():
        raise ObjectNotFound([f"pods {go_quote(name)} not found"])
    failed = cycles.filter(result__in=[RESULT_UNSCHEDULABLE, RESULT_ERROR]).order_by("-number")
    last_failed = failed.first()
    diagnosis = None
    if last_failed is not None:
        trace = last_failed.trace()
        diagnosis = diagnose(
            trace, objects=_objects(cluster), plugin_events=_plugin_events(cluster, trace)
        )
    gates: tuple[str, ...] = ()
    if row is not None:
        decoded = decode_object(row.manifest)
        gates = decoded.scheduling_gates if isinstance(decoded, KubePod) else ()
    return PodDiagnosis(
        scheduling_gates=gates,
        namespace=namespace,
        name=name,
        exists=row is not None,
        node_name=row.node_name if row is not None else "",
        phase=row.phase if row is not None else "",
        pending=row is not None and not row.node_name,
        diagnosis=diagnosis,
    )


def _attempt(cluster: Cluster, namespace: str, name: str, number: int) -> Cycle:
    found = _pod_cycles(cluster, namespace, name).filter(number=number).first()
    if found is None:
        raise ObjectNotFound(
            [f"cycles {go_quote(str(number))} not found for pod {namespace}/{name}"]
        )
    return found


def _changes_between(cluster: Cluster, start: float, end: float) -> list[dict[str, Any]]:
    """The change log's rows written between two wall times: the watch events the scheduler
    received between the attempts."""
    rows = (
        Change.objects.filter(
            cluster=cluster,
            created_at__gt=datetime.fromtimestamp(start, tz=UTC),
            created_at__lte=datetime.fromtimestamp(end, tz=UTC),
        )
        .order_by("id")
        .values_list("id", "type", "kind", "namespace", "name")[:MAX_CHANGES_LISTED]
    )
    return [
        {"resourceVersion": rv, "type": type_, "kind": kind, "namespace": ns, "name": name}
        for rv, type_, kind, ns, name in rows
    ]


def pod_attempt_diff(
    *, cluster: Cluster, namespace: str, name: str, before: int, after: int
) -> AttemptDiff:
    """What changed from cycle ``before`` to cycle ``after``, both attempts of the pod."""
    first = _attempt(cluster, namespace, name, before)
    second = _attempt(cluster, namespace, name, after)
    start, end = sorted((first.wall_time, second.wall_time))
    return diff_attempts(
        first.trace(), second.trace(), changes=_changes_between(cluster, start, end)
    )
