"""A store with the controllers on it, as ``new_simulation`` builds it, without a scheduler:
tests bind, delete and patch by hand and read what the controllers did."""

from __future__ import annotations

import dataclasses
from typing import Any

from schedviz.controllers.daemon import target_node_name
from schedviz.controllers.manager import ControllerManager
from schedviz.kube.load import load_manifests
from schedviz.kube.objects import Pod
from schedviz.scheduler.clock import VirtualClock
from schedviz.scheduler.store import ClusterStore

NODE = "apiVersion: v1\nkind: Node\nmetadata: {name: %s}\n"


@dataclasses.dataclass
class Cluster:
    manager: ControllerManager
    store: ClusterStore
    clock: VirtualClock

    def pods(self, prefix: str = "") -> list[Pod]:
        return [p for p in self.store.pods() if p.name.startswith(prefix)]

    def names(self, prefix: str = "") -> list[str]:
        return sorted(p.name for p in self.pods(prefix))

    def bind_all(self, node: str = "n1") -> None:
        """Binds every unbound pod to ``node`` (a daemon pod to the node it is for)."""
        for pod in self.pods():
            if not pod.node_name:
                assert self.store.bind(pod, target_node_name(pod) or node) is None

    def apply(self, text: str) -> None:
        for obj in load_manifests(text).objects:
            self.store.apply(obj)

    def set_phase(self, name: str, phase: str) -> None:
        pod = self.store.get("Pod", f"default/{name}")
        self.store.apply(dataclasses.replace(pod, phase=phase))

    def advance(self, seconds: float) -> None:
        """Moves the clock by ``seconds``, firing the controllers' timers on the way."""
        end = self.clock.now() + seconds
        while (due := self.manager.next_timer()) is not None and due <= end:
            self.clock.set(max(due, self.clock.now()))
            self.manager.fire_due()
        self.clock.set(end)

    def get(self, kind: str, name: str) -> Any:
        return self.store.get(kind, f"default/{name}")


def start(text: str, seed: int = 1) -> Cluster:
    manager = ControllerManager(seed)
    objects = manager.expand(load_manifests(text).objects)
    clock = VirtualClock()
    store = ClusterStore(objects, now=clock.now)
    manager.start(store)
    return Cluster(manager, store, clock)
