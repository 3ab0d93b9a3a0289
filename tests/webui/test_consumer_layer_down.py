"""The websocket consumer with its channel layer unreachable (Redis down in the distributed mode):
refused cleanly, with close code 4503 and one log line, never an exception out of the consumer
(a bare HTTP 500 and a traceback under daphne; tests/test_docker_compose_live.py checks that)."""

from __future__ import annotations

import logging
from typing import Any

import pytest
from asgiref.sync import sync_to_async
from channels.layers import InMemoryChannelLayer
from channels.routing import URLRouter
from channels.testing import WebsocketCommunicator
from django.contrib.auth.models import AnonymousUser
from redis.exceptions import ConnectionError as RedisConnectionError

from schedviz.cluster.models import Cluster
from webui import consumers
from webui.routing import websocket_urlpatterns

pytestmark = pytest.mark.django_db(transaction=True)


class UnreachableLayer(InMemoryChannelLayer):
    """What channels_redis does with Redis down: every call that talks to Redis raises."""

    def __init__(self, fails: str) -> None:
        super().__init__()
        self.fails = fails

    async def group_add(self, group: str, channel: str) -> None:
        if self.fails == "group_add":
            raise RedisConnectionError("Error 111 connecting to 127.0.0.1:6379.")
        await super().group_add(group, channel)

    async def receive(self, channel: str) -> dict[str, Any]:
        if self.fails == "receive":
            raise RedisConnectionError("Error 111 connecting to 127.0.0.1:6379.")
        return await super().receive(channel)


@pytest.mark.parametrize("fails", ["group_add", "receive"])
async def test_a_websocket_is_refused_with_4503_when_the_channel_layer_is_down(
    fails: str, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    layer = UnreachableLayer(fails)
    monkeypatch.setattr(consumers.ClusterConsumer, "channel_layer_alias", "unreachable")
    monkeypatch.setattr("channels.consumer.get_channel_layer", lambda alias: layer)
    cluster = await sync_to_async(Cluster.objects.create)(name="watched")
    communicator = WebsocketCommunicator(
        URLRouter(websocket_urlpatterns), f"/ws/clusters/{cluster.pk}/?format=json"
    )
    communicator.scope["user"] = AnonymousUser()
    with caplog.at_level(logging.WARNING, logger="webui.consumers"):
        connected, _ = await communicator.connect()
        assert connected  # accepted, then closed at once: a close code a client can read
        # What connect sent before the layer failed may come first (the receive case).
        closed = await communicator.receive_output(timeout=5)
        while closed["type"] == "websocket.send":
            closed = await communicator.receive_output(timeout=5)
        await communicator.wait(timeout=5)
    assert closed == {"type": "websocket.close", "code": consumers.CLOSE_UNAVAILABLE}
    refusals = [r for r in caplog.records if "channel layer is unreachable" in r.getMessage()]
    assert len(refusals) == 1 and refusals[0].exc_info is None
