"""DefaultPreemption: when no node fits, evict lower-priority pods so that one does.

Mirrors pkg/scheduler/framework/plugins/defaultpreemption/default_preemption.go (v1.34/v1.35):
PostFilter runs ``preemption.Evaluator.preempt`` and prefixes its message with "preemption: ";
the plugin supplies the policy: ``pod_eligible_to_preempt_others``, ``select_victims_on_node``
(remove every lower-priority pod, check the preemptor fits, then reprieve pods from the most
important down, PDB-violating ones first), ``calculate_num_candidates`` and
``get_offset_and_num_candidates`` (minCandidateNodesPercentage / minCandidateNodesAbsolute from
a random offset). ``is_eligible_pod`` and ``more_important_pod`` can be replaced, as upstream's
``IsEligiblePod`` and ``MoreImportantPod``.

With async preemption (SchedulerAsyncPreemption, beta and on in v1.34) PreEnqueue holds back a
pod whose preemption goroutine has not released it yet ("waiting for the preemption for this pod
to be finished"), and the plugin registers Pod/Delete with a hint that always skips: the plugins
that rejected the pod decide when a victim's deletion requeues it (see
``schedviz.scheduler.preemption`` for when the goroutine runs in virtual time).

Deliberately different:
- The offset comes from a dedicated seeded ``random.Random`` (upstream's ``getOffsetRand``), so
  runs replay exactly; tests replace ``offset_rand``.
- Victims are collected before any is removed, as upstream's later fix does (removing while
  walking the node's pod slice skipped pods in v1.34).
- A PDB's ``status.disruptedPods`` is read from its manifest; a pod meets only the PDBs of its
  namespace (indexed once per attempt, ``preemption.PodDisruptionBudgets``).
- ``victims_selector`` (not in upstream) gives ``select_victims_on_node``'s answer without
  copying the node and the cycle state, when the filters the cycle runs read of a node only the
  node itself or its pods' count and total requests, and no PreFilter extension runs: the node
  without every lower-priority pod is built once and filtered for real (so a node that cannot
  host the preemptor even then gets the filters' own status; when its requests alone show it
  can, only the filters that read the node alone run, on the node as it is), and each reprieve
  adds and subtracts requests instead of copying, adding and filtering a node. Otherwise the dry
  run copies the node and the state and calls ``select_victims_on_node``, upstream's algorithm.
  What it works out on a node is kept until the node changes, for the next preemptors of that
  priority asking as much (with no pod nominated to the node and no PDB selecting pods): a
  churn of alike preemptors visits mostly nodes it has seen.
"""

from __future__ import annotations

import random
from collections.abc import Callable, Hashable, Sequence

from schedviz.kube.objects import PREEMPT_NEVER, Pod, PodDisruptionBudget
from schedviz.scheduler.apis.config.types_pluginargs import DefaultPreemptionArgs
from schedviz.scheduler.apis.config.validation import (
    ConfigError,
    validate_default_preemption_args,
)
from schedviz.scheduler.framework.cycle_state import CycleState
from schedviz.scheduler.framework.interface import (
    Code,
    EnqueueExtensions,
    PostFilterPlugin,
    PreEnqueuePlugin,
    RequestsCheck,
    Status,
    as_status,
    code_of,
    is_success,
)
from schedviz.scheduler.framework.plugins.names import DEFAULT_PREEMPTION
from schedviz.scheduler.framework.types import (
    ActionType,
    ClusterEvent,
    ClusterEventWithHint,
    EventResource,
    NodeInfo,
    NodeToStatus,
    PodInfo,
    QueueingHint,
    Resource,
)
from schedviz.scheduler.preemption import (
    CONDITION_DISRUPTION_TARGET,
    REASON_PREEMPTION_BY_SCHEDULER,
    Candidate,
    Evaluator,
    PodDisruptionBudgets,
    PreemptionHandle,
    PreemptionPostFilterResult,
    ScoreFunc,
    Victims,
    VictimsSelector,
    more_important_pod,
    sort_by_importance,
)

NAME = DEFAULT_PREEMPTION

# Reasons, as upstream words them.
ERR_REASON_NO_VICTIMS = "No preemption victims found for incoming pod"
ERR_REASON_PREEMPT_NEVER = "not eligible due to preemptionPolicy=Never."
ERR_REASON_TERMINATING = "not eligible due to a terminating pod on the nominated node."
MSG_WAITING_FOR_PREEMPTION = "waiting for the preemption for this pod to be finished"

# Whether a victim may be preempted by the preemptor, beyond having a lower priority.
IsEligiblePodFunc = Callable[[NodeInfo, PodInfo, Pod], bool]
# Whether the first pod is more important than the second (kept before it at reprieve).
MoreImportantPodFunc = Callable[[Pod, Pod], bool]


class DefaultPreemption(PostFilterPlugin, PreEnqueuePlugin, EnqueueExtensions):
    def __init__(
        self,
        args: DefaultPreemptionArgs,
        handle: PreemptionHandle,
        rng: random.Random,
        *,
        enable_async_preemption: bool = True,
    ) -> None:
        self.args = args
        self.handle = handle
        self.offset_rand: Callable[[int], int] = rng.randrange
        self.is_eligible_pod: IsEligiblePodFunc = _any_victim_is_eligible
        self.more_important_pod: MoreImportantPodFunc = more_important_pod
        self.enable_async_preemption = enable_async_preemption
        self.evaluator = Evaluator(
            NAME, handle, self, enable_async_preemption=enable_async_preemption
        )
        # What the dry run worked out on each node, by node name (see ``victims_selector``).
        self._node_victims: dict[str, _NodeVictims] = {}

    def name(self) -> str:
        return NAME

    # ------------------------------------------------------------------ extension points

    def post_filter(
        self, state: CycleState, pod: Pod, filtered_node_status_map: NodeToStatus
    ) -> tuple[PreemptionPostFilterResult | None, Status | None]:
        result, status = self.evaluator.preempt(state, pod, filtered_node_status_map)
        message = status.message() if status is not None else ""
        if status is not None and message:
            return result, Status(status.code, ("preemption: " + message,))
        return result, status

    def pre_enqueue(self, pod: Pod) -> Status | None:
        if not self.enable_async_preemption:
            return None
        if self.evaluator.is_pod_running_preemption(pod.key):
            return Status(Code.UnschedulableAndUnresolvable, (MSG_WAITING_FOR_PREEMPTION,))
        return None

    def events_to_register(self) -> list[ClusterEventWithHint]:
        if not self.enable_async_preemption:
            return []  # PreEnqueue never rejects a pod then.
        # Pods this plugin held back at PreEnqueue wait for the victims' deletion; the plugins
        # that rejected them decide on requeueing, so the hint always skips.
        return [
            ClusterEventWithHint(
                ClusterEvent(EventResource.Pod, ActionType.Delete), _skip_after_pod_deletion
            )
        ]

    # ------------------------------------------------------------------ preemption.Interface

    def calculate_num_candidates(self, num_nodes: int) -> int:
        """How many candidates the dry run must find: a percentage, at least an absolute."""
        count = num_nodes * self.args.min_candidate_nodes_percentage // 100
        count = max(count, self.args.min_candidate_nodes_absolute)
        return min(count, num_nodes)

    def get_offset_and_num_candidates(self, num_nodes: int) -> tuple[int, int]:
        return self.offset_rand(num_nodes), self.calculate_num_candidates(num_nodes)

    def candidates_to_victims_map(self, candidates: Sequence[Candidate]) -> dict[str, Victims]:
        return {candidate.name: candidate.victims for candidate in candidates}

    def ordered_score_funcs(self, nodes_to_victims: dict[str, Victims]) -> list[ScoreFunc]:
        return []  # the default criteria

    def pod_eligible_to_preempt_others(
        self, pod: Pod, nominated_node_status: Status | None
    ) -> tuple[bool, str]:
        """Not with preemptionPolicy Never, nor while victims on its nominated node terminate."""
        if pod.preemption_policy == PREEMPT_NEVER:
            return False, ERR_REASON_PREEMPT_NEVER
        nominated = pod.nominated_node_name
        if nominated:
            # Filters now reject the nominated node outright: preempting elsewhere may help.
            if code_of(nominated_node_status) == Code.UnschedulableAndUnresolvable:
                return True, ""
            node_info = self.handle.snapshot_shared_lister().get(nominated)
            if node_info is not None:
                for pod_info in node_info.pods:
                    if self._is_preemption_allowed(
                        node_info, pod_info, pod
                    ) and pod_terminating_by_preemption(pod_info.pod):
                        return False, ERR_REASON_TERMINATING
        return True, ""

    def select_victims_on_node(
        self,
        state: CycleState,
        pod: Pod,
        node_info: NodeInfo,
        pdbs: Sequence[PodDisruptionBudget],
    ) -> tuple[list[Pod], int, Status | None]:
        """The fewest pods to evict so that ``pod`` fits; ``node_info`` and ``state`` are copies."""
        handle = self.handle

        def remove(pod_info: PodInfo) -> str | None:
            if not node_info.remove_pod(pod_info.pod):
                return f"no corresponding pod {pod_info.pod.name} in pods of node {node_info.name}"
            status = handle.run_pre_filter_extension_remove_pod(state, pod, pod_info, node_info)
            return None if is_success(status) else _as_error(status)

        def add(pod_info: PodInfo) -> str | None:
            node_info.add_pod_info(pod_info)
            status = handle.run_pre_filter_extension_add_pod(state, pod, pod_info, node_info)
            return None if is_success(status) else _as_error(status)

        potential = [p for p in node_info.pods if self._is_preemption_allowed(node_info, p, pod)]
        for pod_info in potential:
            error = remove(pod_info)
            if error is not None:
                return [], 0, as_status(error)
        if not potential:
            return [], 0, Status(Code.UnschedulableAndUnresolvable, (ERR_REASON_NO_VICTIMS,))

        # Without every lower-priority pod, does it fit? Affinity to a victim is not considered.
        status = handle.run_filter_plugins_with_nominated_pods(state, pod, node_info)
        if not is_success(status):
            return [], 0, status

        more_important = self.more_important_pod

        def order(victims: list[PodInfo]) -> None:
            # sort.Slice with MoreImportantPod, which is no strict order (see gosort).
            sort_by_importance(victims, more_important)

        order(potential)
        violating, non_violating = filter_pods_with_pdb_violation(potential, pdbs)
        victims: list[PodInfo] = []

        def reprieve(pod_info: PodInfo) -> tuple[bool, str | None]:
            error = add(pod_info)
            if error is not None:
                return False, error
            fits = is_success(handle.run_filter_plugins_with_nominated_pods(state, pod, node_info))
            if not fits:
                error = remove(pod_info)
                if error is not None:
                    return False, error
                victims.append(pod_info)
            return fits, None

        num_violating_victims = 0
        for pod_info in violating:
            fits, error = reprieve(pod_info)
            if error is not None:
                return [], 0, as_status(error)
            if not fits:
                num_violating_victims += 1
        for pod_info in non_violating:
            _, error = reprieve(pod_info)
            if error is not None:
                return [], 0, as_status(error)

        if violating and non_violating:
            # Keep the victims ordered from most to least important.
            order(victims)
        return [p.pod for p in victims], num_violating_victims, None

    def victims_selector(self, state: CycleState, pod: Pod) -> VictimsSelector | None:
        """``select_victims_on_node`` without copying the node and the state, when the filters
        the cycle runs allow it (``Framework.filters_by_requests``): each reads of a node
        either the node alone or its pods' count and total requests, and no PreFilter
        extension runs. Not in upstream; the answer is ``select_victims_on_node``'s exactly.

        The node without every lower-priority pod is built once and filtered for real (with
        the nominated pods, as upstream), so a node that cannot host the preemptor even then
        gets the filters' own status; when the requests filters' check passes that node (with
        the nominated pods and without), it is not built: only the filters that read the node
        alone run (``Framework.node_only_filters``), on the node as it is. Each reprieve then
        only adds and subtracts requests: the filters that read the node alone passed on it,
        and pass on it with any pods.

        What a node's pods give is kept from one dry run to the next while the node is
        unchanged (its generation): the lower-priority pods and the requests left without
        them; and, for the same requests check (``Framework.filters_by_requests_key``), whether
        the preemptor fits once they are gone and the victims the reprieves leave, when no
        pod is nominated to the node and no PDB selects any pod. The filters that read the
        node alone still run every time: they read the preemptor.
        """
        if getattr(self.select_victims_on_node, "__func__", None) is not (
            DefaultPreemption.select_victims_on_node
        ):
            return None  # replaced: the replacement decides
        by_requests_of = getattr(self.handle, "filters_by_requests", None)
        passes: RequestsCheck | None = (
            by_requests_of(state, pod) if by_requests_of is not None else None
        )
        if passes is None:
            return None
        handle = self.handle
        priority = pod.effective_priority
        key = pod.key
        allowed = self._is_preemption_allowed
        # Every lower-priority pod is eligible (the default IsEligiblePod).
        any_eligible = self.is_eligible_pod is _any_victim_is_eligible
        more_important = self.more_important_pod
        node_only_of = getattr(handle, "node_only_filters", None)
        node_only: Callable[[CycleState, Pod, NodeInfo], Status | None] | None = (
            node_only_of(state) if node_only_of is not None else None
        )
        # Kept between dry runs only with the default policy, whose answers read nothing but
        # the node's pods (a replaced IsEligiblePod or MoreImportantPod may read anything).
        memo = self._node_victims if any_eligible and more_important is more_important_pod else None
        check_key_of = getattr(handle, "filters_by_requests_key", None)
        check_key: Hashable | None = (
            check_key_of(state, pod) if check_key_of is not None and memo is not None else None
        )

        def select(
            node_info: NodeInfo, pdbs: Sequence[PodDisruptionBudget]
        ) -> tuple[list[Pod], int, Status | None]:
            name = node_info.name
            generation = node_info.generation
            kept = memo.get(name) if memo is not None else None
            if kept is None or kept.generation != generation or kept.priority != priority:
                if any_eligible:
                    potential = [p for p in node_info.pods if p.pod.effective_priority < priority]
                else:
                    potential = [p for p in node_info.pods if allowed(node_info, p, pod)]
                # The node without every lower-priority pod, as far as the requests filters
                # read it.
                without_requested = node_info.requested.clone()
                for info in potential:
                    without_requested.add(info.requests, -1)
                kept = _NodeVictims(
                    generation,
                    priority,
                    potential,
                    without_requested,
                    len(node_info.pods) - len(potential),
                )
                if memo is not None:
                    memo[name] = kept
            potential = kept.potential
            if not potential:
                return [], 0, Status(Code.UnschedulableAndUnresolvable, (ERR_REASON_NO_VICTIMS,))
            # The pods run_filter_plugins_with_nominated_pods counts as running on the node.
            nominated = [
                info
                for info in handle.nominated_pods_for_node(name)
                if info.pod.effective_priority >= priority and info.key != key
            ]
            # Whether the answers kept for this check hold: they read nothing else.
            keep = check_key is not None and not nominated and _selects_no_pod(pdbs)
            known = keep and kept.check_key == check_key
            if known:
                fits_without = kept.fits_without
            else:
                fits_without = _fits_requests(
                    passes, node_info.allocatable, kept.requested, kept.count, nominated
                )
            if node_only is not None and fits_without:
                # The requests filters pass it, with the nominated pods and without: only the
                # filters that read the node alone can reject it, whatever its pods.
                status = node_only(state, pod, node_info)
            else:
                without = node_info.without_pods(potential)
                status = handle.run_filter_plugins_with_nominated_pods(state, pod, without)
            if keep and not known:
                kept.check_key = check_key
                kept.fits_without = fits_without
                kept.victims = None
            if not is_success(status):
                return [], 0, status
            if known and kept.victims is not None:
                return list(kept.victims), 0, None

            # sort.Slice on a copy: Go's order of pods that compare alike depends on where
            # they start, so the kept node order is sorted each time.
            ordered = list(potential)
            sort_by_importance(ordered, more_important)
            violating, non_violating = filter_pods_with_pdb_violation(ordered, pdbs)
            victims: list[PodInfo] = []
            num_violating_victims = 0
            requested = kept.requested.clone()
            count = kept.count
            allocatable = node_info.allocatable
            # Reprieve from the most important down, the PDB-violating pods first.
            for position, pod_info in enumerate((*violating, *non_violating)):
                requested.add(pod_info.requests)
                count += 1
                if not _fits_requests(passes, allocatable, requested, count, nominated):
                    requested.add(pod_info.requests, -1)
                    count -= 1
                    victims.append(pod_info)
                    if position < len(violating):
                        num_violating_victims += 1
            if violating and non_violating:
                sort_by_importance(victims, more_important)
            pods = [p.pod for p in victims]
            if keep:
                kept.victims = pods
                return list(pods), num_violating_victims, None
            return pods, num_violating_victims, None

        return select

    def _is_preemption_allowed(self, node_info: NodeInfo, victim: PodInfo, preemptor: Pod) -> bool:
        return victim.pod.effective_priority < preemptor.effective_priority and (
            self.is_eligible_pod(node_info, victim, preemptor)
        )


class _NodeVictims:
    """What ``victims_selector`` worked out on one node at one generation, for preemptors of
    one priority: the lower-priority pods in the node's order and the node's requests and pod
    count without them; for one requests check (``check_key``), whether the preemptor fits
    once they are gone and the victims (None: not worked out yet)."""

    __slots__ = (
        "check_key",
        "count",
        "fits_without",
        "generation",
        "potential",
        "priority",
        "requested",
        "victims",
    )

    def __init__(
        self,
        generation: int,
        priority: int,
        potential: list[PodInfo],
        requested: Resource,
        count: int,
    ) -> None:
        self.generation = generation
        self.priority = priority
        self.potential = potential
        self.requested = requested
        self.count = count
        self.check_key: Hashable | None = None
        self.fits_without = False
        self.victims: list[Pod] | None = None


def _fits_requests(
    passes: RequestsCheck,
    allocatable: Resource,
    requested: Resource,
    count: int,
    nominated: Sequence[PodInfo],
) -> bool:
    """Whether the requests filters pass a node with these requests and pods, counting the
    nominated pods as running first (as ``run_filter_plugins_with_nominated_pods``), then
    without them."""
    if nominated:
        with_nominated = requested.clone()
        for info in nominated:
            with_nominated.add(info.requests)
        if not passes(allocatable, with_nominated, count + len(nominated)):
            return False
    return passes(allocatable, requested, count)


def _selects_no_pod(pdbs: Sequence[PodDisruptionBudget]) -> bool:
    """Whether no PDB can select a pod (so none is ever violating)."""
    if isinstance(pdbs, PodDisruptionBudgets):
        return not pdbs.by_namespace
    return not pdbs


def pod_terminating_by_preemption(pod: Pod) -> bool:
    """Whether the pod is being deleted because the scheduler preempted it."""
    if not pod.deletion_timestamp:
        return False
    for condition in pod.conditions:
        if condition.type == CONDITION_DISRUPTION_TARGET:
            return condition.status == "True" and condition.reason == REASON_PREEMPTION_BY_SCHEDULER
    return False


def filter_pods_with_pdb_violation(
    pod_infos: Sequence[PodInfo], pdbs: Sequence[PodDisruptionBudget]
) -> tuple[list[PodInfo], list[PodInfo]]:
    """Splits pods into those whose eviction would violate a PDB and the rest, keeping order.

    Each PDB's allowance is spent by the pods it matches in turn; a pod already listed in the
    PDB's ``disruptedPods`` has been counted by the API server and spends nothing. A pod only
    meets the PDBs of its namespace (``PodDisruptionBudgets``' index).
    """
    index = pdbs if isinstance(pdbs, PodDisruptionBudgets) else PodDisruptionBudgets(pdbs)
    by_namespace = index.by_namespace
    # The allowance left of each PDB met so far, by its position.
    allowed: dict[int, int] = {}
    violating: list[PodInfo] = []
    non_violating: list[PodInfo] = []
    for pod_info in pod_infos:
        pod = pod_info.pod
        violated = False
        # A pod without labels matches no PDB.
        if pod.labels and by_namespace:
            for position, selector, disrupted in by_namespace.get(pod.namespace, ()):
                if not selector.matches(pod.labels) or pod.name in disrupted:
                    continue
                left = allowed.get(position, index[position].disruptions_allowed) - 1
                allowed[position] = left
                if left < 0:
                    violated = True
        (violating if violated else non_violating).append(pod_info)
    return violating, non_violating


def _any_victim_is_eligible(node_info: NodeInfo, victim: PodInfo, preemptor: Pod) -> bool:
    return True


def _skip_after_pod_deletion(pod: Pod, old: object, new: object) -> QueueingHint:
    return QueueingHint.QueueSkip


def _as_error(status: Status | None) -> str:
    return status.as_error() if status is not None else ""


def new(args: object | None, handle: PreemptionHandle) -> DefaultPreemption:
    if args is None:
        args = DefaultPreemptionArgs()
    if not isinstance(args, DefaultPreemptionArgs):
        raise TypeError(f"want args to be of type DefaultPreemptionArgs, got {type(args).__name__}")
    errors = validate_default_preemption_args("", args)
    if errors:
        raise ConfigError(errors)
    return DefaultPreemption(args, handle, random.Random(NAME))
