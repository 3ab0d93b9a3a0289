"""The engine alone: a cluster in memory, the scheduler in virtual time, every cycle traced.

This is what ``manage.py simulate`` runs. kube-controller-manager's workload controllers
(``schedviz.controllers.manager``) work beside the scheduler on the same store: at load each
workload gets what its controller creates (a Deployment's ReplicaSet and its pods, a
StatefulSet's first ordinals, a DaemonSet's pod per node, a Job's active pods), and every later
write is answered before the run goes on (the next ordinal once one is bound, a preemption
victim replaced, a rollout's steps, a deleted node's pods collected and replaced, a Job's
finished pods counted). Every pod is admitted as the API server admits a create
(``schedviz.kube.admission``: LimitRanger's defaults and limits, Priority, RuntimeClass,
ResourceQuota); a pod of the input that is refused refuses the input, a controller's pod that
is refused is not created (its controller's FailedCreate, in ``Simulation.failed_creates``).
Pods that name a node are already running; the others are scheduled until no pod can make
progress without a new cluster event and no controller waits on the clock. Time is virtual:
backoffs, flushes and the controllers' delays happen instantly and the same input with the
same seed always gives the same trace.

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

from schedviz.controllers.kubelet import run_annotation_errors
from schedviz.controllers.manager import ControllerManager
from schedviz.kube.admission import PodAdmission, admission_objects
from schedviz.kube.errors import ForbiddenError, InvalidObjectError, LocatedError, ManifestError
from schedviz.kube.load import Manifests
from schedviz.kube.objects import KubeObject, Pod
from schedviz.scheduler import trace_codec
from schedviz.scheduler.apis.config.types import KubeSchedulerConfiguration
from schedviz.scheduler.apis.config.v1 import decode_configuration, default_configuration
from schedviz.scheduler.clock import VirtualClock
from schedviz.scheduler.framework.plugins.registry import new_in_tree_registry
from schedviz.scheduler.framework.runtime.registry import Registry
from schedviz.scheduler.scheduler import Scheduler
from schedviz.scheduler.store import ClusterStore, is_terminal_pod
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
    controllers: ControllerManager | None = None
    # The controllers' pods admission refused, as their FailedCreate events read
    # ("Warning FailedCreate replicaset/web-5d9f: Error creating: pods ... is forbidden: ...").
    failed_creates: list[str] = field(default_factory=list)
    # RuntimeClass refusals let through (``lenient_runtime_classes``), in the API's words.
    admission_warnings: list[str] = field(default_factory=list)
    # What the controllers and admission did beside the scheduler (``changes.ChangeLog``).
    changes: ChangeLog | None = None

    @property
    def traces(self) -> list[CycleTrace]:
        """The cycles as objects (with an ``EncodedTraceLog``, decoded all at once: iterate
        ``log`` instead to hold one at a time)."""
        return self.log.traces if isinstance(self.log, TraceLog) else list(self.log)

    def run(self, max_cycles: int = 1_000_000) -> int:
        """Schedules and lets the controllers act until neither can do more: when the
        scheduler is idle, virtual time moves to the controllers' next timer (a pod's run
        time, a Job's backoff, podgc's quarantine), never past one still due."""
        cycles = 0
        while True:
            cycles += self.scheduler.run_until_idle(self._advance, max_cycles - cycles)
            if self.scheduler.stopped_at_cap or self.scheduler.stopped_looping:
                return cycles
            due = self.controllers.next_timer() if self.controllers is not None else None
            if due is None or cycles >= max_cycles:
                return cycles
            self._fire(due)

    def _advance(self, when: float) -> None:
        """The scheduler's move of time to ``when``, stopping at a controller's timer first."""
        due = self.controllers.next_timer() if self.controllers is not None else None
        if due is not None and due <= when:
            self._fire(due)
        else:
            self.clock.set(when)

    def _fire(self, due: float) -> None:
        assert self.controllers is not None
        self.clock.set(max(due, self.clock.now()))
        self.controllers.fire_due()

    def outcome(self) -> str:
        """Why the run ended, in a line: the pods left pending (those for a scheduler the
        configuration has no profile for told apart: no scheduler here tries them) and whether
        the cycle cap cut it short; "stopped: every pod placed" when none is left."""
        pending = [
            pod for pod in self.store.pods() if not pod.node_name and not is_terminal_pod(pod)
        ]
        if self.scheduler.stopped_at_cap:
            return (
                f"stopped at the cycle cap: {_pods(len(pending))} still pending, "
                "more cycles might place some"
            )
        profiles = set(self.scheduler.profiles)
        others = sum(1 for pod in pending if pod.scheduler_name not in profiles)
        ours = [pod for pod in pending if pod.scheduler_name in profiles]
        if not pending:
            return "stopped: every pod placed"
        if self.scheduler.stopped_looping and ours:
            return (
                f"stopped: {_pods(len(ours))} pending, retried at one instant on an unchanged "
                "cluster without progress (a loop upstream paces only by real time)"
                + (f", {_pods(others)} for another scheduler" if others else "")
            )
        gated = sum(1 for pod in ours if pod.scheduling_gates)
        parts = [f"{_pods(len(ours) - gated)} unschedulable"] if len(ours) > gated else []
        if gated:
            parts.append(f"{_pods(gated)} gated by schedulingGates")
        if not parts:
            return f"stopped: every pod placed, {_pods(others)} for another scheduler left pending"
        if others:
            parts.append(f"{_pods(others)} for another scheduler")
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


def admitted_objects(
    objects: list[KubeObject],
    admission: PodAdmission | None = None,
    *,
    manifests: Manifests | None = None,
    failed_creates: list[str] | None = None,
) -> list[KubeObject]:
    """The objects with their pods admitted, in order, as the API server admits each create.

    A refused pod of ``manifests`` (the input) refuses the input: ManifestError with every
    refusal, each located at its document. Any other refused pod is a controller's: it is
    left out and its FailedCreate appended to ``failed_creates``.
    """
    admission = admission if admission is not None else PodAdmission(admission_objects(objects))
    given = {id(o) for o in manifests.objects} if manifests is not None else None
    admitted: list[KubeObject] = []
    errors: list[LocatedError] = []
    for obj in objects:
        if not isinstance(obj, Pod):
            admission.add(obj)
            admitted.append(obj)
            continue
        try:
            admitted.append(admission.admit(obj))
        except (ForbiddenError, InvalidObjectError) as error:
            if given is None or id(obj) in given:
                errors.append(manifests.locate(error, "pods", obj.key) if manifests else error)
            elif failed_creates is not None:
                failed_creates.append(failed_create(obj, error))
    if errors:
        raise ManifestError(errors)
    return admitted


def stored_objects(objects: list[KubeObject]) -> list[KubeObject]:
    """The objects of a dump, its pods as the API server stored them: the mutating admission
    plugins' view (priority resolved, a RuntimeClass's overhead where the class is given),
    nothing refused (they were admitted once already; a quota or LimitRange made since does
    not undo them)."""
    admission = PodAdmission(admission_objects(objects))
    return [admission.admit(o, create=False) if isinstance(o, Pod) else o for o in objects]


def failed_create(pod: Pod, error: Exception) -> str:
    """The FailedCreate event of the pod's controller (controller_utils' ``CreatePods``)."""
    owner = next((ref for ref in pod.owner_references if ref.controller), None)
    where = f"{owner.kind.lower()}/{owner.name}" if owner is not None else f"pod/{pod.name}"
    return f"Warning FailedCreate {where}: Error creating: {error}"


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
    lenient_runtime_classes: bool = False,
) -> Simulation:
    """``encoded_traces``: keep the cycles encoded (``EncodedTraceLog``), for long runs.
    ``lenient_runtime_classes``: as ``PodAdmission``'s (``manage.py simulate``: a dump's pods
    keep the overhead they were stored with when their RuntimeClass is missing or differs).
    ``controllers``: more controllers started on the store once the scheduler and the workload
    controllers watch it (each syncs and then follows the store), like
    kube-controller-manager's beside the scheduler (``schedviz.controllers`` has the PV
    controller)."""
    registry = registry if registry is not None else new_in_tree_registry()
    if config is None:
        config = configuration_from(manifests, registry)
    errors = run_annotation_errors(manifests.objects)
    if errors:
        raise SimulationInputError("\n".join(errors))
    clock = VirtualClock()
    manager = ControllerManager(seed)
    expanded = manager.expand(manifests.objects)
    admission = PodAdmission(
        admission_objects(expanded), lenient_runtime_classes=lenient_runtime_classes
    )
    failed_creates: list[str] = []
    objects = admitted_objects(
        expanded, admission, manifests=manifests, failed_creates=failed_creates
    )
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

    def admit(pods: Sequence[Pod]) -> list[Pod]:
        """A controller's creates, admitted; a refused one is left out (its FailedCreate)."""
        admitted = admitted_objects(
            list(pods), admission, manifests=Manifests(), failed_creates=failed_creates
        )
        return [pod for pod in admitted if isinstance(pod, Pod)]

    # Watching before the controllers start, so that it sees every write they make.
    changes = ChangeLog(
        manifests.objects,
        objects,
        store,
        lambda: scheduler.cycle_count,
        controllers_acting=lambda: manager.acting,
    )
    manager.start(store, admit=admit)
    for start in controllers:
        start(store)
    return Simulation(
        scheduler,
        store,
        clock,
        log,
        manager,
        failed_creates=failed_creates,
        admission_warnings=admission.warnings,
        changes=changes,
    )
