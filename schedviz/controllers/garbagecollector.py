"""The garbage collector: what a deleted workload owned goes with it.

Mirrors pkg/controller/garbagecollector (garbagecollector.go ``attemptToDeleteItem``): when an
owner is deleted with the default background propagation, each dependent whose
ownerReferences all name owners that no longer exist (by uid) is deleted in turn, so a
Deployment takes its ReplicaSets and they their pods.

Deliberately different: dependents are found among ReplicaSets and pods (what the workload
controllers create), not every kind; foreground and orphan propagation are not modelled.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from schedviz.controllers.manager import ControllerContext
from schedviz.kube.objects import WORKLOAD_KINDS, OwnerReference

_DEPENDENT_KINDS = ("ReplicaSet", "Pod")


class GarbageCollector:
    name = "garbagecollector"

    def __init__(self, ctx: ControllerContext) -> None:
        self.ctx = ctx

    def keys_for(self, event_type: str, old: Any, new: Any) -> Iterable[str]:
        if event_type == "DELETED" and isinstance(old, WORKLOAD_KINDS):
            return [f"{old.namespace}/{old.uid}"]
        return []

    def sync(self, key: str) -> None:
        namespace, _, uid = key.partition("/")
        for kind in _DEPENDENT_KINDS:
            for obj in self.ctx.objects(kind, namespace):
                refs = getattr(obj, "owner_references", ())
                if any(ref.uid == uid for ref in refs) and not any(
                    self._exists(namespace, ref) for ref in refs
                ):
                    self.ctx.delete(kind, obj.key)

    def _exists(self, namespace: str, ref: OwnerReference) -> bool:
        owner = self.ctx.get(ref.kind, f"{namespace}/{ref.name}")
        return owner is not None and getattr(owner, "uid", None) == ref.uid
