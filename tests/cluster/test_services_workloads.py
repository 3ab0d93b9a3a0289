"""Workloads in the live cluster: applied, scaled and deleted with their pods."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from typing import Any

import pytest
import yaml

from schedviz.cluster import services
from schedviz.cluster.models import Change, Cluster, Pod, ReplicaSet, StatefulSet
from schedviz.cluster.services import ServiceError

pytestmark = pytest.mark.django_db


@pytest.fixture(autouse=True)
def _no_runners(settings: Any) -> None:
    settings.SCHEDVIZ_START_RUNNERS = False


@pytest.fixture
def cluster() -> Cluster:
    return services.cluster_create(name="test")


def workload(kind: str, name: str, replicas: int = 3, **spec: Any) -> str:
    api_version = "v1" if kind == "ReplicationController" else "apps/v1"
    selector: Any = (
        {"app": name} if kind == "ReplicationController" else {"matchLabels": {"app": name}}
    )
    return yaml.safe_dump(
        {
            "apiVersion": api_version,
            "kind": kind,
            "metadata": {"name": name},
            "spec": {
                "replicas": replicas,
                "selector": selector,
                "template": {
                    "metadata": {"labels": {"app": name}},
                    "spec": {"containers": [{"name": "c", "image": "nginx"}]},
                },
                **spec,
            },
        }
    )


def pods_of(cluster: Cluster) -> list[Pod]:
    return list(Pod.objects.filter(cluster=cluster).order_by("id"))


def test_applying_a_deployment_creates_its_replica_set_and_pods(cluster: Cluster) -> None:
    result = services.manifests_apply(cluster=cluster, text=workload("Deployment", "web"))
    replica_set = ReplicaSet.objects.get(cluster=cluster)
    template_hash = replica_set.manifest["metadata"]["labels"]["pod-template-hash"]
    assert replica_set.name == f"web-{template_hash}"
    assert replica_set.manifest["metadata"]["ownerReferences"][0]["kind"] == "Deployment"
    pods = pods_of(cluster)
    assert len(pods) == 3
    for pod in pods:
        assert pod.name.startswith(f"{replica_set.name}-")
        assert len(pod.name) == len(replica_set.name) + 6
        labels = pod.manifest["metadata"]["labels"]
        assert labels == {"app": "web", "pod-template-hash": template_hash}
        owner = pod.manifest["metadata"]["ownerReferences"][0]
        assert (owner["kind"], owner["name"], owner["controller"]) == (
            "ReplicaSet",
            replica_set.name,
            True,
        )
    assert result.lines[0] == "deployment.apps/web created"
    assert [line.split("/")[0] for line in result.lines[1:]] == ["replicaset.apps"] + ["pod"] * 3
    kinds = list(Change.objects.filter(cluster=cluster).values_list("kind", flat=True))
    assert kinds == ["Deployment", "ReplicaSet", "Pod", "Pod", "Pod"]
    assert all(p.resource_version for p in pods)


def test_applying_a_deployment_again_creates_nothing(cluster: Cluster) -> None:
    services.manifests_apply(cluster=cluster, text=workload("Deployment", "web"))
    changes = Change.objects.filter(cluster=cluster).count()
    services.manifests_apply(cluster=cluster, text=workload("Deployment", "web"))
    assert Change.objects.filter(cluster=cluster).count() == changes
    assert len(pods_of(cluster)) == 3


def test_an_ordered_ready_statefulset_creates_the_next_ordinal_once_the_last_is_bound(
    cluster: Cluster,
) -> None:
    services.manifests_apply(
        cluster=cluster, text=workload("StatefulSet", "db", replicas=3, serviceName="db")
    )
    assert [p.name for p in pods_of(cluster)] == ["db-0"]
    sync = {"cluster": cluster, "kind": "StatefulSet", "namespace": "default", "name": "db"}
    services.workload_sync(**sync)
    assert [p.name for p in pods_of(cluster)] == ["db-0"]
    node = {"apiVersion": "v1", "kind": "Node", "metadata": {"name": "n1"}}
    services.manifests_apply(cluster=cluster, text=yaml.safe_dump(node))
    services.pod_bind(cluster=cluster, namespace="default", name="db-0", node_name="n1")
    services.workload_sync(**sync)
    assert [p.name for p in pods_of(cluster)] == ["db-0", "db-1"]


def test_a_parallel_statefulset_gets_its_ordinals(cluster: Cluster) -> None:
    services.manifests_apply(
        cluster=cluster,
        text=workload(
            "StatefulSet", "db", replicas=2, serviceName="db", podManagementPolicy="Parallel"
        ),
    )
    assert [p.name for p in pods_of(cluster)] == ["db-0", "db-1"]
    services.workload_scale(
        cluster=cluster, kind="StatefulSet", namespace="default", name="db", replicas=1
    )
    assert [p.name for p in pods_of(cluster)] == ["db-0"]
    assert StatefulSet.objects.get(cluster=cluster).manifest["spec"]["replicas"] == 1


def test_scaling_up_creates_pods_with_new_names(cluster: Cluster) -> None:
    services.manifests_apply(cluster=cluster, text=workload("ReplicaSet", "rs", replicas=2))
    before = {p.name for p in pods_of(cluster)}
    services.workload_scale(
        cluster=cluster, kind="ReplicaSet", namespace="default", name="rs", replicas=4
    )
    after = {p.name for p in pods_of(cluster)}
    assert before < after and len(after) == 4


def _bind(pod: Pod, node: str, **annotations: str) -> None:
    manifest = dict(pod.manifest)
    metadata = dict(manifest["metadata"])
    metadata["annotations"] = {**metadata.get("annotations", {}), **annotations}
    manifest["metadata"] = metadata
    manifest["spec"] = {**manifest["spec"], "nodeName": node}
    Pod.objects.filter(pk=pod.pk).update(node_name=node, manifest=manifest)


def _scale(cluster: Cluster, kind: str, name: str, replicas: int) -> list[str]:
    """Scales the workload; the pods deleted, in the order their deletions were written."""
    before = Change.objects.filter(cluster=cluster, type=Change.Type.DELETED).count()
    services.workload_scale(
        cluster=cluster, kind=kind, namespace="default", name=name, replicas=replicas
    )
    deleted = Change.objects.filter(cluster=cluster, type=Change.Type.DELETED, kind="Pod")
    return [c.name for c in deleted.order_by("id")][before:]


def test_scaling_a_deployment_down_deletes_pending_pods_first(cluster: Cluster) -> None:
    services.manifests_apply(cluster=cluster, text=workload("Deployment", "web", replicas=4))
    first, second, third, fourth = pods_of(cluster)
    _bind(first, "n1")
    _bind(third, "n2")
    assert set(_scale(cluster, "Deployment", "web", 2)) == {second.name, fourth.name}
    assert {p.name for p in pods_of(cluster)} == {first.name, third.name}
    assert ReplicaSet.objects.get(cluster=cluster).manifest["spec"]["replicas"] == 2


def test_scaling_down_deletes_a_pod_doubled_up_on_a_node_before_one_alone(
    cluster: Cluster,
) -> None:
    # getPodsToDelete ranks a pod by how many of its related pods share its node.
    services.manifests_apply(cluster=cluster, text=workload("ReplicaSet", "rs", replicas=3))
    a, b, alone = pods_of(cluster)
    _bind(a, "n1")
    _bind(b, "n1")
    _bind(alone, "n2")
    (deleted,) = _scale(cluster, "ReplicaSet", "rs", 2)
    assert deleted in (a.name, b.name)


def test_scaling_down_deletes_the_lowest_pod_deletion_cost_first(cluster: Cluster) -> None:
    services.manifests_apply(cluster=cluster, text=workload("ReplicaSet", "rs", replicas=3))
    cheap, dear, dearer = pods_of(cluster)
    cost = "controller.kubernetes.io/pod-deletion-cost"
    _bind(cheap, "n1", **{cost: "-5"})
    _bind(dear, "n2", **{cost: "10"})
    _bind(dearer, "n3", **{cost: "20"})
    assert _scale(cluster, "ReplicaSet", "rs", 1) == [cheap.name, dear.name]


def test_scaling_down_deletes_the_newest_first_on_a_logarithmic_scale(cluster: Cluster) -> None:
    # LogarithmicScaleDown: ages compared by the power of two they fall in (the uids break
    # the ties within one); a pod's creationTimestamp is its manifest's when it has one.
    services.manifests_apply(cluster=cluster, text=workload("ReplicaSet", "rs", replicas=3))
    newest, newer, old = pods_of(cluster)  # the first made is given the newest timestamp
    now = datetime.now(UTC)
    for pod, age in ((old, 86_400), (newer, 600), (newest, 5)):
        manifest = dict(pod.manifest)
        stamp = (now - timedelta(seconds=age)).isoformat()
        manifest["metadata"] = {**manifest["metadata"], "creationTimestamp": stamp}
        Pod.objects.filter(pk=pod.pk).update(manifest=manifest)
        _bind(Pod.objects.get(pk=pod.pk), f"n-{pod.pk}")
    assert _scale(cluster, "ReplicaSet", "rs", 1) == [newest.name, newer.name]


def test_deleting_a_deployment_deletes_its_replica_set_and_pods(cluster: Cluster) -> None:
    services.manifests_apply(cluster=cluster, text=workload("Deployment", "web"))
    deleted = services.objects_delete(
        cluster=cluster, refs=[services.ObjectRef("Deployment", "web", "default")]
    )
    assert [d.kind for d in deleted] == ["Deployment", "ReplicaSet", "Pod", "Pod", "Pod"]
    assert not pods_of(cluster)
    assert not ReplicaSet.objects.filter(cluster=cluster).exists()


def test_scale_refuses_bad_input_and_saves_nothing(cluster: Cluster) -> None:
    services.manifests_apply(cluster=cluster, text=workload("ReplicaSet", "rs", replicas=1))
    changes = Change.objects.filter(cluster=cluster).count()
    with pytest.raises(ServiceError, match=r"spec\.replicas"):
        services.workload_scale(
            cluster=cluster, kind="ReplicaSet", namespace="default", name="rs", replicas=-1
        )
    with pytest.raises(ServiceError, match="cannot be scaled"):
        services.workload_scale(
            cluster=cluster, kind="DaemonSet", namespace="default", name="rs", replicas=1
        )
    with pytest.raises(services.ObjectNotFound, match='"nope" not found'):
        services.workload_scale(
            cluster=cluster, kind="ReplicaSet", namespace="default", name="nope", replicas=1
        )
    assert Change.objects.filter(cluster=cluster).count() == changes


def test_a_replica_set_a_deployment_manages_is_scaled_only_through_it(cluster: Cluster) -> None:
    services.manifests_apply(cluster=cluster, text=workload("Deployment", "web", replicas=1))
    replica_set = ReplicaSet.objects.get(cluster=cluster)
    changes = Change.objects.filter(cluster=cluster).count()
    with pytest.raises(services.Conflict) as caught:
        services.workload_scale(
            cluster=cluster,
            kind="ReplicaSet",
            namespace="default",
            name=replica_set.name,
            replicas=4,
        )
    assert caught.value.errors == [
        f"ReplicaSet default/{replica_set.name} is managed by Deployment default/web: "
        "scale the Deployment"
    ]
    assert Change.objects.filter(cluster=cluster).count() == changes
    assert len(pods_of(cluster)) == 1
    # A ReplicaSet of its own scales as before.
    services.manifests_apply(cluster=cluster, text=workload("ReplicaSet", "alone", replicas=1))
    services.workload_scale(
        cluster=cluster, kind="ReplicaSet", namespace="default", name="alone", replicas=2
    )
    assert len(pods_of(cluster)) == 3


def test_an_invalid_workload_saves_nothing(cluster: Cluster) -> None:
    text = workload("Deployment", "web") + "---\n" + workload("Deployment", "Bad_Name")
    with pytest.raises(ServiceError):
        services.manifests_apply(cluster=cluster, text=text)
    assert not Change.objects.filter(cluster=cluster).exists()
    assert not pods_of(cluster)


def test_services_are_stored(cluster: Cluster) -> None:
    text = yaml.safe_dump(
        {
            "apiVersion": "v1",
            "kind": "Service",
            "metadata": {"name": "web"},
            "spec": {"selector": {"app": "web"}, "ports": [{"port": 80}]},
        }
    )
    assert services.manifests_apply(cluster=cluster, text=text).lines == ["service/web created"]


def test_an_exported_cluster_applied_again_gets_no_second_set_of_pods(cluster: Cluster) -> None:
    services.manifests_apply(cluster=cluster, text=workload("Deployment", "web"))
    exported = services.cluster_export_yaml(cluster=cluster)
    copy = services.cluster_create(name="copy")
    services.manifests_apply(cluster=copy, text=exported)
    assert sorted(p.name for p in pods_of(copy)) == sorted(p.name for p in pods_of(cluster))
    assert ReplicaSet.objects.filter(cluster=copy).count() == 1


def test_replicas_past_the_pod_limit_are_refused_before_any_pod_is_made(
    cluster: Cluster, settings: Any
) -> None:
    settings.SCHEDVIZ_MAX_PODS_PER_CLUSTER = 10
    with pytest.raises(ServiceError) as caught:
        services.manifests_apply(cluster=cluster, text=workload("Deployment", "web", 2**31 - 1))
    assert caught.value.errors == [
        'Deployment "web": spec.replicas: Invalid value: 2147483647: more pods than a cluster '
        "may hold (10, SCHEDVIZ_MAX_PODS_PER_CLUSTER)"
    ]
    assert not Change.objects.filter(cluster=cluster).exists()


@pytest.mark.parametrize(
    ("status", "pods"),
    [
        pytest.param({"succeeded": 1, "conditions": [{"type": "Complete", "status": "True"}]}, 0),
        pytest.param({"failed": 7, "conditions": [{"type": "Failed", "status": "True"}]}, 0),
        pytest.param({"succeeded": 2}, 1),
    ],
)
def test_a_finished_or_counted_job_gets_no_new_pods(
    cluster: Cluster, status: dict[str, Any], pods: int
) -> None:
    """Issue 22: a dumped Job whose status is Complete (or Failed) gets no pod; the successes
    it counted are taken off its completions."""
    job = {
        "apiVersion": "batch/v1",
        "kind": "Job",
        "metadata": {"name": "done"},
        "spec": {
            "completions": 3,
            "parallelism": 3,
            "template": {
                "spec": {
                    "restartPolicy": "Never",
                    "containers": [{"name": "c", "image": "busybox"}],
                }
            },
        },
        "status": status,
    }
    services.manifests_apply(cluster=cluster, text=yaml.safe_dump(job))
    assert len(pods_of(cluster)) == pods
