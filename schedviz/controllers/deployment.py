"""The Deployment controller: ReplicaSets by template, rollouts, scaling, history.

Mirrors pkg/controller/deployment: deployment_controller.go (``syncDeployment``: paused or a
scaling event -> ``sync``, else the strategy's rollout), sync.go (``getNewReplicaSet``: the
ReplicaSet ``<deployment>-<pod-template-hash>`` with the revision, desired-replicas and
max-replicas annotations; ``isScalingEvent``; ``scale``: the one active ReplicaSet to the full
count, or proportionally over all of them during a rollout; ``cleanupDeployment`` for
``revisionHistoryLimit``), rolling.go (``rolloutRolling``: ``reconcileNewReplicaSet`` up to
maxSurge, ``reconcileOldReplicaSets`` down to maxUnavailable, unhealthy replicas first),
recreate.go (``rolloutRecreate``: old ReplicaSets to zero, then the new one once no old pod
runs) and util/deployment_util.go (``NewRSNewReplicas``, ``ResolveFenceposts``,
``MaxUnavailable``, ``MaxSurge``, ``GetProportion``, ``FindActiveOrLatest``, ``IsSaturated``,
``EqualIgnoreHash``).

A ReplicaSet's available replicas are its bound active pods (``controller_utils``: bound is
ready here), counted when the Deployment syncs. Deliberately different: minReadySeconds,
progressDeadlineSeconds, rollbacks by annotation and the Deployment's status are not modelled;
the pod-template-hash is schedviz's own (``workloads.pod_template_hash``).
"""

from __future__ import annotations

import copy
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from schedviz.controllers.controller_utils import (
    controller_ref,
    filter_active_replica_sets,
    is_controlled_by,
    owner_reference,
    pod_event_matters,
    replica_sets_by_creation,
    scaled_value,
    selector_matches,
)
from schedviz.controllers.manager import ControllerContext
from schedviz.controllers.workloads import (
    DESIRED_REPLICAS_ANNOTATION,
    POD_TEMPLATE_HASH_LABEL,
    replica_set_for,
)
from schedviz.kube.decode import decode_object
from schedviz.kube.objects import Deployment, Pod, ReplicaSet

MAX_REPLICAS_ANNOTATION = "deployment.kubernetes.io/max-replicas"
REVISION_ANNOTATION = "deployment.kubernetes.io/revision"
ROLLING_UPDATE = "RollingUpdate"
RECREATE = "Recreate"
DEFAULT_REVISION_HISTORY_LIMIT = 10


# ---------------------------------------------------------------------------------------------
# The Deployment's spec as the controller reads it (apps/v1 defaults)


def _spec(d: Deployment) -> Mapping[str, Any]:
    spec = d.manifest.get("spec")
    return spec if isinstance(spec, Mapping) else {}


def strategy_type(d: Deployment) -> str:
    strategy = _spec(d).get("strategy") or {}
    return str(strategy.get("type") or ROLLING_UPDATE)


def _rolling(d: Deployment) -> Mapping[str, Any]:
    strategy = _spec(d).get("strategy") or {}
    return strategy.get("rollingUpdate") or {}


def resolve_fenceposts(d: Deployment) -> tuple[int, int]:
    """ResolveFenceposts: maxSurge rounded up, maxUnavailable down (both 25% by default); 1
    unavailable when both come to zero."""
    rolling = _rolling(d)
    surge = scaled_value(rolling.get("maxSurge"), d.replicas, True, "25%")
    unavailable = scaled_value(rolling.get("maxUnavailable"), d.replicas, False, "25%")
    if surge == 0 and unavailable == 0:
        unavailable = 1
    return surge, unavailable


def max_unavailable(d: Deployment) -> int:
    if strategy_type(d) != ROLLING_UPDATE or d.replicas == 0:
        return 0
    return min(resolve_fenceposts(d)[1], d.replicas)


def max_surge(d: Deployment) -> int:
    if strategy_type(d) != ROLLING_UPDATE:
        return 0
    return resolve_fenceposts(d)[0]


def new_rs_new_replicas(d: Deployment, all_rss: Sequence[ReplicaSet], new_rs_replicas: int) -> int:
    """NewRSNewReplicas: the new ReplicaSet's size, as far as maxSurge lets it grow."""
    if strategy_type(d) != ROLLING_UPDATE:
        return d.replicas
    surge = scaled_value(_rolling(d).get("maxSurge"), d.replicas, True, "25%")
    current = sum(rs.replicas for rs in all_rss)
    max_total = d.replicas + surge
    if current >= max_total:
        return new_rs_replicas
    scale_up = min(max_total - current, d.replicas - new_rs_replicas)
    return new_rs_replicas + scale_up


def _revision(rs: ReplicaSet) -> int:
    try:
        return int(rs.annotations.get(REVISION_ANNOTATION, "0"))
    except ValueError:
        return 0


def _labels_without_hash(template: Mapping[str, Any]) -> dict[str, Any]:
    labels = dict((template.get("metadata") or {}).get("labels") or {})
    labels.pop(POD_TEMPLATE_HASH_LABEL, None)
    return labels


def _except(mapping: Mapping[str, Any], key: str) -> dict[str, Any]:
    return {k: v for k, v in mapping.items() if k != key}


def equal_ignore_hash(a: Mapping[str, Any], b: Mapping[str, Any]) -> bool:
    """EqualIgnoreHash: the templates equal but for the pod-template-hash label."""
    meta_a, meta_b = a.get("metadata") or {}, b.get("metadata") or {}
    return (
        _labels_without_hash(a) == _labels_without_hash(b)
        and _except(meta_a, "labels") == _except(meta_b, "labels")
        and _except(a, "metadata") == _except(b, "metadata")
    )


class DeploymentController:
    name = "deployment"

    def __init__(self, ctx: ControllerContext) -> None:
        self.ctx = ctx
        self._collisions: dict[str, int] = {}

    # ------------------------------------------------------------------ events

    def keys_for(self, event_type: str, old: Any, new: Any) -> Iterable[str]:
        obj = new if new is not None else old
        if isinstance(obj, Deployment):
            return [obj.key]
        if isinstance(obj, ReplicaSet):
            ref = controller_ref(obj)
            if ref is not None:
                return [f"{obj.namespace}/{ref.name}"] if ref.kind == "Deployment" else []
            return [
                d.key
                for d in self.ctx.objects("Deployment", obj.namespace)
                if selector_matches(d.selector, obj.labels)
            ]
        if isinstance(obj, Pod) and pod_event_matters(event_type, old, new):
            ref = controller_ref(obj)
            if ref is None or ref.kind != "ReplicaSet":
                return []
            rs = self.ctx.get("ReplicaSet", f"{obj.namespace}/{ref.name}")
            owner = controller_ref(rs) if rs is not None else None
            if owner is not None and owner.kind == "Deployment":
                return [f"{obj.namespace}/{owner.name}"]
        return []

    # ------------------------------------------------------------------ counts

    def available(self, rs: ReplicaSet | None) -> int:
        """rs.status.availableReplicas."""
        return 0 if rs is None else self.ctx.ready_count(rs.uid)

    def status_replicas(self, rs: ReplicaSet | None) -> int:
        """rs.status.replicas."""
        return 0 if rs is None else self.ctx.active_count(rs.uid)

    # ------------------------------------------------------------------ sync

    def sync(self, key: str) -> None:
        d = self.ctx.get("Deployment", key)
        if not isinstance(d, Deployment):
            return
        rs_list = self._replica_sets(d)
        if bool(_spec(d).get("paused")) or self._is_scaling_event(d, rs_list):
            self._sync(d, rs_list)
        elif strategy_type(d) == RECREATE:
            self._rollout_recreate(d, rs_list)
        else:
            self._rollout_rolling(d, rs_list)

    def _replica_sets(self, d: Deployment) -> list[ReplicaSet]:
        """getReplicaSetsForDeployment: its own, and orphans its selector matches (adopted)."""
        result = []
        for rs in self.ctx.objects("ReplicaSet", d.namespace):
            ref = controller_ref(rs)
            if ref is None and selector_matches(d.selector, rs.labels):
                rs = self._adopt(d, rs)
                ref = controller_ref(rs)
            if ref is not None and ref.uid == d.uid:
                result.append(rs)
        return result

    def _adopt(self, d: Deployment, rs: ReplicaSet) -> ReplicaSet:
        manifest = copy.deepcopy(rs.manifest)
        metadata = manifest.setdefault("metadata", {})
        metadata["ownerReferences"] = [
            *metadata.get("ownerReferences", []),
            owner_reference(d, "apps/v1"),
        ]
        adopted = decode_object(manifest)
        assert isinstance(adopted, ReplicaSet)
        self.ctx.update(adopted)
        return adopted

    def _new_and_old(
        self, d: Deployment, rs_list: Sequence[ReplicaSet], create: bool
    ) -> tuple[ReplicaSet | None, list[ReplicaSet]]:
        """getAllReplicaSetsAndSyncRevision."""
        times = self.ctx.times
        new_rs: ReplicaSet | None = next(
            (
                rs
                for rs in replica_sets_by_creation(rs_list, times)
                if equal_ignore_hash(rs.template, d.template)
            ),
            None,
        )
        old = [rs for rs in rs_list if new_rs is None or rs.uid != new_rs.uid]
        revision = max((_revision(rs) for rs in old), default=0) + 1
        if new_rs is not None:
            if _revision(new_rs) < revision:
                # SetNewReplicaSetAnnotations: the revision only, not the sizes.
                new_rs = self._write(new_rs, new_rs.replicas, None, revision=revision)
            return new_rs, old
        if not create:
            return None, old
        replicas = new_rs_new_replicas(d, old, 0)
        while True:
            fresh = replica_set_for(d, self._collisions.get(d.key))
            taken = self.ctx.get("ReplicaSet", fresh.key)
            if taken is None:
                break
            if is_controlled_by(taken, d) and equal_ignore_hash(taken.template, d.template):
                return taken, old
            self._collisions[d.key] = self._collisions.get(d.key, 0) + 1
        created = self._with(fresh, replicas, d, revision)
        self.ctx.create(created)
        return created, old

    def _with(
        self, rs: ReplicaSet, replicas: int, d: Deployment | None, revision: int | None = None
    ) -> ReplicaSet:
        """The ReplicaSet at ``replicas``, with the Deployment's size annotations
        (SetReplicasAnnotations) and the revision when given."""
        manifest = copy.deepcopy(rs.manifest)
        manifest.setdefault("spec", {})["replicas"] = replicas
        annotations = manifest.setdefault("metadata", {}).setdefault("annotations", {})
        if d is not None:
            annotations[DESIRED_REPLICAS_ANNOTATION] = str(d.replicas)
            annotations[MAX_REPLICAS_ANNOTATION] = str(d.replicas + max_surge(d))
        if revision is not None:
            annotations[REVISION_ANNOTATION] = str(revision)
        updated = decode_object(manifest)
        assert isinstance(updated, ReplicaSet)
        return updated

    def _write(
        self, rs: ReplicaSet, replicas: int, d: Deployment | None, revision: int | None = None
    ) -> ReplicaSet:
        updated = self._with(rs, replicas, d, revision)
        if updated.replicas != rs.replicas or updated.annotations != rs.annotations:
            self.ctx.update(updated)
            return updated
        return rs

    def _scale(self, rs: ReplicaSet, replicas: int, d: Deployment) -> bool:
        """scaleReplicaSetAndRecordEvent: whether the size changed."""
        if rs.replicas == replicas:
            return False
        self._write(rs, replicas, d)
        return True

    # ------------------------------------------------------------------ sync.go

    def _is_scaling_event(self, d: Deployment, rs_list: Sequence[ReplicaSet]) -> bool:
        new_rs, old = self._new_and_old(d, rs_list, False)
        for rs in filter_active_replica_sets([*old, new_rs]):
            desired = rs.annotations.get(DESIRED_REPLICAS_ANNOTATION)
            if desired is not None and desired.isdigit() and int(desired) != d.replicas:
                return True
        return False

    def _sync(self, d: Deployment, rs_list: Sequence[ReplicaSet]) -> None:
        new_rs, old = self._new_and_old(d, rs_list, False)
        self._scale_all(d, new_rs, old)
        if bool(_spec(d).get("paused")):
            self._cleanup(d, old)

    def _find_active_or_latest(
        self, new_rs: ReplicaSet | None, old: Sequence[ReplicaSet]
    ) -> ReplicaSet | None:
        if new_rs is None and not old:
            return None
        newest_first = list(reversed(replica_sets_by_creation(old, self.ctx.times)))
        active = filter_active_replica_sets([*newest_first, new_rs])
        if not active:
            return new_rs if new_rs is not None else newest_first[0]
        return active[0] if len(active) == 1 else None

    def _is_saturated(self, d: Deployment, rs: ReplicaSet | None) -> bool:
        if rs is None:
            return False
        desired = rs.annotations.get(DESIRED_REPLICAS_ANNOTATION, "")
        return (
            desired.isdigit()
            and rs.replicas == d.replicas
            and int(desired) == d.replicas
            and self.available(rs) == d.replicas
        )

    def _scale_all(self, d: Deployment, new_rs: ReplicaSet | None, old: list[ReplicaSet]) -> None:
        """scale: one active ReplicaSet takes the whole count; else proportional scaling."""
        target = self._find_active_or_latest(new_rs, old)
        if target is not None:
            self._scale(target, d.replicas, d)
            return
        if self._is_saturated(d, new_rs):
            for rs in filter_active_replica_sets(old):
                self._scale(rs, 0, d)
            return
        if strategy_type(d) != ROLLING_UPDATE:
            return
        all_rss: list[ReplicaSet] = filter_active_replica_sets([*old, new_rs])
        allowed = d.replicas + max_surge(d) if d.replicas > 0 else 0
        to_add = allowed - sum(rs.replicas for rs in all_rss)
        times = self.ctx.times
        if to_add > 0:
            # ReplicaSetsBySizeNewer: larger first, then newer first.
            all_rss.sort(key=lambda rs: (-rs.replicas, -times.creation(rs), rs.name))
        elif to_add < 0:
            # ReplicaSetsBySizeOlder: larger first, then older first.
            all_rss.sort(key=lambda rs: (-rs.replicas, times.creation(rs), rs.name))
        added = 0
        sizes: dict[str, int] = {}
        for rs in all_rss:
            if to_add != 0:
                proportion = self._proportion(rs, d, to_add, added)
                sizes[rs.name] = rs.replicas + proportion
                added += proportion
            else:
                sizes[rs.name] = rs.replicas
        for i, rs in enumerate(all_rss):
            if i == 0 and to_add != 0:
                sizes[rs.name] = max(0, sizes[rs.name] + to_add - added)
            self._scale(rs, sizes[rs.name], d)

    def _proportion(self, rs: ReplicaSet, d: Deployment, to_add: int, added: int) -> int:
        """GetProportion over getReplicaSetFraction."""
        if rs.replicas == 0 or to_add == 0 or to_add == added:
            return 0
        if d.replicas == 0:
            fraction = -rs.replicas
        else:
            before = rs.annotations.get(MAX_REPLICAS_ANNOTATION, "")
            max_before = int(before) if before.isdigit() else 0
            if max_before == 0:
                max_before = sum(self.status_replicas(r) for r in self._replica_sets(d))
            if max_before == 0:
                return 0
            size = rs.replicas * (d.replicas + max_surge(d)) / max_before
            fraction = _round_to_int32(size) - rs.replicas
        allowed = to_add - added
        return min(fraction, allowed) if to_add > 0 else max(fraction, allowed)

    def _cleanup(self, d: Deployment, old: Sequence[ReplicaSet]) -> None:
        """cleanupDeployment: old ReplicaSets beyond revisionHistoryLimit that hold no pods,
        lowest revision first."""
        limit = _spec(d).get("revisionHistoryLimit", DEFAULT_REVISION_HISTORY_LIMIT)
        if not isinstance(limit, int):
            return
        diff = len(old) - limit
        if diff <= 0:
            return
        times = self.ctx.times
        ordered = sorted(old, key=lambda rs: (_revision(rs), times.creation(rs), rs.name))
        for rs in ordered[:diff]:
            if self.status_replicas(rs) != 0 or rs.replicas != 0:
                continue
            self.ctx.delete("ReplicaSet", rs.key)

    def _complete(
        self, d: Deployment, new_rs: ReplicaSet | None, all_rss: Sequence[ReplicaSet]
    ) -> bool:
        """DeploymentComplete: every replica updated, no more than asked, all available."""
        return (
            self.status_replicas(new_rs) == d.replicas
            and sum(self.status_replicas(rs) for rs in all_rss) == d.replicas
            and sum(self.available(rs) for rs in all_rss) == d.replicas
        )

    # ------------------------------------------------------------------ rolling.go

    def _rollout_rolling(self, d: Deployment, rs_list: Sequence[ReplicaSet]) -> None:
        new_rs, old = self._new_and_old(d, rs_list, True)
        assert new_rs is not None
        all_rss = [*old, new_rs]
        if self._reconcile_new(d, all_rss, new_rs):
            return
        active_old = filter_active_replica_sets(old)
        if self._reconcile_old(d, all_rss, active_old, new_rs):
            return
        if self._complete(d, new_rs, all_rss):
            self._cleanup(d, old)

    def _reconcile_new(
        self, d: Deployment, all_rss: Sequence[ReplicaSet], new_rs: ReplicaSet
    ) -> bool:
        if new_rs.replicas == d.replicas:
            return False
        if new_rs.replicas > d.replicas:
            return self._scale(new_rs, d.replicas, d)
        return self._scale(new_rs, new_rs_new_replicas(d, all_rss, new_rs.replicas), d)

    def _reconcile_old(
        self,
        d: Deployment,
        all_rss: Sequence[ReplicaSet],
        old: list[ReplicaSet],
        new_rs: ReplicaSet,
    ) -> bool:
        old_count = sum(rs.replicas for rs in old)
        if old_count == 0:
            return False
        all_count = sum(rs.replicas for rs in all_rss)
        min_available = d.replicas - max_unavailable(d)
        new_unavailable = new_rs.replicas - self.available(new_rs)
        max_scaled_down = all_count - min_available - new_unavailable
        if max_scaled_down <= 0:
            return False
        old, cleaned = self._cleanup_unhealthy(d, old, max_scaled_down)
        scaled = self._scale_down_old(d, [*old, new_rs], old)
        return cleaned + scaled > 0

    def _cleanup_unhealthy(
        self, d: Deployment, old: list[ReplicaSet], max_cleanup: int
    ) -> tuple[list[ReplicaSet], int]:
        old = replica_sets_by_creation(old, self.ctx.times)
        total = 0
        for i, rs in enumerate(old):
            if total >= max_cleanup:
                break
            available = self.available(rs)
            if rs.replicas == 0 or rs.replicas == available:
                continue
            count = min(max_cleanup - total, rs.replicas - available)
            old[i] = self._write(rs, rs.replicas - count, d)
            total += count
        return old, total

    def _scale_down_old(
        self, d: Deployment, all_rss: Sequence[ReplicaSet], old: list[ReplicaSet]
    ) -> int:
        min_available = d.replicas - max_unavailable(d)
        available = sum(self.available(rs) for rs in all_rss)
        if available <= min_available:
            return 0
        total, wanted = 0, available - min_available
        for rs in replica_sets_by_creation(old, self.ctx.times):
            if total >= wanted:
                break
            if rs.replicas == 0:
                continue
            count = min(rs.replicas, wanted - total)
            self._write(rs, rs.replicas - count, d)
            total += count
        return total

    # ------------------------------------------------------------------ recreate.go

    def _rollout_recreate(self, d: Deployment, rs_list: Sequence[ReplicaSet]) -> None:
        new_rs, old = self._new_and_old(d, rs_list, False)
        scaled_down = False
        for rs in filter_active_replica_sets(old):
            scaled_down |= self._scale(rs, 0, d)
        if scaled_down:
            return
        if self._old_pods_running(new_rs, old):
            return
        if new_rs is None:
            new_rs, old = self._new_and_old(d, rs_list, True)
            assert new_rs is not None
        self._scale(new_rs, d.replicas, d)
        if self._complete(d, new_rs, [*old, new_rs]):
            self._cleanup(d, old)

    def _old_pods_running(self, new_rs: ReplicaSet | None, old: Sequence[ReplicaSet]) -> bool:
        """oldPodsRunning: an old ReplicaSet still has a pod that has not finished."""
        return any(self.status_replicas(rs) > 0 for rs in old)


def _round_to_int32(value: float) -> int:
    """integer.RoundToInt32: math.Round, halves away from zero."""
    return int(value + 0.5) if value >= 0 else -int(-value + 0.5)
