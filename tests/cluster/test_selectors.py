"""Selectors: ownership, pod filters, node totals, traces, events and the change log."""

from __future__ import annotations

from typing import Any

import pytest
import yaml
from django.contrib.auth.models import AnonymousUser, User

from schedviz.cluster import selectors, services
from schedviz.cluster.models import Cluster
from schedviz.cluster.services import ObjectNotFound
from schedviz.scheduler.store import Event as SchedulerEvent

pytestmark = pytest.mark.django_db


@pytest.fixture(autouse=True)
def _no_runners(settings: Any) -> None:
    settings.SCHEDVIZ_START_RUNNERS = False


@pytest.fixture
def cluster() -> Cluster:
    return services.cluster_create(name="sel")


def _node(name: str) -> dict[str, Any]:
    return {
        "apiVersion": "v1",
        "kind": "Node",
        "metadata": {"name": name},
        "status": {"allocatable": {"cpu": "4", "memory": "8Gi", "pods": "110"}},
    }


def _pod(
    name: str, cpu: str, memory: str, namespace: str = "default", **extra: Any
) -> dict[str, Any]:
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": name, "namespace": namespace},
        "spec": {
            "containers": [
                {
                    "name": "c",
                    "image": "i",
                    "resources": {"requests": {"cpu": cpu, "memory": memory}},
                }
            ],
            **extra.get("spec", {}),
        },
        **({"status": extra["status"]} if "status" in extra else {}),
    }


def _apply(cluster: Cluster, *objects: dict[str, Any]) -> None:
    services.manifests_apply(cluster=cluster, text=yaml.safe_dump_all(objects))


def test_clusters_are_seen_by_their_owner_and_unowned_by_all() -> None:
    alice = User.objects.create(username="alice")
    bob = User.objects.create(username="bob")
    mine = services.cluster_create(name="mine", owner=alice)
    shared = services.cluster_create(name="shared")
    services.cluster_create(name="bobs", owner=bob)
    assert list(selectors.cluster_list(user=alice)) == [mine, shared]
    assert list(selectors.cluster_list(user=AnonymousUser())) == [shared]
    assert selectors.cluster_get(cluster_id=mine.id, user=alice) == mine
    assert selectors.cluster_get(cluster_id=shared.id, user=bob) == shared
    with pytest.raises(ObjectNotFound):
        selectors.cluster_get(cluster_id=mine.id, user=bob)
    with pytest.raises(ObjectNotFound):
        selectors.cluster_get(cluster_id=10_000, user=alice)


def keys(pods: Any) -> list[str]:
    return [p.key for p in pods]


def test_pod_list_filters(cluster: Cluster) -> None:
    _apply(
        cluster,
        _node("n1"),
        _pod("a", "1", "1Gi"),
        _pod("b", "1", "1Gi", namespace="team"),
        _pod("c", "1", "1Gi", spec={"schedulerName": "other"}),
    )
    services.pod_bind(cluster=cluster, namespace="default", name="a", node_name="n1")
    assert keys(selectors.pod_list(cluster=cluster)) == ["default/a", "default/c", "team/b"]
    assert keys(selectors.pod_list(cluster=cluster, namespace="team")) == ["team/b"]
    assert keys(selectors.pod_list(cluster=cluster, bound=True)) == ["default/a"]
    assert keys(selectors.pod_list(cluster=cluster, bound=False)) == ["default/c", "team/b"]
    assert keys(selectors.pod_list(cluster=cluster, node_name="n1")) == ["default/a"]
    assert keys(selectors.pod_list(cluster=cluster, scheduler_name="other")) == ["default/c"]
    assert keys(selectors.pod_list(cluster=cluster, phase="Running")) == []


def test_node_list_totals_requests_of_bound_running_pods(cluster: Cluster) -> None:
    _apply(
        cluster,
        _node("n1"),
        _node("n2"),
        _pod("a", "500m", "1Gi", spec={"nodeName": "n1"}),
        _pod("b", "1", "1Gi", spec={"nodeName": "n1"}),
        _pod("done", "2", "1Gi", spec={"nodeName": "n1"}, status={"phase": "Succeeded"}),
        _pod("pending", "3", "1Gi"),
    )
    n1, n2 = selectors.node_list(cluster=cluster)
    assert n1.name == "n1"
    assert n1.allocatable == {"cpu": 4000, "memory": 8 * 2**30, "pods": 110}
    assert n1.requested == {"cpu": 1500, "memory": 2 * 2**30, "pods": 2}
    assert n1.pod_count == 2
    assert n2.requested == {} and n2.pod_count == 0


def test_cycles_for_pod_and_cycle_get(cluster: Cluster) -> None:
    traces = [
        {"cycle": n, "pod": pod, "profile": "default-scheduler", "attempt": 1, "result": "x"}
        for n, pod in ((1, "default/a"), (2, "default/b"), (3, "default/a"))
    ]
    services.cycles_create(cluster=cluster, traces=traces)
    assert selectors.cycles_for_pod(cluster=cluster, namespace="default", name="a") == [
        traces[0],
        traces[2],
    ]
    assert selectors.cycle_get(cluster=cluster, number=2) == traces[1]
    assert selectors.cycle_traces_since(cluster=cluster, after=1, limit=1) == [traces[1]]
    assert [c.number for c in selectors.cycle_list(cluster=cluster)] == [1, 2, 3]
    with pytest.raises(ObjectNotFound):
        selectors.cycle_get(cluster=cluster, number=9)


def test_events_for_object(cluster: Cluster) -> None:
    services.events_create(
        cluster=cluster,
        events=[
            SchedulerEvent("Warning", "FailedScheduling", "default/a", "0/1 nodes", 1.0),
            SchedulerEvent("Normal", "Scheduled", "default/b", "assigned", 2.0),
            SchedulerEvent("Normal", "Scheduled", "default/a", "assigned", 3.0),
        ],
    )
    events = selectors.events_for_object(cluster=cluster, namespace="default", name="a")
    assert [e.reason for e in events] == ["FailedScheduling", "Scheduled"]


def test_change_log_since(cluster: Cluster) -> None:
    assert selectors.latest_resource_version(cluster=cluster) == 0
    _apply(cluster, _node("n1"), _pod("a", "1", "1Gi"))
    first, second = selectors.change_log_since(cluster=cluster, resource_version=0)
    services.pod_delete(cluster=cluster, namespace="default", name="a")
    later = list(selectors.change_log_since(cluster=cluster, resource_version=second.id))
    assert [(c.type, c.name) for c in later] == [("DELETED", "a")]
    assert selectors.latest_resource_version(cluster=cluster) == later[0].id
    assert len(selectors.change_log_since(cluster=cluster, resource_version=0, limit=1)) == 1
    assert first.id < second.id


def test_scheduler_configuration_defaults_without_profiles(cluster: Cluster) -> None:
    config = selectors.scheduler_configuration(cluster=cluster)
    assert [p.scheduler_name for p in config.profiles] == ["default-scheduler"]
    services.manifests_apply(
        cluster=cluster,
        text=(
            "apiVersion: kubescheduler.config.k8s.io/v1\nkind: KubeSchedulerConfiguration\n"
            "profiles: [{schedulerName: a}, {schedulerName: b}]\n"
        ),
    )
    config = selectors.scheduler_configuration(cluster=cluster)
    assert [p.scheduler_name for p in config.profiles] == ["a", "b"]
    assert [p.scheduler_name for p in selectors.profile_list(cluster=cluster)] == ["a", "b"]


def test_api_token_user() -> None:
    token = services.api_token_create(username="carol")
    assert token.user_created
    assert selectors.api_token_user(key=token.key) == token.user
    assert selectors.api_token_user(key="wrong") is None
    token.user.is_active = False
    token.user.save()
    assert selectors.api_token_user(key=token.key) is None
