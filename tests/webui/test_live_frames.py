"""Websocket frames carry what changed: the first frame the whole grid, then only the node
cards, grid head or pending list whose HTML changed; the feed gets its new cycles prepended and
the ones that fell off the end deleted."""

from __future__ import annotations

from typing import Any

import pytest

from schedviz.cluster import services
from schedviz.cluster.models import Cluster
from webui import presenters
from webui.live_frames import LiveFrames

pytestmark = pytest.mark.django_db

NODES = "\n---\n".join(
    f"apiVersion: v1\nkind: Node\nmetadata: {{name: n-{i:02d}}}\n"
    "status: {allocatable: {cpu: '2', memory: 4Gi, pods: '10'}}"
    for i in range(60)
)


@pytest.fixture(autouse=True)
def _no_runners(settings: Any) -> None:
    settings.SCHEDVIZ_START_RUNNERS = False


def _live(cluster: Cluster) -> dict[str, Any]:
    return presenters.live_context(cluster=cluster, oob=True)


def _bind(cluster: Cluster, name: str, node: str) -> None:
    services.manifests_apply(
        cluster=cluster,
        text=f"apiVersion: v1\nkind: Pod\nmetadata: {{name: {name}, namespace: default}}\n"
        f"spec: {{nodeName: {node}, containers: [{{name: c, image: i}}]}}",
    )


def test_after_the_first_frame_only_the_changed_card_goes_out() -> None:
    cluster = services.cluster_create(name="c")
    services.manifests_apply(cluster=cluster, text=NODES)
    frames = LiveFrames()
    first = frames.live(_live(cluster))
    assert '<section id="nodes"' in first and first.count('class="node-card') == 48
    assert 'id="pending"' in first
    assert frames.live(_live(cluster)) == ""
    _bind(cluster, "web", "n-07")
    frame = frames.live(_live(cluster))
    assert '<section id="nodes"' not in frame and 'id="pending"' not in frame
    assert frame.count('class="node-card') == 1
    assert 'id="node-n-07" data-node="n-07" hx-swap-oob="true"' in frame
    assert 'data-pod="default/web"' in frame
    assert len(frame) * 20 < len(first)


def test_a_new_node_on_the_page_sends_the_whole_grid_again() -> None:
    cluster = services.cluster_create(name="c")
    services.manifests_apply(cluster=cluster, text=NODES)
    frames = LiveFrames()
    frames.live(_live(cluster))
    services.manifests_apply(
        cluster=cluster,
        text="apiVersion: v1\nkind: Node\nmetadata: {name: a-first}\n"
        "status: {allocatable: {cpu: '2', memory: 4Gi, pods: '10'}}",
    )
    frame = frames.live(_live(cluster))
    assert '<section id="nodes"' in frame and 'id="node-a-first"' in frame


def _entry(number: int, result: str = "Scheduled") -> dict[str, Any]:
    return presenters.feed_entry(
        1,
        {
            "cycle": number,
            "pod": f"default/p{number}",
            "result": result,
            "node": "n",
            "message": "",
        },
    )


def test_the_feed_prepends_new_cycles_and_deletes_the_ones_that_fell_off() -> None:
    frames = LiveFrames()
    assert '<section id="feed"' in frames.feed([_entry(2), _entry(1)])
    frame = frames.feed([_entry(4), _entry(3), _entry(2)])
    assert frame.startswith('<ol id="feed-list" hx-swap-oob="afterbegin">')
    assert frame.index('id="feed-cycle-4"') < frame.index('id="feed-cycle-3"')
    assert 'id="feed-cycle-2"' not in frame
    assert frame.endswith('<li id="feed-cycle-1" hx-swap-oob="delete"></li>')
    assert frames.feed([_entry(4), _entry(3), _entry(2)]) == ""


DEPLOYMENT = """
apiVersion: apps/v1
kind: Deployment
metadata: {name: web, namespace: default}
spec:
  replicas: 2
  selector: {matchLabels: {app: web}}
  template:
    metadata: {labels: {app: web}}
    spec: {containers: [{name: c, image: nginx}]}
"""


def _workloads(cluster: Cluster) -> dict[str, Any]:
    from schedviz.cluster import selectors

    return {"cluster": cluster, "workloads": selectors.workload_list(cluster=cluster)}


def test_the_workloads_panel_goes_whole_when_workloads_change_else_only_changed_counts() -> None:
    from schedviz.cluster.models import Pod

    cluster = services.cluster_create(name="w")
    services.manifests_apply(cluster=cluster, text=NODES)
    frames = LiveFrames()
    empty = frames.workloads(_workloads(cluster))
    assert 'id="workloads"' in empty and 'hx-swap-oob="true"' in empty
    assert frames.workloads(_workloads(cluster)) == ""
    services.manifests_apply(cluster=cluster, text=DEPLOYMENT)
    whole = frames.workloads(_workloads(cluster))
    assert 'id="workloads"' in whole and 'Workloads <span class="count">2</span>' in whole
    pod = Pod.objects.filter(cluster=cluster).order_by("name").first()
    assert pod is not None
    services.pod_bind(cluster=cluster, namespace=pod.namespace, name=pod.name, node_name="n-00")
    counts = frames.workloads(_workloads(cluster))
    # The Deployment's and its ReplicaSet's counts, not the panel (nor its replicas fields).
    assert 'id="workloads"' not in counts and 'name="replicas"' not in counts
    assert counts.count('class="workload-pods"') == 2
    assert counts.count("2 desired · 2 created · 1 bound") == 2
    assert frames.workloads(_workloads(cluster)) == ""
