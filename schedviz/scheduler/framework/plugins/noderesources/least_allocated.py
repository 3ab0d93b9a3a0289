"""The LeastAllocated scoring strategy of NodeResourcesFit.

Mirrors pkg/scheduler/framework/plugins/noderesources/least_allocated.go: nodes with more room
left score higher,
(cpu((capacity-requested)*MaxNodeScore*cpuWeight/capacity) + memory(...) + ...) / weightSum.
"""

from __future__ import annotations

from collections.abc import Sequence

from schedviz.scheduler.apis.config.types_pluginargs import ResourceSpec
from schedviz.scheduler.framework.interface import MAX_NODE_SCORE
from schedviz.scheduler.framework.plugins.noderesources.resource_allocation import (
    Scorer,
    weighted_scorer,
)


def least_resource_scorer(resources: Sequence[ResourceSpec]) -> Scorer:
    return weighted_scorer(resources, least_requested_score)


def least_requested_score(requested: int, capacity: int) -> int:
    """The unused share of the capacity on a 0-MaxNodeScore scale."""
    if capacity == 0 or requested > capacity:
        return 0
    return (capacity - requested) * MAX_NODE_SCORE // capacity
