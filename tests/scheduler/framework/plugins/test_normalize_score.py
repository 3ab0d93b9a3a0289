"""Ports pkg/scheduler/framework/plugins/helper/normalize_score_test.go."""

from __future__ import annotations

import pytest

from schedviz.scheduler.framework.interface import MAX_NODE_SCORE, NodeScore
from schedviz.scheduler.framework.plugins.helper.normalize_score import default_normalize_score


@pytest.mark.parametrize(
    ("reverse", "scores", "expected"),
    [
        (False, [1, 2, 3, 4], [25, 50, 75, 100]),
        (True, [1, 2, 3, 4], [75, 50, 25, 0]),
        (False, [1000, 10, 20, 30], [100, 1, 2, 3]),
        (True, [1000, 10, 20, 30], [0, 99, 98, 97]),
        (False, [1, 1, 1, 1], [100, 100, 100, 100]),
        (False, [1000, 1, 1, 1], [100, 0, 0, 0]),
        (True, [0, 1, 1, 1], [100, 0, 0, 0]),
        (False, [0, 0, 0, 0], [0, 0, 0, 0]),
        (True, [0, 0, 0, 0], [100, 100, 100, 100]),
    ],
)
def test_default_normalize_score(reverse: bool, scores: list[int], expected: list[int]) -> None:
    node_scores = [NodeScore(f"n{i}", score) for i, score in enumerate(scores)]
    assert default_normalize_score(MAX_NODE_SCORE, reverse, node_scores) is None
    assert [s.score for s in node_scores] == expected
