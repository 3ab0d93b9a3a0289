"""The StatefulSet controller over a store: ordinal order for OrderedReady and Parallel on
create, scale and delete; claims; the controller-revision-hash label."""

from __future__ import annotations

from schedviz.controllers.workloads import CONTROLLER_REVISION_HASH_LABEL
from tests.controllers.harness import NODE, start

STS = """
apiVersion: apps/v1
kind: StatefulSet
metadata: {name: db}
spec:
  replicas: %d
  podManagementPolicy: %s
  serviceName: db
  selector: {matchLabels: {app: db}}
  template:
    metadata: {labels: {app: db}}
    spec: {containers: [{name: c, image: postgres}]}
  volumeClaimTemplates:
  - metadata: {name: data}
    spec: {accessModes: [ReadWriteOnce], resources: {requests: {storage: 1Gi}}}
"""


def test_ordered_ready_scales_down_one_ordinal_at_a_time_from_the_highest() -> None:
    cluster = start(NODE % "n1" + "---\n" + STS % (3, "OrderedReady"))
    for _ in range(3):
        cluster.bind_all()
    assert cluster.names() == ["db-0", "db-1", "db-2"]
    cluster.apply(STS % (1, "OrderedReady"))
    # One deleted per sync; the deletion's event syncs again: db-2 then db-1.
    assert cluster.names() == ["db-0"]


def test_ordered_ready_waits_for_an_unready_pod_before_scaling_down() -> None:
    cluster = start(NODE % "n1" + "---\n" + STS % (2, "OrderedReady"))
    cluster.bind_all()
    cluster.bind_all()
    cluster.store.delete("Pod", "default/db-0")  # made again at once, not yet bound
    assert cluster.names() == ["db-0", "db-1"]
    cluster.apply(STS % (1, "OrderedReady"))
    assert cluster.names() == ["db-0", "db-1"]
    cluster.bind_all()
    assert cluster.names() == ["db-0"]


def test_parallel_creates_and_deletes_every_ordinal_at_once() -> None:
    cluster = start(NODE % "n1" + "---\n" + STS % (3, "Parallel"))
    assert cluster.names() == ["db-0", "db-1", "db-2"]
    cluster.apply(STS % (1, "Parallel"))
    assert cluster.names() == ["db-0"]
    cluster.apply(STS % (2, "Parallel"))
    assert cluster.names() == ["db-0", "db-1"]


def test_a_deleted_pod_comes_back_with_its_name_and_claim() -> None:
    cluster = start(NODE % "n1" + "---\n" + STS % (2, "Parallel"))
    cluster.store.delete("Pod", "default/db-1")
    assert cluster.names() == ["db-0", "db-1"]
    claims = sorted(c.name for c in cluster.store.list_objects("PersistentVolumeClaim"))
    assert claims == ["data-db-0", "data-db-1"]


def test_pods_carry_the_revision_name_of_the_set() -> None:
    cluster = start(NODE % "n1" + "---\n" + STS % (1, "Parallel"))
    (pod,) = cluster.pods()
    assert pod.labels[CONTROLLER_REVISION_HASH_LABEL].startswith("db-")
    assert len(pod.labels[CONTROLLER_REVISION_HASH_LABEL]) > len("db-")


def test_a_template_change_rolls_out_from_the_highest_ordinal_one_pod_at_a_time() -> None:
    cluster = start(NODE % "n1" + "---\n" + STS % (3, "Parallel"))
    cluster.bind_all()
    old = {p.name: p.labels[CONTROLLER_REVISION_HASH_LABEL] for p in cluster.pods()}
    cluster.apply((STS % (3, "Parallel")).replace("image: postgres", "image: postgres:17"))
    revisions = {p.name: p.labels[CONTROLLER_REVISION_HASH_LABEL] for p in cluster.pods()}
    assert revisions["db-2"] != old["db-2"]  # deleted and made again at the new revision
    assert revisions["db-1"] == old["db-1"]  # waits for db-2 to be healthy
    cluster.bind_all()
    assert cluster.get("Pod", "db-1").labels[CONTROLLER_REVISION_HASH_LABEL] != old["db-1"]
    cluster.bind_all()
    cluster.bind_all()
    assert len({p.labels[CONTROLLER_REVISION_HASH_LABEL] for p in cluster.pods()}) == 1
    assert all(p.node_name for p in cluster.pods())


def test_on_delete_leaves_the_pods_at_their_revision() -> None:
    on_delete = (STS % (2, "Parallel")).replace(
        "  serviceName: db", "  serviceName: db\n  updateStrategy: {type: OnDelete}"
    )
    cluster = start(NODE % "n1" + "---\n" + on_delete)
    cluster.bind_all()
    old = {p.name: p.labels[CONTROLLER_REVISION_HASH_LABEL] for p in cluster.pods()}
    cluster.apply(on_delete.replace("image: postgres", "image: postgres:17"))
    assert {p.name: p.labels[CONTROLLER_REVISION_HASH_LABEL] for p in cluster.pods()} == old


DUMPED = """
apiVersion: apps/v1
kind: StatefulSet
metadata: {name: db, uid: sts-uid}
spec:
  replicas: 1
  podManagementPolicy: Parallel
  serviceName: db
  selector: {matchLabels: {app: db}}
  template:
    metadata: {labels: {app: db}}
    spec: {containers: [{name: c, image: postgres}]}
status: {currentRevision: db-6bc9c5bc8b, updateRevision: db-6bc9c5bc8b}
---
apiVersion: v1
kind: Pod
metadata:
  name: db-0
  labels: {app: db, controller-revision-hash: db-6bc9c5bc8b}
  ownerReferences:
  - {apiVersion: apps/v1, kind: StatefulSet, name: db, uid: sts-uid, controller: true}
spec:
  nodeName: n1
  containers: [{name: c, image: postgres}]
"""


def test_a_dumped_stateful_set_keeps_its_pods_at_the_update_revision_its_status_names() -> None:
    cluster = start(NODE % "n1" + "---\n" + DUMPED)
    (pod,) = cluster.pods()
    assert pod.labels[CONTROLLER_REVISION_HASH_LABEL] == "db-6bc9c5bc8b"
