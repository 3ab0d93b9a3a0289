"""Sign in and out, and read-only share links: the owner makes a link, a visitor who opens it
reads the cluster's pages and its websocket but changes nothing, and a revoked link stops
granting at the next request."""

from __future__ import annotations

import re
from typing import Any

import pytest
from asgiref.sync import sync_to_async
from channels.routing import URLRouter
from channels.testing import WebsocketCommunicator
from django.contrib.auth.models import AnonymousUser, User
from django.contrib.sessions.backends.db import SessionStore
from django.test import Client
from django.urls import reverse

from schedviz.cluster import services
from schedviz.cluster.models import Cluster, Cycle, Node, Pod, ShareLink
from webui import access
from webui.routing import websocket_urlpatterns
from worker.runner import run_cluster

MANIFESTS = """
apiVersion: v1
kind: Node
metadata: {name: n1}
status: {allocatable: {cpu: "2", memory: 4Gi, pods: "110"}}
---
apiVersion: v1
kind: Pod
metadata: {name: p1, namespace: default}
spec: {containers: [{name: c, image: busybox}]}
"""


@pytest.fixture(autouse=True)
def _no_background_runners(settings: Any) -> None:
    settings.SCHEDVIZ_START_RUNNERS = False
    settings.SCHEDVIZ_RUNNER_IDLE_SECONDS = 0
    settings.SCHEDVIZ_WRITE_RATE_PER_MINUTE = 0


def owned_cluster(owner: User) -> Cluster:
    cluster = services.cluster_create(
        name="owned", owner=owner, clock_mode=Cluster.ClockMode.VIRTUAL, seed=7
    )
    services.manifests_apply(cluster=cluster, text=MANIFESTS)
    run_cluster(cluster.pk)
    return cluster


def owner_client(owner: User) -> Client:
    client = Client()
    client.force_login(owner)
    return client


def make_link(client: Client, cluster: Cluster) -> str:
    """Asks for a link as the page does; the URL it shows, once."""
    response = client.post(reverse("webui:share_create", args=[cluster.pk]))
    assert response.status_code == 200
    found = re.search(r'id="share-url" type="text" readonly value="([^"]+)"', response.text)
    assert found is not None, response.text
    return found.group(1)


def state(cluster: Cluster) -> tuple[Any, ...]:
    cluster.refresh_from_db()
    return (
        cluster.run_state,
        sorted(Node.objects.filter(cluster=cluster).values_list("name", flat=True)),
        sorted(Pod.objects.filter(cluster=cluster).values_list("name", flat=True)),
    )


# ---------------------------------------------------------------------------------------------
# Sign in and out


@pytest.mark.django_db
def test_the_sign_in_page_renders_and_signs_in() -> None:
    User.objects.create_user("bob", password="a long secret 123")
    client = Client()
    page = client.get(reverse("login"))
    assert page.status_code == 200
    assert "Sign in" in page.text and 'name="password"' in page.text
    signed = client.post(
        reverse("login"), {"username": "bob", "password": "a long secret 123"}, follow=True
    )
    assert signed.redirect_chain[-1][0] == reverse("webui:index")
    assert "bob" in signed.text and "Sign out" in signed.text
    out = client.post(reverse("logout"), follow=True)
    assert out.redirect_chain[-1][0] == reverse("webui:index")
    assert 'href="/accounts/login/"' in out.text


@pytest.mark.django_db
def test_a_wrong_password_does_not_sign_in() -> None:
    User.objects.create_user("bob", password="a long secret 123")
    client = Client()
    refused = client.post(reverse("login"), {"username": "bob", "password": "nope"})
    assert refused.status_code == 200
    assert "_auth_user_id" not in client.session


@pytest.mark.django_db
def test_password_guesses_are_rate_limited(settings: Any) -> None:
    settings.SCHEDVIZ_WRITE_RATE_PER_MINUTE = 2
    settings.CACHES = {
        "default": {
            "BACKEND": "django.core.cache.backends.locmem.LocMemCache",
            "LOCATION": "test-share-links-login",
        }
    }
    User.objects.create_user("bob", password="a long secret 123")
    client = Client()
    answers = [
        client.post(reverse("login"), {"username": "bob", "password": f"guess {i}"}).status_code
        for i in range(3)
    ]
    assert answers == [200, 200, 429]
    assert client.get(reverse("login")).status_code == 200


# ---------------------------------------------------------------------------------------------
# Share links


@pytest.mark.django_db
def test_a_share_viewer_reads_the_cluster_but_every_write_is_refused(alice: User) -> None:
    cluster = owned_cluster(alice)
    url = make_link(owner_client(alice), cluster)
    assert ShareLink.objects.get().key_hash not in url
    viewer = Client()
    dashboard = reverse("webui:dashboard", args=[cluster.pk])
    assert viewer.get(dashboard).status_code == 404
    opened = viewer.get(url)
    assert opened.status_code == 302 and opened["Location"] == dashboard
    page = viewer.get(dashboard)
    assert page.status_code == 200
    assert "Share read-only link" not in page.text
    number = Cycle.objects.filter(cluster=cluster).values_list("number", flat=True).first()
    assert number is not None
    assert viewer.get(reverse("webui:cycle", args=[cluster.pk, number])).status_code == 200
    assert viewer.get(reverse("webui:pod", args=[cluster.pk, "default", "p1"])).status_code == 200
    assert viewer.get(reverse("webui:profiles", args=[cluster.pk])).status_code == 200

    before = state(cluster)
    writes = [
        (reverse("webui:control", args=[cluster.pk, "pause"]), {}),
        (reverse("webui:control", args=[cluster.pk, "run"]), {}),
        (
            reverse("webui:pod_new", args=[cluster.pk]),
            {"name": "sneaky", "namespace": "default", "count": "1", "cpu": "100m"},
        ),
        (reverse("webui:apply", args=[cluster.pk]), {"manifests": MANIFESTS.replace("n1", "n2")}),
        (reverse("webui:node_delete", args=[cluster.pk, "n1"]), {}),
        (reverse("webui:cluster_reset", args=[cluster.pk]), {}),
        (reverse("webui:cluster_delete", args=[cluster.pk]), {}),
        (reverse("webui:share_create", args=[cluster.pk]), {}),
    ]
    for write, data in writes:
        for headers in ({}, {"HX-Request": "true"}):
            response = viewer.post(write, data, headers=headers)
            assert response.status_code in (403, 404), (write, response.status_code)
    assert state(cluster) == before
    assert ShareLink.objects.count() == 1


@pytest.mark.django_db
def test_the_json_api_refuses_a_share_viewers_writes(alice: User) -> None:
    cluster = owned_cluster(alice)
    viewer = Client()
    viewer.get(make_link(owner_client(alice), cluster))
    before = state(cluster)
    for response in (
        viewer.post(
            f"/api/clusters/{cluster.pk}/apply",
            MANIFESTS.replace("n1", "n2"),
            content_type="application/yaml",
        ),
        viewer.delete(f"/api/clusters/{cluster.pk}/pods/default/p1"),
        viewer.delete(f"/api/clusters/{cluster.pk}"),
    ):
        assert response.status_code in (401, 403, 404), response.status_code
    assert state(cluster) == before


@pytest.mark.django_db
def test_a_revoked_link_stops_granting_at_the_next_request(alice: User) -> None:
    cluster = owned_cluster(alice)
    owner = owner_client(alice)
    url = make_link(owner, cluster)
    viewer = Client()
    viewer.get(url)
    dashboard = reverse("webui:dashboard", args=[cluster.pk])
    assert viewer.get(dashboard).status_code == 200
    listed = owner.get(dashboard).text
    link = ShareLink.objects.get()
    revoke = reverse("webui:share_revoke", args=[cluster.pk, link.pk])
    assert f'action="{revoke}"' in listed
    assert viewer.post(revoke).status_code == 404
    assert owner.post(revoke).status_code == 302
    assert viewer.get(dashboard).status_code == 404
    assert viewer.get(url).status_code == 404
    assert f'action="{revoke}"' not in owner.get(dashboard).text


@pytest.mark.django_db
def test_an_unknown_key_is_not_found() -> None:
    client = Client()
    assert client.get(reverse("webui:share_open", args=["no-such-key"])).status_code == 404
    assert access.SESSION_KEY not in client.session


@pytest.mark.django_db
def test_only_the_owner_can_make_a_link(alice: User) -> None:
    cluster = owned_cluster(alice)
    mallory = User.objects.create_user("mallory")
    for client in (Client(), owner_client(mallory)):
        response = client.post(reverse("webui:share_create", args=[cluster.pk]))
        assert response.status_code == 404
    with pytest.raises(services.ServiceError):
        services.share_link_create(cluster=cluster, user=mallory)
    public = services.cluster_create(name="public")
    with pytest.raises(services.ServiceError):
        services.share_link_create(cluster=public, user=alice)
    assert not ShareLink.objects.exists()


@pytest.mark.django_db
def test_the_shown_url_is_escaped(alice: User) -> None:
    cluster = owned_cluster(alice)
    cluster.name = "<script>alert(1)</script>"
    cluster.save()
    client = owner_client(alice)
    response = client.post(
        reverse("webui:share_create", args=[cluster.pk]),
        HTTP_HOST='evil"onfocus="alert(1)',
        SERVER_NAME="x",
    )
    # Django refuses a host it does not allow; with the test host the page escapes the name.
    assert response.status_code in (200, 400)
    page = client.post(reverse("webui:share_create", args=[cluster.pk])).text
    assert "<script>alert(1)</script>" not in page
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in page
    assert 'onfocus="alert(1)' not in page


# ---------------------------------------------------------------------------------------------
# The websocket


def _communicator(cluster_id: int, session: Any) -> WebsocketCommunicator:
    communicator = WebsocketCommunicator(
        URLRouter(websocket_urlpatterns), f"/ws/clusters/{cluster_id}/?format=json"
    )
    communicator.scope["user"] = AnonymousUser()
    communicator.scope["session"] = session
    return communicator


@sync_to_async
def _shared_cluster() -> tuple[Cluster, ShareLink, SessionStore]:
    owner = User.objects.create_user("owner")
    cluster = services.cluster_create(name="owned", owner=owner)
    link, _key = services.share_link_create(cluster=cluster, user=owner)
    session = SessionStore()
    access.grant(session, link)
    session.save()
    return cluster, link, session


@pytest.mark.django_db(transaction=True)
async def test_the_websocket_takes_a_granted_session_until_the_link_is_revoked() -> None:
    cluster, link, session = await _shared_cluster()
    nobody = _communicator(cluster.pk, SessionStore())
    connected, code = await nobody.connect()
    assert not connected and code == 4403

    granted = _communicator(cluster.pk, session)
    connected, _ = await granted.connect()
    assert connected
    await granted.disconnect()

    await sync_to_async(services.share_link_revoke)(link=link, user=cluster.owner)
    revoked = _communicator(cluster.pk, session)
    connected, code = await revoked.connect()
    assert not connected and code == 4403
