"""What a simulation's controllers and admission did to the cluster, as its output says it.

The trace tells what the scheduler did (bindings, nominations, preemption's deletions). Around
it, the workload controllers, admission and the PV controller (and VolumeBinding's PreBind,
which writes claims and volumes) change the cluster too; ``ChangeLog`` watches the store for
those changes so that ``manage.py simulate`` can print them (docs/trace-format.md, "Controllers
and admission"): a reader, such as the upstream oracle, can then rebuild the state every cycle
saw without reaching into the engine.

- ``objects``: what the cluster held beyond the input when the run began: the objects the
  workload controllers created at load (a Deployment's ReplicaSet, the pods of every workload,
  a StatefulSet's claims), with the names schedviz generated, admitted;
- ``changes``: every other change, in order, each tagged ``after``: the number of the last
  scheduling cycle that had started when it happened (0: before the first cycle). First the
  input's pods that admission's mutating plugins changed (``MODIFIED``, after 0), then what
  happened once the scheduler watched the store: every write to a PersistentVolume or
  PersistentVolumeClaim (the PV controller's bindings, phases and provisioned volumes,
  PreBind's claimRefs and selected nodes), every pod created (a StatefulSet's next ordinal),
  and any other object a controller created, changed or deleted, pods included (a pod that
  finished its run time, a scale-down's or PodGC's deletion). The scheduler's own pod updates
  and deletions (bindings, nominations, preemption's victims) are in the trace.

Each object is its manifest with the fields the engine keeps beside it written back (a
volume's ``claimRef`` and phase, a claim's ``volumeName``, phase and annotations, a pod's
``nodeName``, and the ``priority`` and ``preemptionPolicy`` Priority admission resolved).
"""

from __future__ import annotations

import copy
from collections.abc import Callable, Iterable
from typing import Any

from schedviz.kube.objects import KubeObject, PersistentVolume, PersistentVolumeClaim, Pod
from schedviz.scheduler.store import ADDED, DELETED, MODIFIED, ClusterStore


def _identity(obj: Any) -> tuple[str, str]:
    return type(obj).__name__, str(obj.key)


def rendered(obj: Any) -> dict[str, Any]:
    """The object's manifest as the API server would hold it now."""
    kind = type(obj).__name__
    manifest: dict[str, Any] = copy.deepcopy(getattr(obj, "manifest", None) or {})
    manifest.setdefault("kind", kind)
    metadata = manifest.setdefault("metadata", {})
    metadata.setdefault("name", obj.name)
    if isinstance(obj, PersistentVolume):
        spec = manifest.setdefault("spec", {})
        if obj.claim_ref:
            namespace, _, name = obj.claim_ref.partition("/")
            ref = dict(spec.get("claimRef") or {})
            if (ref.get("namespace"), ref.get("name")) != (namespace, name):
                ref = {}
            ref.update(kind="PersistentVolumeClaim", namespace=namespace, name=name)
            spec["claimRef"] = ref
        else:
            spec.pop("claimRef", None)
        manifest.setdefault("status", {})["phase"] = obj.phase
    elif isinstance(obj, PersistentVolumeClaim):
        metadata.setdefault("namespace", obj.namespace)
        spec = manifest.setdefault("spec", {})
        if obj.volume_name:
            spec["volumeName"] = obj.volume_name
        else:
            spec.pop("volumeName", None)
        if obj.annotations:
            metadata["annotations"] = dict(obj.annotations)
        else:
            metadata.pop("annotations", None)
        manifest.setdefault("status", {})["phase"] = obj.phase
    elif isinstance(obj, Pod):
        metadata.setdefault("namespace", obj.namespace)
        spec = manifest.setdefault("spec", {})
        if obj.node_name:
            spec["nodeName"] = obj.node_name
        if obj.priority is not None:
            spec["priority"] = obj.priority
        if obj.preemption_policy is not None:
            spec["preemptionPolicy"] = obj.preemption_policy
    return manifest


class ChangeLog:
    """``objects`` and ``changes`` as the module says: ``given`` is the input, ``loaded`` what
    the store was made of; the log watches ``store`` from now on (make it before the
    controllers start). ``cycle`` gives the number of the last cycle started;
    ``controllers_acting`` whether a write is the controllers' (a pod's update or deletion is
    listed only then). The objects are kept as they are (the engine replaces objects, it never
    changes one) and rendered only when ``document`` is asked for."""

    def __init__(
        self,
        given: Iterable[KubeObject],
        loaded: Iterable[KubeObject],
        store: ClusterStore,
        cycle: Callable[[], int],
        controllers_acting: Callable[[], bool] = lambda: False,
    ) -> None:
        self._cycle = cycle
        self._controllers_acting = controllers_acting
        inputs = {_identity(o): o for o in given}
        self._created: list[Any] = []
        self._changes: list[tuple[int, str, Any]] = []
        for obj in loaded:
            original = inputs.get(_identity(obj))
            if original is None:
                self._created.append(obj)
            elif isinstance(obj, Pod) and obj.manifest != getattr(original, "manifest", None):
                self._changes.append((0, MODIFIED, obj))
        store.watch(self._on_event)

    def _on_event(self, event_type: str, old: Any, new: Any) -> None:
        obj = new if new is not None else old
        if isinstance(obj, Pod) and event_type != ADDED and not self._controllers_acting():
            return  # the scheduler's bindings, status updates and deletions: in the trace
        if event_type in (ADDED, MODIFIED, DELETED):
            self._changes.append((self._cycle(), event_type, obj))

    def document(self) -> dict[str, list[dict[str, Any]]]:
        changes = []
        for after, event_type, obj in self._changes:
            kind, key = _identity(obj)
            changes.append(
                {
                    "after": after,
                    "type": event_type,
                    "kind": kind,
                    "key": key,
                    "object": rendered(obj),
                }
            )
        return {"objects": [rendered(o) for o in self._created], "changes": changes}
