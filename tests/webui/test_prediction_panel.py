"""The prediction panel's presenter: the pod offered first, the websocket fragment (only when
something in it can have changed) and the reveal arriving with its cycle over the websocket."""

from __future__ import annotations

from typing import Any

import pytest
from asgiref.sync import sync_to_async
from channels.layers import get_channel_layer
from channels.routing import URLRouter
from channels.testing import WebsocketCommunicator
from django.contrib.auth.models import AnonymousUser

from schedviz.cluster import lessons, predictions, services
from schedviz.cluster.live import group_name
from schedviz.cluster.models import Cluster, Cycle
from webui.prediction_panel import active_head, predict_context, predict_fragment
from webui.presenters import latest_queue
from webui.routing import websocket_urlpatterns
from worker.runner import run_cluster

pytestmark = pytest.mark.django_db(transaction=True)


@pytest.fixture(autouse=True)
def _quiet(settings: Any) -> None:
    settings.SCHEDVIZ_START_RUNNERS = False
    settings.SCHEDVIZ_RUNNER_IDLE_SECONDS = 0


def test_active_head_is_the_first_activeq_entry() -> None:
    assert active_head({"activeQ": [{"pod": "default/a"}, {"pod": "default/b"}]}) == "default/a"
    assert active_head({"activeQ": []}) is None
    assert active_head(None) is None


def test_the_published_head_of_activeq_is_offered_first() -> None:
    cluster = lessons.lesson_load(slug="resource-fit", paused=True)
    offered = predict_context(cluster=cluster)["predict"]
    assert (offered["pod"], offered["known_from"]) == ("default/spread-me", "activeQ")
    live = predict_context(cluster=cluster, active_head="default/ratio-me")["predict"]
    assert (live["pod"], live["known_from"]) == ("default/ratio-me", "activeQ")
    assert live["nodes"] == ["node-a", "node-b", "node-small"] and live["radios"]


def test_the_open_guess_about_the_offered_pod_is_preselected() -> None:
    cluster = lessons.lesson_load(slug="resource-fit", paused=True)
    predictions.prediction_create(
        cluster=cluster, namespace="default", name="spread-me", node="node-small"
    )
    assert predict_context(cluster=cluster)["predict"]["node"] == "node-small"
    predictions.prediction_create(cluster=cluster, namespace="default", name="spread-me", node="")
    assert predict_context(cluster=cluster)["predict"]["node"] == "/unschedulable"
    assert (
        predict_context(cluster=cluster, active_head="default/pack-me")["predict"]["node"] is None
    )


def test_gated_pods_are_not_offered_as_next() -> None:
    cluster = services.cluster_create(
        name="gates", clock_mode=Cluster.ClockMode.VIRTUAL, run_state=Cluster.RunState.PAUSED
    )
    services.manifests_apply(
        cluster=cluster,
        text="""
apiVersion: v1
kind: Pod
metadata: {name: a-gated}
spec:
  schedulingGates: [{name: example.com/wait}]
  containers: [{name: c, image: i}]
---
apiVersion: v1
kind: Pod
metadata: {name: b-free}
spec: {containers: [{name: c, image: i}]}
""",
    )
    assert predict_context(cluster=cluster)["predict"]["pod"] == "default/b-free"


def test_a_running_cluster_without_open_guesses_pushes_only_the_lesson_panel() -> None:
    cluster = lessons.lesson_load(slug="resource-fit")
    fragment = predict_fragment(cluster_id=cluster.pk, active_head=None)
    assert 'id="predict"' not in fragment and 'id="lesson-panel"' in fragment
    plain = services.cluster_create(name="no lesson")
    assert predict_fragment(cluster_id=plain.pk, active_head=None) == ""
    assert 'id="predict"' in predict_fragment(cluster_id=cluster.pk, active_head=None, always=True)
    services.cluster_set_run_state(cluster=cluster, run_state=Cluster.RunState.PAUSED)
    assert 'hx-swap-oob="true"' in predict_fragment(cluster_id=cluster.pk, active_head=None)


async def test_the_reveal_arrives_over_the_websocket_with_its_cycle() -> None:
    cluster = await sync_to_async(lessons.lesson_load)(slug="resource-fit", paused=True)
    await sync_to_async(predictions.prediction_create)(
        cluster=cluster, namespace="default", name="spread-me", node="node-b"
    )
    communicator = WebsocketCommunicator(
        URLRouter(websocket_urlpatterns), f"/ws/clusters/{cluster.pk}/"
    )
    communicator.scope["user"] = AnonymousUser()
    connected, _ = await communicator.connect()
    assert connected
    frame = await communicator.receive_from(timeout=5)
    while 'id="nodes"' not in frame:
        frame = await communicator.receive_from(timeout=5)
    # The runner (no channel layer of its own here) writes the cycle; then its message comes.
    await sync_to_async(services.cluster_step)(cluster=cluster)
    await sync_to_async(run_cluster)(cluster.pk)
    await get_channel_layer().group_send(
        group_name(cluster.pk),
        {"type": "cluster.cycles", "cycles": [{"cycle": 1, "pod": "default/spread-me"}]},
    )
    frame = await communicator.receive_from(timeout=5)
    while 'id="predict"' not in frame:
        frame = await communicator.receive_from(timeout=5)
    await communicator.disconnect()
    assert 'id="reveal"' in frame and 'data-verdict="right"' in frame
    assert "1 right" in frame


@pytest.mark.django_db(transaction=True)
def test_after_a_step_the_offered_pod_is_the_one_the_next_cycle_pops() -> None:
    """The preemption lesson: polite is tried first and waits in unschedulablePods; the runner
    stops; the next cycle (a runner resuming the saved queue) is web-2's, as offered."""
    cluster = lessons.lesson_load(slug="priority-and-preemption", paused=True)
    queue, _, as_of = latest_queue(cluster=cluster)
    assert queue is not None and as_of == "before any cycle"
    assert [e["pod"] for e in queue["activeQ"]] == ["default/polite", "default/web-2"]
    assert predict_context(cluster=cluster)["predict"]["pod"] == "default/polite"
    services.cluster_step(cluster=cluster)
    run_cluster(cluster.pk)
    assert Cycle.objects.get(cluster=cluster, number=1).pod_name == "polite"
    offered = predict_context(cluster=cluster)["predict"]
    assert (offered["pod"], offered["known_from"]) == ("default/web-2", "activeQ")
    queue, _, _ = latest_queue(cluster=cluster)
    assert queue is not None
    assert [e["pod"] for e in queue["unschedulablePods"]] == ["default/polite"]
    services.cluster_step(cluster=cluster)
    run_cluster(cluster.pk)
    assert Cycle.objects.get(cluster=cluster, number=2).pod_name == "web-2"
