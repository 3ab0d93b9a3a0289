"""Services: every write validated whole, one Change row per object change, nothing half-saved."""

from __future__ import annotations

from typing import Any
from unittest import mock

import pytest
import yaml
from django.db import transaction
from services_helpers import a_trace, docs, node, pod, pod_manifest

from schedviz.cluster import services
from schedviz.cluster.models import (
    Change,
    Cluster,
    Cycle,
    Event,
    Lease,
    Namespace,
    Node,
    Pod,
    PriorityClass,
    Profile,
)
from schedviz.cluster.services import (
    BindConflict,
    Conflict,
    ObjectNotFound,
    ObjectRef,
    ServiceError,
)
from schedviz.demo import DEMO_CLUSTER
from schedviz.kube.objects import PersistentVolume, PersistentVolumeClaim
from schedviz.scheduler.store import Event as SchedulerEvent

pytestmark = pytest.mark.django_db


@pytest.fixture(autouse=True)
def _no_runners(settings: Any) -> None:
    settings.SCHEDVIZ_START_RUNNERS = False


@pytest.fixture
def cluster() -> Cluster:
    return services.cluster_create(name="test")


def counts(cluster: Cluster) -> tuple[int, ...]:
    return (
        Node.objects.filter(cluster=cluster).count(),
        Pod.objects.filter(cluster=cluster).count(),
        PriorityClass.objects.filter(cluster=cluster).count(),
        Change.objects.filter(cluster=cluster).count(),
        Profile.objects.filter(cluster=cluster).count(),
    )


HIGH = """
apiVersion: scheduling.k8s.io/v1
kind: PriorityClass
metadata: {name: high}
value: 1000
"""

CONFIG = """
apiVersion: kubescheduler.config.k8s.io/v1
kind: KubeSchedulerConfiguration
percentageOfNodesToScore: 50
profiles:
- schedulerName: default-scheduler
- schedulerName: bin-packer
  plugins:
    score:
      disabled: [{name: NodeResourcesBalancedAllocation}]
"""


# --------------------------------------------------------------------------------- clusters


def test_cluster_create_uses_defaults() -> None:
    created = services.cluster_create(name="a")
    assert created.clock_mode == Cluster.ClockMode.LIVE
    assert created.run_state == Cluster.RunState.RUNNING
    assert created.speed == 1.0


def test_cluster_create_refuses_a_name_taken_by_the_same_owner() -> None:
    services.cluster_create(name="a")
    with pytest.raises(Conflict, match='clusters "a" already exists'):
        services.cluster_create(name="a")


def test_cluster_create_refuses_bad_fields() -> None:
    with pytest.raises(ServiceError) as caught:
        services.cluster_create(name=" ", clock_mode="sundial", speed=0)
    assert len(caught.value.errors) == 3
    assert Cluster.objects.count() == 0


def test_run_state_step_speed_and_clock(cluster: Cluster) -> None:
    services.cluster_set_run_state(cluster=cluster, run_state="paused")
    services.cluster_step(cluster=cluster)
    services.cluster_step(cluster=cluster)
    cluster.refresh_from_db()
    assert (cluster.run_state, cluster.pending_steps) == ("paused", 2)
    services.cluster_set_speed(cluster=cluster, speed=10)
    services.cluster_set_clock_mode(cluster=cluster, clock_mode="virtual")
    cluster.refresh_from_db()
    assert (cluster.speed, cluster.clock_mode) == (10, "virtual")
    with pytest.raises(ServiceError):
        services.cluster_set_speed(cluster=cluster, speed=-1)
    with pytest.raises(ServiceError):
        services.cluster_set_run_state(cluster=cluster, run_state="sleeping")


def test_cluster_reset_keeps_profiles_only(cluster: Cluster) -> None:
    services.manifests_apply(cluster=cluster, text=docs(node("n1"), pod("p1"), CONFIG))
    services.cycles_create(cluster=cluster, traces=[a_trace(1, "default/p1")])
    Lease.objects.create(cluster=cluster, holder="me")
    services.cluster_reset(cluster=cluster)
    assert counts(cluster) == (0, 0, 0, 0, 2)
    assert not Cycle.objects.filter(cluster=cluster).exists()
    assert not Lease.objects.filter(cluster=cluster).exists()


def test_cluster_delete_deletes_everything(cluster: Cluster) -> None:
    services.manifests_apply(cluster=cluster, text=docs(node("n1"), pod("p1"), CONFIG))
    services.cluster_delete(cluster=cluster)
    assert not Cluster.objects.exists()
    assert not Node.objects.exists() and not Change.objects.exists()


# --------------------------------------------------------------------------------- apply


def test_apply_creates_objects_with_one_change_each(cluster: Cluster) -> None:
    result = services.manifests_apply(cluster=cluster, text=docs(node("n1"), node("n2"), pod("p1")))
    assert result.lines == ["node/n1 created", "node/n2 created", "pod/p1 created"]
    changes = list(Change.objects.filter(cluster=cluster))
    assert [(c.kind, c.name, c.type) for c in changes] == [
        ("Node", "n1", "ADDED"),
        ("Node", "n2", "ADDED"),
        ("Pod", "p1", "ADDED"),
    ]
    assert changes[0].id < changes[1].id < changes[2].id
    stored = Pod.objects.get(cluster=cluster, name="p1")
    assert stored.resource_version == changes[2].id
    assert stored.manifest == changes[2].manifest
    assert stored.manifest["metadata"]["namespace"] == "default"
    assert stored.phase == "Pending" and stored.node_name == ""
    assert Node.objects.get(cluster=cluster, name="n2").resource_version == changes[1].id


def test_apply_again_is_unchanged_and_a_change_is_configured(cluster: Cluster) -> None:
    services.manifests_apply(cluster=cluster, text=docs(node("n1"), pod("p1")))
    again = services.manifests_apply(cluster=cluster, text=docs(node("n1"), pod("p1")))
    assert again.lines == ["node/n1 unchanged", "pod/p1 unchanged"]
    assert Change.objects.filter(cluster=cluster).count() == 2
    changed = services.manifests_apply(cluster=cluster, text=node("n1", cpu="8"))
    assert changed.lines == ["node/n1 configured"]
    last = Change.objects.filter(cluster=cluster).last()
    assert last is not None and (last.type, last.name) == ("MODIFIED", "n1")
    assert Node.objects.get(cluster=cluster, name="n1").resource_version == last.id


def test_apply_admits_pods_with_classes_stored_and_given(cluster: Cluster) -> None:
    services.manifests_apply(cluster=cluster, text=HIGH)
    low = "apiVersion: scheduling.k8s.io/v1\nkind: PriorityClass\nmetadata: {name: low}\nvalue: 5\n"
    services.manifests_apply(
        cluster=cluster,
        text=docs(low, pod("a", priorityClassName="high"), pod("b", priorityClassName="low")),
    )
    a = Pod.objects.get(cluster=cluster, name="a")
    assert a.priority == 1000
    assert a.manifest["spec"]["priority"] == 1000
    assert a.manifest["spec"]["preemptionPolicy"] == "PreemptLowerPriority"
    assert Pod.objects.get(cluster=cluster, name="b").priority == 5


def test_apply_refuses_unknown_priority_class_and_saves_nothing(cluster: Cluster) -> None:
    with pytest.raises(ServiceError) as caught:
        services.manifests_apply(
            cluster=cluster, text=docs(node("n1"), pod("a", priorityClassName="nope"))
        )
    assert caught.value.errors == [
        'document 2 of <input>: pods "a" is forbidden: no PriorityClass with name nope was found'
    ]
    assert counts(cluster) == (0, 0, 0, 0, 0)


def test_apply_with_one_bad_document_among_good_ones_saves_nothing(cluster: Cluster) -> None:
    services.manifests_apply(cluster=cluster, text=node("n0"))
    before = counts(cluster)
    bad_pod = pod("bad")
    bad_pod = bad_pod.replace("name: c", "name: C_")
    with pytest.raises(ServiceError) as caught:
        services.manifests_apply(
            cluster=cluster,
            text=docs(node("n1"), bad_pod, pod("good"), "apiVersion: v2\nkind: Node\n"),
        )
    errors = caught.value.errors
    assert len(errors) == 2
    assert errors[0].startswith('document 2 of <input>: Pod "bad" is invalid: ')
    assert 'no matches for kind "Node" in version "v2"' in errors[1]
    assert counts(cluster) == before


def test_apply_refuses_a_second_global_default(cluster: Cluster) -> None:
    default = (
        "apiVersion: scheduling.k8s.io/v1\nkind: PriorityClass\n"
        "metadata: {name: %s}\nvalue: 1\nglobalDefault: true\n"
    )
    services.manifests_apply(cluster=cluster, text=default % "one")
    with pytest.raises(ServiceError, match="already marked as default"):
        services.manifests_apply(cluster=cluster, text=default % "two")
    assert PriorityClass.objects.filter(cluster=cluster).count() == 1


def test_apply_scheduler_configuration_replaces_profiles(cluster: Cluster) -> None:
    result = services.manifests_apply(cluster=cluster, text=CONFIG)
    assert result.lines == ["kubeschedulerconfiguration.kubescheduler.config.k8s.io configured"]
    profiles = list(Profile.objects.filter(cluster=cluster))
    assert [p.scheduler_name for p in profiles] == ["default-scheduler", "bin-packer"]
    cluster.refresh_from_db()
    assert cluster.scheduler_settings == {"percentageOfNodesToScore": 50}
    again = services.manifests_apply(cluster=cluster, text=CONFIG)
    assert again.scheduler_config == "unchanged"
    one = "apiVersion: kubescheduler.config.k8s.io/v1\nkind: KubeSchedulerConfiguration\n"
    services.manifests_apply(cluster=cluster, text=one)
    assert not Profile.objects.filter(cluster=cluster).exists()


def test_apply_refuses_a_bad_scheduler_configuration(cluster: Cluster) -> None:
    bad = CONFIG.replace(
        "disabled: [{name: NodeResourcesBalancedAllocation}]", "enabled: [{name: NoSuchPlugin}]"
    )
    with pytest.raises(ServiceError) as caught:
        services.manifests_apply(cluster=cluster, text=docs(node("n1"), bad))
    assert any("NoSuchPlugin" in e for e in caught.value.errors)
    assert all(e.startswith("KubeSchedulerConfiguration: ") for e in caught.value.errors)
    assert counts(cluster) == (0, 0, 0, 0, 0)
    with pytest.raises(ServiceError, match="at most one KubeSchedulerConfiguration"):
        services.manifests_apply(cluster=cluster, text=docs(CONFIG, CONFIG))


def test_apply_imports_kubectl_get_output(cluster: Cluster) -> None:
    listing = {
        "apiVersion": "v1",
        "kind": "List",
        "items": [
            {
                **yaml.safe_load(node("n1")),
                "metadata": {"name": "n1", "resourceVersion": "123", "uid": "u-1"},
            },
            {
                **pod_manifest("web", nodeName="n1", priority=0),
                "status": {"phase": "Running", "conditions": [{"type": "Ready", "status": "True"}]},
            },
        ],
        "metadata": {"resourceVersion": ""},
    }
    result = services.manifests_apply(cluster=cluster, text=yaml.safe_dump(listing))
    assert result.lines == ["node/n1 created", "pod/web created"]
    web = Pod.objects.get(cluster=cluster, name="web")
    assert (web.node_name, web.phase) == ("n1", "Running")
    assert web.conditions == [{"type": "Ready", "status": "True"}]


def test_reapplying_a_bound_pods_file_keeps_it_bound(cluster: Cluster) -> None:
    services.manifests_apply(cluster=cluster, text=docs(node("n1"), pod("p1")))
    services.pod_bind(cluster=cluster, namespace="default", name="p1", node_name="n1")
    result = services.manifests_apply(cluster=cluster, text=pod("p1"))
    assert result.lines == ["pod/p1 unchanged"]
    assert Pod.objects.get(cluster=cluster, name="p1").node_name == "n1"


def test_apply_refuses_moving_a_bound_pod(cluster: Cluster) -> None:
    services.manifests_apply(cluster=cluster, text=docs(node("n1"), node("n2"), pod("p1")))
    services.pod_bind(cluster=cluster, namespace="default", name="p1", node_name="n1")
    before = counts(cluster)
    with pytest.raises(ServiceError) as caught:
        services.manifests_apply(cluster=cluster, text=docs(node("n3"), pod("p1", nodeName="n2")))
    assert caught.value.errors == [
        'Pod "p1" is invalid: spec.nodeName: Forbidden: pod updates may not change the node of '
        'a bound pod (bound to "n1")'
    ]
    assert counts(cluster) == before


def test_apply_refuses_kinds_the_cluster_cannot_store(cluster: Cluster) -> None:
    group = (
        "apiVersion: scheduling.x-k8s.io/v1alpha1\nkind: PodGroup\n"
        "metadata: {name: g}\nspec: {minMember: 2}\n"
    )
    with pytest.raises(ServiceError) as caught:
        services.manifests_apply(cluster=cluster, text=docs(node("n1"), group))
    assert caught.value.errors == ["PodGroup objects cannot be stored in a cluster (yet)"]
    assert counts(cluster) == (0, 0, 0, 0, 0)
    with pytest.raises(ObjectNotFound, match='resource type "PodGroup"'):
        services.manifests_delete(cluster=cluster, text=group)


def test_apply_files_judges_files_together(cluster: Cluster, tmp_path: Any) -> None:
    (tmp_path / "a.yaml").write_text(node("n1"))
    (tmp_path / "b.yaml").write_text(node("n1"))
    with pytest.raises(ServiceError, match='nodes "n1" already exists'):
        services.manifests_apply_files(
            cluster=cluster, paths=[str(tmp_path / "a.yaml"), str(tmp_path / "b.yaml")]
        )
    result = services.manifests_apply_files(cluster=cluster, paths=[str(tmp_path / "a.yaml")])
    assert result.lines == ["node/n1 created"]


def test_pod_create_refuses_an_existing_pod(cluster: Cluster) -> None:
    created = services.pod_create(cluster=cluster, manifest=pod_manifest("p1"))
    assert created.name == "p1"
    with pytest.raises(ServiceError, match='pods "p1" already exists'):
        services.pod_create(cluster=cluster, manifest=pod_manifest("p1"))
    with pytest.raises(ServiceError, match="is invalid"):
        services.pod_create(cluster=cluster, manifest=pod_manifest("p2", cpu="lots"))
    assert Change.objects.filter(cluster=cluster).count() == 1


# --------------------------------------------------------------------------------- delete


def test_manifests_delete_deletes_with_a_change_each(cluster: Cluster) -> None:
    services.manifests_apply(cluster=cluster, text=docs(node("n1"), pod("p1")))
    deleted = services.manifests_delete(cluster=cluster, text=docs(node("n1"), pod("p1")))
    assert [d.line for d in deleted] == ['node "n1" deleted', 'pod "p1" deleted']
    last_two = list(Change.objects.filter(cluster=cluster))[-2:]
    assert [(c.type, c.name) for c in last_two] == [("DELETED", "n1"), ("DELETED", "p1")]
    assert last_two[1].manifest["metadata"]["name"] == "p1"
    assert counts(cluster)[:2] == (0, 0)


def test_delete_of_a_missing_object_deletes_nothing(cluster: Cluster) -> None:
    services.manifests_apply(cluster=cluster, text=node("n1"))
    with pytest.raises(ObjectNotFound) as caught:
        services.manifests_delete(cluster=cluster, text=docs(node("n1"), pod("ghost")))
    assert caught.value.errors == ['pods "ghost" not found']
    assert Node.objects.filter(cluster=cluster).count() == 1
    services.manifests_delete(
        cluster=cluster, text=docs(node("n1"), pod("ghost")), ignore_not_found=True
    )
    assert not Node.objects.filter(cluster=cluster).exists()


def test_deleting_a_namespace_deletes_what_is_in_it(cluster: Cluster) -> None:
    ns = "apiVersion: v1\nkind: Namespace\nmetadata: {name: team}\n"
    in_team = pod_manifest("p1")
    in_team["metadata"]["namespace"] = "team"
    services.manifests_apply(cluster=cluster, text=docs(ns, yaml.safe_dump(in_team), pod("p2")))
    deleted = services.objects_delete(cluster=cluster, refs=[ObjectRef("Namespace", "team")])
    assert [d.line for d in deleted] == ['namespace "team" deleted', 'pod "p1" deleted']
    assert list(Pod.objects.filter(cluster=cluster).values_list("name", flat=True)) == ["p2"]
    assert not Namespace.objects.filter(cluster=cluster).exists()


def test_pod_delete(cluster: Cluster) -> None:
    services.manifests_apply(cluster=cluster, text=pod("p1"))
    services.pod_delete(cluster=cluster, namespace="default", name="p1")
    assert not Pod.objects.filter(cluster=cluster).exists()
    with pytest.raises(ObjectNotFound, match='pods "p1" not found'):
        services.pod_delete(cluster=cluster, namespace="default", name="p1")


# --------------------------------------------------------------------------------- nodes


def test_node_update_cordons_taints_and_labels(cluster: Cluster) -> None:
    services.manifests_apply(cluster=cluster, text=node("n1"))
    updated = services.node_update(
        cluster=cluster,
        name="n1",
        labels={"zone": "a"},
        taints=[{"key": "gpu", "value": "yes", "effect": "NoSchedule"}],
        unschedulable=True,
    )
    assert updated.unschedulable
    assert updated.labels == {"zone": "a"}
    assert updated.taints == [{"key": "gpu", "value": "yes", "effect": "NoSchedule"}]
    assert updated.manifest["spec"]["unschedulable"] is True
    last = Change.objects.filter(cluster=cluster).last()
    assert last is not None and last.type == "MODIFIED" and last.id == updated.resource_version
    services.node_update(cluster=cluster, name="n1", unschedulable=False, taints=[])
    row = Node.objects.get(cluster=cluster, name="n1")
    assert not row.unschedulable and row.taints == [] and "taints" not in row.manifest["spec"]


def test_node_update_refuses_invalid_taints(cluster: Cluster) -> None:
    services.manifests_apply(cluster=cluster, text=node("n1"))
    before = counts(cluster)
    with pytest.raises(ServiceError, match=r"taints\[0\].effect: Unsupported value"):
        services.node_update(cluster=cluster, name="n1", taints=[{"key": "k", "effect": "Never"}])
    assert counts(cluster) == before
    with pytest.raises(ObjectNotFound, match='nodes "n9" not found'):
        services.node_update(cluster=cluster, name="n9", unschedulable=True)


# --------------------------------------------------------------------------------- binding


def test_pod_bind_sets_node_and_condition(cluster: Cluster) -> None:
    services.manifests_apply(cluster=cluster, text=docs(node("n1"), pod("p1")))
    services.pod_bind(cluster=cluster, namespace="default", name="p1", node_name="n1")
    bound = Pod.objects.get(cluster=cluster, name="p1")
    assert bound.node_name == "n1"
    assert bound.manifest["spec"]["nodeName"] == "n1"
    assert {"type": "PodScheduled", "status": "True"} in bound.manifest["status"]["conditions"]
    assert {"type": "PodScheduled", "status": "True"} in bound.conditions
    last = Change.objects.filter(cluster=cluster).last()
    assert last is not None and (last.type, last.name) == ("MODIFIED", "p1")
    assert bound.resource_version == last.id
    assert last.manifest == bound.manifest


def test_second_bind_fails_with_the_api_servers_message(cluster: Cluster) -> None:
    services.manifests_apply(cluster=cluster, text=docs(node("n1"), node("n2"), pod("p1")))
    services.pod_bind(cluster=cluster, namespace="default", name="p1", node_name="n1")
    changes = Change.objects.count()
    with pytest.raises(BindConflict) as caught:
        services.pod_bind(cluster=cluster, namespace="default", name="p1", node_name="n2")
    assert str(caught.value) == (
        'Operation cannot be fulfilled on pods/binding "p1": '
        'pod p1 is already assigned to node "n1"'
    )
    assert Change.objects.count() == changes
    assert Pod.objects.get(cluster=cluster, name="p1").node_name == "n1"


def test_bind_that_loses_the_race_after_reading_fails_and_writes_nothing(cluster: Cluster) -> None:
    services.manifests_apply(cluster=cluster, text=docs(node("n1"), node("n2"), pod("p1")))
    stale = Pod.objects.get(cluster=cluster, name="p1")  # read before the other bind
    services.pod_bind(cluster=cluster, namespace="default", name="p1", node_name="n1")
    changes = Change.objects.count()
    with (
        mock.patch.object(services.updates, "_pod_for_update", return_value=stale),
        pytest.raises(BindConflict, match='already assigned to node "n1"'),
    ):
        services.pod_bind(cluster=cluster, namespace="default", name="p1", node_name="n2")
    assert Change.objects.count() == changes
    assert Pod.objects.get(cluster=cluster, name="p1").node_name == "n1"


def test_a_bind_that_loses_the_race_inside_a_transaction_leaves_the_transaction_usable(
    cluster: Cluster,
) -> None:
    # A runner's group commit binds many pods in one transaction without a savepoint per bind:
    # a bind that fails must write nothing and doom nothing, so the next bind commits.
    services.manifests_apply(cluster=cluster, text=docs(node("n1"), pod("p1"), pod("p2")))
    stale = Pod.objects.get(cluster=cluster, name="p1")
    services.pod_bind(cluster=cluster, namespace="default", name="p1", node_name="n1")
    changes = Change.objects.count()
    with transaction.atomic():
        with pytest.raises(BindConflict, match='already assigned to node "n1"'):
            services.pod_bind(
                cluster=cluster, namespace="default", name="p1", node_name="n1", row=stale
            )
        with pytest.raises(ObjectNotFound, match='nodes "gone" not found'):
            services.pod_bind(cluster=cluster, namespace="default", name="p2", node_name="gone")
        services.pod_bind(cluster=cluster, namespace="default", name="p2", node_name="n1")
    assert Change.objects.count() == changes + 1
    assert Pod.objects.get(cluster=cluster, name="p2").node_name == "n1"


def test_bind_of_a_row_read_before_another_change_reads_it_again_and_keeps_that_change(
    cluster: Cluster,
) -> None:
    services.manifests_apply(cluster=cluster, text=docs(node("n1"), pod("p1")))
    stale = services.pods_for_bind(cluster=cluster, keys=[("default", "p1")])[("default", "p1")]
    labelled = pod_manifest("p1")
    labelled["metadata"]["labels"] = {"tier": "web"}
    services.manifests_apply(cluster=cluster, text=yaml.safe_dump(labelled))
    binding = services.pod_bind(
        cluster=cluster, namespace="default", name="p1", node_name="n1", row=stale
    )
    bound = Pod.objects.get(cluster=cluster, name="p1")
    assert (bound.node_name, bound.manifest["metadata"]["labels"]) == ("n1", {"tier": "web"})
    assert binding.bound_from != stale.resource_version
    assert Change.objects.filter(cluster=cluster, name="p1", type="MODIFIED").count() == 2


def test_pods_for_bind_reads_the_rows_of_several_namespaces_at_once(cluster: Cluster) -> None:
    services.manifests_apply(
        cluster=cluster,
        text=docs(
            pod("p1"), pod("p2"), pod("p3").replace("name: p3", "name: p3\n  namespace: other")
        ),
    )
    rows = services.pods_for_bind(
        cluster=cluster, keys=[("default", "p1"), ("other", "p3"), ("default", "ghost")]
    )
    assert sorted(rows) == [("default", "p1"), ("other", "p3")]
    assert rows[("other", "p3")].resource_version > 0


def test_pods_for_bind_takes_a_known_manifest_only_at_the_rows_version(cluster: Cluster) -> None:
    services.manifests_apply(cluster=cluster, text=docs(pod("p1"), pod("p2")))
    stored = dict(Pod.objects.filter(cluster=cluster).values_list("name", "resource_version"))
    held = {"held": True}
    rows = services.pods_for_bind(
        cluster=cluster,
        keys=[("default", "p1"), ("default", "p2")],
        known={
            ("default", "p1"): (stored["p1"], held),
            ("default", "p2"): (stored["p2"] - 1, held),
        },
    )
    assert rows[("default", "p1")].manifest is held
    # Held at another version: the row's own manifest.
    assert rows[("default", "p2")].manifest == Pod.objects.get(cluster=cluster, name="p2").manifest


def test_bind_of_a_missing_pod_or_node(cluster: Cluster) -> None:
    services.manifests_apply(cluster=cluster, text=pod("p1"))
    with pytest.raises(ObjectNotFound, match='pods "ghost" not found'):
        services.pod_bind(cluster=cluster, namespace="default", name="ghost", node_name="n1")
    with pytest.raises(ObjectNotFound, match='nodes "n1" not found'):
        services.pod_bind(cluster=cluster, namespace="default", name="p1", node_name="n1")


def test_pod_update_status_writes_condition_and_nomination(cluster: Cluster) -> None:
    services.manifests_apply(cluster=cluster, text=pod("p1"))
    condition = {
        "type": "PodScheduled",
        "status": "False",
        "reason": "Unschedulable",
        "message": "0/0 nodes are available",
    }
    updated = services.pod_update_status(
        cluster=cluster,
        namespace="default",
        name="p1",
        condition=condition,
        nominated_node_name="n1",
    )
    assert updated is not None
    assert updated.conditions == [condition]
    assert updated.nominated_node_name == "n1"
    assert updated.manifest["status"] == {"conditions": [condition], "nominatedNodeName": "n1"}
    changes = Change.objects.count()
    same = services.pod_update_status(
        cluster=cluster,
        namespace="default",
        name="p1",
        condition=condition,
        nominated_node_name=None,
    )
    assert same is not None and Change.objects.count() == changes  # nothing changed
    services.pod_update_status(
        cluster=cluster, namespace="default", name="p1", condition=None, nominated_node_name=""
    )
    assert Pod.objects.get(cluster=cluster, name="p1").nominated_node_name == ""
    assert (
        services.pod_update_status(
            cluster=cluster, namespace="default", name="x", condition=None, nominated_node_name=""
        )
        is None
    )


def test_volume_binder_updates_land_in_manifests(cluster: Cluster) -> None:
    pv = {
        "apiVersion": "v1",
        "kind": "PersistentVolume",
        "metadata": {"name": "pv1"},
        "spec": {
            "capacity": {"storage": "1Gi"},
            "accessModes": ["ReadWriteOnce"],
            "hostPath": {"path": "/x"},
        },
    }
    pvc = {
        "apiVersion": "v1",
        "kind": "PersistentVolumeClaim",
        "metadata": {"name": "c1"},
        "spec": {"accessModes": ["ReadWriteOnce"], "resources": {"requests": {"storage": "1Gi"}}},
    }
    services.manifests_apply(cluster=cluster, text=docs(yaml.safe_dump(pv), yaml.safe_dump(pvc)))
    services.objects_apply_from_scheduler(
        cluster=cluster,
        objects=[
            PersistentVolume(name="pv1", claim_ref="default/c1", phase="Bound"),
            PersistentVolumeClaim(
                name="c1", volume_name="pv1", phase="Bound", annotations={"done": "yes"}
            ),
        ],
    )
    changes = list(Change.objects.filter(cluster=cluster))[-2:]
    assert [(c.kind, c.type) for c in changes] == [
        ("PersistentVolume", "MODIFIED"),
        ("PersistentVolumeClaim", "MODIFIED"),
    ]
    assert changes[0].manifest["spec"]["claimRef"] == {"namespace": "default", "name": "c1"}
    assert changes[0].manifest["status"] == {"phase": "Bound"}
    assert changes[1].manifest["spec"]["volumeName"] == "pv1"
    assert changes[1].manifest["metadata"]["annotations"] == {"done": "yes"}


# --------------------------------------------------------------------------------- records


def test_cycles_and_events_are_stored_in_bulk(cluster: Cluster) -> None:
    rows = services.cycles_create(
        cluster=cluster, traces=[a_trace(1, "default/p1"), a_trace(2, "team/p2", "n1")]
    )
    assert rows == 2
    second = Cycle.objects.get(cluster=cluster, number=2)
    assert (second.pod_namespace, second.pod_name, second.node) == ("team", "p2", "n1")
    assert second.trace() == a_trace(2, "team/p2", "n1")
    services.events_create(
        cluster=cluster,
        events=[SchedulerEvent("Normal", "Scheduled", "team/p2", "Successfully assigned", 1.5)],
    )
    event = Event.objects.get(cluster=cluster)
    assert (event.object_namespace, event.object_name, event.reason) == ("team", "p2", "Scheduled")


# --------------------------------------------------------------------------------- export


def test_export_applied_to_an_empty_cluster_reproduces_it(cluster: Cluster) -> None:
    services.manifests_apply(cluster=cluster, text=DEMO_CLUSTER.read_text())
    services.manifests_apply(
        cluster=cluster, text=docs(HIGH, pod("vip", priorityClassName="high"), CONFIG)
    )
    admission = (
        "apiVersion: v1\nkind: LimitRange\nmetadata: {name: limits}\nspec:\n  limits:\n"
        "  - type: Container\n    default: {memory: 64Mi}\n---\n"
        "apiVersion: node.k8s.io/v1\nkind: RuntimeClass\nmetadata: {name: kata}\n"
        "handler: kata\noverhead: {podFixed: {cpu: 250m}}\nscheduling: {nodeSelector: {rt: kata}}\n"
        "---\napiVersion: v1\nkind: ResourceQuota\nmetadata: {name: q}\n"
        'spec: {hard: {pods: "100"}}\n'
    )
    services.manifests_apply(
        cluster=cluster, text=docs(admission, pod("sandboxed", runtimeClassName="kata"))
    )
    sandboxed = Pod.objects.get(cluster=cluster, name="sandboxed").manifest
    assert sandboxed["spec"]["overhead"] == {"cpu": "250m"}
    assert sandboxed["spec"]["nodeSelector"] == {"rt": "kata"}
    assert sandboxed["spec"]["containers"][0]["resources"]["limits"] == {"memory": "64Mi"}
    first_node = Node.objects.filter(cluster=cluster).first()
    assert first_node is not None
    first_pod = Pod.objects.filter(cluster=cluster).first()
    assert first_pod is not None
    services.pod_bind(
        cluster=cluster,
        namespace=first_pod.namespace,
        name=first_pod.name,
        node_name=first_node.name,
    )
    exported = services.cluster_export_yaml(cluster=cluster)
    copy = services.cluster_create(name="copy")
    services.manifests_apply(cluster=copy, text=exported)

    def state(c: Cluster) -> Any:
        from schedviz.cluster.models import KIND_MODELS

        objects = {
            kind: sorted((r.key, r.manifest) for r in model._default_manager.filter(cluster=c))
            for kind, model in KIND_MODELS.items()
        }
        c.refresh_from_db()
        profiles = [(p.scheduler_name, p.config) for p in Profile.objects.filter(cluster=c)]
        return objects, profiles, c.scheduler_settings

    assert state(copy) == state(cluster)
    assert services.cluster_export_yaml(cluster=copy) == exported
    again = services.manifests_apply(cluster=copy, text=exported)
    assert {a.action for a in again.objects} == {"unchanged"}
