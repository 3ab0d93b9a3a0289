"""The scoring engine shared by NodeResourcesFit and NodeResourcesBalancedAllocation.

Mirrors pkg/scheduler/framework/plugins/noderesources/resource_allocation.go (v1.35). Requests
and allocatable amounts are gathered per configured resource, in the configured order, and handed
to a strategy's scorer. Extended resources backed by DRA (alpha) and pod-level resources are not
modelled: a resource missing from the node's allocatable is simply left out of the score.

``score_columns`` (not upstream) does the same for many nodes at once over the snapshot's node
columns (backend/cache/columns.py) with a strategy's column scorer, in the same integer (or
float64) operations; it leaves to ``score`` what the columns do not hold (extended resources the
pod requests).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

import numpy as np

from schedviz.kube.objects import (
    RESOURCE_CPU,
    RESOURCE_EPHEMERAL_STORAGE,
    RESOURCE_MEMORY,
    Pod,
)
from schedviz.kube.resources import NON_ZERO_DEFAULTS, Amounts, pod_requests, to_int
from schedviz.scheduler.apis.config.types_pluginargs import ResourceSpec
from schedviz.scheduler.backend.cache.columns import EXACT_LIMIT, IntArray, NodeColumns
from schedviz.scheduler.framework.interface import Code, NodeScorer, Status, new_status
from schedviz.scheduler.framework.types import NodeInfo, is_scalar_resource_name

# (requested, allocatable), one entry per configured resource -> score.
Scorer = Callable[[Sequence[int], Sequence[int]], int]
# The same over many nodes: one column per configured resource (allocatable 0: left out).
ColumnScorer = Callable[[Sequence[IntArray], Sequence[IntArray]], IntArray]

RESOURCES_NOT_FOUND = "resources not found"


@dataclass(frozen=True, slots=True)
class PodRequestsState:
    """What PreScore leaves for Score: the pod's requests, in the configured resources' order."""

    pod_requests: tuple[int, ...]

    def clone(self) -> PodRequestsState:
        return self


class ResourceAllocationScorer:
    """Scores a node from its allocatable and requested amounts of the configured resources."""

    __slots__ = (
        "column_scorer",
        "enable_in_place_pod_vertical_scaling",
        "enable_pod_level_resources",
        "name",
        "resources",
        "scorer",
        "use_requested",
    )

    def __init__(
        self,
        name: str,
        scorer: Scorer,
        resources: Sequence[ResourceSpec],
        use_requested: bool,
        column_scorer: ColumnScorer | None = None,
        *,
        enable_in_place_pod_vertical_scaling: bool = False,
        enable_pod_level_resources: bool = False,
    ) -> None:
        self.name = name
        self.scorer = scorer
        # The strategy over node columns, when it has one.
        self.column_scorer = column_scorer
        self.resources = tuple(resources)
        # Whether to use the requests as they are (True) or the non-zero requests, where a
        # container without a cpu or memory request counts the scheduler's defaults.
        self.use_requested = use_requested
        # Upstream sets these for BalancedAllocation only: NodeResourcesFit's strategies build
        # their scorer without them (nodeResourceStrategyTypeMap), so its scores read the
        # containers' spec requests, neither pod-level nor resized ones.
        self.enable_in_place_pod_vertical_scaling = enable_in_place_pod_vertical_scaling
        self.enable_pod_level_resources = enable_pod_level_resources

    def score(self, node_info: NodeInfo, pod_requests: Sequence[int]) -> tuple[int, Status | None]:
        score_node = self.node_scorer(pod_requests)
        if isinstance(score_node, Status):
            return 0, score_node
        return score_node(node_info), None

    def node_scorer(self, pod_requests: Sequence[int]) -> NodeScorer | Status:
        """``score`` for one pod's requests, as a function of the node: what depends on the pod
        alone (which resources take part) is worked out once."""
        if not self.resources:
            return new_status(Code.Error, RESOURCES_NOT_FOUND)
        count = len(self.resources)
        # An extended resource the pod does not request never takes part.
        wanted = [
            (i, spec.name, pod_requests[i])
            for i, spec in enumerate(self.resources)
            if pod_requests[i] != 0 or not is_scalar_resource_name(spec.name)
        ]
        calculate = self.calculate_resource_allocatable_request
        scorer = self.scorer

        def score_node(node_info: NodeInfo) -> int:
            requested = [0] * count
            allocatable = [0] * count
            for i, resource, pod_request in wanted:
                alloc, req = calculate(node_info, resource, pod_request)
                # A resource the node does not offer takes no part in the score.
                if alloc == 0:
                    continue
                allocatable[i] = alloc
                requested[i] = req
            return scorer(requested, allocatable)

        return score_node

    def score_columns(
        self, pod_requests: Sequence[int], columns: NodeColumns, rows: IntArray
    ) -> IntArray | None:
        """``score`` of the nodes at ``rows``, column-wise; None where the columns cannot say
        (no column scorer, no resources: ``score``'s error, an extended resource requested)."""
        column_scorer = self.column_scorer
        if column_scorer is None or not self.resources:
            return None
        requested: list[IntArray] = []
        allocatable: list[IntArray] = []
        for spec, pod_request in zip(self.resources, pod_requests, strict=True):
            resource = spec.name
            if not -EXACT_LIMIT < pod_request < EXACT_LIMIT:
                return None
            if resource == RESOURCE_CPU:
                alloc = columns.alloc_cpu[rows]
                used = (columns.requested_cpu if self.use_requested else columns.non_zero_cpu)[rows]
            elif resource == RESOURCE_MEMORY:
                alloc = columns.alloc_memory[rows]
                used = (
                    columns.requested_memory if self.use_requested else columns.non_zero_memory
                )[rows]
            elif resource == RESOURCE_EPHEMERAL_STORAGE:
                alloc = columns.alloc_ephemeral[rows]
                used = columns.requested_ephemeral[rows]
            elif pod_request == 0 and is_scalar_resource_name(resource):
                zeros = np.zeros(len(rows), dtype=np.int64)
                requested.append(zeros)
                allocatable.append(zeros)
                continue
            else:
                return None
            # A resource the node does not offer takes no part in the score.
            requested.append(np.where(alloc == 0, 0, used + pod_request))
            allocatable.append(alloc)
        return column_scorer(requested, allocatable)

    def calculate_resource_allocatable_request(
        self, node_info: NodeInfo, resource: str, pod_request: int
    ) -> tuple[int, int]:
        """The node's allocatable amount and its requested amount with the pod added.

        An extended resource the pod does not request gives (0, 0), so it is left out.
        """
        requested = node_info.requested if self.use_requested else node_info.non_zero_requested
        if pod_request == 0 and is_scalar_resource_name(resource):
            return 0, 0
        allocatable = node_info.allocatable
        if resource == RESOURCE_CPU:
            return allocatable.milli_cpu, requested.milli_cpu + pod_request
        if resource == RESOURCE_MEMORY:
            return allocatable.memory, requested.memory + pod_request
        if resource == RESOURCE_EPHEMERAL_STORAGE:
            return (
                allocatable.ephemeral_storage,
                node_info.requested.ephemeral_storage + pod_request,
            )
        if resource in allocatable.scalar_resources:
            return (
                allocatable.scalar_resources[resource],
                node_info.requested.scalar_resources.get(resource, 0) + pod_request,
            )
        return 0, 0

    def calculate_pod_resource_request_list(self, pod: Pod) -> list[int]:
        """The pod's request of each configured resource, in the configured order."""
        requests = self._pod_requests(pod)
        return [_request_of(requests, spec.name) for spec in self.resources]

    def calculate_pod_resource_request(self, pod: Pod, resource: str) -> int:
        """The pod's request of one resource: cpu in millicores, the rest as integers."""
        return _request_of(self._pod_requests(pod), resource)

    def _pod_requests(self, pod: Pod) -> Amounts:
        return pod_requests(
            pod,
            None if self.use_requested else NON_ZERO_DEFAULTS,
            use_status_resources=self.enable_in_place_pod_vertical_scaling,
            skip_pod_level_resources=not self.enable_pod_level_resources,
        )


def _request_of(requests: Amounts, resource: str) -> int:
    amount = requests.get(resource)
    return 0 if amount is None else to_int(resource, amount)


def weighted_scorer(
    resources: Sequence[ResourceSpec], resource_score: Callable[[int, int], int]
) -> Scorer:
    """The weighted average of ``resource_score(requested, allocatable)`` over the resources the
    node has, in Go's integer arithmetic (the operands are never negative, so ``//`` is Go's
    ``/``)."""
    weights = [spec.weight for spec in resources]

    def score(requested: Sequence[int], allocatable: Sequence[int]) -> int:
        node_score = weight_sum = 0
        for i, capacity in enumerate(allocatable):
            if capacity == 0:
                continue
            node_score += resource_score(requested[i], capacity) * weights[i]
            weight_sum += weights[i]
        if weight_sum == 0:
            return 0
        return node_score // weight_sum

    return score


def weighted_column_scorer(
    resources: Sequence[ResourceSpec],
    resource_scores: Callable[[IntArray, IntArray], IntArray],
) -> ColumnScorer:
    """``weighted_scorer`` over node columns: ``resource_scores(requested, allocatable)`` gives
    each node's score of one resource (0 where the node lacks it)."""
    weights = [spec.weight for spec in resources]

    def score(requested: Sequence[IntArray], allocatable: Sequence[IntArray]) -> IntArray:
        count = len(allocatable[0]) if allocatable else 0
        node_score = np.zeros(count, dtype=np.int64)
        weight_sum = np.zeros(count, dtype=np.int64)
        for i, capacity in enumerate(allocatable):
            node_score += resource_scores(requested[i], capacity) * weights[i]
            weight_sum += np.where(capacity == 0, 0, weights[i])
        return np.where(weight_sum == 0, 0, node_score // np.where(weight_sum == 0, 1, weight_sum))

    return score


def is_best_effort_pod(pod_requests: Sequence[int]) -> bool:
    """Whether the pod requests none of the configured resources."""
    return all(request == 0 for request in pod_requests)
