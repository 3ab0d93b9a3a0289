"""The cluster websocket: who may connect, the fragments it pushes (and the JSON it forwards to
API clients), what it refuses."""

from __future__ import annotations

import json
from datetime import timedelta

import pytest
from asgiref.sync import sync_to_async
from channels.layers import get_channel_layer
from channels.routing import URLRouter
from channels.testing import WebsocketCommunicator
from django.contrib.auth.models import AnonymousUser, User
from django.utils import timezone

from schedviz.cluster import services
from schedviz.cluster.live import group_name
from schedviz.cluster.models import Cluster, Lease
from webui import consumers
from webui.routing import websocket_urlpatterns

pytestmark = pytest.mark.django_db(transaction=True)


def _communicator(
    cluster_id: int, user: object, query: str = "?format=json"
) -> WebsocketCommunicator:
    communicator = WebsocketCommunicator(
        URLRouter(websocket_urlpatterns), f"/ws/clusters/{cluster_id}/{query}"
    )
    communicator.scope["user"] = user
    return communicator


async def receive_initial_state(communicator: WebsocketCommunicator) -> list[dict[str, object]]:
    """hello, then the current state: status, queue, cycles."""
    messages = [json.loads(await communicator.receive_from()) for _ in range(4)]
    assert [m["type"] for m in messages] == [
        "hello",
        "cluster.status",
        "cluster.queue",
        "cluster.cycles",
    ]
    return messages


async def test_it_forwards_group_messages_as_json_to_api_clients() -> None:
    cluster = await sync_to_async(Cluster.objects.create)(name="c")
    communicator = _communicator(cluster.pk, AnonymousUser())
    connected, _ = await communicator.connect()
    assert connected
    hello, *_ = await receive_initial_state(communicator)
    assert hello == {"type": "hello", "cluster": cluster.pk}
    message = {"type": "cluster.cycles", "cycles": [{"cycle": 1, "pod": "default/a"}]}
    await get_channel_layer().group_send(group_name(cluster.pk), message)
    assert json.loads(await communicator.receive_from()) == message
    await communicator.disconnect()


async def test_cycles_no_message_brought_are_counted_as_dropped_for_json_clients() -> None:
    """A runner killed between writing cycles and publishing them, then the one that took over:
    the numbers in between reach the client as counted, so every stored cycle is accounted
    for; cycles stored before the client connected are not counted."""
    cluster = await sync_to_async(Cluster.objects.create)(name="c")
    communicator = _communicator(cluster.pk, AnonymousUser())
    await communicator.connect()
    await receive_initial_state(communicator)
    layer, group = get_channel_layer(), group_name(cluster.pk)
    sent = [
        {"type": "cluster.cycles", "cycles": [{"cycle": 1}, {"cycle": 2}]},
        {"type": "cluster.cycles", "cycles": [{"cycle": 6}, {"cycle": 7}], "dropped": 1},
        {"type": "cluster.cycles", "cycles": [{"cycle": 8}]},
    ]
    for message in sent:
        await layer.group_send(group, message)
    received = [json.loads(await communicator.receive_from()) for _ in sent]
    assert [m.get("dropped", 0) for m in received] == [0, 3, 0]
    assert [c["cycle"] for m in received for c in m["cycles"]] == [1, 2, 6, 7, 8]
    await communicator.disconnect()


async def test_it_refuses_someone_elses_cluster() -> None:
    owner = await sync_to_async(User.objects.create_user)("owner")
    other = await sync_to_async(User.objects.create_user)("other")
    cluster = await sync_to_async(Cluster.objects.create)(name="c", owner=owner)
    communicator = _communicator(cluster.pk, other)
    connected, code = await communicator.connect()
    assert not connected
    assert code == 4403


async def test_it_refuses_an_unknown_cluster() -> None:
    connected, code = await _communicator(999_999, AnonymousUser()).connect()
    assert not connected
    assert code == 4403


async def test_it_answers_client_messages_with_an_error_and_stays_open() -> None:
    cluster = await sync_to_async(Cluster.objects.create)(name="c")
    communicator = _communicator(cluster.pk, AnonymousUser())
    await communicator.connect()
    await receive_initial_state(communicator)
    await communicator.send_to(text_data="{not json")
    reply = json.loads(await communicator.receive_from())
    assert reply["type"] == "error"
    await communicator.send_to(bytes_data=b"\x00\x01")
    assert json.loads(await communicator.receive_from())["type"] == "error"
    await get_channel_layer().group_send(
        group_name(cluster.pk), {"type": "cluster.status", "runner": "idle"}
    )
    assert json.loads(await communicator.receive_from())["runner"] == "idle"
    await communicator.disconnect()


async def _receive_until(communicator: WebsocketCommunicator, wanted: str) -> str:
    """The next frame containing ``wanted`` (frames before it are dropped)."""
    while True:
        frame = await communicator.receive_from(timeout=3)
        if wanted in frame:
            return frame


async def test_on_connect_it_sends_the_state_the_page_may_have_missed() -> None:
    cluster = await sync_to_async(Cluster.objects.create)(name="c")
    await sync_to_async(services.cycles_create)(
        cluster=cluster,
        traces=[
            {
                "cycle": 1,
                "pod": "default/a",
                "result": "Scheduled",
                "node": "n",
                "message": "",
                "time": 0.0,
                "queue": {"activeQ": [{"pod": "default/b", "attempts": 0}]},
            }
        ],
    )
    communicator = _communicator(cluster.pk, AnonymousUser(), query="")
    await communicator.connect()
    first = await communicator.receive_from()
    assert 'id="feed"' in first and 'data-cycle="1"' in first
    assert 'id="queue"' in first and "default/b" in first
    assert 'id="nodes"' in await _receive_until(communicator, 'id="nodes"')
    await communicator.disconnect()


async def test_on_connect_an_api_client_gets_the_status_queue_and_latest_cycles() -> None:
    cluster = await sync_to_async(Cluster.objects.create)(name="c")
    await sync_to_async(services.cycles_create)(
        cluster=cluster,
        traces=[
            {
                "cycle": number,
                "pod": f"default/p{number}",
                "result": "Scheduled",
                "node": "n",
                "message": "",
                "time": float(number),
                "queue": {"activeQ": [{"pod": "default/b", "attempts": 0}]},
            }
            for number in (1, 2)
        ],
    )
    communicator = _communicator(cluster.pk, AnonymousUser())
    await communicator.connect()
    _, status, queue, cycles = await receive_initial_state(communicator)
    assert status == {"type": "cluster.status", "runner": "idle"}
    assert queue["queue"] == {"activeQ": [{"pod": "default/b", "attempts": 0}]}
    assert queue["asOf"] == "before cycle 2"
    # Oldest first, as a runner's cycles message lists them.
    assert [(c["cycle"], c["pod"], c["node"]) for c in cycles["cycles"]] == [
        (1, "default/p1", "n"),
        (2, "default/p2", "n"),
    ]
    await communicator.disconnect()


async def test_cycles_of_the_state_on_connect_are_not_sent_again_to_an_api_client() -> None:
    cluster = await sync_to_async(Cluster.objects.create)(name="c")
    await sync_to_async(services.cycles_create)(
        cluster=cluster,
        traces=[
            {"cycle": n, "pod": f"default/p{n}", "result": "Scheduled", "node": "n", "time": 0.0}
            for n in (1, 2)
        ],
    )
    communicator = _communicator(cluster.pk, AnonymousUser())
    await communicator.connect()
    await receive_initial_state(communicator)
    layer, group = get_channel_layer(), group_name(cluster.pk)

    def summary(number: int, result: str = "Scheduled") -> dict[str, object]:
        return {"cycle": number, "pod": f"default/p{number}", "result": result, "node": "n"}

    # Published after the client joined but already read from the database: only cycle 3 is
    # new, and cycle 1, dropped from the message, was in the state on connect.
    await layer.group_send(
        group, {"type": "cluster.cycles", "cycles": [summary(2), summary(3)], "dropped": 1}
    )
    assert json.loads(await communicator.receive_from()) == {
        "type": "cluster.cycles",
        "cycles": [summary(3)],
    }
    later = {"type": "cluster.cycles", "cycles": [summary(6), summary(7)], "dropped": 2}
    await layer.group_send(group, later)
    assert json.loads(await communicator.receive_from()) == later
    await communicator.disconnect()


async def test_it_pushes_the_dashboards_fragments_out_of_band() -> None:
    cluster = await sync_to_async(Cluster.objects.create)(name="c")
    communicator = _communicator(cluster.pk, AnonymousUser(), query="")
    connected, _ = await communicator.connect()
    assert connected
    await _receive_until(communicator, 'id="nodes"')
    layer = get_channel_layer()
    await layer.group_send(
        group_name(cluster.pk),
        {
            "type": "cluster.cycles",
            "cycles": [
                {
                    "cycle": 3,
                    "pod": "default/<b>",
                    "result": "Unschedulable",
                    "node": None,
                    "message": "0/0 nodes are available.",
                    "attempt": 1,
                    "time": 1.0,
                }
            ],
        },
    )
    feed = await _receive_until(communicator, 'id="feed"')
    assert 'hx-swap-oob="true"' in feed
    assert f'href="/clusters/{cluster.pk}/cycles/3/"' in feed
    assert "default/&lt;b&gt;" in feed and "<b>" not in feed
    # The refresh after the cycle finds no node and no pending pod changed: it sends nothing.
    assert await communicator.receive_nothing(timeout=1.0)
    await layer.group_send(
        group_name(cluster.pk),
        {
            "type": "cluster.queue",
            "pending": 1,
            "queue": {
                "activeQ": [],
                "unschedulablePods": [],
                "backoffQ": [{"pod": "default/a", "attempts": 1, "backoffExpiration": 2.0}],
            },
        },
    )
    queue = await _receive_until(communicator, 'id="queue"')
    assert "back in 1.0 s" in queue
    await layer.group_send(group_name(cluster.pk), {"type": "cluster.status", "runner": "idle"})
    status = await _receive_until(communicator, 'id="runner-status"')
    assert "runner: idle" in status and 'id="controls"' in status
    await communicator.disconnect()


async def test_a_cycle_sent_again_replaces_its_feed_entry() -> None:
    cluster = await sync_to_async(Cluster.objects.create)(name="c")
    communicator = _communicator(cluster.pk, AnonymousUser(), query="")
    await communicator.connect()
    await _receive_until(communicator, 'id="nodes"')
    layer = get_channel_layer()
    for result in ("Waiting", "Scheduled"):
        await layer.group_send(
            group_name(cluster.pk),
            {
                "type": "cluster.cycles",
                "cycles": [
                    {
                        "cycle": 1,
                        "pod": "default/a",
                        "result": result,
                        "node": "n",
                        "message": "",
                        "attempt": 1,
                        "time": 0.0,
                    }
                ],
            },
        )
    await _receive_until(communicator, "Waiting")
    # The entry alone goes out again, swapped in place.
    entry = await _receive_until(communicator, "Scheduled")
    assert entry.count('data-cycle="1"') == 1 and 'id="feed"' not in entry
    assert '<li class="cycle result-scheduled" id="feed-cycle-1"' in entry
    assert 'hx-swap-oob="true"' in entry
    await communicator.disconnect()


async def test_it_says_when_the_runner_went_offline_and_when_one_is_back(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(consumers, "RUNNER_WATCH_INTERVAL", 0.05)
    cluster = await sync_to_async(Cluster.objects.create)(name="c")
    leases = Lease.objects.filter(cluster=cluster)
    await sync_to_async(Lease.objects.create)(
        cluster=cluster, holder="worker-1", renewed_at=timezone.now()
    )
    communicator = _communicator(cluster.pk, AnonymousUser(), query="")
    await communicator.connect()
    assert "runner: running" in await _receive_until(communicator, 'id="runner-status"')
    # The worker dies: nothing is published, its lease is no longer renewed.
    await sync_to_async(leases.update)(renewed_at=timezone.now() - timedelta(minutes=1))
    offline = await _receive_until(communicator, 'id="runner-status"')
    assert "runner-offline" in offline and "runner: offline" in offline
    # Another worker takes the expired lease over.
    await sync_to_async(leases.update)(holder="worker-2", renewed_at=timezone.now())
    back = await _receive_until(communicator, 'id="runner-status"')
    assert "runner: running" in back and consumers.BACK_ONLINE in back
    await communicator.disconnect()


async def test_api_clients_hear_of_a_runner_gone_offline(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(consumers, "RUNNER_WATCH_INTERVAL", 0.05)
    cluster = await sync_to_async(Cluster.objects.create)(name="c")
    await sync_to_async(Lease.objects.create)(
        cluster=cluster, holder="worker-1", renewed_at=timezone.now()
    )
    communicator = _communicator(cluster.pk, AnonymousUser())
    await communicator.connect()
    await receive_initial_state(communicator)
    await sync_to_async(Lease.objects.filter(cluster=cluster).update)(
        renewed_at=timezone.now() - timedelta(minutes=1)
    )
    assert json.loads(await communicator.receive_from(timeout=3)) == {
        "type": "cluster.status",
        "runner": "offline",
        "stopped": "the runner stopped renewing its lease",
    }
    await communicator.disconnect()


async def test_a_workloads_message_pushes_the_workloads_panel_and_json_clients_get_it() -> None:
    cluster = await sync_to_async(Cluster.objects.create)(name="c")
    browser = _communicator(cluster.pk, AnonymousUser(), query="")
    script = _communicator(cluster.pk, AnonymousUser())
    assert (await browser.connect())[0] and (await script.connect())[0]
    await receive_initial_state(script)
    # On connect the panel as it is: nothing applied yet.
    first = await _receive_until(browser, 'id="workloads"')
    assert 'Workloads <span class="count">0</span>' in first
    deployment = (
        "apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: web}\n"
        "spec: {replicas: 3, selector: {matchLabels: {app: web}}, template: {metadata: "
        "{labels: {app: web}}, spec: {containers: [{name: c, image: i}]}}}"
    )
    await sync_to_async(services.manifests_apply)(cluster=cluster, text=deployment)
    await get_channel_layer().group_send(group_name(cluster.pk), {"type": "cluster.workloads"})
    panel = await _receive_until(browser, 'id="workloads"')
    assert 'hx-swap-oob="true"' in panel
    assert 'Workloads <span class="count">2</span>' in panel
    assert "3 desired · 3 created · 0 bound" in panel
    assert json.loads(await script.receive_from()) == {"type": "cluster.workloads"}
    await browser.disconnect()
    await script.disconnect()
