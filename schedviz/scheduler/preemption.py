"""Preemption: find pods whose removal lets a pod fit, pick one node, and evict them.

Mirrors pkg/scheduler/framework/preemption/preemption.go (v1.34/v1.35): the ``Evaluator`` with
``Preempt``, ``findCandidates``, ``DryRunPreemption``, ``SelectCandidate``,
``pickOneNodeForPreemption`` (its criteria in upstream's order), ``prepareCandidate`` and
``getLowerPriorityNominatedPods``; and from pkg/scheduler/util/utils.go ``MoreImportantPod``,
``GetPodStartTime`` and ``GetEarliestPodStartTime``. A plugin (DefaultPreemption) supplies the
policy through ``PreemptionInterface``, as upstream's ``preemption.Interface``. ``callExtenders``
hands the candidates to the extenders that support preemption (schedviz/scheduler/extender.py).

Async preemption (SchedulerAsyncPreemption, beta and on in v1.34) as upstream runs it:
``prepare_candidate_async`` leaves out the victims already terminating and returns at once when
none is left (no API call, no nomination cleared); otherwise it marks the preemptor as preempting
and hands a goroutine to the scheduler. In virtual time a goroutine runs at a well-defined step:
right after the scheduling cycle that started it ends, that is after handleSchedulingFailure has
recorded FailedScheduling, put the nomination in the nominator, patched the pod's status and
sent the preemptor back to the queue, and before the next pop (``ScheduleOne.run_async_work``).
Upstream's goroutine races that code, but its API round trips take milliseconds where the rest
of the cycle takes microseconds, so this is the order a real cluster shows. The goroutine, in
upstream's order: clear the nominations of lower-priority pods nominated to the node (through the
API cacher, SchedulerAsyncAPICalls), preempt every victim but the last, stop gating the
preemptor (DefaultPreemption's PreEnqueue: "waiting for the preemption for this pod to be
finished"), preempt the last victim, and activate the preemptor if an API call failed. Each
step is recorded in the trace (``preemption.asyncSteps``), the victims' deletions reach the
queue as the watch delivers them. ``enable_async_preemption=False`` gives the synchronous
``prepareCandidate`` (evict, then clear nominations, before PostFilter returns).

Deliberately different:
- The framework has no ``Extenders()``: the evaluator takes the extenders of the scheduler the
  framework was built with (its ``handle``). The candidates an extender keeps stay in dry-run
  order (upstream rebuilds them from a Go map, in random order).
- The dry run walks the nodes one by one (parallelism 1) from the offset, so it stops exactly when
  enough candidates are found. Upstream breaks ties left by every criterion with the first node of
  a Go map iteration (random); here it is the first candidate in dry-run order.
- The preemptor is not re-read from the informer: the queue's copy is already the latest.
- A pod's start time is ``status.startTime`` from its manifest; a pod without one counts as
  started "now", later than every pod that has one (upstream calls ``time.Now()``). Two such
  pods compare as upstream's calls do: each more important than the other (``sort.Slice`` then
  moves them as Go's sort does, see ``gosort``). For pickOneNodeForPreemption's last criterion
  they tie, where upstream's later calls of ``time.Now()`` favour the node evaluated last in
  its (random) map order.
- Pods are identified by ``namespace/name`` where upstream uses the UID.
- The dry run copies a node and the cycle state only where the plugin cannot select victims
  without (``VictimsSelectorProvider``, not in upstream): DefaultPreemption's
  ``victims_selector`` reads the node as it is when the cycle's filters read nothing of a node
  but the node itself or its pods' count and total requests, and gives the same victims and
  statuses. The walk itself, its order and its stop are upstream's either way.
- The PDBs are listed once per attempt and indexed by namespace with their selectors parsed
  (``PodDisruptionBudgets``), where upstream scans them all for every pod of every node.
- ``sort_by_importance`` reads each pod's priority and start time once before Go's sort, where
  upstream reads them at every comparison: the same answers, so the same swaps; the order the
  sort leaves is kept by those keys, for the next pods alike.
"""

from __future__ import annotations

import functools
import math
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from typing import Any, Protocol

from schedviz.kube.labels import Selector, as_selector
from schedviz.kube.objects import Pod, PodCondition, PodDisruptionBudget
from schedviz.scheduler.framework.cycle_state import CycleState
from schedviz.scheduler.framework.interface import (
    Code,
    NodeInfoLister,
    NominatingInfo,
    ObjectLister,
    PostFilterResult,
    Status,
    as_status,
    is_success,
)
from schedviz.scheduler.framework.types import Diagnosis, FitError, NodeInfo, NodeToStatus, PodInfo
from schedviz.scheduler.gosort import sort_slice

# Messages, as upstream words them.
MSG_NO_CANDIDATE = "no candidate node for preemption"
MSG_NOT_HELPFUL = "Preemption is not helpful for scheduling"
MSG_NO_NODES = "no nodes available"
# The condition set on a victim before it is deleted (v1.DisruptionTarget).
CONDITION_DISRUPTION_TARGET = "DisruptionTarget"
REASON_PREEMPTION_BY_SCHEDULER = "PreemptionByScheduler"
EVENT_REASON_PREEMPTED = "Preempted"

# What decided pickOneNodeForPreemption, for traces.
CRITERION_ONLY_CANDIDATE = "only candidate"
CRITERION_FIRST_CANDIDATE = "first candidate"
DEFAULT_CRITERIA = (
    "fewest PDB violations",
    "lowest highest-priority victim",
    "smallest sum of victim priorities",
    "fewest victims",
    "latest start time of highest-priority victims",
)

# MaxInt32 + 1: added to every priority summed, so negative priorities still add up.
_PRIORITY_OFFSET = 2**31
_EPOCH = datetime(1970, 1, 1, tzinfo=UTC)

ScoreFunc = Callable[[str], float]


# ---------------------------------------------------------------------------------------------
# Candidates


@dataclass(slots=True)
class Victims:
    """The pods to preempt on one node, most important first (extenderv1.Victims)."""

    pods: list[Pod]
    num_pdb_violations: int = 0


@dataclass(slots=True)
class Candidate:
    """A node the preemptor could run on once ``victims`` are gone."""

    name: str
    victims: Victims

    def to_json(self) -> dict[str, Any]:
        return {
            "node": self.name,
            "victims": [pod.key for pod in self.victims.pods],
            "numPDBViolations": self.victims.num_pdb_violations,
        }


@dataclass(slots=True)
class PreemptionDetails:
    """What a preemption attempt saw and decided, for the cycle's trace."""

    candidates: list[Candidate] = field(default_factory=list)
    nominated_node: str = ""
    criterion: str = ""
    victims: list[str] = field(default_factory=list)
    # Nodes the dry run rejected, with the reasons.
    node_statuses: dict[str, str] = field(default_factory=dict)
    offset: int = 0
    num_candidates: int = 0
    events: list[dict[str, str]] = field(default_factory=list)
    # What async preemption did after the cycle, in order (``{"action", "pod"}``).
    async_steps: list[dict[str, str]] = field(default_factory=list)

    def to_json(self) -> dict[str, Any]:
        return {
            "nominatedNode": self.nominated_node or None,
            "victims": list(self.victims),
            "candidates": [candidate.to_json() for candidate in self.candidates],
            "criterion": self.criterion or None,
            "nodeStatuses": dict(self.node_statuses),
            "offset": self.offset,
            "numCandidates": self.num_candidates,
            "events": [dict(event) for event in self.events],
            "asyncSteps": [dict(step) for step in self.async_steps],
        }


@dataclass(slots=True)
class PreemptionPostFilterResult(PostFilterResult):
    """A PostFilterResult that also carries the attempt's details for the trace."""

    details: PreemptionDetails | None = None


# ---------------------------------------------------------------------------------------------
# What the evaluator needs from the plugin and from the framework


class PreemptionInterface(Protocol):
    """The policy a preemption plugin supplies (upstream ``preemption.Interface``)."""

    def get_offset_and_num_candidates(self, num_nodes: int) -> tuple[int, int]: ...

    def candidates_to_victims_map(self, candidates: Sequence[Candidate]) -> dict[str, Victims]: ...

    def pod_eligible_to_preempt_others(
        self, pod: Pod, nominated_node_status: Status | None
    ) -> tuple[bool, str]: ...

    def select_victims_on_node(
        self,
        state: CycleState,
        pod: Pod,
        node_info: NodeInfo,
        pdbs: Sequence[PodDisruptionBudget],
    ) -> tuple[list[Pod], int, Status | None]: ...

    def ordered_score_funcs(self, nodes_to_victims: dict[str, Victims]) -> list[ScoreFunc]: ...


# A plugin's victim selection on one node that reads the node and the cycle state without
# changing them (so the dry run need not copy them); None where it cannot tell, and the dry run
# then asks ``select_victims_on_node`` on copies.
VictimsSelector = Callable[
    [NodeInfo, Sequence[PodDisruptionBudget]], tuple[list[Pod], int, Status | None] | None
]


class VictimsSelectorProvider(Protocol):
    """What a PreemptionInterface may also offer: not in upstream (see the module docstring)."""

    def victims_selector(self, state: CycleState, pod: Pod) -> VictimsSelector | None:
        """For one dry run: a selector giving exactly what ``select_victims_on_node`` gives on
        copies of the node and the state, or None when it never can this cycle."""
        ...


class PreemptionExtender(Protocol):
    """The part of upstream's ``framework.Extender`` preemption uses."""

    def name(self) -> str: ...

    def is_ignorable(self) -> bool: ...

    def supports_preemption(self) -> bool: ...

    def is_interested(self, pod: Pod) -> bool: ...

    def process_preemption(
        self, pod: Pod, node_name_to_victims: dict[str, Victims], node_infos: NodeInfoLister
    ) -> dict[str, Victims]: ...


class WaitingPodLike(Protocol):
    def reject(self, plugin: str, message: str) -> None: ...


class PreemptionHandle(Protocol):
    """The parts of the framework handle preemption uses (the Framework provides them all)."""

    def snapshot_shared_lister(self) -> NodeInfoLister: ...

    @property
    def objects(self) -> ObjectLister: ...

    def nominated_pods_for_node(self, node_name: str) -> list[PodInfo]: ...

    def get_waiting_pod(self, pod_key: str) -> WaitingPodLike | None: ...

    def delete_pod(self, pod: Pod) -> None: ...

    def record_event(self, type_: str, reason: str, pod: Pod, message: str) -> object: ...

    def patch_pod_status(
        self, pod: Pod, condition: PodCondition | None, nominated_node_name: str | None
    ) -> Pod | None: ...

    def run_filter_plugins_with_nominated_pods(
        self, state: CycleState, pod: Pod, node_info: NodeInfo
    ) -> Status | None: ...

    def run_pre_filter_extension_add_pod(
        self, state: CycleState, pod: Pod, pod_info_to_add: PodInfo, node_info: NodeInfo
    ) -> Status | None: ...

    def run_pre_filter_extension_remove_pod(
        self, state: CycleState, pod: Pod, pod_info_to_remove: PodInfo, node_info: NodeInfo
    ) -> Status | None: ...

    def run_async(self, work: Callable[[], None]) -> None:
        """Runs ``work`` as a goroutine: after the current scheduling cycle."""
        ...

    def activate(self, pods: Mapping[str, Pod]) -> None:
        """Moves the pods to activeQ (upstream ``Handle.Activate``)."""
        ...


# ---------------------------------------------------------------------------------------------
# The evaluator


class Evaluator:
    """Runs preemption for one plugin (upstream ``preemption.Evaluator``)."""

    def __init__(
        self,
        plugin_name: str,
        handle: PreemptionHandle,
        interface: PreemptionInterface,
        *,
        enable_async_preemption: bool = True,
    ) -> None:
        self.plugin_name = plugin_name
        self.handle = handle
        self.interface = interface
        self.enable_async_preemption = enable_async_preemption
        # The preemptors whose goroutine has not released them yet (upstream ``preempting``).
        self.preempting: set[str] = set()

    def is_pod_running_preemption(self, pod_key: str) -> bool:
        """Whether the pod's async preemption still runs (upstream ``IsPodRunningPreemption``)."""
        return pod_key in self.preempting

    def preempt(
        self, state: CycleState, pod: Pod, node_to_status: NodeToStatus
    ) -> tuple[PreemptionPostFilterResult | None, Status | None]:
        """Upstream ``Preempt``: a result with the nominated node, and the status.

        ``(None, Error)`` is a transient failure and ``(None, Unschedulable)`` means the pod
        cannot preempt now: both leave the pod's nomination as it is. A result with an empty
        nominated node and ``Unschedulable`` clears it: preemption cannot help.
        """
        nominated_status = node_to_status.get(pod.nominated_node_name)
        eligible, message = self.interface.pod_eligible_to_preempt_others(pod, nominated_status)
        if not eligible:
            return None, Status(Code.Unschedulable, (message,))

        all_nodes = list(self.handle.snapshot_shared_lister().list())
        details = PreemptionDetails()
        candidates, statuses, error = self.find_candidates(
            state, all_nodes, pod, node_to_status, details
        )
        if error and not candidates:
            return None, as_status(error)
        details.candidates = list(candidates)
        details.node_statuses = {name: status.message() for name, status in statuses.items()}

        if not candidates:
            statuses.absent_nodes_status = Status(
                Code.UnschedulableAndUnresolvable, (MSG_NOT_HELPFUL,)
            )
            fit_error = FitError(pod, len(all_nodes), Diagnosis(node_to_status=statuses))
            result = PreemptionPostFilterResult(NominatingInfo("", mode_override=True), details)
            return result, Status(Code.Unschedulable, (str(fit_error),))

        candidates, status = self.call_extenders(pod, candidates)
        if not is_success(status):
            return None, status

        best, criterion = self.select_candidate(candidates)
        if best is None or not best.name:
            return None, Status(Code.Unschedulable, (MSG_NO_CANDIDATE,))
        details.nominated_node = best.name
        details.criterion = criterion

        if self.enable_async_preemption:
            self.prepare_candidate_async(best, pod, self.plugin_name, details)
        else:
            status = self.prepare_candidate(best, pod, self.plugin_name, details)
            if not is_success(status):
                return None, status
        return PreemptionPostFilterResult(NominatingInfo(best.name, True), details), None

    def find_candidates(
        self,
        state: CycleState,
        all_nodes: list[NodeInfo],
        pod: Pod,
        node_to_status: NodeToStatus,
        details: PreemptionDetails | None = None,
    ) -> tuple[list[Candidate], NodeToStatus, str | None]:
        """The candidates among the nodes Filter found Unschedulable (not Unresolvable)."""
        if not all_nodes:
            return [], NodeToStatus(), MSG_NO_NODES
        potential = node_to_status.nodes_for_status_code(all_nodes, Code.Unschedulable)
        if not potential:
            return [], NodeToStatus(), None
        pdbs = pod_disruption_budgets(self.handle.objects)
        offset, num_candidates = self.interface.get_offset_and_num_candidates(len(potential))
        if details is not None:
            details.offset = offset
            details.num_candidates = num_candidates
        return self.dry_run_preemption(state, pod, potential, pdbs, offset, num_candidates)

    def dry_run_preemption(
        self,
        state: CycleState,
        pod: Pod,
        potential_nodes: Sequence[NodeInfo],
        pdbs: Sequence[PodDisruptionBudget],
        offset: int,
        num_candidates: int,
    ) -> tuple[list[Candidate], NodeToStatus, str | None]:
        """Selects victims on copies of the nodes, from ``offset`` round the list.

        Stops once ``num_candidates`` candidates are found and at least one of them violates no
        PodDisruptionBudget; candidates without violations come first.
        """
        non_violating: list[Candidate] = []
        violating: list[Candidate] = []
        statuses = NodeToStatus()
        errors: list[str] = []
        count = len(potential_nodes)
        provider = getattr(self.interface, "victims_selector", None)
        quick: VictimsSelector | None = provider(state, pod) if provider is not None else None
        select = self.interface.select_victims_on_node
        for index in range(count):
            node_info = potential_nodes[(offset + index) % count]
            name = node_info.name
            selected = quick(node_info, pdbs) if quick is not None else None
            if selected is None:
                selected = select(state.clone(), pod, node_info.snapshot(), pdbs)
            pods, num_violations, status = selected
            if is_success(status) and pods:
                candidate = Candidate(name, Victims(pods, num_violations))
                bucket = non_violating if num_violations == 0 else violating
                if len(bucket) < num_candidates:
                    bucket.append(candidate)
                if non_violating and len(non_violating) + len(violating) >= num_candidates:
                    break
                continue
            if status is None or status.is_success():
                status = as_status(f'expected at least one victim pod on node "{name}"')
            if status.code == Code.Error:
                errors.append(status.as_error())
            statuses.set(name, status)
        return non_violating + violating, statuses, aggregate_errors(errors)

    def extenders(self) -> list[PreemptionExtender]:
        scheduler = getattr(self.handle, "handle", self.handle)
        return list(getattr(scheduler, "extenders", ()))

    def call_extenders(
        self, pod: Pod, candidates: list[Candidate]
    ) -> tuple[list[Candidate], Status | None]:
        """The candidates the interested preempting extenders keep, in turn."""
        extenders = self.extenders()
        if not extenders:
            return candidates, None
        victims_map = self.interface.candidates_to_victims_map(candidates)
        if not victims_map:
            return candidates, None
        node_infos = self.handle.snapshot_shared_lister()
        for extender in extenders:
            if not extender.supports_preemption() or not extender.is_interested(pod):
                continue
            try:
                node_name_to_victims = extender.process_preemption(pod, victims_map, node_infos)
            except Exception as error:  # the extender's error, as upstream's err
                if extender.is_ignorable():
                    continue
                return [], as_status(error)
            for node_name, victims in list(node_name_to_victims.items()):
                if victims.pods:
                    continue
                if extender.is_ignorable():
                    del node_name_to_victims[node_name]
                    continue
                return [], as_status(f'expected at least one victim pod on node "{node_name}"')
            victims_map = node_name_to_victims
            if not victims_map:
                break
        order = {candidate.name: index for index, candidate in enumerate(candidates)}
        names = sorted(victims_map, key=lambda name: order.get(name, len(order)))
        return [Candidate(name, victims_map[name]) for name in names], None

    def select_candidate(self, candidates: Sequence[Candidate]) -> tuple[Candidate | None, str]:
        """The best candidate, and the criterion that decided (upstream ``SelectCandidate``)."""
        if not candidates:
            return None, ""
        if len(candidates) == 1:
            return candidates[0], CRITERION_ONLY_CANDIDATE
        victims_map = self.interface.candidates_to_victims_map(candidates)
        score_funcs = self.interface.ordered_score_funcs(victims_map)
        node, criterion = pick_one_node_for_preemption(victims_map, score_funcs)
        victims = victims_map.get(node)
        if victims is not None:
            return Candidate(node, victims), criterion
        # Unreachable with in-tree plugins; upstream falls back to the first candidate too.
        return candidates[0], CRITERION_FIRST_CANDIDATE

    def prepare_candidate(
        self,
        candidate: Candidate,
        pod: Pod,
        plugin_name: str,
        details: PreemptionDetails | None = None,
    ) -> Status | None:
        """Evicts the victims and clears lower-priority nominations on the node."""
        nominated = get_lower_priority_nominated_pods(self.handle, pod, candidate.name)
        self._clear_nominated_node_name(nominated)
        for victim in candidate.victims.pods:
            if details is not None:
                details.victims.append(victim.key)
            if victim.deletion_timestamp:
                # Graceful deletion already started: nothing more to ask of the API.
                continue
            error = self.preempt_pod(candidate, pod, victim, plugin_name, details)
            if error is not None:
                return as_status(error)
        return None

    def prepare_candidate_async(
        self,
        candidate: Candidate,
        pod: Pod,
        plugin_name: str,
        details: PreemptionDetails | None = None,
    ) -> None:
        """Starts the goroutine that evicts the victims (upstream ``prepareCandidateAsync``).

        Victims already terminating need no API call; when none is left, nothing is started:
        no nomination is cleared and the preemptor is not held back.
        """
        victims: list[Pod] = []
        for victim in candidate.victims.pods:
            if details is not None:
                details.victims.append(victim.key)
            if victim.deletion_timestamp:
                # Graceful deletion already started: no API call for it.
                _step(details, "VictimAlreadyTerminating", victim)
                continue
            victims.append(victim)
        if not victims:
            return
        self.preempting.add(pod.key)

        def preempt(victim: Pod) -> bool:
            _step(details, "PreemptVictim", victim)
            return self.preempt_pod(candidate, pod, victim, plugin_name, details) is not None

        def goroutine() -> None:
            failed = False
            # Lower-priority pods nominated to the node may no longer fit there: clear their
            # nomination, so they look for another place sooner.
            for nominated in get_lower_priority_nominated_pods(self.handle, pod, candidate.name):
                _step(details, "ClearNominatedNodeName", nominated)
                self.handle.patch_pod_status(nominated, None, "")
            # Every victim but the last (in parallel upstream), then release the preemptor, so
            # that the last deletion's event finds it no longer held back at PreEnqueue.
            for victim in victims[:-1]:
                failed |= preempt(victim)
            self.preempting.discard(pod.key)
            _step(details, "PreemptionReleased", pod)
            failed |= preempt(victims[-1])
            if failed:
                # The pod might wait in the unschedulable pool for ever: move it to activeQ.
                _step(details, "Activate", pod)
                self.handle.activate({pod.name: pod})

        self.handle.run_async(goroutine)

    def preempt_pod(
        self,
        candidate: Candidate,
        preemptor: Pod,
        victim: Pod,
        plugin_name: str,
        details: PreemptionDetails | None = None,
    ) -> str | None:
        """Rejects a victim held at Permit, or marks it DisruptionTarget and deletes it.

        Returns the API error, if any; a victim already gone is not an error.
        """
        waiting = self.handle.get_waiting_pod(victim.key)
        if waiting is not None:
            waiting.reject(plugin_name, "preempted")
        else:
            condition = PodCondition(
                CONDITION_DISRUPTION_TARGET,
                "True",
                REASON_PREEMPTION_BY_SCHEDULER,
                f"{preemptor.scheduler_name}: preempting to accommodate a higher priority pod",
            )
            if self.handle.patch_pod_status(victim, condition, None) is None:
                return None  # The victim is already gone.
            try:
                self.handle.delete_pod(victim)
            except LookupError:
                return None
            except Exception as error:  # the API refused: upstream returns the error
                return str(error)
        message = f"Preempted by pod {preemptor.uid or preemptor.key} on node {candidate.name}"
        self.handle.record_event("Normal", EVENT_REASON_PREEMPTED, victim, message)
        if details is not None:
            details.events.append(
                {
                    "type": "Normal",
                    "reason": EVENT_REASON_PREEMPTED,
                    "object": victim.key,
                    "message": message,
                }
            )
        return None

    def _clear_nominated_node_name(self, pods: Sequence[Pod]) -> None:
        for nominated in pods:
            self.handle.patch_pod_status(nominated, None, "")


def _step(details: PreemptionDetails | None, action: str, pod: Pod) -> None:
    if details is not None:
        details.async_steps.append({"action": action, "pod": pod.key})


# ---------------------------------------------------------------------------------------------
# Choosing among candidates


def pick_one_node_for_preemption(
    nodes_to_victims: dict[str, Victims], score_funcs: Sequence[ScoreFunc] | None = None
) -> tuple[str, str]:
    """The node to preempt on, and the criterion that singled it out.

    Without score functions, upstream's criteria in order: fewest PDB violations; lowest
    highest-priority victim; smallest sum of victim priorities; fewest victims; latest start time
    of the highest-priority victims; then the first candidate. Victims are most important first.
    """
    if not nodes_to_victims:
        return "", ""
    candidates = list(nodes_to_victims)
    if score_funcs:
        funcs = list(score_funcs)
        names = [f"score function {index + 1}" for index in range(len(funcs))]
    else:
        funcs = default_score_funcs(nodes_to_victims)
        names = list(DEFAULT_CRITERIA)
    for func, criterion in zip(funcs, names, strict=True):
        best = -math.inf
        selected: list[str] = []
        for node in candidates:
            score = func(node)
            if score > best:
                best = score
                selected = []
            if score == best:
                selected.append(node)
        if len(selected) == 1:
            return selected[0], criterion
        candidates = selected
    return candidates[0], CRITERION_FIRST_CANDIDATE


def default_score_funcs(nodes_to_victims: dict[str, Victims]) -> list[ScoreFunc]:
    def fewest_pdb_violations(node: str) -> float:
        return -nodes_to_victims[node].num_pdb_violations

    def lowest_highest_priority(node: str) -> float:
        return -nodes_to_victims[node].pods[0].effective_priority

    def smallest_priority_sum(node: str) -> float:
        pods = nodes_to_victims[node].pods
        return -sum(p.effective_priority + _PRIORITY_OFFSET for p in pods)

    def fewest_victims(node: str) -> float:
        return -len(nodes_to_victims[node].pods)

    def latest_start_time(node: str) -> float:
        earliest = get_earliest_pod_start_time(nodes_to_victims[node])
        return -math.inf if earliest is None else earliest

    return [
        fewest_pdb_violations,
        lowest_highest_priority,
        smallest_priority_sum,
        fewest_victims,
        latest_start_time,
    ]


def get_lower_priority_nominated_pods(
    handle: PreemptionHandle, pod: Pod, node_name: str
) -> list[Pod]:
    """Pods nominated to ``node_name`` with lower priority than ``pod``: they may not fit now."""
    priority = pod.effective_priority
    return [
        info.pod
        for info in handle.nominated_pods_for_node(node_name)
        if info.pod.effective_priority < priority
    ]


def pod_disruption_budgets(objects: ObjectLister) -> PodDisruptionBudgets:
    return PodDisruptionBudgets(
        pdb
        for pdb in objects.list_objects("PodDisruptionBudget")
        if isinstance(pdb, PodDisruptionBudget)
    )


class PodDisruptionBudgets(Sequence[PodDisruptionBudget]):
    """The PDBs one preemption attempt reads, in the lister's order, indexed by namespace with
    what ``filter_pods_with_pdb_violation`` reads of each worked out once: its parsed selector
    and the pods its status lists as disrupted. Not in upstream, which scans every PDB for
    every pod of every node the dry run visits. A PDB whose selector is nil or empty matches no
    pod and is left out of the index."""

    __slots__ = ("_pdbs", "by_namespace")

    def __init__(self, pdbs: Iterable[PodDisruptionBudget] = ()) -> None:
        self._pdbs = list(pdbs)
        # namespace -> (position in the list, selector, disrupted pods by name) of its PDBs
        self.by_namespace: dict[str, list[tuple[int, Selector, Mapping[str, object]]]] = {}
        for index, pdb in enumerate(self._pdbs):
            selector = as_selector(pdb.selector)
            if selector.empty:
                continue
            entry = (index, selector, disrupted_pods(pdb))
            self.by_namespace.setdefault(pdb.namespace, []).append(entry)

    def __len__(self) -> int:
        return len(self._pdbs)

    def __getitem__(self, index: int) -> PodDisruptionBudget:  # type: ignore[override]
        return self._pdbs[index]

    def __iter__(self) -> Iterator[PodDisruptionBudget]:
        return iter(self._pdbs)


def disrupted_pods(pdb: PodDisruptionBudget) -> Mapping[str, object]:
    """``status.disruptedPods``: pods the API server has counted as disrupted, by name."""
    status = pdb.manifest.get("status") if isinstance(pdb.manifest, dict) else None
    disrupted = status.get("disruptedPods") if isinstance(status, dict) else None
    return disrupted if isinstance(disrupted, dict) else {}


def aggregate_errors(errors: Sequence[str]) -> str | None:
    """utilerrors.NewAggregate(...).Error(): one message as is, several de-duplicated in [...]."""
    if not errors:
        return None
    if len(errors) == 1:
        return errors[0]
    unique = list(dict.fromkeys(errors))
    if len(unique) == 1:
        return unique[0]
    return "[" + ", ".join(unique) + "]"


# ---------------------------------------------------------------------------------------------
# Pod importance (pkg/scheduler/util)


def pod_start_time(pod: Pod) -> float:
    """GetPodStartTime in nanoseconds since the epoch; ``inf`` ("now") when the pod has none."""
    manifest = pod.manifest
    if not manifest:
        return math.inf  # no status at all (pods built directly, the benchmarks')
    status = manifest.get("status") if isinstance(manifest, dict) else None
    value = status.get("startTime") if isinstance(status, dict) else None
    if not isinstance(value, str) or not value:
        return math.inf
    return _parse_start_time(value)


@functools.lru_cache(maxsize=4096)
def _parse_start_time(value: str) -> float:
    """An RFC 3339 time in nanoseconds since the epoch; ``inf`` when it does not parse. Kept:
    sorting a node's victims compares each pod's start time several times."""
    try:
        moment = datetime.fromisoformat(value.replace("Z", "+00:00"))
    except ValueError:
        return math.inf
    if moment.tzinfo is None:
        moment = moment.replace(tzinfo=UTC)
    return (moment - _EPOCH) // timedelta(microseconds=1) * 1000


def more_important_pod(pod1: Pod, pod2: Pod) -> bool:
    """MoreImportantPod: higher priority first, then the one that started earlier.

    A pod without a start time started "now" (``GetPodStartTime`` calls ``time.Now()``), after
    every pod that has one; for two such pods the first "now" is taken before the second, so
    each is more important than the other: true both ways, as in upstream.
    """
    priority1, priority2 = pod1.effective_priority, pod2.effective_priority
    if priority1 != priority2:
        return priority1 > priority2
    start1, start2 = pod_start_time(pod1), pod_start_time(pod2)
    return start1 < start2 or start1 == start2 == math.inf


def sort_by_importance(
    pod_infos: list[PodInfo], more_important: Callable[[Pod, Pod], bool] = more_important_pod
) -> None:
    """``sort.Slice(pods, func(i, j) { return moreImportant(pods[i], pods[j]) })``, in place.

    With ``MoreImportantPod`` each pod's priority and start time are read once, before sorting,
    rather than at every comparison: the comparisons give the same answers, so Go's algorithm
    makes the same swaps.
    """
    if len(pod_infos) < 2:
        return
    if more_important is not more_important_pod:
        sort_slice(pod_infos, lambda a, b: more_important(a.pod, b.pod))
        return
    keys = tuple((info.pod.effective_priority, pod_start_time(info.pod)) for info in pod_infos)
    order = _IMPORTANCE_ORDERS.get(keys)
    if order is None:
        keyed = [(*key, index) for index, key in enumerate(keys)]
        sort_slice(keyed, _more_important_keyed)
        order = tuple(entry[2] for entry in keyed)
        if len(_IMPORTANCE_ORDERS) >= _IMPORTANCE_ORDERS_KEPT:
            del _IMPORTANCE_ORDERS[next(iter(_IMPORTANCE_ORDERS))]
        _IMPORTANCE_ORDERS[keys] = order
    pod_infos[:] = [pod_infos[index] for index in order]


# Go's sort moves the pods by their (priority, start time) alone, so the order it leaves is
# kept by those keys, in their order: nodes holding alike pods are sorted once.
_IMPORTANCE_ORDERS_KEPT = 1024
_IMPORTANCE_ORDERS: dict[tuple[tuple[int, float], ...], tuple[int, ...]] = {}


def _more_important_keyed(a: tuple[int, float, int], b: tuple[int, float, int]) -> bool:
    """``more_important_pod`` on (priority, start time) read beforehand."""
    if a[0] != b[0]:
        return a[0] > b[0]
    return a[1] < b[1] or a[1] == b[1] == math.inf


def get_earliest_pod_start_time(victims: Victims) -> float | None:
    """The earliest start time among the highest-priority victims."""
    pods = victims.pods
    if not pods:
        return None
    # The first pod's start time is the first minimum taken (upstream reads it twice).
    earliest = math.inf
    max_priority = pods[0].effective_priority
    for pod in pods:
        priority = pod.effective_priority
        if priority == max_priority:
            earliest = min(earliest, pod_start_time(pod))
        elif priority > max_priority:
            max_priority = priority
            earliest = pod_start_time(pod)
    return earliest
