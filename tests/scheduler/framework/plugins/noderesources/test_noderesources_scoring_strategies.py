"""NodeResourcesFit's scoring strategies: upstream's least_allocated_test.go,
most_allocated_test.go, requested_to_capacity_ratio_test.go and resource_allocation_test.go
(TestResourceAllocationScorerCalculateRequests). The weight validation rows belong to the args
validation and are not here."""

from __future__ import annotations

import pytest

from schedviz.kube.objects import Container, Node, Pod
from schedviz.kube.resources import DEFAULT_MEMORY_REQUEST, DEFAULT_MILLI_CPU_REQUEST
from schedviz.scheduler.apis.config.types_pluginargs import (
    LEAST_ALLOCATED,
    MOST_ALLOCATED,
    REQUESTED_TO_CAPACITY_RATIO,
    NodeResourcesFitArgs,
    RequestedToCapacityRatioParam,
    ResourceSpec,
    ScoringStrategy,
    UtilizationShapePoint,
)
from schedviz.scheduler.apis.config.validation import ConfigError
from schedviz.scheduler.framework.cycle_state import CycleState
from schedviz.scheduler.framework.interface import MAX_NODE_SCORE, MIN_NODE_SCORE, Code
from schedviz.scheduler.framework.plugins.helper.shape_score import (
    FunctionShapePoint,
    build_broken_linear_function,
)
from schedviz.scheduler.framework.plugins.noderesources import fit
from schedviz.scheduler.framework.plugins.noderesources.resource_allocation import (
    ResourceAllocationScorer,
)
from schedviz.scheduler.testing.framework_helpers import FakeHandle
from schedviz.scheduler.testing.wrappers import PodWrapper, make_node, make_pod, resource_list

DEFAULT_RESOURCES = [ResourceSpec("cpu", 1), ResourceSpec("memory", 1)]
EXTENDED_RES = "abc.com/xyz"
EXTENDED_RESOURCE_SET = [*DEFAULT_RESOURCES, ResourceSpec(EXTENDED_RES, 1)]


def node(name: str, resources: dict[str, str | int]) -> Node:
    """st.MakeNode().Name(name).Capacity(resources), with upstream's 32 pods."""
    return make_node().name(name).capacity({"pods": 32, **resources}).obj()


def cpu_memory(name: str, cpu: str, memory: str, **extended: str) -> Node:
    return node(name, {"cpu": cpu, "memory": memory, **extended})


def extended_node(name: str, extended: dict[str, int]) -> Node:
    """upstream's makeNode(name, 4000, 10000*1024*1024, extended) of the bin packing tests."""
    resources: dict[str, str | int] = {"cpu": "4", "memory": str(10000 * 1024 * 1024)}
    resources.update(extended)
    return make_node().name(name).capacity(resources).obj()


def scores(
    strategy: ScoringStrategy,
    pod: Pod,
    nodes: list[Node],
    existing: list[Pod],
    run_pre_score: bool = True,
    want_code: Code | None = None,
) -> list[int]:
    handle = FakeHandle(existing, nodes)
    plugin = fit.new(NodeResourcesFitArgs(scoring_strategy=strategy), handle)
    state = CycleState()
    if run_pre_score:
        assert plugin.pre_score(state, pod, handle.snapshot.list()) is None
    got = []
    for n in nodes:
        node_info = handle.snapshot.get(n.name)
        assert node_info is not None
        score, status = plugin.score(state, pod, node_info)
        assert (status.code if status else None) == want_code
        got.append(score)
    return got


def on(node_name: str, requests: dict[str, str | int] | None = None) -> Pod:
    pod = make_pod().node(node_name)
    return (pod.req(requests) if requests else pod).obj()


def requested_twice() -> PodWrapper:
    return make_pod().req({"cpu": "1000", "memory": "2000"}).req({"cpu": "2000", "memory": "3000"})


SMALL_NODES = [cpu_memory("node1", "4000", "10000"), cpu_memory("node2", "4000", "10000")]
DIFFERENT_NODES = [cpu_memory("node1", "4000", "10000"), cpu_memory("node2", "6000", "10000")]
BIG_NODES = [cpu_memory("node1", "10000", "20000"), cpu_memory("node2", "10000", "20000")]
EXTENDED_NODES = [
    cpu_memory("node1", "6000", "10000"),
    cpu_memory("node2", "6000", "10000", **{EXTENDED_RES: "4"}),
]
FOUR_PODS = [
    on("node1", {"cpu": "3000", "memory": "0"}),
    on("node1", {"cpu": "3000", "memory": "0"}),
    on("node2", {"cpu": "3000", "memory": "0"}),
    on("node2", {"cpu": "3000", "memory": "5000"}),
]
TWO_PODS = [
    on("node1", {"cpu": "3000", "memory": "0"}),
    on("node2", {"cpu": "3000", "memory": "5000"}),
]
HONOR_EXTENDED_POD = (
    make_pod().node("node1").req({"cpu": "3000", "memory": "5000", EXTENDED_RES: "2"}).obj()
)
HONOR_EXTENDED_NODES = [
    cpu_memory("node1", "6000", "10000", **{EXTENDED_RES: "4"}),
    cpu_memory("node2", "6000", "10000", **{EXTENDED_RES: "10"}),
]
NODE_WITHOUT_RESOURCE_POD = make_pod().node("node1").req({"cpu": "3000", "memory": "4000"}).obj()
EXTENDED_FIRST = [
    ResourceSpec(EXTENDED_RES, 2),
    ResourceSpec("cpu", 1),
    ResourceSpec("memory", 1),
]

# (name, pod, nodes, existing pods, resources, wanted scores, wanted status code)
LEAST_ALLOCATED_CASES = [
    (
        "nothing scheduled, nothing requested",
        make_pod().obj(),
        SMALL_NODES,
        [],
        DEFAULT_RESOURCES,
        [MAX_NODE_SCORE, MAX_NODE_SCORE],
        None,
    ),
    (
        "nothing scheduled, resources requested, differently sized nodes",
        requested_twice().obj(),
        DIFFERENT_NODES,
        [],
        DEFAULT_RESOURCES,
        [37, 50],
        None,
    ),
    (
        "Resources not set, pods scheduled with error",
        requested_twice().obj(),
        DIFFERENT_NODES,
        [],
        [],
        [MIN_NODE_SCORE, MIN_NODE_SCORE],
        Code.Error,
    ),
    (
        "no resources requested, pods scheduled",
        make_pod().obj(),
        SMALL_NODES,
        [on("node1"), on("node1"), on("node2"), on("node2")],
        DEFAULT_RESOURCES,
        [MAX_NODE_SCORE, MAX_NODE_SCORE],
        None,
    ),
    (
        "no resources requested, pods scheduled with resources",
        make_pod().obj(),
        BIG_NODES,
        FOUR_PODS,
        DEFAULT_RESOURCES,
        [70, 57],
        None,
    ),
    (
        "resources requested, pods scheduled with resources",
        requested_twice().obj(),
        BIG_NODES,
        TWO_PODS,
        DEFAULT_RESOURCES,
        [57, 45],
        None,
    ),
    (
        "resources requested, pods scheduled with resources, differently sized nodes",
        requested_twice().obj(),
        [cpu_memory("node1", "10000", "20000"), cpu_memory("node2", "10000", "50000")],
        TWO_PODS,
        DEFAULT_RESOURCES,
        [57, 60],
        None,
    ),
    (
        "requested resources exceed node capacity",
        make_pod().req({"cpu": "3000", "memory": "0"}).obj(),
        SMALL_NODES,
        TWO_PODS,
        DEFAULT_RESOURCES,
        [50, 25],
        None,
    ),
    (
        "zero node resources, pods scheduled with resources",
        make_pod().obj(),
        [node("node1", {}), node("node2", {})],
        TWO_PODS,
        DEFAULT_RESOURCES,
        [MIN_NODE_SCORE, MIN_NODE_SCORE],
        None,
    ),
    (
        "nothing scheduled, resources requested with different weight on CPU and memory, "
        "differently sized nodes",
        requested_twice().node("node1").obj(),
        DIFFERENT_NODES,
        [],
        [ResourceSpec("memory", 2), ResourceSpec("cpu", 1)],
        [41, 50],
        None,
    ),
    (
        "bypass extended resource if the pod does not request",
        requested_twice().node("node1").obj(),
        EXTENDED_NODES,
        [],
        EXTENDED_RESOURCE_SET,
        [50, 50],
        None,
    ),
    (
        "honor extended resource if the pod requests",
        HONOR_EXTENDED_POD,
        HONOR_EXTENDED_NODES,
        [],
        EXTENDED_RESOURCE_SET,
        [50, 60],
        None,
    ),
    (
        "if the node doesn't have a resource",
        NODE_WITHOUT_RESOURCE_POD,
        EXTENDED_NODES,
        [],
        EXTENDED_FIRST,
        [55, 55],
        None,
    ),
]


@pytest.mark.parametrize(
    ("pod", "nodes", "existing", "resources", "want_scores", "want_code"),
    [row[1:] for row in LEAST_ALLOCATED_CASES],
    ids=[row[0] for row in LEAST_ALLOCATED_CASES],
)
def test_least_allocated_favours_the_emptiest_node(
    pod: Pod,
    nodes: list[Node],
    existing: list[Pod],
    resources: list[ResourceSpec],
    want_scores: list[int],
    want_code: Code | None,
) -> None:
    strategy = ScoringStrategy(LEAST_ALLOCATED, resources)

    assert scores(strategy, pod, nodes, existing, want_code=want_code) == want_scores


MOST_ALLOCATED_CASES = [
    (
        "nothing scheduled, nothing requested",
        make_pod().obj(),
        SMALL_NODES,
        [],
        DEFAULT_RESOURCES,
        [MIN_NODE_SCORE, MIN_NODE_SCORE],
        None,
    ),
    (
        "nothing scheduled, resources requested, differently sized nodes",
        requested_twice().obj(),
        DIFFERENT_NODES,
        [],
        DEFAULT_RESOURCES,
        [62, 50],
        None,
    ),
    (
        "Resources not set, pods scheduled with error",
        requested_twice().obj(),
        DIFFERENT_NODES,
        [],
        [],
        [MIN_NODE_SCORE, MIN_NODE_SCORE],
        Code.Error,
    ),
    (
        "no resources requested, pods scheduled with resources",
        make_pod().obj(),
        BIG_NODES,
        FOUR_PODS,
        DEFAULT_RESOURCES,
        [30, 42],
        None,
    ),
    (
        "resources requested, pods scheduled with resources",
        requested_twice().obj(),
        BIG_NODES,
        TWO_PODS,
        DEFAULT_RESOURCES,
        [42, 55],
        None,
    ),
    (
        "resources requested equal node capacity",
        make_pod()
        .req({"cpu": "2000", "memory": "4000"})
        .req({"cpu": "3000", "memory": "5000"})
        .obj(),
        [cpu_memory("node1", "5000", "10000"), cpu_memory("node2", "10000", "9000")],
        [],
        DEFAULT_RESOURCES,
        [95, 75],
        None,
    ),
    (
        "nothing scheduled, resources requested, differently sized nodes, memory weighted",
        requested_twice().obj(),
        DIFFERENT_NODES,
        [],
        [ResourceSpec("memory", 2), ResourceSpec("cpu", 1)],
        [58, 50],
        None,
    ),
    (
        "no resources requested, pods scheduled, nonzero request for resource",
        make_pod().container("").obj(),
        [cpu_memory("node1", "250m", "1000Mi"), cpu_memory("node2", "250m", "1000Mi")],
        [
            make_pod().node("node1").container("").obj(),
            make_pod().node("node1").container("").obj(),
        ],
        DEFAULT_RESOURCES,
        [80, 30],
        None,
    ),
    (
        "bypass extended resource if the pod does not request",
        requested_twice().obj(),
        EXTENDED_NODES,
        [],
        EXTENDED_RESOURCE_SET,
        [50, 50],
        None,
    ),
    (
        "honor extended resource if the pod request",
        HONOR_EXTENDED_POD,
        HONOR_EXTENDED_NODES,
        [],
        EXTENDED_RESOURCE_SET,
        [50, 40],
        None,
    ),
    (
        "if the node doesn't have a resource",
        NODE_WITHOUT_RESOURCE_POD,
        EXTENDED_NODES,
        [],
        EXTENDED_FIRST,
        [45, 45],
        None,
    ),
]


@pytest.mark.parametrize(
    ("pod", "nodes", "existing", "resources", "want_scores", "want_code"),
    [row[1:] for row in MOST_ALLOCATED_CASES],
    ids=[row[0] for row in MOST_ALLOCATED_CASES],
)
def test_most_allocated_favours_the_fullest_node(
    pod: Pod,
    nodes: list[Node],
    existing: list[Pod],
    resources: list[ResourceSpec],
    want_scores: list[int],
    want_code: Code | None,
) -> None:
    strategy = ScoringStrategy(MOST_ALLOCATED, resources)

    assert scores(strategy, pod, nodes, existing, want_code=want_code) == want_scores


WEIGHT_VALIDATION = [
    (
        "resource with negative weight",
        [ResourceSpec("memory", -1), ResourceSpec("cpu", 1)],
        "scoringStrategy.resources[0].weight",
    ),
    (
        "resource with zero weight",
        [ResourceSpec("memory", 1), ResourceSpec("cpu", 0)],
        "scoringStrategy.resources[1].weight",
    ),
    (
        "resource weight larger than MaxNodeScore",
        [ResourceSpec("memory", 1), ResourceSpec("cpu", 101)],
        "scoringStrategy.resources[1].weight",
    ),
    (
        "resource weight larger than MaxNodeScore, memory only",
        [ResourceSpec("memory", 101)],
        "scoringStrategy.resources[0].weight",
    ),
]


@pytest.mark.parametrize("strategy_type", [LEAST_ALLOCATED, MOST_ALLOCATED])
@pytest.mark.parametrize(
    ("resources", "field"),
    [row[1:] for row in WEIGHT_VALIDATION],
    ids=[row[0] for row in WEIGHT_VALIDATION],
)
def test_it_refuses_weights_outside_one_to_max_node_score(
    strategy_type: str, resources: list[ResourceSpec], field: str
) -> None:
    args = NodeResourcesFitArgs(scoring_strategy=ScoringStrategy(strategy_type, resources))

    with pytest.raises(ConfigError) as raised:
        fit.new(args, FakeHandle())

    assert [error.split(": ")[0] for error in raised.value.errors] == [field]


def _rtcr(resources: list[ResourceSpec], *points: tuple[int, int]) -> ScoringStrategy:
    shape = [UtilizationShapePoint(u, s) for u, s in points]
    return ScoringStrategy(
        REQUESTED_TO_CAPACITY_RATIO, resources, RequestedToCapacityRatioParam(shape)
    )


RTCR_CASES = [
    (
        "nothing scheduled, nothing requested (default - least requested nodes have priority)",
        make_pod().obj(),
        SMALL_NODES,
        [on("node1"), on("node1")],
        [MAX_NODE_SCORE, MAX_NODE_SCORE],
    ),
    (
        "nothing scheduled, resources requested, differently sized nodes (default - least "
        "requested nodes have priority)",
        requested_twice().obj(),
        DIFFERENT_NODES,
        [on("node1"), on("node1")],
        [38, 50],
    ),
    (
        "no resources requested, pods scheduled with resources (default - least requested nodes "
        "have priority)",
        make_pod().obj(),
        DIFFERENT_NODES,
        [
            on("node1", {"cpu": "3000", "memory": "5000"}),
            on("node2", {"cpu": "3000", "memory": "5000"}),
        ],
        [38, 50],
    ),
]


@pytest.mark.parametrize(
    ("pod", "nodes", "existing", "want_scores"),
    [row[1:] for row in RTCR_CASES],
    ids=[row[0] for row in RTCR_CASES],
)
def test_requested_to_capacity_ratio_follows_the_shape(
    pod: Pod, nodes: list[Node], existing: list[Pod], want_scores: list[int]
) -> None:
    strategy = _rtcr(DEFAULT_RESOURCES, (0, 10), (100, 0))

    assert scores(strategy, pod, nodes, existing, run_pre_score=False) == want_scores


BROKEN_LINEAR = [
    (
        [(10, 1), (90, 9)],
        [
            (-10, 1),
            (0, 1),
            (9, 1),
            (10, 1),
            (15, 1),
            (19, 1),
            (20, 2),
            (89, 8),
            (90, 9),
            (99, 9),
            (100, 9),
            (110, 9),
        ],
    ),
    (
        [(0, 2), (40, 10), (100, 0)],
        [(-10, 2), (0, 2), (20, 6), (30, 8), (40, 10), (70, 5), (100, 0), (110, 0)],
    ),
    (
        [(0, 2), (40, 2), (100, 2)],
        [(-10, 2), (0, 2), (20, 2), (30, 2), (40, 2), (70, 2), (100, 2), (110, 2)],
    ),
]


@pytest.mark.parametrize(
    ("points", "assertions"), BROKEN_LINEAR, ids=["case_0", "case_1", "case_2"]
)
def test_broken_linear_function_interpolates_between_points(
    points: list[tuple[int, int]], assertions: list[tuple[int, int]]
) -> None:
    function = build_broken_linear_function([FunctionShapePoint(u, s) for u, s in points])

    assert [(p, function(p)) for p, _ in assertions] == assertions


def test_broken_linear_function_truncates_falling_segments_toward_zero() -> None:
    # Go: 10 + (0-10)*(5-0)/(100-0) = 10 + (-50/100) = 10 + 0; Python's // would give 9.
    function = build_broken_linear_function([FunctionShapePoint(0, 10), FunctionShapePoint(100, 0)])

    assert function(5) == 10


FOO = "intel.com/foo"
BAR = "intel.com/bar"

SINGLE_EXTENDED = [
    ("nothing scheduled, nothing requested", make_pod().obj(), [], [0, 0]),
    (
        "resources requested, pods scheduled with less resources",
        make_pod().req({FOO: "2"}).obj(),
        [make_pod().obj()],
        [2, 5],
    ),
    (
        "resources requested, pods scheduled with resources, on node with existing pod running ",
        make_pod().req({FOO: "2"}).obj(),
        [make_pod().req({FOO: "2"}).node("node2").obj()],
        [2, 10],
    ),
    (
        "resources requested, pods scheduled with more resources",
        make_pod().req({FOO: "4"}).obj(),
        [make_pod().obj()],
        [5, 10],
    ),
]


@pytest.mark.parametrize(
    ("pod", "existing", "want_scores"),
    [row[1:] for row in SINGLE_EXTENDED],
    ids=[row[0] for row in SINGLE_EXTENDED],
)
def test_bin_packing_on_one_extended_resource(
    pod: Pod, existing: list[Pod], want_scores: list[int]
) -> None:
    nodes = [extended_node("node1", {FOO: 8}), extended_node("node2", {FOO: 4})]
    strategy = _rtcr([ResourceSpec(FOO, 1)], (0, 0), (100, 1))

    assert scores(strategy, pod, nodes, existing, run_pre_score=False) == want_scores


MULTIPLE_EXTENDED = [
    ("nothing scheduled, nothing requested", make_pod().obj(), [], [0, 0]),
    (
        "resources requested, pods scheduled with less resources",
        make_pod().req({FOO: "2", BAR: "2"}).obj(),
        [make_pod().obj()],
        [4, 3],
    ),
    (
        "resources requested, pods scheduled with resources, on node with existing pod running ",
        make_pod().req({FOO: "2", BAR: "2"}).obj(),
        [make_pod().req({FOO: "4", BAR: "2"}).node("node2").obj()],
        [4, 7],
    ),
    (
        "resources requested, pods scheduled with more resources",
        make_pod().req({FOO: "4", BAR: "2"}).obj(),
        [make_pod().obj()],
        [5, 5],
    ),
]


@pytest.mark.parametrize(
    ("pod", "existing", "want_scores"),
    [row[1:] for row in MULTIPLE_EXTENDED],
    ids=[row[0] for row in MULTIPLE_EXTENDED],
)
def test_bin_packing_on_weighted_extended_resources(
    pod: Pod, existing: list[Pod], want_scores: list[int]
) -> None:
    nodes = [
        extended_node("node1", {FOO: 8, BAR: 4}),
        extended_node("node2", {FOO: 4, BAR: 8}),
    ]
    strategy = _rtcr([ResourceSpec(FOO, 3), ResourceSpec(BAR, 5)], (0, 0), (100, 1))

    assert scores(strategy, pod, nodes, existing, run_pre_score=False) == want_scores


ONE_MI = 1048576


def _requests_pod(
    containers: list[dict[str, str | int]],
    init: list[dict[str, str | int]] | None = None,
    overhead: dict[str, str | int] | None = None,
) -> Pod:
    return Pod(
        name="",
        containers=tuple(
            Container(f"c{i}", requests=resource_list(r)) for i, r in enumerate(containers)
        ),
        init_containers=tuple(
            Container(f"i{i}", requests=resource_list(r)) for i, r in enumerate(init or [])
        ),
        overhead=resource_list(overhead or {}),
    )


ONE_CPU_ONE_MI: dict[str, str | int] = {"cpu": "1", "memory": "1Mi"}

CALCULATE_REQUESTS = [
    ("overhead only", _requests_pod([], overhead=ONE_CPU_ONE_MI), 1000, ONE_MI),
    (
        "1x requestless container",
        _requests_pod([{}]),
        DEFAULT_MILLI_CPU_REQUEST,
        DEFAULT_MEMORY_REQUEST,
    ),
    (
        "2x requestless container",
        _requests_pod([{}, {}]),
        2 * DEFAULT_MILLI_CPU_REQUEST,
        2 * DEFAULT_MEMORY_REQUEST,
    ),
    (
        "request container + requestless container",
        _requests_pod([ONE_CPU_ONE_MI, {}]),
        1000 + DEFAULT_MILLI_CPU_REQUEST,
        ONE_MI + DEFAULT_MEMORY_REQUEST,
    ),
    (
        "container + requestless container + overhead",
        _requests_pod([ONE_CPU_ONE_MI, {}], overhead=ONE_CPU_ONE_MI),
        2000 + DEFAULT_MILLI_CPU_REQUEST,
        2 * ONE_MI + DEFAULT_MEMORY_REQUEST,
    ),
    (
        "init container + container + requestless container + overhead",
        _requests_pod([ONE_CPU_ONE_MI, {}], init=[{"cpu": "3"}], overhead=ONE_CPU_ONE_MI),
        4000,
        2 * ONE_MI + DEFAULT_MEMORY_REQUEST,
    ),
    (
        "requestless init container + small init container + small container ",
        _requests_pod([{"cpu": "3m", "memory": "3"}], init=[{}, {"cpu": "1m", "memory": "1"}]),
        DEFAULT_MILLI_CPU_REQUEST,
        DEFAULT_MEMORY_REQUEST,
    ),
    (
        "requestless init container + small init container + small container + requestless "
        "container ",
        _requests_pod([{"cpu": "3m", "memory": "3"}, {}], init=[{}, {"cpu": "1m", "memory": "1"}]),
        3 + DEFAULT_MILLI_CPU_REQUEST,
        3 + DEFAULT_MEMORY_REQUEST,
    ),
]


@pytest.mark.parametrize(
    ("pod", "want_cpu", "want_memory"),
    [row[1:] for row in CALCULATE_REQUESTS],
    ids=[row[0] for row in CALCULATE_REQUESTS],
)
def test_scoring_counts_defaults_for_containers_without_requests(
    pod: Pod, want_cpu: int, want_memory: int
) -> None:
    scorer = ResourceAllocationScorer("test", lambda r, a: 0, [], use_requested=False)

    assert scorer.calculate_pod_resource_request(pod, "cpu") == want_cpu
    assert scorer.calculate_pod_resource_request(pod, "memory") == want_memory
