"""The cycle trace: complete, and honest about what the scheduler did not look at."""

from __future__ import annotations

import yaml

from schedviz.kube.load import load_manifests
from schedviz.simulation.simulator import new_simulation

FILTER_ONLY = {
    "apiVersion": "kubescheduler.config.k8s.io/v1",
    "kind": "KubeSchedulerConfiguration",
    "profiles": [
        {
            "schedulerName": "default-scheduler",
            "plugins": {
                "multiPoint": {"disabled": [{"name": "*"}]},
                "queueSort": {"enabled": [{"name": "PrioritySort"}]},
                "preFilter": {"enabled": [{"name": "NodeResourcesFit"}]},
                "filter": {"enabled": [{"name": "NodeResourcesFit"}]},
                "bind": {"enabled": [{"name": "DefaultBinder"}]},
            },
        }
    ],
}


def _node(name: str, cpu: str) -> dict[str, object]:
    resources = {"cpu": cpu, "memory": "1Gi", "pods": "10"}
    return {
        "apiVersion": "v1",
        "kind": "Node",
        "metadata": {"name": name},
        "status": {"capacity": resources, "allocatable": resources},
    }


def _pod(cpu: str) -> dict[str, object]:
    container = {"name": "c", "image": "pause", "resources": {"requests": {"cpu": cpu}}}
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": "p", "namespace": "default"},
        "spec": {"containers": [container]},
    }


def test_without_scoring_the_walk_stops_at_one_feasible_node_but_the_trace_has_every_node() -> None:
    documents = [FILTER_ONLY, _node("a", "2"), _node("b", "1"), _node("c", "2"), _pod("1500m")]
    simulation = new_simulation(load_manifests(yaml.safe_dump_all(documents)), seed=1)
    simulation.run()
    (cycle,) = simulation.document()["cycles"]
    assert (cycle["node"], cycle["feasibleNodes"], cycle["evaluatedNodes"]) == ("a", 1, 1)
    assert cycle["notEvaluated"] == ["b", "c"]
    assert cycle["filter"]["a"] == [{"plugin": "NodeResourcesFit", "code": "Success"}]
    assert cycle["filter"]["b"] == [
        {
            "plugin": "NodeResourcesFit",
            # 1500m is more than node b has at all: unresolvable, as upstream's Fit says.
            "code": "UnschedulableAndUnresolvable",
            "reasons": ["Insufficient cpu"],
            "hypothetical": True,
        }
    ]
    assert cycle["filter"]["c"] == [
        {"plugin": "NodeResourcesFit", "code": "Success", "hypothetical": True}
    ]


def test_filter_records_carry_each_plugins_own_time_not_a_share_of_the_phase() -> None:
    from schedviz.kube.load import load_manifests
    from schedviz.simulation.simulator import new_simulation

    nodes = "\n---\n".join(
        f"apiVersion: v1\nkind: Node\nmetadata: {{name: n{i}}}\n"
        'status: {allocatable: {cpu: "4", memory: 8Gi, pods: "110"}}'
        for i in range(20)
    )
    pod = (
        "apiVersion: v1\nkind: Pod\nmetadata: {name: p, namespace: default}\n"
        "spec: {containers: [{name: c, image: i, resources: {requests: {cpu: 100m}}}]}"
    )
    simulation = new_simulation(load_manifests(nodes + "\n---\n" + pod), seed=1)
    simulation.run()
    (trace,) = simulation.traces
    durations = [r.duration for r in trace.points if r.point == "Filter"]
    assert len(durations) > 3 and all(d > 0 for d in durations)
    assert len(set(durations)) > 1
