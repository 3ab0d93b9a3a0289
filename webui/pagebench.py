"""How long the pages take at scale, and how big the live frames are: ``manage.py pagebench``.

A cluster of ``nodes`` nodes in three zones, ``bound_per_node`` pods already on each node and
``pending`` pods the scheduler then places (virtual clock, full traces), in the configured
database: the runner the write asks for (schedviz/cluster/ports.py; a thread of this process
when embedded, a worker when distributed) schedules them, and the bench waits until it has.

Then, through Django's test client (the whole request: middleware, views, templates):
the dashboard, the dashboard filtered by a label, grouped by zone, the table of zones, and the
newest cycle's trace page, each fetched once (the first, reported apart: nothing is kept yet)
then ``repeats`` times (the median and the slowest reported).

The websocket frames are the consumer's (webui/live_frames.py) for a dashboard at its first
page: the first frame (the whole grid, as every refresh sent before frames carried only what
changed) and the frame after one more pod is bound.
"""

from __future__ import annotations

import json
import statistics
import time
from dataclasses import dataclass, field
from typing import Any

from django.conf import settings
from django.test import Client
from django.test.utils import override_settings
from django.urls import reverse

from schedviz.cluster import services
from schedviz.cluster.models import Cluster, Cycle
from webui import presenters
from webui.live_frames import LiveFrames

ZONES = ("zone-a", "zone-b", "zone-c")


@dataclass
class PageTiming:
    name: str
    url: str
    seconds: list[float] = field(default_factory=list)
    first: float = 0.0
    status: int = 0
    size: int = 0

    def to_json(self) -> dict[str, Any]:
        return {
            "page": self.name,
            "url": self.url,
            "status": self.status,
            "bytes": self.size,
            "medianSeconds": round(statistics.median(self.seconds), 4),
            "maxSeconds": round(max(self.seconds), 4),
            "firstSeconds": round(self.first, 4),
        }


def _manifests(nodes: int, bound_per_node: int, pending: int) -> str:
    items: list[dict[str, Any]] = []
    for i in range(nodes):
        name = f"node-{i:05d}"
        items.append(
            {
                "apiVersion": "v1",
                "kind": "Node",
                "metadata": {
                    "name": name,
                    "labels": {
                        "kubernetes.io/hostname": name,
                        "topology.kubernetes.io/region": "region-1",
                        "topology.kubernetes.io/zone": ZONES[i % len(ZONES)],
                    },
                },
                "status": {
                    "allocatable": {"cpu": "8", "memory": "32Gi", "pods": "110"},
                    "capacity": {"cpu": "8", "memory": "32Gi", "pods": "110"},
                },
            }
        )
    requests = {"cpu": "100m", "memory": "256Mi"}
    for i in range(nodes * bound_per_node):
        items.append(
            {
                "apiVersion": "v1",
                "kind": "Pod",
                "metadata": {"name": f"bound-{i}", "namespace": "default"},
                "spec": {
                    "nodeName": f"node-{i % nodes:05d}",
                    "containers": [
                        {"name": "c", "image": "i", "resources": {"requests": requests}}
                    ],
                },
            }
        )
    for i in range(pending):
        items.append(
            {
                "apiVersion": "v1",
                "kind": "Pod",
                "metadata": {"name": f"web-{i}", "namespace": "default"},
                "spec": {
                    "containers": [{"name": "c", "image": "i", "resources": {"requests": requests}}]
                },
            }
        )
    return json.dumps({"apiVersion": "v1", "kind": "List", "items": items})


class BenchError(Exception):
    """The cluster could not be built and scheduled in time."""


def build_cluster(
    *, nodes: int, bound_per_node: int, pending: int, timeout: float = 600.0
) -> tuple[Cluster, float]:
    """The cluster, scheduled until every pending pod has had a cycle; and the seconds that
    took (apply and run)."""
    if not settings.SCHEDVIZ_START_RUNNERS:
        raise BenchError("SCHEDVIZ_START_RUNNERS is off: nothing would schedule the cluster")
    started = time.perf_counter()
    cluster = services.cluster_create(
        name=f"pagebench-{nodes}-{int(time.time())}",
        clock_mode=Cluster.ClockMode.VIRTUAL,
        seed=1,
    )
    services.manifests_apply(cluster=cluster, text=_manifests(nodes, bound_per_node, pending))
    while Cycle.objects.filter(cluster=cluster).count() < pending:
        if time.perf_counter() - started > timeout:
            raise BenchError(f"the cluster was not scheduled within {timeout:g} s")
        time.sleep(0.5)
    return cluster, time.perf_counter() - started


def time_pages(*, cluster: Cluster, repeats: int) -> list[PageTiming]:
    client = Client(
        HTTP_HOST=next(iter(settings.ALLOWED_HOSTS), "localhost").lstrip(".*") or "localhost"
    )
    dashboard = reverse("webui:dashboard", args=[cluster.pk])
    domains = reverse("webui:domains", args=[cluster.pk])
    newest = Cycle.objects.filter(cluster=cluster).order_by("-number").first()
    pages = [
        PageTiming("dashboard", dashboard),
        PageTiming("dashboard, a later page", dashboard + "?page=50"),
        PageTiming(
            "dashboard, filtered by label",
            dashboard + "?label=topology.kubernetes.io/zone%3Dzone-b",
        ),
        PageTiming("dashboard, jump to a node", dashboard + "?node=node-03000"),
        PageTiming("dashboard, grouped by zone", dashboard + "?group=topology.kubernetes.io/zone"),
        PageTiming("domains table by zone", domains + "?group=topology.kubernetes.io/zone"),
    ]
    if newest is not None:
        pages.append(
            PageTiming("cycle trace", reverse("webui:cycle", args=[cluster.pk, newest.number]))
        )
    for page in pages:
        started = time.perf_counter()
        client.get(page.url)  # the first: template compile, decoded amounts not yet kept
        page.first = time.perf_counter() - started
        for _ in range(repeats):
            started = time.perf_counter()
            response = client.get(page.url)
            page.seconds.append(time.perf_counter() - started)
            page.status, page.size = response.status_code, len(response.content)
    return pages


def frame_sizes(*, cluster: Cluster) -> dict[str, int]:
    """Bytes of the live frames of a dashboard at page 1: the first (the whole grid, what every
    refresh sent before), one with nothing changed, and one after a pod is bound to a shown node."""
    frames = LiveFrames()
    context = presenters.live_context(cluster=cluster, oob=True)
    first = frames.live(context)
    unchanged = frames.live(presenters.live_context(cluster=cluster, oob=True))
    node = context["cards"][0].name if context["cards"] else ""
    with override_settings(SCHEDVIZ_START_RUNNERS=False):
        services.manifests_apply(
            cluster=cluster,
            text=json.dumps(
                {
                    "apiVersion": "v1",
                    "kind": "Pod",
                    "metadata": {"name": f"frame-probe-{time.time_ns()}", "namespace": "default"},
                    "spec": {"nodeName": node, "containers": [{"name": "c", "image": "i"}]},
                }
            ),
        )

    bound = frames.live(presenters.live_context(cluster=cluster, oob=True))
    return {
        "fullFrameBytes": len(first.encode()),
        "unchangedFrameBytes": len(unchanged.encode()),
        "onePodBoundFrameBytes": len(bound.encode()),
    }
