"""The NodeResourcesFit plugin: does the node have room for the pod's requests, and how full is it.

Mirrors pkg/scheduler/framework/plugins/noderesources/fit.go (v1.35). Filter rejects a node with
no free pod slot or too little cpu, memory, ephemeral storage or scalar resource; a request
larger than the node's whole allocatable makes the rejection UnschedulableAndUnresolvable, since
preempting pods cannot help. Score applies the configured strategy (LeastAllocated,
MostAllocated, RequestedToCapacityRatio) to the non-zero requests.

Deliberately different or left out:
- SidecarContainers is GA, so PreFilter never rejects pods with restartable init containers.
- Pod-level resources (PodLevelResources, beta, on) count as upstream counts them: Filter's
  requests come from ``schedviz.kube.resources.pod_requests`` with pod-level requests and without
  status resources. The scoring strategies read the containers' spec requests only, neither
  pod-level nor resized ones, because upstream builds their scorer without those gates
  (``nodeResourceStrategyTypeMap``); the node's requested amounts include both.
- Left out: extended resources backed by DRA (and the DeviceClass event), the SignPlugin used by
  opportunistic batching.
- Pods are identified by ``namespace/name`` where upstream compares UIDs.
- ``filter_requests_check`` (not in upstream, ``RequestsFilterPlugin``) answers as Filter from
  a node's allocatable, its pods' total requests and their number, for preemption's dry run.
"""

from __future__ import annotations

from collections.abc import Callable, Hashable, Sequence
from collections.abc import Set as AbstractSet
from dataclasses import dataclass

import numpy as np

from schedviz.kube.decode.validation import is_qualified_name
from schedviz.kube.objects import (
    RESOURCE_CPU,
    RESOURCE_EPHEMERAL_STORAGE,
    RESOURCE_MEMORY,
    RESOURCE_PODS,
    Node,
    Pod,
)
from schedviz.kube.resources import pod_requests
from schedviz.scheduler.apis.config.types_pluginargs import (
    LEAST_ALLOCATED,
    MOST_ALLOCATED,
    REQUESTED_TO_CAPACITY_RATIO,
    NodeResourcesFitArgs,
    ScoringStrategy,
)
from schedviz.scheduler.apis.config.validation import (
    ConfigError,
    validate_node_resources_fit_args,
)
from schedviz.scheduler.backend.cache.columns import EXACT_LIMIT, IntArray, NodeColumns
from schedviz.scheduler.framework.cycle_state import CycleState
from schedviz.scheduler.framework.interface import (
    Code,
    EnqueueExtensions,
    Handle,
    NodeScorer,
    NodeScorerPlugin,
    PreFilterExtensions,
    PreFilterPlugin,
    PreFilterResult,
    PreScorePlugin,
    RequestsCheck,
    RequestsFilterPlugin,
    ScoreExtensions,
    Status,
    as_status,
    new_status,
)
from schedviz.scheduler.framework.plugins import names
from schedviz.scheduler.framework.plugins.noderesources.least_allocated import (
    least_resource_column_scorer,
    least_resource_scorer,
)
from schedviz.scheduler.framework.plugins.noderesources.most_allocated import (
    most_resource_column_scorer,
    most_resource_scorer,
)
from schedviz.scheduler.framework.plugins.noderesources.requested_to_capacity_ratio import (
    requested_to_capacity_ratio_scorer,
)
from schedviz.scheduler.framework.plugins.noderesources.resource_allocation import (
    ColumnScorer,
    PodRequestsState,
    ResourceAllocationScorer,
    Scorer,
)
from schedviz.scheduler.framework.types import (
    ActionType,
    ClusterEvent,
    ClusterEventWithHint,
    EventResource,
    NodeInfo,
    QueueingHint,
    Resource,
    is_scalar_resource_name,
)
from schedviz.scheduler.util import as_objects

NAME = names.NODE_RESOURCES_FIT
PRE_FILTER_STATE_KEY = "PreFilter" + NAME
PRE_SCORE_STATE_KEY = "PreScore" + NAME

REASON_TOO_MANY_PODS = "Too many pods"
REASON_INSUFFICIENT_CPU = "Insufficient cpu"
REASON_INSUFFICIENT_MEMORY = "Insufficient memory"
REASON_INSUFFICIENT_EPHEMERAL_STORAGE = "Insufficient ephemeral-storage"


def insufficient_resource_reason(resource: str) -> str:
    """The reason for any other resource: "Insufficient example.com/gpu"."""
    return f"Insufficient {resource}"


@dataclass(frozen=True, slots=True)
class InsufficientResource:
    """A resource the node lacks for the pod (upstream ``InsufficientResource``)."""

    resource_name: str
    reason: str
    requested: int
    used: int
    capacity: int
    # The pod asks for more than the node's whole allocatable: preemption cannot help.
    unresolvable: bool = False


@dataclass(frozen=True, slots=True)
class _PreFilterState:
    pod_request: Resource

    def clone(self) -> _PreFilterState:
        return self


# The strategies that also score node columns (RequestedToCapacityRatio scores node by node).
_STRATEGY_COLUMN_SCORERS: dict[str, Callable[[ScoringStrategy], ColumnScorer]] = {
    LEAST_ALLOCATED: lambda strategy: least_resource_column_scorer(strategy.resources),
    MOST_ALLOCATED: lambda strategy: most_resource_column_scorer(strategy.resources),
}

_STRATEGY_SCORERS: dict[str, Callable[[ScoringStrategy], Scorer]] = {
    LEAST_ALLOCATED: lambda strategy: least_resource_scorer(strategy.resources),
    MOST_ALLOCATED: lambda strategy: most_resource_scorer(strategy.resources),
    REQUESTED_TO_CAPACITY_RATIO: lambda strategy: requested_to_capacity_ratio_scorer(
        strategy.resources,
        strategy.requested_to_capacity_ratio.shape if strategy.requested_to_capacity_ratio else (),
    ),
}


class Fit(
    PreFilterPlugin,
    RequestsFilterPlugin,
    PreScorePlugin,
    NodeScorerPlugin,
    EnqueueExtensions,
):
    def __init__(
        self,
        args: NodeResourcesFitArgs,
        handle: Handle,
        *,
        enable_in_place_pod_vertical_scaling: bool = True,
        enable_scheduling_queue_hint: bool = True,
    ) -> None:
        strategy = args.scoring_strategy
        make_scorer = _STRATEGY_SCORERS.get(strategy.type)
        if make_scorer is None:
            raise ValueError(f"scoring strategy {strategy.type} is not supported")
        self._ignored_resources = frozenset(args.ignored_resources)
        self._ignored_resource_groups = frozenset(args.ignored_resource_groups)
        # Feature gates, at their v1.35 defaults.
        self._enable_in_place_pod_vertical_scaling = enable_in_place_pod_vertical_scaling
        self._enable_scheduling_queue_hint = enable_scheduling_queue_hint
        make_column_scorer = _STRATEGY_COLUMN_SCORERS.get(strategy.type)
        self._scorer = ResourceAllocationScorer(
            strategy.type,
            make_scorer(strategy),
            strategy.resources,
            use_requested=False,
            column_scorer=make_column_scorer(strategy) if make_column_scorer else None,
        )

    def name(self) -> str:
        return NAME

    # PreFilter / Filter

    def pre_filter(
        self, state: CycleState, pod: Pod, nodes: Sequence[NodeInfo]
    ) -> tuple[PreFilterResult | None, Status | None]:
        state.write(PRE_FILTER_STATE_KEY, _PreFilterState(compute_pod_resource_request(pod)))
        return None, None

    def pre_filter_extensions(self) -> PreFilterExtensions | None:
        return None

    def filter(self, state: CycleState, pod: Pod, node_info: NodeInfo) -> Status | None:
        try:
            pre_filter_state = state.read_as(PRE_FILTER_STATE_KEY, _PreFilterState)
        except KeyError:
            return as_status(f'error reading "{PRE_FILTER_STATE_KEY}" from cycleState: not found')
        except TypeError as error:
            return as_status(error)
        insufficient = fits_request(
            pre_filter_state.pod_request,
            node_info,
            self._ignored_resources,
            self._ignored_resource_groups,
        )
        if not insufficient:
            return None
        code = Code.Unschedulable
        if any(r.unresolvable for r in insufficient):
            code = Code.UnschedulableAndUnresolvable
        return new_status(code, *(r.reason for r in insufficient))

    def filter_requests_check(self, state: CycleState, pod: Pod) -> RequestsCheck:
        """Whether ``filter`` passes a node with this allocatable, these requests and this many
        pods (``RequestsFilterPlugin``): what it reads of a node."""
        try:
            request = state.read_as(PRE_FILTER_STATE_KEY, _PreFilterState).pod_request
        except (KeyError, TypeError):
            return _never  # filter reports an error on every node
        ignored, ignored_groups = self._ignored_resources, self._ignored_resource_groups

        def check(allocatable: Resource, requested: Resource, pods: int) -> bool:
            return not fits_request_amounts(
                request, allocatable, requested, pods, ignored, ignored_groups
            )

        return check

    def filter_requests_key(self, state: CycleState, pod: Pod) -> Hashable | None:
        """What ``filter_requests_check``'s answers depend on besides its arguments: the pod's
        request (the ignored resources are this plugin's own, fixed). None when the cycle state
        holds no request."""
        try:
            request = state.read_as(PRE_FILTER_STATE_KEY, _PreFilterState).pod_request
        except (KeyError, TypeError):
            return None
        return (
            request.milli_cpu,
            request.memory,
            request.ephemeral_storage,
            request.allowed_pod_number,
            tuple(sorted(request.scalar_resources.items())),
        )

    def filter_columns(
        self, state: CycleState, pod: Pod, columns: NodeColumns, rows: IntArray
    ) -> IntArray | None:
        """The nodes at ``rows`` with room for the pod pass; the others are classed by what
        they lack (pods, cpu, memory, ephemeral storage) and whether the pod asks for more
        than their whole allocatable: the status's reasons and code say no more. None for a pod
        requesting extended resources, or amounts beyond the columns."""
        try:
            request = state.read_as(PRE_FILTER_STATE_KEY, _PreFilterState).pod_request
        except (KeyError, TypeError):
            return None  # filter reports it
        if request.scalar_resources:
            return None
        if not all(
            -EXACT_LIMIT < amount < EXACT_LIMIT
            for amount in (request.milli_cpu, request.memory, request.ephemeral_storage)
        ):
            return None
        classes = (columns.pod_count[rows] + 1 > columns.alloc_pods[rows]).astype(np.int64)
        if _is_empty(request):
            return classes
        for bit, (amount, capacity, used) in enumerate(
            (
                (request.milli_cpu, columns.alloc_cpu, columns.requested_cpu),
                (request.memory, columns.alloc_memory, columns.requested_memory),
                (request.ephemeral_storage, columns.alloc_ephemeral, columns.requested_ephemeral),
            ),
            start=1,
        ):
            if amount > 0:
                available = capacity[rows]
                classes |= (amount > available - used[rows]).astype(np.int64) << bit
                classes |= (amount > available).astype(np.int64) << (bit + 3)
        return classes

    # PreScore / Score

    def pre_score(self, state: CycleState, pod: Pod, nodes: Sequence[NodeInfo]) -> Status | None:
        requests = self._scorer.calculate_pod_resource_request_list(pod)
        state.write(PRE_SCORE_STATE_KEY, PodRequestsState(tuple(requests)))
        return None

    def score(self, state: CycleState, pod: Pod, node_info: NodeInfo) -> tuple[int, Status | None]:
        score_node = self.node_scorer(state, pod)
        if isinstance(score_node, Status):
            return 0, score_node
        return score_node(node_info), None

    def node_scorer(self, state: CycleState, pod: Pod) -> NodeScorer | Status:
        return self._scorer.node_scorer(self._score_requests(state, pod))

    def score_columns(
        self, state: CycleState, pod: Pod, columns: NodeColumns, rows: IntArray
    ) -> IntArray | None:
        return self._scorer.score_columns(self._score_requests(state, pod), columns, rows)

    def _score_requests(self, state: CycleState, pod: Pod) -> Sequence[int]:
        """The pod's requests PreScore left, or worked out again when it left none."""
        try:
            return state.read_as(PRE_SCORE_STATE_KEY, PodRequestsState).pod_requests
        except (KeyError, TypeError):
            return self._scorer.calculate_pod_resource_request_list(pod)

    def score_extensions(self) -> ScoreExtensions | None:
        return None

    # Queueing hints

    def events_to_register(self) -> list[ClusterEventWithHint]:
        pod_action = ActionType.Delete
        if self._enable_in_place_pod_vertical_scaling:
            # A resize can free room on a node.
            pod_action |= ActionType.UpdatePodScaleDown
        # Without queueing hints the scheduler's pre-check may drop a Node/Add event, so taint
        # and label updates are registered too (kubernetes/kubernetes#109437).
        node_action = (
            ActionType.Add
            | ActionType.UpdateNodeAllocatable
            | ActionType.UpdateNodeTaint
            | ActionType.UpdateNodeLabel
        )
        if self._enable_scheduling_queue_hint:
            node_action = ActionType.Add | ActionType.UpdateNodeAllocatable
        return [
            ClusterEventWithHint(
                ClusterEvent(EventResource.Pod, pod_action), self.is_schedulable_after_pod_event
            ),
            ClusterEventWithHint(
                ClusterEvent(EventResource.Node, node_action), self.is_schedulable_after_node_change
            ),
        ]

    def is_schedulable_after_pod_event(
        self, pod: Pod, old_obj: object, new_obj: object
    ) -> QueueingHint:
        """A pod was deleted or scaled down: may that free room for ``pod``?"""
        objects = as_objects(Pod, old_obj, new_obj)
        if objects is None:
            return QueueingHint.Queue
        original, modified = objects
        if modified is None:
            if original is None or (not original.node_name and not original.nominated_node_name):
                # An unscheduled pod held no resources.
                return QueueingHint.QueueSkip
            return QueueingHint.Queue
        if not self._enable_in_place_pod_vertical_scaling:
            return QueueingHint.QueueSkip
        if not self._is_schedulable_after_pod_scale_down(pod, original, modified):
            return QueueingHint.QueueSkip
        return QueueingHint.Queue

    def _is_schedulable_after_pod_scale_down(
        self, target: Pod, original: Pod | None, modified: Pod
    ) -> bool:
        """The target pod itself shrank, or a scheduled pod released something it needs."""
        if modified.key == target.key:
            return True
        if not modified.node_name or original is None:
            return False
        before = compute_pod_resource_request(original)
        after = compute_pod_resource_request(modified)
        for resource, amount in pod_requests(target).items():
            if amount == 0:
                continue
            if resource == RESOURCE_CPU:
                released = before.milli_cpu > after.milli_cpu
            elif resource == RESOURCE_MEMORY:
                released = before.memory > after.memory
            elif resource == RESOURCE_EPHEMERAL_STORAGE:
                released = before.ephemeral_storage > after.ephemeral_storage
            else:
                released = is_scalar_resource_name(resource) and before.scalar_resources.get(
                    resource, 0
                ) > after.scalar_resources.get(resource, 0)
            if released:
                return True
        return False

    def is_schedulable_after_node_change(
        self, pod: Pod, old_obj: object, new_obj: object
    ) -> QueueingHint:
        """A node was added or updated: could the pod fit it now?"""
        objects = as_objects(Node, old_obj, new_obj)
        if objects is None:
            return QueueingHint.Queue
        original, modified = objects
        if modified is None or not _fits_node(pod, modified):
            # The pod would not fit the node anyway.
            return QueueingHint.QueueSkip
        if original is None:
            return QueueingHint.Queue
        if not have_any_requested_resources_increased(pod, original, modified):
            return QueueingHint.QueueSkip
        return QueueingHint.Queue


def _never(allocatable: Resource, requested: Resource, pods: int) -> bool:
    return False


def _fits_node(pod: Pod, node: Node) -> bool:
    """Whether the pod fits the node when it is empty (upstream ``isFit``)."""
    return not fits(pod, NodeInfo(node))


def compute_pod_resource_request(pod: Pod) -> Resource:
    """The pod's effective requests (upstream ``computePodResourceRequest``).

    Regular containers add up, init containers count by their maximum, sidecars add up, overhead
    is added; the pod-count dimension is left at zero.
    """
    result = Resource()
    result.add_amounts(
        {name: amount for name, amount in pod_requests(pod).items() if name != RESOURCE_PODS}
    )
    return result


def fits(pod: Pod, node_info: NodeInfo) -> list[InsufficientResource]:
    """What the node lacks to host the pod, with nothing ignored (upstream ``Fits``)."""
    return fits_request(compute_pod_resource_request(pod), node_info)


def fits_request(
    pod_request: Resource,
    node_info: NodeInfo,
    ignored_resources: AbstractSet[str] = frozenset(),
    ignored_resource_groups: AbstractSet[str] = frozenset(),
) -> list[InsufficientResource]:
    """The resources the node lacks for this request, in upstream's order: pods, cpu, memory,
    ephemeral storage, then scalar resources. Ignored resources and groups only apply to
    extended resources."""
    return fits_request_amounts(
        pod_request,
        node_info.allocatable,
        node_info.requested,
        len(node_info.pods),
        ignored_resources,
        ignored_resource_groups,
    )


def fits_request_amounts(
    pod_request: Resource,
    allocatable: Resource,
    requested: Resource,
    pod_count: int,
    ignored_resources: AbstractSet[str] = frozenset(),
    ignored_resource_groups: AbstractSet[str] = frozenset(),
) -> list[InsufficientResource]:
    """``fits_request`` on a node given by its allocatable, the requests of its pods and how
    many they are: all it reads of a node."""
    insufficient: list[InsufficientResource] = []
    allowed_pods = allocatable.allowed_pod_number
    if pod_count + 1 > allowed_pods:
        insufficient.append(
            InsufficientResource(RESOURCE_PODS, REASON_TOO_MANY_PODS, 1, pod_count, allowed_pods)
        )

    if _is_empty(pod_request):
        return insufficient

    # Three tests written out, as upstream writes them: this runs for every node of every cycle.
    request, capacity, used = pod_request.milli_cpu, allocatable.milli_cpu, requested.milli_cpu
    if request > 0 and request > capacity - used:
        insufficient.append(
            InsufficientResource(
                RESOURCE_CPU, REASON_INSUFFICIENT_CPU, request, used, capacity, request > capacity
            )
        )
    request, capacity, used = pod_request.memory, allocatable.memory, requested.memory
    if request > 0 and request > capacity - used:
        insufficient.append(
            InsufficientResource(
                RESOURCE_MEMORY,
                REASON_INSUFFICIENT_MEMORY,
                request,
                used,
                capacity,
                request > capacity,
            )
        )
    request = pod_request.ephemeral_storage
    capacity, used = allocatable.ephemeral_storage, requested.ephemeral_storage
    if request > 0 and request > capacity - used:
        insufficient.append(
            InsufficientResource(
                RESOURCE_EPHEMERAL_STORAGE,
                REASON_INSUFFICIENT_EPHEMERAL_STORAGE,
                request,
                used,
                capacity,
                request > capacity,
            )
        )

    for resource, request in pod_request.scalar_resources.items():
        if request == 0:
            continue
        if is_extended_resource_name(resource):
            group = resource.split("/", 1)[0] if ignored_resource_groups else ""
            if resource in ignored_resources or group in ignored_resource_groups:
                continue
        capacity = allocatable.scalar_resources.get(resource, 0)
        used = requested.scalar_resources.get(resource, 0)
        if request > capacity - used:
            insufficient.append(
                InsufficientResource(
                    resource,
                    insufficient_resource_reason(resource),
                    request,
                    used,
                    capacity,
                    request > capacity,
                )
            )
    return insufficient


def _is_empty(request: Resource) -> bool:
    """No cpu, memory, ephemeral storage nor scalar resource is requested (pods aside)."""
    return (
        request.milli_cpu == 0
        and request.memory == 0
        and request.ephemeral_storage == 0
        and not request.scalar_resources
    )


def have_any_requested_resources_increased(
    pod: Pod, original_node: Node, modified_node: Node
) -> bool:
    """Whether the node's pod slots, or its allocatable of anything the pod requests, grew."""
    pod_request = compute_pod_resource_request(pod)
    before = Resource.from_resource_list(original_node.allocatable)
    after = Resource.from_resource_list(modified_node.allocatable)
    if after.allowed_pod_number > before.allowed_pod_number:
        return True
    if _is_empty(pod_request):
        return False
    if (
        (pod_request.milli_cpu > 0 and after.milli_cpu > before.milli_cpu)
        or (pod_request.memory > 0 and after.memory > before.memory)
        or (
            pod_request.ephemeral_storage > 0 and after.ephemeral_storage > before.ephemeral_storage
        )
    ):
        return True
    return any(
        request != 0
        and after.scalar_resources.get(resource, 0) > before.scalar_resources.get(resource, 0)
        for resource, request in pod_request.scalar_resources.items()
    )


_REQUESTS_PREFIX = "requests."


def is_extended_resource_name(name: str) -> bool:
    """v1helper.IsExtendedResourceName: a non-native, prefixed name valid as a quota key."""
    native = "/" not in name or "kubernetes.io/" in name
    if native or name.startswith(_REQUESTS_PREFIX):
        return False
    return not is_qualified_name(_REQUESTS_PREFIX + name)


def new(args: object | None, handle: Handle) -> Fit:
    if args is None:
        args = NodeResourcesFitArgs()
    if not isinstance(args, NodeResourcesFitArgs):
        raise TypeError(f"want args to be of type NodeResourcesFitArgs, got {type(args).__name__}")
    errors = validate_node_resources_fit_args("", args)
    if errors:
        raise ConfigError(errors)
    return Fit(args, handle)
