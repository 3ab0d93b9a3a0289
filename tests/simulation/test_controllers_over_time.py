"""The simulation with the controllers acting over time: operations applied to
``simulation.store`` (a template patch, a cordon, a node delete, a preemption) then
``simulation.run()``, and the cluster the controllers and the scheduler converge to."""

from __future__ import annotations

import dataclasses
from typing import Any

import pytest

from schedviz.kube.load import load_manifests
from schedviz.kube.objects import POD_SUCCEEDED
from schedviz.simulation.simulator import (
    Simulation,
    SimulationInputError,
    admitted_objects,
    new_simulation,
)

NODES = """
apiVersion: v1
kind: Node
metadata: {name: node-a, labels: {kubernetes.io/hostname: node-a}}
status: {allocatable: {cpu: "4", memory: 4Gi, pods: "20"}}
---
apiVersion: v1
kind: Node
metadata: {name: node-b, labels: {kubernetes.io/hostname: node-b}}
status: {allocatable: {cpu: "4", memory: 4Gi, pods: "20"}}
"""
WEB = """
apiVersion: apps/v1
kind: Deployment
metadata: {name: web}
spec:
  replicas: %(replicas)d
  selector: {matchLabels: {app: web}}
  template:
    metadata: {labels: {app: web}}
    spec:
      priorityClassName: %(priority)s
      containers: [{name: c, image: %(image)s, resources: {requests: {cpu: "1"}}}]
"""
CLASSES = """
apiVersion: scheduling.k8s.io/v1
kind: PriorityClass
metadata: {name: low}
value: 10
---
apiVersion: scheduling.k8s.io/v1
kind: PriorityClass
metadata: {name: high}
value: 1000
"""


def web(replicas: int = 4, image: str = "nginx:1", priority: str = "low") -> str:
    return WEB % {"replicas": replicas, "image": image, "priority": priority}


def simulation(text: str) -> Simulation:
    sim = new_simulation(load_manifests(text), seed=3)
    sim.run()
    return sim


def apply(sim: Simulation, text: str) -> None:
    """Creates or replaces the objects, pods admitted as the API server would."""
    classes = list(sim.store.list_objects("PriorityClass"))
    for obj in admitted_objects([*classes, *load_manifests(text).objects])[len(classes) :]:
        sim.store.apply(obj)


def placements(sim: Simulation, prefix: str = "") -> dict[str, str]:
    return {p.name: p.node_name for p in sim.store.pods() if p.name.startswith(prefix)}


def replica_sets(sim: Simulation) -> dict[str, int]:
    return {rs.name: rs.replicas for rs in sim.store.list_objects("ReplicaSet")}


def test_a_patched_deployment_template_rolls_out_and_every_new_pod_is_bound() -> None:
    sim = simulation(NODES + "---\n" + CLASSES + "---\n" + web())
    (old,) = replica_sets(sim)
    apply(sim, web(image="nginx:2"))
    sim.run()
    sets = replica_sets(sim)
    (new,) = set(sets) - {old}
    assert sets == {old: 0, new: 4}
    pods = sim.store.pods()
    assert len(pods) == 4
    assert all(p.node_name and p.labels["pod-template-hash"] == new.split("-")[-1] for p in pods)


def test_a_preempted_replica_is_replaced_and_the_replacement_waits() -> None:
    text = NODES + "---\n" + CLASSES + "---\n" + web(replicas=8)
    sim = simulation(text)
    assert all(placements(sim).values())
    apply(
        sim,
        "apiVersion: v1\nkind: Pod\nmetadata: {name: urgent}\nspec:\n  priorityClassName: high\n"
        '  containers: [{name: c, image: x, resources: {requests: {cpu: "1"}}}]\n',
    )
    sim.run()
    assert placements(sim, "urgent")["urgent"]
    assert any(e.reason == "Preempted" for e in sim.store.events)
    web_pods = placements(sim, "web-")
    assert len(web_pods) == 8  # the victim replaced
    assert sorted(web_pods.values()).count("") == 1  # no room left for the replacement
    assert "1 pod unschedulable" in sim.outcome()


def test_a_deleted_nodes_pods_are_collected_and_replaced_on_the_other_node() -> None:
    sim = simulation(NODES + "---\n" + CLASSES + "---\n" + web(replicas=4))
    sim.store.delete("Node", "node-a")
    sim.run()
    assert set(placements(sim, "web-").values()) == {"node-b"}
    assert len(placements(sim, "web-")) == 4
    assert sim.clock.now() >= 40  # podgc's quarantine, on the virtual clock


def test_a_cordoned_node_keeps_its_pods_and_gets_no_new_ones() -> None:
    sim = simulation(NODES + "---\n" + CLASSES + "---\n" + web(replicas=2))
    node = sim.store.get("Node", "node-a")
    sim.store.apply(dataclasses.replace(node, unschedulable=True))
    before = placements(sim, "web-")
    apply(sim, web(replicas=6))
    sim.run()
    after = placements(sim, "web-")
    assert {k: v for k, v in after.items() if k in before} == before
    # node-b has room for 3 more; the fourth waits rather than go to the cordoned node.
    assert sorted(after[k] for k in set(after) - set(before)) == ["", "node-b", "node-b", "node-b"]


JOB = """
apiVersion: batch/v1
kind: Job
metadata: {name: batch}
spec:
  parallelism: 2
  completions: 4
  template:
    metadata: {annotations: {schedviz.io/run-seconds: "60"}}
    spec:
      restartPolicy: Never
      containers: [{name: c, image: busybox, resources: {requests: {cpu: "3"}}}]
"""


def job_status(sim: Simulation) -> dict[str, Any]:
    status: dict[str, Any] = sim.store.get("Job", "default/batch").manifest["status"]
    return status


def test_a_job_runs_its_pods_for_their_run_time_and_completes() -> None:
    sim = simulation(NODES + "---\n" + JOB)
    status = job_status(sim)
    assert status["succeeded"] == 4
    assert [c["type"] for c in status["conditions"]] == ["SuccessCriteriaMet", "Complete"]
    assert sim.clock.now() == 120
    assert all(p.phase == POD_SUCCEEDED for p in sim.store.pods())
    assert sim.outcome() == "stopped: every pod placed"


def test_a_dumped_deployment_with_its_replica_set_and_pods_makes_no_doubles() -> None:
    first = simulation(NODES + "---\n" + CLASSES + "---\n" + web(replicas=3))
    dumped = [*first.store.list_objects("Node"), *first.store.list_objects("PriorityClass")]
    dumped += [*first.store.list_objects("Deployment"), *first.store.list_objects("ReplicaSet")]
    dumped += first.store.pods()
    import yaml

    def manifest(obj: Any) -> dict[str, Any]:
        m = dict(obj.manifest)
        m.setdefault("kind", type(obj).__name__)
        if type(obj).__name__ == "Pod":
            m["spec"] = {**m["spec"], "nodeName": obj.node_name}
            m["spec"].pop("priority", None)
        return m

    again = simulation(yaml.safe_dump_all([manifest(o) for o in dumped]))
    assert placements(again) == placements(first)
    assert replica_sets(again) == replica_sets(first)


def test_an_invalid_run_time_is_refused_naming_the_object_and_field() -> None:
    text = JOB.replace('"60"', '"soon"')
    with pytest.raises(SimulationInputError) as error:
        new_simulation(load_manifests(text))
    assert str(error.value) == (
        'Job "default/batch": spec.template.metadata.annotations[schedviz.io/run-seconds]: '
        "must be a non-negative number of seconds, got 'soon'"
    )
