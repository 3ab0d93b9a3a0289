"""Websocket authentication through the project's ASGI application: an API token or the
session, and the Origin check only where cookies could ride along."""

from __future__ import annotations

import json

import pytest
from asgiref.sync import sync_to_async
from channels.testing import WebsocketCommunicator
from django.contrib.auth.models import User

from schedviz.asgi import application
from schedviz.cluster import services
from schedviz.cluster.models import Cluster

pytestmark = pytest.mark.django_db(transaction=True)


def _socket(cluster_id: int, headers: list[tuple[bytes, bytes]]) -> WebsocketCommunicator:
    return WebsocketCommunicator(
        application, f"/ws/clusters/{cluster_id}/?format=json", headers=headers
    )


async def _owned_cluster() -> tuple[Cluster, str]:
    token = await sync_to_async(services.api_token_create)(username="alice")
    owner = await sync_to_async(User.objects.get)(username="alice")
    cluster = await sync_to_async(Cluster.objects.create)(name="c", owner=owner)
    return cluster, token.key


async def test_a_script_watches_its_own_cluster_with_its_api_token_and_no_origin() -> None:
    cluster, key = await _owned_cluster()
    socket = _socket(cluster.pk, [(b"authorization", f"Token {key}".encode())])
    connected, _ = await socket.connect()
    assert connected
    assert json.loads(await socket.receive_from()) == {"type": "hello", "cluster": cluster.pk}
    await socket.disconnect()


@pytest.mark.parametrize("header", [b"Token not-a-key", b"Token ", b"Bearer abc"])
async def test_a_bad_token_connects_as_nobody_and_is_refused_an_owned_cluster(
    header: bytes,
) -> None:
    cluster, _ = await _owned_cluster()
    connected, code = await _socket(cluster.pk, [(b"authorization", header)]).connect()
    assert not connected
    assert code == 4403


async def test_another_users_token_is_refused() -> None:
    cluster, _ = await _owned_cluster()
    other = await sync_to_async(services.api_token_create)(username="mallory")
    socket = _socket(cluster.pk, [(b"authorization", f"Token {other.key}".encode())])
    connected, code = await socket.connect()
    assert not connected
    assert code == 4403


async def test_without_a_token_a_foreign_origin_is_refused_before_the_session_is_read() -> None:
    cluster = await sync_to_async(Cluster.objects.create)(name="c")
    socket = _socket(cluster.pk, [(b"origin", b"http://evil.example"), (b"host", b"127.0.0.1")])
    connected, _ = await socket.connect()
    assert not connected
