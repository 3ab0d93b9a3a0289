"""The JSON API's write rate limit: a token bucket per user (per address when anonymous) in
Django's cache, 429 with Retry-After past it, reads never limited."""

from __future__ import annotations

import json
import socket
from collections.abc import Iterator
from typing import Any

import pytest
from django.core.cache import cache
from django.http import HttpRequest, HttpResponse
from django.test import Client, RequestFactory

from schedviz.cluster import services
from schedviz.cluster.models import Cluster
from schedviz.cluster.ratelimit import UNAVAILABLE_RETRY_SECONDS, limit_writes, take_token

pytestmark = pytest.mark.django_db


@pytest.fixture(autouse=True)
def _fresh_buckets(settings: Any) -> Iterator[None]:
    settings.SCHEDVIZ_START_RUNNERS = False
    settings.SCHEDVIZ_WRITE_RATE_PER_MINUTE = 3
    # A cache of this test's own, so that its buckets neither follow these users' ids into other
    # tests nor come from them (and Redis, when configured, is left alone).
    settings.CACHES = {
        "default": {
            "BACKEND": "django.core.cache.backends.locmem.LocMemCache",
            "LOCATION": "test-write-rate-limit",
        }
    }
    cache.clear()
    yield
    cache.clear()


def token_auth(username: str) -> dict[str, str]:
    return {"HTTP_AUTHORIZATION": f"Token {services.api_token_create(username=username).key}"}


def create_cluster(client: Client, auth: dict[str, str], name: str) -> Any:
    return client.post(
        "/api/clusters", data=json.dumps({"name": name}), content_type="application/json", **auth
    )


def test_writes_past_the_rate_are_429_with_retry_after(client: Client) -> None:
    auth = token_auth("alice")
    assert [create_cluster(client, auth, f"c{i}").status_code for i in range(3)] == [201] * 3
    refused = create_cluster(client, auth, "c3")
    assert refused.status_code == 429
    seconds = int(refused["Retry-After"])
    assert 15 <= seconds <= 20  # a token comes back every 20 s
    assert refused.json() == {
        "errors": [
            "too many writes: at most 3 a minute (SCHEDVIZ_WRITE_RATE_PER_MINUTE); "
            f"retry after {seconds} seconds"
        ]
    }
    listed = client.get("/api/clusters", **auth)
    assert listed.status_code == 200
    assert [c["name"] for c in listed.json()["clusters"]] == ["c0", "c1", "c2"]


def test_every_write_view_is_limited_and_reads_are_not(client: Client) -> None:
    auth = token_auth("alice")
    cluster_id = create_cluster(client, auth, "c").json()["id"]
    apply_url = f"/api/clusters/{cluster_id}/apply"
    client.post(apply_url, data="", content_type="application/yaml", **auth)
    client.delete(f"/api/clusters/{cluster_id}/pods/default/none", **auth)
    for _ in range(10):
        assert client.get(f"/api/clusters/{cluster_id}/pods", **auth).status_code == 200
    assert (
        client.post(apply_url, data="", content_type="application/yaml", **auth).status_code == 429
    )
    assert client.delete(f"/api/clusters/{cluster_id}", **auth).status_code == 429
    assert client.delete(f"/api/clusters/{cluster_id}/pods/default/x", **auth).status_code == 429


def test_each_user_has_a_bucket(client: Client) -> None:
    alice, bob = token_auth("alice"), token_auth("bob")
    for i in range(3):
        create_cluster(client, alice, f"a{i}")
    assert create_cluster(client, alice, "a3").status_code == 429
    assert create_cluster(client, bob, "b0").status_code == 201


def test_unauthenticated_requests_do_not_spend_a_users_tokens(client: Client) -> None:
    for _ in range(5):
        assert create_cluster(client, {"HTTP_AUTHORIZATION": "Token nope"}, "x").status_code == 401
    assert create_cluster(client, token_auth("alice"), "c").status_code == 201


def test_zero_turns_the_limit_off(client: Client, settings: Any) -> None:
    settings.SCHEDVIZ_WRITE_RATE_PER_MINUTE = 0
    auth = token_auth("alice")
    assert {create_cluster(client, auth, f"c{i}").status_code for i in range(10)} == {201}


def test_the_bucket_refills_at_the_rate() -> None:
    key = "test:bucket"
    assert [take_token(key, 60, now=100.0) for _ in range(60)] == [0.0] * 60
    assert take_token(key, 60, now=100.0) == pytest.approx(1.0)
    assert take_token(key, 60, now=101.0) == 0.0  # one token back after a second
    assert take_token(key, 60, now=101.5) == pytest.approx(0.5)
    assert take_token(key, 60, now=1000.0) == 0.0  # full again, and no more than full:
    assert sum(take_token(key, 60, now=1000.0) == 0.0 for _ in range(100)) == 59


def test_anonymous_clients_are_limited_by_address(settings: Any) -> None:
    @limit_writes
    def view(request: HttpRequest) -> HttpResponse:
        return HttpResponse("ok")

    factory = RequestFactory()

    def post(address: str) -> int:
        request = factory.post("/", REMOTE_ADDR=address)
        return view(request).status_code

    assert [post("10.0.0.1") for _ in range(4)] == [200, 200, 200, 429]
    assert post("10.0.0.2") == 200
    assert view(factory.get("/", REMOTE_ADDR="10.0.0.1")).status_code == 200


@pytest.fixture
def redis_down(settings: Any) -> Iterator[None]:
    """The limiter's cache in a Redis that is not there: a loopback port nothing listens on."""
    working = settings.CACHES
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    settings.CACHES = {
        "default": {
            "BACKEND": "django.core.cache.backends.redis.RedisCache",
            "LOCATION": f"redis://127.0.0.1:{port}/0",
            "OPTIONS": {"socket_connect_timeout": 1.0, "socket_timeout": 1.0},
        }
    }
    yield
    settings.CACHES = working  # before the buckets are cleared


@pytest.mark.usefixtures("redis_down")
def test_api_writes_are_a_json_503_with_retry_after_while_redis_is_down(client: Client) -> None:
    auth = token_auth("alice")
    refused = create_cluster(client, auth, "c")
    assert refused.status_code == 503
    assert refused["Content-Type"] == "application/json"
    assert refused["Retry-After"] == str(UNAVAILABLE_RETRY_SECONDS)
    assert refused.json() == {
        "errors": [
            "service unavailable: the rate limiter's store (Redis) cannot be reached; "
            f"retry after {UNAVAILABLE_RETRY_SECONDS} seconds"
        ]
    }
    assert not Cluster.objects.exists()
    # Reads do not touch the limiter.
    assert client.get("/api/clusters", **auth).status_code == 200


@pytest.mark.usefixtures("redis_down")
def test_page_writes_get_the_unavailable_page_or_message_while_redis_is_down(
    client: Client,
) -> None:
    page = client.post("/", {"name": "x"})
    assert page.status_code == 503 and page["Retry-After"] == str(UNAVAILABLE_RETRY_SECONDS)
    assert page["Content-Type"].startswith("text/html")
    assert "the service is briefly unavailable" in page.content.decode()
    htmx = client.post("/", {"name": "x"}, headers={"HX-Request": "true"})
    assert htmx.status_code == 503 and htmx["HX-Retarget"] == "#main"
    assert "<html" not in htmx.content.decode()
    assert not Cluster.objects.exists()
