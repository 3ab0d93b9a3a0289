"""The RequestedToCapacityRatio scoring strategy of NodeResourcesFit.

Mirrors pkg/scheduler/framework/plugins/noderesources/requested_to_capacity_ratio.go: each
resource's utilization (0-100) goes through a user-defined broken linear shape, whose scores
(0-MaxCustomPriorityScore) are scaled to 0-MaxNodeScore; the node's score is the weighted
average, rounded half away from zero as Go's math.Round does.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

from schedviz.scheduler.apis.config.types_pluginargs import ResourceSpec, UtilizationShapePoint
from schedviz.scheduler.framework.interface import MAX_NODE_SCORE
from schedviz.scheduler.framework.plugins.helper.shape_score import (
    FunctionShape,
    FunctionShapePoint,
    build_broken_linear_function,
)
from schedviz.scheduler.framework.plugins.noderesources.resource_allocation import Scorer

MAX_UTILIZATION = 100
# pkg/scheduler/apis/config: the highest score a shape point may give.
MAX_CUSTOM_PRIORITY_SCORE = 10


def requested_to_capacity_ratio_scorer(
    resources: Sequence[ResourceSpec], shape: Sequence[UtilizationShapePoint]
) -> Scorer:
    scaled = [
        FunctionShapePoint(
            point.utilization, point.score * (MAX_NODE_SCORE // MAX_CUSTOM_PRIORITY_SCORE)
        )
        for point in shape
    ]
    return build_requested_to_capacity_ratio_scorer_function(scaled, resources)


def build_requested_to_capacity_ratio_scorer_function(
    scoring_function_shape: FunctionShape, resources: Sequence[ResourceSpec]
) -> Scorer:
    raw_scoring_function = build_broken_linear_function(scoring_function_shape)
    weights = [spec.weight for spec in resources]

    def resource_scoring_function(requested: int, capacity: int) -> int:
        if capacity == 0 or requested > capacity:
            return raw_scoring_function(MAX_UTILIZATION)
        return raw_scoring_function(requested * MAX_UTILIZATION // capacity)

    def score(requested: Sequence[int], allocatable: Sequence[int]) -> int:
        node_score = weight_sum = 0
        for i, capacity in enumerate(allocatable):
            if capacity == 0:
                continue
            resource_score = resource_scoring_function(requested[i], capacity)
            if resource_score > 0:
                node_score += resource_score * weights[i]
                weight_sum += weights[i]
        if weight_sum == 0:
            return 0
        return _round_half_away_from_zero(node_score / weight_sum)

    return score


def _round_half_away_from_zero(value: float) -> int:
    """Go's math.Round (Python's round() rounds half to even)."""
    truncated = math.trunc(value)
    if abs(value - truncated) >= 0.5:
        truncated += 1 if value > 0 else -1
    return truncated
