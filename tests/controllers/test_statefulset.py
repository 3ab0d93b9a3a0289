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
