"""The review service and ``POST /api/clusters/review``: uploads in, attempts reconciled out,
the replay kept as a paused cluster whose cycles the attempts name."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from django.test import Client

from schedviz.cluster import services
from schedviz.cluster.models import Cluster, Cycle

pytestmark = pytest.mark.django_db

DATA = Path(__file__).resolve().parents[1] / "review" / "data"


@pytest.fixture(autouse=True)
def _no_runners(settings: Any) -> None:
    settings.SCHEDVIZ_START_RUNNERS = False


@pytest.fixture
def auth() -> dict[str, Any]:
    token = services.api_token_create(username="alice")
    return {"HTTP_AUTHORIZATION": f"Token {token.key}"}


def _file(name: str, field_name: str | None = None) -> SimpleUploadedFile:
    return SimpleUploadedFile(field_name or name, (DATA / name).read_bytes())


def test_a_review_answers_201_with_every_attempt_and_keeps_the_replay(
    client: Client, auth: dict[str, Any]
) -> None:
    response = client.post(
        "/api/clusters/review?name=last night",
        {
            "log": [_file("scheduler-v10.log")],
            "cluster": [_file("cluster-after.yaml")],
            "events": [_file("events.yaml")],
        },
        **auth,
    )
    assert response.status_code == 201, response.content
    body = response.json()
    assert len(body["attempts"]) == 6
    first = body["attempts"][0]
    assert first["kind"] == "missing-object"
    assert "default/batch-1" in first["why"]
    cluster = Cluster.objects.get(id=body["cluster"]["id"])
    assert cluster.name == "last night"
    assert cluster.run_state == Cluster.RunState.PAUSED
    numbers = set(Cycle.objects.filter(cluster=cluster).values_list("number", flat=True))
    assert {attempt["replay"]["cycle"] for attempt in body["attempts"]} <= numbers


@pytest.mark.parametrize(
    ("files", "message"),
    [
        ({"cluster": ["cluster.yaml"]}, "log: at least one kube-scheduler log is required"),
        ({"log": ["scheduler-v2.log"]}, "cluster: at least one dump"),
        ({"log": ["cluster.yaml"], "cluster": ["cluster.yaml"]}, "no scheduling attempt found"),
        (
            {"log": ["scheduler-v2.log"], "cluster": ["cluster.yaml"], "config": ["events.yaml"]},
            'no kind "List" is registered',
        ),
    ],
)
def test_bad_uploads_are_400s_and_store_nothing(
    client: Client, auth: dict[str, Any], files: dict[str, list[str]], message: str
) -> None:
    data = {field: [_file(name) for name in names] for field, names in files.items()}
    response = client.post("/api/clusters/review", data, **auth)
    assert response.status_code == 400
    assert any(message in error for error in response.json()["errors"])
    assert not Cluster.objects.exists()


def test_a_review_needs_credentials(client: Client) -> None:
    response = client.post("/api/clusters/review", {"log": [_file("scheduler-v2.log")]})
    assert response.status_code == 401
