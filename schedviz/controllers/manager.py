"""kube-controller-manager over an in-memory cluster: the controllers, their work queue, time.

Mirrors cmd/kube-controller-manager/app (the controllers it starts beside the scheduler) and
the shape every controller of pkg/controller has: informer event handlers that enqueue keys,
a work queue that holds each key once, and a ``sync`` of one key that reads the cluster and
writes what is missing. Here the informers are the store's watchers and the workers run when
a write has been heard by every watcher (``ClusterStore.on_settled``), one key at a time in the
order they were queued, until the queue is empty: a write's whole consequence (a scale-up's
pods, a rollout's next step, a deleted node's pods replaced) is in the store before the
writer goes on, so a run is deterministic and needs no wall clock. Delays (a Job's pod
backoff, a pod's run time) are timers on the virtual clock, fired by the simulation as it
moves time.

At load (``expand``), the controllers sync every workload of the input in order, against the
input alone: what each creates follows it, with names from the seeded generator, as
``manage.py simulate`` has always expanded workloads. A workload given with what it controls
(an exported cluster: ownerReferences with its uid, or orphans its selector matches, which it
adopts) creates only what is missing.
"""

from __future__ import annotations

import dataclasses
import heapq
from collections.abc import Callable, Iterable, Sequence
from typing import Any, Protocol

from schedviz.controllers.controller_utils import (
    InvalidSpecError,
    Times,
    controller_ref,
    is_pod_active,
    is_pod_ready,
    owner_reference,
    selector_matches,
)
from schedviz.kube.names import NameGenerator
from schedviz.kube.objects import KubeObject, OwnerReference, Pod, Workload
from schedviz.scheduler.store import DELETED, ClusterStore

# The API server's admission of pods created: those it let through (a refused one left out).
Admit = Callable[[Sequence[Pod]], list[Pod]]


class Controller(Protocol):
    """One controller of pkg/controller: the keys an event concerns, and the sync of a key."""

    name: str

    def keys_for(self, event_type: str, old: Any, new: Any) -> Iterable[str]: ...

    def sync(self, key: str) -> None: ...


class ControllerContext:
    """What every controller reads and writes through: the cluster (its informers and its
    client), the pods by the uid of their controller, times, names, timers."""

    def __init__(self, seed: int) -> None:
        self.names = NameGenerator(seed)
        self.times = Times()
        self.store = ClusterStore()
        self.admit: Admit | None = None
        self.created: list[KubeObject] = []
        self._owned: dict[str, dict[str, Pod]] = {}
        self._active: dict[str, int] = {}
        self._ready: dict[str, int] = {}
        self._timers: list[tuple[float, int, str, str]] = []
        self._timer_seq = 0
        self.now: Callable[[], float] = lambda: 0.0

    # ------------------------------------------------------------------ reads

    def get(self, kind: str, key: str) -> Any:
        return self.store.get(kind, key)

    def objects(self, kind: str, namespace: str | None = None) -> list[Any]:
        objects = self.store.list_objects(kind)
        if namespace is None:
            return list(objects)
        return [o for o in objects if getattr(o, "namespace", None) == namespace]

    def owned_pods(self, uid: str) -> list[Pod]:
        """Every pod (terminal ones too) whose controller ownerReference has ``uid``."""
        return list(self._owned.get(uid, {}).values())

    # ------------------------------------------------------------------ the pod index

    def active_count(self, uid: str) -> int:
        """How many of the pods ``uid`` controls are active (its ``status.replicas``)."""
        return self._active.get(uid, 0)

    def ready_count(self, uid: str) -> int:
        """How many are active and ready (its ``status.availableReplicas``)."""
        return self._ready.get(uid, 0)

    def _count(self, uid: str, pod: Pod, sign: int) -> None:
        if is_pod_active(pod):
            self._active[uid] = self._active.get(uid, 0) + sign
            if is_pod_ready(pod):
                self._ready[uid] = self._ready.get(uid, 0) + sign

    def index(self, event_type: str, old: Any, new: Any) -> None:
        if isinstance(old, Pod):
            ref = controller_ref(old)
            stored = self._owned.get(ref.uid, {}).pop(old.key, None) if ref else None
            if ref is not None and stored is not None:
                self._count(ref.uid, stored, -1)
        if isinstance(new, Pod) and event_type != DELETED:
            ref = controller_ref(new)
            if ref is not None:
                owned = self._owned.setdefault(ref.uid, {})
                replaced = owned.get(new.key)
                if replaced is not None:
                    self._count(ref.uid, replaced, -1)
                owned[new.key] = new
                self._count(ref.uid, new, 1)
            if old is None:
                self.times.created.setdefault(new.uid, self.now())
            if new.node_name and not (isinstance(old, Pod) and old.node_name):
                self.times.ready.setdefault(new.uid, self.now())

    def reindex(self) -> None:
        self._owned.clear()
        self._active.clear()
        self._ready.clear()
        for pod in self.store.pods():
            self.index("ADDED", None, pod)

    # ------------------------------------------------------------------ writes

    def create(self, obj: KubeObject) -> KubeObject | None:
        """The API's create: pods go through admission; None when admission refuses (the
        controller's FailedCreate: it tries again on its next sync)."""
        if isinstance(obj, Pod) and self.admit is not None:
            admitted = self.admit([obj])
            if not admitted:
                return None
            (obj,) = admitted
        if self.store.get(type(obj).__name__, obj.key) is not None:
            return None  # AlreadyExists
        self.created.append(obj)
        self.times.created.setdefault(getattr(obj, "uid", ""), self.now())
        self.store.apply(obj)
        return obj

    def update(self, obj: KubeObject) -> None:
        self.store.apply(obj)

    def delete(self, kind: str, key: str) -> None:
        if self.store.get(kind, key) is not None:
            self.store.delete(kind, key)

    def adopt(self, pod: Pod, ref: OwnerReference, manifest_ref: dict[str, Any]) -> Pod:
        """ClaimPods' adoption: the controller's ownerReference patched onto an orphan."""
        manifest = dict(pod.manifest)
        metadata = dict(manifest.get("metadata", {}))
        metadata["ownerReferences"] = [*metadata.get("ownerReferences", []), manifest_ref]
        manifest["metadata"] = metadata
        adopted = dataclasses.replace(
            pod, owner_references=(*pod.owner_references, ref), manifest=manifest
        )
        self.store.apply(adopted)
        return adopted

    # ------------------------------------------------------------------ timers

    def after(self, when: float, controller: str, key: str) -> None:
        """Syncs ``key`` of ``controller`` again at virtual time ``when``."""
        self._timer_seq += 1
        heapq.heappush(self._timers, (when, self._timer_seq, controller, key))

    def next_timer(self) -> float | None:
        return self._timers[0][0] if self._timers else None

    def pop_due(self, now: float) -> list[tuple[str, str]]:
        due = []
        while self._timers and self._timers[0][0] <= now:
            _, _, controller, key = heapq.heappop(self._timers)
            due.append((controller, key))
        return due


class ControllerManager:
    """The controllers of ``schedviz.controllers`` over one cluster store."""

    def __init__(self, seed: int = 0) -> None:
        from schedviz.controllers.daemon import DaemonSetController
        from schedviz.controllers.deployment import DeploymentController
        from schedviz.controllers.garbagecollector import GarbageCollector
        from schedviz.controllers.job import JobController
        from schedviz.controllers.kubelet import Kubelet
        from schedviz.controllers.podgc import PodGCController
        from schedviz.controllers.replicaset import ReplicaSetController
        from schedviz.controllers.statefulset import StatefulSetController

        self.context = ControllerContext(seed)
        ctx = self.context
        controllers: list[Controller] = [
            DeploymentController(ctx),
            ReplicaSetController(ctx, "ReplicaSet"),
            ReplicaSetController(ctx, "ReplicationController"),
            StatefulSetController(ctx),
            DaemonSetController(ctx),
            JobController(ctx),
            GarbageCollector(ctx),
            PodGCController(ctx),
            Kubelet(ctx),
        ]
        self.controllers = {c.name: c for c in controllers}
        self._queue: dict[tuple[str, str], None] = {}
        self._draining = False
        self._kind_controller = {
            "Deployment": "deployment",
            "ReplicaSet": "replicaset",
            "ReplicationController": "replicationcontroller",
            "StatefulSet": "statefulset",
            "DaemonSet": "daemonset",
            "Job": "job",
        }

    # ------------------------------------------------------------------ load

    def expand(self, objects: Sequence[KubeObject]) -> list[KubeObject]:
        """The objects with, after each workload, what the controllers create for it."""
        ctx = self.context
        ctx.store = ClusterStore(objects)
        ctx.reindex()
        ctx.store.watch(self._on_event)
        made: dict[tuple[str, str], list[KubeObject]] = {}
        for obj in objects:
            name = self._kind_controller.get(type(obj).__name__)
            if name is None:
                continue
            mark = len(ctx.created)
            controller = self.controllers[name]
            for key in controller.keys_for("ADDED", None, obj):
                self._enqueue(name, key)
            self.drain()
            made[type(obj).__name__, obj.key] = ctx.created[mark:]
        ctx.created.clear()
        result: list[KubeObject] = []
        for obj in objects:
            current = ctx.store.get(type(obj).__name__, obj.key)
            if current is not None:
                result.append(current)
            for child in made.get((type(obj).__name__, obj.key), []):
                now = ctx.store.get(type(child).__name__, child.key)
                if now is not None:
                    result.append(now)
        return result

    # ------------------------------------------------------------------ run

    def start(self, store: ClusterStore, admit: Admit | None = None) -> None:
        """Follows ``store`` from now on: every write is answered once all watchers heard it."""
        ctx = self.context
        ctx.store = store
        ctx.admit = admit
        ctx.now = store.now
        ctx.reindex()
        store.watch(self._on_event)
        store.on_settled(self.drain)
        kubelet = self.controllers["kubelet"]
        for pod in store.pods():
            for key in kubelet.keys_for("ADDED", None, pod):
                self._enqueue(kubelet.name, key)
        self.drain()

    def _on_event(self, event_type: str, old: Any, new: Any) -> None:
        self.context.index(event_type, old, new)
        for controller in self.controllers.values():
            for key in controller.keys_for(event_type, old, new):
                self._enqueue(controller.name, key)

    def _enqueue(self, controller: str, key: str) -> None:
        self._queue[controller, key] = None

    @property
    def acting(self) -> bool:
        """Whether the controllers are working their queue now: a store write meanwhile is
        theirs (the scheduler's writes come between drains, never inside one)."""
        return self._draining

    def drain(self) -> None:
        """Works the queue until it is empty (the keys a sync's writes queue included)."""
        if self._draining:
            return
        self._draining = True
        try:
            while self._queue:
                controller, key = next(iter(self._queue))
                del self._queue[controller, key]
                try:
                    self.controllers[controller].sync(key)
                except InvalidSpecError:
                    continue  # the sync fails as upstream's does; the object stays as it is
        finally:
            self._draining = False

    def next_timer(self) -> float | None:
        """When a controller next wants to act by itself (virtual seconds), or None."""
        return self.context.next_timer()

    def fire_due(self) -> None:
        """Syncs what is due at the store's current time."""
        for controller, key in self.context.pop_due(self.context.now()):
            self._enqueue(controller, key)
        self.drain()


def active_owned(ctx: ControllerContext, uid: str) -> list[Pod]:
    return [pod for pod in ctx.owned_pods(uid) if is_pod_active(pod)]


def claim_orphans(
    ctx: ControllerContext, owner: Workload, api_version: str, *, active_only: bool = True
) -> None:
    """ClaimPods' adoption: each pod of the owner's namespace with no controller whose labels
    the owner's selector matches gets the owner as its controller."""
    for pod in ctx.objects("Pod", owner.namespace):
        if controller_ref(pod) is not None or pod.deletion_timestamp is not None:
            continue
        if active_only and not is_pod_active(pod):
            continue
        if selector_matches(owner.selector, pod.labels):
            ref = OwnerReference(kind=owner.kind, name=owner.name, uid=owner.uid, controller=True)
            ctx.adopt(pod, ref, owner_reference(owner, api_version))


def orphan_owners(ctx: ControllerContext, kind: str, pod: Any) -> list[str]:
    """The keys of the ``kind`` workloads an orphan pod's labels match (getPodReplicaSets and
    the like), for adoption."""
    if not isinstance(pod, Pod) or controller_ref(pod) is not None:
        return []
    return [
        w.key for w in ctx.objects(kind, pod.namespace) if selector_matches(w.selector, pod.labels)
    ]
