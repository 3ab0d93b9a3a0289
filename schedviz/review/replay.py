"""The engine's cycle for each attempt the log records, on the state the dump gives.

The state before each attempt is the dump, carried forward by the log's own decisions, never
the replay's: pods the log schedules start unbound (a dump taken afterwards has them bound) and
are bound where the log says, in the log's order; the victims the log names are deleted after
the attempt that preempted them; the preemptor keeps the nomination the log gives it. One
``Scheduler`` and one ``ClusterStore`` live through the whole replay, so each attempt costs one
cycle and a few store writes (the cache's snapshot is updated incrementally), not a copy of the
world: 5000 nodes and 10,000 attempts fit in memory and in a minute.

``ReplayScheduler`` is the engine's ``Scheduler`` with four changes:

- only the pod under review enters the queue (the others wait in the store), so the queue pops
  exactly the pod the log tried next;
- preemption decides its victims but deletes nobody (``delete_pod``): the log says who went;
- the bind goes where the log says the real scheduler bound the pod, or is refused when the log
  says the attempt failed, so that the replay's choice never becomes the cluster's;
- after the cycle the pod leaves the queue again, its nomination kept in the nominator.
"""

from __future__ import annotations

import dataclasses
from collections import Counter
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any

from schedviz.kube.objects import POD_PENDING, KubeObject, Node, Pod, PriorityClass
from schedviz.review.timeline import RESULT_UNKNOWN, Attempt
from schedviz.scheduler.apis.config.types import KubeSchedulerConfiguration
from schedviz.scheduler.clock import VirtualClock
from schedviz.scheduler.framework.interface import Code, Status
from schedviz.scheduler.framework.runtime.registry import Registry
from schedviz.scheduler.framework.types import PodInfo
from schedviz.scheduler.scheduler import Scheduler
from schedviz.scheduler.store import ClusterStore
from schedviz.scheduler.trace import RESULT_ERROR, RESULT_SCHEDULED, CycleTrace
from schedviz.simulation.simulator import stored_objects

# The Bind refusal that keeps a pod pending where the log says its attempt failed.
NOT_BOUND_BY_LOG = (
    "not bound: the real scheduler's log records no bind for this attempt, so the replay "
    "leaves the pod pending"
)


@dataclass
class ReplayedCycle:
    """What the engine decided for one attempt, kept small: only the nodes the comparison can
    name (the log's and the replay's node, the nodes the log scored, a few others), so that
    10,000 attempts on 5000 nodes hold a few megabytes, not the cycles' gigabytes."""

    cycle: int
    result: str
    node: str
    message: str
    # The first nodes of the tie set, the log's node first when it is in it; its full size.
    tie_set: list[str]
    tie_count: int
    feasible: int
    evaluated: int
    total_nodes: int
    victims: list[str]
    nominated_node: str
    # node -> plugin -> weighted score, node -> total, for the nodes kept
    scores: dict[str, dict[str, int]]
    totals: dict[str, int]
    # node -> (plugin, reasons) of rejected nodes kept (the log's node, then the first few),
    # and how many nodes were rejected in all
    rejections: dict[str, tuple[str, tuple[str, ...]]]
    rejected: int
    # A few feasible nodes (the log's first when it is feasible), in the walk's order.
    feasible_sample: list[str]
    # The scoring plugins' weights, in the profile's order
    weights: dict[str, int]


@dataclass
class ReplayStep:
    """An attempt and its replay (``cycle`` None: the replay could not run it, ``skipped``
    says why)."""

    attempt: Attempt
    cycle: ReplayedCycle | None
    skipped: str = ""
    # What the dump held for the log's objects when the replay began.
    missing_victims: list[str] = field(default_factory=list)
    missing_node: str = ""


class ReplayScheduler(Scheduler):
    """The engine's scheduler, told by the log which pod to try and where it went."""

    target = ""
    log_bind = ""
    replay_bind = ""

    def add_pod_to_scheduling_queue(self, pod: Pod) -> None:
        if pod.key == self.target:
            super().add_pod_to_scheduling_queue(pod)

    def update_pod_in_scheduling_queue(self, old: Pod, new: Pod) -> None:
        if new.key == self.target:
            super().update_pod_in_scheduling_queue(old, new)

    def delete_pod(self, pod: Pod) -> None:
        """Preemption's victims stay until the log says they went."""

    def bind_pod(self, pod: Pod, node_name: str) -> Status | None:
        self.replay_bind = node_name
        if not self.log_bind:
            return Status(Code.Error, (NOT_BOUND_BY_LOG,))
        return self.store.bind(pod, self.log_bind)


def _unbound(pod: Pod) -> Pod:
    return dataclasses.replace(
        pod, node_name="", phase=POD_PENDING, conditions=(), nominated_node_name=""
    )


class Replay:
    """The replay of a timeline's attempts, one at a time, in the log's order."""

    def __init__(
        self,
        objects: Sequence[KubeObject],
        attempts: Sequence[Attempt],
        config: KubeSchedulerConfiguration,
        registry: Registry,
        *,
        emit: Callable[[CycleTrace], None] | None = None,
    ) -> None:
        self.start_time = min((attempt.time for attempt in attempts), default=0.0)
        logged = {attempt.pod for attempt in attempts}
        # Pods bound in the dump that the log schedules: the dump was taken afterwards.
        self.unbound: dict[str, str] = {}
        prepared: list[KubeObject] = []
        for obj in stored_objects(list(objects)):
            if isinstance(obj, Pod) and obj.key in logged and obj.node_name:
                self.unbound[obj.key] = obj.node_name
                obj = _unbound(obj)
            prepared.append(obj)
        self.pods_in_dump = {obj.key for obj in prepared if isinstance(obj, Pod)}
        self.nodes_in_dump = {obj.name for obj in prepared if isinstance(obj, Node)}
        self.priority_classes = [obj for obj in prepared if isinstance(obj, PriorityClass)]
        self.clock = VirtualClock()
        self.store = ClusterStore(prepared, now=self.clock.now)
        self.scheduler = ReplayScheduler(
            config, registry, self.store, self.clock, emit=emit, capture_queue=False
        )
        for pod in self.store.pods():
            if not pod.node_name and pod.nominated_node_name:
                self.scheduler.queue.add_nominated_pod(PodInfo(pod), None)

    def run(self, attempts: Iterable[Attempt]) -> Iterable[ReplayStep]:
        for attempt in attempts:
            yield self.step(attempt)

    def step(self, attempt: Attempt) -> ReplayStep:
        missing_victims = [v for v in attempt.victims if v not in self.pods_in_dump]
        missing_node = (
            attempt.node if attempt.node and attempt.node not in self.nodes_in_dump else ""
        )
        step = ReplayStep(attempt, None, missing_victims=missing_victims, missing_node=missing_node)
        pod = self.store.get("Pod", attempt.pod)
        if not isinstance(pod, Pod):
            step.skipped = f"the dump lacks pod {attempt.pod}: the replay cannot run its cycle"
            self._apply_log(attempt, None)
            return step
        if pod.node_name:
            step.skipped = (
                f"{attempt.pod} is already bound to {pod.node_name} at this point of the log"
            )
            self._apply_log(attempt, None)
            return step
        when = max(self.clock.now(), attempt.time - self.start_time)
        self.clock.set(when)
        scheduler = self.scheduler
        scheduler.target = pod.key
        scheduler.log_bind = attempt.node if attempt.result == RESULT_SCHEDULED else ""
        scheduler.replay_bind = ""
        try:
            scheduler.add_pod_to_scheduling_queue(pod)
            trace = scheduler.schedule_one()
        finally:
            scheduler.target = ""
        if trace is None or trace.pod != pod.key:
            step.skipped = (
                f"the engine did not try {pod.key}: PreEnqueue keeps it out of activeQ "
                "(schedulingGates, or a plugin's PreEnqueue) or it is not this scheduler's"
            )
        else:
            step.cycle = _replayed(trace, scheduler.replay_bind, attempt)
        self._apply_log(attempt, self.store.get("Pod", attempt.pod))
        return step

    def _apply_log(self, attempt: Attempt, pod: Pod | None) -> None:
        """The real scheduler's decision, made the cluster's: the bind where the replay did not
        bind, the victims deleted, the preemptor's nomination as logged."""
        store = self.store
        if attempt.result == RESULT_UNKNOWN:
            return
        if (
            isinstance(pod, Pod)
            and not pod.node_name
            and attempt.result == RESULT_SCHEDULED
            and attempt.node in self.nodes_in_dump
        ):
            self.scheduler.queue.delete(pod)
            store.bind(pod, attempt.node)
        for victim in attempt.victims:
            if store.get("Pod", victim) is not None:
                store.delete("Pod", victim)
        current = store.get("Pod", attempt.pod)
        if not isinstance(current, Pod) or current.node_name:
            return
        if current.nominated_node_name != attempt.nominated_node:
            current = store.update_pod_status(current, None, attempt.nominated_node) or current
        self.scheduler.queue.delete(current)
        if current.nominated_node_name:
            self.scheduler.queue.add_nominated_pod(PodInfo(current), None)


# How many nodes of each kind a replayed cycle keeps beyond those the log names.
KEPT_NODES = 5


def _replayed(trace: CycleTrace, replay_bind: str, attempt: Attempt) -> ReplayedCycle:
    result, node, message = trace.result, trace.selected_node, trace.message
    if result == RESULT_ERROR and NOT_BOUND_BY_LOG in message:
        # The engine chose a node; only the bind was refused to follow the log.
        result, node = RESULT_SCHEDULED, replay_bind or trace.selected_node
        message = f"Successfully assigned {trace.pod} to {node}"
        trace.result, trace.message = result, message
        trace.events = [event for event in trace.events if event["reason"] != "FailedScheduling"]
    elif result == RESULT_SCHEDULED:
        node = replay_bind or node
    named = {attempt.node, node, *attempt.scores, *attempt.totals} - {""}
    scores: dict[str, dict[str, int]] = {}
    totals: dict[str, int] = {}
    score_nodes = trace.score_nodes
    positions = (
        {name: index for index, name in enumerate(score_nodes)}
        if len(named) > KEPT_NODES
        else {name: score_nodes.index(name) for name in named if name in score_nodes}
    )
    for name in named:
        index = positions.get(name)
        if index is None:
            continue
        scores[name] = {
            plugin: trace.normalized_scores[column][index] * weight
            for column, (plugin, weight) in enumerate(trace.score_plugins)
        }
        totals[name] = trace.totals[index]
    sample = [name for name in score_nodes[: KEPT_NODES + 1] if name != attempt.node]
    if not score_nodes and node:
        sample.append(node)
    feasible_sample = sorted(sample[:KEPT_NODES])
    if attempt.node and (attempt.node in scores or attempt.node == node):
        feasible_sample.insert(0, attempt.node)
    rejections, rejected = _rejections(trace, named)
    tie_set = list(trace.tie_set) or ([node] if node else [])
    kept_ties = tie_set[:KEPT_NODES]
    if attempt.node in tie_set and attempt.node not in kept_ties:
        kept_ties.insert(0, attempt.node)
    preemption: dict[str, Any] = trace.preemption or {}
    victims = preemption.get("victims") or []
    return ReplayedCycle(
        cycle=trace.cycle,
        result=result,
        node=node,
        message=message,
        tie_set=kept_ties,
        tie_count=len(tie_set),
        feasible=trace.feasible_nodes,
        evaluated=trace.evaluated_nodes,
        total_nodes=len(trace.all_nodes),
        victims=[str(victim) for victim in victims],
        nominated_node=trace.nominated_node,
        scores=scores,
        totals=totals,
        rejections=rejections,
        rejected=rejected,
        feasible_sample=feasible_sample,
        weights=dict(trace.score_plugins),
    )


def _rejections(
    trace: CycleTrace, named: set[str]
) -> tuple[dict[str, tuple[str, tuple[str, ...]]], int]:
    """The rejected nodes kept (the ``named`` ones, and the first few of each distinct
    rejection, in the walk's order) and how many were rejected, read from the walk's columns
    when it left them (no per-node dict)."""
    kept: dict[str, tuple[str, tuple[str, ...]]] = {}
    per_reason: Counter[tuple[str, tuple[str, ...]]] = Counter()
    rejected = 0

    def keep(name: str, status: Status) -> None:
        verdict = (status.plugin, tuple(status.reasons))
        if name in named or per_reason[verdict] < KEPT_NODES:
            per_reason[verdict] += 1
            kept[name] = verdict

    columns = trace.filter_columns
    if columns is not None:
        names = columns.names
        for row, status in zip(columns.rows, columns.statuses, strict=True):
            if status is not None:
                rejected += 1
                keep(names[row], status)
    else:
        for name, (_, status) in trace.filter_results.items():
            if status is not None:
                rejected += 1
                keep(name, status)
    pre_filter = trace.pre_filter_status
    if pre_filter is not None:
        # PreFilter cut the nodes outside its result, or rejected the pod on every node.
        kept_nodes = trace.pre_filter_nodes
        if kept_nodes is None and not trace.filtered_count():
            kept_nodes = frozenset()
        if kept_nodes is not None:
            for name in trace.all_nodes:
                if name not in kept_nodes and name not in kept:
                    rejected += 1
                    keep(name, pre_filter)
    return kept, rejected
