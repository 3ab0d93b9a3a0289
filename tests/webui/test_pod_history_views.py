"""The pod page's history: why the pod is Pending, the attempts compared two at a time."""

from __future__ import annotations

import re
from typing import Any

import pytest
from django.contrib.auth.models import User
from django.test import Client
from django.urls import reverse

from schedviz.cluster import services
from schedviz.cluster.models import Cluster, Cycle
from worker.runner import run_cluster

pytestmark = pytest.mark.django_db(transaction=True)

NODE = """
apiVersion: v1
kind: Node
metadata: {name: %(name)s, labels: {kubernetes.io/hostname: %(name)s}}
status: {allocatable: {cpu: "%(cpu)s", memory: 4Gi, pods: "110"},
         capacity: {cpu: "%(cpu)s", memory: 4Gi, pods: "110"}}
"""
BIG_POD = """
apiVersion: v1
kind: Pod
metadata: {name: big, namespace: default}
spec:
  containers: [{name: c, image: busybox, resources: {requests: {cpu: "1500m"}}}]
"""
# Names with markup (let through by ``markup_in_names``) must come back as text.
HOSTILE_NODE = "<img src=x onerror=alert(1)>"
HOSTILE_POD = '"><svg onload=alert(1)>'


@pytest.fixture(autouse=True)
def _no_background_runners(settings: Any) -> None:
    settings.SCHEDVIZ_START_RUNNERS = False
    settings.SCHEDVIZ_RUNNER_IDLE_SECONDS = 0


@pytest.fixture
def user() -> User:
    return User.objects.create_user("alice", password="pw")


@pytest.fixture
def signed_in(client: Client, user: User) -> Client:
    client.force_login(user)
    return client


@pytest.fixture
def cluster(user: User) -> Cluster:
    """One 1-cpu node and a pod asking for 1500m: Pending."""
    cluster = services.cluster_create(
        name="c", owner=user, clock_mode=Cluster.ClockMode.VIRTUAL, seed=7
    )
    services.manifests_apply(
        cluster=cluster, text=NODE % {"name": "n1", "cpu": "1"} + "---" + BIG_POD
    )
    run_cluster(cluster.pk)
    return cluster


def pod_url(cluster: Cluster, name: str = "big") -> str:
    return reverse("webui:pod", args=[cluster.pk, "default", name])


def text_of(html: str) -> str:
    return re.sub(r"\s+", " ", re.sub(r"<[^>]+>", " ", html))


def cycles_of(cluster: Cluster, name: str = "big") -> list[int]:
    rows = Cycle.objects.filter(cluster=cluster, pod_name=name).order_by("number")
    return list(rows.values_list("number", flat=True))


def add_big_node(cluster: Cluster) -> tuple[int, int]:
    """A 4-cpu node n2, and the runner again: the pod's two attempts."""
    services.manifests_apply(cluster=cluster, text=NODE % {"name": "n2", "cpu": "4"})
    run_cluster(cluster.pk)
    first, second = cycles_of(cluster)
    return first, second


def test_a_pending_pod_says_why_with_reasons_suggestions_and_each_node(
    signed_in: Client, cluster: Cluster
) -> None:
    response = signed_in.get(pod_url(cluster))
    assert response.status_code == 200
    html = response.content.decode()
    assert 'id="why-pending"' in html
    body = text_of(html)
    assert "Why is this pod Pending?" in body
    assert "0/1 nodes are available: 1 Insufficient cpu." in body
    assert "add a node with at least 1500m cpu allocatable" in body
    assert "a node: added or allocatable changed" in body
    assert "after 300 s there (podMaxInUnschedulablePodsDuration)" in body
    # The drill-down: one <details> per node, each filter plugin's verdict inside.
    assert '<details class="node-verdict verdict-rejected" data-node="n1">' in html
    assert (
        "<summary><bdi>n1</bdi>: rejected by NodeResourcesFit (Insufficient cpu)</summary>" in html
    )
    assert "TaintToleration Success" in body
    assert "NodeResourcesFit UnschedulableAndUnresolvable Insufficient cpu" in body


def test_with_one_attempt_there_is_nothing_to_compare(signed_in: Client, cluster: Cluster) -> None:
    body = text_of(signed_in.get(pod_url(cluster)).content.decode())
    assert "nothing to compare yet" in body
    assert "Compare A and B" not in body


def test_once_bound_the_page_compares_the_last_two_attempts(
    signed_in: Client, cluster: Cluster
) -> None:
    first, second = add_big_node(cluster)
    html = signed_in.get(pod_url(cluster)).content.decode()
    assert 'id="why-pending"' not in html
    assert f'name="a" value="{first}" checked' in html
    assert f'name="b" value="{second}" checked' in html
    body = text_of(html)
    assert f"From cycle {first} to cycle {second}" in body
    assert "result Unschedulable Scheduled" in body
    assert "n2 (not in that attempt) passed" in body
    assert "ADDED Node n2" in body
    # The queue outlives the runner: the node's arrival moved the pod from unschedulablePods to
    # backoffQ (its backoff not yet over), whence it was popped for its second attempt.
    assert re.findall(r"Cycle \d+ \w+ · attempts \d+", body) == [
        f"Cycle {first} activeQ · attempts 0",
        f"Cycle {second} backoffQ · attempts 1",
    ]


def test_the_diff_answers_an_htmx_request_with_its_fragment_alone(
    signed_in: Client, cluster: Cluster
) -> None:
    first, second = add_big_node(cluster)
    response = signed_in.get(
        pod_url(cluster),
        {"a": second, "b": first},
        HTTP_HX_REQUEST="true",
        HTTP_HX_TARGET="attempt-diff",
    )
    html = response.content.decode()
    assert html.lstrip().startswith('<section id="attempt-diff"')
    assert "<html" not in html
    assert f"From cycle {second} to cycle {first}" in text_of(html)


def test_unknown_attempt_numbers_fall_back_to_the_last_two(
    signed_in: Client, cluster: Cluster
) -> None:
    first, second = add_big_node(cluster)
    body = text_of(signed_in.get(pod_url(cluster), {"a": "999", "b": "x"}).content.decode())
    assert f"From cycle {first} to cycle {second}" in body


def test_the_dashboard_links_pending_pods_to_why_pending(
    signed_in: Client, cluster: Cluster
) -> None:
    html = signed_in.get(reverse("webui:dashboard", args=[cluster.pk])).content.decode()
    assert f'href="{pod_url(cluster)}#why-pending"' in html


def test_hostile_names_are_shown_as_text_in_why_pending_and_the_diff(
    signed_in: Client, user: User, markup_in_names: None
) -> None:
    cluster = services.cluster_create(
        name="h", owner=user, clock_mode=Cluster.ClockMode.VIRTUAL, seed=7
    )
    pod = BIG_POD.replace("name: big", f"name: '{HOSTILE_POD}'")
    node = f"""
apiVersion: v1
kind: Node
metadata: {{name: '{HOSTILE_NODE}'}}
status: {{allocatable: {{cpu: "1", memory: 4Gi, pods: "110"}}}}
"""
    services.manifests_apply(cluster=cluster, text=node + "---" + pod)
    run_cluster(cluster.pk)
    pending = signed_in.get(pod_url(cluster, HOSTILE_POD)).content.decode()
    assert 'id="why-pending"' in pending
    assert HOSTILE_NODE not in pending and HOSTILE_POD not in pending
    escaped_node = "&lt;img src=x onerror=alert(1)&gt;"
    assert f'data-node="{escaped_node}"' in pending
    assert f"<summary><bdi>{escaped_node}</bdi>: rejected by NodeResourcesFit" in pending
    services.manifests_apply(cluster=cluster, text=NODE % {"name": "n2", "cpu": "4"})
    services.pod_delete(cluster=cluster, namespace="default", name=HOSTILE_POD)
    services.manifests_apply(cluster=cluster, text=pod)
    run_cluster(cluster.pk)
    assert len(cycles_of(cluster, HOSTILE_POD)) == 2
    html = signed_in.get(pod_url(cluster, HOSTILE_POD)).content.decode()
    assert HOSTILE_NODE not in html and HOSTILE_POD not in html
    assert "From cycle" in text_of(html)
    # The change log between the attempts names the deleted and re-created pod.
    assert "DELETED Pod <bdi>default/&quot;&gt;&lt;svg onload=alert(1)&gt;</bdi>" in html


def test_a_gated_pod_is_pending_because_of_its_scheduling_gates(
    signed_in: Client, cluster: Cluster
) -> None:
    gated = BIG_POD.replace("name: big", "name: gated").replace(
        "spec:\n", "spec:\n  schedulingGates: [{name: example.com/wait}]\n"
    )
    services.manifests_apply(cluster=cluster, text=gated)
    run_cluster(cluster.pk)
    assert cycles_of(cluster, "gated") == []
    body = text_of(signed_in.get(pod_url(cluster, "gated")).content.decode())
    assert "The pod has scheduling gates ( example.com/wait )" in body
    assert "does not try it until every gate is removed" in body
    assert "has not failed to place this pod yet" not in body


def test_the_pod_page_says_what_admission_changed(signed_in: Client, user: User) -> None:
    cluster = services.cluster_create(name="admitted", owner=user)
    services.manifests_apply(
        cluster=cluster,
        text=(
            "apiVersion: v1\nkind: LimitRange\nmetadata: {name: default-limits}\n"
            'spec:\n  limits:\n  - type: Container\n    defaultRequest: {cpu: "1"}\n---\n'
            "apiVersion: node.k8s.io/v1\nkind: RuntimeClass\nmetadata: {name: kata}\n"
            'handler: kata\noverhead: {podFixed: {cpu: "1"}}\n---\n'
            "apiVersion: v1\nkind: Pod\nmetadata: {name: app}\n"
            "spec:\n  runtimeClassName: kata\n  containers: [{name: app, image: x}]\n"
        ),
    )
    page = signed_in.get(reverse("webui:pod", args=[cluster.pk, "default", "app"]))
    text = page.content.decode()
    assert "LimitRanger set requests.cpu=1 on container app (LimitRange default-limits)" in text
    assert "RuntimeClass added overhead cpu=1 (RuntimeClass kata)" in text
    # The manifest as stored carries upstream's annotation (YAML folds the long value).
    assert (
        "kubernetes.io/limit-ranger: &#x27;LimitRanger plugin set: cpu request for container\n"
        in (text)
    )
