"""NodeResourcesFit: upstream's fit_test.go tables (v1.35), without the pod-level resources and
DRA-backed extended resource rows."""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass, field
from fractions import Fraction

import pytest

from schedviz.kube.objects import Container, Node, Pod, ResourceRequirements
from schedviz.kube.quantity import Quantity
from schedviz.scheduler.apis.config.types_pluginargs import (
    LEAST_ALLOCATED,
    MOST_ALLOCATED,
    REQUESTED_TO_CAPACITY_RATIO,
    NodeResourcesFitArgs,
    RequestedToCapacityRatioParam,
    ScoringStrategy,
    UtilizationShapePoint,
)
from schedviz.scheduler.apis.config.validation import ConfigError
from schedviz.scheduler.framework.cycle_state import CycleState
from schedviz.scheduler.framework.interface import (
    Code,
    EnqueueExtensions,
    FilterPlugin,
    PreFilterPlugin,
    PreScorePlugin,
    ScorePlugin,
    new_status,
)
from schedviz.scheduler.framework.plugins.noderesources import fit
from schedviz.scheduler.framework.plugins.noderesources.fit import (
    InsufficientResource,
    compute_pod_resource_request,
    fits,
    fits_request,
    have_any_requested_resources_increased,
)
from schedviz.scheduler.framework.types import (
    ActionType,
    ClusterEvent,
    EventResource,
    NodeInfo,
    QueueingHint,
)
from schedviz.scheduler.testing.framework_helpers import FakeHandle
from schedviz.scheduler.testing.wrappers import make_node, make_pod, resource_list

EXT_A = "example.com/aaa"
EXT_B = "example.com/bbb"
K8S_IO_A = "kubernetes.io/something"
K8S_IO_B = "subdomain.kubernetes.io/something"
HUGE_PAGE_A = "hugepages-2Mi"
EXT_DRA = "extended.resource.dra.io/something"


@dataclass
class Usage:
    """framework.Resource as upstream's newResourcePod takes it: cpu in millicores."""

    milli_cpu: int = 0
    memory: int = 0
    ephemeral_storage: int = 0
    scalars: dict[str, int] = field(default_factory=dict)


def _container(name: str, usage: Usage) -> Container:
    requests = {
        "cpu": Quantity(Fraction(usage.milli_cpu, 1000)),
        "memory": Quantity(usage.memory),
        "pods": Quantity(0),
        "ephemeral-storage": Quantity(usage.ephemeral_storage),
    }
    requests.update({name: Quantity(value) for name, value in usage.scalars.items()})
    return Container(name=name, requests=requests)


def resource_pod(
    *usages: Usage, init: tuple[Usage, ...] = (), overhead: dict[str, str] | None = None
) -> Pod:
    return Pod(
        name="",
        containers=tuple(_container(f"c{i}", u) for i, u in enumerate(usages)),
        init_containers=tuple(_container(f"i{i}", u) for i, u in enumerate(init)),
        overhead=resource_list(dict(overhead or {})),
    )


def pod_level(pod: Pod, requests: dict[str, str]) -> Pod:
    """upstream's newPodLevelResourcesPod: the pod with ``spec.resources.requests``."""
    return dataclasses.replace(pod, resources=ResourceRequirements(resource_list(dict(requests))))


def allocatable(
    milli_cpu: int, memory: int, pods: int, ext_a: int, storage: int, huge_page_a: int
) -> Node:
    values = {
        "cpu": Quantity(Fraction(milli_cpu, 1000)),
        "memory": Quantity(memory),
        "pods": Quantity(pods),
        EXT_A: Quantity(ext_a),
        "ephemeral-storage": Quantity(storage),
        HUGE_PAGE_A: Quantity(huge_page_a),
    }
    return Node(name="", capacity=dict(values), allocatable=values)


def node_with(resources: dict[str, str | int], name: str = "") -> Node:
    """st.MakeNode().Capacity(...): 32 pods unless said otherwise."""
    return make_node().name(name).capacity({"pods": 32, **resources}).obj()


def new_fit(
    args: NodeResourcesFitArgs | None = None,
    *,
    enable_in_place_pod_vertical_scaling: bool = True,
    enable_scheduling_queue_hint: bool = True,
) -> fit.Fit:
    return fit.Fit(
        args or NodeResourcesFitArgs(),
        FakeHandle(),
        enable_in_place_pod_vertical_scaling=enable_in_place_pod_vertical_scaling,
        enable_scheduling_queue_hint=enable_scheduling_queue_hint,
    )


def run_filter(plugin: fit.Fit, pod: Pod, node_info: NodeInfo) -> object:
    state = CycleState()
    assert plugin.pre_filter(state, pod, []) == (None, None)
    return plugin.filter(state, pod, node_info)


def insufficient(
    resource: str, requested: int, used: int, capacity: int, unresolvable: bool = False
) -> InsufficientResource:
    return InsufficientResource(
        resource, f"Insufficient {resource}", requested, used, capacity, unresolvable
    )


UNSCHED = Code.Unschedulable
UNRESOLVABLE = Code.UnschedulableAndUnresolvable

# (name, pod, existing pod's usage, args, wanted insufficient resources, wanted status code)
ENOUGH_REQUESTS = [
    ("no resources requested always fits", Pod(name=""), Usage(10, 20), None, [], None),
    (
        "too many resources fails",
        resource_pod(Usage(1, 1)),
        Usage(10, 20),
        None,
        [insufficient("cpu", 1, 10, 10), insufficient("memory", 1, 20, 20)],
        UNSCHED,
    ),
    (
        "too many resources fails due to init container cpu",
        resource_pod(Usage(1, 1), init=(Usage(3, 1),)),
        Usage(8, 19),
        None,
        [insufficient("cpu", 3, 8, 10)],
        UNSCHED,
    ),
    (
        "too many resources fails due to highest init container cpu",
        resource_pod(Usage(1, 1), init=(Usage(3, 1), Usage(2, 1))),
        Usage(8, 19),
        None,
        [insufficient("cpu", 3, 8, 10)],
        UNSCHED,
    ),
    (
        "too many resources fails due to init container memory",
        resource_pod(Usage(1, 1), init=(Usage(1, 3),)),
        Usage(9, 19),
        None,
        [insufficient("memory", 3, 19, 20)],
        UNSCHED,
    ),
    (
        "too many resources fails due to highest init container memory",
        resource_pod(Usage(1, 1), init=(Usage(1, 3), Usage(1, 2))),
        Usage(9, 19),
        None,
        [insufficient("memory", 3, 19, 20)],
        UNSCHED,
    ),
    (
        "init container fits because it's the max, not sum, of containers and init containers",
        resource_pod(Usage(1, 1), init=(Usage(1, 1),)),
        Usage(9, 19),
        None,
        [],
        None,
    ),
    (
        "multiple init containers fit because it's the max, not sum, of containers and init "
        "containers",
        resource_pod(Usage(1, 1), init=(Usage(1, 1), Usage(1, 1))),
        Usage(9, 19),
        None,
        [],
        None,
    ),
    ("both resources fit", resource_pod(Usage(1, 1)), Usage(5, 5), None, [], None),
    (
        "one resource memory fits",
        resource_pod(Usage(2, 1)),
        Usage(9, 5),
        None,
        [insufficient("cpu", 2, 9, 10)],
        UNSCHED,
    ),
    (
        "one resource cpu fits",
        resource_pod(Usage(1, 2)),
        Usage(5, 19),
        None,
        [insufficient("memory", 2, 19, 20)],
        UNSCHED,
    ),
    ("equal edge case", resource_pod(Usage(5, 1)), Usage(5, 19), None, [], None),
    (
        "equal edge case for init container",
        resource_pod(Usage(4, 1), init=(Usage(5, 1),)),
        Usage(5, 19),
        None,
        [],
        None,
    ),
    (
        "extended resource fits",
        resource_pod(Usage(scalars={EXT_A: 1})),
        Usage(),
        None,
        [],
        None,
    ),
    (
        "extended resource fits for init container",
        resource_pod(Usage(), init=(Usage(scalars={EXT_A: 1}),)),
        Usage(),
        None,
        [],
        None,
    ),
    (
        "extended resource capacity enforced",
        resource_pod(Usage(1, 1, scalars={EXT_A: 10})),
        Usage(scalars={EXT_A: 0}),
        None,
        [insufficient(EXT_A, 10, 0, 5, True)],
        UNRESOLVABLE,
    ),
    (
        "extended resource capacity enforced for init container",
        resource_pod(Usage(), init=(Usage(1, 1, scalars={EXT_A: 10}),)),
        Usage(scalars={EXT_A: 0}),
        None,
        [insufficient(EXT_A, 10, 0, 5, True)],
        UNRESOLVABLE,
    ),
    (
        "extended resource allocatable enforced",
        resource_pod(Usage(1, 1, scalars={EXT_A: 1})),
        Usage(scalars={EXT_A: 5}),
        None,
        [insufficient(EXT_A, 1, 5, 5)],
        UNSCHED,
    ),
    (
        "extended resource allocatable enforced for init container",
        resource_pod(Usage(), init=(Usage(1, 1, scalars={EXT_A: 1}),)),
        Usage(scalars={EXT_A: 5}),
        None,
        [insufficient(EXT_A, 1, 5, 5)],
        UNSCHED,
    ),
    (
        "extended resource allocatable enforced for multiple containers",
        resource_pod(Usage(1, 1, scalars={EXT_A: 3}), Usage(1, 1, scalars={EXT_A: 3})),
        Usage(scalars={EXT_A: 2}),
        None,
        [insufficient(EXT_A, 6, 2, 5, True)],
        UNRESOLVABLE,
    ),
    (
        "extended resource allocatable admits multiple init containers",
        resource_pod(
            Usage(), init=(Usage(1, 1, scalars={EXT_A: 3}), Usage(1, 1, scalars={EXT_A: 3}))
        ),
        Usage(scalars={EXT_A: 2}),
        None,
        [],
        None,
    ),
    (
        "extended resource allocatable enforced for multiple init containers",
        resource_pod(
            Usage(), init=(Usage(1, 1, scalars={EXT_A: 6}), Usage(1, 1, scalars={EXT_A: 3}))
        ),
        Usage(scalars={EXT_A: 2}),
        None,
        [insufficient(EXT_A, 6, 2, 5, True)],
        UNRESOLVABLE,
    ),
    (
        "extended resource allocatable enforced for unknown resource",
        resource_pod(Usage(1, 1, scalars={EXT_B: 1})),
        Usage(),
        None,
        [insufficient(EXT_B, 1, 0, 0, True)],
        UNRESOLVABLE,
    ),
    (
        "extended resource allocatable enforced for unknown resource for init container",
        resource_pod(Usage(), init=(Usage(1, 1, scalars={EXT_B: 1}),)),
        Usage(),
        None,
        [insufficient(EXT_B, 1, 0, 0, True)],
        UNRESOLVABLE,
    ),
    (
        "kubernetes.io resource capacity enforced",
        resource_pod(Usage(1, 1, scalars={K8S_IO_A: 10})),
        Usage(),
        None,
        [insufficient(K8S_IO_A, 10, 0, 0, True)],
        UNRESOLVABLE,
    ),
    (
        "kubernetes.io resource capacity enforced for init container",
        resource_pod(Usage(), init=(Usage(1, 1, scalars={K8S_IO_B: 10}),)),
        Usage(),
        None,
        [insufficient(K8S_IO_B, 10, 0, 0, True)],
        UNRESOLVABLE,
    ),
    (
        "hugepages resource capacity enforced",
        resource_pod(Usage(1, 1, scalars={HUGE_PAGE_A: 10})),
        Usage(scalars={HUGE_PAGE_A: 0}),
        None,
        [insufficient(HUGE_PAGE_A, 10, 0, 5, True)],
        UNRESOLVABLE,
    ),
    (
        "hugepages resource capacity enforced for init container",
        resource_pod(Usage(), init=(Usage(1, 1, scalars={HUGE_PAGE_A: 10}),)),
        Usage(scalars={HUGE_PAGE_A: 0}),
        None,
        [insufficient(HUGE_PAGE_A, 10, 0, 5, True)],
        UNRESOLVABLE,
    ),
    (
        "hugepages resource allocatable enforced for multiple containers",
        resource_pod(Usage(1, 1, scalars={HUGE_PAGE_A: 3}), Usage(1, 1, scalars={HUGE_PAGE_A: 3})),
        Usage(scalars={HUGE_PAGE_A: 2}),
        None,
        [insufficient(HUGE_PAGE_A, 6, 2, 5, True)],
        UNRESOLVABLE,
    ),
    (
        "skip checking ignored extended resource",
        resource_pod(Usage(1, 1, scalars={EXT_B: 1})),
        Usage(),
        NodeResourcesFitArgs(ignored_resources=["example.com/bbb"]),
        [],
        None,
    ),
    (
        "resources + pod overhead fits",
        resource_pod(Usage(1, 1), overhead={"cpu": "3m", "memory": "13"}),
        Usage(5, 5),
        None,
        [],
        None,
    ),
    (
        "requests + overhead does not fit for memory",
        resource_pod(Usage(1, 1), overhead={"cpu": "1m", "memory": "15"}),
        Usage(5, 5),
        None,
        [insufficient("memory", 16, 5, 20)],
        UNSCHED,
    ),
    (
        "skip checking ignored extended resource via resource groups",
        resource_pod(Usage(1, 1, scalars={EXT_B: 1, K8S_IO_A: 1})),
        Usage(),
        NodeResourcesFitArgs(ignored_resource_groups=["example.com"]),
        [insufficient(K8S_IO_A, 1, 0, 0, True)],
        UNRESOLVABLE,
    ),
    (
        "skip checking extended resource request with quantity zero via resource groups",
        resource_pod(Usage(1, 1, scalars={EXT_A: 0})),
        Usage(scalars={EXT_A: 6}),
        None,
        [],
        None,
    ),
    (
        "skip checking resource request with quantity zero",
        resource_pod(Usage(scalars={EXT_A: 1})),
        Usage(20, 30, scalars={EXT_A: 1}),
        None,
        [],
        None,
    ),
    (
        "extended resource backed by DRA not enabled",
        resource_pod(Usage(1, 1, scalars={EXT_DRA: 1})),
        Usage(),
        None,
        [insufficient(EXT_DRA, 1, 0, 0, True)],
        UNRESOLVABLE,
    ),
    # PodLevelResources (beta, on in v1.34): spec.resources replaces the containers' requests.
    (
        "both pod-level and container-level resources fit",
        pod_level(resource_pod(Usage(1, 1)), {"cpu": "1m", "memory": "2"}),
        Usage(5, 5),
        None,
        [],
        None,
    ),
    (
        "pod-level cpu resource not fit",
        pod_level(resource_pod(Usage(1, 1)), {"cpu": "7m", "memory": "2"}),
        Usage(5, 5),
        None,
        [insufficient("cpu", 7, 5, 10)],
        UNSCHED,
    ),
    (
        "pod-level memory resource not fit",
        pod_level(resource_pod(Usage(1, 1)), {"cpu": "3m", "memory": "2"}),
        Usage(5, 19),
        None,
        [insufficient("memory", 2, 19, 20)],
        UNSCHED,
    ),
    (
        "pod-level hugepages resource fit",
        pod_level(resource_pod(), {"cpu": "3m", "memory": "2", HUGE_PAGE_A: "5"}),
        Usage(),
        None,
        [],
        None,
    ),
    (
        "both pod-level and container-level hugepages resource fit",
        pod_level(
            resource_pod(Usage(1, 1, scalars={HUGE_PAGE_A: 3})),
            {"cpu": "3m", "memory": "2", HUGE_PAGE_A: "5"},
        ),
        Usage(),
        None,
        [],
        None,
    ),
    (
        "pod-level hugepages resource not fit",
        pod_level(resource_pod(), {"cpu": "3m", "memory": "2", HUGE_PAGE_A: "10"}),
        Usage(),
        None,
        [insufficient(HUGE_PAGE_A, 10, 0, 5, True)],
        UNRESOLVABLE,
    ),
    (
        "one pod-level cpu resource fits and all init and non-init containers resources fit",
        pod_level(resource_pod(Usage(1, 1), init=(Usage(1, 1),)), {"cpu": "3m", "memory": "2"}),
        Usage(5, 19),
        None,
        [insufficient("memory", 2, 19, 20)],
        UNSCHED,
    ),
]


@pytest.mark.parametrize(
    ("pod", "existing", "args", "want_insufficient", "want_code"),
    [row[1:] for row in ENOUGH_REQUESTS],
    ids=[row[0] for row in ENOUGH_REQUESTS],
)
def test_it_reports_each_insufficient_resource_in_upstream_order(
    pod: Pod,
    existing: Usage,
    args: NodeResourcesFitArgs | None,
    want_insufficient: list[InsufficientResource],
    want_code: Code | None,
) -> None:
    node_info = NodeInfo(allocatable(10, 20, 32, 5, 20, 5), [resource_pod(existing)])
    plugin = new_fit(args)

    status = run_filter(plugin, pod, node_info)

    want_status = (
        None if want_code is None else new_status(want_code, *(r.reason for r in want_insufficient))
    )
    assert status == want_status
    got = fits_request(
        compute_pod_resource_request(pod),
        node_info,
        frozenset((args or NodeResourcesFitArgs()).ignored_resources),
        frozenset((args or NodeResourcesFitArgs()).ignored_resource_groups),
    )
    assert got == want_insufficient


def test_filter_without_pre_filter_is_an_error() -> None:
    node_info = NodeInfo(Node(name=""))

    status = new_fit().filter(CycleState(), Pod(name=""), node_info)

    assert status is not None
    assert status.code == Code.Error
    assert (
        status.message() == 'error reading "PreFilterNodeResourcesFit" from cycleState: not found'
    )


NOT_ENOUGH_REQUESTS = [
    (
        "even without specified resources, predicate fails when there's no space for additional "
        "pod",
        Pod(name=""),
        Usage(10, 20),
    ),
    (
        "even if both resources fit, predicate fails when there's no space for additional pod",
        resource_pod(Usage(1, 1)),
        Usage(5, 5),
    ),
    (
        "even for equal edge case, predicate fails when there's no space for additional pod",
        resource_pod(Usage(5, 1)),
        Usage(5, 19),
    ),
    (
        "even for equal edge case, predicate fails when there's no space for additional pod due "
        "to init container",
        resource_pod(Usage(5, 1), init=(Usage(5, 1),)),
        Usage(5, 19),
    ),
]


@pytest.mark.parametrize(
    ("pod", "existing"),
    [row[1:] for row in NOT_ENOUGH_REQUESTS],
    ids=[row[0] for row in NOT_ENOUGH_REQUESTS],
)
def test_it_rejects_node_without_a_free_pod_slot(pod: Pod, existing: Usage) -> None:
    node_info = NodeInfo(allocatable(10, 20, 1, 0, 0, 0), [resource_pod(existing)])

    status = run_filter(new_fit(), pod, node_info)

    assert status == new_status(Code.Unschedulable, "Too many pods")


STORAGE_REQUESTS = [
    ("empty storage requested, and pod fits", resource_pod(Usage(1, 1)), Usage(2, 10), None),
    (
        "storage ephemeral local storage request exceeds allocatable",
        resource_pod(Usage(ephemeral_storage=25)),
        Usage(2, 2),
        new_status(Code.UnschedulableAndUnresolvable, "Insufficient ephemeral-storage"),
    ),
    (
        "ephemeral local storage is sufficient",
        resource_pod(Usage(ephemeral_storage=5)),
        Usage(2, 2, ephemeral_storage=10),
        None,
    ),
    ("pod fits", resource_pod(Usage(ephemeral_storage=10)), Usage(2, 2), None),
]


@pytest.mark.parametrize(
    ("pod", "existing", "want_status"),
    [row[1:] for row in STORAGE_REQUESTS],
    ids=[row[0] for row in STORAGE_REQUESTS],
)
def test_it_checks_ephemeral_storage(pod: Pod, existing: Usage, want_status: object) -> None:
    node_info = NodeInfo(allocatable(10, 20, 32, 5, 20, 5), [resource_pod(existing)])

    assert run_filter(new_fit(), pod, node_info) == want_status


def _pod_with_sidecar(request: str | None, sidecar_request: str | None) -> Pod:
    pod = make_pod()
    pod = pod.req({"cpu": request}) if request else pod.container("")
    pod = pod.sidecar_req({"cpu": sidecar_request} if sidecar_request else {})
    return pod.obj()


RESTARTABLE_INIT_CONTAINERS = [
    (
        "allow pod without restartable init containers if sidecar containers is enabled",
        make_pod().container("").obj(),
        None,
    ),
    (
        "allow pod with restartable init containers if sidecar containers is enabled",
        _pod_with_sidecar(None, None),
        None,
    ),
    (
        "allow pod if the total requested resources do not exceed the node's allocatable resources",
        _pod_with_sidecar("1m", "1m"),
        None,
    ),
    (
        "not allow pod if the total requested resources do exceed the node's allocatable resources",
        _pod_with_sidecar("1m", "2m"),
        new_status(Code.UnschedulableAndUnresolvable, "Insufficient cpu"),
    ),
]


@pytest.mark.parametrize(
    ("pod", "want_status"),
    [row[1:] for row in RESTARTABLE_INIT_CONTAINERS],
    ids=[row[0] for row in RESTARTABLE_INIT_CONTAINERS],
)
def test_it_adds_sidecar_requests_to_the_containers(pod: Pod, want_status: object) -> None:
    node_info = NodeInfo(allocatable(2, 0, 1, 0, 0, 0))

    assert run_filter(new_fit(), pod, node_info) == want_status


DEFAULT_RESOURCES = ScoringStrategy().resources


def _rtcr(*points: tuple[int, int]) -> ScoringStrategy:
    shape = [UtilizationShapePoint(u, s) for u, s in points]
    return ScoringStrategy(
        REQUESTED_TO_CAPACITY_RATIO,
        DEFAULT_RESOURCES,
        RequestedToCapacityRatioParam(shape),
    )


def _two_nodes(cpu2: str) -> list[Node]:
    return [
        node_with({"cpu": "4000", "memory": "10000"}, "node1"),
        node_with({"cpu": cpu2, "memory": "10000"}, "node2"),
    ]


_EXISTING = [
    make_pod().name("e1").node("node1").req({"cpu": "2000", "memory": "4000"}).obj(),
    make_pod().name("e2").node("node2").req({"cpu": "1000", "memory": "2000"}).obj(),
]
_EXISTING_WITH_SIDECAR = [
    make_pod()
    .name("e1")
    .node("node1")
    .req({"cpu": "1000", "memory": "2000"})
    .sidecar_req({"cpu": "1000", "memory": "2000"})
    .obj(),
    make_pod().name("e2").node("node2").req({"cpu": "1000", "memory": "2000"}).obj(),
]
_BIG_POD = make_pod().req({"cpu": "3000", "memory": "5000"}).obj()
_SMALL_POD = make_pod().req({"cpu": "1000", "memory": "2000"}).obj()

FIT_SCORE = [
    (
        "test case for ScoringStrategy RequestedToCapacityRatio case1",
        _BIG_POD,
        _two_nodes("6000"),
        _EXISTING,
        _rtcr((0, 10), (100, 0)),
        True,
        [10, 32],
    ),
    (
        "test case for ScoringStrategy RequestedToCapacityRatio case2",
        _BIG_POD,
        _two_nodes("6000"),
        _EXISTING,
        _rtcr((0, 0), (100, 10)),
        True,
        [95, 68],
    ),
    (
        "test case for ScoringStrategy MostAllocated",
        _SMALL_POD,
        _two_nodes("6000"),
        _EXISTING,
        ScoringStrategy(MOST_ALLOCATED, DEFAULT_RESOURCES),
        True,
        [67, 36],
    ),
    (
        "test case for ScoringStrategy LeastAllocated",
        _SMALL_POD,
        _two_nodes("6000"),
        _EXISTING,
        ScoringStrategy(LEAST_ALLOCATED, DEFAULT_RESOURCES),
        True,
        [32, 63],
    ),
    (
        "test case for ScoringStrategy RequestedToCapacityRatio case1 if PreScore is not called",
        _BIG_POD,
        _two_nodes("6000"),
        _EXISTING,
        _rtcr((0, 10), (100, 0)),
        False,
        [10, 32],
    ),
    (
        "test case for ScoringStrategy MostAllocated if PreScore is not called",
        _SMALL_POD,
        _two_nodes("6000"),
        _EXISTING,
        ScoringStrategy(MOST_ALLOCATED, DEFAULT_RESOURCES),
        False,
        [67, 36],
    ),
    (
        "test case for ScoringStrategy LeastAllocated if PreScore is not called",
        _SMALL_POD,
        _two_nodes("6000"),
        _EXISTING,
        ScoringStrategy(LEAST_ALLOCATED, DEFAULT_RESOURCES),
        False,
        [32, 63],
    ),
    (
        "test case for ScoringStrategy MostAllocated with sidecar container",
        _SMALL_POD,
        _two_nodes("4000"),
        _EXISTING_WITH_SIDECAR,
        ScoringStrategy(MOST_ALLOCATED, DEFAULT_RESOURCES),
        True,
        [67, 45],
    ),
    (
        "test case for ScoringStrategy LeastAllocated with sidecar container",
        _SMALL_POD,
        _two_nodes("4000"),
        _EXISTING_WITH_SIDECAR,
        ScoringStrategy(LEAST_ALLOCATED, DEFAULT_RESOURCES),
        True,
        [32, 55],
    ),
]


@pytest.mark.parametrize(
    ("pod", "nodes", "existing", "strategy", "run_pre_score", "want_scores"),
    [row[1:] for row in FIT_SCORE],
    ids=[row[0] for row in FIT_SCORE],
)
def test_it_scores_with_the_configured_strategy(
    pod: Pod,
    nodes: list[Node],
    existing: list[Pod],
    strategy: ScoringStrategy,
    run_pre_score: bool,
    want_scores: list[int],
) -> None:
    handle = FakeHandle(existing, nodes)
    plugin = fit.new(NodeResourcesFitArgs(scoring_strategy=strategy), handle)
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


EVENTS = [
    (
        "Register events with InPlacePodVerticalScaling feature enabled",
        {"enable_in_place_pod_vertical_scaling": True, "enable_scheduling_queue_hint": False},
        [
            ClusterEvent(EventResource.Pod, ActionType.UpdatePodScaleDown | ActionType.Delete),
            ClusterEvent(
                EventResource.Node,
                ActionType.Add
                | ActionType.UpdateNodeAllocatable
                | ActionType.UpdateNodeTaint
                | ActionType.UpdateNodeLabel,
            ),
        ],
    ),
    (
        "Register events with SchedulingQueueHint feature enabled",
        {"enable_in_place_pod_vertical_scaling": False, "enable_scheduling_queue_hint": True},
        [
            ClusterEvent(EventResource.Pod, ActionType.Delete),
            ClusterEvent(EventResource.Node, ActionType.Add | ActionType.UpdateNodeAllocatable),
        ],
    ),
    (
        "Register events with InPlacePodVerticalScaling feature disabled",
        {"enable_in_place_pod_vertical_scaling": False, "enable_scheduling_queue_hint": False},
        [
            ClusterEvent(EventResource.Pod, ActionType.Delete),
            ClusterEvent(
                EventResource.Node,
                ActionType.Add
                | ActionType.UpdateNodeAllocatable
                | ActionType.UpdateNodeTaint
                | ActionType.UpdateNodeLabel,
            ),
        ],
    ),
    (
        "v1.35 defaults",
        {},
        [
            ClusterEvent(EventResource.Pod, ActionType.UpdatePodScaleDown | ActionType.Delete),
            ClusterEvent(EventResource.Node, ActionType.Add | ActionType.UpdateNodeAllocatable),
        ],
    ),
]


@pytest.mark.parametrize(
    ("features", "want_events"), [row[1:] for row in EVENTS], ids=[row[0] for row in EVENTS]
)
def test_it_registers_events_by_feature(
    features: dict[str, bool], want_events: list[ClusterEvent]
) -> None:
    registered = new_fit(None, **features).events_to_register()

    assert [e.event for e in registered] == want_events
    assert all(e.queueing_hint_fn is not None for e in registered)


def _cpu_pod(name: str, cpu: str, node: str = "") -> Pod:
    pod = make_pod().name(name).req({"cpu": cpu})
    return (pod.node(node) if node else pod).obj()


POD_EVENT_HINTS = [
    ("backoff-wrong-old-object", Pod(name=""), "not-a-pod", None, True, QueueingHint.Queue),
    ("backoff-wrong-new-object", Pod(name=""), None, "not-a-pod", True, QueueingHint.Queue),
    (
        "queue-on-other-pod-deleted",
        _cpu_pod("pod1", "1"),
        _cpu_pod("pod2", "1", "fake"),
        None,
        True,
        QueueingHint.Queue,
    ),
    (
        "skip-queue-on-unscheduled-pod-deleted",
        Pod(name=""),
        Pod(name=""),
        None,
        True,
        QueueingHint.QueueSkip,
    ),
    (
        "skip-queue-on-disable-inplace-pod-vertical-scaling",
        _cpu_pod("pod1", "1"),
        _cpu_pod("pod2", "2", "fake"),
        _cpu_pod("pod2", "1", "fake"),
        False,
        QueueingHint.QueueSkip,
    ),
    (
        "skip-queue-on-other-unscheduled-pod",
        _cpu_pod("pod1", "1"),
        _cpu_pod("pod2", "2"),
        _cpu_pod("pod2", "1"),
        True,
        QueueingHint.QueueSkip,
    ),
    (
        "skip-queue-on-other-pod-unrelated-resource-scaled-down",
        _cpu_pod("pod1", "1"),
        make_pod().name("pod2").req({"memory": "2"}).node("fake").obj(),
        make_pod().name("pod2").req({"memory": "1"}).node("fake").obj(),
        True,
        QueueingHint.QueueSkip,
    ),
    (
        "queue-on-other-pod-some-resource-scale-down",
        _cpu_pod("pod1", "1"),
        _cpu_pod("pod2", "2", "fake"),
        _cpu_pod("pod2", "1", "fake"),
        True,
        QueueingHint.Queue,
    ),
    (
        "queue-on-target-pod-some-resource-scale-down",
        _cpu_pod("pod1", "1"),
        _cpu_pod("pod1", "2"),
        _cpu_pod("pod1", "1"),
        True,
        QueueingHint.Queue,
    ),
]


@pytest.mark.parametrize(
    ("pod", "old_obj", "new_obj", "in_place", "want_hint"),
    [row[1:] for row in POD_EVENT_HINTS],
    ids=[row[0] for row in POD_EVENT_HINTS],
)
def test_it_requeues_after_a_pod_frees_what_the_pod_needs(
    pod: Pod, old_obj: object, new_obj: object, in_place: bool, want_hint: QueueingHint
) -> None:
    plugin = new_fit(enable_in_place_pod_vertical_scaling=in_place)

    assert plugin.is_schedulable_after_pod_event(pod, old_obj, new_obj) == want_hint


_MEM2_EXT1 = resource_pod(Usage(memory=2, scalars={EXT_A: 1}))

NODE_CHANGE_HINTS = [
    ("backoff-wrong-new-object", Pod(name=""), None, "not-a-node", QueueingHint.Queue),
    ("backoff-wrong-old-object", Pod(name=""), "not-a-node", Node(name=""), QueueingHint.Queue),
    (
        "skip-queue-on-node-add-without-sufficient-resources",
        resource_pod(Usage(memory=2)),
        None,
        node_with({"memory": "1"}),
        QueueingHint.QueueSkip,
    ),
    (
        "skip-queue-on-node-add-without-required-resource-type",
        resource_pod(Usage(scalars={EXT_A: 1})),
        None,
        node_with({EXT_B: "1"}),
        QueueingHint.QueueSkip,
    ),
    (
        "queue-on-node-add-with-sufficient-resources",
        _MEM2_EXT1,
        None,
        node_with({"memory": "4", EXT_A: "2"}),
        QueueingHint.Queue,
    ),
    (
        "skip-queue-on-node-unrelated-changes",
        _MEM2_EXT1,
        node_with({"memory": "2", EXT_A: "2"}),
        node_with({"memory": "2", EXT_A: "1", EXT_B: "2"}),
        QueueingHint.QueueSkip,
    ),
    (
        "queue-on-pod-requested-resources-increase",
        _MEM2_EXT1,
        node_with({"memory": "2", EXT_A: "1"}),
        node_with({"memory": "2", EXT_A: "2"}),
        QueueingHint.Queue,
    ),
    (
        "skip-queue-on-node-changes-from-suitable-to-unsuitable",
        _MEM2_EXT1,
        node_with({"memory": "4", EXT_A: "2"}),
        node_with({"memory": "1", EXT_A: "2"}),
        QueueingHint.QueueSkip,
    ),
    (
        "queue-on-node-changes-from-unsuitable-to-suitable",
        _MEM2_EXT1,
        node_with({"memory": "1", EXT_A: "2"}),
        node_with({"memory": "4", EXT_A: "2"}),
        QueueingHint.Queue,
    ),
]


@pytest.mark.parametrize(
    ("pod", "old_obj", "new_obj", "want_hint"),
    [row[1:] for row in NODE_CHANGE_HINTS],
    ids=[row[0] for row in NODE_CHANGE_HINTS],
)
def test_it_requeues_when_a_node_grows_to_fit_the_pod(
    pod: Pod, old_obj: object, new_obj: object, want_hint: QueueingHint
) -> None:
    assert new_fit().is_schedulable_after_node_change(pod, old_obj, new_obj) == want_hint


IS_FIT = [
    ("nil node", Pod(name=""), None, False),
    (
        "insufficient resource",
        make_pod().req({"cpu": "2"}).obj(),
        node_with({"cpu": "1"}),
        False,
    ),
    ("sufficient resource", make_pod().req({"cpu": "1"}).obj(), node_with({"cpu": "2"}), True),
]


@pytest.mark.parametrize(
    ("pod", "node", "want_fit"), [row[1:] for row in IS_FIT], ids=[row[0] for row in IS_FIT]
)
def test_it_tells_whether_a_pod_fits_an_empty_node(
    pod: Pod, node: Node | None, want_fit: bool
) -> None:
    # isFit is what the node hint asks first; a node add the pod fits is queued.
    hint = new_fit().is_schedulable_after_node_change(pod, None, node)

    assert (hint == QueueingHint.Queue) == want_fit
    if node is not None:
        assert (fits(pod, NodeInfo(node)) == []) == want_fit


def _full_node(pods: str, cpu: str, memory: str, storage: str, ext_a: str | None = None) -> Node:
    resources: dict[str, str | int] = {
        "pods": pods,
        "cpu": cpu,
        "memory": memory,
        "ephemeral-storage": storage,
    }
    if ext_a is not None:
        resources[EXT_A] = ext_a
    return node_with(resources)


_REQUESTING_ALL = resource_pod(Usage(2, 2, 2, scalars={EXT_A: 2}))
_REQUESTING_CPU_MEMORY = resource_pod(Usage(2, 2))

REQUESTED_RESOURCES_INCREASED = [
    (
        "no-requested-resources",
        resource_pod(Usage()),
        _full_node("1", "1", "1", "1", "1"),
        _full_node("1", "2", "2", "2", "2"),
        False,
    ),
    (
        "no-requested-resources-pods-increased",
        resource_pod(Usage()),
        _full_node("1", "1", "1", "1", "1"),
        _full_node("2", "1", "1", "1", "1"),
        True,
    ),
    (
        "scalar-resources-not-in-node",
        _REQUESTING_ALL,
        _full_node("32", "1", "2", "3"),
        _full_node("32", "1", "2", "1"),
        False,
    ),
    (
        "requested-resources-decreased",
        _REQUESTING_ALL,
        _full_node("32", "1", "2", "3", "4"),
        _full_node("32", "1", "2", "1", "1"),
        False,
    ),
    (
        "requested-resources-increased",
        _REQUESTING_ALL,
        _full_node("32", "1", "2", "3", "4"),
        _full_node("32", "3", "4", "3", "4"),
        True,
    ),
    (
        "non-requested-resources-decreased",
        _REQUESTING_CPU_MEMORY,
        _full_node("32", "1", "2", "3", "4"),
        _full_node("32", "1", "2", "1", "1"),
        False,
    ),
    (
        "non-requested-resources-increased",
        _REQUESTING_CPU_MEMORY,
        _full_node("32", "1", "2", "3", "4"),
        _full_node("32", "1", "2", "5", "6"),
        False,
    ),
]


@pytest.mark.parametrize(
    ("pod", "original", "modified", "want"),
    [row[1:] for row in REQUESTED_RESOURCES_INCREASED],
    ids=[row[0] for row in REQUESTED_RESOURCES_INCREASED],
)
def test_it_notices_growth_only_of_what_the_pod_requests(
    pod: Pod, original: Node, modified: Node, want: bool
) -> None:
    assert have_any_requested_resources_increased(pod, original, modified) is want


def test_it_implements_the_extension_points_it_names() -> None:
    plugin = fit.new(None, FakeHandle())

    assert plugin.name() == "NodeResourcesFit"
    for protocol in (PreFilterPlugin, FilterPlugin, PreScorePlugin, ScorePlugin):
        assert isinstance(plugin, protocol)
    assert isinstance(plugin, EnqueueExtensions)
    assert plugin.pre_filter_extensions() is None
    assert plugin.score_extensions() is None


def test_new_refuses_other_args() -> None:
    with pytest.raises(TypeError, match="NodeResourcesFitArgs"):
        fit.new(object(), FakeHandle())


def test_new_refuses_an_unknown_scoring_strategy() -> None:
    args = NodeResourcesFitArgs(scoring_strategy=ScoringStrategy(type="Random"))

    with pytest.raises(ConfigError) as raised:
        fit.new(args, FakeHandle())

    assert raised.value.errors == [
        'scoringStrategy.type: Unsupported value: "Random": supported values: "LeastAllocated", '
        '"MostAllocated", "RequestedToCapacityRatio"'
    ]
