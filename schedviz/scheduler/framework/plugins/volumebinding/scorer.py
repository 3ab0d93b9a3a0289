"""Scoring a node by how full the static volumes chosen for the pod would be.

Mirrors pkg/scheduler/framework/plugins/volumebinding/scorer.go: per storage class, the
requested share of the chosen PVs' capacity goes through the configured shape; the node's score
is the mean over classes, rounded half away from zero as Go's ``math.Round``.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from fractions import Fraction

from schedviz.scheduler.framework.plugins.helper.shape_score import (
    FunctionShape,
    build_broken_linear_function,
)

MAX_UTILIZATION = 100


@dataclass(slots=True)
class StorageResource:
    requested: int = 0
    capacity: int = 0


ClassResourceMap = Mapping[str, StorageResource]
VolumeCapacityScorer = Callable[[ClassResourceMap], int]


def _round_half_away_from_zero(value: Fraction) -> int:
    whole = int(abs(value) + Fraction(1, 2))
    return whole if value >= 0 else -whole


def _div_trunc(numerator: int, denominator: int) -> int:
    quotient = abs(numerator) // abs(denominator)
    return quotient if (numerator < 0) == (denominator < 0) else -quotient


def build_scorer_function(shape: FunctionShape) -> VolumeCapacityScorer:
    raw_scoring_function = build_broken_linear_function(shape)

    def class_score(requested: int, capacity: int) -> int:
        if capacity == 0 or requested > capacity:
            return raw_scoring_function(MAX_UTILIZATION)
        return raw_scoring_function(_div_trunc(requested * MAX_UTILIZATION, capacity))

    def scorer(class_resources: ClassResourceMap) -> int:
        # Every class weighs the same.
        if not class_resources:
            return 0
        total = sum(class_score(r.requested, r.capacity) for r in class_resources.values())
        return _round_half_away_from_zero(Fraction(total, len(class_resources)))

    return scorer
