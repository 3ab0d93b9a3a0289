"""The JSON API's workloads: listed, scaled, deleted; bad input and other owners refused."""

from __future__ import annotations

from typing import Any

import pytest
from django.test import Client

from schedviz.cluster import services
from schedviz.cluster.models import Cluster, Pod

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
def _no_runners(settings: Any) -> None:
    settings.SCHEDVIZ_START_RUNNERS = False


@pytest.fixture
def token() -> services.NewApiToken:
    return services.api_token_create(username="alice")


@pytest.fixture
def auth(token: services.NewApiToken) -> dict[str, Any]:
    return {"HTTP_AUTHORIZATION": f"Token {token.key}"}


@pytest.fixture
def cluster(token: services.NewApiToken) -> Cluster:
    cluster = services.cluster_create(name="mine", owner=token.user)
    services.manifests_apply(cluster=cluster, text=DEPLOYMENT)
    return cluster


def test_workloads_are_listed_with_their_pods(
    client: Client, auth: dict[str, Any], cluster: Cluster
) -> None:
    listed = client.get(f"/api/clusters/{cluster.id}/workloads", **auth).json()
    deployment = {"kind": "Deployment", "namespace": "shop", "name": "web"}
    assert {**deployment, "replicas": 2, "created": 2, "bound": 0, "scalable": True} in listed
    assert [w["kind"] for w in listed] == ["Deployment", "ReplicaSet"]


def test_scale_and_delete(client: Client, auth: dict[str, Any], cluster: Cluster) -> None:
    url = f"/api/clusters/{cluster.id}/workloads/deployments/shop/web"
    scaled = client.post(f"{url}/scale", {"replicas": 5}, content_type="application/json", **auth)
    assert scaled.status_code == 200
    assert Pod.objects.filter(cluster=cluster).count() == 5
    deleted = client.delete(url, **auth)
    assert deleted.status_code == 200
    assert not Pod.objects.filter(cluster=cluster).exists()
    assert client.delete(url, **auth).status_code == 404


def test_bad_scale_requests_are_400_naming_the_field(
    client: Client, auth: dict[str, Any], cluster: Cluster
) -> None:
    url = f"/api/clusters/{cluster.id}/workloads/deployments/shop/web/scale"
    for body, field in (({"replicas": "3"}, "replicas"), ({"replicas": -1}, "spec.replicas")):
        answer = client.post(url, body, content_type="application/json", **auth)
        assert answer.status_code == 400
        assert answer.json()["errors"][0].startswith(f"{field}: Invalid value")
    wrong_kind = client.post(
        f"/api/clusters/{cluster.id}/workloads/pods/shop/web/scale",
        {"replicas": 1},
        content_type="application/json",
        **auth,
    )
    assert wrong_kind.status_code == 400
    assert Pod.objects.filter(cluster=cluster).count() == 2


def test_a_deployments_replica_set_is_listed_as_managed_and_its_scale_is_409(
    client: Client, auth: dict[str, Any], cluster: Cluster
) -> None:
    listed = client.get(f"/api/clusters/{cluster.id}/workloads", **auth).json()
    replica_set = next(w for w in listed if w["kind"] == "ReplicaSet")
    assert replica_set["scalable"] is False
    assert replica_set["managedBy"] == "Deployment/web"
    url = f"/api/clusters/{cluster.id}/workloads/replicasets/shop/{replica_set['name']}/scale"
    answer = client.post(url, {"replicas": 4}, content_type="application/json", **auth)
    assert answer.status_code == 409
    assert answer.json()["errors"] == [
        f"ReplicaSet shop/{replica_set['name']} is managed by Deployment shop/web: "
        "scale the Deployment"
    ]
    assert Pod.objects.filter(cluster=cluster).count() == 2


def test_someone_elses_workloads_are_404(client: Client, cluster: Cluster) -> None:
    other = services.api_token_create(username="bob")
    auth = {"HTTP_AUTHORIZATION": f"Token {other.key}"}
    url = f"/api/clusters/{cluster.id}/workloads/deployments/shop/web"
    assert client.delete(url, **auth).status_code == 404
    assert Pod.objects.filter(cluster=cluster).count() == 2
