"""The scheduling cycle, ported from upstream's pkg/scheduler/schedule_one_test.go.

TestSchedulerScheduleOne, TestSchedulerSchedulePod, TestFindFitAllError, TestFindFitSomeError,
TestFindFitPredicateCallCounts, TestPreferNominatedNodeFilterCallCounts,
TestNumFeasibleNodesToFind, TestFairEvaluationForNodes, Test_SelectHost (as v1.34's reservoir
sampling over the tie set) and TestZeroRequest. Upstream's fake plugins
(pkg/scheduler/testing/framework/fake_plugins.go) are registered next to the in-tree ones.
Extender and volume cases are left out (extenders are refused; volume plugins have their own
tests).
"""

from __future__ import annotations

import dataclasses
import random
from collections.abc import Callable, Sequence
from typing import Any

import pytest

from schedviz.kube.objects import Node, Pod
from schedviz.scheduler.apis.config.v1 import decode_configuration
from schedviz.scheduler.clock import VirtualClock
from schedviz.scheduler.framework.cycle_state import CycleState
from schedviz.scheduler.framework.interface import (
    Code,
    NodePluginScores,
    NodeScore,
    NominatingInfo,
    PreFilterResult,
    Status,
)
from schedviz.scheduler.framework.plugins.registry import new_in_tree_registry
from schedviz.scheduler.framework.runtime.registry import PluginFactory, Registry
from schedviz.scheduler.framework.types import (
    EVENT_NODE_ADD,
    ClusterEventWithHint,
    FitError,
    NodeInfo,
    PodInfo,
)
from schedviz.scheduler.schedule_one import (
    MIN_FILTER_BATCH,
    ScheduleResult,
    next_filter_batch,
    num_feasible_nodes_to_find,
    select_host,
    select_host_of,
)
from schedviz.scheduler.scheduler import Scheduler
from schedviz.scheduler.store import ClusterStore
from schedviz.scheduler.testing.wrappers import label_selector, make_node, make_pod
from schedviz.scheduler.trace import CycleTrace

ERR_REASON_FAKE = "Nodes failed the fake plugin"
LOW_PRIORITY, MID_PRIORITY, HIGH_PRIORITY = 0, 100, 1000
DEFAULT_MILLI_CPU_REQUEST = 100
DEFAULT_MEMORY_REQUEST = 200 * 1024 * 1024

# ---------------------------------------------------------------------------------------------
# Upstream's fake plugins


class TrueFilter:
    def name(self) -> str:
        return "TrueFilter"

    def filter(self, state: CycleState, pod: Pod, node_info: NodeInfo) -> Status | None:
        return None


class FalseFilter:
    def name(self) -> str:
        return "FalseFilter"

    def filter(self, state: CycleState, pod: Pod, node_info: NodeInfo) -> Status | None:
        return Status(Code.Unschedulable, (ERR_REASON_FAKE,))


class MatchFilter:
    def name(self) -> str:
        return "MatchFilter"

    def filter(self, state: CycleState, pod: Pod, node_info: NodeInfo) -> Status | None:
        if node_info.name == pod.name:
            return None
        return Status(Code.Unschedulable, (ERR_REASON_FAKE,))


class NoPodsFilter:
    def name(self) -> str:
        return "NoPodsFilter"

    def filter(self, state: CycleState, pod: Pod, node_info: NodeInfo) -> Status | None:
        if not node_info.pods:
            return None
        return Status(Code.Unschedulable, (ERR_REASON_FAKE,))


@dataclasses.dataclass
class FakeFilter:
    """Upstream's FakeFilterPlugin: counts its calls, fails the listed nodes with their code."""

    failed_node_return_code_map: dict[str, Code] = dataclasses.field(default_factory=dict)
    num_filter_called: int = 0
    plugin_name: str = "FakeFilter"

    def name(self) -> str:
        return self.plugin_name

    def filter(self, state: CycleState, pod: Pod, node_info: NodeInfo) -> Status | None:
        self.num_filter_called += 1
        code = self.failed_node_return_code_map.get(node_info.name)
        if code is None:
            return None
        return Status(code, (f"injecting failure for pod {pod.name}",))


@dataclasses.dataclass
class FakePreFilter:
    plugin_name: str
    result: PreFilterResult | None = None
    status: Status | None = None

    def name(self) -> str:
        return self.plugin_name

    def pre_filter(
        self, state: CycleState, pod: Pod, nodes: Sequence[NodeInfo]
    ) -> tuple[PreFilterResult | None, Status | None]:
        return self.result, self.status

    def pre_filter_extensions(self) -> None:
        return None


class SkippedFilter(FakePreFilter, FakeFilter):
    """PreFilter says Skip; its Filter (an Error on every node) must never run."""

    def __init__(self) -> None:
        FakePreFilter.__init__(self, "FakeFilter2", None, Status(Code.Skip))
        FakeFilter.__init__(
            self, {n: Code.Error for n in ("node1", "node2", "node3")}, 0, "FakeFilter2"
        )


class ScorePlugin:
    """A score plugin from a function of the node's name; optional NormalizeScore."""

    def __init__(
        self,
        name: str,
        score: Callable[[str], tuple[int, Status | None]],
        normalize: Callable[[list[NodeScore]], None] | None = None,
    ) -> None:
        self._name, self._score, self._normalize = name, score, normalize

    def name(self) -> str:
        return self._name

    def score(self, state: CycleState, pod: Pod, node_info: NodeInfo) -> tuple[int, Status | None]:
        return self._score(node_info.name)

    def score_extensions(self) -> ScorePlugin | None:
        return self if self._normalize is not None else None

    def normalize_score(
        self, state: CycleState, pod: Pod, scores: list[NodeScore]
    ) -> Status | None:
        assert self._normalize is not None
        self._normalize(scores)
        return None


def _numeric(name: str) -> tuple[int, Status | None]:
    return int(name), None


def _reverse(scores: list[NodeScore]) -> None:
    high = max(s.score for s in scores)
    low = min(s.score for s in scores)
    for i, s in enumerate(scores):
        scores[i] = NodeScore(s.name, high + low - s.score)


class FakePreScoreAndScore:
    """PreScore answers Skip, so its Score (an Error) must never run."""

    def name(self) -> str:
        return "FakePreScoreAndScorePlugin"

    def pre_score(self, state: CycleState, pod: Pod, nodes: Sequence[NodeInfo]) -> Status | None:
        return Status(Code.Skip, ("fake skip",))

    def score(self, state: CycleState, pod: Pod, node_info: NodeInfo) -> tuple[int, Status | None]:
        return 0, Status(Code.Error, ("this score function shouldn't be executed",))

    def score_extensions(self) -> None:
        return None


# Rejecting fakes wait for a new node. Without EnqueueExtensions they would hear every event,
# and the scheduler's own status update (UnschedulablePod/updatePodOther) would requeue them.
NODE_ADDED = [ClusterEventWithHint(EVENT_NODE_ADD)]


@dataclasses.dataclass
class FakeReserve:
    status: Status | None

    def name(self) -> str:
        return "FakeReserve"

    def reserve(self, state: CycleState, pod: Pod, node_name: str) -> Status | None:
        return self.status

    def unreserve(self, state: CycleState, pod: Pod, node_name: str) -> None:
        return None

    def events_to_register(self) -> list[ClusterEventWithHint]:
        return NODE_ADDED


@dataclasses.dataclass
class FakePermit:
    status: Status | None
    timeout: float = 60.0

    def name(self) -> str:
        return "FakePermit"

    def permit(self, state: CycleState, pod: Pod, node_name: str) -> tuple[Status | None, float]:
        return self.status, self.timeout

    def events_to_register(self) -> list[ClusterEventWithHint]:
        return NODE_ADDED


@dataclasses.dataclass
class FakePreBind:
    status: Status | None

    def name(self) -> str:
        return "FakePreBind"

    def pre_bind(self, state: CycleState, pod: Pod, node_name: str) -> Status | None:
        return self.status


def _fixed(plugin: object) -> PluginFactory:
    return lambda args, handle: plugin


def _fresh(make: Callable[[], object]) -> PluginFactory:
    return lambda args, handle: make()


FACTORIES: dict[str, Callable[[], object]] = {
    "TrueFilter": TrueFilter,
    "FalseFilter": FalseFilter,
    "MatchFilter": MatchFilter,
    "NoPodsFilter": NoPodsFilter,
    "EqualPrioritizerPlugin": lambda: ScorePlugin("EqualPrioritizerPlugin", lambda n: (1, None)),
    "NumericMap": lambda: ScorePlugin("NumericMap", _numeric),
    "ReverseNumericMap": lambda: ScorePlugin("ReverseNumericMap", _numeric, _reverse),
    "TrueMap": lambda: ScorePlugin("TrueMap", lambda n: (1, None), lambda scores: None),
    "FalseMap": lambda: ScorePlugin(
        "FalseMap",
        lambda n: (0, Status(Code.Error, error="priority map encounters an error")),
    ),
    "FakePreScoreAndScorePlugin": FakePreScoreAndScore,
}

# ---------------------------------------------------------------------------------------------
# A scheduler over an in-memory cluster


def _plugin_refs(names: Sequence[str | tuple[str, int]]) -> list[dict[str, Any]]:
    refs: list[dict[str, Any]] = []
    for entry in names:
        if isinstance(entry, tuple):
            refs.append({"name": entry[0], "weight": entry[1]})
        else:
            refs.append({"name": entry})
    return refs


def new_scheduler(
    points: dict[str, Sequence[str | tuple[str, int]]],
    *,
    nodes: Sequence[Node] = (),
    pods: Sequence[Pod] = (),
    plugins: dict[str, object] | None = None,
    percentage: int | None = None,
    profile_percentage: int | None = None,
    seed: int = 0,
) -> Scheduler:
    """A one-profile scheduler with only the given plugins (PrioritySort and DefaultBinder
    always), fakes built fresh unless ``plugins`` passes instances to inspect afterwards."""
    factories: dict[str, PluginFactory] = {name: _fresh(make) for name, make in FACTORIES.items()}
    factories.update({name: _fixed(plugin) for name, plugin in (plugins or {}).items()})
    registry = new_in_tree_registry().merge(Registry(factories))
    plugin_sets: dict[str, Any] = {
        "multiPoint": {"disabled": [{"name": "*"}]},
        "queueSort": {"enabled": [{"name": "PrioritySort"}]},
        "bind": {"enabled": [{"name": "DefaultBinder"}]},
    }
    for point, names in points.items():
        plugin_sets[point] = {"enabled": _plugin_refs(names)}
    profile: dict[str, Any] = {"schedulerName": "default-scheduler", "plugins": plugin_sets}
    if profile_percentage is not None:
        profile["percentageOfNodesToScore"] = profile_percentage
    doc: dict[str, Any] = {
        "apiVersion": "kubescheduler.config.k8s.io/v1",
        "kind": "KubeSchedulerConfiguration",
        "profiles": [profile],
    }
    if percentage is not None:
        doc["percentageOfNodesToScore"] = percentage
    config = decode_configuration(doc, known_plugins=set(registry))
    clock = VirtualClock()
    store = ClusterStore([*nodes, *pods], now=clock.now)
    return Scheduler(config, registry, store, clock, seed=seed)


def new_trace(pod: Pod) -> CycleTrace:
    return CycleTrace(cycle=1, pod=pod.key, profile="", attempt=1, time=0.0, wall_time=0.0)


def schedule_pod(sched: Scheduler, pod: Pod) -> ScheduleResult:
    framework = sched.profiles["default-scheduler"]
    return sched.schedule_pod(framework, CycleState(), pod, new_trace(pod))


def find_nodes_that_fit_pod(sched: Scheduler, pod: Pod) -> tuple[list[NodeInfo], Any]:
    framework = sched.profiles["default-scheduler"]
    sched.cache.update_snapshot(sched.snapshot)
    return sched.find_nodes_that_fit_pod(framework, CycleState(), pod, new_trace(pod))


def nodes_named(*names: str) -> list[Node]:
    return [make_node().name(n).label("kubernetes.io/hostname", n).obj() for n in names]


def statuses(fit_error: FitError) -> dict[str, tuple[Code, tuple[str, ...], str]]:
    return {
        name: (s.code, s.reasons, s.plugin)
        for name, s in fit_error.diagnosis.node_to_status.items()
    }


# ---------------------------------------------------------------------------------------------
# TestSchedulerSchedulePod

U, UU = Code.Unschedulable, Code.UnschedulableAndUnresolvable


@dataclasses.dataclass
class SchedulePodCase:
    name: str
    points: dict[str, Sequence[str | tuple[str, int]]]
    nodes: list[str]
    pod: Pod
    pods: list[Pod] = dataclasses.field(default_factory=list)
    plugins: dict[str, object] = dataclasses.field(default_factory=dict)
    want_nodes: set[str] | None = None
    want_evaluated_nodes: int | None = None
    # The FitError: its message, explicit statuses, absent status, plugins, PreFilter message.
    want_fit_error: str | None = None
    want_statuses: dict[str, tuple[Code, tuple[str, ...], str]] | None = None
    want_absent: tuple[Code, tuple[str, ...]] = (UU, ())
    want_plugins: set[str] | None = None
    want_pre_filter_msg: str = ""
    want_error: str | None = None


def _pod(name: str) -> Pod:
    return make_pod().name(name).uid(name).obj()


PREFILTER_SKIP = SkippedFilter()
HOSTNAME = "kubernetes.io/hostname"
FOO_EXISTS = label_selector(expressions=[("foo", "Exists", [])])
SCHEDULE_POD_CASES = [
    SchedulePodCase(
        "test 1",
        {"filter": ["FalseFilter"]},
        ["node1", "node2"],
        _pod("2"),
        want_fit_error=f"0/2 nodes are available: 2 {ERR_REASON_FAKE}.",
        want_statuses={
            "node1": (U, (ERR_REASON_FAKE,), "FalseFilter"),
            "node2": (U, (ERR_REASON_FAKE,), "FalseFilter"),
        },
        want_plugins={"FalseFilter"},
    ),
    SchedulePodCase(
        "test 2",
        {"filter": ["TrueFilter"], "score": [("EqualPrioritizerPlugin", 1)]},
        ["node1", "node2"],
        _pod("ignore"),
        want_nodes={"node1", "node2"},
    ),
    SchedulePodCase(
        "test 3 (fits where the pod's name is the node's)",
        {"filter": ["MatchFilter"]},
        ["node1", "node2"],
        _pod("node2"),
        want_nodes={"node2"},
    ),
    SchedulePodCase(
        "test 4",
        {"filter": ["TrueFilter"], "score": [("NumericMap", 1)]},
        ["3", "2", "1"],
        _pod("ignore"),
        want_nodes={"3"},
    ),
    SchedulePodCase(
        "test 5",
        {"filter": ["MatchFilter"], "score": [("NumericMap", 1)]},
        ["3", "2", "1"],
        _pod("2"),
        want_nodes={"2"},
    ),
    SchedulePodCase(
        "test 6",
        {"filter": ["TrueFilter"], "score": [("NumericMap", 1), ("ReverseNumericMap", 2)]},
        ["3", "2", "1"],
        _pod("2"),
        want_nodes={"1"},
    ),
    SchedulePodCase(
        "test 7",
        {"filter": ["TrueFilter", "FalseFilter"], "score": [("NumericMap", 1)]},
        ["3", "2", "1"],
        _pod("2"),
        want_fit_error=f"0/3 nodes are available: 3 {ERR_REASON_FAKE}.",
        want_statuses={n: (U, (ERR_REASON_FAKE,), "FalseFilter") for n in ("3", "2", "1")},
        want_plugins={"FalseFilter"},
    ),
    SchedulePodCase(
        "test 8",
        {"filter": ["NoPodsFilter", "MatchFilter"], "score": [("NumericMap", 1)]},
        ["1", "2"],
        _pod("2"),
        pods=[make_pod().name("2-running").uid("2").node("2").phase("Running").obj()],
        want_fit_error=f"0/2 nodes are available: 2 {ERR_REASON_FAKE}.",
        want_statuses={
            "1": (U, (ERR_REASON_FAKE,), "MatchFilter"),
            "2": (U, (ERR_REASON_FAKE,), "NoPodsFilter"),
        },
        want_plugins={"MatchFilter", "NoPodsFilter"},
    ),
    SchedulePodCase(
        "test error with priority map",
        {"filter": ["TrueFilter"], "score": [("FalseMap", 1), ("TrueMap", 2)]},
        ["2", "1"],
        _pod("2"),
        want_error=(
            'running Score plugins: plugin "FalseMap" failed with: priority map encounters an error'
        ),
    ),
    SchedulePodCase(
        "test podtopologyspread plugin - 2 nodes with maxskew=1",
        {"preFilter": ["PodTopologySpread"], "filter": ["PodTopologySpread"]},
        ["node1", "node2"],
        make_pod()
        .name("p")
        .label("foo", "")
        .spread_constraint(1, HOSTNAME, "DoNotSchedule", FOO_EXISTS)
        .obj(),
        pods=[make_pod().name("pod1").label("foo", "").node("node1").phase("Running").obj()],
        want_nodes={"node2"},
    ),
    SchedulePodCase(
        "test podtopologyspread plugin - 3 nodes with maxskew=2",
        {
            "preFilter": ["PodTopologySpread"],
            "filter": ["PodTopologySpread"],
            "score": [("EqualPrioritizerPlugin", 1)],
        },
        ["node1", "node2", "node3"],
        make_pod()
        .name("p")
        .label("foo", "")
        .spread_constraint(2, HOSTNAME, "DoNotSchedule", FOO_EXISTS)
        .obj(),
        pods=[
            make_pod().name("pod1a").label("foo", "").node("node1").phase("Running").obj(),
            make_pod().name("pod1b").label("foo", "").node("node1").phase("Running").obj(),
            make_pod().name("pod2").label("foo", "").node("node2").phase("Running").obj(),
        ],
        want_nodes={"node2", "node3"},
    ),
    SchedulePodCase(
        "test with filter plugin returning Unschedulable status",
        {"filter": ["FakeFilter"], "score": [("NumericMap", 1)]},
        ["3"],
        _pod("test-filter"),
        plugins={"FakeFilter": FakeFilter({"3": U})},
        want_fit_error="0/1 nodes are available: 1 injecting failure for pod test-filter.",
        want_statuses={"3": (U, ("injecting failure for pod test-filter",), "FakeFilter")},
        want_plugins={"FakeFilter"},
    ),
    SchedulePodCase(
        "test with filter plugin returning UnschedulableAndUnresolvable status",
        {"filter": ["FakeFilter"], "score": [("NumericMap", 1)]},
        ["3"],
        _pod("test-filter"),
        plugins={"FakeFilter": FakeFilter({"3": UU})},
        want_fit_error="0/1 nodes are available: 1 injecting failure for pod test-filter.",
        want_statuses={"3": (UU, ("injecting failure for pod test-filter",), "FakeFilter")},
        want_plugins={"FakeFilter"},
    ),
    SchedulePodCase(
        "test with partial failed filter plugin",
        {"filter": ["FakeFilter"], "score": [("NumericMap", 1)]},
        ["1", "2"],
        _pod("test-filter"),
        plugins={"FakeFilter": FakeFilter({"1": U})},
        want_nodes={"2"},
    ),
    SchedulePodCase(
        "test prefilter plugin returning Unschedulable status",
        {"preFilter": ["FakePreFilter"]},
        ["1", "2"],
        _pod("test-prefilter"),
        plugins={
            "FakePreFilter": FakePreFilter(
                "FakePreFilter", None, Status(UU, ("injected unschedulable status",))
            )
        },
        want_fit_error="0/2 nodes are available: injected unschedulable status.",
        want_statuses={},
        want_absent=(UU, ("injected unschedulable status",)),
        want_plugins={"FakePreFilter"},
        want_pre_filter_msg="injected unschedulable status",
    ),
    SchedulePodCase(
        "test prefilter plugin returning error status",
        {"preFilter": ["FakePreFilter"]},
        ["1", "2"],
        _pod("test-prefilter"),
        plugins={
            "FakePreFilter": FakePreFilter(
                "FakePreFilter", None, Status(Code.Error, ("injected error status",))
            )
        },
        want_error='running PreFilter plugin "FakePreFilter": injected error status',
    ),
    SchedulePodCase(
        "test prefilter plugin returning node",
        {"preFilter": ["FakePreFilter1", "FakePreFilter2", "FakePreFilter3"]},
        ["node1", "node2", "node3"],
        _pod("test-prefilter"),
        plugins={
            "FakePreFilter1": FakePreFilter("FakePreFilter1"),
            "FakePreFilter2": FakePreFilter(
                "FakePreFilter2", PreFilterResult(frozenset({"node2"}))
            ),
            "FakePreFilter3": FakePreFilter(
                "FakePreFilter3", PreFilterResult(frozenset({"node1", "node2"}))
            ),
        },
        want_nodes={"node2"},
        # No score plugin: Filter looks for one node only.
        want_evaluated_nodes=1,
    ),
    SchedulePodCase(
        "test prefilter plugin returning non-intersecting nodes",
        {"preFilter": ["FakePreFilter1", "FakePreFilter2", "FakePreFilter3"]},
        ["node1", "node2", "node3"],
        _pod("test-prefilter"),
        plugins={
            "FakePreFilter1": FakePreFilter("FakePreFilter1"),
            "FakePreFilter2": FakePreFilter(
                "FakePreFilter2", PreFilterResult(frozenset({"node2"}))
            ),
            "FakePreFilter3": FakePreFilter(
                "FakePreFilter3", PreFilterResult(frozenset({"node1"}))
            ),
        },
        want_fit_error=(
            "0/3 nodes are available: node(s) didn't satisfy plugin(s) "
            "[FakePreFilter2 FakePreFilter3] simultaneously."
        ),
        want_statuses={},
        want_absent=(
            UU,
            ("node(s) didn't satisfy plugin(s) [FakePreFilter2 FakePreFilter3] simultaneously",),
        ),
        want_plugins={"FakePreFilter2", "FakePreFilter3"},
        want_pre_filter_msg=(
            "node(s) didn't satisfy plugin(s) [FakePreFilter2 FakePreFilter3] simultaneously"
        ),
    ),
    SchedulePodCase(
        "test prefilter plugin returning empty node set",
        {"preFilter": ["FakePreFilter1", "FakePreFilter2"]},
        ["node1"],
        _pod("test-prefilter"),
        plugins={
            "FakePreFilter1": FakePreFilter("FakePreFilter1"),
            "FakePreFilter2": FakePreFilter("FakePreFilter2", PreFilterResult(frozenset())),
        },
        want_fit_error="0/1 nodes are available: node(s) didn't satisfy plugin FakePreFilter2.",
        want_statuses={},
        want_absent=(UU, ("node(s) didn't satisfy plugin FakePreFilter2",)),
        want_plugins={"FakePreFilter2"},
        want_pre_filter_msg="node(s) didn't satisfy plugin FakePreFilter2",
    ),
    SchedulePodCase(
        "test some nodes are filtered out by prefilter plugin and other are filtered out by "
        "filter plugin",
        {"preFilter": ["FakePreFilter"], "filter": ["FakeFilter"]},
        ["node1", "node2"],
        _pod("test-prefilter"),
        plugins={
            "FakePreFilter": FakePreFilter("FakePreFilter", PreFilterResult(frozenset({"node2"}))),
            "FakeFilter": FakeFilter({"node2": U}),
        },
        want_fit_error=(
            "0/2 nodes are available: 1 injecting failure for pod test-prefilter, "
            "1 node(s) didn't satisfy plugin(s) [FakePreFilter]."
        ),
        want_statuses={"node2": (U, ("injecting failure for pod test-prefilter",), "FakeFilter")},
        want_absent=(UU, ("node(s) didn't satisfy plugin(s) [FakePreFilter]",)),
        want_plugins={"FakePreFilter", "FakeFilter"},
    ),
    SchedulePodCase(
        "test prefilter plugin returning skip",
        {
            "preFilter": ["FakePreFilter1", "FakeFilter2"],
            "filter": ["FakeFilter1", "FakeFilter2"],
            "score": [("EqualPrioritizerPlugin", 1)],
        },
        ["node1", "node2", "node3"],
        _pod("test-prefilter"),
        plugins={
            "FakePreFilter1": FakePreFilter("FakeFilter1"),
            "FakeFilter1": FakeFilter({"node1": U}, plugin_name="FakeFilter1"),
            "FakeFilter2": PREFILTER_SKIP,
        },
        want_nodes={"node2", "node3"},
        want_evaluated_nodes=3,
    ),
    SchedulePodCase(
        "test all prescore plugins return skip",
        {
            "filter": ["TrueFilter"],
            "preScore": ["FakePreScoreAndScorePlugin"],
            "score": [("FakePreScoreAndScorePlugin", 1)],
        },
        ["node1", "node2"],
        _pod("ignore"),
        want_nodes={"node1", "node2"},
    ),
    SchedulePodCase(
        "test without score plugin no extra nodes are evaluated",
        {"filter": ["TrueFilter"]},
        ["node1", "node2", "node3"],
        _pod("pod1"),
        want_nodes={"node1", "node2", "node3"},
        want_evaluated_nodes=1,
    ),
    SchedulePodCase(
        "test no score plugin, prefilter plugin returning 2 nodes",
        {"preFilter": ["FakePreFilter"]},
        ["node1", "node2", "node3"],
        _pod("test-prefilter"),
        plugins={
            "FakePreFilter": FakePreFilter(
                "FakePreFilter", PreFilterResult(frozenset({"node1", "node2"}))
            )
        },
        want_nodes={"node1", "node2"},
        want_evaluated_nodes=1,
    ),
    SchedulePodCase(
        "test prefilter plugin returned an invalid node",
        {"preFilter": ["FakePreFilter"], "filter": ["TrueFilter"]},
        ["1", "2"],
        _pod("test-prefilter"),
        plugins={
            "FakePreFilter": FakePreFilter(
                "FakePreFilter", PreFilterResult(frozenset({"invalid-node"}))
            )
        },
        want_fit_error=(
            "0/2 nodes are available: 2 node(s) didn't satisfy plugin(s) [FakePreFilter]."
        ),
        want_statuses={},
        want_absent=(UU, ("node(s) didn't satisfy plugin(s) [FakePreFilter]",)),
        want_plugins={"FakePreFilter"},
    ),
]


@pytest.mark.parametrize(
    "case",
    [
        pytest.param(
            c,
            id=c.name,
        )
        for c in SCHEDULE_POD_CASES
    ],
)
def test_schedule_pod_matches_upstream_table(case: SchedulePodCase) -> None:
    if case.name == "test prefilter plugin returning skip":
        PREFILTER_SKIP.num_filter_called = 0
    sched = new_scheduler(
        case.points, nodes=nodes_named(*case.nodes), pods=case.pods, plugins=case.plugins
    )
    if case.want_fit_error is not None:
        with pytest.raises(FitError) as raised:
            schedule_pod(sched, case.pod)
        fit_error = raised.value
        assert str(fit_error) == case.want_fit_error
        assert fit_error.num_all_nodes == len(case.nodes)
        assert statuses(fit_error) == case.want_statuses
        absent = fit_error.diagnosis.node_to_status.absent_nodes_status
        assert (absent.code, absent.reasons) == case.want_absent
        assert fit_error.diagnosis.unschedulable_plugins == case.want_plugins
        assert fit_error.diagnosis.pre_filter_msg == case.want_pre_filter_msg
        return
    if case.want_error is not None:
        with pytest.raises(Exception) as raised_error:
            schedule_pod(sched, case.pod)
        assert str(raised_error.value) == case.want_error
        return
    result = schedule_pod(sched, case.pod)
    assert case.want_nodes is not None
    assert result.suggested_host in case.want_nodes
    want_evaluated = case.want_evaluated_nodes
    assert result.evaluated_nodes == (len(case.nodes) if want_evaluated is None else want_evaluated)
    assert PREFILTER_SKIP.num_filter_called == 0


def test_schedule_pod_without_nodes_is_no_nodes_available() -> None:
    sched = new_scheduler({"filter": ["TrueFilter"]})
    framework = sched.profiles["default-scheduler"]
    pod = _pod("p")
    _, _, status = sched.scheduling_cycle(
        framework, CycleState(), sched.queue.new_queued_pod_info(pod), new_trace(pod)
    )
    assert status is not None
    assert status.code == UU
    assert status.as_error() == "no nodes available to schedule pods"


# ---------------------------------------------------------------------------------------------
# TestFindFitAllError, TestFindFitSomeError


def test_find_fit_all_error_records_every_node() -> None:
    sched = new_scheduler(
        {"filter": ["TrueFilter", "MatchFilter"]}, nodes=nodes_named("3", "2", "1")
    )
    feasible, diagnosis = find_nodes_that_fit_pod(sched, make_pod().obj())
    assert feasible == []
    assert {n: (s.code, s.reasons, s.plugin) for n, s in diagnosis.node_to_status.items()} == {
        n: (U, (ERR_REASON_FAKE,), "MatchFilter") for n in ("1", "2", "3")
    }
    assert diagnosis.node_to_status.absent_nodes_status.code == UU
    assert diagnosis.unschedulable_plugins == {"MatchFilter"}


def test_find_fit_some_error_records_the_other_nodes() -> None:
    sched = new_scheduler(
        {"filter": ["TrueFilter", "MatchFilter"], "score": [("EqualPrioritizerPlugin", 1)]},
        nodes=nodes_named("3", "2", "1"),
    )
    feasible, diagnosis = find_nodes_that_fit_pod(sched, _pod("1"))
    assert [n.name for n in feasible] == ["1"]
    assert len(diagnosis.node_to_status) == 2
    assert diagnosis.unschedulable_plugins == {"MatchFilter"}
    for name in ("2", "3"):
        assert diagnosis.node_to_status.get(name).reasons == (ERR_REASON_FAKE,)


# ---------------------------------------------------------------------------------------------
# TestFindFitPredicateCallCounts, TestPreferNominatedNodeFilterCallCounts


@pytest.mark.parametrize(
    ("priority", "expected_count"),
    [(HIGH_PRIORITY, 1), (LOW_PRIORITY, 2)],
    ids=[
        "nominated pods have lower priority, predicate is called once",
        "nominated pods have higher priority, predicate is called twice",
    ],
)
def test_find_fit_predicate_call_counts(priority: int, expected_count: int) -> None:
    fake = FakeFilter()
    nominated = make_pod().name("nominated").priority(MID_PRIORITY).nominated_node_name("1").obj()
    sched = new_scheduler(
        {"filter": ["FakeFilter"]},
        nodes=nodes_named("1"),
        pods=[nominated],
        plugins={"FakeFilter": fake},
    )
    assert [p.pod.name for p in sched.queue.nominated_pods_for_node("1")] == ["nominated"]
    find_nodes_that_fit_pod(sched, make_pod().name("1").priority(priority).obj())
    assert fake.num_filter_called == expected_count


@pytest.mark.parametrize(
    ("pod", "return_codes", "expected_count"),
    [
        (make_pod().name("p").priority(HIGH_PRIORITY).nominated_node_name("node1").obj(), {}, 1),
        (make_pod().name("p").priority(HIGH_PRIORITY).obj(), {}, 3),
        (
            make_pod().name("p").priority(HIGH_PRIORITY).nominated_node_name("node1").obj(),
            {"node1": U},
            4,
        ),
    ],
    ids=[
        "pod has the nominated node set, filter is called only once",
        "pod without the nominated pod, filter is called for each node",
        "nominated pod cannot pass the filter, filter is called for each node",
    ],
)
def test_prefer_nominated_node_filter_call_counts(
    pod: Pod, return_codes: dict[str, Code], expected_count: int
) -> None:
    fake = FakeFilter(return_codes)
    sched = new_scheduler(
        {"filter": ["FakeFilter"], "score": [("EqualPrioritizerPlugin", 1)]},
        nodes=nodes_named("node1", "node2", "node3"),
        plugins={"FakeFilter": fake},
    )
    find_nodes_that_fit_pod(sched, pod)
    assert fake.num_filter_called == expected_count


# ---------------------------------------------------------------------------------------------
# TestNumFeasibleNodesToFind, TestFairEvaluationForNodes


@pytest.mark.parametrize(
    ("global_percentage", "profile_percentage", "num_all_nodes", "want"),
    [
        (0, None, 10, 10),
        (0, 40, 10, 10),
        (0, None, 1000, 420),
        (0, 40, 1000, 400),
        (100, 40, 1000, 400),
        (40, None, 1000, 400),
        (0, None, 6000, 300),
        (0, 40, 6000, 2400),
    ],
    ids=[
        "not set percentageOfNodesToScore and nodes number not more than 50",
        "set profile percentageOfNodesToScore and nodes number not more than 50",
        "not set percentageOfNodesToScore and nodes number more than 50",
        "set profile percentageOfNodesToScore and nodes number more than 50",
        "set global and profile percentageOfNodesToScore and nodes number more than 50",
        "set global percentageOfNodesToScore and nodes number more than 50",
        "not set profile percentageOfNodesToScore and nodes number more than 50*125",
        "set profile percentageOfNodesToScore and nodes number more than 50*125",
    ],
)
def test_num_feasible_nodes_to_find(
    global_percentage: int, profile_percentage: int | None, num_all_nodes: int, want: int
) -> None:
    percentage = global_percentage if profile_percentage is None else profile_percentage
    assert num_feasible_nodes_to_find(percentage, num_all_nodes) == want


@pytest.mark.parametrize(
    ("batch", "to_find", "done", "passed", "want"),
    [
        # One node of the first 500 rejected: one more node wanted, a small batch finds it.
        (500, 500, 500, 499, MIN_FILTER_BATCH),
        # Half the nodes pass: 250 wanted at that rate, a quarter more.
        (500, 500, 500, 250, 625),
        # None passed yet: twice the last batch.
        (500, 500, 500, 0, 1000),
        # Never more than twice the last batch.
        (500, 500, 500, 1, 1000),
    ],
)
def test_next_filter_batch_follows_the_pass_rate(
    batch: int, to_find: int, done: int, passed: int, want: int
) -> None:
    assert next_filter_batch(batch, to_find, done, passed) == want


def test_a_walk_with_rejected_nodes_stops_where_upstream_stops_in_a_small_second_batch() -> None:
    names = [f"n{i:03}" for i in range(600)]
    failing = {name: Code.Unschedulable for name in names[::7]}
    fake = FakeFilter(failed_node_return_code_map=failing)
    sched = new_scheduler(
        {"filter": ["FakeFilter"], "score": [("EqualPrioritizerPlugin", 1)]},
        nodes=nodes_named(*names),
        plugins={"FakeFilter": fake},
        percentage=50,
    )
    feasible, diagnosis = find_nodes_that_fit_pod(sched, _pod("p"))
    passing = [name for name in names if name not in failing]
    assert [n.name for n in feasible] == passing[:300]
    last = names.index(passing[299])
    assert sorted(name for name, _ in diagnosis.node_to_status.items()) == [
        name for name in names[:last] if name in failing
    ]
    # The first batch (300 nodes) left 43 wanted: the second holds some 60 nodes, not 600.
    assert fake.num_filter_called < 400


def test_profile_percentage_of_nodes_to_score_wins_over_the_global_one() -> None:
    sched = new_scheduler(
        {"filter": ["TrueFilter"], "score": [("EqualPrioritizerPlugin", 1)]},
        nodes=nodes_named(*(f"n{i}" for i in range(300))),
        percentage=100,
        profile_percentage=40,
    )
    feasible, _ = find_nodes_that_fit_pod(sched, _pod("p"))
    assert len(feasible) == 120


def test_fair_evaluation_for_nodes_rotates_the_start_index() -> None:
    num_all_nodes = 500
    sched = new_scheduler(
        {"filter": ["TrueFilter"], "score": [("EqualPrioritizerPlugin", 1)]},
        nodes=nodes_named(*(str(i) for i in range(num_all_nodes))),
        percentage=30,
    )
    nodes_to_find = num_feasible_nodes_to_find(30, num_all_nodes)
    assert nodes_to_find == 150
    for i in range(2 * (num_all_nodes // nodes_to_find + 1)):
        feasible, _ = find_nodes_that_fit_pod(sched, make_pod().obj())
        assert len(feasible) == nodes_to_find
        assert sched.next_start_node_index == (i + 1) * nodes_to_find % num_all_nodes


def test_rotation_counts_rejected_nodes_and_starts_where_the_last_cycle_stopped() -> None:
    fake = FakeFilter({"0": U, "1": U})
    sched = new_scheduler(
        {"filter": ["FakeFilter"]},
        nodes=nodes_named("0", "1", "2", "3"),
        plugins={"FakeFilter": fake},
    )
    # No score plugin: one feasible node is enough; "0" and "1" were processed on the way.
    feasible, _ = find_nodes_that_fit_pod(sched, _pod("a"))
    assert [n.name for n in feasible] == ["2"]
    assert sched.next_start_node_index == 3
    feasible, _ = find_nodes_that_fit_pod(sched, _pod("b"))
    assert [n.name for n in feasible] == ["3"]
    assert sched.next_start_node_index == 0


def test_a_cycle_that_walks_no_node_reports_the_scheduler_start_index() -> None:
    """After a walk stopped at node "2", the nominated node "3" fits without a walk: the trace
    still says where the next walk starts (upstream's nextStartNodeIndex, unchanged)."""
    fake = FakeFilter({"0": U, "1": U})
    nominated = make_pod().name("b").uid("b").nominated_node_name("3").obj()
    sched = new_scheduler(
        {"filter": ["FakeFilter"]},
        nodes=nodes_named("0", "1", "2", "3"),
        pods=[make_pod().name("a").uid("a").priority(1).obj(), nominated],
        plugins={"FakeFilter": fake},
    )
    first = sched.schedule_one()
    assert first is not None and first.pod == "default/a" and first.selected_node == "2"
    assert first.start_index == 0 and sched.next_start_node_index == 3
    second = sched.schedule_one()
    assert second is not None and second.pod == "default/b" and second.selected_node == "3"
    assert second.evaluated_nodes == 1
    assert second.start_index == 3 and sched.next_start_node_index == 3


# ---------------------------------------------------------------------------------------------
# Test_SelectHost (v1.34's selectHost: reservoir sampling among the top scores)


@pytest.mark.parametrize(
    ("scores", "want_ties"),
    [
        ([("node1", 1), ("node2", 2)], ["node2"]),
        ([("node2.2", 2), ("node2.1", 2), ("node2.3", 2)], ["node2.2", "node2.1", "node2.3"]),
        ([("node3.1", 3), ("node2.1", 2), ("node1.1", 1), ("node3.2", 3)], ["node3.1", "node3.2"]),
    ],
    ids=["unique properly ordered scores", "equal scores", "out of order scores"],
)
def test_select_host_picks_among_the_top_scores(
    scores: list[tuple[str, int]], want_ties: list[str]
) -> None:
    plugin_scores = [NodePluginScores(name, [], total) for name, total in scores]
    picked = set()
    for seed in range(200):
        host, ties = select_host(plugin_scores, random.Random(seed))
        assert ties == want_ties
        picked.add(host)
    assert picked == set(want_ties)


def test_select_host_samples_ties_uniformly() -> None:
    plugin_scores = [NodePluginScores(f"n{i}", [], 5) for i in range(4)]
    rng = random.Random(7)
    counts = dict.fromkeys((s.name for s in plugin_scores), 0)
    for _ in range(4000):
        host, _ = select_host(plugin_scores, rng)
        counts[host] += 1
    assert all(850 < c < 1150 for c in counts.values()), counts


@pytest.mark.parametrize("ties", [2, 3, 7, 64, 500])
def test_select_host_draws_as_randrange_reservoir_sampling_would(ties: int) -> None:
    # Upstream's reservoir sampling, written with randrange: the written-out draw must consume
    # the generator identically and keep the same node.
    for seed in range(20):
        reference, rng = random.Random(seed), random.Random(seed)
        kept = 0
        for count in range(2, ties + 1):
            if reference.randrange(count) == 0:
                kept = count - 1
        names = [f"n{i}" for i in range(ties)]
        host, _ = select_host_of(names, [7] * ties, rng)
        assert host == names[kept]
        assert rng.random() == reference.random()


def test_select_host_refuses_an_empty_list() -> None:
    with pytest.raises(ValueError, match="empty priorityList"):
        select_host([], random.Random(0))


# ---------------------------------------------------------------------------------------------
# TestZeroRequest: a pod without requests scores as if it asked for the defaults


def _zero_request_node(name: str) -> Node:
    allocatable = {"cpu": "1000m", "memory": str(DEFAULT_MEMORY_REQUEST * 10), "pods": "100"}
    return make_node().name(name).capacity(allocatable).allocatable(allocatable).obj()


NO_RESOURCES = make_pod().container("img")
SMALL = make_pod().req(
    {"cpu": f"{DEFAULT_MILLI_CPU_REQUEST}m", "memory": str(DEFAULT_MEMORY_REQUEST)}
)
LARGE = make_pod().req(
    {"cpu": f"{DEFAULT_MILLI_CPU_REQUEST * 3}m", "memory": str(DEFAULT_MEMORY_REQUEST * 3)}
)


@pytest.mark.parametrize(
    ("pod", "expected_score"),
    # Since v1.33 BalancedAllocation skips best-effort pods (kubernetes#129138), so the
    # zero-request pod gets NodeResourcesFit's 50 only; Fit counts it as the default requests.
    [(NO_RESOURCES.obj(), 50), (SMALL.obj(), 150), (LARGE.obj(), 130)],
    ids=[
        "test priority of zero-request pod with node with zero-request pod",
        "test priority of nonzero-request pod with node with zero-request pod",
        "test priority of larger pod with node with zero-request pod",
    ],
)
def test_zero_request_pods_score_as_default_requests(pod: Pod, expected_score: int) -> None:
    existing = [
        dataclasses.replace(LARGE.obj(), name="large1", node_name="node1"),
        dataclasses.replace(NO_RESOURCES.obj(), name="none1", node_name="node1"),
        dataclasses.replace(LARGE.obj(), name="large2", node_name="node2"),
        dataclasses.replace(SMALL.obj(), name="small2", node_name="node2"),
    ]
    sched = new_scheduler(
        {
            "preScore": ["NodeResourcesFit", "NodeResourcesBalancedAllocation"],
            "score": [("NodeResourcesFit", 1), ("NodeResourcesBalancedAllocation", 1)],
        },
        nodes=[_zero_request_node("node1"), _zero_request_node("node2")],
        pods=existing,
    )
    pod = dataclasses.replace(pod, name="incoming")
    feasible, _ = find_nodes_that_fit_pod(sched, pod)
    framework = sched.profiles["default-scheduler"]
    scores = sched.prioritize_nodes(framework, CycleState(), pod, feasible, new_trace(pod))
    assert [s.total_score for s in scores] == [expected_score, expected_score]


# ---------------------------------------------------------------------------------------------
# TestSchedulerScheduleOne: one pod, one node, a failure injected at each step


@dataclasses.dataclass
class ScheduleOneCase:
    name: str
    points: dict[str, Sequence[str | tuple[str, int]]] = dataclasses.field(default_factory=dict)
    plugins: dict[str, object] = dataclasses.field(default_factory=dict)
    send_pod: Pod = dataclasses.field(default_factory=lambda: _pod("foo"))
    inject_bind_error: str = ""
    allow_waiting_pod: bool = False
    expect_error: str = ""
    expect_bound: bool = False
    expect_in_backoff_q: bool = False
    expect_in_unschedulable: bool = False
    event_reason: str = "FailedScheduling"
    expect_reason: str = ""
    expect_nominated_node_name: str = ""


def _predicate_error(reason: str) -> str:
    return f"0/1 nodes are available: {reason}."


SCHEDULE_ONE_CASES = [
    ScheduleOneCase(
        "schedule pod failed",
        {"filter": ["FakeFilter"]},
        {"FakeFilter": FakeFilter({"node1": Code.Error})},
        expect_error='running "FakeFilter" filter plugin: injecting failure for pod foo',
        expect_in_backoff_q=True,
        expect_reason="SchedulerError",
    ),
    ScheduleOneCase(
        "reserve failed with status code error",
        {"reserve": ["FakeReserve"]},
        {"FakeReserve": FakeReserve(Status(Code.Error, error="reserve error"))},
        expect_error='running Reserve plugin "FakeReserve": reserve error',
        expect_in_backoff_q=True,
        expect_reason="SchedulerError",
    ),
    ScheduleOneCase(
        "reserve failed with status code rejected",
        {"reserve": ["FakeReserve"]},
        {"FakeReserve": FakeReserve(Status(UU, ("rejected on reserve",)))},
        expect_error=_predicate_error("1 rejected on reserve"),
        expect_in_unschedulable=True,
        expect_reason="Unschedulable",
    ),
    ScheduleOneCase(
        "permit failed with status code error",
        {"permit": ["FakePermit"]},
        {"FakePermit": FakePermit(Status(Code.Error, error="permit error"))},
        expect_error='running Permit plugin "FakePermit": permit error',
        expect_in_backoff_q=True,
        expect_reason="SchedulerError",
    ),
    ScheduleOneCase(
        "permit failed with status code rejected",
        {"permit": ["FakePermit"]},
        {"FakePermit": FakePermit(Status(U, ("rejected on permit",)))},
        expect_error=_predicate_error("1 rejected on permit"),
        expect_in_unschedulable=True,
        expect_reason="Unschedulable",
    ),
    ScheduleOneCase(
        "permit plugin is working in wait on permit phase",
        {"permit": ["FakePermit"]},
        {"FakePermit": FakePermit(Status(Code.Wait, ("rejected on permit",)))},
        allow_waiting_pod=True,
        expect_bound=True,
        event_reason="Scheduled",
    ),
    ScheduleOneCase(
        "prebind failed with status code error",
        {"preBind": ["FakePreBind"]},
        {"FakePreBind": FakePreBind(Status(Code.Error, error="on PreBind"))},
        expect_error='running PreBind plugin "FakePreBind": on PreBind',
        expect_in_backoff_q=True,
        expect_reason="SchedulerError",
    ),
    ScheduleOneCase(
        "binding failed",
        inject_bind_error="binder",
        expect_error='running Bind plugin "DefaultBinder": binder',
        expect_in_backoff_q=True,
        expect_reason="SchedulerError",
    ),
    ScheduleOneCase("bind assumed pod scheduled", expect_bound=True, event_reason="Scheduled"),
    ScheduleOneCase(
        "pod with existing nominated node name on scheduling error clears nomination",
        {"filter": ["FakeFilter"]},
        {"FakeFilter": FakeFilter({"node1": Code.Error})},
        send_pod=make_pod().name("foo").nominated_node_name("existing-node").obj(),
        expect_error='running "FakeFilter" filter plugin: injecting failure for pod foo',
        expect_in_backoff_q=True,
        expect_reason="SchedulerError",
        expect_nominated_node_name="",
    ),
]


@pytest.mark.parametrize("case", SCHEDULE_ONE_CASES, ids=lambda c: c.name)
def test_schedule_one_matches_upstream_table(case: ScheduleOneCase) -> None:
    sched = new_scheduler(
        case.points, nodes=nodes_named("node1"), pods=[case.send_pod], plugins=case.plugins
    )
    store = sched.store
    if case.inject_bind_error:
        error = case.inject_bind_error
        store.bind = lambda pod, node: Status(Code.Error, error=error)  # type: ignore[method-assign]
    trace = sched.schedule_one()
    assert trace is not None
    if case.allow_waiting_pod:
        waiting = sched.profiles["default-scheduler"].get_waiting_pod("default/foo")
        assert waiting is not None
        waiting.allow("FakePermit")
        sched.run_due_work()
    assert [e.reason for e in store.events] == [case.event_reason]
    pod = store.get("Pod", "default/foo")
    if case.expect_bound:
        assert pod.node_name == "node1"
        assert store.events[0].message == "Successfully assigned default/foo to node1"
    else:
        assert pod.node_name == ""
        assert trace.message == case.expect_error
        assert store.events[0].message == case.expect_error
        condition = next(c for c in pod.conditions if c.type == "PodScheduled")
        assert (condition.status, condition.reason, condition.message) == (
            "False",
            case.expect_reason,
            case.expect_error,
        )
        assert pod.nominated_node_name == case.expect_nominated_node_name
        # An assumed pod that failed is forgotten: the node holds nothing.
        sched.cache.update_snapshot(sched.snapshot)
        node_info = sched.snapshot.get("node1")
        assert node_info is not None
        assert node_info.pods == []
    queue = sched.queue
    assert [p.name for p in queue.pods_in_backoff_q()] == (
        ["foo"] if case.expect_in_backoff_q else []
    )
    assert [p.name for p in queue.unschedulable_pod_list()] == (
        ["foo"] if case.expect_in_unschedulable else []
    )
    # In-flight pods should be always empty after a cycle and its binding.
    assert queue.in_flight_pods() == []


def test_schedule_one_skips_a_pod_being_deleted_with_an_event() -> None:
    deleting = dataclasses.replace(_pod("foo"), deletion_timestamp="2024-01-01T00:00:00Z")
    sched = new_scheduler({}, nodes=nodes_named("node1"), pods=[deleting])
    assert sched.schedule_one() is None
    assert [(e.type, e.reason, e.message) for e in sched.store.events] == [
        ("Warning", "FailedScheduling", "skip schedule deleting pod: default/foo")
    ]
    assert sched.queue.in_flight_pods() == []
    assert sched.store.get("Pod", "default/foo").node_name == ""


@pytest.mark.parametrize(
    ("points", "nodes"),
    [({"filter": ["FalseFilter"]}, ["node1"]), ({}, [])],
    ids=["no PostFilter plugin after a FitError", "no nodes available"],
)
def test_scheduling_failure_without_post_filter_clears_the_nomination(
    points: dict[str, Sequence[str]], nodes: list[str]
) -> None:
    pod = make_pod().name("foo").nominated_node_name("existing-node").obj()
    sched = new_scheduler(points, nodes=nodes_named(*nodes), pods=[pod])
    sched.queue.add_nominated_pod(sched.queue.new_queued_pod_info(pod).pod_info, None)
    assert sched.schedule_one() is not None
    assert sched.store.get("Pod", "default/foo").nominated_node_name == ""
    assert sched.queue.nominated_pods_for_node("existing-node") == []


def test_a_pending_reserve_rejection_records_the_plugin_as_pending() -> None:
    reserve = FakeReserve(Status(Code.Pending, ("waiting for something",)))
    sched = new_scheduler(
        {"reserve": ["FakeReserve"]},
        nodes=nodes_named("node1"),
        pods=[_pod("foo")],
        plugins={"FakeReserve": reserve},
    )
    trace = sched.schedule_one()
    assert trace is not None
    assert trace.message == _predicate_error("1 waiting for something")
    [entry] = sched.queue.snapshot_state()["unschedulablePods"]
    # Diagnosis.AddPluginStatus: a Pending status names its plugin both ways.
    assert (entry["unschedulablePlugins"], entry["pendingPlugins"]) == (
        ["FakeReserve"],
        ["FakeReserve"],
    )


@dataclasses.dataclass
class FlakyFilter:
    """Fails with an Error on the listed nodes the first time it sees each, then passes."""

    flaky_nodes: set[str]

    def name(self) -> str:
        return "FlakyFilter"

    def filter(self, state: CycleState, pod: Pod, node_info: NodeInfo) -> Status | None:
        if node_info.name in self.flaky_nodes:
            self.flaky_nodes.discard(node_info.name)
            return Status(Code.Error, error="flaky")
        return None


def test_a_filter_error_still_moves_the_start_index_past_the_processed_nodes() -> None:
    fake = FakeFilter({"0": U, "2": Code.Error})
    sched = new_scheduler(
        {"filter": ["FakeFilter"], "score": [("EqualPrioritizerPlugin", 1)]},
        nodes=nodes_named("0", "1", "2", "3"),
        plugins={"FakeFilter": fake},
    )
    with pytest.raises(Exception, match='running "FakeFilter" filter plugin'):
        find_nodes_that_fit_pod(sched, _pod("a"))
    # "0" rejected and "1" feasible were processed before "2" failed (findNodesThatFitPod
    # always updates nextStartNodeIndex).
    assert sched.next_start_node_index == 2


def test_an_error_on_the_nominated_node_falls_back_to_all_nodes() -> None:
    sched = new_scheduler(
        {"filter": ["FlakyFilter"]},
        nodes=nodes_named("node1", "node2"),
        plugins={"FlakyFilter": FlakyFilter({"node1"})},
    )
    # Upstream logs "Evaluation failed on nominated node" and goes on with every node.
    feasible, _ = find_nodes_that_fit_pod(
        sched, make_pod().name("p").nominated_node_name("node1").obj()
    )
    assert [n.name for n in feasible][:1] == ["node1"]


class NoopPostFilter:
    def name(self) -> str:
        return "NoopPostFilter"

    def post_filter(self, state: CycleState, pod: Pod, statuses: Any) -> tuple[None, Status | None]:
        return None, Status(U, ("nothing to do",))


def test_a_failure_without_nominating_info_resyncs_the_nomination_from_the_pod() -> None:
    pod = _pod("foo")
    sched = new_scheduler(
        {"filter": ["FalseFilter"], "postFilter": ["NoopPostFilter"]},
        nodes=nodes_named("node1"),
        pods=[pod],
        plugins={"NoopPostFilter": NoopPostFilter()},
    )
    sched.queue.add_nominated_pod(PodInfo(pod), NominatingInfo("node1"))
    trace = sched.schedule_one()
    assert trace is not None
    assert trace.message == f"0/1 nodes are available: 1 {ERR_REASON_FAKE}. nothing to do"
    # AddNominatedPod(podInfo, nil) is ModeNoop: the pod's own (empty) nominatedNodeName wins.
    assert sched.queue.nominated_pods_for_node("node1") == []


# ---------------------------------------------------------------------------------------------
# TestSchedulerFailedSchedulingReasons, TestSchedulerNoPhantomPodAfterDelete


def test_failed_scheduling_reasons_roll_up_into_a_short_message() -> None:
    capacity = {"cpu": "2", "memory": "100", "pods": "10"}
    nodes = [
        make_node().name(f"node{i}").capacity(capacity).allocatable(capacity).obj()
        for i in range(100)
    ]
    pod = make_pod().name("bar").req({"cpu": "4", "memory": "500"}).obj()
    sched = new_scheduler(
        {"preFilter": ["NodeResourcesFit"], "filter": ["NodeResourcesFit"]},
        nodes=nodes,
        pods=[pod],
    )
    trace = sched.schedule_one()
    assert trace is not None
    message = "0/100 nodes are available: 100 Insufficient cpu, 100 Insufficient memory."
    assert trace.message == message
    assert len(message) <= 150
    [entry] = sched.queue.snapshot_state()["unschedulablePods"]
    assert entry["unschedulablePlugins"] == ["NodeResourcesFit"]


def test_no_phantom_pod_after_delete() -> None:
    first = make_pod().name("foo").host_port(8080).obj()
    sched = new_scheduler(
        {"preFilter": ["NodePorts"], "filter": ["NodePorts"]},
        nodes=nodes_named("node1"),
        pods=[first],
    )
    assert sched.schedule_one() is not None
    assert sched.store.get("Pod", "default/foo").node_name == "node1"
    # Conflicting host ports incur a fit failure.
    sched.store.apply(make_pod().name("bar").host_port(8080).obj())
    trace = sched.schedule_one()
    assert trace is not None
    assert (
        trace.message
        == "0/1 nodes are available: 1 node(s) didn't have free ports for the requested pod ports."
    )
    # The user deletes the first pod: its port is free again and the second pod gets it.
    sched.store.delete("Pod", "default/foo")
    trace = sched.schedule_one()
    assert trace is not None
    assert trace.result == "Scheduled"
    assert sched.store.get("Pod", "default/bar").node_name == "node1"
