"""schedviz.compare.results: placements, differing pods, balance, per-plugin scores, drivers."""

from __future__ import annotations

import math
from typing import Any

import pytest

from schedviz.compare.results import (
    VariantResult,
    balance,
    balance_of,
    compare,
    differing,
    drivers,
    placements,
    plugin_summaries,
    pod_scores,
    utilisation,
)


def _pod(node: str | None, scores: dict[str, int] | None = None) -> dict[str, Any]:
    return {
        "node": node,
        "result": "Scheduled" if node else "Unschedulable",
        "attempts": 1,
        "message": "",
        "scores": scores or {},
        "total": sum((scores or {}).values()) if node else None,
    }


def _node(cpu: int, cpu_used: int, pods: int = 10, pods_used: int = 0) -> dict[str, Any]:
    return {
        "allocatable": {"cpu": cpu, "memory": 0, "pods": pods},
        "requested": {"cpu": cpu_used, "memory": 0, "pods": pods_used},
    }


SPREAD = VariantResult.from_json(
    "spread",
    {
        "cycles": 3,
        "pods": {
            "default/a": _pod("n1", {"Fit": 80, "Balanced": 90}),
            "default/b": _pod("n2", {"Fit": 70, "Balanced": 95}),
            "default/c": _pod(None),
        },
        "nodes": {"n1": _node(4000, 1000, pods_used=1), "n2": _node(4000, 3000, pods_used=1)},
    },
)
PACK = VariantResult.from_json(
    "pack",
    {
        "cycles": 3,
        "pods": {
            "default/a": _pod("n1", {"Fit": 20}),
            "default/b": _pod("n1", {"Fit": 40}),
            "default/c": _pod("n2", {"Fit": 10}),
        },
        "nodes": {"n1": _node(4000, 4000, pods_used=2), "n2": _node(4000, 0, pods_used=1)},
        "preempted": [],
    },
)


def test_placements_list_every_pod_with_its_node_per_variant() -> None:
    rows = placements([SPREAD, PACK])
    assert [(row.pod, row.nodes) for row in rows] == [
        ("default/a", ("n1", "n1")),
        ("default/b", ("n2", "n1")),
        ("default/c", (None, "n2")),
    ]


def test_a_pod_lands_differently_on_another_node_or_when_placed_in_only_one_variant() -> None:
    assert [row.pod for row in differing([SPREAD, PACK])] == ["default/b", "default/c"]
    assert differing([SPREAD, SPREAD]) == []


def test_utilisation_is_requested_over_allocatable_and_skips_nodes_allocating_none() -> None:
    assert utilisation(SPREAD, "cpu") == {"n1": 0.25, "n2": 0.75}
    assert utilisation(SPREAD, "memory") == {}
    assert balance(SPREAD, "memory") is None


def test_balance_is_mean_population_stdev_and_max_minus_min() -> None:
    result = balance(SPREAD, "cpu")
    assert result is not None
    assert result.mean == pytest.approx(0.5)
    assert result.stdev == pytest.approx(0.25)
    assert result.spread == pytest.approx(0.5)
    packed = balance(PACK, "cpu")
    assert packed is not None and packed.stdev == pytest.approx(0.5)
    three = balance_of([0.1, 0.2, 0.6])
    assert three is not None
    assert three.stdev == pytest.approx(math.sqrt(((0.1 - 0.3) ** 2 + 0.1**2 + 0.3**2) / 3))
    assert balance_of([]) is None


def test_pod_scores_give_each_plugins_weighted_score_on_the_chosen_node_per_variant() -> None:
    rows = {(row.pod, row.plugin): row.scores for row in pod_scores([SPREAD, PACK])}
    assert rows[("default/a", "Fit")] == (80, 20)
    assert rows[("default/a", "Balanced")] == (90, None)
    assert rows[("default/c", "Fit")] == (None, 10)
    assert ("default/c", "Balanced") not in rows


def test_plugin_means_cover_the_pods_each_variant_scored_and_drivers_the_moved_pods() -> None:
    summaries = {s.plugin: s for s in plugin_summaries([SPREAD, PACK])}
    assert summaries["Fit"].means == (75.0, pytest.approx(70 / 3))
    assert summaries["Balanced"].means == (92.5, None)
    # Moved pods: b (both placed) and c (placed only in pack); absent plugins count 0.
    assert summaries["Fit"].differing_means == (70.0, 25.0)
    assert summaries["Balanced"].differing_means == (95.0, 0.0)
    assert summaries["Balanced"].drive == 95.0
    assert drivers([SPREAD, PACK]) == ["Balanced", "Fit"]


def test_nothing_drives_a_difference_when_every_pod_lands_the_same() -> None:
    assert drivers([PACK, PACK]) == []
    assert all(s.drive == 0 for s in plugin_summaries([PACK, PACK]))


def test_unschedulable_counts_exclude_preempted_pods() -> None:
    victim = VariantResult.from_json(
        "victim",
        {"pods": {"default/a": _pod(None), "default/b": _pod(None)}, "preempted": ["default/a"]},
    )
    assert victim.unschedulable == 1
    assert SPREAD.unschedulable == 1 and PACK.unschedulable == 0


def test_the_comparison_as_json_names_variants_and_lists_differing_pods_and_drivers() -> None:
    document = compare([SPREAD, PACK]).to_json()
    assert [v["name"] for v in document["variants"]] == ["spread", "pack"]
    assert document["variants"][0]["scheduled"] == 2
    assert document["variants"][0]["unschedulable"] == 1
    assert document["variants"][1]["balance"]["cpu"]["maxMinusMin"] == pytest.approx(1.0)
    assert document["placements"]["default/b"] == {"spread": "n2", "pack": "n1"}
    assert document["differing"] == ["default/b", "default/c"]
    assert document["utilisation"]["n1"]["pack"]["cpu"] == 1.0
    assert document["drivers"] == ["Balanced", "Fit"]
    assert {"pod": "default/a", "plugin": "Fit", "scores": {"spread": 80, "pack": 20}} in (
        document["podScores"]
    )
