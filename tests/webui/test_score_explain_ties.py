"""The decision sentence of a cycle whose trace lacks the tie set (rebuilt from
kube-scheduler-simulator's annotations): nodes sharing the top total read as a tie."""

from __future__ import annotations

from typing import Any

from webui.score_explain import decision


def _trace(tie_set: list[str]) -> dict[str, Any]:
    cell = {"raw": 50, "normalized": 50, "weight": 1, "weighted": 50}
    return {
        "result": "Scheduled",
        "node": "node-b",
        "totalNodes": 3,
        "feasibleNodes": 3,
        "totals": {"node-a": 50, "node-b": 50, "node-c": 20},
        "scores": {
            "node-a": {"NodeResourcesFit": cell},
            "node-b": {"NodeResourcesFit": cell},
            "node-c": {"NodeResourcesFit": {**cell, "raw": 20, "normalized": 20, "weighted": 20}},
        },
        "selected": {"node": "node-b", "tieSet": tie_set},
    }


def test_equal_top_totals_read_as_a_tie_even_without_the_tie_set() -> None:
    for tie_set in ([], ["node-b"], ["node-b", "node-a"]):
        said = decision(_trace(tie_set))
        assert said.tie == ("node-b", "node-a"), tie_set
        assert "ahead" not in said.sentence
        assert said.sentence.startswith("node-b won with 50, tied with node-a")
