"""The JSON API: status codes, token and session auth, ownership, body limits, error lists."""

from __future__ import annotations

import json
from typing import Any

import pytest
import yaml
from django.contrib.auth.models import User
from django.test import Client

from schedviz.cluster import services
from schedviz.cluster.models import Change, Cluster, Node, Pod

pytestmark = pytest.mark.django_db


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
    return services.cluster_create(name="mine", owner=token.user)


NODE = """
apiVersion: v1
kind: Node
metadata: {name: n1}
status: {allocatable: {cpu: "4", memory: 8Gi, pods: "110"}}
"""
POD = """
apiVersion: v1
kind: Pod
metadata: {name: web, namespace: shop}
spec:
  containers: [{name: c, image: nginx}]
"""


def post_yaml(client: Client, url: str, text: str, auth: dict[str, Any]) -> Any:
    return client.post(url, data=text, content_type="application/yaml", **auth)


def test_create_cluster_returns_201_with_its_id(client: Client, auth: dict[str, Any]) -> None:
    response = client.post(
        "/api/clusters",
        data=json.dumps({"name": "prod-copy"}),
        content_type="application/json",
        **auth,
    )
    assert response.status_code == 201
    created = Cluster.objects.get(id=response.json()["id"])
    assert created.name == "prod-copy" and created.owner is not None
    assert created.owner.username == "alice"
    listed = client.get("/api/clusters", **auth)
    assert [c["name"] for c in listed.json()["clusters"]] == ["prod-copy"]


def test_create_cluster_refusals(client: Client, auth: dict[str, Any]) -> None:
    def create(body: Any) -> Any:
        return client.post(
            "/api/clusters",
            data=json.dumps(body),
            content_type="application/json",
            **auth,
        )

    assert create({}).status_code == 400
    assert create(["x"]).json() == {"errors": ["request body must be a JSON object"]}
    assert create({"name": "a", "clockMode": "sundial"}).status_code == 400
    assert create({"name": "a"}).status_code == 201
    again = create({"name": "a"})
    assert again.status_code == 409
    assert again.json() == {"errors": ['clusters "a" already exists']}


def test_apply_answers_every_object(client: Client, auth: dict[str, Any], cluster: Cluster) -> None:
    response = post_yaml(client, f"/api/clusters/{cluster.id}/apply", f"{NODE}---{POD}", auth)
    assert response.status_code == 200
    assert [a["line"] for a in response.json()["applied"]] == [
        "node/n1 created",
        "pod/web created",
    ]
    assert response.json()["applied"][1] == {
        "kind": "Pod",
        "namespace": "shop",
        "name": "web",
        "action": "created",
        "line": "pod/web created",
    }


def test_apply_skips_kinds_the_scheduler_does_not_read_with_one_notice(
    client: Client, auth: dict[str, Any], cluster: Cluster
) -> None:
    others = (
        "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: app-config}\n---\n"
        "apiVersion: v1\nkind: Secret\nmetadata: {name: db}\n---"
    )
    response = post_yaml(client, f"/api/clusters/{cluster.id}/apply", f"{others}{NODE}", auth)
    assert response.status_code == 200
    assert [a["line"] for a in response.json()["applied"]] == ["node/n1 created"]
    assert response.json()["notice"] == (
        "skipped 2 objects of kinds the scheduler does not read: ConfigMap/app-config, Secret/db"
    )


def test_apply_accepts_json(client: Client, auth: dict[str, Any], cluster: Cluster) -> None:
    body = json.dumps([yaml.safe_load(NODE), yaml.safe_load(POD)])
    response = client.post(
        f"/api/clusters/{cluster.id}/apply",
        data=body,
        content_type="application/json",
        **auth,
    )
    assert response.status_code == 200
    assert len(response.json()["applied"]) == 2


def test_apply_with_errors_answers_400_with_all_and_saves_nothing(
    client: Client, auth: dict[str, Any], cluster: Cluster
) -> None:
    bad_node = NODE.replace("name: n1", "name: n/1")
    bad_pod = POD.replace("image: nginx", "image: ' nginx'")
    response = post_yaml(
        client, f"/api/clusters/{cluster.id}/apply", f"{bad_node}---{POD}---{bad_pod}", auth
    )
    assert response.status_code == 400
    errors = response.json()["errors"]
    assert len(errors) == 2
    assert errors[0].startswith('document 1 of <input>: Node "n/1" is invalid: metadata.name')
    assert errors[1].startswith('document 3 of <input>: Pod "web" is invalid: spec.containers')
    assert not Node.objects.exists() and not Pod.objects.exists() and not Change.objects.exists()


def test_apply_of_a_scheduler_configuration(
    client: Client, auth: dict[str, Any], cluster: Cluster
) -> None:
    config = (
        "apiVersion: kubescheduler.config.k8s.io/v1\nkind: KubeSchedulerConfiguration\n"
        "percentageOfNodesToScore: 30\n"
    )
    response = post_yaml(client, f"/api/clusters/{cluster.id}/apply", config, auth)
    assert response.json()["applied"] == [
        {
            "kind": "KubeSchedulerConfiguration",
            "action": "configured",
            "line": "kubeschedulerconfiguration.kubescheduler.config.k8s.io configured",
        }
    ]


def test_body_over_the_limit_is_413(
    client: Client, auth: dict[str, Any], cluster: Cluster, settings: Any
) -> None:
    settings.SCHEDVIZ_MAX_UPLOAD_BYTES = 100
    response = post_yaml(client, f"/api/clusters/{cluster.id}/apply", NODE + " " * 100, auth)
    assert response.status_code == 413
    assert response.json() == {"errors": ["request body larger than 100 bytes"]}
    assert not Node.objects.exists()


def test_body_between_djangos_limit_and_ours_is_read(
    client: Client, auth: dict[str, Any], cluster: Cluster, settings: Any
) -> None:
    settings.DATA_UPLOAD_MAX_MEMORY_SIZE = 100
    response = post_yaml(client, f"/api/clusters/{cluster.id}/apply", NODE + "#" * 200, auth)
    assert response.status_code == 200


def test_pods_list_and_delete(client: Client, auth: dict[str, Any], cluster: Cluster) -> None:
    services.manifests_apply(cluster=cluster, text=f"{NODE}---{POD}")
    services.pod_bind(cluster=cluster, namespace="shop", name="web", node_name="n1")
    listed = client.get(f"/api/clusters/{cluster.id}/pods", **auth)
    assert listed.json() == [
        {
            "namespace": "shop",
            "name": "web",
            "nodeName": "n1",
            "phase": "Pending",
            "nominatedNodeName": "",
        }
    ]
    url = f"/api/clusters/{cluster.id}/pods/shop/web"
    assert client.delete(url, **auth).status_code == 204
    assert not Pod.objects.exists()
    missing = client.delete(url, **auth)
    assert missing.status_code == 404
    assert missing.json() == {"errors": ['pods "web" not found']}


def test_cycles_of_a_pod(client: Client, auth: dict[str, Any], cluster: Cluster) -> None:
    traces = [
        {"cycle": 1, "pod": "shop/web", "profile": "default-scheduler", "attempt": 1},
        {"cycle": 2, "pod": "shop/other", "profile": "default-scheduler", "attempt": 1},
    ]
    services.cycles_create(cluster=cluster, traces=traces)
    url = f"/api/clusters/{cluster.id}/cycles"
    response = client.get(url, {"pod": "shop/web"}, **auth)
    assert response.json() == {"schemaVersion": 1, "cycles": [traces[0]]}
    everything = client.get(url, {"after": "1"}, **auth)
    assert everything.json()["cycles"] == [traces[1]]
    bad = client.get(url, {"limit": "many"}, **auth)
    assert bad.status_code == 400


def test_export_and_cluster_detail(client: Client, auth: dict[str, Any], cluster: Cluster) -> None:
    services.manifests_apply(cluster=cluster, text=NODE)
    exported = client.get(f"/api/clusters/{cluster.id}/export", **auth)
    assert exported["Content-Type"] == "application/yaml"
    assert "kind: List" in b"".join(exported).decode()
    detail = client.get(f"/api/clusters/{cluster.id}", **auth)
    assert detail.json()["name"] == "mine"
    gone = client.delete(f"/api/clusters/{cluster.id}", **auth)
    assert gone.status_code == 204
    assert not Cluster.objects.exists()


def test_without_credentials_it_is_401(client: Client, cluster: Cluster) -> None:
    response = client.get(f"/api/clusters/{cluster.id}/pods")
    assert response.status_code == 401
    assert response["WWW-Authenticate"] == "Token"
    bad = client.get(f"/api/clusters/{cluster.id}/pods", HTTP_AUTHORIZATION="Token nope")
    assert bad.status_code == 401
    basic = client.get("/api/clusters", HTTP_AUTHORIZATION="Basic YTpi")
    assert basic.status_code == 401


def test_someone_elses_cluster_is_404(client: Client, auth: dict[str, Any]) -> None:
    bob = User.objects.create(username="bob")
    theirs = services.cluster_create(name="theirs", owner=bob)
    for url in (f"/api/clusters/{theirs.id}/pods", f"/api/clusters/{theirs.id}/cycles"):
        assert client.get(url, **auth).status_code == 404
    response = post_yaml(client, f"/api/clusters/{theirs.id}/apply", NODE, auth)
    assert response.status_code == 404
    assert not Node.objects.exists()


def test_wrong_method_is_405(client: Client, auth: dict[str, Any], cluster: Cluster) -> None:
    response = client.get(f"/api/clusters/{cluster.id}/apply", **auth)
    assert response.status_code == 405
    assert response["Allow"] == "POST"
    assert client.put(f"/api/clusters/{cluster.id}/pods", **auth).status_code == 405


def test_session_auth_needs_csrf_for_writes(cluster: Cluster, token: services.NewApiToken) -> None:
    browser = Client(enforce_csrf_checks=True)
    browser.force_login(token.user)
    assert browser.get(f"/api/clusters/{cluster.id}/pods").status_code == 200
    refused = browser.post(
        f"/api/clusters/{cluster.id}/apply", data=NODE, content_type="application/yaml"
    )
    assert refused.status_code == 403
    assert not Node.objects.exists()
    browser.get("/admin/login/")  # sets the CSRF cookie
    csrf = browser.cookies["csrftoken"].value
    accepted = browser.post(
        f"/api/clusters/{cluster.id}/apply",
        data=NODE,
        content_type="application/yaml",
        HTTP_X_CSRFTOKEN=csrf,
    )
    assert accepted.status_code == 200


def test_token_requests_need_no_csrf(cluster: Cluster, auth: dict[str, Any]) -> None:
    script = Client(enforce_csrf_checks=True)
    response = post_yaml(script, f"/api/clusters/{cluster.id}/apply", NODE, auth)
    assert response.status_code == 200


QUOTA = """
apiVersion: v1
kind: ResourceQuota
metadata: {name: q, namespace: shop}
spec: {hard: {pods: "1"}}
"""


def test_a_pod_past_a_quota_is_refused_whole_with_upstreams_message(
    client: Client, auth: dict[str, Any], cluster: Cluster
) -> None:
    url = f"/api/clusters/{cluster.id}/apply"
    assert post_yaml(client, url, f"{NODE}---{QUOTA}---{POD}", auth).status_code == 200
    second = POD.replace("name: web", "name: web-2")
    third = POD.replace("name: web", "name: web-3")
    response = post_yaml(client, url, f"{NODE}---{second}---{third}", auth)
    assert response.status_code == 400
    assert response.json()["errors"] == [
        'document 2 of <input>: pods "web-2" is forbidden: exceeded quota: q, requested: pods=1, '
        "used: pods=1, limited: pods=1",
        'document 3 of <input>: pods "web-3" is forbidden: exceeded quota: q, requested: pods=1, '
        "used: pods=1, limited: pods=1",
    ]
    assert list(Pod.objects.values_list("name", flat=True)) == ["web"]


def test_a_limit_range_default_is_stored_with_upstreams_annotation_and_what_changed(
    client: Client, auth: dict[str, Any], cluster: Cluster
) -> None:
    limit_range = (
        "apiVersion: v1\nkind: LimitRange\nmetadata: {name: defaults, namespace: shop}\n"
        'spec:\n  limits:\n  - type: Container\n    defaultRequest: {cpu: "1"}\n'
    )
    url = f"/api/clusters/{cluster.id}/apply"
    response = post_yaml(client, url, f"{limit_range}---{POD}", auth)
    assert response.status_code == 200
    assert [a["line"] for a in response.json()["applied"]] == [
        "limitrange/defaults created",
        "pod/web created",
    ]
    row = Pod.objects.get(name="web")
    assert row.manifest["spec"]["containers"][0]["resources"] == {"requests": {"cpu": "1"}}
    assert row.manifest["metadata"]["annotations"] == {
        "kubernetes.io/limit-ranger": "LimitRanger plugin set: cpu request for container c"
    }
    assert row.requests["cpu"] == 1000
    assert row.admission == ["LimitRanger set requests.cpu=1 on container c (LimitRange defaults)"]
    # Applied again, the pod gets the same defaults: nothing changes.
    again = post_yaml(client, url, POD, auth)
    assert [a["line"] for a in again.json()["applied"]] == ["pod/web unchanged"]


def test_a_controllers_pod_past_a_quota_is_a_failed_create_event(
    client: Client, auth: dict[str, Any], cluster: Cluster
) -> None:
    from schedviz.cluster.models import Event

    replica_set = (
        "apiVersion: apps/v1\nkind: ReplicaSet\nmetadata: {name: web, namespace: shop}\n"
        "spec:\n  replicas: 2\n  selector: {matchLabels: {app: web}}\n  template:\n"
        "    metadata: {labels: {app: web}}\n    spec: {containers: [{name: c, image: x}]}\n"
    )
    response = post_yaml(
        client, f"/api/clusters/{cluster.id}/apply", f"{QUOTA}---\n{replica_set}", auth
    )
    assert response.status_code == 200, response.json()
    assert Pod.objects.count() == 1
    event = Event.objects.get(reason="FailedCreate")
    assert (event.type, event.object_namespace, event.object_name) == ("Warning", "shop", "web")
    assert event.message.startswith('Error creating: pods "web-')
    assert event.message.endswith(
        "is forbidden: exceeded quota: q, requested: pods=1, used: pods=1, limited: pods=1"
    )
