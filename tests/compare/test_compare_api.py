"""The comparison API: POST /api/clusters/<id>/compare starts a run, GET /api/compare/<run> gives
its progress and, once finished, the comparison."""

from __future__ import annotations

import json
from typing import Any

import pytest
from django.contrib.auth.models import User
from django.test import Client

from schedviz.cluster.models import Cluster
from schedviz.compare.models import CompareRun
from worker import compare

pytestmark = pytest.mark.django_db

TWO_PROFILES = [
    {"name": "spread", "profile": "default-scheduler"},
    {"name": "pack", "profile": "packer"},
]


@pytest.fixture
def signed_in(client: Client, alice: User) -> Client:
    client.force_login(alice)
    return client


def _post(client: Client, two_profile_cluster: Cluster, body: dict[str, Any]) -> Any:
    return client.post(
        f"/api/clusters/{two_profile_cluster.id}/compare",
        json.dumps(body),
        content_type="application/json",
    )


def test_a_run_is_created_then_reports_progress_and_the_comparison(
    signed_in: Client, two_profile_cluster: Cluster
) -> None:
    created = _post(signed_in, two_profile_cluster, {"variants": TWO_PROFILES, "seed": 3})
    assert created.status_code == 201, created.content
    body = created.json()
    assert body["status"] == "running" and body["seed"] == 3
    assert [(v["name"], v["status"]) for v in body["variants"]] == [
        ("spread", "pending"),
        ("pack", "pending"),
    ]
    assert body["url"].endswith(f"/compare/{body['id']}/")
    run = CompareRun.objects.get(id=body["id"])
    for variant in run.variants.all():
        compare.execute_variant(variant.id)
    state = signed_in.get(f"/api/compare/{run.id}").json()
    assert state["status"] == "succeeded"
    assert [(v["podsDone"], v["podsTotal"]) for v in state["variants"]] == [(5, 5), (5, 5)]
    comparison = state["comparison"]
    assert set(comparison["placements"]["default/web-1"]) == {"spread", "pack"}
    assert comparison["differing"]
    assert len(set(comparison["placements"][comparison["differing"][0]].values())) > 1


def test_bad_input_is_400_naming_the_field_and_nothing_is_saved(
    signed_in: Client, two_profile_cluster: Cluster
) -> None:
    cases = [
        ({}, "variants: Required value"),
        ({"variants": [TWO_PROFILES[0]]}, "variants: Invalid value: 1"),
        ({"variants": [TWO_PROFILES[0], "x"]}, "variants[1]: Invalid value: must be an object"),
        (
            {"variants": [TWO_PROFILES[0], {"name": "b", "profile": "nope"}]},
            'variants[1].profile: Not found: "nope"',
        ),
        ({"variants": TWO_PROFILES, "seed": "1"}, "seed: Invalid value: must be an integer"),
        ({"variants": TWO_PROFILES, "source": "manifests"}, "manifests: Required value"),
    ]
    for body, expected in cases:
        response = _post(signed_in, two_profile_cluster, body)
        assert response.status_code == 400, (body, response.content)
        assert response.json()["errors"][0].startswith(expected), response.json()
    assert not CompareRun.objects.exists()


def test_someone_elses_cluster_and_run_are_not_found(
    client: Client, two_profile_cluster: Cluster, signed_in: Client
) -> None:
    run_id = _post(signed_in, two_profile_cluster, {"variants": TWO_PROFILES}).json()["id"]
    other = Client()
    other.force_login(User.objects.create_user("bob"))
    assert _post(other, two_profile_cluster, {"variants": TWO_PROFILES}).status_code == 404
    assert other.get(f"/api/compare/{run_id}").status_code == 404
    assert Client().get(f"/api/compare/{run_id}").status_code == 401


def test_a_configuration_variant_may_be_given_as_an_object(
    signed_in: Client, two_profile_cluster: Cluster
) -> None:
    configuration = {
        "apiVersion": "kubescheduler.config.k8s.io/v1",
        "kind": "KubeSchedulerConfiguration",
        "profiles": [{"schedulerName": "default-scheduler"}, {"schedulerName": "packer"}],
    }
    response = _post(
        signed_in,
        two_profile_cluster,
        {"variants": [TWO_PROFILES[0], {"name": "own", "configuration": configuration}]},
    )
    assert response.status_code == 201, response.content
    assert response.json()["variants"][1]["configuration"] == configuration
