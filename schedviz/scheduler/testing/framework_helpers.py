"""A handle for plugin tests: a snapshot, the other objects, and a recording binder.

Mirrors what upstream tests assemble with ``frameworkruntime.NewFramework(...,
WithSnapshotSharedLister(cache.NewSnapshot(pods, nodes)), WithInformerFactory(...))``.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

from schedviz.kube.objects import Namespace, Node, Pod
from schedviz.scheduler.backend.cache.snapshot import Snapshot, new_snapshot
from schedviz.scheduler.framework.interface import NodeInfoLister, Status


class ListObjectLister:
    """Objects other than pods and nodes, by kind name ("Namespace", "PodDisruptionBudget"...)."""

    def __init__(self, objects: Iterable[object] = ()) -> None:
        self._objects: dict[str, list[object]] = {}
        for obj in objects:
            self._objects.setdefault(type(obj).__name__, []).append(obj)

    def namespace_labels(self, namespace: str) -> dict[str, str] | None:
        for obj in self._objects.get("Namespace", []):
            assert isinstance(obj, Namespace)
            if obj.name == namespace:
                return obj.labels
        return None

    def list_objects(self, kind: str) -> Sequence[object]:
        return self._objects.get(kind, [])

    def get(self, kind: str, key: str) -> object | None:
        for obj in self._objects.get(kind, []):
            if getattr(obj, "key", None) == key:
                return obj
        return None

    def apply(self, obj: object) -> None:
        kind = type(obj).__name__
        objects = [
            o
            for o in self._objects.get(kind, [])
            if getattr(o, "key", None) != getattr(obj, "key", None)
        ]
        self._objects[kind] = [*objects, obj]


class FakeHandle:
    def __init__(
        self,
        pods: Sequence[Pod] = (),
        nodes: Sequence[Node] = (),
        objects: Iterable[object] = (),
        snapshot: Snapshot | None = None,
    ) -> None:
        self.snapshot = snapshot if snapshot is not None else new_snapshot(pods, nodes)
        self._objects = ListObjectLister(objects)
        self.bound: list[tuple[str, str]] = []

    def snapshot_shared_lister(self) -> NodeInfoLister:
        return self.snapshot

    @property
    def objects(self) -> ListObjectLister:
        return self._objects

    def bind_pod(self, pod: Pod, node_name: str) -> Status | None:
        self.bound.append((pod.key, node_name))
        return None
