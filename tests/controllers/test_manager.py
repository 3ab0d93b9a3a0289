"""The controller manager: a cluster the controllers have converged, given again as a dump
(every workload with its pods), makes nothing more; the work queue answers a write before the
writer goes on; timers fire in order on the virtual clock."""

from __future__ import annotations

import pytest

from schedviz.controllers.manager import ControllerManager
from tests.controllers.harness import NODE, start

TEMPLATE = """
  selector: {matchLabels: {app: w}}
  template:
    metadata: {labels: {app: w}}
    spec: {containers: [{name: c, image: nginx}]%s}
"""
WORKLOADS = {
    "Deployment": "apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: w}\nspec:\n"
    "  replicas: 3" + TEMPLATE % "",
    "ReplicaSet": "apiVersion: apps/v1\nkind: ReplicaSet\nmetadata: {name: w}\nspec:\n"
    "  replicas: 3" + TEMPLATE % "",
    "StatefulSet": "apiVersion: apps/v1\nkind: StatefulSet\nmetadata: {name: w}\nspec:\n"
    "  replicas: 3\n  podManagementPolicy: Parallel" + TEMPLATE % "",
    "DaemonSet": "apiVersion: apps/v1\nkind: DaemonSet\nmetadata: {name: w}\nspec:" + TEMPLATE % "",
    "Job": "apiVersion: batch/v1\nkind: Job\nmetadata: {name: w}\nspec:\n  parallelism: 2\n"
    "  completions: 4\n  template:\n    spec: {restartPolicy: Never, containers: "
    "[{name: c, image: busybox}]}\n",
}


@pytest.mark.parametrize("kind", sorted(WORKLOADS))
def test_a_converged_cluster_given_again_makes_nothing_more(kind: str) -> None:
    cluster = start(NODE % "n1" + "---\n" + NODE % "n2" + "---\n" + WORKLOADS[kind])
    cluster.bind_all()
    kinds = ("Node", "Deployment", "ReplicaSet", "StatefulSet", "DaemonSet", "Job", "Pod")
    dumped = [obj for bucket in kinds for obj in cluster.store.list_objects(bucket)]
    again = ControllerManager(seed=9).expand(dumped)
    assert [(type(o).__name__, o.key) for o in again] == [(type(o).__name__, o.key) for o in dumped]


def test_the_writes_a_write_causes_are_in_the_store_before_it_returns() -> None:
    cluster = start(NODE % "n1" + "---\n" + WORKLOADS["Deployment"])
    cluster.store.delete("Pod", cluster.pods()[0].key)
    assert len(cluster.pods()) == 3


def test_timers_fire_in_the_order_of_their_times() -> None:
    manager = ControllerManager()
    ctx = manager.context
    ctx.after(20.0, "kubelet", "b")
    ctx.after(10.0, "kubelet", "a")
    ctx.after(20.0, "kubelet", "c")
    assert manager.next_timer() == 10.0
    assert ctx.pop_due(20.0) == [("kubelet", "a"), ("kubelet", "b"), ("kubelet", "c")]
    assert manager.next_timer() is None
