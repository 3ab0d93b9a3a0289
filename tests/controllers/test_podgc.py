"""The pod garbage collector: pods bound to a deleted node are marked Failed with the
DisruptionTarget condition and deleted after the quarantine, and their ReplicaSet replaces
them; unbound pods being deleted go at once; finished pods beyond the threshold go oldest first."""

from __future__ import annotations

import dataclasses

from schedviz.controllers.podgc import QUARANTINE_SECONDS, PodGCController
from schedviz.kube.objects import POD_SUCCEEDED
from tests.controllers.harness import NODE, start

RS = """
apiVersion: apps/v1
kind: ReplicaSet
metadata: {name: rs}
spec:
  replicas: 2
  selector: {matchLabels: {app: web}}
  template:
    metadata: {labels: {app: web}}
    spec: {containers: [{name: c, image: nginx}]}
"""


def test_pods_of_a_deleted_node_are_collected_after_the_quarantine_and_replaced() -> None:
    cluster = start(NODE % "n1" + "---\n" + NODE % "n2" + "---\n" + RS)
    cluster.bind_all("n1")
    gone = cluster.names()
    seen: list[tuple[str, str]] = []
    cluster.store.watch(
        lambda t, old, new: seen.append((t, (new or old).name)) if t != "ADDED" else None
    )
    cluster.store.delete("Node", "n1")
    assert cluster.names() == gone
    cluster.advance(QUARANTINE_SECONDS - 1)
    assert cluster.names() == gone
    cluster.advance(1)
    left = cluster.names()
    assert len(left) == 2 and not set(left) & set(gone)
    assert ("MODIFIED", gone[0]) in seen and ("DELETED", gone[0]) in seen


def test_a_node_back_before_the_quarantine_ends_keeps_its_pods() -> None:
    cluster = start(NODE % "n1" + "---\n" + RS)
    cluster.bind_all("n1")
    node = cluster.store.get("Node", "n1")
    cluster.store.delete("Node", "n1")
    cluster.store.apply(node)
    cluster.advance(QUARANTINE_SECONDS)
    assert all(p.node_name == "n1" for p in cluster.pods())


def test_an_unbound_pod_being_deleted_is_deleted() -> None:
    cluster = start(NODE % "n1" + "---\n" + RS)
    pod = cluster.pods()[0]
    cluster.store.apply(dataclasses.replace(pod, deletion_timestamp="2026-01-01T00:00:00Z"))
    assert cluster.store.get("Pod", pod.key) is None


def test_finished_pods_beyond_the_threshold_go_oldest_first() -> None:
    cluster = start(NODE % "n1" + "---\n" + RS)
    podgc = cluster.manager.controllers["podgc"]
    assert isinstance(podgc, PodGCController)
    podgc.threshold = 1
    first, second = cluster.names()
    cluster.set_phase(first, POD_SUCCEEDED)
    cluster.advance(5)
    cluster.set_phase(second, POD_SUCCEEDED)
    assert cluster.store.get("Pod", f"default/{first}") is None
    assert cluster.store.get("Pod", f"default/{second}") is not None
