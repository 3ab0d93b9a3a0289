"""The pages' writes: every route of the web UI refuses a POST without the CSRF token (the
routes are read from the URL confs, so a new view that is exempt fails here); htmx sends the
token in a header from <body>; writes beyond SCHEDVIZ_WRITE_RATE_PER_MINUTE are answered 429
(an error fragment for htmx, a page otherwise); the YAML forms refuse more than
SCHEDVIZ_MAX_UPLOAD_BYTES with a form error and save nothing."""

from __future__ import annotations

import re
from collections.abc import Iterator
from typing import Any
from urllib.parse import urlencode

import pytest
from django.core.cache import cache
from django.core.files.uploadedfile import SimpleUploadedFile
from django.test import Client
from django.urls import URLPattern, URLResolver, get_resolver, reverse

from schedviz.cluster import services
from schedviz.cluster.models import Cluster, Namespace, Node, Pod
from schedviz.cluster.ratelimit import KEY_PREFIX, take_token

pytestmark = pytest.mark.django_db

NODE = """
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
def _own_cache(settings: Any) -> Iterator[None]:
    settings.SCHEDVIZ_START_RUNNERS = False
    settings.SCHEDVIZ_WRITE_RATE_PER_MINUTE = 0
    settings.CACHES = {
        "default": {
            "BACKEND": "django.core.cache.backends.locmem.LocMemCache",
            "LOCATION": "test-web-csrf-and-limits",
        }
    }
    cache.clear()
    yield
    cache.clear()


@pytest.fixture
def cluster() -> Cluster:
    cluster = services.cluster_create(name="c")
    services.manifests_apply(cluster=cluster, text=NODE)
    return cluster


def webui_routes() -> list[tuple[str, list[str]]]:
    """Every route of the web UI: its name and the names of its arguments."""

    def walk(patterns: list[Any], namespace: str) -> Iterator[tuple[str, list[str]]]:
        for entry in patterns:
            if isinstance(entry, URLResolver):
                yield from walk(entry.url_patterns, entry.namespace or namespace)
            elif isinstance(entry, URLPattern) and namespace == "webui" and entry.name:
                yield entry.name, list(entry.pattern.converters)

    routes = list(walk(get_resolver().url_patterns, ""))
    assert len(routes) >= 14, routes
    return routes


ARGUMENTS = {
    "action": "run",
    "namespace": "default",
    "name": "n1",
    "number": 1,
    "slug": "resource-fit",
    "run_id": 1,
    "link_id": 1,
    "key": "no-such-key",
    "export_format": "yaml",
    "node": "n1",
    "plugin": "NodeResourcesFit",
    "kind": "Deployment",
}


def route_url(name: str, arguments: list[str], cluster: Cluster) -> str:
    kwargs = {key: cluster.pk if key == "cluster_id" else ARGUMENTS[key] for key in arguments}
    if name.startswith("pod") and "name" in kwargs:
        kwargs["name"] = "p1"
    return reverse(f"webui:{name}", kwargs=kwargs)


def state(cluster_id: int) -> tuple[Any, ...]:
    cluster = Cluster.objects.filter(pk=cluster_id).first()
    return (
        cluster and (cluster.name, cluster.run_state, cluster.speed, cluster.clock_mode),
        Cluster.objects.count(),
        sorted(Node.objects.values_list("name", "unschedulable")),
        sorted(Pod.objects.values_list("name", flat=True)),
    )


# ---------------------------------------------------------------------------------------------
# CSRF


def test_every_page_route_refuses_a_post_without_the_csrf_token(cluster: Cluster) -> None:
    client = Client(enforce_csrf_checks=True)
    before = state(cluster.pk)
    for name, arguments in webui_routes():
        url = route_url(name, arguments, cluster)
        for headers in ({}, {"HX-Request": "true"}):
            response = client.post(
                url,
                {"name": "x", "manifests": "kind: Namespace", "cordon": "1", "speed": "2"},
                headers=headers,
            )
            assert response.status_code == 403, (url, headers, response.status_code)
    assert state(cluster.pk) == before


def test_htmx_sends_the_pages_csrf_token_in_a_header(cluster: Cluster) -> None:
    """The controls (also pushed by the websocket, rendered without a request, so without a
    token field) post with htmx, which sends <body>'s hx-headers: the token."""
    client = Client(enforce_csrf_checks=True)
    html = client.get(reverse("webui:dashboard", args=[cluster.pk])).content.decode()
    body = re.search(r"<body hx-headers='\{\"X-CSRFToken\": \"([^\"]+)\"\}'>", html)
    assert body is not None
    controls = html.index('id="controls"')
    assert html.index("<body") < controls < html.index("</body>")
    control = reverse("webui:control", args=[cluster.pk, "pause"])
    assert f'hx-post="{control}"' in html
    refused = client.post(control, headers={"HX-Request": "true", "HX-Target": "controls"})
    assert refused.status_code == 403
    answered = client.post(
        control,
        headers={"HX-Request": "true", "HX-Target": "controls", "X-CSRFToken": body.group(1)},
    )
    assert answered.status_code == 200
    cluster.refresh_from_db()
    assert cluster.run_state == Cluster.RunState.PAUSED


# ---------------------------------------------------------------------------------------------
# Rate limit


def drain(rate: int, address: str = "127.0.0.1") -> None:
    for _ in range(rate):
        take_token(f"{KEY_PREFIX}ip:{address}", rate)


def test_every_page_write_is_rate_limited(settings: Any, client: Client, cluster: Cluster) -> None:
    """Each route either takes no POST (405) or is limited; the limited ones are the writes."""
    settings.SCHEDVIZ_WRITE_RATE_PER_MINUTE = 2
    before = state(cluster.pk)
    limited = set()
    for name, arguments in webui_routes():
        url = route_url(name, arguments, cluster)
        cache.clear()
        drain(2)
        response = client.post(url, {"name": "x", "manifests": "kind: Namespace"})
        assert response.status_code in (405, 429), (url, response.status_code)
        if response.status_code == 405:
            continue
        limited.add(name)
        assert response["Content-Type"].startswith("text/html")
        assert int(response["Retry-After"]) >= 1
        assert "Too many changes: at most 2 a minute" in response.content.decode()
    assert state(cluster.pk) == before
    assert limited == {
        "index",
        "trace_import",
        "review",
        "cluster_delete",
        "cluster_reset",
        "control",
        "pod_new",
        "pod_delete",
        "workload_scale",
        "workload_delete",
        "node_new",
        "node",
        "node_cordon",
        "node_delete",
        "apply",
        "profiles",
        "compare_new",
        "scenario_new",
        "lesson_load",
        "lesson_scenario",
        "lesson_restart",
        "predict",
        "debug",
        "share_create",
        "share_revoke",
    }
    # Reads are never limited.
    for name in ("index", "dashboard", "pod_new", "node_new", "node", "apply", "profiles"):
        url = route_url(name, dict(webui_routes())[name], cluster)
        assert client.get(url).status_code == 200, url


def test_htmx_gets_the_message_alone_at_the_top_of_the_page(
    settings: Any, client: Client, cluster: Cluster
) -> None:
    settings.SCHEDVIZ_WRITE_RATE_PER_MINUTE = 2
    drain(2)
    response = client.post(
        reverse("webui:control", args=[cluster.pk, "step"]),
        headers={"HX-Request": "true", "HX-Target": "controls"},
    )
    assert response.status_code == 429
    assert response["HX-Retarget"] == "#main" and response["HX-Reswap"] == "afterbegin"
    html = response.content.decode()
    assert "<html" not in html and 'role="alert"' in html and "Try again in" in html
    # base.html lets htmx swap a 429 (it would drop other 4xx answers).
    page = client.get(reverse("webui:index")).content.decode()
    assert '{"code": "429", "swap": true, "error": false}' in page


def test_a_client_gets_the_rate_and_no_more(
    settings: Any, client: Client, cluster: Cluster
) -> None:
    settings.SCHEDVIZ_WRITE_RATE_PER_MINUTE = 3
    url = reverse("webui:pod_new", args=[cluster.pk])
    form = {"namespace": "default", "count": "1", "cpu": "100m"}
    answers = [
        client.post(url, {**form, "name": f"web-{i}"}, headers={"HX-Request": "true"})
        for i in range(5)
    ]
    assert [a.status_code for a in answers] == [200, 200, 200, 429, 429], [
        a.content.decode()[:300] for a in answers
    ]
    assert sorted(Pod.objects.values_list("name", flat=True)) == ["p1", "web-0", "web-1", "web-2"]
    # Another address has its own bucket.
    other = client.post(
        url, {**form, "name": "web-9"}, headers={"HX-Request": "true"}, REMOTE_ADDR="10.0.0.9"
    )
    assert other.status_code == 200


# ---------------------------------------------------------------------------------------------
# Upload size


def _big_yaml(size: int) -> str:
    line = "# " + "x" * 76 + "\n"
    return "apiVersion: v1\nkind: Namespace\nmetadata: {name: big}\n" + line * (
        size // len(line) + 1
    )


def test_the_apply_form_refuses_more_than_the_upload_limit(
    settings: Any, client: Client, cluster: Cluster
) -> None:
    settings.SCHEDVIZ_MAX_UPLOAD_BYTES = 10_000
    before = state(cluster.pk)
    url = reverse("webui:apply", args=[cluster.pk])
    for headers in ({}, {"HX-Request": "true"}):
        response = client.post(url, {"manifests": _big_yaml(20_000)}, headers=headers)
        assert response.status_code == 400
        html = response.content.decode()
        assert "at most 10000 bytes (SCHEDVIZ_MAX_UPLOAD_BYTES)" in html, html[:2000]
    assert state(cluster.pk) == before
    assert not Namespace.objects.filter(cluster=cluster, name="big").exists()
    small = client.post(url, {"manifests": _big_yaml(5_000)})
    assert small.status_code == 302


def test_the_create_form_refuses_more_than_the_upload_limit(settings: Any, client: Client) -> None:
    settings.SCHEDVIZ_MAX_UPLOAD_BYTES = 10_000
    url = reverse("webui:index")
    common = {"name": "big", "clock_mode": "live", "source": "manifests"}
    pasted = client.post(url, {**common, "manifests": _big_yaml(20_000)})
    upload = SimpleUploadedFile("big.yaml", _big_yaml(20_000).encode(), "application/yaml")
    uploaded = client.post(url, {**common, "upload": upload})
    for response in (pasted, uploaded):
        assert response.status_code == 400
        assert "at most 10000 bytes (SCHEDVIZ_MAX_UPLOAD_BYTES)" in response.content.decode()
    assert not Cluster.objects.exists()


def test_the_profiles_yaml_form_refuses_more_than_the_upload_limit(
    settings: Any, client: Client, cluster: Cluster
) -> None:
    settings.SCHEDVIZ_MAX_UPLOAD_BYTES = 10_000
    text = (
        "apiVersion: kubescheduler.config.k8s.io/v1\n"
        "kind: KubeSchedulerConfiguration\n"
        "profiles: [{schedulerName: big}]\n"
    ) + _big_yaml(20_000)
    response = client.post(
        reverse("webui:profiles", args=[cluster.pk]), {"action": "yaml", "configuration": text}
    )
    assert response.status_code == 400
    assert "at most 10000 bytes (SCHEDVIZ_MAX_UPLOAD_BYTES)" in response.content.decode()
    assert "big" not in str(services.scheduler_config_document(cluster=cluster))


def test_a_paste_up_to_the_limit_is_answered_by_the_form_not_refused_by_django(
    settings: Any, client: Client, cluster: Cluster
) -> None:
    """DATA_UPLOAD_MAX_MEMORY_SIZE (Django's cap on a body's form fields) leaves room for a
    form-encoded paste of SCHEDVIZ_MAX_UPLOAD_BYTES; past the cap Django answers a bare 400."""
    assert settings.DATA_UPLOAD_MAX_MEMORY_SIZE >= 3 * settings.SCHEDVIZ_MAX_UPLOAD_BYTES
    text = _big_yaml(3 * 1024 * 1024)  # over Django's default 2.5 MB, under the 10 MB default
    url = reverse("webui:apply", args=[cluster.pk])
    # As htmx sends it: form-encoded.
    encoded = urlencode({"manifests": text})
    response = client.post(url, encoded, content_type="application/x-www-form-urlencoded")
    assert response.status_code == 302
    assert Namespace.objects.filter(cluster=cluster, name="big").exists()


@pytest.mark.parametrize("url", ["/accounts/login/", "/admin/login/"])
def test_password_guesses_at_either_sign_in_are_rate_limited(
    settings: Any, client: Client, url: str
) -> None:
    settings.SCHEDVIZ_WRITE_RATE_PER_MINUTE = 3
    cache.clear()
    guesses = [
        client.post(url, {"username": "admin", "password": f"guess-{i}"}).status_code
        for i in range(5)
    ]
    assert guesses == [200, 200, 200, 429, 429]
    # Showing the form is a read, never limited.
    assert client.get(url).status_code == 200
