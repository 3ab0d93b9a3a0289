"""Predict, then reveal: a guess against cycle traces the engine really produced (the simulator
runs small clusters, including the built-in lessons' manifests), and a few hand-made traces for
outcomes a small cluster cannot reach (an error, a cycle held at Permit)."""

from __future__ import annotations

from importlib import resources
from typing import Any

import pytest
import yaml

from schedviz.kube.load import load_manifests
from schedviz.scheduler.prediction import (
    UNSCHEDULABLE,
    NotRevealable,
    Verdict,
    reveal,
    score_rows,
)
from schedviz.simulation.simulator import new_simulation


def _node(name: str, cpu: str = "4", taints: list[dict[str, str]] | None = None) -> dict[str, Any]:
    return {
        "apiVersion": "v1",
        "kind": "Node",
        "metadata": {"name": name, "labels": {"kubernetes.io/hostname": name}},
        "spec": {"taints": taints or []},
        "status": {"allocatable": {"cpu": cpu, "memory": "8Gi", "pods": "110"}},
    }


def _pod(name: str, cpu: str = "1", **spec: Any) -> dict[str, Any]:
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": name, "namespace": "default"},
        "spec": {
            "containers": [{"name": "c", "image": "x", "resources": {"requests": {"cpu": cpu}}}],
            **spec,
        },
    }


def _cycles(text: str, seed: int = 1) -> list[dict[str, Any]]:
    simulation = new_simulation(load_manifests(text), seed=seed)
    simulation.run()
    cycles: list[dict[str, Any]] = simulation.document()["cycles"]
    return cycles


def _run(*documents: dict[str, Any], seed: int = 1) -> list[dict[str, Any]]:
    return _cycles(yaml.safe_dump_all(documents), seed)


def _lesson(slug: str) -> list[dict[str, Any]]:
    folder = resources.files("schedviz").joinpath("lessons", slug)
    return _cycles(folder.joinpath("manifests.yaml").read_text(encoding="utf-8"))


def _cycle_of(cycles: list[dict[str, Any]], pod: str, attempt: int = 1) -> dict[str, Any]:
    return next(c for c in cycles if c["pod"] == pod and c["attempt"] == attempt)


# ---------------------------------------------------------------------------------------------
# A Scheduled cycle (the resource-fit lesson: spread-me lands on node-b under LeastAllocated)


@pytest.fixture(scope="module")
def spread_me() -> dict[str, Any]:
    cycle = _cycle_of(_lesson("resource-fit"), "default/spread-me")
    assert cycle["result"] == "Scheduled" and cycle["node"] == "node-b"
    return cycle


def test_guessing_the_chosen_node_is_right(spread_me: dict[str, Any]) -> None:
    result = reveal(spread_me, "node-b")
    assert result.correct and result.verdict is Verdict.RIGHT
    assert result.landed == "node-b"
    assert result.cycle == spread_me["cycle"] and result.pod == "default/spread-me"
    assert result.message == "Successfully assigned default/spread-me to node-b"


def test_a_feasible_node_that_scored_lower_gets_the_per_plugin_table(
    spread_me: dict[str, Any],
) -> None:
    result = reveal(spread_me, "node-a")
    assert not result.correct and result.verdict is Verdict.SCORED_LOWER
    assert (result.guessed_total, result.chosen_total) == (
        spread_me["totals"]["node-a"],
        spread_me["totals"]["node-b"],
    )
    assert result.guessed_total is not None and result.chosen_total is not None
    assert result.guessed_total < result.chosen_total
    rows = {row.plugin: row for row in result.scores}
    assert set(rows) == set(spread_me["scores"]["node-b"])
    fit = rows["NodeResourcesFit"]
    assert (fit.guessed, fit.chosen, fit.weight) == (25, 75, 1)
    assert fit.decisive and fit.difference == 50
    # TaintToleration gives both 300: it did not make the difference.
    assert not rows["TaintToleration"].decisive
    assert "NodeResourcesFit" in result.decisive_plugins
    assert "TaintToleration" not in result.decisive_plugins
    # The rows add up to the totals the scheduler compared.
    assert sum(r.guessed for r in result.scores) == result.guessed_total
    assert sum(r.chosen for r in result.scores) == result.chosen_total


def test_a_node_a_filter_rejected_names_the_plugin_and_its_reasons(
    spread_me: dict[str, Any],
) -> None:
    result = reveal(spread_me, "node-small")
    assert not result.correct and result.verdict is Verdict.FILTERED
    assert result.rejection is not None
    assert result.rejection.plugin == "NodeResourcesFit"
    assert result.rejection.reasons == ("Insufficient cpu", "Insufficient memory")
    assert result.rejection.stage == "" and not result.rejection.hypothetical


def test_guessing_unschedulable_for_a_pod_that_fit_is_wrong(spread_me: dict[str, Any]) -> None:
    result = reveal(spread_me, UNSCHEDULABLE)
    assert not result.correct and result.verdict is Verdict.SCHEDULED
    assert result.guessed_unschedulable and result.landed == "node-b"
    assert result.feasible_nodes == 2 and result.total_nodes == 3


def test_a_taint_rejection_quotes_upstreams_reason() -> None:
    web = _cycle_of(_lesson("taints-and-tolerations"), "default/web")
    result = reveal(web, "gpu-1")
    assert result.verdict is Verdict.FILTERED and result.rejection is not None
    assert result.rejection.plugin == "TaintToleration"
    assert result.rejection.code == "UnschedulableAndUnresolvable"
    assert result.rejection.reasons == ("node(s) had untolerated taint {dedicated: gpu}",)


def test_a_node_cut_by_prefilter_is_told_apart_from_a_filter_rejection() -> None:
    affinity = {
        "nodeAffinity": {
            "requiredDuringSchedulingIgnoredDuringExecution": {
                "nodeSelectorTerms": [
                    {
                        "matchFields": [
                            {"key": "metadata.name", "operator": "In", "values": ["node-a"]}
                        ]
                    }
                ]
            }
        }
    }
    (cycle,) = _run(_node("node-a"), _node("node-b"), _pod("pinned", affinity=affinity))
    assert cycle["preFilter"]["nodes"] == ["node-a"]
    result = reveal(cycle, "node-b")
    assert result.verdict is Verdict.PREFILTER and result.rejection is not None
    assert result.rejection.stage == "PreFilter"
    assert result.rejection.reasons == ("node(s) didn't satisfy plugin(s) [NodeAffinity]",)
    assert reveal(cycle, "node-a").correct


def test_a_node_past_the_walks_end_was_not_evaluated() -> None:
    # 200 nodes at 50%: the walk stops after 100 feasible nodes (upstream's minimum).
    config = {
        "apiVersion": "kubescheduler.config.k8s.io/v1",
        "kind": "KubeSchedulerConfiguration",
        "percentageOfNodesToScore": 50,
    }
    nodes = [_node(f"node-{i:03d}") for i in range(200)]
    (cycle,) = _run(config, *nodes, _pod("web"))
    assert cycle["notEvaluated"] and cycle["evaluatedNodes"] == 100
    skipped = cycle["notEvaluated"][0]
    result = reveal(cycle, skipped)
    assert not result.correct and result.verdict is Verdict.NOT_EVALUATED
    assert (result.evaluated_nodes, result.total_nodes) == (100, 200)
    assert result.rejection is None


def test_a_tie_lost_to_the_random_pick_is_named_with_the_tie_set() -> None:
    (cycle,) = _run(_node("node-a"), _node("node-b"), _pod("web"))
    tie_set = cycle["selected"]["tieSet"]
    assert sorted(tie_set) == ["node-a", "node-b"]
    loser = next(n for n in tie_set if n != cycle["node"])
    result = reveal(cycle, loser)
    assert not result.correct and result.verdict is Verdict.LOST_TIE
    assert result.guessed_total == result.chosen_total
    assert set(result.tie_set) == {"node-a", "node-b"}
    assert result.decisive_plugins == ()


def test_a_pod_that_fits_nowhere_quotes_the_fit_error() -> None:
    (cycle,) = _run(_node("node-a", cpu="2"), _pod("huge", cpu="64"))
    assert cycle["result"] == "Unschedulable"
    right = reveal(cycle, UNSCHEDULABLE)
    assert right.correct and right.verdict is Verdict.RIGHT and right.landed is None
    wrong = reveal(cycle, "node-a")
    assert not wrong.correct and wrong.verdict is Verdict.UNSCHEDULABLE
    assert wrong.message.startswith("0/1 nodes are available: 1 Insufficient cpu.")
    assert wrong.rejection is not None and wrong.rejection.plugin == "NodeResourcesFit"


@pytest.fixture(scope="module")
def preemption_lesson() -> list[dict[str, Any]]:
    return _lesson("priority-and-preemption")


def test_preemption_lands_the_pod_on_the_nominated_node(
    preemption_lesson: list[dict[str, Any]],
) -> None:
    first = _cycle_of(preemption_lesson, "default/web-2", attempt=1)
    assert first["result"] == "Unschedulable" and first["nominatedNode"] == "node-a"
    right = reveal(first, "node-a")
    assert right.correct and right.verdict is Verdict.RIGHT and right.landed == "node-a"
    assert right.victims == ("default/low-1",)
    wrong = reveal(first, UNSCHEDULABLE)
    assert not wrong.correct and wrong.verdict is Verdict.PREEMPTION
    assert wrong.nominated_node == "node-a"
    assert wrong.message.startswith("0/1 nodes are available: 1 Insufficient cpu.")


def test_a_pod_not_allowed_to_preempt_stays_unschedulable(
    preemption_lesson: list[dict[str, Any]],
) -> None:
    polite = _cycle_of(preemption_lesson, "default/polite")
    result = reveal(polite, "node-a")
    assert result.verdict is Verdict.UNSCHEDULABLE and result.nominated_node is None
    assert "preemption: not eligible due to preemptionPolicy=Never." in result.message


def test_a_nominated_node_that_fits_is_the_only_node_looked_at() -> None:
    # node-b's taint keeps web off it; web preempts low on node-a, then its second cycle tries
    # node-a first and looks at nothing else.
    taint = [{"key": "dedicated", "value": "x", "effect": "NoSchedule"}]
    low = _pod("low", cpu="3", nodeName="node-a")
    high_class = {
        "apiVersion": "scheduling.k8s.io/v1",
        "kind": "PriorityClass",
        "metadata": {"name": "high"},
        "value": 1000,
    }
    web = _pod("web", cpu="3", priorityClassName="high")
    cycles = _run(high_class, _node("node-a"), _node("node-b", taints=taint), low, web)
    second = _cycle_of(cycles, "default/web", attempt=2)
    assert second["result"] == "Scheduled" and second["nominatedNodeTried"] == "node-a"
    result = reveal(second, "node-b")
    assert not result.correct and result.verdict is Verdict.NOMINATED_FIRST
    assert result.nominated_node_tried == "node-a"
    assert "node-b" not in second["filter"] and result.rejection is None


def test_a_node_the_cycle_never_saw_is_reported_unknown(spread_me: dict[str, Any]) -> None:
    result = reveal(spread_me, "node-gone")
    assert not result.correct and result.verdict is Verdict.UNKNOWN_NODE


def test_score_rows_follow_the_chosen_nodes_plugin_order(spread_me: dict[str, Any]) -> None:
    rows = score_rows(spread_me, "node-a", "node-b")
    assert [r.plugin for r in rows] == list(spread_me["scores"]["node-b"])


# ---------------------------------------------------------------------------------------------
# Outcomes a small cluster does not reach


def test_a_cycle_held_at_permit_cannot_be_revealed_yet() -> None:
    with pytest.raises(NotRevealable):
        reveal({"cycle": 3, "pod": "default/a", "result": "Waiting", "node": "n"}, "n")


def test_an_error_decides_nothing_and_is_never_right() -> None:
    trace = {
        "cycle": 4,
        "pod": "default/a",
        "result": "Error",
        "node": None,
        "message": 'running PreFilter plugin "X": boom',
        "filter": {},
    }
    for guess in ("n", UNSCHEDULABLE):
        result = reveal(trace, guess)
        assert not result.correct and result.verdict is Verdict.ERROR
        assert result.message == 'running PreFilter plugin "X": boom'
