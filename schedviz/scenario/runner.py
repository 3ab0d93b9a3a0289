"""Running a Scenario: its operations step by step on the engine, every write recorded.

KEP-140's step semantics: at each major step its operations are made, then the controllers and
the scheduler work until nothing can change (``Simulation.run``), then the next major step; a
``doneOperation`` ends the scenario once its step is over (phase ``Succeeded``), a scenario whose
operations ran out without one is ``Paused``, one whose operation the API refuses is ``Failed``
with the API's message. The cluster starts empty, as KEP-140 deletes whatever existed before a
scenario starts.

Every resource operation (the scenario's own, the controllers', the scheduler's bindings, status
writes and preemption deletes) is one minor step, recorded in the order it was made: the
recorder watches the store ahead of every other watcher (``ClusterStore.watch(first=True)``),
so a write is recorded before anything reacting to it writes. Deliberately different from the
KEP: there the step's own operations all sit at minor step 0 and the pre-simulation controllers'
reactions count as instantaneous; here the controllers react synchronously inside the write
that woke them, so each of their writes, like the scenario's, takes the next minor step.

The timed form moves the virtual clock between operations: the scheduler runs cycles, its
backoff and the 30-second flush of unschedulablePods (moving pods past
podMaxInUnschedulablePodsDuration, 5 minutes) happen at their times, up to the next operation's
instant; after the last one it runs until nothing can change or to ``spec.until``.
"""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

from schedviz.kube.decode import decode_object, kind_info
from schedviz.kube.errors import InvalidObjectError
from schedviz.kube.load import Manifests
from schedviz.kube.objects import KubeObject, Node, Pod, PriorityClass
from schedviz.scenario.figures import AmountCache, node_cards, step_figures
from schedviz.scenario.manifests import current_manifest, kind_of, pod_update_error
from schedviz.scenario.patch import MERGE, PatchError, apply_patch
from schedviz.scenario.spec import CREATE, DELETE, DONE, PATCH, Operation, Scenario
from schedviz.scheduler.apis.config.types import KubeSchedulerConfiguration
from schedviz.scheduler.framework.runtime.registry import Registry
from schedviz.scheduler.preemption import CONDITION_DISRUPTION_TARGET
from schedviz.scheduler.preemption import REASON_PREEMPTION_BY_SCHEDULER as REASON_PREEMPTION
from schedviz.scheduler.store import ADDED, DELETED, ClusterStore, NotFoundError
from schedviz.simulation.simulator import Simulation, admitted_objects, new_simulation

SIMULATOR_VERSION = "schedviz (kube-scheduler v1.34.1)"
SIMULATION_CONTROLLER = "kube-scheduler"

PHASE_SUCCEEDED = "Succeeded"
PHASE_PAUSED = "Paused"
PHASE_FAILED = "Failed"
STEP_FINISHED = "Finished"  # KEP-140's StepCompleted
STEP_OPERATING = "Operating"

ATTEMPT_REASONS = ("Scheduled", "FailedScheduling")

Progress = Callable[[int, int], None]


class OperationFailed(Exception):
    """The API refused an operation: the scenario fails with this message."""


def merge_diff(old: Any, new: Any) -> Any:
    """The RFC 7386 patch that turns ``old`` into ``new`` (jsonpatch CreateMergePatch)."""
    if not isinstance(old, dict) or not isinstance(new, dict):
        return new
    diff: dict[str, Any] = {}
    for key in old:
        if key not in new:
            diff[key] = None
    for key, value in new.items():
        if key not in old:
            diff[key] = value
        elif old[key] != value:
            diff[key] = merge_diff(old[key], value)
    return diff


def _meta(obj: KubeObject) -> tuple[dict[str, str], dict[str, str]]:
    manifest_kind = kind_of(obj)
    type_meta = {"apiVersion": current_manifest(obj)["apiVersion"], "kind": manifest_kind}
    object_meta = {"name": obj.name}
    namespace = getattr(obj, "namespace", "")
    if namespace and manifest_kind != "Node":
        object_meta["namespace"] = namespace
    return type_meta, object_meta


class Recorder:
    """The timeline: every write to the store, as KEP-140's ScenarioTimelineEvents."""

    def __init__(self, simulation: Simulation) -> None:
        self._simulation = simulation
        self.timeline: dict[str, list[dict[str, Any]]] = {}
        self.major = 0
        self.minor = 0
        self._operation: Operation | None = None

    def begin_step(self, major: int) -> None:
        self.major, self.minor = major, 0
        self.timeline[str(major)] = []

    @property
    def events(self) -> list[dict[str, Any]]:
        return self.timeline[str(self.major)]

    def expect(self, operation: Operation | None) -> None:
        """The next write is ``operation``'s own."""
        self._operation = operation

    def add(self, body: dict[str, Any], op_id: str | None = None) -> None:
        event = {
            "id": op_id if op_id is not None else f"{self.major}.{self.minor}",
            "step": {"major": self.major, "minor": self.minor},
            "time": self._simulation.clock.now(),
            **body,
        }
        self.minor += 1
        self.events.append(event)

    def __call__(self, event_type: str, old: Any, new: Any) -> None:
        operation, self._operation = self._operation, None
        if operation is not None:
            self.add(_operation_event(operation, new), operation.id)
            return
        if event_type == ADDED:
            manifest = current_manifest(new)
            self.add({"create": {"operation": {"object": manifest}, "result": manifest}})
        elif event_type == DELETED:
            type_meta, object_meta = _meta(old)
            delete: dict[str, Any] = {
                "operation": {"typeMeta": type_meta, "objectMeta": object_meta}
            }
            disruption = _disruption(old)
            if disruption is not None:
                # A preemption's victim, or another disruption (PodGC's, a taint's eviction).
                key = "preemption" if disruption["reason"] == REASON_PREEMPTION else "disruption"
                delete[key] = disruption
            self.add({"delete": delete})
        elif isinstance(new, Pod) and new.node_name and not old.node_name:
            self.add({"podScheduled": self._binding(new)})
        else:
            before, after = current_manifest(old), current_manifest(new)
            diff = merge_diff(before, after)
            if not diff:
                return
            type_meta, object_meta = _meta(new)
            operation_body = {
                "typeMeta": type_meta,
                "objectMeta": object_meta,
                "patch": json.dumps(diff, sort_keys=True, separators=(",", ":")),
                "patchType": MERGE,
            }
            self.add({"patch": {"operation": operation_body, "result": after}})

    def _binding(self, pod: Pod) -> dict[str, Any]:
        """podScheduled, with the cycle that bound it: the one waiting at Permit for this pod,
        else the cycle running now (binding follows its cycle at once)."""
        scheduler = self._simulation.scheduler
        cycle = next(
            (
                trace.cycle
                for _, _, assumed, _, trace in scheduler.waiting
                if assumed.pod.key == pod.key
            ),
            scheduler.cycle_count,
        )
        return {
            "pod": {"namespace": pod.namespace, "name": pod.name},
            "node": pod.node_name,
            "cycle": cycle,
        }


def _disruption(old: Any) -> dict[str, str] | None:
    """The pod's DisruptionTarget condition: why it is deleted."""
    if not isinstance(old, Pod):
        return None
    for condition in old.conditions:
        if condition.type == CONDITION_DISRUPTION_TARGET and condition.status == "True":
            return {"reason": condition.reason, "message": condition.message}
    return None


def _operation_event(operation: Operation, new: Any) -> dict[str, Any]:
    result = current_manifest(new) if new is not None else None
    if operation.type == CREATE:
        return {"create": {"operation": operation.raw, "result": result}}
    if operation.type == PATCH:
        return {"patch": {"operation": operation.raw, "result": result}}
    return {"delete": {"operation": operation.raw}}


@dataclass
class ScenarioRun:
    scenario: Scenario
    simulation: Simulation
    seed: int
    timeline: dict[str, list[dict[str, Any]]]
    steps: list[dict[str, Any]] = field(default_factory=list)
    # The node cards at the end of each step (for the page's slider), when asked for.
    cards: list[list[dict[str, Any]]] = field(default_factory=list)
    phase: str = PHASE_PAUSED
    message: str = ""
    step_phase: str = STEP_FINISHED
    last_step: dict[str, int] = field(default_factory=lambda: {"major": 0, "minor": 0})

    def document(self) -> dict[str, Any]:
        """The Scenario with its status, as KEP-140 records it, and schedviz's figures."""
        source = self.scenario.document
        status: dict[str, Any] = {"phase": self.phase}
        if self.message:
            status["message"] = self.message
        status["stepStatus"] = {
            "step": self.last_step,
            "phase": self.step_phase,
            "runningSimulationController": SIMULATION_CONTROLLER,
        }
        status["scenarioResult"] = {
            "simulatorVersion": SIMULATOR_VERSION,
            "timeline": self.timeline,
        }
        return {
            "apiVersion": source.get("apiVersion"),
            "kind": source.get("kind"),
            "metadata": source.get("metadata") or {},
            "spec": source.get("spec"),
            "status": status,
            "schedviz": {
                "seed": self.seed,
                "cycles": self.simulation.scheduler.cycle_count,
                "steps": self.steps,
                **({"cards": self.cards} if self.cards else {}),
            },
        }

    def to_json(self) -> str:
        """The document as one line of compact JSON (json's C encoder: a run of 20,000 pods
        prints in seconds, where indenting takes the pure-Python encoder and its memory)."""
        return json.dumps(self.document(), ensure_ascii=False, separators=(",", ":")) + "\n"


class _Runner:
    def __init__(self, scenario: Scenario, simulation: Simulation, seed: int, max_cycles: int):
        self.scenario = scenario
        self.simulation = simulation
        self.store: ClusterStore = simulation.store
        self.max_cycles = max_cycles
        self.recorder = Recorder(simulation)
        self.store.watch(self.recorder, first=True)
        self.run = ScenarioRun(scenario, simulation, seed, self.recorder.timeline)
        self._events_seen = 0
        self._amounts = AmountCache()

    def execute(self, keep_cards: bool, progress: Progress | None) -> ScenarioRun:
        done = False
        steps = self.scenario.steps()
        for number, major in enumerate(steps):
            if progress is not None:
                progress(number, len(steps))
            self.recorder.begin_step(major)
            at = self.scenario.time_of(major)
            if at is not None:
                self._run_until(at)
            try:
                for operation in self.scenario.at_step(major):
                    done = self._apply(operation) or done
            except OperationFailed as error:
                self.run.phase, self.run.message = PHASE_FAILED, str(error)
                self.run.step_phase = STEP_OPERATING
                self._close_step(major, keep_cards)
                return self.run
            if major == steps[-1] and self.scenario.until is not None:
                self._run_until(self.scenario.until)
            else:
                self.simulation.run(self.max_cycles)
            self._close_step(major, keep_cards)
            if done:
                break
        self.run.phase = PHASE_SUCCEEDED if done else PHASE_PAUSED
        self.run.message = self.simulation.outcome()
        if progress is not None:
            progress(len(steps), len(steps))
        return self.run

    def _close_step(self, major: int, keep_cards: bool) -> None:
        events = self.store.events[self._events_seen :]
        self._events_seen = len(self.store.events)
        attempts = Counter(e.object for e in events if e.reason in ATTEMPT_REASONS)
        nodes = [n for n in self.store.list_objects("Node") if isinstance(n, Node)]
        pods = self.store.pods()
        self.run.steps.append(
            step_figures(
                major=major,
                time=self.simulation.clock.now(),
                nodes=nodes,
                pods=pods,
                events=self.recorder.events,
                attempts=dict(attempts),
                cache=self._amounts,
            )
        )
        if keep_cards:
            self.run.cards.append(node_cards(nodes, pods, self._amounts))
        self.run.last_step = {"major": major, "minor": max(self.recorder.minor - 1, 0)}

    def _run_until(self, when: float) -> None:
        """Cycles, flushes and backoff in virtual time up to ``when``, the clock left there."""
        scheduler, clock = self.simulation.scheduler, self.simulation.clock
        cycles = 0
        while cycles < self.max_cycles:
            scheduler.run_due_work()
            if scheduler.schedule_one() is not None:
                cycles += 1
                continue
            if not scheduler.queue_was_empty:
                continue
            wakes = [
                w
                for w in (scheduler.next_wakeup(), scheduler.next_unschedulable_flush())
                if w is not None
            ]
            wake = min(wakes) if wakes else None
            if wake is None or wake > when:
                break
            clock.set(max(wake, clock.now()))
        clock.set(max(when, clock.now()))

    def _apply(self, operation: Operation) -> bool:
        """Makes the operation; True for a doneOperation."""
        if operation.type == DONE:
            self.recorder.add({"done": {"operation": operation.raw}}, operation.id)
            return True
        if operation.type == CREATE:
            assert operation.object is not None
            self._create(operation, operation.object)
        elif operation.type == PATCH:
            self._patch(operation)
        elif operation.type == DELETE:
            self._delete(operation)
        return False

    def _write(self, operation: Operation, write: Callable[[], Any]) -> None:
        self.recorder.expect(operation)
        try:
            write()
        finally:
            self.recorder.expect(None)

    def _create(self, operation: Operation, obj: KubeObject) -> None:
        kind = kind_of(obj)
        if self.store.get(kind, obj.key) is not None:
            resource = _resource(obj)
            raise OperationFailed(f'{resource} "{obj.name}" already exists')
        if isinstance(obj, Pod):
            classes = [
                c for c in self.store.list_objects("PriorityClass") if isinstance(c, PriorityClass)
            ]
            obj = admitted_objects([*classes, obj])[-1]
        self._write(operation, lambda: self.store.apply(obj))

    def _patch(self, operation: Operation) -> None:
        target = operation.target
        assert target is not None
        current = self.store.get(target.kind, target.key)
        if current is None:
            raise OperationFailed(
                f"{kind_info(target.api_version, target.kind).qualified_resource} "
                f'"{target.name}" not found'
            )
        before = current_manifest(current)
        try:
            after = apply_patch(before, operation.patch, operation.patch_type, target.kind)
        except PatchError as error:
            raise OperationFailed(f"operation {operation.id}: {error}") from None
        problem = _immutable(before, after, target.kind)
        if problem:
            raise OperationFailed(f'{target.kind} "{target.name}" is invalid: {problem}')
        try:
            patched = decode_object(after)
        except InvalidObjectError as error:
            raise OperationFailed(error.message) from None
        if after == before:
            self.recorder.add(_operation_event(operation, current), operation.id)
            return
        self._write(operation, lambda: self.store.apply(patched))

    def _delete(self, operation: Operation) -> None:
        target = operation.target
        assert target is not None
        try:
            self._write(operation, lambda: self.store.delete(target.kind, target.key))
        except NotFoundError:
            raise OperationFailed(
                f"{kind_info(target.api_version, target.kind).qualified_resource} "
                f'"{target.name}" not found'
            ) from None


def _resource(obj: KubeObject) -> str:
    manifest = current_manifest(obj)
    return kind_info(manifest["apiVersion"], manifest["kind"]).qualified_resource


IMMUTABLE_FIELDS = (
    ("apiVersion",),
    ("kind",),
    ("metadata", "name"),
    ("metadata", "namespace"),
    ("metadata", "uid"),
)


def _immutable(before: dict[str, Any], after: dict[str, Any], kind: str) -> str:
    """What the API server refuses of an update: a changed name, namespace, kind or uid, or a
    pod spec change ValidatePodUpdate forbids."""
    for path in (
        ("apiVersion",),
        ("kind",),
        ("metadata", "name"),
        ("metadata", "namespace"),
        ("metadata", "uid"),
    ):
        old, new = _at(before, path), _at(after, path)
        if old != new:
            field_name = ".".join(path)
            return f"{field_name}: Invalid value: {json.dumps(new)}: field is immutable"
    if kind == "Pod":
        return pod_update_error(before, after)
    return ""


def _at(document: dict[str, Any], path: Sequence[str]) -> Any:
    value: Any = document
    for key in path:
        value = value.get(key) if isinstance(value, dict) else None
    return value


def run_scenario(
    scenario: Scenario,
    *,
    seed: int = 0,
    config: KubeSchedulerConfiguration | None = None,
    registry: Registry | None = None,
    controllers: Sequence[Callable[[ClusterStore], None]] = (),
    encoded_traces: bool = True,
    keep_cards: bool = False,
    max_cycles: int = 1_000_000,
    extender_allowed_hosts: frozenset[str] | None = None,
    progress: Progress | None = None,
) -> ScenarioRun:
    """Runs the scenario on an empty cluster under ``config`` (the default configuration when
    None); the same scenario, seed and configuration always give the same run.
    ``progress(steps done, steps)`` is called before each major step and at the end."""
    simulation = new_simulation(
        Manifests(),
        seed=seed,
        registry=registry,
        config=config,
        capture_queue=False,
        encoded_traces=encoded_traces,
        controllers=controllers,
        extender_allowed_hosts=extender_allowed_hosts,
    )
    return _Runner(scenario, simulation, seed, max_cycles).execute(keep_cards, progress)
