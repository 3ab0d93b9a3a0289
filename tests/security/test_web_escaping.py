"""Hostile names on every page: objects whose names, annotations, taints and messages carry
markup (and right-to-left overrides) are applied through the services and scheduled by the
engine, so the traces and events carry them too; every page, htmx fragment and websocket frame
shows them as text, and the exports stay valid JSON."""

from __future__ import annotations

import json
from html.parser import HTMLParser
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

from schedviz.cluster import exports, services
from schedviz.cluster.live import group_name
from schedviz.cluster.models import Cluster, Cycle
from webui.routing import websocket_urlpatterns
from worker.runner import run_cluster

pytestmark = pytest.mark.django_db(transaction=True)

SCRIPT = "<script>alert(1)</script>"
# Node and pod names with markup (let through by ``markup_in_names``).
NODE = "<img src=x onerror=alert(1)>"
POD = '"><svg onload=alert(1)>'
# U+202E turns what follows around: "evil\u202egnp.exe" reads as "evilexe.png".
RTL = "evil\u202egnp.exe"

MANIFESTS = [
    {
        "apiVersion": "v1",
        "kind": "Node",
        "metadata": {
            "name": NODE,
            "labels": {"zone": "a"},
            "annotations": {"note": SCRIPT, "rtl": RTL},
        },
        "spec": {"taints": [{"key": "dedicated", "value": "x", "effect": "NoSchedule"}]},
        "status": {"allocatable": {"cpu": "2", "memory": "4Gi", "pods": "110"}},
    },
    {
        "apiVersion": "v1",
        "kind": "Node",
        "metadata": {"name": RTL, "annotations": {"note": SCRIPT}},
        "status": {"allocatable": {"cpu": "1", "memory": "4Gi", "pods": "110"}},
    },
    {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": POD, "namespace": "default", "annotations": {"note": SCRIPT}},
        "spec": {
            "nodeSelector": {"zone": "a"},
            "tolerations": [{"key": "dedicated", "operator": "Exists", "effect": "NoSchedule"}],
            "containers": [
                {"name": "c", "image": "busybox", "resources": {"requests": {"cpu": "1"}}}
            ],
        },
    },
    {
        # Fits nowhere: its message names every node, hostile ones included.
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": RTL, "namespace": "default", "annotations": {"note": SCRIPT}},
        "spec": {
            "containers": [
                {"name": "c", "image": "busybox", "resources": {"requests": {"cpu": "64"}}}
            ]
        },
    },
]


class _Markup(HTMLParser):
    """What the browser would build: elements that run script, and event handler attributes."""

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.found: list[str] = []
        self._in_script = False

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        handlers = [name for name, _ in attrs if name.startswith("on")]
        if handlers:
            self.found.append(f"<{tag} {handlers}>")
        if tag in {"img", "svg", "iframe", "object", "embed"}:
            self.found.append(f"<{tag}>")
        if tag == "script":
            # htmx's own script: a static file, no inline code.
            src = dict(attrs).get("src") or ""
            if not src.startswith("/static/"):
                self.found.append(f"<script src={src!r}>")
            self._in_script = True

    def handle_endtag(self, tag: str) -> None:
        if tag == "script":
            self._in_script = False

    def handle_data(self, data: str) -> None:
        if self._in_script and data.strip():
            self.found.append(f"inline script {data[:40]!r}")


@pytest.fixture(autouse=True)
def _quiet(settings: Any, markup_in_names: None) -> None:
    settings.SCHEDVIZ_START_RUNNERS = False
    settings.SCHEDVIZ_RUNNER_IDLE_SECONDS = 0
    settings.SCHEDVIZ_WRITE_RATE_PER_MINUTE = 0


@pytest.fixture
def cluster() -> Cluster:
    cluster = services.cluster_create(
        name=f"{SCRIPT}{RTL}", clock_mode=Cluster.ClockMode.VIRTUAL, seed=7
    )
    services.manifests_apply(cluster=cluster, text=yaml.safe_dump_all(MANIFESTS))
    run_cluster(cluster.pk)
    return cluster


def assert_escaped(html: str, where: str) -> None:
    parser = _Markup()
    parser.feed(html)
    parser.close()
    assert parser.found == [], where


def test_the_engine_carries_the_hostile_names(cluster: Cluster) -> None:
    cycles = Cycle.objects.filter(cluster=cluster)
    pods = {c.pod_name for c in cycles}
    assert {POD, RTL} <= pods
    scheduled = cycles.get(pod_name=POD, attempt=1)
    assert scheduled.node == NODE
    refused = cycles.filter(pod_name=RTL).first()
    assert refused is not None and refused.result != "Scheduled"


def test_every_page_shows_them_as_text(client: Client, cluster: Cluster) -> None:
    refused = Cycle.objects.filter(cluster=cluster, pod_name=RTL).first()
    scheduled = Cycle.objects.get(cluster=cluster, pod_name=POD, attempt=1)
    assert refused is not None
    pages = {
        "clusters": reverse("webui:index"),
        "dashboard": reverse("webui:dashboard", args=[cluster.pk]),
        "node": reverse("webui:node", args=[cluster.pk, NODE]),
        "rtl node": reverse("webui:node", args=[cluster.pk, RTL]),
        "pod": reverse("webui:pod", args=[cluster.pk, "default", POD]),
        "rtl pod": reverse("webui:pod", args=[cluster.pk, "default", RTL]),
        "cycle": reverse("webui:cycle", args=[cluster.pk, scheduled.number]),
        "refused cycle": reverse("webui:cycle", args=[cluster.pk, refused.number]),
        "profiles": reverse("webui:profiles", args=[cluster.pk]),
    }
    shown = ""
    for where, url in pages.items():
        response = client.get(url)
        assert response.status_code == 200, where
        html = response.content.decode()
        assert_escaped(html, where)
        shown += html
    # Escaped, not dropped.
    assert "&lt;img src=x onerror=alert(1)&gt;" in shown
    assert "&quot;&gt;&lt;svg onload=alert(1)&gt;" in shown
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in shown


def test_the_dashboards_htmx_fragments_show_them_as_text(client: Client, cluster: Cluster) -> None:
    url = reverse("webui:dashboard", args=[cluster.pk])
    for target in ("nodes", "pending", "queue", "feed", "controls"):
        response = client.get(url, headers={"HX-Request": "true", "HX-Target": target})
        assert response.status_code == 200, target
        html = response.content.decode()
        assert f'id="{target}"' in html
        assert_escaped(html, target)


class _Isolation(HTMLParser):
    """The text nodes with a U+202E that are not inside a <bdi> (the <title> aside: no markup
    there)."""

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.bdi = self.title = 0
        self.loose: list[str] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.bdi += tag == "bdi"
        self.title += tag == "title"

    def handle_endtag(self, tag: str) -> None:
        self.bdi -= tag == "bdi"
        self.title -= tag == "title"

    def handle_data(self, data: str) -> None:
        if "\u202e" in data and not self.bdi and not self.title:
            self.loose.append(data.strip())


def test_names_written_right_to_left_are_isolated(client: Client, cluster: Cluster) -> None:
    """A U+202E in a name must not turn the text after it around: names sit in <bdi>."""
    refused = Cycle.objects.filter(cluster=cluster, pod_name=RTL).first()
    assert refused is not None
    for url in (
        reverse("webui:index"),
        reverse("webui:dashboard", args=[cluster.pk]),
        reverse("webui:node", args=[cluster.pk, RTL]),
        reverse("webui:pod", args=[cluster.pk, "default", RTL]),
        reverse("webui:cycle", args=[cluster.pk, refused.number]),
        reverse("webui:profiles", args=[cluster.pk]),
    ):
        html = client.get(url).content.decode()
        assert "<bdi>" in html and "\u202e" in html, url
        parser = _Isolation()
        parser.feed(html)
        assert parser.loose == [], url


def test_the_websocket_fragments_show_them_as_text(cluster: Cluster) -> None:
    async def watch() -> list[str]:
        communicator = WebsocketCommunicator(
            URLRouter(websocket_urlpatterns), f"/ws/clusters/{cluster.pk}/"
        )
        communicator.scope["user"] = AnonymousUser()
        connected, _ = await communicator.connect()
        assert connected
        frames = [await communicator.receive_from(timeout=5)]  # the feed and the queue
        while 'id="nodes"' not in frames[-1]:
            frames.append(await communicator.receive_from(timeout=5))
        layer = get_channel_layer()
        await layer.group_send(
            group_name(cluster.pk),
            {
                "type": "cluster.cycles",
                "cycles": [
                    {
                        "cycle": 999,
                        "pod": f"default/{POD}",
                        "result": SCRIPT,
                        "node": NODE,
                        "message": SCRIPT,
                        "time": 1.0,
                    }
                ],
            },
        )
        frames.append(await communicator.receive_from(timeout=5))
        await layer.group_send(
            group_name(cluster.pk),
            {
                "type": "cluster.queue",
                "queue": {"activeQ": [{"pod": f"default/{POD}", "attempts": SCRIPT}]},
                "pending": [f"default/{POD}"],
            },
        )
        frames.append(await communicator.receive_from(timeout=5))
        await layer.group_send(
            group_name(cluster.pk),
            {"type": "cluster.status", "runner": SCRIPT, "state": SCRIPT, "error": NODE},
        )
        frames.append(await communicator.receive_from(timeout=5))
        await communicator.disconnect()
        return frames

    frames = async_to_sync(watch)()
    joined = "".join(frames)
    assert 'id="feed"' in joined and 'id="queue"' in joined and 'id="controls"' in joined
    for frame in frames:
        assert_escaped(frame, frame[:80])
    assert "&lt;img src=x onerror=alert(1)&gt;" in joined


def test_the_exports_are_json_that_parses_back_to_the_names(
    client: Client, cluster: Cluster
) -> None:
    text = "".join(exports.trace_export_jsonl(cluster=cluster))
    lines = [json.loads(line) for line in text.splitlines()]
    assert NODE in json.dumps(lines) and POD in json.dumps(lines)
    kss = json.loads(json.dumps(exports.trace_export_kss(cluster=cluster)))
    assert NODE in json.dumps(kss)


def test_the_step_debugger_panel_shows_them_as_text(client: Client, cluster: Cluster) -> None:
    from webui.debugger_panel import debugger_fragment

    services.cluster_set_run_state(cluster=cluster, run_state=Cluster.RunState.PAUSED)
    services.debug_step_into(cluster=cluster)
    services.debug_session_claim(cluster_id=cluster.pk)
    services.debug_session_stop(
        cluster_id=cluster.pk,
        stop={
            "cycle": 9,
            "pod": f"default/{POD}",
            "point": "Filter",
            "plugins": [SCRIPT, "NodeResourcesFit"],
            "reached": ["PreFilter", "Filter"],
            "state_entries": [
                {"key": "k", "point": "PreFilter", "plugin": SCRIPT, "text": f"{NODE} {RTL}"}
            ],
            "previous": [
                {
                    "point": "PreFilter",
                    "plugins": [
                        {
                            "plugin": POD,
                            "code": "Success",
                            "reasons": [SCRIPT],
                            "calls": 1,
                            "rejected": 0,
                        }
                    ],
                }
            ],
        },
    )
    page = client.get(reverse("webui:dashboard", args=[cluster.pk])).content.decode()
    fragment = client.get(
        reverse("webui:debug", args=[cluster.pk]), headers={"HX-Request": "true"}
    ).content.decode()
    live = debugger_fragment(cluster_id=cluster.pk)
    for where, html in (("page", page), ("htmx", fragment), ("websocket", live)):
        assert 'id="debugger"' in html, where
        assert_escaped(html, f"debugger panel ({where})")
        assert "&lt;img src=x onerror=alert(1)&gt;" in html, where
        assert "&lt;script&gt;alert(1)&lt;/script&gt;" in html, where
