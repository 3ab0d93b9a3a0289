"""The engine alone: a cluster in memory, the scheduler in virtual time, every cycle traced.

This is what ``manage.py simulate`` runs. Workloads get the pods their controllers would create
(``schedviz.controllers.workloads``: a Deployment's ReplicaSet and its pods, a
StatefulSet's ordinals as the ones before are bound, a DaemonSet's pod per node, a Job's active
pods). Pods that name a node are already running; the others are admitted (priority from their
PriorityClass) and scheduled until no pod can make progress without a new cluster event. Time
is virtual: backoffs and flushes happen instantly and the same input with the same seed always
gives the same trace.

The plugins are the in-tree ones unless the caller passes a ``registry``: like pkg/scheduler, the
engine knows nothing of out-of-tree plugins. What schedviz builds with them (the in-tree plugins
plus ``schedviz.outoftree``, as a custom kube-scheduler build passes ``app.WithPlugin``) is the
caller's choice: ``manage.py simulate``, the simulation page and the comparisons pass
``schedviz.outoftree.registry.new_registry()``.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from typing import Any

from schedviz.controllers.workloads import WorkloadControllers
from schedviz.kube.admission import admit_pods
from schedviz.kube.load import Manifests
from schedviz.kube.objects import KubeObject, Pod, PriorityClass
from schedviz.scheduler import trace_codec
from schedviz.scheduler.apis.config.types import KubeSchedulerConfiguration
from schedviz.scheduler.apis.config.v1 import decode_configuration, default_configuration
from schedviz.scheduler.clock import VirtualClock
from schedviz.scheduler.framework.plugins.registry import new_in_tree_registry
from schedviz.scheduler.framework.runtime.registry import Registry
from schedviz.scheduler.scheduler import Scheduler
from schedviz.scheduler.store import ClusterStore, Watcher
from schedviz.scheduler.trace import CycleTrace, trace_document
from schedviz.simulation.changes import ChangeLog


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

    def __iter__(self) -> Iterator[CycleTrace]:
        return iter(self.traces)

    def __len__(self) -> int:
        return len(self.traces)


class EncodedTraceLog:
    """A ``TraceLog`` that keeps each cycle encoded as the live system stores it
    (``trace_codec``): about 3 KB a cycle at 5000 nodes instead of the objects' megabyte, so a
    run of 10000 pods fits in memory. Iterating decodes one cycle at a time; a cycle held at
    Permit is encoded again when it resolves."""

    def __init__(self) -> None:
        self._bodies: list[tuple[bytes, tuple[str, ...]]] = []
        self._index: dict[int, int] = {}

    def __call__(self, trace: CycleTrace) -> None:
        entry = (trace_codec.encode(trace), trace.all_nodes)
        index = self._index.get(trace.cycle)
        if index is None:
            self._index[trace.cycle] = len(self._bodies)
            self._bodies.append(entry)
        else:
            self._bodies[index] = entry

    def __iter__(self) -> Iterator[CycleTrace]:
        return (trace_codec.decode(body, nodes) for body, nodes in self._bodies)

    def __len__(self) -> int:
        return len(self._bodies)


@dataclass
class Simulation:
    scheduler: Scheduler
    store: ClusterStore
    clock: VirtualClock
    log: TraceLog | EncodedTraceLog = field(default_factory=TraceLog)
    # What the controllers and admission did beside the scheduler (``changes.ChangeLog``).
    changes: ChangeLog | None = None

    @property
    def traces(self) -> list[CycleTrace]:
        """The cycles as objects (with an ``EncodedTraceLog``, decoded all at once: iterate
        ``log`` instead to hold one at a time)."""
        return self.log.traces if isinstance(self.log, TraceLog) else list(self.log)

    def run(self, max_cycles: int = 1_000_000) -> int:
        return self.scheduler.run_until_idle(self.clock.set, max_cycles)

    def outcome(self) -> str:
        """Why the run ended, in a line: the pods left pending and whether the cycle cap cut it
        short; empty when every pod was placed."""
        pending = [pod for pod in self.store.pods() if not pod.node_name]
        if self.scheduler.stopped_at_cap:
            return (
                f"stopped at the cycle cap: {_pods(len(pending))} still pending, "
                "more cycles might place some"
            )
        if not pending:
            return ""
        if self.scheduler.stopped_looping:
            return (
                f"stopped: {_pods(len(pending))} pending, retried at one instant on an unchanged "
                "cluster without progress (a loop upstream paces only by real time)"
            )
        gated = sum(1 for pod in pending if pod.scheduling_gates)
        parts = [f"{_pods(len(pending) - gated)} unschedulable"] if len(pending) > gated else []
        if gated:
            parts.append(f"{_pods(gated)} gated by schedulingGates")
        return f"stopped: {', '.join(parts)}, no event can change that"

    def document(self) -> dict[str, Any]:
        """The trace document, with the controllers' and admission's ``objects`` and
        ``changes`` (docs/trace-format.md)."""
        document = trace_document(self.traces)
        if self.changes is not None:
            document.update(self.changes.document())
        return document

    def placements(self) -> dict[str, str]:
        return {pod.key: pod.node_name for pod in self.store.pods()}


def _pods(count: int) -> str:
    return f"{count} pod" if count == 1 else f"{count} pods"


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
    encoded_traces: bool = False,
    controllers: Sequence[Callable[[ClusterStore], None]] = (),
) -> Simulation:
    """``encoded_traces``: keep the cycles encoded (``EncodedTraceLog``), for long runs.
    ``controllers``: started on the store once the scheduler watches it (each syncs and then
    follows the store), like kube-controller-manager's beside the scheduler; the engine has
    none of its own (``schedviz.controllers`` has the PV controller)."""
    registry = registry if registry is not None else new_in_tree_registry()
    if config is None:
        config = configuration_from(manifests, registry)
    clock = VirtualClock()
    workload_controllers = WorkloadControllers(seed)
    objects = admitted_objects(workload_controllers.expand(manifests.objects))
    store = ClusterStore(objects, now=clock.now)
    log = EncodedTraceLog() if encoded_traces else TraceLog()
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
    classes = [o for o in objects if isinstance(o, PriorityClass)]
    store.watch(_controllers_follow(workload_controllers, store, classes))
    changes = ChangeLog(manifests.objects, objects, store, lambda: scheduler.cycle_count)
    for start in controllers:
        start(store)
    return Simulation(scheduler, store, clock, log, changes)


def _controllers_follow(
    controllers: WorkloadControllers, store: ClusterStore, classes: list[PriorityClass]
) -> Watcher:
    """The workload controllers watching pods: what a binding lets them create next (an
    OrderedReady StatefulSet's next ordinal), admitted and created through the API."""

    def on_event(event_type: str, old: Any, new: Any) -> None:
        if not isinstance(new, Pod) or not new.node_name or (old is not None and old.node_name):
            return
        for obj in admitted_objects([*classes, *controllers.after_bound(new)])[len(classes) :]:
            store.apply(obj)

    return on_event
