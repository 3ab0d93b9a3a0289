"""The NodeResourcesBalancedAllocation plugin: favour nodes whose resources are used evenly.

Mirrors pkg/scheduler/framework/plugins/noderesources/balanced_allocation.go (v1.35). The score is
(1 - std) * MaxNodeScore, where std is the standard deviation of the requested/allocatable
fractions of the configured resources, in float64 as upstream and truncated to an integer at the
end. Best-effort pods are skipped at PreScore. Extended resources backed by DRA (alpha) are not
modelled. ``score_columns`` (not upstream) scores many nodes at once in the same float64
operations.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np

from schedviz.kube.objects import Pod
from schedviz.scheduler.apis.config.types_pluginargs import NodeResourcesBalancedAllocationArgs
from schedviz.scheduler.apis.config.validation import (
    ConfigError,
    validate_node_resources_balanced_allocation_args,
)
from schedviz.scheduler.backend.cache.columns import IntArray, NodeColumns, distinct
from schedviz.scheduler.framework.cycle_state import CycleState
from schedviz.scheduler.framework.interface import (
    MAX_NODE_SCORE,
    Code,
    Handle,
    NodeScorer,
    NodeScorerPlugin,
    PreScorePlugin,
    ScoreExtensions,
    Status,
)
from schedviz.scheduler.framework.plugins import names
from schedviz.scheduler.framework.plugins.noderesources.resource_allocation import (
    PodRequestsState,
    ResourceAllocationScorer,
    is_best_effort_pod,
)
from schedviz.scheduler.framework.types import NodeInfo

NAME = names.NODE_RESOURCES_BALANCED_ALLOCATION
PRE_SCORE_STATE_KEY = "PreScore" + NAME


class BalancedAllocation(PreScorePlugin, NodeScorerPlugin):
    def __init__(self, args: NodeResourcesBalancedAllocationArgs, handle: Handle) -> None:
        self._scorer = ResourceAllocationScorer(
            NAME,
            balanced_resource_scorer,
            args.resources,
            use_requested=True,
            column_scorer=balanced_resource_column_scorer,
            enable_in_place_pod_vertical_scaling=True,
            enable_pod_level_resources=True,
        )

    def name(self) -> str:
        return NAME

    def pre_score(self, state: CycleState, pod: Pod, nodes: Sequence[NodeInfo]) -> Status | None:
        pod_requests = self._scorer.calculate_pod_resource_request_list(pod)
        if is_best_effort_pod(pod_requests):
            # Scoring best-effort pods would pile them onto the same node
            # (kubernetes/kubernetes#129138).
            return Status(Code.Skip)
        state.write(PRE_SCORE_STATE_KEY, PodRequestsState(tuple(pod_requests)))
        return None

    def score(self, state: CycleState, pod: Pod, node_info: NodeInfo) -> tuple[int, Status | None]:
        score_node = self.node_scorer(state, pod)
        if isinstance(score_node, Status):
            return 0, score_node
        return score_node(node_info), None

    def node_scorer(self, state: CycleState, pod: Pod) -> NodeScorer | Status:
        try:
            pod_requests: Sequence[int] = state.read_as(
                PRE_SCORE_STATE_KEY, PodRequestsState
            ).pod_requests
        except (KeyError, TypeError):
            pod_requests = self._scorer.calculate_pod_resource_request_list(pod)
            if is_best_effort_pod(pod_requests):
                return _score_zero
        return self._scorer.node_scorer(pod_requests)

    def score_columns(
        self, state: CycleState, pod: Pod, columns: NodeColumns, rows: IntArray
    ) -> IntArray | None:
        try:
            pod_requests: Sequence[int] = state.read_as(
                PRE_SCORE_STATE_KEY, PodRequestsState
            ).pod_requests
        except (KeyError, TypeError):
            return None  # node by node
        return self._scorer.score_columns(pod_requests, columns, rows)

    def score_extensions(self) -> ScoreExtensions | None:
        return None


def _score_zero(node_info: NodeInfo) -> int:
    return 0


def balanced_resource_scorer(requested: Sequence[int], allocatable: Sequence[int]) -> int:
    fractions: list[float] = []
    total_fraction = 0.0
    for i, capacity in enumerate(allocatable):
        if capacity == 0:
            continue
        fraction = min(float(requested[i]) / float(capacity), 1.0)
        total_fraction += fraction
        fractions.append(fraction)

    std = 0.0
    # With two resources the standard deviation is half their difference; with one it is zero.
    if len(fractions) == 2:
        std = abs((fractions[0] - fractions[1]) / 2)
    elif len(fractions) > 2:
        mean = total_fraction / len(fractions)
        total = 0.0
        for fraction in fractions:
            total = total + (fraction - mean) * (fraction - mean)
        std = math.sqrt(total / len(fractions))
    # int64(...) in Go truncates toward zero.
    return math.trunc((1 - std) * float(MAX_NODE_SCORE))


def balanced_resource_column_scorer(
    requested: Sequence[IntArray], allocatable: Sequence[IntArray]
) -> IntArray:
    """``balanced_resource_scorer`` of many nodes, in the same float64 operations: the nodes
    offering the same set of the resources are scored together."""
    count = len(allocatable[0]) if allocatable else 0
    scores = np.zeros(count, dtype=np.int64)
    present = [capacity != 0 for capacity in allocatable]
    # Each node's set of offered resources as a bit pattern; usually every node offers all.
    patterns = np.zeros(count, dtype=np.int64)
    for i, offered in enumerate(present):
        patterns |= offered.astype(np.int64) << i
    for pattern in distinct(patterns):
        nodes = np.flatnonzero(patterns == pattern)
        fractions = [
            np.minimum(
                requested[i][nodes].astype(np.float64) / allocatable[i][nodes].astype(np.float64),
                1.0,
            )
            for i in range(len(allocatable))
            if pattern >> i & 1
        ]
        std = np.zeros(len(nodes), dtype=np.float64)
        if len(fractions) == 2:
            std = np.abs((fractions[0] - fractions[1]) / 2)
        elif len(fractions) > 2:
            total_fraction = np.zeros(len(nodes), dtype=np.float64)
            for fraction in fractions:
                total_fraction = total_fraction + fraction
            mean = total_fraction / len(fractions)
            total = np.zeros(len(nodes), dtype=np.float64)
            for fraction in fractions:
                total = total + (fraction - mean) * (fraction - mean)
            std = np.sqrt(total / len(fractions))
        scores[nodes] = np.trunc((1 - std) * float(MAX_NODE_SCORE)).astype(np.int64)
    return scores


def new(args: object | None, handle: Handle) -> BalancedAllocation:
    if args is None:
        args = NodeResourcesBalancedAllocationArgs()
    if not isinstance(args, NodeResourcesBalancedAllocationArgs):
        got = type(args).__name__
        raise TypeError(f"want args to be of type NodeResourcesBalancedAllocationArgs, got {got}")
    errors = validate_node_resources_balanced_allocation_args("", args)
    if errors:
        raise ConfigError(errors)
    return BalancedAllocation(args, handle)
