"""Broken linear functions for shaped scoring.

Mirrors pkg/scheduler/framework/plugins/helper/shape_score.go. Segment interpolation uses Go's
int64 division, which truncates toward zero even when a falling segment makes the product
negative.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass


@dataclass(frozen=True, slots=True)
class FunctionShapePoint:
    """One point of a shape: the function's value ``score`` at ``utilization``."""

    utilization: int
    score: int


FunctionShape = Sequence[FunctionShapePoint]


def _div_trunc(numerator: int, denominator: int) -> int:
    """Go's int64 ``/``: the quotient truncated toward zero."""
    quotient = abs(numerator) // abs(denominator)
    return quotient if (numerator < 0) == (denominator < 0) else -quotient


def build_broken_linear_function(shape: FunctionShape) -> Callable[[int], int]:
    """A function made of linear segments meeting at the shape's points.

    f(p) is shape[0].score below the first point, shape[-1].score above the last one, and
    linear in between.
    """
    points = tuple(shape)

    def broken_linear(p: int) -> int:
        for i, point in enumerate(points):
            if p <= point.utilization:
                if i == 0:
                    return points[0].score
                previous = points[i - 1]
                return previous.score + _div_trunc(
                    (point.score - previous.score) * (p - previous.utilization),
                    point.utilization - previous.utilization,
                )
        return points[-1].score

    return broken_linear
