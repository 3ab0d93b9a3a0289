"""What the controllers share: ownership, active and ready pods, the ranking of pods to delete.

Mirrors pkg/controller/controller_utils.go (``IsPodActive``, ``FilterActivePods``,
``ActivePodsWithRanks``, ``ReplicaSetsByCreationTimestamp``, ``FilterActiveReplicaSets``),
pkg/controller/replicaset/replica_set.go (``getPodsToDelete``,
``getPodsRankedByRelatedPodsOnSameNode``), pkg/controller/controller_ref_manager.go
(``ClaimPods``: an orphan whose labels match the selector is adopted) and
k8s.io/apimachinery/pkg/util/intstr (``GetScaledValueFromIntOrPercent``).

The kubelet is not simulated beyond this: a pod bound to a node runs and is ready from its
binding on (phase Running, condition Ready), so "ready" and "available" mean bound here, and a
pod's ready time is the virtual time it was bound. Times are the virtual clock's seconds; a pod
the controllers found at load counts as created (and, when bound, ready) at the start.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, TypeVar

from schedviz.kube.labels import as_selector
from schedviz.kube.objects import (
    POD_FAILED,
    POD_PENDING,
    POD_RUNNING,
    POD_SUCCEEDED,
    LabelSelector,
    OwnerReference,
    Pod,
    Workload,
)
from schedviz.scheduler.gosort import sort_slice

W = TypeVar("W", bound=Workload)

POD_DELETION_COST_ANNOTATION = "controller.kubernetes.io/pod-deletion-cost"
POD_UNKNOWN = "Unknown"
# podPhaseToOrdinal: Pending < Unknown < Running.
_PHASE_ORDINAL = {POD_PENDING: 0, POD_UNKNOWN: 1, POD_RUNNING: 2}


def controller_ref(obj: Any) -> OwnerReference | None:
    """metav1.GetControllerOf: the ownerReference with controller true."""
    refs: tuple[OwnerReference, ...] = getattr(obj, "owner_references", ())
    return next((ref for ref in refs if ref.controller), None)


def is_controlled_by(obj: Any, owner: Workload) -> bool:
    ref = controller_ref(obj)
    return ref is not None and ref.uid == owner.uid


def is_pod_active(pod: Pod) -> bool:
    """IsPodActive: not Succeeded, not Failed, not being deleted."""
    return pod.phase not in (POD_SUCCEEDED, POD_FAILED) and pod.deletion_timestamp is None


def is_pod_terminal(pod: Pod) -> bool:
    return pod.phase in (POD_SUCCEEDED, POD_FAILED)


def pod_phase(pod: Pod) -> str:
    """The phase the kubelet reports: a pod the scheduler bound runs. A pod given already on
    its node (a dumped one) has the phase it was given when it says one."""
    if pod.phase == POD_PENDING and pod.node_name and not _given_status(pod, "phase"):
        return POD_RUNNING
    return pod.phase


def _given_status(pod: Pod, field: str) -> bool:
    """Whether the pod was given on its node with ``status.<field>`` set."""
    manifest = pod.manifest if isinstance(pod.manifest, Mapping) else {}
    spec, status = manifest.get("spec") or {}, manifest.get("status") or {}
    return spec.get("nodeName") == pod.node_name and bool(status.get(field))


def is_pod_ready(pod: Pod) -> bool:
    """podutil.IsPodReady: for a pod given on its node, its Ready condition when it has one;
    else the kubelet as this simulator has it: running on a node."""
    if _given_status(pod, "conditions"):
        for condition in pod.conditions:
            if condition.type == "Ready":
                return condition.status == "True"
    return bool(pod.node_name) and pod_phase(pod) == POD_RUNNING


def selector_matches(
    selector: LabelSelector | dict[str, str] | None, labels: Mapping[str, str]
) -> bool:
    """A workload's selector against labels; a missing or empty selector matches nothing, as
    the controllers' ``LabelSelectorAsSelector`` of an empty selector is guarded against."""
    if selector is None:
        return False
    if isinstance(selector, dict):
        return bool(selector) and all(labels.get(k) == v for k, v in selector.items())
    if not selector.match_labels and not selector.match_expressions:
        return False
    return as_selector(selector).matches(dict(labels))


def owner_reference(owner: Workload, api_version: str) -> dict[str, Any]:
    """metav1.NewControllerRef as a manifest."""
    return {
        "apiVersion": api_version,
        "kind": owner.kind,
        "name": owner.name,
        "uid": owner.uid,
        "controller": True,
        "blockOwnerDeletion": True,
    }


# ---------------------------------------------------------------------------------------------
# Times the controllers read


@dataclass
class Times:
    """When each pod (by uid) was created and became ready, in virtual seconds; what the
    API server's creationTimestamp and the Ready condition's lastTransitionTime say."""

    created: dict[str, float] = field(default_factory=dict)
    ready: dict[str, float] = field(default_factory=dict)

    def creation(self, obj: Any) -> float:
        return self.created.get(obj.uid, 0.0)

    def ready_since(self, pod: Pod) -> float:
        return self.ready.get(pod.uid, 0.0)


# ---------------------------------------------------------------------------------------------
# ActivePodsWithRanks


def _deletion_cost(pod: Pod) -> int:
    """helper.GetDeletionCostFromPodAnnotations: an int32, 0 when absent or invalid."""
    value = pod.annotations.get(POD_DELETION_COST_ANNOTATION)
    if value is None:
        return 0
    try:
        cost = int(value.strip()) if value.strip() == value else 0
    except ValueError:
        return 0
    return cost if -(2**31) <= cost < 2**31 else 0


def _max_restarts(pod: Pod) -> tuple[int, int]:
    """maxContainerRestarts: the most restarts of a regular container and of a sidecar."""
    status = pod.manifest.get("status", {}) if isinstance(pod.manifest, Mapping) else {}

    def most(statuses: Any) -> int:
        counts = [
            s.get("restartCount", 0)
            for s in statuses or []
            if isinstance(s, Mapping) and isinstance(s.get("restartCount", 0), int)
        ]
        return max(counts, default=0)

    return most(status.get("containerStatuses")), most(status.get("initContainerStatuses"))


def _log_rank_diff(t1: float, t2: float, now: float) -> int:
    """logarithmicRankDiff over durations in nanoseconds."""
    d1 = round((now - t1) * 1e9)
    d2 = round((now - t2) * 1e9)
    r1 = int(math.log2(d1)) if d1 > 0 else -1
    r2 = int(math.log2(d2)) if d2 > 0 else -1
    return r1 - r2


@dataclass
class RankedPod:
    pod: Pod
    rank: int


def ranked_less(times: Times, now: float) -> Callable[[RankedPod, RankedPod], bool]:
    """ActivePodsWithRanks.Less (LogarithmicScaleDown, GA and locked on; PodDeletionCost on):
    true when the first pod should be deleted before the second."""

    def less(a: RankedPod, b: RankedPod) -> bool:
        pi, pj = a.pod, b.pod
        # 1. Unassigned < assigned.
        if pi.node_name != pj.node_name and (not pi.node_name or not pj.node_name):
            return not pi.node_name
        # 2. Pending < Unknown < Running.
        oi, oj = _PHASE_ORDINAL.get(pod_phase(pi), 0), _PHASE_ORDINAL.get(pod_phase(pj), 0)
        if oi != oj:
            return oi < oj
        # 3. Not ready < ready.
        if is_pod_ready(pi) != is_pod_ready(pj):
            return not is_pod_ready(pi)
        # 4. Lower pod-deletion-cost < higher.
        ci, cj = _deletion_cost(pi), _deletion_cost(pj)
        if ci != cj:
            return ci < cj
        # 5. Doubled up < not doubled up.
        if a.rank != b.rank:
            return a.rank > b.rank
        # 6. Been ready for less time < more time, on a logarithmic scale.
        if is_pod_ready(pi) and is_pod_ready(pj):
            ti, tj = times.ready_since(pi), times.ready_since(pj)
            if ti != tj:
                diff = _log_rank_diff(ti, tj, now)
                if diff == 0:
                    return pi.uid < pj.uid
                return diff < 0
        # 7. More restarts < fewer (regular containers, then sidecars).
        ri, rj = _max_restarts(pi), _max_restarts(pj)
        if ri[0] != rj[0]:
            return ri[0] > rj[0]
        if ri[1] != rj[1]:
            return ri[1] > rj[1]
        # 8. Newer < older, on a logarithmic scale.
        ti, tj = times.creation(pi), times.creation(pj)
        if ti != tj:
            diff = _log_rank_diff(ti, tj, now)
            if diff == 0:
                return pi.uid < pj.uid
            return diff < 0
        return False

    return less


def pods_to_delete(
    filtered: Sequence[Pod], related: Iterable[Pod], diff: int, times: Times, now: float
) -> list[Pod]:
    """getPodsToDelete: the first ``diff`` of the pods ranked by ActivePodsWithRanks, the rank
    being how many active related pods share the pod's node; no sort when all go."""
    if diff >= len(filtered):
        return list(filtered[:diff])
    on_node: dict[str, int] = {}
    for pod in related:
        if is_pod_active(pod):
            on_node[pod.node_name] = on_node.get(pod.node_name, 0) + 1
    ranked = [RankedPod(pod, on_node.get(pod.node_name, 0)) for pod in filtered]
    # sort.Sort is pdqsort, as sort.Slice: the same comparisons and swaps.
    sort_slice(ranked, ranked_less(times, now))
    return [r.pod for r in ranked[:diff]]


# ---------------------------------------------------------------------------------------------
# ReplicaSets


def replica_sets_by_creation(replica_sets: Sequence[W], times: Times) -> list[W]:
    """ReplicaSetsByCreationTimestamp: oldest first, then by name."""
    return sorted(replica_sets, key=lambda rs: (times.creation(rs), rs.name))


def filter_active_replica_sets(replica_sets: Iterable[W | None]) -> list[W]:
    """FilterActiveReplicaSets: those with replicas above zero."""
    return [rs for rs in replica_sets if rs is not None and rs.replicas > 0]


# ---------------------------------------------------------------------------------------------
# intstr


class InvalidSpecError(ValueError):
    """A field the controller cannot use (its sync fails and changes nothing, as upstream's
    returns the error)."""


def scaled_value(value: int | str | None, total: int, round_up: bool, default: int | str) -> int:
    """GetScaledValueFromIntOrPercent over IntOrStringValueOrDefault: an int as it is, a
    percentage of ``total`` rounded up or down."""
    if value is None:
        value = default
    if isinstance(value, int):
        return value
    text = str(value)
    if not text.endswith("%") or not text[:-1].isdigit():
        raise InvalidSpecError(f"invalid value for IntOrString: invalid value {text!r}")
    scaled = int(text[:-1]) * total / 100
    return math.ceil(scaled) if round_up else math.floor(scaled)


def pod_event_matters(event_type: str, old: Any, new: Any) -> bool:
    """Whether a pod event can change what a controller decides: a pod added or deleted, bound,
    finished, being deleted, relabelled or re-owned (not a status condition or a nomination,
    which the scheduler writes on every failed attempt)."""
    if not isinstance(old, Pod) or not isinstance(new, Pod):
        return True
    return (
        old.node_name != new.node_name
        or old.phase != new.phase
        or old.deletion_timestamp != new.deletion_timestamp
        or old.labels != new.labels
        or old.owner_references != new.owner_references
    )


def is_binding(old: Any, new: Any) -> bool:
    """Whether a pod event is its binding and nothing else."""
    return (
        isinstance(old, Pod)
        and isinstance(new, Pod)
        and not old.node_name
        and bool(new.node_name)
        and old.phase == new.phase
        and old.deletion_timestamp == new.deletion_timestamp
        and old.labels == new.labels
        and old.owner_references == new.owner_references
    )
