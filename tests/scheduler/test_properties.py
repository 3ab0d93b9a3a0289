"""Properties of whole simulations over random small clusters (hypothesis).

Real YAML goes through ``load_manifests`` and ``new_simulation(...).run()`` with the default
profile: (a) no node ever holds more than its allocatable cpu, memory or pods, checked at every
bind and at the end; (b) every pod ends bound or in exactly one of activeQ, backoffQ and
unschedulablePods, and none stays in flight; (c) the same input and seed give the same trace.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import yaml
from hypothesis import given, settings
from hypothesis import strategies as st

from schedviz.kube.load import load_manifests
from schedviz.kube.objects import Pod
from schedviz.scheduler.store import MODIFIED
from schedviz.simulation.simulator import Simulation, new_simulation

MI = 1024 * 1024


@dataclass(frozen=True)
class NodeSpec:
    name: str
    milli_cpu: int
    memory_mi: int
    pods: int


@dataclass(frozen=True)
class PodSpec:
    name: str
    milli_cpu: int
    memory_mi: int
    priority_class: str
    node_name: str


node_specs = st.builds(
    lambda i, cpu, mem, pods: NodeSpec(f"node-{i}", cpu, mem, pods),
    st.just(0),
    st.sampled_from([500, 1000, 2000, 4000]),
    st.sampled_from([512, 1024, 4096]),
    st.integers(min_value=1, max_value=4),
)
pod_specs = st.builds(
    lambda cpu, mem, priority, bound: (cpu, mem, priority, bound),
    st.sampled_from([0, 100, 250, 500, 1000, 1500]),
    st.sampled_from([0, 128, 512, 1024]),
    st.sampled_from(["", "", "high"]),
    st.booleans(),
)


@st.composite
def clusters(draw: st.DrawFn) -> tuple[list[NodeSpec], list[PodSpec]]:
    raw_nodes = draw(st.lists(node_specs, min_size=1, max_size=4))
    nodes = [
        NodeSpec(f"node-{i}", n.milli_cpu, n.memory_mi, n.pods) for i, n in enumerate(raw_nodes)
    ]
    used = {n.name: [0, 0, 0] for n in nodes}
    pods: list[PodSpec] = []
    for i, (cpu, mem, priority, bound) in enumerate(draw(st.lists(pod_specs, max_size=10))):
        node_name = ""
        if bound:
            # A running pod sits on a node it fits on, so the input itself respects the limits.
            target = nodes[draw(st.integers(min_value=0, max_value=len(nodes) - 1))]
            total = used[target.name]
            if (
                total[0] + cpu <= target.milli_cpu
                and total[1] + mem <= target.memory_mi
                and total[2] + 1 <= target.pods
            ):
                node_name = target.name
                total[0], total[1], total[2] = total[0] + cpu, total[1] + mem, total[2] + 1
        pods.append(PodSpec(f"pod-{i}", cpu, mem, priority, node_name))
    return nodes, pods


def manifests_yaml(nodes: list[NodeSpec], pods: list[PodSpec]) -> str:
    documents: list[dict[str, Any]] = [
        {
            "apiVersion": "scheduling.k8s.io/v1",
            "kind": "PriorityClass",
            "metadata": {"name": "high"},
            "value": 1000,
        }
    ]
    for n in nodes:
        allocatable = {"cpu": f"{n.milli_cpu}m", "memory": f"{n.memory_mi}Mi", "pods": str(n.pods)}
        documents.append(
            {
                "apiVersion": "v1",
                "kind": "Node",
                "metadata": {"name": n.name},
                "status": {"capacity": allocatable, "allocatable": allocatable},
            }
        )
    for p in pods:
        requests: dict[str, str] = {}
        if p.milli_cpu:
            requests["cpu"] = f"{p.milli_cpu}m"
        if p.memory_mi:
            requests["memory"] = f"{p.memory_mi}Mi"
        spec: dict[str, Any] = {
            "containers": [{"name": "c", "image": "pause", "resources": {"requests": requests}}]
        }
        if p.priority_class:
            spec["priorityClassName"] = p.priority_class
        if p.node_name:
            spec["nodeName"] = p.node_name
        documents.append(
            {
                "apiVersion": "v1",
                "kind": "Pod",
                "metadata": {"name": p.name, "namespace": "default"},
                "spec": spec,
            }
        )
    return yaml.safe_dump_all(documents)


def check_capacity(simulation: Simulation, nodes: list[NodeSpec], pods: list[PodSpec]) -> None:
    requests = {f"default/{p.name}": (p.milli_cpu, p.memory_mi) for p in pods}
    for n in nodes:
        on_node = [pod for pod in simulation.store.pods() if pod.node_name == n.name]
        cpu = sum(requests[pod.key][0] for pod in on_node)
        memory = sum(requests[pod.key][1] for pod in on_node)
        assert cpu <= n.milli_cpu, (n, [p.key for p in on_node])
        assert memory <= n.memory_mi, (n, [p.key for p in on_node])
        assert len(on_node) <= n.pods, (n, [p.key for p in on_node])


def simulate(nodes: list[NodeSpec], pods: list[PodSpec], seed: int = 0) -> Simulation:
    simulation = new_simulation(load_manifests(manifests_yaml(nodes, pods)), seed=seed)
    binds: list[str] = []

    def on_write(event_type: str, old: Any, new: Any) -> None:
        if event_type == MODIFIED and isinstance(new, Pod) and new.node_name and not old.node_name:
            binds.append(new.key)
            check_capacity(simulation, nodes, pods)

    simulation.store.watch(on_write)
    simulation.run(max_cycles=500)
    simulation.binds = binds  # type: ignore[attr-defined]
    return simulation


@settings(max_examples=40, deadline=None)
@given(clusters())
def test_no_node_ever_holds_more_than_its_allocatable(
    cluster: tuple[list[NodeSpec], list[PodSpec]],
) -> None:
    nodes, pods = cluster
    simulation = simulate(nodes, pods)
    check_capacity(simulation, nodes, pods)
    scheduled = [t.pod for t in simulation.traces if t.result == "Scheduled"]
    assert sorted(set(scheduled)) == sorted(simulation.binds)  # type: ignore[attr-defined]


@settings(max_examples=40, deadline=None)
@given(clusters())
def test_every_pod_ends_bound_or_in_exactly_one_queue(
    cluster: tuple[list[NodeSpec], list[PodSpec]],
) -> None:
    nodes, pods = cluster
    simulation = simulate(nodes, pods)
    queue = simulation.scheduler.queue
    where: dict[str, list[str]] = {}
    for name, queued in (
        ("activeQ", queue.pods_in_active_q()),
        ("backoffQ", queue.pods_in_backoff_q()),
        ("unschedulablePods", queue.unschedulable_pod_list()),
    ):
        for pod in queued:
            where.setdefault(pod.key, []).append(name)
    assert queue.in_flight_pods() == []
    existing = {pod.key: pod for pod in simulation.store.pods()}
    # Preemption may delete victims; nothing else disappears, and nothing queued is a ghost.
    assert set(where) <= set(existing)
    for key, pod in existing.items():
        if pod.node_name:
            assert key not in where, (key, where[key])
        else:
            assert len(where.get(key, [])) == 1, (key, where.get(key))
    victims = {f"default/{p.name}" for p in pods} - set(existing)
    preempted = {v for t in simulation.traces if t.preemption for v in t.preemption["victims"]}
    assert victims <= preempted


def _comparable(document: Any) -> Any:
    """The trace without what measures the machine (wall time, durations)."""
    if isinstance(document, dict):
        return {
            k: _comparable(v) for k, v in document.items() if k not in ("wallTime", "durationMs")
        }
    if isinstance(document, list):
        return [_comparable(v) for v in document]
    return document


@settings(max_examples=25, deadline=None)
@given(clusters(), st.integers(min_value=0, max_value=3))
def test_same_input_and_seed_give_the_same_trace(
    cluster: tuple[list[NodeSpec], list[PodSpec]], seed: int
) -> None:
    nodes, pods = cluster
    first = simulate(nodes, pods, seed)
    second = simulate(nodes, pods, seed)
    assert _comparable(first.document()) == _comparable(second.document())
    assert first.placements() == second.placements()
