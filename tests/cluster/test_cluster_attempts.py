"""Why a stored pod is Pending, and the diff of two stored attempts: selectors and JSON API."""

from __future__ import annotations

from typing import Any

import pytest
from django.contrib.auth.models import User
from django.test import Client

from schedviz.cluster import attempts, services
from schedviz.cluster.models import Cluster, Cycle
from schedviz.cluster.services import ObjectNotFound
from worker.runner import run_cluster

pytestmark = pytest.mark.django_db(transaction=True)

SMALL_NODE = """
apiVersion: v1
kind: Node
metadata: {name: n1, labels: {kubernetes.io/hostname: n1}}
status: {allocatable: {cpu: "1", memory: 4Gi, pods: "110"},
         capacity: {cpu: "1", memory: 4Gi, pods: "110"}}
---
apiVersion: v1
kind: Pod
metadata: {name: big, namespace: default}
spec:
  containers: [{name: c, image: busybox, resources: {requests: {cpu: "1500m"}}}]
"""
BIG_NODE = """
apiVersion: v1
kind: Node
metadata: {name: n2, labels: {kubernetes.io/hostname: n2}}
status: {allocatable: {cpu: "4", memory: 8Gi, pods: "110"},
         capacity: {cpu: "4", memory: 8Gi, pods: "110"}}
"""


@pytest.fixture(autouse=True)
def _no_background_runners(settings: Any) -> None:
    settings.SCHEDVIZ_START_RUNNERS = False
    settings.SCHEDVIZ_RUNNER_IDLE_SECONDS = 0


@pytest.fixture
def user() -> User:
    return User.objects.create_user("alice", password="pw")


@pytest.fixture
def cluster(user: User) -> Cluster:
    cluster = services.cluster_create(
        name="c", owner=user, clock_mode=Cluster.ClockMode.VIRTUAL, seed=7
    )
    services.manifests_apply(cluster=cluster, text=SMALL_NODE)
    run_cluster(cluster.pk)
    return cluster


@pytest.fixture
def signed_in(client: Client, user: User) -> Client:
    client.force_login(user)
    return client


def add_big_node(cluster: Cluster) -> tuple[int, int]:
    services.manifests_apply(cluster=cluster, text=BIG_NODE)
    run_cluster(cluster.pk)
    numbers = Cycle.objects.filter(cluster=cluster, pod_name="big").order_by("number")
    first, second = numbers.values_list("number", flat=True)
    return first, second


def test_a_pending_pod_is_diagnosed_from_its_last_failed_attempt(cluster: Cluster) -> None:
    result = attempts.pod_diagnosis(cluster=cluster, namespace="default", name="big")
    assert result.pending and result.exists
    assert result.diagnosis is not None
    assert result.diagnosis.aggregate.fit_error == "0/1 nodes are available: 1 Insufficient cpu."
    (fit,) = result.diagnosis.advice
    assert fit.suggestions == [
        "the request of 1500m cpu exceeds every node's allocatable (the largest is n1 with 1 "
        "cpu): no deletion or preemption can make room; add a node with at least 1500m cpu "
        "allocatable or lower the request"
    ]
    assert "a node: added or allocatable changed" in [e.text for e in fit.events]


def test_once_bound_the_pod_is_no_longer_pending_but_its_last_failure_stays(
    cluster: Cluster,
) -> None:
    add_big_node(cluster)
    result = attempts.pod_diagnosis(cluster=cluster, namespace="default", name="big")
    assert not result.pending and result.node_name == "n2"
    assert result.diagnosis is not None
    assert [n.node for n in result.diagnosis.nodes] == ["n1", "n2"]
    assert result.diagnosis.nodes[-1].verdict == "added since the attempt"


def test_an_unknown_pod_is_not_found(cluster: Cluster) -> None:
    with pytest.raises(ObjectNotFound):
        attempts.pod_diagnosis(cluster=cluster, namespace="default", name="nope")


def test_the_diff_lists_the_node_added_between_the_attempts(cluster: Cluster) -> None:
    first, second = add_big_node(cluster)
    diff = attempts.pod_attempt_diff(
        cluster=cluster, namespace="default", name="big", before=first, after=second
    )
    assert {c.field: c.after for c in diff.fields}["result"] == "Scheduled"
    assert [(v.node, v.after) for v in diff.verdicts] == [("n2", "passed")]
    # The scheduler's own status write (PodScheduled False) after the first attempt, then the node.
    assert [(c["type"], c["kind"], c["name"]) for c in diff.changes] == [
        ("MODIFIED", "Pod", "big"),
        ("ADDED", "Node", "n2"),
    ]


def test_api_diagnosis_answers_json(signed_in: Client, cluster: Cluster) -> None:
    response = signed_in.get(f"/api/clusters/{cluster.pk}/pods/default/big/diagnosis")
    assert response.status_code == 200
    data = response.json()
    assert data["pending"] is True
    assert data["diagnosis"]["aggregate"]["reasons"] == [
        {
            "reason": "Insufficient cpu",
            "count": 1,
            "plugins": ["NodeResourcesFit"],
            "nodes": ["n1"],
            "text": "1 Insufficient cpu",
        }
    ]
    assert data["diagnosis"]["advice"][0]["plugin"] == "NodeResourcesFit"


def test_api_diagnosis_of_a_missing_pod_is_404(signed_in: Client, cluster: Cluster) -> None:
    response = signed_in.get(f"/api/clusters/{cluster.pk}/pods/default/nope/diagnosis")
    assert response.status_code == 404
    assert response.json() == {"errors": ['pods "nope" not found']}


def test_api_diff_answers_json_and_checks_its_parameters(
    signed_in: Client, cluster: Cluster
) -> None:
    first, second = add_big_node(cluster)
    url = f"/api/clusters/{cluster.pk}/pods/default/big/diff"
    response = signed_in.get(url, {"a": first, "b": second})
    assert response.status_code == 200
    assert response.json()["verdicts"] == [{"node": "n2", "before": "", "after": "passed"}]
    missing = signed_in.get(url, {"a": first})
    assert (missing.status_code, missing.json()) == (
        400,
        {"errors": ["b: Required value: a cycle number"]},
    )
    bad = signed_in.get(url, {"a": "x", "b": second})
    assert bad.status_code == 400
    other = signed_in.get(url, {"a": first, "b": 999})
    assert other.status_code == 404


def test_api_refuses_someone_elses_cluster(client: Client, cluster: Cluster) -> None:
    client.force_login(User.objects.create_user("mallory", password="pw"))
    response = client.get(f"/api/clusters/{cluster.pk}/pods/default/big/diagnosis")
    assert response.status_code == 404


def test_api_diagnosis_names_the_scheduling_gates_of_a_gated_pod(
    signed_in: Client, cluster: Cluster
) -> None:
    gated = SMALL_NODE.split("---")[1].replace("name: big", "name: gated")
    gated = gated.replace("spec:\n", "spec:\n  schedulingGates: [{name: example.com/wait}]\n")
    services.manifests_apply(cluster=cluster, text=gated)
    data = signed_in.get(f"/api/clusters/{cluster.pk}/pods/default/gated/diagnosis").json()
    assert (data["pending"], data["diagnosis"], data["schedulingGates"]) == (
        True,
        None,
        ["example.com/wait"],
    )
