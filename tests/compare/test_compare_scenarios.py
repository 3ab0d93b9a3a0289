"""Scenario runs in the live app: created whole or refused naming the field, each configuration
run where comparison variants run, the result kept with the run stored as a cluster whose cycle
pages the bindings link to, and the API for scripts."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from django.contrib.auth.models import User
from django.test import Client

from schedviz.cluster.models import Cluster, Cycle
from schedviz.cluster.models import Pod as PodRow
from schedviz.cluster.services import ServiceError
from schedviz.compare import scenarios, selectors
from schedviz.compare.models import CompareRun
from schedviz.compare.services import VariantSpec
from worker import compare

pytestmark = pytest.mark.django_db

LESSON_SCENARIO = (
    Path(__file__).resolve().parents[2] / "schedviz/lessons/priority-and-preemption/scenario.yaml"
)
MOST_ALLOCATED = """apiVersion: kubescheduler.config.k8s.io/v1
kind: KubeSchedulerConfiguration
profiles:
- schedulerName: default-scheduler
  pluginConfig:
  - name: NodeResourcesFit
    args: {scoringStrategy: {type: MostAllocated, resources: [{name: cpu, weight: 1}]}}
"""
DEFAULT = "apiVersion: kubescheduler.config.k8s.io/v1\nkind: KubeSchedulerConfiguration\n"
TWO_NODES_TWO_PODS = {
    "apiVersion": "simulation.kube-scheduler-simulator.x-k8s.io/v1alpha1",
    "kind": "Scenario",
    "metadata": {"name": "spread-or-pack"},
    "spec": {
        "operations": [
            {
                "id": name,
                "step": 0,
                "createOperation": {
                    "object": {
                        "apiVersion": "v1",
                        "kind": "Node",
                        "metadata": {"name": name},
                        "status": {"allocatable": {"cpu": "2", "pods": "10"}},
                    }
                },
            }
            for name in ("a", "b")
        ]
        + [
            {
                "id": name,
                "step": 1,
                "createOperation": {
                    "object": {
                        "apiVersion": "v1",
                        "kind": "Pod",
                        "metadata": {"name": name},
                        "spec": {
                            "containers": [
                                {
                                    "name": "c",
                                    "image": "x",
                                    "resources": {"requests": {"cpu": "500m"}},
                                }
                            ]
                        },
                    }
                },
            }
            for name in ("p1", "p2")
        ]
    },
}


@pytest.fixture
def cluster(alice: User) -> Cluster:
    from schedviz.cluster import services

    return services.cluster_create(name="scenarios", owner=alice)


def _execute(run: CompareRun) -> None:
    for variant in run.variants.order_by("position"):
        assert compare.execute_variant(variant.id) == compare.SUCCEEDED, variant.error


def test_a_run_is_kept_with_its_result_and_stored_as_a_cluster_of_its_cycles(
    cluster: Cluster, alice: User
) -> None:
    run = scenarios.scenario_run_create(
        cluster=cluster, scenario=LESSON_SCENARIO.read_text(), created_by=alice
    )
    assert [v.name for v in run.variants.all()] == [scenarios.DEFAULT_VARIANT]
    _execute(run)
    variant = run.variants.get()
    document = variant.result
    assert document["status"]["phase"] == "Succeeded"
    assert (variant.pods_done, variant.pods_total) == (6, 6)
    stored = Cluster.objects.get(id=document["schedviz"]["cluster"])
    assert stored.owner == alice
    bindings = [
        e["podScheduled"]
        for events in document["status"]["scenarioResult"]["timeline"].values()
        for e in events
        if "podScheduled" in e
    ]
    assert [(b["pod"]["name"], b["node"]) for b in bindings] == [
        ("low-1", "node-a"),
        ("web-2", "node-a"),
        ("polite", "node-b"),
    ]
    for binding in bindings:
        trace = Cycle.objects.get(cluster=stored, number=binding["cycle"]).trace()
        assert trace["pod"] == f"default/{binding['pod']['name']}"
        assert (trace["result"], trace["node"]) == ("Scheduled", binding["node"])
    # The final objects: polite is left, bound to node-b.
    assert list(PodRow.objects.filter(cluster=stored).values_list("name", "node_name")) == [
        ("polite", "node-b")
    ]


def test_an_invalid_scenario_is_refused_naming_the_field_and_nothing_is_saved(
    cluster: Cluster,
) -> None:
    bad = json.loads(json.dumps(TWO_NODES_TWO_PODS))
    bad["spec"]["operations"][0]["step"] = "later"
    with pytest.raises(ServiceError) as error:
        scenarios.scenario_run_create(cluster=cluster, scenario=bad)
    assert error.value.errors == [
        'scenario: spec.operations[0].step: Invalid value: "later": must be a non-negative integer'
    ]
    assert not CompareRun.objects.exists()


def test_variants_are_configurations_named_once(cluster: Cluster) -> None:
    with pytest.raises(ServiceError) as error:
        scenarios.scenario_run_create(
            cluster=cluster,
            scenario=TWO_NODES_TWO_PODS,
            variants=[
                VariantSpec(name="x", configuration=DEFAULT),
                VariantSpec(name="x", configuration=DEFAULT),
                VariantSpec(name="p", profile="default-scheduler"),
            ],
        )
    assert error.value.errors == [
        'variants[1].name: Duplicate value: "x"',
        "variants[2].profile: Forbidden: a scenario's variants are configurations",
    ]


def test_two_configurations_are_compared_where_their_placements_part(cluster: Cluster) -> None:
    run = scenarios.scenario_run_create(
        cluster=cluster,
        scenario=TWO_NODES_TWO_PODS,
        variants=[
            VariantSpec(name="spread", configuration=DEFAULT),
            VariantSpec(name="pack", configuration=MOST_ALLOCATED),
        ],
    )
    _execute(run)
    state = selectors.compare_run_state(run=run).to_json()
    comparison = state["scenarioComparison"]
    assert comparison["firstDifference"]["step"] == 1
    assert set(state["results"]) == {"spread", "pack"}
    packed = {p["nodes"]["pack"] for p in comparison["firstDifference"]["pods"]}
    assert len(packed) == 1


def test_the_api_starts_a_run_and_gives_its_result(signed_in: Client, cluster: Cluster) -> None:
    created = signed_in.post(
        f"/api/clusters/{cluster.id}/scenarios",
        json.dumps({"scenario": TWO_NODES_TWO_PODS, "seed": 4}),
        content_type="application/json",
    )
    assert created.status_code == 201, created.content
    body = created.json()
    assert body["url"].endswith(f"/scenarios/{body['id']}/")
    assert body["source"] == "scenario" and body["seed"] == 4 and body["results"] == {}
    _execute(CompareRun.objects.get(id=body["id"]))
    state = signed_in.get(f"/api/scenarios/{body['id']}").json()
    result = state["results"][scenarios.DEFAULT_VARIANT]
    assert result["status"]["phase"] == "Paused"
    assert result["schedviz"]["steps"][1]["bindings"] == 2


def test_the_api_refuses_a_scenario_that_is_not_text_or_an_object(
    signed_in: Client, cluster: Cluster
) -> None:
    response = signed_in.post(
        f"/api/clusters/{cluster.id}/scenarios",
        json.dumps({"scenario": 3}),
        content_type="application/json",
    )
    assert response.status_code == 400
    assert "scenario: Required value" in response.content.decode()


@pytest.fixture
def signed_in(client: Client, alice: User) -> Client:
    client.force_login(alice)
    return client
