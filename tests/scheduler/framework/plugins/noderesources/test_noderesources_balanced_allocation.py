"""NodeResourcesBalancedAllocation: upstream's balanced_allocation_test.go table (v1.35, the
standard deviation scorer), without the DRA-backed extended resource rows."""

from __future__ import annotations

from fractions import Fraction

import pytest

from schedviz.kube.objects import Node, Pod
from schedviz.kube.quantity import Quantity
from schedviz.scheduler.apis.config.types_pluginargs import (
    NodeResourcesBalancedAllocationArgs,
    ResourceSpec,
)
from schedviz.scheduler.apis.config.validation import ConfigError
from schedviz.scheduler.framework.cycle_state import CycleState
from schedviz.scheduler.framework.interface import (
    MAX_NODE_SCORE,
    Code,
    FilterPlugin,
    PreScorePlugin,
    ScorePlugin,
)
from schedviz.scheduler.framework.plugins.noderesources import balanced_allocation
from schedviz.scheduler.framework.plugins.noderesources.balanced_allocation import (
    balanced_resource_scorer,
)
from schedviz.scheduler.testing.framework_helpers import FakeHandle
from schedviz.scheduler.testing.wrappers import make_pod

GPU = "nvidia.com/gpu"
DEFAULT_SET = [ResourceSpec("cpu", 1), ResourceSpec("memory", 1)]
WITH_GPU = [*DEFAULT_SET, ResourceSpec(GPU, 1)]


def make_node(name: str, milli_cpu: int, memory: int, gpus: int | None = None) -> Node:
    """upstream's makeNode(name, milliCPU, memory, extendedResource)."""
    resources = {"cpu": Quantity(Fraction(milli_cpu, 1000)), "memory": Quantity(memory)}
    if gpus is not None:
        resources[GPU] = Quantity(gpus)
    return Node(name=name, capacity=dict(resources), allocatable=resources)


def cpu_only(node: str = "node1") -> Pod:
    return (
        make_pod()
        .node(node)
        .req({"cpu": "1000m", "memory": "0"})
        .req({"cpu": "2000m", "memory": "0"})
        .obj()
    )


def cpu_and_memory(node: str = "node2") -> Pod:
    return (
        make_pod()
        .node(node)
        .req({"cpu": "1000m", "memory": "2000"})
        .req({"cpu": "2000m", "memory": "3000"})
        .obj()
    )


def cpu_and_memory_and_gpu(node: str = "node1") -> Pod:
    return (
        make_pod()
        .node(node)
        .req({"cpu": "1000m", "memory": "2000"})
        .req({"cpu": "2000m", "memory": "3000", GPU: "3"})
        .obj()
    )


# (name, pod, nodes, existing pods, resources, run PreScore, wanted scores)
CASES = [
    (
        "nothing scheduled, resources requested, differently sized nodes",
        cpu_and_memory(),
        [make_node("node1", 4000, 10000), make_node("node2", 6000, 10000)],
        [],
        DEFAULT_SET,
        True,
        [87, MAX_NODE_SCORE],
    ),
    (
        "resources requested, pods scheduled with resources",
        cpu_and_memory(),
        [make_node("node1", 10000, 20000), make_node("node2", 10000, 20000)],
        [cpu_only(), cpu_and_memory()],
        DEFAULT_SET,
        True,
        [82, 95],
    ),
    (
        "resources requested, pods scheduled with resources, differently sized nodes",
        cpu_and_memory(),
        [make_node("node1", 10000, 20000), make_node("node2", 10000, 50000)],
        [cpu_only(), cpu_and_memory()],
        DEFAULT_SET,
        True,
        [82, 80],
    ),
    (
        "requested resources at node capacity",
        cpu_only(),
        [make_node("node1", 6000, 10000), make_node("node2", 6000, 10000)],
        [cpu_only(), cpu_and_memory()],
        DEFAULT_SET,
        True,
        [50, 75],
    ),
    (
        "include scalar resource on a node for balanced resource allocation",
        make_pod().req({"memory": "0", GPU: "1"}).obj(),
        [make_node("node1", 3500, 40000, 8), make_node("node2", 3500, 40000, 8)],
        [cpu_and_memory(), cpu_and_memory_and_gpu()],
        WITH_GPU,
        True,
        [70, 65],
    ),
    (
        "node without the scalar resource should skip the scalar resource",
        cpu_and_memory(),
        [make_node("node1", 3500, 40000, 8), make_node("node2", 3500, 40000)],
        [],
        WITH_GPU,
        True,
        [63, 63],
    ),
    (
        "resources requested, pods scheduled with resources if PreScore not called",
        cpu_and_memory(),
        [make_node("node1", 10000, 20000), make_node("node2", 10000, 20000)],
        [cpu_only(), cpu_and_memory()],
        DEFAULT_SET,
        False,
        [82, 95],
    ),
]


@pytest.mark.parametrize(
    ("pod", "nodes", "existing", "resources", "run_pre_score", "want_scores"),
    [row[1:] for row in CASES],
    ids=[row[0] for row in CASES],
)
def test_it_favours_nodes_whose_resources_are_used_evenly(
    pod: Pod,
    nodes: list[Node],
    existing: list[Pod],
    resources: list[ResourceSpec],
    run_pre_score: bool,
    want_scores: list[int],
) -> None:
    handle = FakeHandle(existing, nodes)
    plugin = balanced_allocation.new(NodeResourcesBalancedAllocationArgs(resources), handle)
    state = CycleState()
    if run_pre_score:
        assert plugin.pre_score(state, pod, handle.snapshot.list()) is None

    got = []
    for node in nodes:
        node_info = handle.snapshot.get(node.name)
        assert node_info is not None
        score, status = plugin.score(state, pod, node_info)
        assert status is None
        got.append(score)

    assert got == want_scores


def test_it_skips_best_effort_pods_at_pre_score() -> None:
    nodes = [make_node("node1", 4000, 10000), make_node("node2", 4000, 10000)]
    handle = FakeHandle([], nodes)
    plugin = balanced_allocation.new(NodeResourcesBalancedAllocationArgs(DEFAULT_SET), handle)

    status = plugin.pre_score(CycleState(), make_pod().obj(), handle.snapshot.list())

    assert status is not None
    assert status.code == Code.Skip


def test_best_effort_pod_scores_zero_without_pre_score() -> None:
    handle = FakeHandle([], [make_node("node1", 4000, 10000)])
    plugin = balanced_allocation.new(None, handle)
    node_info = handle.snapshot.get("node1")
    assert node_info is not None

    assert plugin.score(CycleState(), make_pod().obj(), node_info) == (0, None)


def test_one_resource_has_no_deviation_and_the_score_is_truncated() -> None:
    assert balanced_resource_scorer([3000], [4000]) == MAX_NODE_SCORE
    # fractions 0.75 and 0.5: (1 - 0.125) * 100 = 87.5, truncated.
    assert balanced_resource_scorer([3000, 5000], [4000, 10000]) == 87


def test_it_implements_pre_score_and_score_only() -> None:
    plugin = balanced_allocation.new(None, FakeHandle())

    assert plugin.name() == "NodeResourcesBalancedAllocation"
    assert isinstance(plugin, PreScorePlugin)
    assert isinstance(plugin, ScorePlugin)
    assert not isinstance(plugin, FilterPlugin)
    assert plugin.score_extensions() is None


def test_new_validates_the_args() -> None:
    args = NodeResourcesBalancedAllocationArgs([ResourceSpec("cpu", 2)])

    with pytest.raises(ConfigError, match=r"resources\[0\]\.weight: Invalid value: 2: must be 1"):
        balanced_allocation.new(args, FakeHandle())


def test_new_refuses_other_args() -> None:
    with pytest.raises(TypeError, match="NodeResourcesBalancedAllocationArgs"):
        balanced_allocation.new(object(), FakeHandle())
