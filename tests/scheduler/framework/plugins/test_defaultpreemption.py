"""DefaultPreemption: upstream's default_preemption_test.go tables (v1.34/v1.35).

Ported: TestPostFilter, TestDryRunPreemption, TestSelectBestCandidate, TestCustomSelection,
TestCustomOrdering, TestPodEligibleToPreemptOthers and TestPreempt, without the rows for
scheduler extenders and pod groups (not supported), plus the candidate-count arithmetic.
Frameworks are built with the real NodeResourcesFit, InterPodAffinity and PodTopologySpread.
Start times are whole seconds (upstream's rows use nanoseconds; only their order matters).
"""

from __future__ import annotations

import dataclasses
import random
from collections.abc import Callable, Iterable, Mapping, Sequence
from datetime import UTC, datetime
from typing import Any

import pytest

from schedviz.kube.labels import as_selector
from schedviz.kube.objects import (
    PREEMPT_LOWER_PRIORITY,
    PREEMPT_NEVER,
    LabelSelector,
    Node,
    Pod,
    PodCondition,
    PodDisruptionBudget,
    Taint,
)
from schedviz.scheduler.apis.config.types import (
    KubeSchedulerConfiguration,
    KubeSchedulerProfile,
    Plugin,
    PluginConfig,
    Plugins,
    PluginSet,
)
from schedviz.scheduler.apis.config.types_pluginargs import DefaultPreemptionArgs
from schedviz.scheduler.apis.config.validation import ConfigError
from schedviz.scheduler.backend.cache.snapshot import Snapshot, new_snapshot
from schedviz.scheduler.clock import VirtualClock
from schedviz.scheduler.framework.cycle_state import CycleState
from schedviz.scheduler.framework.interface import (
    Code,
    EnqueueExtensions,
    NominatingInfo,
    PostFilterPlugin,
    PreEnqueuePlugin,
    Status,
    as_status,
    is_success,
)
from schedviz.scheduler.framework.plugins import (
    defaultbinder,
    defaultpreemption,
    nodeaffinity,
    nodeports,
    prioritysort,
    tainttoleration,
)
from schedviz.scheduler.framework.plugins.defaultpreemption import DefaultPreemption
from schedviz.scheduler.framework.plugins.interpodaffinity import plugin as interpodaffinity
from schedviz.scheduler.framework.plugins.names import (
    DEFAULT_BINDER,
    DEFAULT_PREEMPTION,
    INTER_POD_AFFINITY,
    NODE_AFFINITY,
    NODE_PORTS,
    NODE_RESOURCES_FIT,
    POD_TOPOLOGY_SPREAD,
    PRIORITY_SORT,
    TAINT_TOLERATION,
)
from schedviz.scheduler.framework.plugins.noderesources import fit
from schedviz.scheduler.framework.plugins.podtopologyspread import plugin as podtopologyspread
from schedviz.scheduler.framework.runtime.framework import Framework
from schedviz.scheduler.framework.runtime.registry import PluginFactory, Registry
from schedviz.scheduler.framework.types import (
    ActionType,
    ClusterEvent,
    EventResource,
    NodeInfo,
    NodeToStatus,
    PodInfo,
    QueueingHint,
)
from schedviz.scheduler.preemption import (
    Candidate,
    PodDisruptionBudgets,
    disrupted_pods,
    pod_start_time,
)
from schedviz.scheduler.scheduler import Scheduler
from schedviz.scheduler.store import ClusterStore
from schedviz.scheduler.testing.wrappers import label_selector, make_node, make_pod

NEG, LOW, MID, HIGH, VERY_HIGH = -100, 0, 100, 1000, 10000
Resources = dict[str, str | int]
SMALL: Resources = {"cpu": "100m", "memory": "100"}
MEDIUM: Resources = {"cpu": "200m", "memory": "200"}
LARGE: Resources = {"cpu": "300m", "memory": "300"}
VERY_LARGE: Resources = {"cpu": "500m", "memory": "500"}
ONE_POD: Resources = {"pods": 1}
NODE_RES: Resources = {"cpu": "200m", "memory": "400"}
MAX_INT32 = 2**31 - 1

VIOLATING_KEY = "test.kubernetes.io/is-violating-pdb"


# ---------------------------------------------------------------------------------------------
# Builders


def node(name: str, resources: Resources, **labels: str) -> Node:
    """st.MakeNode().Capacity(...): the node keeps 32 pod slots unless ``pods`` is given."""
    wrapper = make_node().name(name).capacity({"pods": 32, **resources})
    for key, value in labels.items():
        wrapper = wrapper.label(key, value)
    return wrapper.obj()


def topology_node(path: str, resources: Resources) -> Node:
    """ "node-a/zone1" is node-a labelled hostname=node-a, zone=zone1 (upstream's labelKeys)."""
    parts = path.split("/")
    labels = dict(zip(("hostname", "zone", "region"), parts, strict=False))
    return node(parts[0], resources, **labels)


def pod(
    name: str,
    priority: int | None = None,
    node_name: str = "",
    req: Resources | None = None,
    labels: dict[str, str] | None = None,
) -> Pod:
    wrapper = make_pod().name(name).uid(name)
    if priority is not None:
        wrapper = wrapper.priority(priority)
    if node_name:
        wrapper = wrapper.node(node_name)
    if req is not None:
        wrapper = wrapper.req(req)
    if labels:
        wrapper = wrapper.labels(labels)
    return wrapper.obj()


def started(p: Pod, second: int) -> Pod:
    moment = datetime.fromtimestamp(second, UTC).strftime("%Y-%m-%dT%H:%M:%SZ")
    return dataclasses.replace(p, manifest={"status": {"startTime": moment}})


def terminating(p: Pod, *conditions: PodCondition) -> Pod:
    return dataclasses.replace(p, deletion_timestamp="2026-01-01T00:00:00Z", conditions=conditions)


def pdb(
    match_labels: dict[str, str],
    allowed: int,
    name: str = "pdb",
    disrupted: Iterable[str] = (),
) -> PodDisruptionBudget:
    return PodDisruptionBudget(
        name=name,
        selector=LabelSelector(match_labels=dict(match_labels)),
        disruptions_allowed=allowed,
        manifest={"status": {"disruptedPods": {p: "2026-01-01T00:00:00Z" for p in disrupted}}},
    )


class ClusterHandle:
    """What the Scheduler gives a Framework: the snapshot, the API, the nominator."""

    def __init__(
        self,
        pods: Sequence[Pod],
        nodes: Sequence[Node],
        objects: Iterable[Any] = (),
        nominated: Sequence[Pod] = (),
        snapshot: Snapshot | None = None,
    ) -> None:
        self.snapshot = snapshot if snapshot is not None else new_snapshot(pods, nodes)
        self.store = ClusterStore([*pods, *nodes, *nominated, *objects])
        self.nominated = list(nominated)
        self.deleted: list[str] = []
        self.activated: list[str] = []

    def snapshot_shared_lister(self) -> Snapshot:
        return self.snapshot

    @property
    def objects(self) -> ClusterStore:
        return self.store

    def bind_pod(self, pod: Pod, node_name: str) -> Status | None:
        return None

    def nominated_pods_for_node(self, node_name: str) -> list[PodInfo]:
        return [PodInfo(p) for p in self.nominated if p.nominated_node_name == node_name]

    def delete_pod(self, pod: Pod) -> None:
        self.store.delete("Pod", pod.key)
        self.deleted.append(pod.name)

    def record_event(self, type_: str, reason: str, pod: Pod, message: str) -> object:
        return self.store.record_event(type_, reason, pod, message)

    def run_async(self, work: Callable[[], None]) -> None:
        # Upstream's tests wait for the preemption goroutine: run it at once.
        work()

    def activate(self, pods: Mapping[str, Pod]) -> None:
        self.activated.extend(pods)


def build(
    handle: ClusterHandle,
    plugins: Sequence[tuple[str, PluginFactory, Sequence[str]]],
    args: DefaultPreemptionArgs | None = None,
) -> tuple[Framework, DefaultPreemption]:
    """tf.NewFramework with QueueSort, Bind, DefaultPreemption and ``plugins`` at their points."""
    points: dict[str, list[Plugin]] = {"pre_filter": [], "filter": []}
    factories: dict[str, PluginFactory] = {
        PRIORITY_SORT: prioritysort.new,
        DEFAULT_BINDER: defaultbinder.new,
        DEFAULT_PREEMPTION: defaultpreemption.new,
    }
    for name, factory, at in plugins:
        factories[name] = factory
        for point in at:
            points[point].append(Plugin(name))
    profile = KubeSchedulerProfile(
        scheduler_name="default-scheduler",
        plugins=Plugins(
            queue_sort=PluginSet([Plugin(PRIORITY_SORT)]),
            pre_filter=PluginSet(points["pre_filter"]),
            filter=PluginSet(points["filter"]),
            post_filter=PluginSet([Plugin(DEFAULT_PREEMPTION)]),
            bind=PluginSet([Plugin(DEFAULT_BINDER)]),
        ),
        plugin_config=[PluginConfig(DEFAULT_PREEMPTION, args)] if args is not None else [],
    )
    framework = Framework(profile, Registry(factories), handle)
    plugin = framework.plugins_map[DEFAULT_PREEMPTION]
    assert isinstance(plugin, DefaultPreemption)
    return framework, plugin


def empty_framework() -> Framework:
    return build(ClusterHandle([], []), [])[0]


FIT = (NODE_RESOURCES_FIT, fit.new, ("pre_filter", "filter"))
IPA = (INTER_POD_AFFINITY, interpodaffinity.new, ("pre_filter", "filter"))
PTS = (POD_TOPOLOGY_SPREAD, podtopologyspread.new, ("pre_filter", "filter"))


def pre_filtered(framework: Framework, p: Pod) -> CycleState:
    state = CycleState()
    _, status, _ = framework.run_pre_filter_plugins(state, p)
    assert is_success(status), status
    return state


def scripted(*offsets: int) -> Callable[[int], int]:
    """Upstream's rand.New(rand.NewSource(4)).Int31n for five nodes: 4, 1, 3, ..."""
    values = iter(offsets)
    return lambda n: next(values)


def statuses(codes: dict[str, Code]) -> NodeToStatus:
    return NodeToStatus({name: Status(code) for name, code in codes.items()})


# ---------------------------------------------------------------------------------------------
# A plugin whose PreFilter extensions fail on nodes labelled error=true (upstream's TestPlugin)


class ErrorOnLabelPlugin:
    def name(self) -> str:
        return "test-plugin"

    def pre_filter(
        self, state: CycleState, p: Pod, nodes: Sequence[NodeInfo]
    ) -> tuple[None, Status | None]:
        return None, None

    def pre_filter_extensions(self) -> ErrorOnLabelPlugin:
        return self

    def add_pod(
        self, state: CycleState, p: Pod, pod_info: PodInfo, node_info: NodeInfo
    ) -> Status | None:
        if node_info.node is not None and node_info.node.labels.get("error") == "true":
            return as_status(f"failed to add pod: {p.name}")
        return None

    def remove_pod(
        self, state: CycleState, p: Pod, pod_info: PodInfo, node_info: NodeInfo
    ) -> Status | None:
        if node_info.node is not None and node_info.node.labels.get("error") == "true":
            return as_status(f"failed to remove pod: {p.name}")
        return None

    def filter(self, state: CycleState, p: Pod, node_info: NodeInfo) -> Status | None:
        return None


TEST_PLUGIN = ("test-plugin", lambda args, handle: ErrorOnLabelPlugin(), ("pre_filter",))


# ---------------------------------------------------------------------------------------------
# TestPostFilter


@dataclasses.dataclass
class PostFilterCase:
    name: str
    pod: Pod
    pods: list[Pod]
    nodes: list[Node]
    statuses: NodeToStatus
    want_node: str | None  # None: no result; "": a result clearing the nomination
    want_code: Code
    want_message: str = ""
    pdbs: list[PodDisruptionBudget] = dataclasses.field(default_factory=list)
    victims: list[str] | None = None


U, UU = Code.Unschedulable, Code.UnschedulableAndUnresolvable

POST_FILTER_CASES = [
    PostFilterCase(
        "pod with higher priority can be made schedulable",
        pod("p", HIGH),
        [pod("p1", node_name="node1")],
        [node("node1", ONE_POD)],
        statuses({"node1": U}),
        "node1",
        Code.Success,
        victims=["default/p1"],
    ),
    PostFilterCase(
        "pod with tied priority is still unschedulable",
        pod("p"),
        [pod("p1", node_name="node1")],
        [node("node1", ONE_POD)],
        statuses({"node1": U}),
        "",
        U,
        "preemption: 0/1 nodes are available: 1 No preemption victims found for incoming pod.",
    ),
    PostFilterCase(
        "preemption should respect filteredNodesStatuses",
        pod("p", HIGH),
        [pod("p1", node_name="node1")],
        [node("node1", ONE_POD)],
        statuses({"node1": UU}),
        "",
        U,
        "preemption: 0/1 nodes are available: 1 Preemption is not helpful for scheduling.",
    ),
    PostFilterCase(
        "preemption should respect absent NodeToStatusReader entry meaning "
        "UnschedulableAndUnresolvable",
        pod("p", HIGH),
        [pod("p1", node_name="node1")],
        [node("node1", ONE_POD)],
        NodeToStatus(),
        "",
        U,
        "preemption: 0/1 nodes are available: 1 Preemption is not helpful for scheduling.",
    ),
    PostFilterCase(
        "pod can be made schedulable on one node",
        pod("p", MID),
        [pod("p1", HIGH, "node1"), pod("p2", LOW, "node2")],
        [node("node1", ONE_POD), node("node2", ONE_POD)],
        statuses({"node1": U, "node2": U}),
        "node2",
        Code.Success,
        victims=["default/p2"],
    ),
    PostFilterCase(
        "pod can be made schedulable on minHighestPriority node",
        pod("p", VERY_HIGH),
        [
            pod("p1", HIGH, "node1", labels={VIOLATING_KEY: "non-violating"}),
            pod("p2", LOW, "node1", labels={VIOLATING_KEY: "violating"}),
            pod("p3", MID, "node2", labels={VIOLATING_KEY: "violating"}),
        ],
        [node("node1", ONE_POD), node("node2", ONE_POD)],
        statuses({"node1": U, "node2": U}),
        "node2",
        Code.Success,
        pdbs=[
            pdb({VIOLATING_KEY: "violating"}, 0, "violating-pdb"),
            pdb({VIOLATING_KEY: "non-violating"}, MAX_INT32, "non-violating-pdb"),
        ],
        victims=["default/p3"],
    ),
    PostFilterCase(
        "no candidate nodes found, no enough resource after removing low priority pods",
        pod("p", HIGH, req=LARGE),
        [pod("p1", node_name="node1"), pod("p2", node_name="node2")],
        [node("node1", NODE_RES), node("node2", NODE_RES)],
        statuses({"node1": U, "node2": U}),
        "",
        U,
        "preemption: 0/2 nodes are available: 2 Insufficient cpu.",
    ),
    PostFilterCase(
        "no candidate nodes found with mixed reasons, no lower priority pod and no enough CPU "
        "resource",
        pod("p", HIGH, req=LARGE),
        [pod("p1", HIGH, "node1"), pod("p2", node_name="node2"), pod("p3", HIGH, "node3")],
        [node("node1", ONE_POD), node("node2", NODE_RES), node("node3", ONE_POD)],
        statuses({"node1": U, "node2": U, "node3": U}),
        "",
        U,
        "preemption: 0/3 nodes are available: 1 Insufficient cpu, "
        "2 No preemption victims found for incoming pod.",
    ),
    PostFilterCase(
        "no candidate nodes found with mixed reason, 2 UnschedulableAndUnresolvable nodes and 2 "
        "nodes don't have enough CPU resource",
        pod("p", HIGH, req=LARGE),
        [pod("p1", node_name="node1"), pod("p2", node_name="node2")],
        [node(f"node{i}", NODE_RES) for i in range(1, 5)],
        statuses({"node1": U, "node2": U, "node4": UU}),
        "",
        U,
        "preemption: 0/4 nodes are available: 2 Insufficient cpu, "
        "2 Preemption is not helpful for scheduling.",
    ),
    PostFilterCase(
        "only one node but failed with TestPlugin",
        pod("p", HIGH, req=LARGE),
        [pod("p1", node_name="node1")],
        [node("node1", LARGE, error="true")],
        statuses({"node1": U}),
        None,
        Code.Error,
        'preemption: running RemovePod on PreFilter plugin "test-plugin": failed to remove pod: p',
    ),
    PostFilterCase(
        "one failed with TestPlugin and the other pass",
        pod("p", HIGH, req=LARGE),
        [pod("p1", node_name="node1"), pod("p2", node_name="node2", req=MEDIUM)],
        [node("node1", LARGE, error="true"), node("node2", LARGE)],
        statuses({"node1": U, "node2": U}),
        "node2",
        Code.Success,
        victims=["default/p2"],
    ),
]


@pytest.mark.parametrize("case", POST_FILTER_CASES, ids=lambda c: c.name)
def test_post_filter(case: PostFilterCase) -> None:
    handle = ClusterHandle(case.pods, case.nodes, [case.pod, *case.pdbs])
    framework, plugin = build(handle, [FIT, TEST_PLUGIN])
    state = pre_filtered(framework, case.pod)

    result, status = plugin.post_filter(state, case.pod, case.statuses)

    code = Code.Success if status is None else status.code
    assert code == case.want_code
    assert (status.message() if status is not None else "") == case.want_message
    if case.want_node is None:
        assert result is None
    else:
        assert result is not None
        assert result.nominating_info == NominatingInfo(case.want_node, True)
    if case.victims is not None:
        assert result is not None and result.details is not None
        assert result.details.victims == case.victims
        assert sorted(handle.deleted) == sorted(v.split("/")[1] for v in case.victims)


# ---------------------------------------------------------------------------------------------
# TestDryRunPreemption


ERR_REASON_FAKE = "Nodes failed the fake plugin"


class FakeFilter:
    """tf.FakeFilterPlugin: counts its calls and fails the nodes given a failing code."""

    def __init__(self, codes: dict[str, Code]) -> None:
        self.codes = codes
        self.calls = 0

    def name(self) -> str:
        return "FakeFilter"

    def filter(self, state: CycleState, p: Pod, node_info: NodeInfo) -> Status | None:
        self.calls += 1
        code = self.codes.get(node_info.name, Code.Success)
        if code != Code.Success:
            return Status(code, (f"injecting failure for pod {p.name}",))
        return None


class ConstantFilter:
    def __init__(self, name: str, fits: Callable[[Pod, NodeInfo], bool]) -> None:
        self._name = name
        self._fits = fits

    def name(self) -> str:
        return self._name

    def filter(self, state: CycleState, p: Pod, node_info: NodeInfo) -> Status | None:
        return None if self._fits(p, node_info) else Status(U, (ERR_REASON_FAKE,))


TRUE_FILTER = (
    "TrueFilter",
    lambda a, h: ConstantFilter("TrueFilter", lambda p, n: True),
    ("filter",),
)
FALSE_FILTER = (
    "FalseFilter",
    lambda a, h: ConstantFilter("FalseFilter", lambda p, n: False),
    ("filter",),
)
MATCH_FILTER = (
    "MatchFilter",
    lambda a, h: ConstantFilter("MatchFilter", lambda p, n: p.name == n.name),
    ("filter",),
)

Expected = dict[str, tuple[list[str], int]]  # node -> (victim names sorted, PDB violations)


@dataclasses.dataclass
class DryRunCase:
    name: str
    plugins: list[tuple[str, PluginFactory, Sequence[str]]]
    node_names: list[str]
    test_pods: list[Pod]
    init_pods: list[Pod]
    expected: list[Expected]
    filter_calls: list[int]
    fake_filter_code: Code = Code.Success
    pdbs: list[PodDisruptionBudget] = dataclasses.field(default_factory=list)
    args: DefaultPreemptionArgs | None = None
    offsets: tuple[int, ...] = ()


def _two_mid_large() -> list[Pod]:
    return [pod("p1", MID, "node1", LARGE), pod("p2", MID, "node2", LARGE)]


def _five(priorities: list[int], labelled: Sequence[int] = ()) -> list[Pod]:
    return [
        pod(
            f"p{i}",
            priority,
            f"node{i}",
            LARGE,
            labels={"app": "foo"} if i in labelled else None,
        )
        for i, priority in enumerate(priorities, start=1)
    ]


FIVE_NODES = [f"node{i}" for i in range(1, 6)]
LIMIT_TO_2 = DefaultPreemptionArgs(
    min_candidate_nodes_percentage=40, min_candidate_nodes_absolute=1
)
FOO = {"foo": ""}
APP_FOO = {"app": "foo"}


def _pdb_pods(*names: str) -> list[Pod]:
    return [pod(n, MID, "node1", MEDIUM, APP_FOO) for n in names]


DRY_RUN_CASES = [
    DryRunCase(
        "a pod that does not fit on any node",
        [FALSE_FILTER],
        ["node1", "node2"],
        [pod("p", HIGH)],
        [pod("p1", MID, "node1"), pod("p2", MID, "node2")],
        [{}],
        [2],
    ),
    DryRunCase(
        "a pod that fits with no preemption",
        [TRUE_FILTER],
        ["node1", "node2"],
        [pod("p", HIGH)],
        [pod("p1", MID, "node1"), pod("p2", MID, "node2")],
        [{}],
        [2],
        fake_filter_code=U,
    ),
    DryRunCase(
        "a pod that fits on one node with no preemption",
        [MATCH_FILTER],
        ["node1", "node2"],
        [pod("node1", HIGH)],
        [pod("p1", MID, "node1"), pod("p2", MID, "node2")],
        [{}],
        [2],
        fake_filter_code=U,
    ),
    DryRunCase(
        "a pod that fits on both nodes when lower priority pods are preempted",
        [FIT],
        ["node1", "node2"],
        [pod("p", HIGH, req=LARGE)],
        _two_mid_large(),
        [{"node1": (["p1"], 0), "node2": (["p2"], 0)}],
        [4],
    ),
    DryRunCase(
        "a pod that would fit on the nodes, but other pods running are higher priority, no "
        "preemption would happen",
        [FIT],
        ["node1", "node2"],
        [pod("p", LOW, req=LARGE)],
        _two_mid_large(),
        [{}],
        [0],
    ),
    DryRunCase(
        "medium priority pod is preempted, but lower priority one stays as it is small",
        [FIT],
        ["node1", "node2"],
        [pod("p", HIGH, req=LARGE)],
        [
            pod("p1.1", LOW, "node1", SMALL),
            pod("p1.2", MID, "node1", LARGE),
            pod("p2", MID, "node2", LARGE),
        ],
        [{"node1": (["p1.2"], 0), "node2": (["p2"], 0)}],
        [5],
    ),
    DryRunCase(
        "mixed priority pods are preempted",
        [FIT],
        ["node1", "node2"],
        [pod("p", HIGH, req=LARGE)],
        [
            pod("p1.1", MID, "node1", SMALL),
            pod("p1.2", LOW, "node1", SMALL),
            pod("p1.3", MID, "node1", MEDIUM),
            pod("p1.4", HIGH, "node1", SMALL),
            pod("p2", HIGH, "node2", LARGE),
        ],
        [{"node1": (["p1.2", "p1.3"], 0)}],
        [4],
    ),
    DryRunCase(
        "mixed priority pods are preempted, pick later StartTime one when priorities are equal",
        [FIT],
        ["node1", "node2"],
        [pod("p", HIGH, req=LARGE)],
        [
            started(pod("p1.1", LOW, "node1", SMALL), 5),
            started(pod("p1.2", LOW, "node1", SMALL), 4),
            started(pod("p1.3", MID, "node1", MEDIUM), 3),
            started(pod("p1.4", HIGH, "node1", SMALL), 2),
            started(pod("p2", HIGH, "node2", LARGE), 1),
        ],
        [{"node1": (["p1.1", "p1.3"], 0)}],
        [4],
    ),
    DryRunCase(
        "pod with anti-affinity is preempted",
        [FIT, IPA],
        ["node1", "node2"],
        [pod("p", HIGH, req=SMALL, labels=FOO)],
        [
            make_pod()
            .name("p1.1")
            .uid("p1.1")
            .node("node1")
            .label("foo", "")
            .priority(LOW)
            .req(SMALL)
            .pod_anti_affinity_exists("foo", "hostname")
            .obj(),
            pod("p1.2", MID, "node1", SMALL),
            pod("p1.3", HIGH, "node1", SMALL),
            pod("p2", HIGH, "node2", SMALL),
        ],
        [{"node1": (["p1.1"], 0)}],
        [3],
    ),
    DryRunCase(
        "preemption to resolve pod topology spread filter failure",
        [PTS],
        ["node-a/zone1", "node-b/zone1", "node-x/zone2"],
        [
            make_pod()
            .name("p")
            .uid("p")
            .label("foo", "")
            .priority(HIGH)
            .spread_constraint(
                1, "zone", "DoNotSchedule", label_selector(expressions=[("foo", "Exists", [])])
            )
            .spread_constraint(
                1, "hostname", "DoNotSchedule", label_selector(expressions=[("foo", "Exists", [])])
            )
            .obj()
        ],
        [
            pod("pod-a1", MID, "node-a", labels=FOO),
            pod("pod-a2", LOW, "node-a", labels=FOO),
            pod("pod-b1", LOW, "node-b", labels=FOO),
            pod("pod-x1", HIGH, "node-x", labels=FOO),
            pod("pod-x2", HIGH, "node-x", labels=FOO),
        ],
        [{"node-a": (["pod-a2"], 0), "node-b": (["pod-b1"], 0)}],
        [5],
    ),
    DryRunCase(
        "get Unschedulable in the preemption phase when the filter plugins filtering the nodes",
        [FIT],
        ["node1", "node2"],
        [pod("p", HIGH, req=LARGE)],
        _two_mid_large(),
        [{}],
        [2],
        fake_filter_code=U,
    ),
    DryRunCase(
        "preemption with violation of same pdb",
        [FIT],
        ["node1"],
        [pod("p", HIGH, req=VERY_LARGE)],
        _pdb_pods("p1.1", "p1.2"),
        [{"node1": (["p1.1", "p1.2"], 1)}],
        [3],
        pdbs=[pdb(APP_FOO, 1)],
    ),
    DryRunCase(
        "preemption with violation of the pdb with pod whose eviction was processed, the victim "
        "doesn't belong to DisruptedPods",
        [FIT],
        ["node1"],
        [pod("p", HIGH, req=VERY_LARGE)],
        _pdb_pods("p1.1", "p1.2"),
        [{"node1": (["p1.1", "p1.2"], 1)}],
        [3],
        pdbs=[pdb(APP_FOO, 1, disrupted=["p2"])],
    ),
    DryRunCase(
        "preemption with violation of the pdb with pod whose eviction was processed, the victim "
        "belongs to DisruptedPods",
        [FIT],
        ["node1"],
        [pod("p", HIGH, req=VERY_LARGE)],
        _pdb_pods("p1.1", "p1.2"),
        [{"node1": (["p1.1", "p1.2"], 0)}],
        [3],
        pdbs=[pdb(APP_FOO, 1, disrupted=["p1.2"])],
    ),
    DryRunCase(
        "preemption with violation of the pdb with pod whose eviction was processed, the victim "
        "which belongs to DisruptedPods is treated as 'nonViolating'",
        [FIT],
        ["node1"],
        [pod("p", HIGH, req=VERY_LARGE)],
        _pdb_pods("p1.1", "p1.2", "p1.3"),
        [{"node1": (["p1.1", "p1.2", "p1.3"], 1)}],
        [4],
        pdbs=[pdb(APP_FOO, 1, disrupted=["p1.3"])],
    ),
    DryRunCase(
        "all nodes are possible candidates, but DefaultPreemptionArgs limits to 2",
        [FIT],
        FIVE_NODES,
        [pod("p", HIGH, req=LARGE)],
        _five([MID] * 5),
        # offset 4: node5 (yes), node1 (yes)
        [{"node1": (["p1"], 0), "node5": (["p5"], 0)}],
        [4],
        args=LIMIT_TO_2,
        offsets=(4,),
    ),
    DryRunCase(
        "some nodes are not possible candidates, DefaultPreemptionArgs limits to 2",
        [FIT],
        FIVE_NODES,
        [pod("p", HIGH, req=LARGE)],
        _five([MID, VERY_HIGH, MID, MID, VERY_HIGH]),
        # offset 4: node5 (no), node1 (yes), node2 (no), node3 (yes)
        [{"node1": (["p1"], 0), "node3": (["p3"], 0)}],
        [4],
        args=LIMIT_TO_2,
        offsets=(4,),
    ),
    DryRunCase(
        "preemption offset across multiple scheduling cycles and wrap around",
        [FIT],
        FIVE_NODES,
        [pod("tp1", HIGH, req=LARGE), pod("tp2", HIGH, req=LARGE), pod("tp3", HIGH, req=LARGE)],
        _five([MID] * 5),
        [
            {"node1": (["p1"], 0), "node5": (["p5"], 0)},  # offset 4
            {"node2": (["p2"], 0), "node3": (["p3"], 0)},  # offset 1
            {"node4": (["p4"], 0), "node5": (["p5"], 0)},  # offset 3
        ],
        [4, 4, 4],
        args=LIMIT_TO_2,
        offsets=(4, 1, 3),
    ),
    DryRunCase(
        "preemption looks past numCandidates until a non-PDB violating node is found",
        [FIT],
        FIVE_NODES,
        [pod("p", HIGH, req=LARGE)],
        _five([MID] * 5, labelled=(1, 2, 5)),
        # offset 4: node5 (yes, pdb), node1 (yes, pdb), node2 (no: list full), node3 (yes)
        [{"node1": (["p1"], 1), "node3": (["p3"], 0), "node5": (["p5"], 1)}],
        [8],
        pdbs=[pdb(APP_FOO, 0)],
        args=DefaultPreemptionArgs(
            min_candidate_nodes_percentage=40, min_candidate_nodes_absolute=2
        ),
        offsets=(4,),
    ),
]


def _candidates_by_node(candidates: Sequence[Candidate]) -> Expected:
    return {
        c.name: (sorted(p.name for p in c.victims.pods), c.victims.num_pdb_violations)
        for c in candidates
    }


@pytest.mark.parametrize("case", DRY_RUN_CASES, ids=lambda c: c.name)
def test_dry_run_preemption(case: DryRunCase) -> None:
    nodes = [topology_node(name, VERY_LARGE) for name in case.node_names]
    fake = FakeFilter({n.name: case.fake_filter_code for n in nodes})
    plugins = [("FakeFilter", lambda a, h: fake, ("filter",)), *case.plugins]
    handle = ClusterHandle(case.init_pods, nodes, [*case.test_pods, *case.pdbs])
    framework, plugin = build(handle, plugins, case.args)
    if case.offsets:
        plugin.offset_rand = scripted(*case.offsets)
    node_infos = sorted(handle.snapshot.list(), key=lambda n: n.name)

    previous = 0
    for cycle, preemptor in enumerate(case.test_pods):
        state = pre_filtered(framework, preemptor)
        offset, num_candidates = plugin.get_offset_and_num_candidates(len(node_infos))
        got, _, _ = plugin.evaluator.dry_run_preemption(
            state, preemptor, node_infos, case.pdbs, offset, num_candidates
        )
        assert fake.calls - previous == case.filter_calls[cycle], f"cycle {cycle}"
        previous = fake.calls
        assert _candidates_by_node(got) == case.expected[cycle], f"cycle {cycle}"


def test_equal_priority_victims_without_start_time_are_reprieved_in_go_sort_order() -> None:
    """Upstream's finding preemption-victims-starttime-1: MoreImportantPod is true both ways for
    two pods without status.startTime, so sort.Slice swaps them; the one listed first on the
    node is then reprieved last and becomes the victim."""
    nodes = [topology_node("node1", {"cpu": "2", "memory": "4Gi"})]
    running = [
        pod("run-7", LOW, "node1", {"cpu": "1", "memory": "1Gi"}),
        pod("run-12", LOW, "node1", {"cpu": "1", "memory": "1Gi"}),
    ]
    preemptor = pod("pend", HIGH, req={"cpu": "1", "memory": "1Gi"})
    handle = ClusterHandle(running, nodes, [preemptor])
    framework, plugin = build(handle, [FIT])
    got, _, error = plugin.evaluator.dry_run_preemption(
        pre_filtered(framework, preemptor), preemptor, handle.snapshot.list(), [], 0, 1
    )
    assert error is None
    assert [[p.name for p in c.victims.pods] for c in got] == [["run-7"]]


def test_dry_run_preemption_puts_candidates_without_pdb_violation_first() -> None:
    case = DRY_RUN_CASES[-1]
    nodes = [topology_node(name, VERY_LARGE) for name in case.node_names]
    handle = ClusterHandle(case.init_pods, nodes, [*case.test_pods, *case.pdbs])
    framework, plugin = build(handle, [FIT], case.args)
    preemptor = case.test_pods[0]
    got, node_statuses, error = plugin.evaluator.dry_run_preemption(
        pre_filtered(framework, preemptor), preemptor, handle.snapshot.list(), case.pdbs, 4, 2
    )
    assert [c.name for c in got] == ["node3", "node5", "node1"]
    assert len(node_statuses) == 0 and error is None


# ---------------------------------------------------------------------------------------------
# TestSelectBestCandidate


def _nodes_pods(rows: list[tuple[str, int, Resources, int]]) -> list[Pod]:
    """(name, priority, requests, start second) rows; the node is the name's prefix."""
    return [
        started(pod(name, priority, "node" + name[1], req), second)
        for name, priority, req, second in rows
    ]


SELECT_BEST_CASES: list[tuple[str, list[str], Pod, list[Pod], list[str]]] = [
    (
        "a pod that fits on both nodes when lower priority pods are preempted",
        ["node1", "node2"],
        pod("p", HIGH, req=LARGE),
        _nodes_pods([("p1", MID, LARGE, 0), ("p2", MID, LARGE, 0)]),
        ["node1", "node2"],
    ),
    (
        "node with min highest priority pod is picked",
        ["node1", "node2", "node3"],
        pod("p", HIGH, req=VERY_LARGE),
        _nodes_pods(
            [
                ("p1.1", MID, MEDIUM, 0),
                ("p1.2", MID, LARGE, 0),
                ("p2.1", MID, MEDIUM, 0),
                ("p2.2", LOW, MEDIUM, 0),
                ("p3.1", LOW, MEDIUM, 0),
                ("p3.2", LOW, MEDIUM, 0),
            ]
        ),
        ["node3"],
    ),
    (
        "when highest priorities are the same, minimum sum of priorities is picked",
        ["node1", "node2", "node3"],
        pod("p", HIGH, req=VERY_LARGE),
        _nodes_pods(
            [
                ("p1.1", MID, MEDIUM, 0),
                ("p1.2", MID, LARGE, 0),
                ("p2.1", MID, LARGE, 0),
                ("p2.2", LOW, MEDIUM, 0),
                ("p3.1", MID, MEDIUM, 0),
                ("p3.2", MID, MEDIUM, 0),
            ]
        ),
        ["node2"],
    ),
    (
        "when highest priority and sum are the same, minimum number of pods is picked",
        ["node1", "node2", "node3"],
        pod("p", HIGH, req=VERY_LARGE),
        _nodes_pods(
            [
                ("p1.1", MID, SMALL, 0),
                ("p1.2", NEG, SMALL, 0),
                ("p1.3", MID, SMALL, 0),
                ("p1.4", NEG, SMALL, 0),
                ("p2.1", MID, LARGE, 0),
                ("p2.2", NEG, MEDIUM, 0),
                ("p3.1", MID, MEDIUM, 0),
                ("p3.2", NEG, SMALL, 0),
                ("p3.3", LOW, SMALL, 0),
            ]
        ),
        ["node2"],
    ),
    (
        "sum of adjusted priorities is considered",
        ["node1", "node2", "node3"],
        pod("p", HIGH, req=VERY_LARGE),
        _nodes_pods(
            [
                ("p1.1", MID, SMALL, 0),
                ("p1.2", NEG, SMALL, 0),
                ("p1.3", NEG, SMALL, 0),
                ("p2.1", MID, LARGE, 0),
                ("p2.2", NEG, MEDIUM, 0),
                ("p3.1", MID, MEDIUM, 0),
                ("p3.2", NEG, SMALL, 0),
                ("p3.3", LOW, SMALL, 0),
            ]
        ),
        ["node2"],
    ),
    (
        "non-overlapping lowest high priority, sum priorities, and number of pods",
        ["node1", "node2", "node3", "node4"],
        pod("p", VERY_HIGH, req=VERY_LARGE),
        _nodes_pods(
            [
                ("p1.1", MID, SMALL, 0),
                ("p1.2", LOW, SMALL, 0),
                ("p1.3", LOW, SMALL, 0),
                ("p2.1", HIGH, LARGE, 0),
                ("p3.1", MID, MEDIUM, 0),
                ("p3.2", LOW, SMALL, 0),
                ("p3.3", LOW, SMALL, 0),
                ("p3.4", LOW, MEDIUM, 0),
                ("p4.1", MID, MEDIUM, 0),
                ("p4.2", MID, SMALL, 0),
                ("p4.3", MID, SMALL, 0),
                ("p4.4", NEG, SMALL, 0),
            ]
        ),
        ["node1"],
    ),
    (
        "same priority, same number of victims, different start time for each node's pod",
        ["node1", "node2", "node3"],
        pod("p", HIGH, req=VERY_LARGE),
        _nodes_pods(
            [
                ("p1.1", MID, MEDIUM, 2),
                ("p1.2", MID, MEDIUM, 2),
                ("p2.1", MID, MEDIUM, 3),
                ("p2.2", MID, MEDIUM, 3),
                ("p3.1", MID, MEDIUM, 1),
                ("p3.2", MID, MEDIUM, 1),
            ]
        ),
        ["node2"],
    ),
    (
        "same priority, same number of victims, different start time for all pods",
        ["node1", "node2", "node3"],
        pod("p", HIGH, req=VERY_LARGE),
        _nodes_pods(
            [
                ("p1.1", MID, MEDIUM, 4),
                ("p1.2", MID, MEDIUM, 2),
                ("p2.1", MID, MEDIUM, 5),
                ("p2.2", MID, MEDIUM, 1),
                ("p3.1", MID, MEDIUM, 3),
                ("p3.2", MID, MEDIUM, 6),
            ]
        ),
        ["node3"],
    ),
    (
        "different priority, same number of victims, different start time for all pods",
        ["node1", "node2", "node3"],
        pod("p", HIGH, req=VERY_LARGE),
        _nodes_pods(
            [
                ("p1.1", LOW, MEDIUM, 4),
                ("p1.2", MID, MEDIUM, 2),
                ("p2.1", MID, MEDIUM, 6),
                ("p2.2", LOW, MEDIUM, 1),
                ("p3.1", LOW, MEDIUM, 3),
                ("p3.2", MID, MEDIUM, 5),
            ]
        ),
        ["node2"],
    ),
]


@pytest.mark.parametrize(
    ("name", "node_names", "preemptor", "pods", "expected"),
    SELECT_BEST_CASES,
    ids=[c[0] for c in SELECT_BEST_CASES],
)
def test_select_best_candidate(
    name: str, node_names: list[str], preemptor: Pod, pods: list[Pod], expected: list[str]
) -> None:
    nodes = [node(n, VERY_LARGE) for n in node_names]
    handle = ClusterHandle(pods, nodes, [preemptor])
    framework, plugin = build(handle, [FIT])
    plugin.offset_rand = random.Random(4).randrange
    state = pre_filtered(framework, preemptor)
    node_infos = handle.snapshot.list()
    offset, num_candidates = plugin.get_offset_and_num_candidates(len(node_infos))
    candidates, _, _ = plugin.evaluator.dry_run_preemption(
        state, preemptor, node_infos, [], offset, num_candidates
    )
    selected, criterion = plugin.evaluator.select_candidate(candidates)
    assert selected is not None and selected.name in expected
    assert criterion


# ---------------------------------------------------------------------------------------------
# TestCustomSelection and TestCustomOrdering


def _label_is(key: str, value: str) -> defaultpreemption.IsEligiblePodFunc:
    return lambda node_info, victim, preemptor: victim.pod.labels.get(key) == value


def _node_is(name: str) -> defaultpreemption.IsEligiblePodFunc:
    return lambda node_info, victim, preemptor: node_info.name == name


def _preemptor_at_least(priority: int) -> defaultpreemption.IsEligiblePodFunc:
    return lambda node_info, victim, preemptor: preemptor.effective_priority >= priority


def _victim_at_most(priority: int) -> defaultpreemption.IsEligiblePodFunc:
    return lambda node_info, victim, preemptor: victim.pod.effective_priority <= priority


def _labelled_victims() -> list[Pod]:
    return [
        started(pod("v1", MID, "node1", LARGE, {"preemptible": "no"}), 0),
        started(pod("v2", MID, "node2", LARGE, {"preemptible": "yes"}), 0),
        started(pod("v3", LOW, "node3", LARGE, {"preemptible": "yes"}), 0),
        started(pod("v4", LOW, "node4", LARGE), 0),
    ]


def _node1_victims(v1_req: Resources) -> list[Pod]:
    return [
        started(pod("v1", HIGH, "node1", v1_req), 0),
        started(pod("v2", MID, "node1", SMALL), 0),
        started(pod("v3", LOW, "node1", SMALL), 0),
        started(pod("v4", MID, "node2", LARGE), 0),
        started(pod("v5", LOW, "node3", LARGE), 0),
    ]


def _three_victims() -> list[Pod]:
    return [
        started(pod("v1", HIGH, "node1", LARGE), 0),
        started(pod("v2", MID, "node2", LARGE), 0),
        started(pod("v3", LOW, "node3", LARGE), 0),
    ]


FOUR = ["node1", "node2", "node3", "node4"]
THREE = ["node1", "node2", "node3"]

CUSTOM_SELECTION_CASES = [
    (
        "filter for matching pod label: high priority",
        _label_is("preemptible", "yes"),
        FOUR,
        pod("p1", HIGH, req=LARGE),
        _labelled_victims(),
        {"node2": ["v2"], "node3": ["v3"]},
    ),
    (
        "filter for matching pod label: mid priority",
        _label_is("preemptible", "yes"),
        FOUR,
        pod("p2", MID, req=LARGE),
        _labelled_victims(),
        {"node3": ["v3"]},
    ),
    (
        "filter for matching pod label: low priority",
        _label_is("preemptible", "yes"),
        FOUR,
        pod("p3", LOW, req=LARGE),
        _labelled_victims(),
        {},
    ),
    (
        "filter for matching victim node: high priority",
        _node_is("node1"),
        THREE,
        pod("p3", HIGH, req=LARGE),
        _node1_victims(MEDIUM),
        {"node1": ["v2", "v3"]},
    ),
    (
        "filter for matching victim node: mid priority",
        _node_is("node1"),
        THREE,
        pod("p3", MID, req=LARGE),
        _node1_victims(SMALL),
        {"node1": ["v3"]},
    ),
    (
        "filter for matching victim node: low priority",
        _node_is("node1"),
        THREE,
        pod("p3", LOW, req=LARGE),
        _node1_victims(SMALL),
        {},
    ),
    (
        "only pods at or above specified priority can preempted: high priority",
        _preemptor_at_least(HIGH),
        THREE,
        pod("p1", HIGH, req=LARGE),
        _three_victims(),
        {"node2": ["v2"], "node3": ["v3"]},
    ),
    (
        "only pods at or above specified priority can preempted: mid priority",
        _preemptor_at_least(HIGH),
        THREE,
        pod("p2", MID, req=LARGE),
        _three_victims(),
        {},
    ),
    (
        "only pods at or below specified priority can be preempted: high priority",
        _victim_at_most(MID),
        THREE,
        pod("p1", HIGH, req=LARGE),
        _three_victims(),
        {"node2": ["v2"], "node3": ["v3"]},
    ),
]


@pytest.mark.parametrize(
    ("name", "eligible", "node_names", "preemptor", "pods", "expected"),
    CUSTOM_SELECTION_CASES,
    ids=[c[0] for c in CUSTOM_SELECTION_CASES],
)
def test_custom_selection(
    name: str,
    eligible: defaultpreemption.IsEligiblePodFunc,
    node_names: list[str],
    preemptor: Pod,
    pods: list[Pod],
    expected: dict[str, list[str]],
) -> None:
    handle = ClusterHandle(pods, [node(n, VERY_LARGE) for n in node_names], [preemptor])
    framework, plugin = build(handle, [FIT])
    plugin.is_eligible_pod = eligible
    state = pre_filtered(framework, preemptor)
    node_infos = handle.snapshot.list()
    offset, num_candidates = plugin.get_offset_and_num_candidates(len(node_infos))
    candidates, _, _ = plugin.evaluator.dry_run_preemption(
        state, preemptor, node_infos, [], offset, num_candidates
    )
    assert len(candidates) == len(expected)
    while candidates:
        selected, _ = plugin.evaluator.select_candidate(candidates)
        assert selected is not None and selected.name in expected
        assert [p.name for p in selected.victims.pods] == expected[selected.name]
        candidates = [c for c in candidates if c.name != selected.name]


CUSTOM_ORDERING_CASES = [
    (
        "select newest pods",
        lambda a, b: pod_start_time(a) < pod_start_time(b),
        [
            started(pod("v1", LOW, "node1", MEDIUM), 2),
            started(pod("v2", LOW, "node1", MEDIUM), 0),
            started(pod("v3", MID, "node1", MEDIUM), 1),
        ],
        ["v3", "v1"],
    ),
    (
        "select alphabetically-last pods",
        lambda a, b: a.name < b.name,
        [
            started(dataclasses.replace(pod("foo", LOW, "node1", MEDIUM), uid="v1"), 0),
            started(dataclasses.replace(pod("bar", LOW, "node1", MEDIUM), uid="v2"), 0),
            started(dataclasses.replace(pod("baz", MID, "node1", MEDIUM), uid="v3"), 0),
        ],
        ["baz", "foo"],
    ),
]


@pytest.mark.parametrize(
    ("name", "order", "pods", "expected"),
    CUSTOM_ORDERING_CASES,
    ids=[c[0] for c in CUSTOM_ORDERING_CASES],
)
def test_custom_ordering(
    name: str, order: defaultpreemption.MoreImportantPodFunc, pods: list[Pod], expected: list[str]
) -> None:
    preemptor = pod("p2", HIGH, req=LARGE)
    handle = ClusterHandle(pods, [node("node1", VERY_LARGE)], [preemptor])
    framework, plugin = build(handle, [FIT])
    plugin.more_important_pod = order
    state = pre_filtered(framework, preemptor)
    candidates, _, _ = plugin.evaluator.dry_run_preemption(
        state, preemptor, handle.snapshot.list(), [], 0, 1
    )
    assert len(candidates) == 1
    assert [p.name for p in candidates[0].victims.pods] == expected


# ---------------------------------------------------------------------------------------------
# TestPodEligibleToPreemptOthers

DISRUPTION_TARGET = PodCondition("DisruptionTarget", "True", "PreemptionByScheduler")

ELIGIBLE_CASES = [
    (
        "Pod with nominated node",
        dataclasses.replace(pod("p_with_nominated_node", HIGH), nominated_node_name="node1"),
        [terminating(pod("p1", LOW, "node1"))],
        ["node1"],
        Status(UU, ("node(s) had untolerated taint(s)",)),
        True,
        "",
    ),
    ("Pod without nominated node", pod("p_without_nominated_node", HIGH), [], [], None, True, ""),
    (
        "Pod with 'PreemptNever' preemption policy",
        dataclasses.replace(
            pod("p_with_preempt_never_policy", HIGH), preemption_policy=PREEMPT_NEVER
        ),
        [],
        [],
        None,
        False,
        "not eligible due to preemptionPolicy=Never.",
    ),
    (
        "preemption victim pod terminating, as indicated by the dedicated DisruptionTarget "
        "condition",
        dataclasses.replace(pod("p_with_nominated_node", HIGH), nominated_node_name="node1"),
        [terminating(pod("p1", LOW, "node1"), DISRUPTION_TARGET)],
        ["node1"],
        None,
        False,
        "not eligible due to a terminating pod on the nominated node.",
    ),
    (
        "non-victim Pods terminating",
        dataclasses.replace(pod("p_with_nominated_node", HIGH), nominated_node_name="node1"),
        [terminating(pod("p1", LOW, "node1"))],
        ["node1"],
        None,
        True,
        "",
    ),
]


@pytest.mark.parametrize(
    ("name", "preemptor", "pods", "node_names", "nominated_status", "eligible", "message"),
    ELIGIBLE_CASES,
    ids=[c[0] for c in ELIGIBLE_CASES],
)
def test_pod_eligible_to_preempt_others(
    name: str,
    preemptor: Pod,
    pods: list[Pod],
    node_names: list[str],
    nominated_status: Status | None,
    eligible: bool,
    message: str,
) -> None:
    handle = ClusterHandle(pods, [make_node().name(n).obj() for n in node_names], [preemptor])
    _, plugin = build(handle, [])
    assert plugin.pod_eligible_to_preempt_others(preemptor, nominated_status) == (
        eligible,
        message,
    )


# ---------------------------------------------------------------------------------------------
# TestPreempt


def _spread_preemptor() -> Pod:
    selector = label_selector(expressions=[("foo", "Exists", [])])
    return (
        make_pod()
        .name("p")
        .uid("p")
        .label("foo", "")
        .priority(HIGH)
        .spread_constraint(1, "zone", "DoNotSchedule", selector)
        .spread_constraint(1, "hostname", "DoNotSchedule", selector)
        .obj()
    )


def _basic_pods() -> list[Pod]:
    return [
        pod("p1.1", LOW, "node1", SMALL),
        pod("p1.2", LOW, "node1", SMALL),
        pod("p2.1", HIGH, "node2", LARGE),
        pod("p3.1", MID, "node3", MEDIUM),
    ]


PREEMPT_CASES = [
    (
        "basic preemption logic",
        dataclasses.replace(
            pod("p", HIGH, req=VERY_LARGE), preemption_policy=PREEMPT_LOWER_PRIORITY
        ),
        _basic_pods(),
        ["node1", "node2", "node3"],
        FIT,
        "node1",
        ["p1.1", "p1.2"],
    ),
    (
        "preemption for topology spread constraints",
        _spread_preemptor(),
        [
            pod("p-a1", HIGH, "node-a", labels=FOO),
            pod("p-a2", HIGH, "node-a", labels=FOO),
            pod("p-b1", LOW, "node-b", labels=FOO),
            pod("p-x1", HIGH, "node-x", labels=FOO),
            pod("p-x2", HIGH, "node-x", labels=FOO),
        ],
        ["node-a/zone1", "node-b/zone1", "node-x/zone2"],
        PTS,
        "node-b",
        ["p-b1"],
    ),
    (
        "no preempting in pod",
        dataclasses.replace(pod("p", HIGH, req=VERY_LARGE), preemption_policy=PREEMPT_NEVER),
        _basic_pods(),
        ["node1", "node2", "node3"],
        FIT,
        None,
        [],
    ),
    (
        "PreemptionPolicy is nil",
        pod("p", HIGH, req=VERY_LARGE),
        _basic_pods(),
        ["node1", "node2", "node3"],
        FIT,
        "node1",
        ["p1.1", "p1.2"],
    ),
]


@pytest.mark.parametrize(
    ("name", "preemptor", "pods", "node_names", "plugin_spec", "want_node", "victims"),
    PREEMPT_CASES,
    ids=[c[0] for c in PREEMPT_CASES],
)
def test_preempt(
    name: str,
    preemptor: Pod,
    pods: list[Pod],
    node_names: list[str],
    plugin_spec: tuple[str, PluginFactory, Sequence[str]],
    want_node: str | None,
    victims: list[str],
) -> None:
    nodes = [topology_node(n, VERY_LARGE) for n in node_names]
    handle = ClusterHandle(pods, nodes, [preemptor])
    patched: list[Pod] = []
    handle.store.watch(lambda kind, old, new: patched.append(new) if new is not None else None)
    framework, plugin = build(handle, [plugin_spec])
    state = pre_filtered(framework, preemptor)
    node_to_status = NodeToStatus({n.name: Status(U) for n in nodes})

    result, status = plugin.evaluator.preempt(state, preemptor, node_to_status)

    assert status is None or status.is_success() or status.is_rejected()
    if want_node is None:
        assert result is None
    else:
        assert result is not None and result.nominating_info == NominatingInfo(want_node, True)
    assert sorted(handle.deleted) == sorted(victims)
    # Every victim was marked DisruptionTarget before it was deleted.
    assert sorted(p.name for p in patched) == sorted(victims)
    for victim in patched:
        assert victim.conditions[-1] == PodCondition(
            "DisruptionTarget",
            "True",
            "PreemptionByScheduler",
            "default-scheduler: preempting to accommodate a higher priority pod",
        )
    events = [(e.reason, e.object, e.message) for e in handle.store.events]
    message = f"Preempted by pod p on node {want_node}"
    assert sorted(events) == [("Preempted", f"default/{v}", message) for v in sorted(victims)]

    # Called again, with the pod now nominated and nothing left to try, it preempts no more.
    renominated = dataclasses.replace(preemptor, nominated_node_name=want_node or "")
    handle.deleted.clear()
    plugin.evaluator.preempt(state, renominated, NodeToStatus())
    assert handle.deleted == []


def test_no_preempting_in_pod_reports_why() -> None:
    preemptor = dataclasses.replace(pod("p", HIGH, req=VERY_LARGE), preemption_policy=PREEMPT_NEVER)
    handle = ClusterHandle(_basic_pods(), [node(n, VERY_LARGE) for n in THREE], [preemptor])
    framework, plugin = build(handle, [FIT])
    state = pre_filtered(framework, preemptor)
    m = NodeToStatus({n: Status(U) for n in THREE})
    assert plugin.evaluator.preempt(state, preemptor, m) == (
        None,
        Status(U, ("not eligible due to preemptionPolicy=Never.",)),
    )
    assert plugin.post_filter(state, preemptor, m) == (
        None,
        Status(U, ("preemption: not eligible due to preemptionPolicy=Never.",)),
    )


# ---------------------------------------------------------------------------------------------
# Beyond upstream's tables


def test_preemption_clears_lower_priority_nominations_on_the_node() -> None:
    preemptor = pod("p", HIGH, req=VERY_LARGE)
    lower = dataclasses.replace(pod("low", LOW), nominated_node_name="node1")
    higher = dataclasses.replace(pod("higher", VERY_HIGH), nominated_node_name="node1")
    elsewhere = dataclasses.replace(pod("elsewhere", LOW), nominated_node_name="node2")
    handle = ClusterHandle(
        _basic_pods(),
        [node(n, VERY_LARGE) for n in THREE],
        [preemptor],
        nominated=[lower, higher, elsewhere],
    )
    framework, plugin = build(handle, [FIT])
    state = pre_filtered(framework, preemptor)
    result, _ = plugin.post_filter(state, preemptor, NodeToStatus({n: Status(U) for n in THREE}))
    assert result is not None and result.nominating_info == NominatingInfo("node1", True)
    nominations = {p.name: p.nominated_node_name for p in handle.store.pods()}
    assert nominations["low"] == ""
    assert nominations["higher"] == "node1"
    assert nominations["elsewhere"] == "node2"


def test_preemption_details_for_the_trace() -> None:
    preemptor = pod("p", VERY_HIGH)
    pods = [
        pod("p1", HIGH, "node1", labels={VIOLATING_KEY: "non-violating"}),
        pod("p2", LOW, "node1", labels={VIOLATING_KEY: "violating"}),
        pod("p3", MID, "node2", labels={VIOLATING_KEY: "violating"}),
    ]
    pdbs = [pdb({VIOLATING_KEY: "violating"}, 0, "violating-pdb")]
    handle = ClusterHandle(
        pods, [node("node1", ONE_POD), node("node2", ONE_POD)], [preemptor, *pdbs]
    )
    framework, plugin = build(handle, [FIT])
    plugin.offset_rand = scripted(0)
    result, status = plugin.post_filter(
        pre_filtered(framework, preemptor),
        preemptor,
        statuses({"node1": U, "node2": U}),
    )
    assert status is None
    assert result is not None and result.details is not None
    assert result.details.to_json() == {
        "nominatedNode": "node2",
        "victims": ["default/p3"],
        "candidates": [
            {"node": "node1", "victims": ["default/p1", "default/p2"], "numPDBViolations": 1},
            {"node": "node2", "victims": ["default/p3"], "numPDBViolations": 1},
        ],
        "criterion": "lowest highest-priority victim",
        "nodeStatuses": {},
        "offset": 0,
        "numCandidates": 2,
        "events": [
            {
                "type": "Normal",
                "reason": "Preempted",
                "object": "default/p3",
                "message": "Preempted by pod p on node node2",
            }
        ],
        "asyncSteps": [
            {"action": "PreemptionReleased", "pod": "default/p"},
            {"action": "PreemptVictim", "pod": "default/p3"},
        ],
    }


def test_failed_preemption_details_list_each_node_reason() -> None:
    preemptor = pod("p", HIGH, req=LARGE)
    handle = ClusterHandle(
        [pod("p1", HIGH, "node1"), pod("p2", LOW, "node2")],
        [node("node1", ONE_POD), node("node2", NODE_RES)],
        [preemptor],
    )
    framework, plugin = build(handle, [FIT])
    result, _ = plugin.post_filter(
        pre_filtered(framework, preemptor), preemptor, statuses({"node1": U, "node2": U})
    )
    assert result is not None and result.details is not None
    assert result.nominating_info == NominatingInfo("", True)
    assert result.details.to_json()["nodeStatuses"] == {
        "node1": "No preemption victims found for incoming pod",
        "node2": "Insufficient cpu",
    }
    assert result.details.to_json()["nominatedNode"] is None


class _Waiting:
    def __init__(self) -> None:
        self.rejections: list[tuple[str, str]] = []

    def reject(self, plugin: str, message: str) -> None:
        self.rejections.append((plugin, message))


def test_a_victim_waiting_at_permit_is_rejected_not_deleted() -> None:
    preemptor = pod("p", HIGH)
    victim = pod("p1", LOW, "node1")
    handle = ClusterHandle([victim], [node("node1", ONE_POD)], [preemptor])
    framework, plugin = build(handle, [FIT])
    waiting = _Waiting()
    framework.get_waiting_pod = lambda key: waiting if key == victim.key else None  # type: ignore[method-assign,assignment,return-value]
    result, _ = plugin.post_filter(
        pre_filtered(framework, preemptor), preemptor, statuses({"node1": U})
    )
    assert result is not None and result.nominating_info == NominatingInfo("node1", True)
    assert waiting.rejections == [("DefaultPreemption", "preempted")]
    assert handle.deleted == []
    assert [e.message for e in handle.store.events] == ["Preempted by pod p on node node1"]


def test_a_terminating_victim_is_not_deleted_again() -> None:
    preemptor = pod("p", HIGH)
    victim = terminating(pod("p1", LOW, "node1"), DISRUPTION_TARGET)
    handle = ClusterHandle([victim], [node("node1", ONE_POD)], [preemptor])
    framework, plugin = build(handle, [FIT])
    result, _ = plugin.post_filter(
        pre_filtered(framework, preemptor), preemptor, statuses({"node1": U})
    )
    assert result is not None and result.details is not None
    assert result.details.victims == ["default/p1"]
    assert handle.deleted == [] and handle.store.events == []


CALCULATE_CASES = [
    ("no nodes", 0, 50, 10, 0),
    ("absolute limit should be used", 100, 50, 55, 55),
    ("percentage limit should be used", 100, 50, 10, 50),
    ("limit should not exceed numNodes", 100, 50, 200, 100),
    ("defaults: 10% of 5000 nodes", 5000, 10, 100, 500),
    ("defaults: at least 100", 300, 10, 100, 100),
]


@pytest.mark.parametrize(
    ("name", "num_nodes", "percentage", "absolute", "want"),
    CALCULATE_CASES,
    ids=[c[0] for c in CALCULATE_CASES],
)
def test_calculate_num_candidates(
    name: str, num_nodes: int, percentage: int, absolute: int, want: int
) -> None:
    args = DefaultPreemptionArgs(
        min_candidate_nodes_percentage=percentage, min_candidate_nodes_absolute=absolute
    )
    plugin = DefaultPreemption(args, empty_framework(), random.Random(0))
    assert plugin.calculate_num_candidates(num_nodes) == want


def test_offset_is_drawn_below_the_number_of_nodes_and_replays_with_the_seed() -> None:
    first = DefaultPreemption(DefaultPreemptionArgs(), empty_framework(), random.Random(7))
    second = DefaultPreemption(DefaultPreemptionArgs(), empty_framework(), random.Random(7))
    draws = [first.get_offset_and_num_candidates(5) for _ in range(20)]
    assert draws == [second.get_offset_and_num_candidates(5) for _ in range(20)]
    assert all(0 <= offset < 5 and count == 5 for offset, count in draws)


def test_plugin_extension_points_and_events() -> None:
    plugin = defaultpreemption.new(None, empty_framework())
    assert plugin.name() == "DefaultPreemption"
    assert isinstance(plugin, PostFilterPlugin)
    assert isinstance(plugin, PreEnqueuePlugin)
    assert isinstance(plugin, EnqueueExtensions)
    assert plugin.pre_enqueue(pod("p")) is None
    (registered,) = plugin.events_to_register()
    assert registered.event == ClusterEvent(EventResource.Pod, ActionType.Delete)
    assert registered.queueing_hint_fn is not None
    assert registered.queueing_hint_fn(pod("p"), pod("x"), None) == QueueingHint.QueueSkip


def test_new_refuses_invalid_args() -> None:
    with pytest.raises(ConfigError):
        defaultpreemption.new(
            DefaultPreemptionArgs(min_candidate_nodes_percentage=0, min_candidate_nodes_absolute=0),
            empty_framework(),
        )
    with pytest.raises(TypeError):
        defaultpreemption.new(object(), empty_framework())


# ---------------------------------------------------------------------------------------------
# The whole loop


def test_a_scheduler_preempts_then_binds_on_the_nominated_node() -> None:
    profile = KubeSchedulerProfile(
        scheduler_name="default-scheduler",
        plugins=Plugins(
            multi_point=PluginSet(
                [
                    Plugin(PRIORITY_SORT),
                    Plugin(NODE_RESOURCES_FIT),
                    Plugin(DEFAULT_PREEMPTION),
                    Plugin(DEFAULT_BINDER),
                ]
            )
        ),
    )
    registry = Registry(
        {
            PRIORITY_SORT: prioritysort.new,
            NODE_RESOURCES_FIT: fit.new,
            DEFAULT_PREEMPTION: defaultpreemption.new,
            DEFAULT_BINDER: defaultbinder.new,
        }
    )
    clock = VirtualClock()
    store = ClusterStore(
        [
            node("node1", {"cpu": "1", "memory": "1Gi"}),
            pod("low0", LOW, "node1", {"cpu": "400m"}),
            pod("low1", LOW, "node1", {"cpu": "400m"}),
            pod("high", HIGH, req={"cpu": "500m"}),
        ],
        now=clock.now,
    )
    scheduler = Scheduler(
        KubeSchedulerConfiguration(profiles=[profile]), registry, store, clock, seed=1
    )

    scheduler.run_until_idle(clock.set, max_cycles=10)

    # Neither low pod has a start time: Go's sort.Slice swaps them, low1 is reprieved first.
    assert {p.name: p.node_name for p in store.pods()} == {"low1": "node1", "high": "node1"}
    # Async preemption: the victim is deleted by the goroutine, after the cycle's failure
    # handling recorded FailedScheduling; its deletion requeues the preemptor.
    assert [(e.reason, e.object, e.message) for e in store.events] == [
        ("FailedScheduling", "default/high", "0/1 nodes are available: 1 Insufficient cpu."),
        ("Preempted", "default/low0", "Preempted by pod high on node node1"),
        ("Scheduled", "default/high", "Successfully assigned default/high to node1"),
    ]


# ---------------------------------------------------------------------------------------------
# victims_selector: select_victims_on_node by requests alone (not in upstream)

TAINTS = (TAINT_TOLERATION, tainttoleration.new, ("filter",))
AFFINITY = (NODE_AFFINITY, nodeaffinity.new, ("pre_filter", "filter"))
PORTS = (NODE_PORTS, nodeports.new, ("pre_filter", "filter"))
FOUR_CPU: Resources = {"cpu": "4", "memory": "32Gi", "pods": 110}


@dataclasses.dataclass
class SelectorCase:
    name: str
    node: Node
    pods: list[Pod]
    preemptor: Pod
    want_victims: list[str]
    want_violations: int = 0
    want_status: Status | None = None
    pdbs: list[PodDisruptionBudget] = dataclasses.field(default_factory=list)
    nominated: list[Pod] = dataclasses.field(default_factory=list)


def _on(name: str, priority: int, cpu: str, **labels: str) -> Pod:
    return pod(name, priority, "node1", {"cpu": cpu}, labels or None)


SELECTOR_CASES = [
    SelectorCase(
        "the most important pod is reprieved, the others are victims",
        node("node1", FOUR_CPU),
        [
            started(_on("a", LOW, "900m"), 1),
            started(_on("b", LOW, "900m"), 2),
            started(_on("c", MID, "900m"), 3),
            started(_on("d", LOW, "900m"), 4),
        ],
        pod("p", HIGH, req={"cpu": "3"}),
        ["a", "b", "d"],
    ),
    SelectorCase(
        "pods of equal priority without start time are reprieved in Go's sort order",
        node("node1", FOUR_CPU),
        [_on(f"r{i}", LOW, "900m") for i in range(6)],
        pod("p", HIGH, req={"cpu": "3"}),
        # sort.Slice's insertion sort reverses them: r5 is reprieved.
        ["r4", "r3", "r2", "r1", "r0"],
    ),
    SelectorCase(
        "removing every lower-priority pod is not enough: the filter's own status",
        node("node1", FOUR_CPU),
        [_on("keep", VERY_HIGH, "2"), _on("a", LOW, "900m"), _on("b", LOW, "900m")],
        pod("p", HIGH, req={"cpu": "3"}),
        [],
        want_status=Status(U, (fit.REASON_INSUFFICIENT_CPU,), NODE_RESOURCES_FIT),
    ),
    SelectorCase(
        "a request beyond the node's allocatable is unresolvable",
        node("node1", FOUR_CPU),
        [_on("a", LOW, "900m")],
        pod("p", HIGH, req={"cpu": "5"}),
        [],
        want_status=Status(UU, (fit.REASON_INSUFFICIENT_CPU,), NODE_RESOURCES_FIT),
    ),
    SelectorCase(
        "too many pods even without the lower-priority ones",
        node("node1", {"cpu": "4", "pods": 2}),
        [_on("h1", VERY_HIGH, "100m"), _on("h2", VERY_HIGH, "100m"), _on("a", LOW, "100m")],
        pod("p", HIGH, req={"cpu": "100m"}),
        [],
        want_status=Status(U, (fit.REASON_TOO_MANY_PODS,), NODE_RESOURCES_FIT),
    ),
    SelectorCase(
        "no lower-priority pod on the node",
        node("node1", FOUR_CPU),
        [_on("h1", VERY_HIGH, "4")],
        pod("p", HIGH, req={"cpu": "1"}),
        [],
        want_status=Status(UU, (defaultpreemption.ERR_REASON_NO_VICTIMS,)),
    ),
    SelectorCase(
        "a tainted node fails TaintToleration once the victims are gone",
        make_node()
        .name("node1")
        .capacity(FOUR_CPU)
        .taints([Taint("dedicated", "NoSchedule")])
        .obj(),
        [_on("a", LOW, "4")],
        pod("p", HIGH, req={"cpu": "1"}),
        [],
        want_status=Status(UU, ("node(s) had untolerated taint {dedicated: }",), TAINT_TOLERATION),
    ),
    SelectorCase(
        "PDB-violating pods are reprieved first and counted when evicted",
        node("node1", FOUR_CPU),
        [
            started(_on("a", LOW, "1", app="foo"), 1),
            started(_on("b", LOW, "1", app="foo"), 2),
            started(_on("c", LOW, "1"), 3),
            started(_on("d", MID, "1", app="foo"), 4),
        ],
        pod("p", HIGH, req={"cpu": "3"}),
        # d is reprieved first (most important, violating), then a and b fail; c last.
        ["a", "b", "c"],
        want_violations=2,
        pdbs=[pdb({"app": "foo"}, 0)],
    ),
    SelectorCase(
        "a nominated pod of higher or equal priority takes its room",
        node("node1", FOUR_CPU),
        [started(_on("a", LOW, "1"), 1), started(_on("b", LOW, "1"), 2)],
        pod("p", HIGH, req={"cpu": "2"}),
        ["b"],
        nominated=[
            dataclasses.replace(pod("n", HIGH, req={"cpu": "1"}), nominated_node_name="node1")
        ],
    ),
    SelectorCase(
        "a nominated pod that leaves no room even without victims",
        node("node1", FOUR_CPU),
        [_on("a", LOW, "1")],
        pod("p", HIGH, req={"cpu": "2"}),
        [],
        want_status=Status(U, (fit.REASON_INSUFFICIENT_CPU,), NODE_RESOURCES_FIT),
        nominated=[
            dataclasses.replace(pod("n", HIGH, req={"cpu": "3"}), nominated_node_name="node1")
        ],
    ),
    SelectorCase(
        "a nominated pod of lower priority is not counted",
        node("node1", FOUR_CPU),
        [started(_on("a", LOW, "1"), 1), started(_on("b", LOW, "2"), 2)],
        pod("p", HIGH, req={"cpu": "2"}),
        ["b"],
        nominated=[
            dataclasses.replace(pod("n", MID, req={"cpu": "3"}), nominated_node_name="node1")
        ],
    ),
    SelectorCase(
        "extended resources count as cpu does",
        node("node1", {"cpu": "4", "example.com/gpu": 2}),
        [
            started(pod("g1", LOW, "node1", {"example.com/gpu": 1}), 1),
            started(pod("g2", LOW, "node1", {"example.com/gpu": 1}), 2),
        ],
        pod("p", HIGH, req={"example.com/gpu": 1}),
        ["g2"],
    ),
]


@pytest.mark.parametrize("case", SELECTOR_CASES, ids=lambda c: c.name)
def test_victims_selector_gives_select_victims_on_node_answer(case: SelectorCase) -> None:
    handle = ClusterHandle(
        case.pods, [case.node], [case.preemptor, *case.pdbs], nominated=case.nominated
    )
    framework, plugin = build(handle, [TAINTS, AFFINITY, FIT])
    state = pre_filtered(framework, case.preemptor)
    (node_info,) = handle.snapshot.list()
    before = (list(node_info.pods), node_info.requested.clone(), state.skip_filter_plugins)

    quick = plugin.victims_selector(state, case.preemptor)
    assert quick is not None
    got = quick(node_info, case.pdbs)
    want = plugin.select_victims_on_node(
        state.clone(), case.preemptor, node_info.snapshot(), case.pdbs
    )

    assert got is not None
    assert ([p.name for p in got[0]], got[1], got[2]) == ([p.name for p in want[0]], *want[1:])
    assert [p.name for p in got[0]] == case.want_victims
    assert got[1] == case.want_violations
    assert got[2] == case.want_status
    # Neither the node nor the state was changed.
    assert (list(node_info.pods), node_info.requested, state.skip_filter_plugins) == before


def test_victims_selector_declines_filters_that_read_the_pods_on_the_node() -> None:
    preemptor = make_pod().name("p").priority(HIGH).host_port(80).obj()
    handle = ClusterHandle([pod("a", LOW, "node1")], [node("node1", FOUR_CPU)], [preemptor])
    framework, plugin = build(handle, [PORTS, FIT])
    assert plugin.victims_selector(pre_filtered(framework, preemptor), preemptor) is None
    # Without host ports NodePorts is skipped at PreFilter: requests decide again.
    plain = pod("q", HIGH)
    assert plugin.victims_selector(pre_filtered(framework, plain), plain) is not None


def test_victims_selector_declines_when_pre_filter_extensions_run() -> None:
    preemptor = pod("p", HIGH, req=SMALL)
    handle = ClusterHandle([pod("a", LOW, "node1")], [node("node1", FOUR_CPU)], [preemptor])
    framework, plugin = build(handle, [FIT, TEST_PLUGIN])
    assert plugin.victims_selector(pre_filtered(framework, preemptor), preemptor) is None


def test_victims_selector_declines_when_select_victims_on_node_is_replaced() -> None:
    preemptor = pod("p", HIGH, req=SMALL)
    handle = ClusterHandle([pod("a", LOW, "node1")], [node("node1", FOUR_CPU)], [preemptor])
    framework, plugin = build(handle, [FIT])
    state = pre_filtered(framework, preemptor)
    assert plugin.victims_selector(state, preemptor) is not None
    plugin.select_victims_on_node = lambda *args: ([], 0, None)  # type: ignore[method-assign]
    assert plugin.victims_selector(state, preemptor) is None


def test_dry_run_gives_the_same_candidates_and_statuses_with_and_without_the_selector() -> None:
    """Nodes full of pods of mixed priorities, some under a PDB: from every offset the dry run
    stops at the same node with the same candidates, statuses and errors either way."""
    # (priority, cpu, under the PDB) of each node's pods, node i taking template i % 5.
    templates = [
        [(LOW, "1"), (LOW, "1"), (MID, "1"), (LOW, "900m")],
        [(VERY_HIGH, "2"), (LOW, "1"), (LOW, "900m")],
        [(VERY_HIGH, "2"), (VERY_HIGH, "1500m")],
        [(LOW, "1", True), (LOW, "1", True), (MID, "1", True), (LOW, "900m")],
        [(MID, "1500m", True), (LOW, "2"), (NEG, "400m")],
    ]
    nodes = [node(f"node{i}", FOUR_CPU) for i in range(10)]
    pods = [
        started(
            pod(f"v{i}-{j}", spec[0], f"node{i}", {"cpu": spec[1]}, APP_FOO if spec[2:] else None),
            (i * 7 + j * 3) % 5,
        )
        for i in range(10)
        for j, spec in enumerate(templates[i % 5])
    ]
    preemptor = pod("p", HIGH, req={"cpu": "2500m"})
    pdbs = [pdb(APP_FOO, 1), pdb({}, 0, "empty")]
    handle = ClusterHandle(pods, nodes, [preemptor, *pdbs])
    framework, plugin = build(handle, [TAINTS, FIT])
    state = pre_filtered(framework, preemptor)
    node_infos = handle.snapshot.list()

    def dry_run(offset: int) -> tuple[Expected, dict[str, str], str | None]:
        candidates, node_statuses, error = plugin.evaluator.dry_run_preemption(
            state, preemptor, node_infos, pdbs, offset, 3
        )
        messages = {name: status.message() for name, status in node_statuses.items()}
        return _candidates_by_node(candidates), messages, error

    outcomes = []
    for offset in range(len(nodes)):
        quick = dry_run(offset)
        plugin.victims_selector = lambda s, p: None  # type: ignore[method-assign]
        slow = dry_run(offset)
        del plugin.victims_selector
        assert quick == slow
        outcomes.append(quick)
    # From node0: three candidates (node3's one under the PDB last), node1 short of cpu even
    # without its lower-priority pods, node2 without any.
    assert outcomes[0] == (
        {
            "node0": (["v0-0", "v0-1", "v0-3"], 0),
            "node4": (["v4-1", "v4-2"], 0),
            "node3": (["v3-1", "v3-2", "v3-3"], 1),
        },
        {"node1": "Insufficient cpu", "node2": "No preemption victims found for incoming pod"},
        None,
    )


# ---------------------------------------------------------------------------------------------
# filterPodsWithPDBViolation with PDBs indexed by namespace


def _upstream_pdb_split(
    pod_infos: Sequence[PodInfo], pdbs: Sequence[PodDisruptionBudget]
) -> tuple[list[str], list[str]]:
    """filterPodsWithPDBViolation as upstream writes it: every PDB for every pod."""
    allowed = [p.disruptions_allowed for p in pdbs]
    violating: list[str] = []
    non_violating: list[str] = []
    for info in pod_infos:
        violated = False
        for index, budget in enumerate(pdbs):
            if budget.namespace != info.pod.namespace or not info.pod.labels:
                continue
            selector = as_selector(budget.selector)
            if selector.empty or not selector.matches(info.pod.labels):
                continue
            if info.pod.name in disrupted_pods(budget):
                continue
            allowed[index] -= 1
            if allowed[index] < 0:
                violated = True
        (violating if violated else non_violating).append(info.pod.name)
    return violating, non_violating


def test_pdb_split_by_namespace_index_is_upstreams_scan() -> None:
    pods = [
        dataclasses.replace(pod(f"p{i}", LOW, "node1", labels=labels), namespace=namespace)
        for i, (namespace, labels) in enumerate(
            [
                ("default", {"app": "foo"}),
                ("other", {"app": "foo"}),
                ("default", {"app": "foo", "tier": "web"}),
                ("default", {}),
                ("default", {"app": "bar"}),
                ("other", {"app": "foo"}),
                ("default", {"app": "foo"}),
            ]
        )
    ]
    pdbs = [
        pdb({"app": "foo"}, 1, "foo"),
        dataclasses.replace(pdb({"app": "foo"}, 1, "foo-other"), namespace="other"),
        pdb({"tier": "web"}, 0, "web"),
        pdb({}, 0, "empty"),
        dataclasses.replace(pdb({"app": "bar"}, 0, "bar"), selector=None),
        pdb({"app": "foo"}, 5, "disrupted", disrupted=["p0", "p2"]),
    ]
    infos = [PodInfo(p) for p in pods]

    violating, non_violating = defaultpreemption.filter_pods_with_pdb_violation(
        infos, PodDisruptionBudgets(pdbs)
    )

    got = ([i.pod.name for i in violating], [i.pod.name for i in non_violating])
    assert got == _upstream_pdb_split(infos, pdbs)
    assert got == (["p2", "p5", "p6"], ["p0", "p1", "p3", "p4"])
    # A plain list is indexed on the way in.
    plain = defaultpreemption.filter_pods_with_pdb_violation(infos, pdbs)
    assert ([i.pod.name for i in plain[0]], [i.pod.name for i in plain[1]]) == got


def test_pod_disruption_budgets_index_matchable_pdbs_by_namespace() -> None:
    pdbs = PodDisruptionBudgets(
        [
            pdb({"app": "foo"}, 1, "a"),
            pdb({}, 0, "empty"),
            dataclasses.replace(pdb({"app": "foo"}, 1, "b"), namespace="other"),
        ]
    )
    assert [p.name for p in pdbs] == ["a", "empty", "b"]
    assert len(pdbs) == 3 and pdbs[1].name == "empty"
    assert {ns: [entry[0] for entry in entries] for ns, entries in pdbs.by_namespace.items()} == {
        "default": [0],
        "other": [2],
    }


def test_victims_selector_keeps_a_nodes_answer_only_while_it_holds() -> None:
    pods = [started(_on(name, LOW, "900m"), i) for i, name in enumerate("abcd", start=1)]
    first = pod("p", HIGH, req={"cpu": "3"})
    handle = ClusterHandle(pods, [node("node1", FOUR_CPU)], [first])
    framework, plugin = build(handle, [TAINTS, FIT])
    (node_info,) = handle.snapshot.list()

    def both(preemptor: Pod) -> tuple[list[str], list[str]]:
        state = pre_filtered(framework, preemptor)
        quick = plugin.victims_selector(state, preemptor)
        assert quick is not None
        got = quick(node_info, [])
        want = plugin.select_victims_on_node(state.clone(), preemptor, node_info.snapshot(), [])
        assert got is not None and got[1:] == want[1:]
        return [p.name for p in got[0]], [p.name for p in want[0]]

    # a started first: it is reprieved.
    assert both(first) == (["b", "c", "d"], ["b", "c", "d"])
    # Another preemptor asking as much: the answer kept for the node.
    assert both(pod("q", HIGH, req={"cpu": "3"})) == (["b", "c", "d"], ["b", "c", "d"])
    # Asking less: worked out again.
    assert both(pod("r", HIGH, req={"cpu": "2"})) == (["c", "d"], ["c", "d"])
    # The node changed (a pod of equal priority to the preemptors came): worked out again.
    node_info.add_pod(_on("e", HIGH, "500m"))
    assert both(pod("s", HIGH, req={"cpu": "3"})) == (["a", "b", "c", "d"], ["a", "b", "c", "d"])
    # A pod nominated to the node takes the room left: not the answer kept, no room at all.
    handle.nominated = [
        dataclasses.replace(pod("n", HIGH, req={"cpu": "1"}), nominated_node_name="node1")
    ]
    assert both(pod("t", HIGH, req={"cpu": "3"})) == ([], [])
    handle.nominated = []
    # A PDB that selects pods: the violations are counted afresh.
    budget = [pdb({"app": "foo"}, 0)]
    state = pre_filtered(framework, first)
    quick = plugin.victims_selector(state, first)
    assert quick is not None
    labelled = [started(_on(n, LOW, "900m", app="foo"), i) for i, n in enumerate("wxyz", 1)]
    other = NodeInfo(node("node2", FOUR_CPU), labelled)
    got = quick(other, budget)
    want = plugin.select_victims_on_node(state.clone(), first, other.snapshot(), budget)
    assert ([p.name for p in got[0]], got[1]) == ([p.name for p in want[0]], want[1])
    assert ([p.name for p in got[0]], got[1]) == (["x", "y", "z"], 3)
