"""The LeastAllocated scoring strategy of NodeResourcesFit.

Mirrors pkg/scheduler/framework/plugins/noderesources/least_allocated.go: nodes with more room
left score higher,
(cpu((capacity-requested)*MaxNodeScore*cpuWeight/capacity) + memory(...) + ...) / weightSum.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from schedviz.scheduler.apis.config.types_pluginargs import ResourceSpec
from schedviz.scheduler.backend.cache.columns import IntArray
from schedviz.scheduler.framework.interface import MAX_NODE_SCORE
from schedviz.scheduler.framework.plugins.noderesources.resource_allocation import (
    ColumnScorer,
    Scorer,
    weighted_column_scorer,
    weighted_scorer,
)


def least_resource_scorer(resources: Sequence[ResourceSpec]) -> Scorer:
    return weighted_scorer(resources, least_requested_score)


def least_resource_column_scorer(resources: Sequence[ResourceSpec]) -> ColumnScorer:
    return weighted_column_scorer(resources, least_requested_scores)


def least_requested_scores(requested: IntArray, capacity: IntArray) -> IntArray:
    """``least_requested_score`` of many nodes."""
    unused = (capacity - requested) * MAX_NODE_SCORE // np.where(capacity == 0, 1, capacity)
    return np.where((capacity == 0) | (requested > capacity), 0, unused)


def least_requested_score(requested: int, capacity: int) -> int:
    """The unused share of the capacity on a 0-MaxNodeScore scale."""
    if capacity == 0 or requested > capacity:
        return 0
    return (capacity - requested) * MAX_NODE_SCORE // capacity
