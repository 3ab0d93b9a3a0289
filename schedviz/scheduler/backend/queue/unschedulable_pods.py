"""The unschedulable pod pool: pods that wait for a cluster event, or for a gate to open.

Mirrors pkg/scheduler/backend/queue/unschedulable_pods.go. Upstream keeps the pods in a Go map,
whose iteration order is random; here they keep the order they arrived in, so runs repeat exactly.
Gated pods (rejected by a PreEnqueue plugin) live here too; upstream tells them apart only for its
metrics.

Not in upstream: ``version`` counts the changes of the pool, so that what is worked out from the
pool (the trace's entries, the pods an event may move) is kept until it changes. Adding and
deleting count; the queue calls ``touch`` when it edits a pooled pod in place.
"""

from __future__ import annotations

from collections.abc import Iterator

from schedviz.scheduler.framework.types import QueuedPodInfo


class UnschedulablePods:
    __slots__ = ("_pods", "version")

    def __init__(self) -> None:
        self._pods: dict[str, QueuedPodInfo] = {}
        self.version = 0

    def add_or_update(self, pinfo: QueuedPodInfo) -> None:
        self._pods[pinfo.key] = pinfo
        self.version += 1

    def delete(self, key: str) -> None:
        if self._pods.pop(key, None) is not None:
            self.version += 1

    def touch(self) -> None:
        """A pooled pod may have changed in place (its plugins, its gate, its pod)."""
        self.version += 1

    def get(self, key: str) -> QueuedPodInfo | None:
        return self._pods.get(key)

    def __contains__(self, key: object) -> bool:
        return key in self._pods

    def __len__(self) -> int:
        return len(self._pods)

    def __iter__(self) -> Iterator[QueuedPodInfo]:
        return iter(list(self._pods.values()))
