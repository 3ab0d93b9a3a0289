"""schedviz.compare.engine: one variant of a workload in virtual time, digested for comparing."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from schedviz.compare import engine
from schedviz.kube.load import load_files, load_manifests
from schedviz.simulation.simulator import new_simulation

LESSONS = Path(__file__).resolve().parents[2] / "schedviz" / "lessons"


def _lesson(slug: str) -> tuple[list[dict[str, Any]], dict[str, Any]]:
    loaded = load_files([str(LESSONS / slug / "manifests.yaml")])
    base = loaded.scheduler_configs[0] if loaded.scheduler_configs else {}
    return [obj.manifest for obj in loaded.objects], base


def _run(slug: str, profile: str, **kwargs: Any) -> dict[str, Any]:
    manifests, base = _lesson(slug)
    return engine.run_variant(
        manifests,
        engine.profile_configuration(base, profile),
        scheduler_name=profile,
        seed=1,
        **kwargs,
    )


def test_a_profile_variant_schedules_every_pending_pod_with_that_profile() -> None:
    spread = _run("several-profiles", "default-scheduler")
    packed = _run("several-profiles", "packer")
    assert {pod["node"] for pod in packed["pods"].values()} == {"node-b"}
    assert len({pod["node"] for pod in spread["pods"].values()}) == 2
    assert "NodeResourcesBalancedAllocation" not in packed["pods"]["default/web-1"]["scores"]
    assert "NodeResourcesBalancedAllocation" in spread["pods"]["default/web-1"]["scores"]


def test_the_chosen_nodes_plugin_scores_add_up_to_its_total() -> None:
    result = _run("several-profiles", "default-scheduler")
    for pod in result["pods"].values():
        assert pod["result"] == "Scheduled"
        assert sum(pod["scores"].values()) == pod["total"]


def test_placements_are_those_of_the_simulator_with_the_same_input_and_seed() -> None:
    manifests, base = _lesson("several-profiles")
    result = engine.run_variant(manifests, base, seed=1)
    simulation = new_simulation(
        load_files([str(LESSONS / "several-profiles" / "manifests.yaml")]), seed=1
    )
    simulation.run()
    placed = simulation.placements()
    expected = {key: placed[key] or None for key in result["pods"]}
    assert expected["default/orphan"] is None  # no profile serves it
    assert {key: pod["node"] for key, pod in result["pods"].items()} == expected


def test_progress_counts_up_and_ends_with_every_pod_done() -> None:
    calls: list[tuple[int, int]] = []
    _run("several-profiles", "packer", progress=lambda done, total: calls.append((done, total)))
    assert calls[0] == (0, 5) and calls[-1] == (5, 5)
    assert [done for done, _ in calls] == sorted(done for done, _ in calls)


def test_node_usage_counts_the_bound_pods_that_have_not_terminated() -> None:
    manifests, _ = _lesson("priority-and-preemption")
    result = engine.run_variant(manifests, engine.default_configuration_document(), seed=1)
    node = result["nodes"]["node-a"]
    assert node["allocatable"] == {"cpu": 2000, "memory": 4 * 1024**3, "pods": 110}
    placed = [p for p in result["pods"].values() if p["node"] == "node-a"]
    assert node["requested"]["pods"] == len(placed) + (0 if result["preempted"] else 1)


def test_pods_preempted_by_the_workload_are_listed() -> None:
    manifests, _ = _lesson("priority-and-preemption")
    result = engine.run_variant(manifests, engine.default_configuration_document(), seed=1)
    assert result["preempted"] == ["default/low-1"]
    assert result["pods"]["default/polite"]["result"] == "Unschedulable"
    assert result["pods"]["default/polite"]["node"] is None


def test_pods_that_name_no_profile_of_the_configuration_are_counted_by_scheduler_name() -> None:
    loaded = load_manifests(
        """
apiVersion: v1
kind: Pod
metadata: {name: a}
spec: {schedulerName: custom, containers: [{name: c, image: i}]}
---
apiVersion: v1
kind: Pod
metadata: {name: b}
spec: {nodeName: n1, schedulerName: custom, containers: [{name: c, image: i}]}
"""
    )
    assert engine.unserved_pods(loaded.objects, ["default-scheduler"]) == {"custom": 1}
    assert engine.unserved_pods(loaded.objects, ["custom"]) == {}


def test_a_profile_configuration_keeps_only_that_profile_and_the_other_settings() -> None:
    document = {
        "apiVersion": "kubescheduler.config.k8s.io/v1",
        "kind": "KubeSchedulerConfiguration",
        "percentageOfNodesToScore": 50,
        "profiles": [{"schedulerName": "a"}, {"schedulerName": "b"}],
    }
    assert engine.profile_configuration(document, "b")["profiles"] == [{"schedulerName": "b"}]
    assert engine.profile_configuration(document, "b")["percentageOfNodesToScore"] == 50
    assert engine.profile_names(document) == ["a", "b"]
    defaulted = engine.default_configuration_document()
    assert engine.profile_names(defaulted) == ["default-scheduler"]
    assert engine.profile_configuration(defaulted, "default-scheduler") == defaulted
