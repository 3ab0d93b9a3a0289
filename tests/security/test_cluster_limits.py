"""Per-cluster limits: nodes and pods a cluster may hold (refused whole, naming the limit and its
setting), and the cycle traces it keeps (the oldest go)."""

from __future__ import annotations

import json
from typing import Any

import pytest
from django.test import Client

from schedviz.cluster import services
from schedviz.cluster.models import Change, Cluster, Cycle, Node, Pod
from schedviz.cluster.retention import cycles_prune
from schedviz.cluster.services import ServiceError

pytestmark = pytest.mark.django_db


@pytest.fixture(autouse=True)
def _small_limits(settings: Any) -> None:
    settings.SCHEDVIZ_START_RUNNERS = False
    settings.SCHEDVIZ_WRITE_RATE_PER_MINUTE = 0
    settings.SCHEDVIZ_MAX_NODES_PER_CLUSTER = 3
    settings.SCHEDVIZ_MAX_PODS_PER_CLUSTER = 2
    settings.SCHEDVIZ_MAX_CYCLES_KEPT = 5


@pytest.fixture
def cluster() -> Cluster:
    return services.cluster_create(name="e2e")


def nodes(*names: str) -> str:
    return "\n---\n".join(
        json.dumps(
            {
                "apiVersion": "v1",
                "kind": "Node",
                "metadata": {"name": name},
                "status": {"allocatable": {"cpu": "4", "memory": "8Gi", "pods": "110"}},
            }
        )
        for name in names
    )


def pod_manifest(name: str) -> dict[str, Any]:
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": name},
        "spec": {"containers": [{"name": "c", "image": "nginx"}]},
    }


def pods(*names: str) -> str:
    return "\n---\n".join(json.dumps(pod_manifest(name)) for name in names)


def counts(cluster: Cluster) -> tuple[int, int, int]:
    return (
        Node.objects.filter(cluster=cluster).count(),
        Pod.objects.filter(cluster=cluster).count(),
        Change.objects.filter(cluster=cluster).count(),
    )


def test_an_apply_past_the_node_limit_is_refused_whole_naming_the_limit(cluster: Cluster) -> None:
    services.manifests_apply(cluster=cluster, text=nodes("n1", "n2"))
    before = counts(cluster)
    with pytest.raises(ServiceError) as info:
        services.manifests_apply(cluster=cluster, text=nodes("n3", "n4") + "\n---\n" + pods("p"))
    assert info.value.errors == [
        "cluster e2e would have 4 nodes; the limit is 3 (SCHEDVIZ_MAX_NODES_PER_CLUSTER)"
    ]
    assert counts(cluster) == before


def test_updates_and_reaching_the_limit_exactly_are_allowed(cluster: Cluster) -> None:
    services.manifests_apply(cluster=cluster, text=nodes("n1", "n2", "n3"))
    services.manifests_apply(cluster=cluster, text=nodes("n1", "n2", "n3"))
    assert counts(cluster)[0] == 3


def test_the_pod_limit_holds_for_apply_and_for_pod_create(cluster: Cluster) -> None:
    services.manifests_apply(cluster=cluster, text=pods("p1", "p2"))
    with pytest.raises(ServiceError) as info:
        services.pod_create(cluster=cluster, manifest=pod_manifest("p3"))
    assert info.value.errors == [
        "cluster e2e would have 3 pods; the limit is 2 (SCHEDVIZ_MAX_PODS_PER_CLUSTER)"
    ]
    with pytest.raises(ServiceError):
        services.manifests_apply(cluster=cluster, text=pods("p3"))
    assert counts(cluster)[1] == 2


def test_both_limits_are_reported_at_once(cluster: Cluster) -> None:
    services.manifests_apply(cluster=cluster, text=nodes("a", "b") + "\n---\n" + pods("p"))
    before = counts(cluster)
    with pytest.raises(ServiceError) as info:
        services.manifests_apply(cluster=cluster, text=nodes("c", "d") + "\n---\n" + pods("q", "r"))
    assert [e.split(";")[0] for e in info.value.errors] == [
        "cluster e2e would have 4 nodes",
        "cluster e2e would have 3 pods",
    ]
    assert counts(cluster) == before


def test_limits_count_per_cluster(cluster: Cluster) -> None:
    other = services.cluster_create(name="other")
    services.manifests_apply(cluster=other, text=nodes("n1", "n2", "n3"))
    services.manifests_apply(cluster=cluster, text=nodes("n1", "n2", "n3"))
    assert counts(cluster)[0] == counts(other)[0] == 3


def _api_apply(client: Client, cluster: Cluster, body: str) -> Any:
    token = services.api_token_create(username=f"ops-{Cluster.objects.count()}-{len(body)}")
    Cluster.objects.filter(pk=cluster.pk).update(owner=token.user)
    return client.post(
        f"/api/clusters/{cluster.pk}/apply",
        data=body,
        content_type="application/yaml",
        HTTP_AUTHORIZATION=f"Token {token.key}",
    )


def test_the_api_answers_400_with_the_limit(client: Client, cluster: Cluster) -> None:
    services.manifests_apply(cluster=cluster, text=nodes("a", "b"))
    response = _api_apply(client, cluster, nodes("c", "d"))
    assert response.status_code == 400
    assert response.json() == {
        "errors": [
            "cluster e2e would have 4 nodes; the limit is 3 (SCHEDVIZ_MAX_NODES_PER_CLUSTER)"
        ]
    }


@pytest.mark.parametrize(
    ("body", "error"),
    [
        (
            nodes("a", "b", "c", "d"),
            "<input>: the input holds more than 3 nodes; the limit is 3 "
            "(SCHEDVIZ_MAX_NODES_PER_CLUSTER)",
        ),
        (
            "\n---\n".join(
                json.dumps(
                    {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": f"ns-{i}"}}
                )
                for i in range(6)
            ),
            "<input>: the input holds more than 5 objects; the limit is 5 "
            "(SCHEDVIZ_MAX_OBJECTS_PER_APPLY)",
        ),
    ],
)
def test_a_body_past_a_limit_by_itself_is_refused_by_the_loader_naming_it(
    client: Client, cluster: Cluster, settings: Any, body: str, error: str
) -> None:
    settings.SCHEDVIZ_MAX_OBJECTS_PER_APPLY = 5
    response = _api_apply(client, cluster, body)
    assert response.status_code == 400
    assert response.json() == {"errors": [error]}
    assert counts(cluster) == (0, 0, 0)


def trace(number: int) -> dict[str, Any]:
    return {
        "cycle": number,
        "pod": f"default/p{number}",
        "profile": "default-scheduler",
        "attempt": 1,
        "time": float(number),
        "wallTime": 0.01,
        "result": "Unschedulable",
        "node": None,
        "message": "",
        "points": [],
    }


def kept(cluster: Cluster) -> list[int]:
    return list(Cycle.objects.filter(cluster=cluster).values_list("number", flat=True))


def test_storing_cycles_keeps_only_the_newest(cluster: Cluster) -> None:
    services.cycles_create(cluster=cluster, traces=[trace(n) for n in range(1, 5)])
    assert kept(cluster) == [1, 2, 3, 4]
    services.cycles_create(cluster=cluster, traces=[trace(n) for n in range(5, 8)])
    assert kept(cluster) == [3, 4, 5, 6, 7]
    services.cycles_create(cluster=cluster, traces=[trace(8)])
    assert kept(cluster) == [4, 5, 6, 7, 8]


def test_pruning_keeps_the_newest_even_with_gaps_and_leaves_other_clusters(
    cluster: Cluster,
) -> None:
    other = services.cluster_create(name="other")
    services.cycles_create(cluster=other, traces=[trace(n) for n in range(1, 6)])
    services.cycles_create(cluster=cluster, traces=[trace(n) for n in (1, 2, 10)])
    services.cycles_create(cluster=cluster, traces=[trace(n) for n in (20, 30, 40)])
    assert kept(cluster) == [2, 10, 20, 30, 40]
    assert cycles_prune(cluster=cluster) == 0
    assert cycles_prune(cluster=cluster, incoming=2) == 2
    assert kept(cluster) == [20, 30, 40]
    assert cycles_prune(cluster=cluster, incoming=99) == 3
    assert kept(cluster) == []
    assert kept(other) == [1, 2, 3, 4, 5]


def test_the_apply_form_is_held_to_the_same_limits(
    client: Client, cluster: Cluster, settings: Any
) -> None:
    response = client.post(
        f"/clusters/{cluster.pk}/apply/", {"manifests": nodes("a", "b", "c", "d")}
    )
    assert "the input holds more than 3 nodes; the limit is 3" in response.content.decode()
    assert counts(cluster) == (0, 0, 0)
