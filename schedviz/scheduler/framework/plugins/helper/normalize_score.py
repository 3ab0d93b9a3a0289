"""Scaling raw scores to [0, max_priority].

Mirrors pkg/scheduler/framework/plugins/helper/normalize_score.go.
"""

from __future__ import annotations

from schedviz.scheduler.framework.interface import NodeScore, Status


def default_normalize_score(
    max_priority: int, reverse: bool, scores: list[NodeScore]
) -> Status | None:
    """Scales scores from [0, max(scores)] to [0, max_priority] in place, reversed if asked.

    Scores are assumed non-negative. When every score is 0 they stay 0, or all become
    ``max_priority`` when reversed.
    """
    max_count = max((node_score.score for node_score in scores), default=0)
    if max_count <= 0:
        if reverse:
            for node_score in scores:
                node_score.score = max_priority
        return None
    for node_score in scores:
        score = max_priority * node_score.score // max_count
        node_score.score = max_priority - score if reverse else score
    return None


def default_normalize_score_column(
    max_priority: int, reverse: bool, scores: list[int]
) -> list[int]:
    """``default_normalize_score`` of a column of scores (the nodes' in order), as a new list."""
    max_count = max(scores, default=0)
    if max_count <= 0:
        return [max_priority] * len(scores) if reverse else list(scores)
    if reverse:
        return [max_priority - max_priority * score // max_count for score in scores]
    return [max_priority * score // max_count for score in scores]
