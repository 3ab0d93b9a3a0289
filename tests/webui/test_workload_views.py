"""The dashboard's Workloads panel: listed with escaped names, scaled by a plain form or htmx,
deleted only after its confirmation page."""

from __future__ import annotations

from typing import Any

import pytest
from django.contrib.auth.models import User
from django.test import Client
from django.urls import reverse

from schedviz.cluster import services
from schedviz.cluster.models import Cluster, Deployment, Pod, ReplicaSet

pytestmark = pytest.mark.django_db

DEPLOYMENT = """
apiVersion: apps/v1
kind: Deployment
metadata: {name: web, namespace: shop}
spec:
  replicas: 2
  selector: {matchLabels: {app: web}}
  template:
    metadata: {labels: {app: web}}
    spec: {containers: [{name: c, image: nginx}]}
"""


@pytest.fixture(autouse=True)
def _no_background_runners(settings: Any) -> None:
    settings.SCHEDVIZ_START_RUNNERS = False
    settings.SCHEDVIZ_WRITE_RATE_PER_MINUTE = 0


@pytest.fixture
def owner(client: Client) -> User:
    user = User.objects.create_user("alice", password="pw")
    client.force_login(user)
    return user


@pytest.fixture
def cluster(owner: User) -> Cluster:
    cluster = services.cluster_create(name="mine", owner=owner)
    services.manifests_apply(cluster=cluster, text=DEPLOYMENT)
    return cluster


def url(name: str, cluster: Cluster) -> str:
    return reverse(f"webui:{name}", args=[cluster.pk, "Deployment", "shop", "web"])


def test_the_panel_lists_scales_and_deletes_after_confirmation(
    client: Client, cluster: Cluster
) -> None:
    page = client.get(reverse("webui:dashboard", args=[cluster.pk])).content.decode()
    assert 'id="workloads"' in page
    assert "2 desired · 2 created · 0 bound" in page
    assert url("workload_scale", cluster) in page

    htmx = client.post(url("workload_scale", cluster), {"replicas": "3"}, HTTP_HX_REQUEST="true")
    assert htmx.status_code == 200
    assert "3 desired · 3 created · 0 bound" in htmx.content.decode()
    plain = client.post(url("workload_scale", cluster), {"replicas": "1"})
    assert plain.status_code == 302
    assert Pod.objects.filter(cluster=cluster).count() == 1
    refused = client.post(url("workload_scale", cluster), {"replicas": "-4"})
    assert refused.status_code == 400
    assert "replicas: Ensure this value is greater than or equal to 0." in refused.content.decode()
    assert Pod.objects.filter(cluster=cluster).count() == 1

    confirm = client.get(url("workload_delete", cluster))
    assert confirm.status_code == 200
    assert b'name="confirm" value="yes"' in confirm.content
    unconfirmed = client.post(url("workload_delete", cluster))
    assert unconfirmed.status_code == 200
    assert Deployment.objects.filter(cluster=cluster).exists()
    done = client.post(url("workload_delete", cluster), {"confirm": "yes"})
    assert done.status_code == 302
    assert not Deployment.objects.filter(cluster=cluster).exists()
    assert not Pod.objects.filter(cluster=cluster).exists()


def test_names_are_escaped(
    client: Client, owner: User, markup_in_names: None, monkeypatch: pytest.MonkeyPatch
) -> None:
    from schedviz.kube.decode import pods, workloads

    monkeypatch.setattr(workloads, "name_is_dns_subdomain", pods.name_is_dns_subdomain)
    cluster = services.cluster_create(name="escape", owner=owner)
    services.manifests_apply(cluster=cluster, text=DEPLOYMENT.replace("name: web,", "name: <b>x,"))
    page = client.get(reverse("webui:dashboard", args=[cluster.pk])).content.decode()
    assert "shop/&lt;b&gt;x" in page
    assert "<b>x" not in page


def test_someone_else_cannot_scale(client: Client, cluster: Cluster) -> None:
    User.objects.create_user("bob", password="pw")
    client.login(username="bob", password="pw")
    answer = client.post(url("workload_scale", cluster), {"replicas": "5"})
    assert answer.status_code == 404
    assert Pod.objects.filter(cluster=cluster).count() == 2


def test_scaling_past_the_pod_limit_answers_the_error_in_the_panel(
    client: Client, cluster: Cluster, settings: Any
) -> None:
    settings.SCHEDVIZ_MAX_PODS_PER_CLUSTER = 10
    htmx = client.post(url("workload_scale", cluster), {"replicas": "50"}, HTTP_HX_REQUEST="true")
    assert htmx.status_code == 400
    panel = htmx.content.decode()
    assert panel.lstrip().startswith('<section id="workloads"')
    assert 'id="scale-error"' in panel
    assert "more pods than a cluster may hold (10, SCHEDVIZ_MAX_PODS_PER_CLUSTER)" in panel
    assert "2 desired · 2 created" in panel
    # The number asked for stays in the field, to be corrected.
    assert 'value="50" class="small" aria-invalid="true"' in panel
    # Without JS: the dashboard itself, the refusal under the workload, nothing kept for later.
    plain = client.post(url("workload_scale", cluster), {"replicas": "50"})
    assert plain.status_code == 400
    page = plain.content.decode()
    assert 'id="scale-error"' in page and 'id="nodes"' in page
    assert "more pods than a cluster may hold" in page
    assert Pod.objects.filter(cluster=cluster).count() == 2
    after = client.get(reverse("webui:dashboard", args=[cluster.pk])).content.decode()
    assert "more pods than a cluster may hold" not in after


def test_a_deployments_replica_set_is_not_scaled_on_its_own(
    client: Client, cluster: Cluster
) -> None:
    page = client.get(reverse("webui:dashboard", args=[cluster.pk])).content.decode()
    (replica_set,) = ReplicaSet.objects.filter(cluster=cluster)
    scale_rs = reverse(
        "webui:workload_scale", args=[cluster.pk, "ReplicaSet", "shop", replica_set.name]
    )
    assert scale_rs not in page
    assert "managed by <bdi>Deployment/web</bdi>" in page
    refused = client.post(scale_rs, {"replicas": "4"}, HTTP_HX_REQUEST="true")
    assert refused.status_code == 409
    assert (
        f"ReplicaSet shop/{replica_set.name} is managed by Deployment shop/web: scale the "
        "Deployment" in refused.content.decode()
    )
    assert Pod.objects.filter(cluster=cluster).count() == 2
