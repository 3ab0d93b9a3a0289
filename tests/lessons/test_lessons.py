"""Every built-in lesson schedules as its explanation says (the engine alone, virtual time)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest

from schedviz.cluster.lessons import lesson_get, lesson_list
from schedviz.kube.load import load_manifests
from schedviz.scheduler.simulator import Simulation, new_simulation


def simulate(slug: str, seed: int = 0) -> Simulation:
    lesson = lesson_get(slug)
    simulation = new_simulation(
        load_manifests(lesson.manifests, f"{slug}/manifests.yaml"), seed=seed
    )
    simulation.run()
    return simulation


def cycles(simulation: Simulation, pod: str) -> list[dict[str, Any]]:
    return [t.to_json() for t in simulation.traces if t.pod == f"default/{pod}"]


def rejections(trace: dict[str, Any]) -> dict[str, list[str]]:
    """Per node, the reasons of its rejecting filter entry (nodes that passed left out)."""
    return {
        node: entry.get("reasons", [])
        for node, entries in trace["filter"].items()
        for entry in entries
        if entry["code"] != "Success"
    }


def check_resource_fit(simulation: Simulation) -> None:
    placements = simulation.placements()
    assert placements["default/spread-me"] == "node-b"  # LeastAllocated
    assert placements["default/pack-me"] == "node-a"  # MostAllocated
    assert placements["default/ratio-me"] == "node-a"  # RequestedToCapacityRatio, rising
    (spread,) = cycles(simulation, "spread-me")
    assert rejections(spread) == {"node-small": ["Insufficient cpu", "Insufficient memory"]}
    fit = {node: s["NodeResourcesFit"]["raw"] for node, s in spread["scores"].items()}
    assert fit == {"node-a": 25, "node-b": 75}
    (pack,) = cycles(simulation, "pack-me")
    assert {n: s["NodeResourcesFit"]["raw"] for n, s in pack["scores"].items()} == {
        "node-a": 75,
        "node-b": 50,
    }


def check_taints(simulation: Simulation) -> None:
    placements = simulation.placements()
    assert placements["default/web"] == "node-a"
    assert placements["default/trainer"] == "gpu-1"
    assert placements["default/no-toleration"] == ""
    (web,) = cycles(simulation, "web")
    assert rejections(web) == {"gpu-1": ["node(s) had untolerated taint {dedicated: gpu}"]}
    assert web["totals"] == {"node-a": 486, "node-b": 186}
    (stuck,) = cycles(simulation, "no-toleration")
    assert stuck["message"].startswith(
        "0/3 nodes are available: 1 node(s) had untolerated taint {dedicated: gpu}, "
        "2 Insufficient nvidia.com/gpu."
    )


def check_node_affinity(simulation: Simulation) -> None:
    assert simulation.placements()["default/db"] == "node-c"
    (db,) = cycles(simulation, "db")
    reason = "node(s) didn't match Pod's node affinity/selector"
    assert rejections(db) == {"node-a": [reason], "node-b": [reason]}
    assert db["totals"] == {"node-c": 675, "node-d": 475}
    (lost,) = cycles(simulation, "lost")
    assert lost["message"].startswith(f"0/4 nodes are available: 4 {reason}.")


def check_inter_pod_affinity(simulation: Simulation) -> None:
    placements = simulation.placements()
    assert placements["default/web-1"] == "node-a"
    assert placements["default/db-1"] == "node-c"
    assert placements["default/db-tool"] == ""
    (web,) = cycles(simulation, "web-1")
    reason = ["node(s) didn't match pod affinity rules"]
    assert rejections(web) == {"node-b": reason, "node-c": reason}
    (db,) = cycles(simulation, "db-1")
    assert rejections(db) == {"node-b": ["node(s) didn't match pod anti-affinity rules"]}
    (tool,) = cycles(simulation, "db-tool")
    assert rejections(tool)["node-b"] == [
        "node(s) didn't satisfy existing pods anti-affinity rules"
    ]


def check_topology_spread(simulation: Simulation) -> None:
    placements = simulation.placements()
    assert {placements["default/web-3"], placements["default/web-4"]} == {"node-c", "node-d"}
    for pod in ("web-3", "web-4"):
        (trace,) = cycles(simulation, pod)
        reason = ["node(s) didn't match pod topology spread constraints"]
        assert rejections(trace) == {"node-a": reason, "node-b": reason}


def check_preemption(simulation: Simulation) -> None:
    first, second = cycles(simulation, "web-2")
    assert first["result"] == "Unschedulable"
    assert first["nominatedNode"] == "node-a"
    assert first["preemption"]["victims"] == ["default/low-1"]
    assert second["result"] == "Scheduled" and second["node"] == "node-a"
    placements = simulation.placements()
    assert "default/low-1" not in placements
    assert placements["default/polite"] == ""
    polite = cycles(simulation, "polite")
    assert [c["result"] for c in polite] == ["Unschedulable", "Unschedulable"]
    assert all(c["preemption"] is None or not c["preemption"].get("victims") for c in polite)
    assert polite[0]["message"].endswith("preemption: not eligible due to preemptionPolicy=Never.")


def check_backoff_and_gates(simulation: Simulation) -> None:
    placements = simulation.placements()
    assert placements["default/small"] == "node-a"
    assert placements["default/big"] == "" and placements["default/gated"] == ""
    assert cycles(simulation, "gated") == []
    (big,) = cycles(simulation, "big")
    assert big["message"].startswith("0/1 nodes are available: 1 Insufficient cpu.")
    (small,) = cycles(simulation, "small")
    queue = small["queue"]
    assert [p["pod"] for p in queue["gated"]] == ["default/gated"]
    (parked,) = queue["unschedulablePods"]
    assert parked["pod"] == "default/big" and parked["unschedulablePlugins"] == ["NodeResourcesFit"]


def check_profiles(simulation: Simulation) -> None:
    placements = simulation.placements()
    assert placements["default/web-1"] != placements["default/web-2"]
    assert placements["default/batch-1"] == placements["default/batch-2"] != ""
    assert placements["default/orphan"] == ""
    assert cycles(simulation, "orphan") == []
    assert {c["profile"] for c in cycles(simulation, "batch-2")} == {"packer"}
    assert {c["profile"] for c in cycles(simulation, "web-1")} == {"default-scheduler"}


CHECKS: dict[str, Callable[[Simulation], None]] = {
    "resource-fit": check_resource_fit,
    "taints-and-tolerations": check_taints,
    "node-affinity": check_node_affinity,
    "inter-pod-affinity": check_inter_pod_affinity,
    "topology-spread": check_topology_spread,
    "priority-and-preemption": check_preemption,
    "backoff-requeue-and-gates": check_backoff_and_gates,
    "several-profiles": check_profiles,
}


def test_every_lesson_has_a_check() -> None:
    assert [info.slug for info in lesson_list()] == list(CHECKS)


@pytest.mark.parametrize("slug", list(CHECKS))
@pytest.mark.parametrize("seed", [0, 1, 7])
def test_lesson_shows_its_point(slug: str, seed: int) -> None:
    CHECKS[slug](simulate(slug, seed))
