"""The engine alone: a cluster in memory, the scheduler in virtual time, every cycle traced.

This is what ``manage.py simulate`` runs. Pods that name a node are already running; the others
are admitted (priority from their PriorityClass) and scheduled until no pod can make progress
without a new cluster event. Time is virtual: backoffs and flushes happen instantly and the same
input with the same seed always gives the same trace.

The plugins are the in-tree ones unless the caller passes a ``registry``: like pkg/scheduler, the
engine knows nothing of out-of-tree plugins. What schedviz builds with them (the in-tree plugins
plus ``schedviz.outoftree``, as a custom kube-scheduler build passes ``app.WithPlugin``) is the
caller's choice: ``manage.py simulate``, the simulation page and the comparisons pass
``schedviz.outoftree.registry.new_registry()``.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from schedviz.kube.admission import admit_pods
from schedviz.kube.load import Manifests
from schedviz.kube.objects import KubeObject, Pod, PriorityClass
from schedviz.scheduler.apis.config.types import KubeSchedulerConfiguration
from schedviz.scheduler.apis.config.v1 import decode_configuration, default_configuration
from schedviz.scheduler.clock import VirtualClock
from schedviz.scheduler.framework.plugins.registry import new_in_tree_registry
from schedviz.scheduler.framework.runtime.registry import Registry
from schedviz.scheduler.scheduler import Scheduler
from schedviz.scheduler.store import ClusterStore
from schedviz.scheduler.trace import CycleTrace, trace_document


class SimulationInputError(ValueError):
    """The input cannot be simulated (more than one configuration, an unknown plugin...)."""


class TraceLog:
    """The cycles of a run, each once, in the order they started. A cycle held at Permit is
    emitted again when it resolves; the kept trace is the same object, now complete."""

    def __init__(self) -> None:
        self.traces: list[CycleTrace] = []
        self._cycles: set[int] = set()

    def __call__(self, trace: CycleTrace) -> None:
        if trace.cycle not in self._cycles:
            self._cycles.add(trace.cycle)
            self.traces.append(trace)


@dataclass
class Simulation:
    scheduler: Scheduler
    store: ClusterStore
    clock: VirtualClock
    log: TraceLog = field(default_factory=TraceLog)

    @property
    def traces(self) -> list[CycleTrace]:
        return self.log.traces

    def run(self, max_cycles: int = 1_000_000) -> int:
        return self.scheduler.run_until_idle(self.clock.set, max_cycles)

    def document(self) -> dict[str, Any]:
        return trace_document(self.traces)

    def placements(self) -> dict[str, str]:
        return {pod.key: pod.node_name for pod in self.store.pods()}


def configuration_from(manifests: Manifests, registry: Registry) -> KubeSchedulerConfiguration:
    if len(manifests.scheduler_configs) > 1:
        raise SimulationInputError(
            "at most one KubeSchedulerConfiguration may be given, "
            f"got {len(manifests.scheduler_configs)}"
        )
    if manifests.scheduler_configs:
        return decode_configuration(manifests.scheduler_configs[0], known_plugins=set(registry))
    return default_configuration()


def admitted_objects(objects: list[KubeObject]) -> list[KubeObject]:
    """The objects with their pods admitted (priority resolved) as the API server would."""
    classes = [o for o in objects if isinstance(o, PriorityClass)]
    pods = [o for o in objects if isinstance(o, Pod)]
    admitted = iter(admit_pods(pods, classes))
    return [next(admitted) if isinstance(o, Pod) else o for o in objects]


def new_simulation(
    manifests: Manifests,
    *,
    seed: int = 0,
    registry: Registry | None = None,
    config: KubeSchedulerConfiguration | None = None,
    capture_queue: bool = True,
    extender_allowed_hosts: frozenset[str] | None = None,
) -> Simulation:
    registry = registry if registry is not None else new_in_tree_registry()
    if config is None:
        config = configuration_from(manifests, registry)
    clock = VirtualClock()
    objects = admitted_objects(manifests.objects)
    store = ClusterStore(objects, now=clock.now)
    log = TraceLog()
    scheduler = Scheduler(
        config,
        registry,
        store,
        clock,
        seed=seed,
        emit=log,
        capture_queue=capture_queue,
        extender_allowed_hosts=extender_allowed_hosts,
    )
    return Simulation(scheduler, store, clock, log)
