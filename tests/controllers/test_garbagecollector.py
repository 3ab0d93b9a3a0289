"""The garbage collector: a deleted workload's dependents go with it, a dependent with another
live owner stays."""

from __future__ import annotations

from tests.controllers.harness import NODE, start

DEPLOYMENT = """
apiVersion: apps/v1
kind: Deployment
metadata: {name: web}
spec:
  replicas: 2
  selector: {matchLabels: {app: web}}
  template:
    metadata: {labels: {app: web}}
    spec: {containers: [{name: c, image: nginx}]}
"""


def test_deleting_a_deployment_deletes_its_replica_set_and_pods() -> None:
    cluster = start(NODE % "n1" + "---\n" + DEPLOYMENT)
    assert len(cluster.pods()) == 2
    cluster.store.delete("Deployment", "default/web")
    assert cluster.store.list_objects("ReplicaSet") == []
    assert cluster.pods() == []


def test_a_plain_pod_is_not_collected() -> None:
    cluster = start(
        NODE % "n1"
        + "---\n"
        + DEPLOYMENT
        + "---\napiVersion: v1\nkind: Pod\nmetadata: {name: p}\n"
        + "spec: {containers: [{name: c, image: nginx}]}\n"
    )
    cluster.store.delete("Deployment", "default/web")
    assert cluster.names() == ["p"]
