"""Hostile names in the lesson pages and "Predict, then reveal": guesses about pods and nodes
whose names carry markup (test_web_escaping's objects), revealed against the engine's traces,
show as text on the dashboard, in the panel's htmx answer and in its websocket fragment."""

from __future__ import annotations

from typing import Any

import pytest
import yaml
from asgiref.sync import async_to_sync
from channels.layers import get_channel_layer
from channels.routing import URLRouter
from channels.testing import WebsocketCommunicator
from django.contrib.auth.models import AnonymousUser
from django.test import Client
from django.urls import reverse
from test_web_escaping import MANIFESTS, NODE, POD, RTL, SCRIPT, assert_escaped

from schedviz.cluster import predictions, services
from schedviz.cluster.live import group_name
from schedviz.cluster.models import Cluster, Prediction
from webui.routing import websocket_urlpatterns
from worker.runner import run_cluster

pytestmark = pytest.mark.django_db(transaction=True)


@pytest.fixture(autouse=True)
def _quiet(settings: Any, markup_in_names: None) -> None:
    settings.SCHEDVIZ_START_RUNNERS = False
    settings.SCHEDVIZ_RUNNER_IDLE_SECONDS = 0
    settings.SCHEDVIZ_WRITE_RATE_PER_MINUTE = 0


@pytest.fixture
def cluster() -> Cluster:
    """Paused; a wrong guess about each hostile pod, both revealed (one scheduled, one not)."""
    cluster = services.cluster_create(
        name=f"{SCRIPT}{RTL}",
        clock_mode=Cluster.ClockMode.VIRTUAL,
        run_state=Cluster.RunState.PAUSED,
        seed=7,
    )
    services.manifests_apply(cluster=cluster, text=yaml.safe_dump_all(MANIFESTS))
    predictions.prediction_create(cluster=cluster, namespace="default", name=POD, node=RTL)
    predictions.prediction_create(cluster=cluster, namespace="default", name=RTL, node=NODE)
    services.cluster_step(cluster=cluster)
    services.cluster_step(cluster=cluster)
    run_cluster(cluster.pk)
    return cluster


def test_the_guesses_were_revealed_against_the_hostile_traces(cluster: Cluster) -> None:
    predictions.predictions_reveal(cluster=cluster)
    revealed = Prediction.objects.filter(cluster=cluster, revealed_cycle__isnull=False)
    assert revealed.count() == 2 and not revealed.filter(correct=True).exists()


def test_the_dashboard_and_the_panel_show_them_as_text(client: Client, cluster: Cluster) -> None:
    dashboard = client.get(reverse("webui:dashboard", args=[cluster.pk])).content.decode()
    assert 'id="predict"' in dashboard and 'id="reveal"' in dashboard
    assert_escaped(dashboard, "dashboard")
    panel = client.get(
        reverse("webui:predict", args=[cluster.pk]),
        headers={"HX-Request": "true", "HX-Target": "predict"},
    ).content.decode()
    assert_escaped(panel, "panel")
    assert "&lt;img src=x onerror=alert(1)&gt;" in panel
    refused = client.post(
        reverse("webui:predict", args=[cluster.pk]),
        {"pod": f"default/{SCRIPT}", "node": NODE},
        headers={"HX-Request": "true", "HX-Target": "predict"},
    )
    assert refused.status_code == 400
    assert_escaped(refused.content.decode(), "refused guess")
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in refused.content.decode()


def test_the_panels_websocket_fragment_shows_them_as_text(cluster: Cluster) -> None:
    async def watch() -> str:
        communicator = WebsocketCommunicator(
            URLRouter(websocket_urlpatterns), f"/ws/clusters/{cluster.pk}/"
        )
        communicator.scope["user"] = AnonymousUser()
        connected, _ = await communicator.connect()
        assert connected
        frame = await communicator.receive_from(timeout=5)
        while 'id="nodes"' not in frame:
            frame = await communicator.receive_from(timeout=5)
        await get_channel_layer().group_send(
            group_name(cluster.pk),
            {"type": "cluster.queue", "queue": {"activeQ": [{"pod": f"default/{RTL}"}]}},
        )
        frame = await communicator.receive_from(timeout=5)
        await communicator.disconnect()
        return frame

    frame = async_to_sync(watch)()
    assert 'id="predict"' in frame and 'hx-swap-oob="true"' in frame
    assert_escaped(frame, "websocket")
    assert "&lt;img src=x onerror=alert(1)&gt;" in frame
