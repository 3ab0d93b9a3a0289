"""The dashboard: finding nodes in a large cluster (by name, label, taint and verdict; the
grid by domain)."""

from __future__ import annotations

import re
from typing import Any

import pytest
from django.db import models
from django.test import Client

from schedviz.cluster import services
from schedviz.cluster.models import Cluster, Node, Pod
from worker.runner import run_cluster

pytestmark = pytest.mark.django_db


@pytest.fixture(autouse=True)
def _no_runners(settings: Any) -> None:
    settings.SCHEDVIZ_START_RUNNERS = False


def _url(cluster: Cluster, rest: str = "") -> str:
    return f"/clusters/{cluster.pk}/{rest}"


# ---------------------------------------------------------------------------------------------
# Finding nodes in a large cluster


def _zoned_cluster() -> Cluster:
    cluster = services.cluster_create(name="zones")
    text = "\n---\n".join(
        f"apiVersion: v1\nkind: Node\nmetadata: {{name: n-{i:03d}, labels: "
        f"{{topology.kubernetes.io/zone: zone-{'ab'[i % 2]}, "
        f"pool: {'gpu' if i < 3 else 'cpu'}}}}}\n"
        + ("spec: {taints: [{key: dedicated, value: gpu, effect: NoSchedule}]}\n" if i < 3 else "")
        + "status: {allocatable: {cpu: '2', memory: 4Gi, pods: '10'}}"
        for i in range(100)
    )
    services.manifests_apply(cluster=cluster, text=text)
    services.manifests_apply(
        cluster=cluster,
        text="""
apiVersion: v1
kind: Pod
metadata: {name: web, namespace: default}
spec:
  nodeName: n-001
  containers: [{name: c, image: i, resources: {requests: {cpu: 500m, memory: 1Gi}}}]
""",
    )
    return cluster


def _cards(body: str) -> list[str]:
    return re.findall(r'class="node-card[^"]*" id="node-([^"]+)"', body)


def test_nodes_are_found_by_name_label_and_taint_on_the_server(client: Client) -> None:
    cluster = _zoned_cluster()
    assert _cards(client.get(_url(cluster) + "?q=n-05").content.decode()) == [
        f"n-05{i}" for i in range(10)
    ]
    by_label = client.get(_url(cluster) + "?label=pool%3Dgpu").content.decode()
    assert _cards(by_label) == ["n-000", "n-001", "n-002"]
    assert "matching the filters" in by_label
    by_taint = client.get(_url(cluster) + "?taint=dedicated%3Dgpu").content.decode()
    assert _cards(by_taint) == ["n-000", "n-001", "n-002"]
    # The pager keeps the filters, with real hrefs.
    zone_a = client.get(_url(cluster) + "?label=topology.kubernetes.io/zone%3Dzone-a")
    assert "page 1 of 2" in zone_a.content.decode()
    assert "label=topology.kubernetes.io%2Fzone%3Dzone-a&amp;colour=namespace&amp;page=2" in (
        zone_a.content.decode()
    )
    none = client.get(_url(cluster) + "?q=nothing").content.decode()
    assert "No node matches the filters" in none


def test_nodes_are_found_by_their_verdict_in_the_latest_cycle(client: Client) -> None:
    cluster = _zoned_cluster()
    services.manifests_apply(
        cluster=cluster,
        text="""
apiVersion: v1
kind: Pod
metadata: {name: picky, namespace: default}
spec:
  nodeSelector: {pool: gpu}
  tolerations: [{operator: Exists}]
  containers: [{name: c, image: i}]
""",
    )
    run_cluster(cluster.pk)
    chosen = Pod.objects.get(cluster=cluster, name="picky").node_name
    body = client.get(_url(cluster) + "?verdict=chosen").content.decode()
    assert _cards(body) == [chosen]
    rejected = _cards(client.get(_url(cluster) + "?verdict=rejected").content.decode())
    assert len(rejected) == 48 and "n-000" not in rejected


def test_a_jump_to_a_node_opens_its_page_of_the_grid_with_the_card_marked(client: Client) -> None:
    cluster = _zoned_cluster()
    body = client.get(_url(cluster) + "?node=n-075").content.decode()
    assert "page 2 of 3" in body
    assert 'class="node-card focused" id="node-n-075"' in body
    missing = client.get(_url(cluster) + "?node=n-999", follow=True).content.decode()
    assert "No node named n-999" in missing


def test_cards_show_their_zone_without_opening_the_labels(client: Client) -> None:
    cluster = _zoned_cluster()
    body = client.get(_url(cluster)).content.decode()
    assert '<p class="zone" title="region · zone">zone-a</p>' in body


def test_the_grid_grouped_by_a_label_counts_pods_and_free_resources_per_domain(
    client: Client,
) -> None:
    cluster = _zoned_cluster()
    dashboard = client.get(_url(cluster) + "?group=topology.kubernetes.io/zone").content.decode()
    # The dashboard asks for the table once it shows (counting reads every pod); a real link too.
    assert f'href="/clusters/{cluster.pk}/domains/?group=topology.kubernetes.io/zone' in dashboard
    response = client.get(_url(cluster, "domains/?group=topology.kubernetes.io/zone"))
    domains = {d.value: d for d in response.context["domains"]}
    assert set(domains) == {"zone-a", "zone-b"}
    assert (domains["zone-b"].nodes, domains["zone-b"].pods) == (50, 1)
    assert domains["zone-b"].free_cpu == "99.5" and domains["zone-a"].free_cpu == "100"
    assert domains["zone-b"].free_pods == 499
    assert domains["zone-b"].free_memory == "199Gi"
    body = response.content.decode()
    assert "label=topology.kubernetes.io/zone%3Dzone-b" in body


def test_a_domains_large_free_memory_reads_in_a_larger_unit_not_an_exponent(
    client: Client,
) -> None:
    cluster = services.cluster_create(name="big")
    text = "\n---\n".join(
        f"apiVersion: v1\nkind: Node\nmetadata: {{name: n-{i}, labels: {{zone: z}}}}\n"
        "status: {allocatable: {cpu: '2', memory: 53000Gi, pods: '10'}}"
        for i in range(2)
    )
    services.manifests_apply(cluster=cluster, text=text)
    body = client.get(_url(cluster, "domains/?group=zone")).content.decode()
    assert "<td>104Ti</td>" in body and "e+" not in body


def test_a_live_clusters_queue_panel_counts_from_the_clock_now_not_the_last_save(
    client: Client,
) -> None:
    cluster = services.cluster_create(name="clock", speed=60.0)
    services.manifests_apply(
        cluster=cluster,
        text="apiVersion: v1\nkind: Pod\nmetadata: {name: p}\n"
        "spec: {containers: [{name: c, image: busybox}]}",
    )
    run_cluster(cluster.pk)  # no node: retried on every backoff until the runner gives up its slice
    # Ten wall seconds later, with no runner: ten scheduler minutes.
    Cluster.objects.filter(pk=cluster.pk).update(
        clock_anchor_wall=models.F("clock_anchor_wall") - 10
    )
    html = client.get(f"/clusters/{cluster.pk}/").content.decode()
    shown = re.search(r"after cycle \d+ · scheduler time ([\d.]+) s", html)
    assert shown is not None and float(shown.group(1)) >= 600.0


ZONE_FIGURES = """
apiVersion: v1
kind: Node
metadata: {name: a1, labels: {topology.kubernetes.io/zone: a}}
status: {allocatable: {cpu: 3500m, memory: 7Gi, pods: "20"}}
---
apiVersion: v1
kind: Node
metadata: {name: a2, labels: {topology.kubernetes.io/zone: a}}
status: {allocatable: {cpu: "2", memory: 1000Mi, pods: "10"}}
---
apiVersion: v1
kind: Node
metadata: {name: bare}
status: {allocatable: {cpu: "1", memory: 1Gi, pods: "5"}}
---
apiVersion: v1
kind: Pod
metadata: {name: init, namespace: default}
spec:
  nodeName: a1
  initContainers: [{name: i, image: x, resources: {requests: {cpu: "1", memory: 3Gi}}}]
  containers:
  - {name: c1, image: x, resources: {requests: {cpu: 250m, memory: 1Gi}}}
  - {name: c2, image: x, resources: {requests: {cpu: 250m}}}
---
apiVersion: node.k8s.io/v1
kind: RuntimeClass
metadata: {name: sandboxed}
handler: runsc
overhead: {podFixed: {cpu: 100m, memory: 64Mi}}
---
apiVersion: v1
kind: Pod
metadata: {name: overhead, namespace: default}
spec:
  nodeName: a2
  runtimeClassName: sandboxed
  containers: [{name: c, image: x, resources: {requests: {cpu: 300m, memory: 100Mi}}}]
---
apiVersion: v1
kind: Pod
metadata: {name: done, namespace: default}
spec:
  nodeName: a2
  containers: [{name: c, image: x, resources: {requests: {cpu: "1"}}}]
status: {phase: Succeeded}
---
apiVersion: v1
kind: Pod
metadata: {name: elsewhere, namespace: default}
spec:
  nodeName: bare
  containers: [{name: c, image: x, resources: {requests: {cpu: 500m, memory: 256Mi}}}]
"""


def _domains_from_manifests(cluster: Cluster, key: str) -> dict[str, tuple[int, int, Any, Any]]:
    """The zones table's figures as it computed them before it kept them: every manifest
    decoded."""
    from schedviz.kube.decode import decode_object
    from schedviz.kube.resources import pod_requests, to_int

    zone_of: dict[str, str] = {}
    figures: dict[str, list[Any]] = {}
    for row in Node.objects.filter(cluster=cluster):
        node = decode_object(row.manifest)
        value = node.labels.get(key, "")
        zone_of[node.name] = value
        entry = figures.setdefault(value, [0, 0, {}, {}])
        entry[0] += 1
        for name in ("cpu", "memory", "pods"):
            quantity = node.allocatable.get(name)
            amount = to_int(name, quantity.amount) if quantity else 0
            entry[2][name] = entry[2].get(name, 0) + amount
    for row in Pod.objects.filter(cluster=cluster).exclude(node_name=""):
        pod = decode_object(row.manifest)
        if pod.phase in ("Succeeded", "Failed"):
            continue
        entry = figures[zone_of[pod.node_name]]
        entry[1] += 1
        for name, amount in pod_requests(pod).items():
            if name in ("cpu", "memory"):
                entry[3][name] = entry[3].get(name, 0) + to_int(name, amount)
    for entry in figures.values():
        entry[3]["pods"] = entry[1]
    return {value: tuple(entry) for value, entry in figures.items()}  # type: ignore[misc]


def test_the_zones_table_gives_the_figures_decoding_every_manifest_gave(client: Client) -> None:
    from webui import presenters

    cluster = services.cluster_create(name="figures")
    services.manifests_apply(cluster=cluster, text=ZONE_FIGURES)
    key = "topology.kubernetes.io/zone"

    def shown() -> dict[str, tuple[int, int, Any, Any]]:
        return {
            d.value: (d.nodes, d.pods, d.allocatable, d.requested)
            for d in presenters.topology_domains(cluster=cluster, key=key)
        }

    expected = _domains_from_manifests(cluster, key)
    # The init container's 1 cpu and 3Gi outweigh the containers' sum; overhead adds.
    assert expected["a"][3] == {"cpu": 1400, "memory": 3 * 2**30 + 164 * 2**20, "pods": 2}
    assert shown() == expected
    # A node updated with new allocatable, as the kept figures follow the manifest.
    services.manifests_apply(
        cluster=cluster,
        text="apiVersion: v1\nkind: Node\nmetadata: {name: a2, labels: "
        "{topology.kubernetes.io/zone: a}}\n"
        'status: {allocatable: {cpu: "8", memory: 16Gi, pods: "110"}}',
    )
    assert shown() == _domains_from_manifests(cluster, key)
    assert shown()["a"][2]["cpu"] == 11500
