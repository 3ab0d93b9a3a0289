"""POST/GET /api/clusters/<id>/debug: the step debugger for scripts."""

from __future__ import annotations

from typing import Any

import pytest
from django.test import Client

from schedviz.cluster import services
from schedviz.cluster.models import Cluster

pytestmark = pytest.mark.django_db


@pytest.fixture(autouse=True)
def _no_runners(settings: Any) -> None:
    settings.SCHEDVIZ_START_RUNNERS = False
    settings.SCHEDVIZ_WRITE_RATE_PER_MINUTE = 0


@pytest.fixture
def auth() -> dict[str, str]:
    token = services.api_token_create(username="alice")
    return {"Authorization": f"Token {token.key}"}


def owned(**fields: Any) -> Cluster:
    from django.contrib.auth.models import User

    return services.cluster_create(name="c", owner=User.objects.get(username="alice"), **fields)


def post(client: Client, cluster: Cluster, auth: dict[str, str], body: dict[str, Any]) -> Any:
    return client.post(
        f"/api/clusters/{cluster.pk}/debug", body, content_type="application/json", headers=auth
    )


def test_it_steps_into_a_paused_cluster_and_reports_the_stop(
    client: Client, auth: dict[str, str]
) -> None:
    cluster = owned(run_state=Cluster.RunState.PAUSED)
    assert client.get(f"/api/clusters/{cluster.pk}/debug", headers=auth).json() == {"state": None}
    response = post(client, cluster, auth, {"action": "step-into"})
    assert response.status_code == 202 and response.json()["state"] == "requested"
    services.debug_session_claim(cluster_id=cluster.pk)
    services.debug_session_stop(
        cluster_id=cluster.pk, stop={"point": "PreFilter", "plugins": ["NodeResourcesFit"]}
    )
    current = client.get(f"/api/clusters/{cluster.pk}/debug", headers=auth).json()
    assert current["state"] == "stopped" and current["point"] == "PreFilter"
    assert current["sequence"] == 1 and current["plugins"] == ["NodeResourcesFit"]
    answered = post(client, cluster, auth, {"action": "finish", "sequence": 1})
    assert answered.status_code == 202


def test_it_refuses_a_running_cluster_and_bad_actions(client: Client, auth: dict[str, str]) -> None:
    cluster = owned()
    refused = post(client, cluster, auth, {"action": "step-into"})
    assert refused.status_code == 409
    assert refused.json()["errors"] == ["runState: the cluster must be paused to step into a cycle"]
    bad = post(client, cluster, auth, {"action": "jump"})
    assert bad.status_code == 400 and "supported values" in bad.json()["errors"][0]
    bad_sequence = post(client, cluster, auth, {"action": "continue", "sequence": "x"})
    assert bad_sequence.status_code == 400


def test_someone_elses_cluster_is_not_found(client: Client, auth: dict[str, str]) -> None:
    other = services.cluster_create(name="theirs", run_state=Cluster.RunState.PAUSED)
    from django.contrib.auth.models import User

    Cluster.objects.filter(pk=other.pk).update(owner=User.objects.create(username="bob"))
    assert client.get(f"/api/clusters/{other.pk}/debug", headers=auth).status_code == 404
