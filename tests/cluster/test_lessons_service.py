"""Lessons as a service and through the API: listing, loading into a new cluster."""

from __future__ import annotations

from typing import Any

import pytest
from django.test import Client

from schedviz.cluster import lessons, services
from schedviz.cluster.models import Cluster, Node, Pod, Profile

pytestmark = pytest.mark.django_db


@pytest.fixture(autouse=True)
def _no_runners(settings: Any) -> None:
    settings.SCHEDVIZ_START_RUNNERS = False


def test_lessons_are_listed_in_teaching_order_with_their_text() -> None:
    infos = lessons.lesson_list()
    assert [info.slug for info in infos][:2] == ["resource-fit", "taints-and-tolerations"]
    assert len(infos) == 8
    for info in infos:
        assert info.title and info.summary and len(info.explanation) > 500
        assert info.things_to_try and all(info.things_to_try)
        assert info.teaches and all(info.teaches)


def test_unknown_lesson_is_not_found() -> None:
    for slug in ("no-such-lesson", "../demo", ".hidden"):
        with pytest.raises(services.ObjectNotFound):
            lessons.lesson_get(slug)


def test_loading_a_lesson_makes_a_virtual_cluster_with_its_objects_and_profiles() -> None:
    cluster = lessons.lesson_load(slug="resource-fit")
    assert cluster.name == "Resource fit and the three scoring strategies"
    assert cluster.clock_mode == Cluster.ClockMode.VIRTUAL
    assert set(Node.objects.filter(cluster=cluster).values_list("name", flat=True)) == {
        "node-a",
        "node-b",
        "node-small",
    }
    assert Pod.objects.get(cluster=cluster, name="batch-0").node_name == "node-a"
    assert list(
        Profile.objects.filter(cluster=cluster).values_list("scheduler_name", flat=True)
    ) == [
        "default-scheduler",
        "bin-packing",
        "ratio",
    ]
    again = lessons.lesson_load(slug="resource-fit")
    assert again.name == "Resource fit and the three scoring strategies (2)"


@pytest.mark.parametrize("slug", [info.slug for info in lessons.lesson_list()])
def test_every_lesson_loads_through_the_services(slug: str) -> None:
    cluster = lessons.lesson_load(slug=slug)
    assert Pod.objects.filter(cluster=cluster).exists()


def test_api_lists_and_loads_lessons(client: Client) -> None:
    token = services.api_token_create(username="teacher")
    auth = {"HTTP_AUTHORIZATION": f"Token {token.key}"}
    listed = client.get("/api/lessons", **auth)
    assert listed.status_code == 200
    first = listed.json()["lessons"][0]
    assert set(first) == {
        "slug",
        "title",
        "summary",
        "explanation",
        "thingsToTry",
        "teaches",
        "steps",
        "pending",
    }
    # The steps name the pods to predict, never their outcome.
    assert first["steps"][0] == {"pod": "default/spread-me", "attempt": 1}
    loaded = client.post("/api/lessons/topology-spread/load", **auth)
    assert loaded.status_code == 201
    cluster = Cluster.objects.get(id=loaded.json()["id"])
    assert cluster.owner == token.user
    assert cluster.lesson == "topology-spread"
    assert cluster.run_state == Cluster.RunState.RUNNING
    paused = client.post(
        "/api/lessons/topology-spread/load",
        data={"paused": True},
        content_type="application/json",
        **auth,
    )
    assert paused.status_code == 201
    assert Cluster.objects.get(id=paused.json()["id"]).run_state == Cluster.RunState.PAUSED
    refused = client.post(
        "/api/lessons/topology-spread/load",
        data={"paused": "yes"},
        content_type="application/json",
        **auth,
    )
    assert refused.status_code == 400 and "paused:" in refused.json()["errors"][0]
    assert client.post("/api/lessons/nope/load", **auth).status_code == 404
    assert client.get("/api/lessons/topology-spread/load", **auth).status_code == 405
    assert client.get("/api/lessons").status_code == 401
