"""Async preemption in the whole loop (SchedulerAsyncPreemption and SchedulerAsyncAPICalls, on
in v1.34): the goroutine runs right after the cycle that started it, the preemptor is held back
at PreEnqueue until the goroutine releases it, and a preemptor whose only victim is already
terminating starts nothing (upstream's prepareCandidateAsync), so it waits for a real event
instead of requeueing itself for ever at one virtual instant (the oracle's livelock-1)."""

from __future__ import annotations

from schedviz.kube.load import load_manifests
from schedviz.simulation.simulator import new_simulation

LIVELOCK = """
apiVersion: scheduling.k8s.io/v1
kind: PriorityClass
metadata: {name: high}
value: 1000
---
apiVersion: v1
kind: Node
metadata: {name: n1, labels: {kubernetes.io/hostname: n1}}
status: {allocatable: {cpu: "2", memory: 4Gi, pods: "10"}}
---
apiVersion: v1
kind: Node
metadata: {name: n2, labels: {kubernetes.io/hostname: n2}}
status: {allocatable: {cpu: "2", memory: 4Gi, pods: "10"}}
---
apiVersion: v1
kind: Pod
metadata: {name: dying, namespace: default, deletionTimestamp: "2025-01-02T00:00:00Z"}
spec:
  nodeName: n1
  containers: [{name: c, image: nginx, resources: {requests: {cpu: "2"}}}]
status: {phase: Running, startTime: "2025-01-01T00:00:00Z"}
---
apiVersion: v1
kind: Pod
metadata: {name: victim2, namespace: default}
spec:
  nodeName: n2
  containers: [{name: c, image: nginx, resources: {requests: {cpu: "2"}}}]
status: {phase: Running, startTime: "2025-01-01T00:00:00Z"}
---
apiVersion: v1
kind: Pod
metadata: {name: p, namespace: default}
spec:
  priorityClassName: high
  nodeSelector: {kubernetes.io/hostname: n1}
  containers: [{name: c, image: nginx, resources: {requests: {cpu: "1"}}}]
---
apiVersion: v1
kind: Pod
metadata: {name: q, namespace: default}
spec:
  priorityClassName: high
  nodeSelector: {kubernetes.io/hostname: n2}
  containers: [{name: c, image: nginx, resources: {requests: {cpu: "1"}}}]
"""


def test_a_preemptor_whose_victim_is_already_terminating_does_not_loop() -> None:
    simulation = new_simulation(load_manifests(LIVELOCK), seed=1)
    cycles = simulation.run(max_cycles=40)
    assert cycles == 5
    steps = [
        (t.pod, [s["action"] for s in (t.preemption or {}).get("asyncSteps", [])])
        for t in simulation.traces
    ]
    assert steps == [
        ("default/p", ["VictimAlreadyTerminating"]),
        ("default/q", ["PreemptionReleased", "PreemptVictim"]),
        # victim2's deletion requeued p; dying still holds n1.
        ("default/p", ["VictimAlreadyTerminating"]),
        ("default/q", []),
        # q was nominated to n2: its bind (the delete of its unscheduled object) requeues the
        # pods of lower or equal priority, p among them, as upstream's queue does (qdiff).
        ("default/p", ["VictimAlreadyTerminating"]),
    ]
    assert simulation.placements() == {
        "default/dying": "n1",
        "default/p": "",
        "default/q": "n2",
    }
    p = simulation.store.get("Pod", "default/p")
    assert p.nominated_node_name == "n1"


def test_the_victim_is_deleted_after_the_cycle_and_its_deletion_requeues_the_preemptor() -> None:
    manifests = load_manifests(
        LIVELOCK.replace('deletionTimestamp: "2025-01-02T00:00:00Z"', "labels: {a: b}")
    )
    simulation = new_simulation(manifests, seed=1)
    simulation.run(max_cycles=40)
    first = simulation.traces[0]
    assert first.pod == "default/p" and first.preemption is not None
    assert first.preemption["asyncSteps"] == [
        {"action": "PreemptionReleased", "pod": "default/p"},
        {"action": "PreemptVictim", "pod": "default/dying"},
    ]
    reasons = [(e.reason, e.object) for e in simulation.store.events]
    assert reasons.index(("FailedScheduling", "default/p")) < reasons.index(
        ("Preempted", "default/dying")
    )
    assert simulation.placements()["default/p"] == "n1"
