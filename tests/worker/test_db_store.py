"""DatabaseStore: the change log as a watch; the scheduler's writes go to the database."""

from __future__ import annotations

import time
from typing import Any

import pytest
from runner_fixtures import manifests

from schedviz.cluster import services
from schedviz.cluster.models import Change, Cluster, Event
from schedviz.cluster.models import Pod as PodRow
from schedviz.kube.decode import decode_object
from schedviz.kube.objects import Pod, PodCondition
from worker import db_store
from worker.db_store import DatabaseStore

pytestmark = pytest.mark.django_db(transaction=True)

Seen = list[tuple[str, Any, Any]]


@pytest.fixture(autouse=True)
def _no_runners(settings: Any) -> None:
    settings.SCHEDVIZ_START_RUNNERS = False


def watched(cluster: Cluster) -> tuple[DatabaseStore, Seen]:
    store = DatabaseStore(cluster)
    store.list_cluster()
    seen: Seen = []
    store.watch(lambda kind, old, new: seen.append((kind, old, new)))
    return store, seen


def new_cluster(nodes: int = 1, pods: int = 1) -> Cluster:
    cluster = services.cluster_create(name="c")
    services.manifests_apply(cluster=cluster, text=manifests(nodes, pods))
    return cluster


def test_listing_loads_every_object_and_tells_no_one() -> None:
    cluster = new_cluster(2, 3)
    store, seen = watched(cluster)
    assert sorted(n.name for n in store.list_objects("Node")) == ["node-0", "node-1"]
    assert sorted(p.key for p in store.pods()) == [
        "default/pod-0",
        "default/pod-1",
        "default/pod-2",
    ]
    assert seen == []
    assert store.last_change_id == Change.objects.filter(cluster=cluster).latest("id").id


def test_following_delivers_added_modified_and_deleted_with_old_and_new() -> None:
    cluster = new_cluster(1, 0)
    store, seen = watched(cluster)
    services.manifests_apply(cluster=cluster, text=manifests(0, 1))
    services.node_update(cluster=cluster, name="node-0", labels={"zone": "a"})
    services.pod_delete(cluster=cluster, namespace="default", name="pod-0")
    assert store.follow() == 3
    (added, _, pod), (modified, old_node, new_node), (deleted, gone, none) = seen
    assert (added, pod.key) == ("ADDED", "default/pod-0")
    assert (modified, old_node.labels, new_node.labels) == ("MODIFIED", {}, {"zone": "a"})
    assert (deleted, gone.key, none) == ("DELETED", "default/pod-0", None)
    assert store.get("Pod", "default/pod-0") is None
    assert store.follow() == 0


def test_the_schedulers_writes_come_back_only_through_the_log() -> None:
    cluster = new_cluster(1, 1)
    store, seen = watched(cluster)
    pod = store.get("Pod", "default/pod-0")
    assert store.bind(pod, "node-0") is None
    assert store.get("Pod", "default/pod-0").node_name == ""
    store.follow()
    ((event, old, new),) = seen
    assert (event, old.node_name, new.node_name) == ("MODIFIED", "", "node-0")
    assert [c.type for c in new.conditions] == ["PodScheduled"]


def count_decodes(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """The kinds of the manifests the store decodes from now on."""
    decoded: list[str] = []
    real = db_store.decode_object

    def decode(manifest: dict[str, Any]) -> Any:
        decoded.append(manifest["kind"])
        return real(manifest)

    monkeypatch.setattr(db_store, "decode_object", decode)
    return decoded


def as_stored(cluster: Cluster, name: str) -> Pod:
    """The pod decoded from its row, as a fresh list would have it."""
    pod = decode_object(PodRow.objects.get(cluster=cluster, name=name).manifest)
    assert isinstance(pod, Pod)
    return pod


def test_the_runners_own_bind_comes_back_without_decoding_its_manifest(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    cluster = new_cluster(1, 1)
    store, seen = watched(cluster)
    decoded = count_decodes(monkeypatch)
    assert store.bind(store.get("Pod", "default/pod-0"), "node-0") is None
    assert store.follow() == 1
    assert decoded == []
    ((event, old, new),) = seen
    assert (event, old.node_name) == ("MODIFIED", "")
    stored = as_stored(cluster, "pod-0")
    assert new == stored and new.manifest == stored.manifest
    assert new.conditions == (PodCondition("PodScheduled", "True"),)


def test_a_foreign_change_after_the_runners_bind_is_decoded_and_applied(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    cluster = new_cluster(1, 1)
    store, _ = watched(cluster)
    decoded = count_decodes(monkeypatch)
    assert store.bind(store.get("Pod", "default/pod-0"), "node-0") is None
    services.pod_update_status(
        cluster=cluster,
        namespace="default",
        name="pod-0",
        condition={"type": "Ready", "status": "True"},
        nominated_node_name=None,
    )
    assert store.follow() == 2
    assert decoded == ["Pod"]
    pod = store.get("Pod", "default/pod-0")
    assert pod == as_stored(cluster, "pod-0")
    assert (pod.node_name, [c.type for c in pod.conditions]) == (
        "node-0",
        ["PodScheduled", "Ready"],
    )


def test_the_runners_bind_of_a_pod_changed_since_it_was_cached_is_decoded() -> None:
    cluster = new_cluster(1, 1)
    store, _ = watched(cluster)
    cached = store.get("Pod", "default/pod-0")
    # A foreign change the store has not followed yet: the bind starts from it.
    services.pod_update_status(
        cluster=cluster,
        namespace="default",
        name="pod-0",
        condition={"type": "Ready", "status": "True"},
        nominated_node_name=None,
    )
    assert store.bind(cached, "node-0") is None
    foreign, bind = Change.objects.filter(cluster=cluster, kind="Pod").order_by("-id")[:2][::-1]
    # The bind's row arrives first (the foreign one committed late, say).
    store._apply_change(bind)
    pod = store.get("Pod", "default/pod-0")
    assert pod == as_stored(cluster, "pod-0")
    assert [c.type for c in pod.conditions] == ["Ready", "PodScheduled"]
    store._apply_change(foreign)
    assert store.get("Pod", "default/pod-0") is pod


def test_a_status_update_returns_the_updated_pod_and_the_log_delivers_it() -> None:
    cluster = new_cluster(1, 1)
    store, seen = watched(cluster)
    pod = store.get("Pod", "default/pod-0")
    condition = PodCondition("PodScheduled", "False", "Unschedulable", "0/1 nodes are available")
    updated = store.update_pod_status(pod, condition, "node-0")
    assert isinstance(updated, Pod)
    assert (updated.nominated_node_name, updated.conditions) == ("node-0", (condition,))
    store.follow()
    assert seen[0][2].nominated_node_name == "node-0"


def test_deleting_a_victim_goes_through_the_services() -> None:
    cluster = new_cluster(1, 1)
    store, seen = watched(cluster)
    victim = store.get("Pod", "default/pod-0")
    assert store.delete("Pod", victim.key) is victim
    store.follow()
    assert [(e, old.key) for e, old, _ in seen] == [("DELETED", "default/pod-0")]
    with pytest.raises(LookupError):
        store.delete("Pod", victim.key)


def test_events_wait_for_the_runners_batch() -> None:
    cluster = new_cluster(1, 1)
    store, _ = watched(cluster)
    store.now = lambda: 4.5
    pod = store.get("Pod", "default/pod-0")
    store.record_event("Normal", "Scheduled", pod, "Successfully assigned default/pod-0 to node-0")
    assert Event.objects.count() == 0
    (event,) = store.take_events()
    assert (event.object, event.time) == ("default/pod-0", 4.5)
    assert store.take_events() == []


def test_a_change_listed_already_is_not_delivered_again() -> None:
    cluster = new_cluster(1, 0)
    store = DatabaseStore(cluster)
    # The log position is read before the rows: a write in between is both listed and followed.
    store.list_cluster()
    store.last_change_id = 0
    seen: Seen = []
    store.watch(lambda *event: seen.append(event))
    assert store.follow() == 1
    assert seen == []


def test_a_change_committed_after_a_later_one_is_still_delivered(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(db_store, "LATE_COMMIT_CHECK_SECONDS", 0.0)
    cluster = new_cluster(1, 0)
    other = services.cluster_create(name="other")
    store, seen = watched(cluster)
    # An id taken by a transaction that has not committed yet...
    slow = Change.objects.create(cluster=other, kind="Node", name="x", type="ADDED", manifest={})
    late_id = slow.id
    slow.delete()
    # ...while a later one commits and is followed.
    services.node_update(cluster=cluster, name="node-0", labels={"zone": "a"})
    store.follow()
    assert [e for e, _, _ in seen] == ["MODIFIED"]
    manifest = {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": "late", "namespace": "default"},
        "spec": {"containers": [{"name": "c", "image": "busybox"}]},
    }
    Change(
        id=late_id,
        cluster=cluster,
        kind="Pod",
        namespace="default",
        name="late",
        type="ADDED",
        manifest=manifest,
    ).save(force_insert=True)
    time.sleep(0.01)
    assert store.follow() == 1
    assert [(e, new.key) for e, _, new in seen[1:]] == [("ADDED", "default/late")]
    assert store.follow() == 0


def reserved_change_id() -> int:
    """An id of the Change sequence, as a transaction that has not committed yet holds it."""
    other = services.cluster_create(name="reserves-ids")
    row = Change.objects.create(cluster=other, kind="Node", name="x", type="ADDED", manifest={})
    reserved = row.id
    row.delete()
    return reserved


def commit_late(change_id: int, cluster: Cluster, kind: str, name: str, manifest: Any) -> None:
    """The slow transaction commits: its row lands below rows already followed."""
    namespace = "default" if kind == "Pod" else ""
    Change(
        id=change_id,
        cluster=cluster,
        kind=kind,
        namespace=namespace,
        name=name,
        type="MODIFIED",
        manifest=manifest,
    ).save(force_insert=True)


def test_a_change_delivered_twice_is_applied_once() -> None:
    cluster = new_cluster(1, 1)
    store, seen = watched(cluster)
    services.node_update(cluster=cluster, name="node-0", labels={"zone": "a"})
    pod = store.get("Pod", "default/pod-0")
    assert store.bind(pod, "node-0") is None
    assert store.follow() == 2
    assert [e for e, _, _ in seen] == ["MODIFIED", "MODIFIED"]
    # The same rows again (a watch that resumes from an older position).
    store.last_change_id -= 2
    assert store.follow() == 2
    assert len(seen) == 2
    assert store.get("Pod", "default/pod-0").node_name == "node-0"


def test_a_stale_modification_behind_a_newer_one_is_not_applied(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(db_store, "LATE_COMMIT_CHECK_SECONDS", 0.0)
    cluster = new_cluster(1, 0)
    store, seen = watched(cluster)
    late_id = reserved_change_id()
    services.node_update(cluster=cluster, name="node-0", labels={"zone": "b"})
    store.follow()
    stale = store.get("Node", "node-0")
    manifest = {
        "apiVersion": "v1",
        "kind": "Node",
        "metadata": {"name": "node-0", "labels": {"zone": "a"}},
        "status": {"allocatable": {"cpu": "4"}},
    }
    commit_late(late_id, cluster, "Node", "node-0", manifest)
    time.sleep(0.01)
    assert store.follow() == 1
    assert len(seen) == 1
    assert store.get("Node", "node-0") is stale
    assert stale.labels == {"zone": "b"}


def test_a_stale_modification_of_a_deleted_pod_does_not_bring_it_back(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(db_store, "LATE_COMMIT_CHECK_SECONDS", 0.0)
    cluster = new_cluster(1, 1)
    store, seen = watched(cluster)
    manifest = PodRow.objects.get(cluster=cluster, name="pod-0").manifest
    late_id = reserved_change_id()
    services.pod_delete(cluster=cluster, namespace="default", name="pod-0")
    store.follow()
    assert [e for e, _, _ in seen] == ["DELETED"]
    commit_late(late_id, cluster, "Pod", "pod-0", manifest)
    time.sleep(0.01)
    assert store.follow() == 1
    assert [e for e, _, _ in seen] == ["DELETED"]
    assert store.get("Pod", "default/pod-0") is None
    assert list(store.pods()) == []
