"""The StatefulSet controller: one pod per ordinal, in order, with its claims.

Mirrors pkg/controller/statefulset: stateful_set_control.go (``updateStatefulSet``: each
ordinal of ``[start, start + replicas)`` gets its pod; a Failed or Succeeded pod is deleted and
made again; with ``OrderedReady`` (monotonic) the controller waits for each pod to be running
and ready before the next, and scales down one pod at a time from the highest ordinal, only
when every other pod is healthy; ``Parallel`` creates and deletes them all at once),
stateful_set_utils.go (``newVersionedStatefulSetPod``: identity labels, hostname, subdomain,
``controller-revision-hash``; ``getPersistentVolumeClaims``: a claim per template, created
when missing and never deleted, the Retain policy) and the pods' ``ClaimPods`` adoption.

A template change rolls out as ``RollingUpdate`` does (the default; ``partition`` kept): from
the highest ordinal down, one pod at a time once the ones above are healthy, deleted and made
again at the new revision; ``OnDelete`` leaves the pods. A pod is running and ready once bound
(``controller_utils``). Deliberately different: no ControllerRevision objects, so a pod made
again during a rollout below the partition (or under OnDelete) gets the set's current template,
not the older revision; no minReadySeconds, maxUnavailable, persistentVolumeClaimRetentionPolicy
other than Retain.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from schedviz.controllers.controller_utils import (
    controller_ref,
    is_binding,
    is_pod_active,
    is_pod_ready,
    is_pod_terminal,
    pod_event_matters,
)
from schedviz.controllers.manager import ControllerContext, claim_orphans, orphan_owners
from schedviz.controllers.workloads import (
    CONTROLLER_REVISION_HASH_LABEL,
    stateful_set_claims,
    stateful_set_pod,
    stateful_set_revision,
)
from schedviz.kube.objects import Pod, StatefulSet

ORDERED_READY = "OrderedReady"
ROLLING_UPDATE = "RollingUpdate"


def ordinal_start(sts: StatefulSet) -> int:
    """spec.ordinals.start (0 when unset)."""
    ordinals = sts.manifest.get("spec", {}).get("ordinals") or {}
    start = ordinals.get("start", 0) if isinstance(ordinals, dict) else 0
    return start if isinstance(start, int) and start >= 0 else 0


def pod_ordinal(sts: StatefulSet, pod: Pod) -> int | None:
    """getParentNameAndOrdinal: the ordinal a pod's name gives under this set, or None."""
    prefix = f"{sts.name}-"
    suffix = pod.name[len(prefix) :] if pod.name.startswith(prefix) else ""
    return int(suffix) if suffix.isdigit() else None


class StatefulSetController:
    name = "statefulset"

    def __init__(self, ctx: ControllerContext) -> None:
        self.ctx = ctx
        self._adopt: set[str] = set()
        self._rolling: set[str] = set()  # sets whose rolling update is under way
        self._given: dict[str, str] = {}  # each set's revision when first seen

    def keys_for(self, event_type: str, old: Any, new: Any) -> Iterable[str]:
        obj = new if new is not None else old
        if isinstance(obj, StatefulSet):
            self._adopt.add(obj.key)
            return [obj.key]
        if not isinstance(obj, Pod) or not pod_event_matters(event_type, old, new):
            return []
        ref = controller_ref(obj)
        if ref is not None:
            if ref.kind != "StatefulSet":
                return []
            key = f"{obj.namespace}/{ref.name}"
            sts = self.ctx.get("StatefulSet", key)
            parallel = isinstance(sts, StatefulSet) and sts.pod_management_policy != ORDERED_READY
            if parallel and key not in self._rolling and is_binding(old, new):
                return []  # only OrderedReady and a rollout wait for a pod to run
            return [key]
        if event_type == "DELETED":
            return []
        keys = orphan_owners(self.ctx, "StatefulSet", obj)
        self._adopt.update(keys)
        return keys

    def sync(self, key: str) -> None:
        sts = self.ctx.get("StatefulSet", key)
        if not isinstance(sts, StatefulSet):
            return
        if key in self._adopt:
            self._adopt.discard(key)
            claim_orphans(self.ctx, sts, "apps/v1", active_only=False)
        self.update(sts)

    def update(self, sts: StatefulSet) -> None:
        """updateStatefulSet's pass over the replicas, then over the condemned."""
        ctx = self.ctx
        monotonic = sts.pod_management_policy == ORDERED_READY
        start = ordinal_start(sts)
        wanted = range(start, start + sts.replicas)
        replicas: dict[int, Pod] = {}
        condemned: list[tuple[int, Pod]] = []
        for owned in ctx.owned_pods(sts.uid):
            ordinal = pod_ordinal(sts, owned)
            if ordinal is None:
                continue
            if ordinal in wanted:
                replicas[ordinal] = owned
            else:
                condemned.append((ordinal, owned))
        for ordinal in wanted:
            pod: Pod | None = replicas.get(ordinal)
            if pod is not None and is_pod_terminal(pod):
                # A failed or succeeded pod is deleted and made again on the next sync.
                ctx.delete("Pod", pod.key)
                if monotonic:
                    return
                pod = None
            if pod is None:
                for claim in stateful_set_claims(sts, ordinal):
                    if ctx.get("PersistentVolumeClaim", claim.key) is None:
                        ctx.create(claim)
                ctx.create(stateful_set_pod(sts, ordinal))
                if monotonic:
                    return
                continue
            if monotonic and (not is_pod_active(pod) or not is_pod_ready(pod)):
                return  # wait for it to run and be ready, or to be gone
        condemned.sort(key=lambda entry: entry[0])
        in_order = [*(replicas[o] for o in sorted(replicas)), *(p for _, p in condemned)]
        first_unhealthy = next((p for p in in_order if not _healthy(p)), None)
        for _, pod in reversed(condemned):
            if pod.deletion_timestamp is not None:
                if monotonic:
                    return
                continue
            if monotonic and not _healthy(pod) and pod is not first_unhealthy:
                return  # scale down only when every other pod is healthy
            ctx.delete("Pod", pod.key)
            if monotonic:
                return
        self._rolling_update(sts, replicas)

    def _rolling_update(self, sts: StatefulSet, replicas: dict[int, Pod]) -> None:
        """RollingUpdate (the default strategy): from the highest ordinal down to the
        partition, the first pod not at the set's current revision is deleted (and made again
        at it by the next sync), one at a time, each only once the ones above are healthy."""
        strategy = sts.manifest.get("spec", {}).get("updateStrategy") or {}
        if strategy.get("type", ROLLING_UPDATE) != ROLLING_UPDATE:
            return
        partition = (strategy.get("rollingUpdate") or {}).get("partition") or 0
        revision = stateful_set_revision(sts)
        current = {revision}
        if self._given.setdefault(sts.uid, revision) == revision:
            # A set as given (a dump) keeps its template until changed here: its pods carry
            # the real controller's revision names, its status says which is the update one.
            given = sts.manifest.get("status", {}).get("updateRevision")
            if not isinstance(given, str) or not given:
                return
            current.add(given)
        start = ordinal_start(sts)
        self._rolling.add(sts.key)
        for ordinal in range(start + sts.replicas - 1, start + partition - 1, -1):
            pod = replicas.get(ordinal)
            if pod is None:
                return  # made in this sync: not healthy yet
            if pod.labels.get(CONTROLLER_REVISION_HASH_LABEL) not in current and (
                pod.deletion_timestamp is None
            ):
                self.ctx.delete("Pod", pod.key)
                return
            if not _healthy(pod):
                return
        self._rolling.discard(sts.key)


def _healthy(pod: Pod) -> bool:
    """isHealthy: running, ready and not being deleted."""
    return is_pod_active(pod) and is_pod_ready(pod)
