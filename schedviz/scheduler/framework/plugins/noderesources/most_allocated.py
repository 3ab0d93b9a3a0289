"""The MostAllocated scoring strategy of NodeResourcesFit.

Mirrors pkg/scheduler/framework/plugins/noderesources/most_allocated.go: nodes with more
requested score higher,
(cpu(MaxNodeScore*requested*cpuWeight/capacity) + memory(...) + ...) / weightSum.
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


def most_resource_scorer(resources: Sequence[ResourceSpec]) -> Scorer:
    return weighted_scorer(resources, most_requested_score)


def most_resource_column_scorer(resources: Sequence[ResourceSpec]) -> ColumnScorer:
    return weighted_column_scorer(resources, most_requested_scores)


def most_requested_scores(requested: IntArray, capacity: IntArray) -> IntArray:
    """``most_requested_score`` of many nodes."""
    used = np.minimum(requested, capacity) * MAX_NODE_SCORE // np.where(capacity == 0, 1, capacity)
    return np.where(capacity == 0, 0, used)


def most_requested_score(requested: int, capacity: int) -> int:
    """The used share of the capacity on a 0-MaxNodeScore scale."""
    if capacity == 0:
        return 0
    # Requests can exceed the capacity because pods without requests count the defaults.
    requested = min(requested, capacity)
    return requested * MAX_NODE_SCORE // capacity
