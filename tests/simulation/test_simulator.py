"""The engine alone (schedviz/simulation/simulator.py): the traces kept encoded read back as the
objects, and the line that says why a run stopped."""

from __future__ import annotations

from schedviz.kube.load import load_manifests
from schedviz.simulation.simulator import new_simulation

CLUSTER = """
apiVersion: v1
kind: Node
metadata: {name: node-a}
status: {allocatable: {cpu: "1", memory: 1Gi, pods: "10"}}
---
apiVersion: v1
kind: Node
metadata: {name: node-b}
status: {allocatable: {cpu: "2", memory: 1Gi, pods: "10"}}
---
apiVersion: v1
kind: Pod
metadata: {name: small}
spec: {containers: [{name: c, image: pause, resources: {requests: {cpu: 600m}}}]}
---
apiVersion: v1
kind: Pod
metadata: {name: big}
spec: {containers: [{name: c, image: pause, resources: {requests: {cpu: "3"}}}]}
---
apiVersion: v1
kind: Pod
metadata: {name: gated}
spec:
  schedulingGates: [{name: example.com/wait}]
  containers: [{name: c, image: pause}]
"""


def comparable(value: object) -> object:
    """The JSON without the wall-clock readings, which differ between two runs."""
    if isinstance(value, dict):
        return {k: comparable(v) for k, v in value.items() if k not in ("wallTime", "durationMs")}
    if isinstance(value, list):
        return [comparable(v) for v in value]
    return value


def test_encoded_traces_read_back_as_the_objects_they_were() -> None:
    plain = new_simulation(load_manifests(CLUSTER), seed=3)
    encoded = new_simulation(load_manifests(CLUSTER), seed=3, encoded_traces=True)
    plain.run()
    encoded.run()
    assert len(encoded.log) == len(plain.log) == 2

    assert [comparable(t.to_json()) for t in encoded.log] == [
        comparable(t.to_json()) for t in plain.log
    ]


def test_the_outcome_counts_unschedulable_and_gated_pods() -> None:
    simulation = new_simulation(load_manifests(CLUSTER))
    simulation.run()
    assert simulation.outcome() == (
        "stopped: 1 pod unschedulable, 1 pod gated by schedulingGates, no event can change that"
    )


def test_the_outcome_says_every_pod_was_placed() -> None:
    simulation = new_simulation(
        load_manifests(CLUSTER.split("---\napiVersion: v1\nkind: Pod\nmetadata: {name: big}")[0])
    )
    simulation.run()
    assert simulation.outcome() == "stopped: every pod placed"


def test_the_outcome_tells_pods_for_another_scheduler_apart() -> None:
    other = "\n---\napiVersion: v1\nkind: Pod\nmetadata: {name: elsewhere}\nspec:\n"
    other += "  schedulerName: my-scheduler\n  containers: [{name: c, image: x}]\n"
    simulation = new_simulation(load_manifests(CLUSTER + other))
    simulation.run()
    assert simulation.outcome() == (
        "stopped: 1 pod unschedulable, 1 pod gated by schedulingGates, "
        "1 pod for another scheduler, no event can change that"
    )
    placed = CLUSTER.split("---\napiVersion: v1\nkind: Pod\nmetadata: {name: big}")[0]
    simulation = new_simulation(load_manifests(placed + other))
    simulation.run()
    assert simulation.outcome() == (
        "stopped: every pod placed, 1 pod for another scheduler left pending"
    )


def test_a_dumps_pods_are_taken_as_stored_whatever_admission_would_refuse_now() -> None:
    from schedviz.kube.objects import Pod
    from schedviz.simulation.simulator import stored_objects

    dump = load_manifests(
        "apiVersion: v1\nkind: ResourceQuota\nmetadata: {name: q}\nspec: {hard: {pods: '1'}}\n"
        + "".join(
            f"---\napiVersion: v1\nkind: Pod\nmetadata: {{name: p{n}}}\n"
            "spec:\n  runtimeClassName: gone\n  overhead: {cpu: '1'}\n"
            "  containers: [{name: c, image: x}]\n"
            for n in range(2)
        )
    )
    pods = [o for o in stored_objects(dump.objects) if isinstance(o, Pod)]
    assert [p.name for p in pods] == ["p0", "p1"]
    assert all(p.overhead == pods[0].overhead and p.overhead for p in pods)
