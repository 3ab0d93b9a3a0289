"""The ReplicaSet and ReplicationController controllers: as many active pods as replicas.

Mirrors pkg/controller/replicaset/replica_set.go (``syncReplicaSet``, ``manageReplicas``:
create the missing pods, at most ``burstReplicas`` (500) a sync, or delete the surplus chosen by
``getPodsToDelete``) and pkg/controller/replication (the same controller over
ReplicationControllers). Pods that finish (Succeeded or Failed), are deleted (a preemption
victim, a pod of a deleted node collected by podgc) or are being deleted no longer count and
are replaced. Orphans the selector matches are adopted (``ClaimPods``).

Deliberately different: no expectations (every write is seen before the next sync), no
status written on the ReplicaSet (the Deployment controller counts the pods itself).
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from schedviz.controllers.controller_utils import (
    controller_ref,
    is_pod_active,
    pod_event_matters,
    pods_to_delete,
)
from schedviz.controllers.manager import ControllerContext, claim_orphans, orphan_owners
from schedviz.controllers.workloads import replica_pods
from schedviz.kube.objects import Pod, ReplicaSet, ReplicationController

BURST_REPLICAS = 500
_API_VERSIONS = {"ReplicaSet": "apps/v1", "ReplicationController": "v1"}


class ReplicaSetController:
    def __init__(self, ctx: ControllerContext, kind: str) -> None:
        self.ctx = ctx
        self.kind = kind
        self.name = kind.lower()
        self._adopt: set[str] = set()

    def keys_for(self, event_type: str, old: Any, new: Any) -> Iterable[str]:
        obj = new if new is not None else old
        if type(obj).__name__ == self.kind:
            self._adopt.add(obj.key)
            return [obj.key]
        if not isinstance(obj, Pod) or not pod_event_matters(event_type, old, new):
            return []
        keys = []
        for pod in (old, new):
            ref = controller_ref(pod) if pod is not None else None
            if ref is not None and ref.kind == self.kind:
                keys.append(f"{pod.namespace}/{ref.name}")
        if new is not None and event_type != "DELETED":
            for key in orphan_owners(self.ctx, self.kind, new):
                self._adopt.add(key)
                keys.append(key)
        return keys

    def sync(self, key: str) -> None:
        rs = self.ctx.get(self.kind, key)
        if not isinstance(rs, ReplicaSet | ReplicationController):
            return
        if key in self._adopt:
            self._adopt.discard(key)
            claim_orphans(self.ctx, rs, _API_VERSIONS[self.kind])
        self.manage_replicas(rs)

    def manage_replicas(self, rs: ReplicaSet | ReplicationController) -> None:
        ctx = self.ctx
        diff = ctx.active_count(rs.uid) - rs.replicas
        if diff == 0:
            return
        active = [pod for pod in ctx.owned_pods(rs.uid) if is_pod_active(pod)]
        if diff < 0:
            for pod in replica_pods(rs, min(-diff, BURST_REPLICAS), ctx.names):
                ctx.create(pod)
        elif diff > 0:
            diff = min(diff, BURST_REPLICAS)
            related = self._related_pods(rs)
            for pod in pods_to_delete(active, related, diff, ctx.times, ctx.now()):
                ctx.delete("Pod", pod.key)

    def _related_pods(self, rs: ReplicaSet | ReplicationController) -> list[Pod]:
        """getIndirectlyRelatedPods: the pods of every ReplicaSet with the same controller
        (a Deployment's), or the set's own."""
        owner = controller_ref(rs)
        if owner is None:
            return self.ctx.owned_pods(rs.uid)
        pods: list[Pod] = []
        for sibling in self.ctx.objects(self.kind, rs.namespace):
            ref = controller_ref(sibling)
            if ref is not None and ref.uid == owner.uid:
                pods.extend(self.ctx.owned_pods(sibling.uid))
        return pods
