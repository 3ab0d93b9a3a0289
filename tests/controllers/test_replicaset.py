"""The ReplicaSet and ReplicationController controllers over a store: replacement, scaling
down in upstream's order, adoption of orphans, no doubles for a dumped set."""

from __future__ import annotations

import pytest

from schedviz.kube.objects import POD_FAILED
from tests.controllers.harness import NODE, start

RS = """
apiVersion: apps/v1
kind: ReplicaSet
metadata: {name: rs, uid: rs-uid}
spec:
  replicas: %d
  selector: {matchLabels: {app: web}}
  template:
    metadata: {labels: {app: web}}
    spec: {containers: [{name: c, image: nginx}]}
"""
RC = """
apiVersion: v1
kind: ReplicationController
metadata: {name: rc}
spec:
  replicas: %d
  template:
    metadata: {labels: {app: old}}
    spec: {containers: [{name: c, image: nginx}]}
"""
ORPHAN = """
apiVersion: v1
kind: Pod
metadata: {name: orphan, labels: {app: web}}
spec: {containers: [{name: c, image: nginx}]}
"""


@pytest.mark.parametrize(("manifest", "prefix"), [(RS, "rs-"), (RC, "rc-")])
def test_a_deleted_pod_is_replaced(manifest: str, prefix: str) -> None:
    cluster = start(NODE % "n1" + "---\n" + manifest % 2)
    before = cluster.names(prefix)
    cluster.store.delete("Pod", f"default/{before[0]}")
    after = cluster.names(prefix)
    assert len(after) == 2
    assert before[0] not in after


def test_a_failed_pod_no_longer_counts_and_is_replaced() -> None:
    cluster = start(NODE % "n1" + "---\n" + RS % 2)
    cluster.bind_all()
    name = cluster.names()[0]
    cluster.set_phase(name, POD_FAILED)
    active = [p for p in cluster.pods() if p.phase != POD_FAILED]
    assert len(active) == 2


def test_scaling_down_deletes_unscheduled_pods_before_scheduled_ones() -> None:
    cluster = start(NODE % "n1" + "---\n" + RS % 3)
    bound = cluster.pods()[0]
    assert cluster.store.bind(bound, "n1") is None
    cluster.apply(RS % 1)
    assert cluster.names() == [bound.name]


def test_an_orphan_matching_the_selector_is_adopted_and_counted() -> None:
    cluster = start(ORPHAN + "---\n" + RS % 2)
    orphan = cluster.get("Pod", "orphan")
    assert [r.uid for r in orphan.owner_references] == ["rs-uid"]
    assert len(cluster.pods()) == 2


def test_a_dumped_replica_set_with_its_pods_creates_no_doubles() -> None:
    owned = ORPHAN.replace(
        "labels: {app: web}",
        "labels: {app: web}, ownerReferences: [{apiVersion: apps/v1, kind: ReplicaSet, "
        "name: rs, uid: rs-uid, controller: true}]",
    )
    cluster = start(owned + "---\n" + RS % 1)
    assert cluster.names() == ["orphan"]
