"""Export and import from the pages: the YAML, JSON-lines and kube-scheduler-simulator exports
answer whoever may read the cluster (signed out for an ownerless one, a share link's visitor),
and a trace file imported from the clusters page becomes a new paused cluster."""

from __future__ import annotations

import json
import re
from typing import Any

import pytest
import yaml
from django.contrib.auth.models import User
from django.core.files.uploadedfile import SimpleUploadedFile
from django.test import Client
from django.urls import reverse

from schedviz.cluster import services
from schedviz.cluster.models import Cluster, Cycle
from worker.runner import run_cluster

pytestmark = pytest.mark.django_db

MANIFESTS = """
apiVersion: v1
kind: Node
metadata: {name: n1, labels: {topology.kubernetes.io/zone: zone-a}}
status: {allocatable: {cpu: "2", memory: 4Gi, pods: "110"}}
---
apiVersion: v1
kind: Pod
metadata: {name: p1, namespace: default}
spec: {containers: [{name: c, image: busybox, resources: {requests: {cpu: 500m}}}]}
"""


@pytest.fixture(autouse=True)
def _no_background_runners(settings: Any) -> None:
    settings.SCHEDVIZ_START_RUNNERS = False
    settings.SCHEDVIZ_RUNNER_IDLE_SECONDS = 0
    settings.SCHEDVIZ_WRITE_RATE_PER_MINUTE = 0


def scheduled(owner: User | None) -> Cluster:
    cluster = services.cluster_create(
        name="exported", owner=owner, clock_mode=Cluster.ClockMode.VIRTUAL, seed=7
    )
    services.manifests_apply(cluster=cluster, text=MANIFESTS)
    run_cluster(cluster.pk)
    assert Cycle.objects.filter(cluster=cluster).exists()
    return cluster


def export_url(cluster: Cluster, export_format: str) -> str:
    return reverse("webui:export", args=[cluster.pk, export_format])


def test_every_export_answers_a_visitor_signed_out_on_an_ownerless_cluster(client: Client) -> None:
    cluster = scheduled(None)
    as_yaml = client.get(export_url(cluster, "yaml"))
    assert as_yaml.status_code == 200
    assert 'filename="cluster-' in as_yaml["Content-Disposition"]
    documents = [doc for doc in yaml.safe_load_all(b"".join(as_yaml)) if doc]
    kinds = [item["kind"] for doc in documents for item in doc.get("items") or [doc]]
    assert "Node" in kinds and "Pod" in kinds and "KubeSchedulerConfiguration" in kinds

    jsonl = client.get(export_url(cluster, "jsonl"))
    lines = b"".join(jsonl).decode().splitlines()
    assert json.loads(lines[0])["kind"] == "schedviz-trace"
    assert json.loads(lines[1])["pod"] == "default/p1"

    kss = json.loads(b"".join(client.get(export_url(cluster, "kss"))))
    assert kss["kind"] == "List"
    # The nodes first (so an import reads their allocatable), then the annotated pods.
    assert [i["kind"] for i in kss["items"]][:1] == ["Node"]
    pod = next(item for item in kss["items"] if item["kind"] == "Pod")
    annotations = pod["metadata"]["annotations"]
    assert annotations["kube-scheduler-simulator.sigs.k8s.io/selected-node"] == "n1"


def test_exports_follow_the_pages_read_rules(client: Client) -> None:
    owner = User.objects.create_user("owner")
    cluster = scheduled(owner)
    assert client.get(export_url(cluster, "yaml")).status_code == 404
    owner_client = Client()
    owner_client.force_login(owner)
    response = owner_client.post(reverse("webui:share_create", args=[cluster.pk]))
    link = re.search(r'id="share-url" type="text" readonly value="([^"]+)"', response.text)
    assert link is not None
    client.get(link.group(1))
    assert client.get(export_url(cluster, "jsonl")).status_code == 200
    assert client.get(export_url(cluster, "kss")).status_code == 200
    assert client.get(export_url(cluster, "csv")).status_code == 404


def test_the_dashboard_and_the_pod_page_link_every_export(client: Client) -> None:
    cluster = scheduled(None)
    for page in (
        reverse("webui:dashboard", args=[cluster.pk]),
        reverse("webui:pod", args=[cluster.pk, "default", "p1"]),
    ):
        body = client.get(page).content.decode()
        for export_format in ("yaml", "jsonl", "kss"):
            assert f'href="{export_url(cluster, export_format)}"' in body, (page, export_format)


def test_a_trace_file_imported_from_the_clusters_page_is_a_paused_cluster(client: Client) -> None:
    source = scheduled(None)
    text = b"".join(client.get(export_url(source, "jsonl")))
    assert reverse("webui:trace_import") in client.get("/").content.decode()
    upload = SimpleUploadedFile("trace.jsonl", text, content_type="application/x-ndjson")
    response = client.post(reverse("webui:trace_import"), {"trace": upload, "name": "review"})
    assert response.status_code == 302
    imported = Cluster.objects.get(name="review")
    assert imported.run_state == Cluster.RunState.PAUSED
    assert (
        Cycle.objects.filter(cluster=imported).count()
        == Cycle.objects.filter(cluster=source).count()
    )
    # The visitor who imported it (signed out) may delete it again.
    delete = reverse("webui:cluster_delete", args=[imported.pk])
    assert client.post(delete, {"confirm": "yes"}).status_code == 302


def test_a_file_that_is_no_trace_is_refused_with_the_reason(client: Client) -> None:
    upload = SimpleUploadedFile("x.jsonl", b'{"kind": "nonsense"}\n')
    response = client.post(reverse("webui:trace_import"), {"trace": upload})
    assert response.status_code == 400
    assert response.context["form"].errors["trace"]
    assert not Cluster.objects.exists()
