"""Websocket authentication through the project's ASGI application: an API token or the
session, and the Origin check only where cookies could ride along."""

from __future__ import annotations

import json
from typing import Any

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


@pytest.mark.parametrize(
    ("origin", "host", "scheme", "connects"),
    [
        (b"http://127.0.0.1:8000", b"127.0.0.1:8000", "ws", True),
        (b"http://localhost", b"localhost", "ws", True),
        (b"http://localhost:80", b"localhost", "ws", True),
        (b"https://localhost", b"localhost", "wss", True),
        # Same host, another port: another site (anything served there).
        (b"http://127.0.0.1:9999", b"127.0.0.1:8000", "ws", False),
        (b"http://127.0.0.1", b"127.0.0.1:8000", "ws", False),
        # Same host and port, another scheme.
        (b"https://127.0.0.1:8000", b"127.0.0.1:8000", "ws", False),
        (b"http://localhost", b"localhost", "wss", False),
        (b"null", b"127.0.0.1:8000", "ws", False),
        # A Host the site does not serve.
        (b"http://evil.example:8000", b"evil.example:8000", "ws", False),
    ],
)
async def test_a_session_websocket_needs_the_sites_own_scheme_host_and_port(
    origin: bytes, host: bytes, scheme: str, connects: bool
) -> None:
    cluster = await sync_to_async(Cluster.objects.create)(name="c")
    socket = _socket(cluster.pk, [(b"origin", origin), (b"host", host)])
    socket.scope["scheme"] = scheme
    connected, _ = await socket.connect()
    assert connected is connects
    await socket.disconnect()


async def test_a_session_websocket_without_an_origin_is_refused() -> None:
    cluster = await sync_to_async(Cluster.objects.create)(name="c")
    connected, _ = await _socket(cluster.pk, [(b"host", b"127.0.0.1:8000")]).connect()
    assert not connected


@pytest.mark.parametrize(
    ("origin", "connects"),
    [
        (b"https://schedviz.example.org", True),
        (b"https://schedviz.example.org:443", True),
        (b"http://schedviz.example.org", False),
        (b"https://schedviz.example.org:8443", False),
        (b"https://team.example.com", True),
        (b"https://example.com", True),
        (b"https://evilexample.com", False),
    ],
)
async def test_trusted_origins_may_open_session_websockets(
    settings: Any, origin: bytes, connects: bool
) -> None:
    settings.CSRF_TRUSTED_ORIGINS = ["https://schedviz.example.org", "https://*.example.com"]
    cluster = await sync_to_async(Cluster.objects.create)(name="c")
    socket = _socket(cluster.pk, [(b"origin", origin), (b"host", b"127.0.0.1:8000")])
    connected, _ = await socket.connect()
    assert connected is connects
    await socket.disconnect()


async def test_behind_a_trusted_tls_proxy_the_sites_origin_is_https(settings: Any) -> None:
    settings.SECURE_PROXY_SSL_HEADER = ("HTTP_X_FORWARDED_PROTO", "https")
    cluster = await sync_to_async(Cluster.objects.create)(name="c")
    headers = [(b"host", b"localhost"), (b"x-forwarded-proto", b"https")]
    connected, _ = await _socket(
        cluster.pk, [(b"origin", b"https://localhost"), *headers]
    ).connect()
    assert connected
    connected, _ = await _socket(cluster.pk, [(b"origin", b"http://localhost"), *headers]).connect()
    assert not connected
