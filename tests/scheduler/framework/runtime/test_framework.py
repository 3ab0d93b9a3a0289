"""Framework construction and extension points, ported from upstream's
pkg/scheduler/framework/runtime/framework_test.go."""

from __future__ import annotations

import time
from collections.abc import Sequence
from dataclasses import dataclass, field

import pytest

from schedviz.kube.objects import Pod, Taint
from schedviz.scheduler.apis.config.types import (
    KubeSchedulerProfile,
    Plugin,
    PluginConfig,
    Plugins,
    PluginSet,
)
from schedviz.scheduler.backend.cache.snapshot import Snapshot, new_snapshot
from schedviz.scheduler.framework.cycle_state import CycleState
from schedviz.scheduler.framework.interface import (
    MAX_NODE_SCORE,
    MIN_NODE_SCORE,
    Code,
    NodePluginScores,
    NodeScore,
    PostFilterResult,
    PreFilterResult,
    Status,
    as_status,
)
from schedviz.scheduler.framework.plugins import nodeports, tainttoleration
from schedviz.scheduler.framework.plugins.names import (
    NODE_PORTS,
    NODE_RESOURCES_FIT,
    TAINT_TOLERATION,
)
from schedviz.scheduler.framework.plugins.noderesources import fit
from schedviz.scheduler.framework.runtime.framework import Framework, FrameworkError
from schedviz.scheduler.framework.runtime.registry import PluginFactory, Registry
from schedviz.scheduler.framework.types import NodeInfo, NodeToStatus, PodInfo, QueuedPodInfo
from schedviz.scheduler.testing.wrappers import make_node, make_pod

QUEUE_SORT_PLUGIN = "no-op-queue-sort-plugin"
BIND_PLUGIN = "bind-plugin"
SCORE_WITH_NORMALIZE_PLUGIN_1 = "score-with-normalize-plugin-1"
SCORE_WITH_NORMALIZE_PLUGIN_2 = "score-with-normalize-plugin-2"
SCORE_PLUGIN_1 = "score-plugin-1"
SCORE_PLUGIN_2 = "score-plugin-2"
PLUGIN_NOT_IMPLEMENTING_SCORE = "plugin-not-implementing-score"
DUPLICATE_PLUGIN = "duplicate-plugin"
TEST_PLUGIN = "test-plugin"
PERMIT_PLUGIN = "permit-plugin"
INJECT_REASON = "injected status"
INJECT_FILTER_REASON = "injected filter status"
NODE_NAME = "testNode"


# ---------------------------------------------------------------------------------------------
# Fake plugins (upstream's TestPlugin and friends)


@dataclass
class Injected:
    """Upstream's injectedResult: the codes (and scores) each point of a fake plugin returns."""

    score_res: int = 0
    normalize_res: int = 0
    score_status: Code = Code.Success
    normalize_status: Code = Code.Success
    pre_filter_result: PreFilterResult | None = None
    pre_filter_status: Code = Code.Success
    pre_filter_add_pod_status: Code = Code.Success
    pre_filter_remove_pod_status: Code = Code.Success
    filter_status: Code = Code.Success
    post_filter_status: Code = Code.Success
    pre_score_status: Code = Code.Success
    reserve_status: Code = Code.Success
    pre_bind_status: Code = Code.Success
    bind_status: Code = Code.Success
    permit_status: Code = Code.Success


def injected(code: Code, reason: str = INJECT_REASON) -> Status | None:
    """framework.NewStatus(code, reason): a Success code is a success status."""
    return Status(code, (reason,)) if code != Code.Success else None


@dataclass
class FakePlugin:
    """Every extension point but PreEnqueue, each answering what ``inj`` says."""

    plugin_name: str
    inj: Injected = field(default_factory=Injected)

    def name(self) -> str:
        return self.plugin_name

    def less(self, a: QueuedPodInfo, b: QueuedPodInfo) -> bool:
        return False

    def pre_filter(
        self, state: CycleState, pod: Pod, nodes: Sequence[NodeInfo]
    ) -> tuple[PreFilterResult | None, Status | None]:
        return self.inj.pre_filter_result, injected(self.inj.pre_filter_status)

    def pre_filter_extensions(self) -> FakePlugin:
        return self

    def add_pod(
        self, state: CycleState, pod: Pod, pod_info: PodInfo, node_info: NodeInfo
    ) -> Status | None:
        return injected(self.inj.pre_filter_add_pod_status)

    def remove_pod(
        self, state: CycleState, pod: Pod, pod_info: PodInfo, node_info: NodeInfo
    ) -> Status | None:
        return injected(self.inj.pre_filter_remove_pod_status)

    def filter(self, state: CycleState, pod: Pod, node_info: NodeInfo) -> Status | None:
        return injected(self.inj.filter_status, INJECT_FILTER_REASON)

    def post_filter(
        self, state: CycleState, pod: Pod, statuses: NodeToStatus
    ) -> tuple[PostFilterResult | None, Status | None]:
        return None, injected(self.inj.post_filter_status)

    def pre_score(self, state: CycleState, pod: Pod, nodes: Sequence[NodeInfo]) -> Status | None:
        return injected(self.inj.pre_score_status)

    def score(self, state: CycleState, pod: Pod, node_info: NodeInfo) -> tuple[int, Status | None]:
        return 0, injected(self.inj.score_status)

    def score_extensions(self) -> None:
        return None

    def reserve(self, state: CycleState, pod: Pod, node_name: str) -> Status | None:
        return injected(self.inj.reserve_status)

    def unreserve(self, state: CycleState, pod: Pod, node_name: str) -> None:
        return None

    def permit(self, state: CycleState, pod: Pod, node_name: str) -> tuple[Status | None, float]:
        return injected(self.inj.permit_status), 0.0

    def pre_bind(self, state: CycleState, pod: Pod, node_name: str) -> Status | None:
        return injected(self.inj.pre_bind_status)

    def bind(self, state: CycleState, pod: Pod, node_name: str) -> Status | None:
        return injected(self.inj.bind_status)

    def post_bind(self, state: CycleState, pod: Pod, node_name: str) -> None:
        return None


def score_result(inj: Injected) -> tuple[int, Status | None]:
    """Upstream's setScoreRes."""
    if inj.score_status != Code.Success:
        return 0, Status(inj.score_status, ("injecting failure.",))
    return inj.score_res, None


@dataclass
class ScorePlugin:
    """Score and PreScore only (upstream's TestScorePlugin)."""

    plugin_name: str
    inj: Injected = field(default_factory=Injected)

    def name(self) -> str:
        return self.plugin_name

    def pre_score(self, state: CycleState, pod: Pod, nodes: Sequence[NodeInfo]) -> Status | None:
        return injected(self.inj.pre_score_status)

    def score(self, state: CycleState, pod: Pod, node_info: NodeInfo) -> tuple[int, Status | None]:
        return score_result(self.inj)

    def score_extensions(self) -> None:
        return None


@dataclass
class ScoreWithNormalizePlugin:
    plugin_name: str
    inj: Injected = field(default_factory=Injected)

    def name(self) -> str:
        return self.plugin_name

    def score(self, state: CycleState, pod: Pod, node_info: NodeInfo) -> tuple[int, Status | None]:
        return score_result(self.inj)

    def score_extensions(self) -> ScoreWithNormalizePlugin:
        return self

    def normalize_score(
        self, state: CycleState, pod: Pod, scores: list[NodeScore]
    ) -> Status | None:
        if self.inj.normalize_status != Code.Success:
            return Status(self.inj.normalize_status, ("injecting failure.",))
        for node_score in scores:
            node_score.score = self.inj.normalize_res
        return None


class NotAScorePlugin:
    def name(self) -> str:
        return PLUGIN_NOT_IMPLEMENTING_SCORE


class DuplicatePlugin:
    def name(self) -> str:
        return DUPLICATE_PLUGIN

    def pre_filter(
        self, state: CycleState, pod: Pod, nodes: Sequence[NodeInfo]
    ) -> tuple[None, None]:
        return None, None

    def pre_filter_extensions(self) -> None:
        return None


class QueueSortPlugin:
    def name(self) -> str:
        return QUEUE_SORT_PLUGIN

    def less(self, a: QueuedPodInfo, b: QueuedPodInfo) -> bool:
        return False


class BindPlugin:
    def name(self) -> str:
        return BIND_PLUGIN

    def bind(self, state: CycleState, pod: Pod, node_name: str) -> Status | None:
        return None


class WaitingPermitPlugin:
    """Always asks to wait ten seconds (upstream's TestPermitPlugin)."""

    def name(self) -> str:
        return PERMIT_PLUGIN

    def permit(self, state: CycleState, pod: Pod, node_name: str) -> tuple[Status, float]:
        return Status(Code.Wait), 10.0


def args_factory(
    make: type[ScorePlugin] | type[ScoreWithNormalizePlugin], name: str
) -> PluginFactory:
    """A factory reading an ``Injected`` from the plugin's args (upstream's DecodeInto)."""

    def factory(args: object, handle: object) -> object:
        return make(name, args if isinstance(args, Injected) else Injected())

    return factory


def registry() -> Registry:
    """Upstream's shared test registry."""
    return Registry(
        {
            SCORE_WITH_NORMALIZE_PLUGIN_1: args_factory(
                ScoreWithNormalizePlugin, SCORE_WITH_NORMALIZE_PLUGIN_1
            ),
            SCORE_WITH_NORMALIZE_PLUGIN_2: args_factory(
                ScoreWithNormalizePlugin, SCORE_WITH_NORMALIZE_PLUGIN_2
            ),
            SCORE_PLUGIN_1: args_factory(ScorePlugin, SCORE_PLUGIN_1),
            SCORE_PLUGIN_2: args_factory(ScorePlugin, SCORE_PLUGIN_2),
            PLUGIN_NOT_IMPLEMENTING_SCORE: lambda args, handle: NotAScorePlugin(),
            DUPLICATE_PLUGIN: lambda args, handle: DuplicatePlugin(),
            TEST_PLUGIN: lambda args, handle: FakePlugin(TEST_PLUGIN),
            QUEUE_SORT_PLUGIN: lambda args, handle: QueueSortPlugin(),
            BIND_PLUGIN: lambda args, handle: BindPlugin(),
        }
    )


DEFAULT_WEIGHTS = {
    SCORE_WITH_NORMALIZE_PLUGIN_1: 1,
    SCORE_WITH_NORMALIZE_PLUGIN_2: 2,
    SCORE_PLUGIN_1: 1,
}


def score_config(*names: str) -> Plugins:
    """Upstream's buildScoreConfigDefaultWeights."""
    return Plugins(score=PluginSet([Plugin(n, DEFAULT_WEIGHTS.get(n, 0)) for n in names]))


class Handle:
    """The framework's handle: a snapshot and the pods nominated to each node."""

    def __init__(self, snapshot: Snapshot | None = None, nominated: Sequence[Pod] = ()) -> None:
        self.snapshot = snapshot if snapshot is not None else Snapshot()
        self.nominated = list(nominated)

    def snapshot_shared_lister(self) -> Snapshot:
        return self.snapshot

    def nominated_pods_for_node(self, node_name: str) -> list[PodInfo]:
        return [PodInfo(p) for p in self.nominated if p.nominated_node_name == node_name]


def new_framework(
    plugins: Plugins,
    reg: Registry | None = None,
    plugin_config: Sequence[PluginConfig] = (),
    handle: Handle | None = None,
    scheduler_name: str = "",
) -> Framework:
    """NewFramework with the profile exactly as given."""
    profile = KubeSchedulerProfile(
        scheduler_name=scheduler_name, plugins=plugins, plugin_config=list(plugin_config)
    )
    return Framework(profile, reg if reg is not None else registry(), handle or Handle())


def with_queue_sort_and_bind(
    plugins: Plugins,
    reg: Registry | None = None,
    plugin_config: Sequence[PluginConfig] = (),
    handle: Handle | None = None,
) -> Framework:
    """Upstream's newFrameworkWithQueueSortAndBind."""
    reg = reg if reg is not None else registry()
    if QUEUE_SORT_PLUGIN not in reg:
        reg.register(QUEUE_SORT_PLUGIN, lambda args, handle: QueueSortPlugin())
    if BIND_PLUGIN not in reg:
        reg.register(BIND_PLUGIN, lambda args, handle: BindPlugin())
    if not plugins.queue_sort.enabled:
        plugins.queue_sort.enabled.append(Plugin(QUEUE_SORT_PLUGIN))
    if not plugins.bind.enabled:
        plugins.bind.enabled.append(Plugin(BIND_PLUGIN))
    return new_framework(plugins, reg, plugin_config, handle)


def with_plugins_at(
    point: str, plugins: Sequence[object], handle: Handle | None = None
) -> Framework:
    """A framework whose ``point`` runs exactly these plugin instances, in order."""
    reg = Registry()
    enabled: list[Plugin] = []
    for plugin in plugins:
        name = plugin.name()  # type: ignore[attr-defined]
        reg.register(name, lambda args, handle, plugin=plugin: plugin)
        enabled.append(Plugin(name))
    config = Plugins()
    config.get(point).enabled.extend(enabled)
    return with_queue_sort_and_bind(config, reg, handle=handle)


def list_plugins(framework: Framework) -> dict[str, list[tuple[str, int]]]:
    """Upstream's ListPlugins: each non-empty point's plugins, weights at Score only."""
    listed: dict[str, list[tuple[str, int]]] = {}
    for point in framework.points:
        names = framework.plugin_names(point)
        if names:
            listed[point] = [
                (n, framework.score_plugin_weight[n] if point == "score" else 0) for n in names
            ]
    return listed


def same_status(got: Status | None, want: Status | None) -> bool:
    """Upstream's statusCmpOpts: errors by their text, others by code, plugin and message."""
    if got is None or want is None:
        return (got is None or got.is_success()) and (want is None or want.is_success())
    if want.code == Code.Error:
        return got.code == Code.Error and got.as_error() == want.as_error()
    return (got.code, got.plugin, got.message()) == (want.code, want.plugin, want.message())


def rejected(code: Code, plugin: str, *reasons: str) -> Status:
    return Status(code, reasons or (INJECT_REASON,), plugin)


# ---------------------------------------------------------------------------------------------
# Construction


@pytest.mark.parametrize(
    ("plugins", "fails"),
    [
        pytest.param(score_config("notExist"), True, id="enabled Score plugin doesn't exist"),
        pytest.param(
            score_config(PLUGIN_NOT_IMPLEMENTING_SCORE), True, id="not a ScorePlugin at Score"
        ),
        pytest.param(Plugins(), False, id="Score plugins are nil"),
        pytest.param(score_config(), False, id="enabled Score plugin list is empty"),
        pytest.param(score_config(SCORE_PLUGIN_1), False, id="only implements ScorePlugin"),
        pytest.param(
            score_config(SCORE_WITH_NORMALIZE_PLUGIN_1), False, id="implements ScoreExtensions"
        ),
    ],
)
def test_it_builds_a_framework_only_from_registered_score_plugins(
    plugins: Plugins, fails: bool
) -> None:
    if fails:
        with pytest.raises(FrameworkError):
            with_queue_sort_and_bind(plugins)
    else:
        with_queue_sort_and_bind(plugins)


@pytest.mark.parametrize(
    ("plugins", "plugin_config", "message"),
    [
        pytest.param(
            Plugins(
                pre_filter=PluginSet([Plugin(DUPLICATE_PLUGIN, 1), Plugin(DUPLICATE_PLUGIN, 1)])
            ),
            [PluginConfig(DUPLICATE_PLUGIN)],
            f'plugin "{DUPLICATE_PLUGIN}" already registered as "PreFilterPlugin"',
            id="duplicate plugin name",
        ),
        pytest.param(
            Plugins(pre_filter=PluginSet([Plugin(DUPLICATE_PLUGIN, 1)])),
            [PluginConfig(DUPLICATE_PLUGIN), PluginConfig(DUPLICATE_PLUGIN)],
            f"repeated config for plugin {DUPLICATE_PLUGIN}",
            id="duplicate plugin config",
        ),
        pytest.param(
            score_config("notExist"),
            [],
            'ScorePlugin "notExist" does not exist',
            id="plugin missing from the registry",
        ),
        pytest.param(
            score_config(PLUGIN_NOT_IMPLEMENTING_SCORE),
            [],
            f'plugin "{PLUGIN_NOT_IMPLEMENTING_SCORE}" does not extend ScorePlugin plugin',
            id="plugin at a point it does not implement",
        ),
        pytest.param(
            Plugins(multi_point=PluginSet([Plugin("notExist")])),
            [],
            'PreFilterPlugin "notExist" does not exist',
            id="multiPoint plugin missing from the registry",
        ),
    ],
)
def test_it_refuses_an_inconsistent_profile_with_upstreams_error(
    plugins: Plugins, plugin_config: list[PluginConfig], message: str
) -> None:
    with pytest.raises(FrameworkError) as error:
        new_framework(plugins, plugin_config=plugin_config)
    assert message in str(error.value)


def test_it_needs_exactly_one_queue_sort_plugin_and_a_bind_plugin() -> None:
    with pytest.raises(FrameworkError) as error:
        new_framework(Plugins(bind=PluginSet([Plugin(BIND_PLUGIN)])), scheduler_name="p")
    assert str(error.value) == (
        'only one queue sort plugin required for profile with scheduler name "p", but got 0'
    )
    with pytest.raises(FrameworkError) as error:
        new_framework(
            Plugins(queue_sort=PluginSet([Plugin(QUEUE_SORT_PLUGIN)])), scheduler_name="p"
        )
    assert (
        str(error.value) == 'at least one bind plugin is needed for profile with scheduler name "p"'
    )


def test_it_wraps_a_plugin_factory_error() -> None:
    def failing(args: object, handle: object) -> object:
        raise ValueError("bad args")

    reg = registry()
    reg.register("failing", failing)
    with pytest.raises(FrameworkError) as error:
        with_queue_sort_and_bind(Plugins(filter=PluginSet([Plugin("failing")])), reg)
    assert str(error.value) == 'initializing plugin "failing": bad args'


def test_it_refuses_weights_that_could_overflow_the_total_score() -> None:
    plugins = Plugins(
        score=PluginSet([Plugin(SCORE_PLUGIN_1, 2**62), Plugin(SCORE_PLUGIN_2, 2**62)])
    )
    with pytest.raises(FrameworkError, match="total score of Score plugins could overflow"):
        with_queue_sort_and_bind(plugins)


def test_it_refuses_a_score_plugin_whose_name_is_not_the_configured_one() -> None:
    reg = registry()
    reg.register("alias", lambda args, handle: ScorePlugin(SCORE_PLUGIN_1))
    with pytest.raises(FrameworkError) as error:
        with_queue_sort_and_bind(Plugins(score=PluginSet([Plugin("alias")])), reg)
    assert str(error.value) == f'score plugin "{SCORE_PLUGIN_1}" is not configured with weight'


ALL_TEST_PLUGIN_POINTS = ("queueSort", "preFilter", "filter", "postFilter", "reserve", "permit")
AFTER_SCORE = ("reserve", "permit", "preBind", "bind", "postBind")


def expected(
    score: list[tuple[str, int]] | None = None,
    pre_score: list[str] | None = None,
    **others: list[str],
) -> dict[str, list[tuple[str, int]]]:
    """ListPlugins output: TEST_PLUGIN everywhere (but preEnqueue) unless overridden."""
    points = ["queueSort", "preFilter", "filter", "postFilter", *AFTER_SCORE]
    want = {point: [(TEST_PLUGIN, 0)] for point in points}
    if pre_score is not None:
        want["preScore"] = [(n, 0) for n in pre_score]
    if score is not None:
        want["score"] = score
    for point, names in others.items():
        want[point] = [(n, 0) for n in names]
    return {point: names for point, names in want.items() if names}


MULTI_POINT_CASES = [
    pytest.param(
        Plugins(multi_point=PluginSet([Plugin(TEST_PLUGIN, 5)])),
        expected(score=[(TEST_PLUGIN, 5)], pre_score=[TEST_PLUGIN]),
        id="plugin expansion",
    ),
    pytest.param(
        Plugins(
            multi_point=PluginSet([Plugin(TEST_PLUGIN)]),
            pre_score=PluginSet(disabled=[Plugin(TEST_PLUGIN)]),
            score=PluginSet(disabled=[Plugin(TEST_PLUGIN)]),
        ),
        expected(),
        id="disable MultiPoint plugin at some extension points",
    ),
    pytest.param(
        Plugins(multi_point=PluginSet([Plugin(TEST_PLUGIN), Plugin(SCORE_PLUGIN_1)])),
        expected(
            score=[(TEST_PLUGIN, 1), (SCORE_PLUGIN_1, 1)], pre_score=[TEST_PLUGIN, SCORE_PLUGIN_1]
        ),
        id="Multiple MultiPoint plugins",
    ),
    pytest.param(
        Plugins(
            multi_point=PluginSet([Plugin(TEST_PLUGIN), Plugin(SCORE_PLUGIN_1)]),
            pre_score=PluginSet(disabled=[Plugin("*")]),
        ),
        expected(score=[(TEST_PLUGIN, 1), (SCORE_PLUGIN_1, 1)]),
        id="disable MultiPoint extension",
    ),
    pytest.param(
        Plugins(
            multi_point=PluginSet(
                [Plugin(SCORE_WITH_NORMALIZE_PLUGIN_1), Plugin(TEST_PLUGIN), Plugin(SCORE_PLUGIN_1)]
            ),
            score=PluginSet([Plugin(SCORE_PLUGIN_1), Plugin(TEST_PLUGIN)]),
        ),
        expected(
            score=[(SCORE_PLUGIN_1, 1), (TEST_PLUGIN, 1), (SCORE_WITH_NORMALIZE_PLUGIN_1, 1)],
            pre_score=[TEST_PLUGIN, SCORE_PLUGIN_1],
        ),
        id="Reorder MultiPoint plugins (specified extension takes precedence)",
    ),
    pytest.param(
        Plugins(
            multi_point=PluginSet([Plugin(TEST_PLUGIN), Plugin(SCORE_PLUGIN_1)]),
            score=PluginSet(
                [Plugin(SCORE_WITH_NORMALIZE_PLUGIN_1), Plugin(SCORE_PLUGIN_1), Plugin(TEST_PLUGIN)]
            ),
        ),
        expected(
            score=[(SCORE_PLUGIN_1, 1), (TEST_PLUGIN, 1), (SCORE_WITH_NORMALIZE_PLUGIN_1, 1)],
            pre_score=[TEST_PLUGIN, SCORE_PLUGIN_1],
        ),
        id="Reorder MultiPoint plugins (only when it exists in MultiPoint)",
    ),
    pytest.param(
        Plugins(
            multi_point=PluginSet([Plugin(TEST_PLUGIN), Plugin(SCORE_PLUGIN_1)]),
            score=PluginSet([Plugin(SCORE_PLUGIN_1, 5), Plugin(TEST_PLUGIN, 3)]),
        ),
        expected(
            score=[(SCORE_PLUGIN_1, 5), (TEST_PLUGIN, 3)], pre_score=[TEST_PLUGIN, SCORE_PLUGIN_1]
        ),
        id="Override MultiPoint plugins weights",
    ),
    pytest.param(
        Plugins(
            multi_point=PluginSet(
                [Plugin(QUEUE_SORT_PLUGIN), Plugin(BIND_PLUGIN), Plugin(SCORE_PLUGIN_1)],
                disabled=[Plugin("*")],
            )
        ),
        {
            "queueSort": [(QUEUE_SORT_PLUGIN, 0)],
            "preScore": [(SCORE_PLUGIN_1, 0)],
            "score": [(SCORE_PLUGIN_1, 1)],
            "bind": [(BIND_PLUGIN, 0)],
        },
        id="disable and enable MultiPoint plugins with '*'",
    ),
    pytest.param(
        Plugins(
            multi_point=PluginSet(
                [Plugin(BIND_PLUGIN), Plugin(QUEUE_SORT_PLUGIN), Plugin(SCORE_PLUGIN_1)],
                disabled=[Plugin(SCORE_PLUGIN_1)],
            )
        ),
        {
            "queueSort": [(QUEUE_SORT_PLUGIN, 0)],
            "preScore": [(SCORE_PLUGIN_1, 0)],
            "score": [(SCORE_PLUGIN_1, 1)],
            "bind": [(BIND_PLUGIN, 0)],
        },
        id="disable and enable MultiPoint plugin by name",
    ),
    pytest.param(
        Plugins(
            multi_point=PluginSet([Plugin(TEST_PLUGIN), Plugin(SCORE_PLUGIN_1)]),
            score=PluginSet(
                [Plugin(SCORE_PLUGIN_1, 5), Plugin(SCORE_PLUGIN_2, 5), Plugin(TEST_PLUGIN, 3)]
            ),
        ),
        expected(
            score=[(SCORE_PLUGIN_1, 5), (TEST_PLUGIN, 3), (SCORE_PLUGIN_2, 5)],
            pre_score=[TEST_PLUGIN, SCORE_PLUGIN_1],
        ),
        id="Override MultiPoint plugins weights and avoid a plugin being loaded multiple times",
    ),
]


@pytest.mark.parametrize(("plugins", "want"), MULTI_POINT_CASES)
def test_it_expands_multi_point_plugins_to_the_points_they_implement(
    plugins: Plugins, want: dict[str, list[tuple[str, int]]]
) -> None:
    assert list_plugins(new_framework(plugins)) == want


def test_it_refuses_a_plugin_registered_twice_through_multi_point() -> None:
    plugins = Plugins(multi_point=PluginSet([Plugin(TEST_PLUGIN), Plugin(TEST_PLUGIN)]))
    with pytest.raises(FrameworkError, match="already registered"):
        new_framework(plugins)


# ---------------------------------------------------------------------------------------------
# PreFilter

UNRESOLVABLE = Code.UnschedulableAndUnresolvable
NO_NODE = PreFilterResult(frozenset())


PRE_FILTER_CASES = [
    pytest.param([FakePlugin("success1"), FakePlugin("success2")], None, set(), Code.Success,
                 id="all PreFilter returned success"),
    pytest.param(
        [FakePlugin("success"), FakePlugin("error", Injected(pre_filter_status=Code.Error))],
        None, set(), Code.Error, id="one success, another non-success",
    ),
    pytest.param(
        [
            FakePlugin("skip", Injected(pre_filter_status=Code.Skip)),
            FakePlugin("error", Injected(pre_filter_status=Code.Error)),
        ],
        None, {"skip"}, Code.Error, id="one skip, another non-success",
    ),
    pytest.param(
        [FakePlugin(f"skip{i}", Injected(pre_filter_status=Code.Skip)) for i in (1, 2, 3)],
        None, {"skip1", "skip2", "skip3"}, Code.Success, id="all PreFilter plugins returned skip",
    ),
    pytest.param(
        [
            FakePlugin("skip1", Injected(pre_filter_status=Code.Skip)),
            FakePlugin("success1"),
            FakePlugin("skip2", Injected(pre_filter_status=Code.Skip)),
            FakePlugin("success2"),
        ],
        None, {"skip1", "skip2"}, Code.Success, id="some PreFilter plugins returned skip",
    ),
    pytest.param(
        [
            FakePlugin("unschedulable", Injected(pre_filter_status=Code.Unschedulable)),
            FakePlugin("skip", Injected(pre_filter_status=Code.Skip)),
        ],
        None, {"skip"}, Code.Unschedulable, id="Unschedulable, and the other plugins still run",
    ),
    pytest.param(
        [
            FakePlugin("unresolvable", Injected(pre_filter_status=UNRESOLVABLE)),
            FakePlugin("skip", Injected(pre_filter_status=Code.Skip)),
        ],
        None, set(), Code.UnschedulableAndUnresolvable,
        id="UnschedulableAndUnresolvable, and no other plugin runs",
    ),
    pytest.param(
        [
            FakePlugin("reject-all-nodes", Injected(pre_filter_result=NO_NODE)),
            FakePlugin("skip", Injected(pre_filter_status=Code.Skip)),
        ],
        PreFilterResult(frozenset()), set(), Code.UnschedulableAndUnresolvable,
        id="all nodes are filtered out by the PreFilterResult",
    ),
]  # fmt: skip


@pytest.mark.parametrize(("plugins", "want_result", "want_skipped", "want_code"), PRE_FILTER_CASES)
def test_it_runs_pre_filter_plugins_and_records_the_skipped_ones(
    plugins: list[FakePlugin],
    want_result: PreFilterResult | None,
    want_skipped: set[str],
    want_code: Code,
) -> None:
    framework = with_plugins_at("preFilter", plugins)
    state = CycleState()
    result, status, _ = framework.run_pre_filter_plugins(state, make_pod().name("p").obj())
    assert result == want_result
    assert (status.code if status else Code.Success) == want_code
    assert state.skip_filter_plugins == want_skipped


def test_it_wraps_a_pre_filter_error_with_the_plugin_name() -> None:
    framework = with_plugins_at(
        "preFilter", [FakePlugin("error", Injected(pre_filter_status=Code.Error))]
    )
    _, status, _ = framework.run_pre_filter_plugins(CycleState(), make_pod().obj())
    assert status is not None and status.plugin == "error"
    assert status.as_error() == f'running PreFilter plugin "error": {INJECT_REASON}'


@pytest.mark.parametrize(
    ("node_sets", "message"),
    [
        pytest.param({"a": set()}, "node(s) didn't satisfy plugin a", id="one plugin, no node"),
        pytest.param(
            {"a": {"node1"}, "b": {"node2"}},
            "node(s) didn't satisfy plugin(s) [a b] simultaneously",
            id="two plugins with disjoint nodes",
        ),
    ],
)
def test_it_rejects_all_nodes_when_pre_filter_results_do_not_intersect(
    node_sets: dict[str, set[str]], message: str
) -> None:
    plugins = [
        FakePlugin(name, Injected(pre_filter_result=PreFilterResult(frozenset(nodes))))
        for name, nodes in node_sets.items()
    ]
    framework = with_plugins_at("preFilter", plugins)
    result, status, with_nodes = framework.run_pre_filter_plugins(CycleState(), make_pod().obj())
    assert status == Status(Code.UnschedulableAndUnresolvable, (message,))
    assert result is not None and result.node_names == frozenset()
    assert with_nodes == set(node_sets)


@pytest.mark.parametrize("extension", ["add", "remove"])
@pytest.mark.parametrize(
    ("codes", "skipped", "want"),
    [
        pytest.param([Code.Success, Code.Success], set(), Code.Success, id="all succeed"),
        pytest.param([Code.Success, Code.Error], set(), Code.Error, id="one returned error"),
        pytest.param([Code.Success, Code.Error], {"p1"}, Code.Success, id="erring one is skipped"),
    ],
)
def test_it_runs_pre_filter_extensions_of_plugins_not_skipped(
    extension: str, codes: list[Code], skipped: set[str], want: Code
) -> None:
    plugins = [
        FakePlugin(
            f"p{i}",
            Injected(pre_filter_add_pod_status=code)
            if extension == "add"
            else Injected(pre_filter_remove_pod_status=code),
        )
        for i, code in enumerate(codes)
    ]
    framework = with_plugins_at("preFilter", plugins)
    state = CycleState()
    state.skip_filter_plugins = skipped
    pod = make_pod().name("p").obj()
    node_info = NodeInfo(make_node().name("n").obj())
    run = (
        framework.run_pre_filter_extension_add_pod
        if extension == "add"
        else framework.run_pre_filter_extension_remove_pod
    )
    status = run(state, pod, PodInfo(make_pod().name("other").obj()), node_info)
    assert (status.code if status else Code.Success) == want
    if want == Code.Error:
        verb = "AddPod" if extension == "add" else "RemovePod"
        assert status is not None
        assert status.as_error() == f'running {verb} on PreFilter plugin "p1": {INJECT_REASON}'


# ---------------------------------------------------------------------------------------------
# Filter


def filter_error(plugin: str) -> Status:
    return as_status(f'running "{plugin}" filter plugin: {INJECT_FILTER_REASON}').with_plugin(
        plugin
    )


def filter_rejection(code: Code, plugin: str) -> Status:
    return Status(code, (INJECT_FILTER_REASON,), plugin)


FILTER_CASES = [
    pytest.param([Code.Success], set(), None, id="SuccessFilter"),
    pytest.param([Code.Error], set(), filter_error("TestPlugin1"), id="ErrorFilter"),
    pytest.param([Code.Unschedulable], set(), filter_rejection(Code.Unschedulable, "TestPlugin1"),
                 id="UnschedulableFilter"),
    pytest.param([Code.UnschedulableAndUnresolvable], set(),
                 filter_rejection(Code.UnschedulableAndUnresolvable, "TestPlugin1"),
                 id="UnschedulableAndUnresolvableFilter"),
    pytest.param([Code.Error, Code.Error], set(), filter_error("TestPlugin1"),
                 id="ErrorAndErrorFilters"),
    pytest.param([Code.Unschedulable, Code.Unschedulable], set(),
                 filter_rejection(Code.Unschedulable, "TestPlugin1"),
                 id="UnschedulableAndUnschedulableFilters"),
    pytest.param([Code.UnschedulableAndUnresolvable, Code.Unschedulable], set(),
                 filter_rejection(Code.UnschedulableAndUnresolvable, "TestPlugin1"),
                 id="UnschedulableAndUnschedulableAndUnresolvableFilters"),
    pytest.param([Code.Success, Code.Success], set(), None, id="SuccessAndSuccessFilters"),
    pytest.param([Code.Success, Code.Error], {"TestPlugin2"}, None, id="SuccessAndSkipFilters"),
    pytest.param([Code.Error, Code.Success], set(), filter_error("TestPlugin1"),
                 id="ErrorAndSuccessFilters"),
    pytest.param([Code.Success, Code.Error], set(), filter_error("TestPlugin2"),
                 id="SuccessAndErrorFilters"),
    pytest.param([Code.Success, Code.Unschedulable], set(),
                 filter_rejection(Code.Unschedulable, "TestPlugin2"),
                 id="SuccessAndUnschedulableFilters"),
]  # fmt: skip


@pytest.mark.parametrize(("codes", "skipped", "want"), FILTER_CASES)
def test_it_stops_filtering_at_the_first_plugin_that_rejects_the_node(
    codes: list[Code], skipped: set[str], want: Status | None
) -> None:
    plugins = [
        FakePlugin(f"TestPlugin{i + 1}", Injected(filter_status=c)) for i, c in enumerate(codes)
    ]
    framework = with_plugins_at("filter", plugins)
    state = CycleState()
    state.skip_filter_plugins = skipped
    node_info = NodeInfo(make_node().name(NODE_NAME).obj())
    got = framework.run_filter_plugins(state, make_pod().obj(), node_info)
    assert same_status(got, want), got


def requests_framework(*extra: FakePlugin, pre_filter_extra: bool = False) -> Framework:
    """TaintToleration and NodeResourcesFit at Filter (Fit also at PreFilter), NodePorts at
    both, then ``extra`` at Filter (and PreFilter with ``pre_filter_extra``)."""
    reg = Registry(
        {
            TAINT_TOLERATION: tainttoleration.new,
            NODE_RESOURCES_FIT: fit.new,
            NODE_PORTS: nodeports.new,
        }
    )
    for plugin in extra:
        reg.register(plugin.name(), lambda args, handle, plugin=plugin: plugin)
    names = [Plugin(p.name()) for p in extra]
    return with_queue_sort_and_bind(
        Plugins(
            pre_filter=PluginSet(
                [
                    Plugin(NODE_RESOURCES_FIT),
                    Plugin(NODE_PORTS),
                    *(names if pre_filter_extra else []),
                ]
            ),
            filter=PluginSet(
                [Plugin(TAINT_TOLERATION), Plugin(NODE_RESOURCES_FIT), Plugin(NODE_PORTS), *names]
            ),
        ),
        reg,
    )


def pre_filtered_state(framework: Framework, pod: Pod) -> CycleState:
    state = CycleState()
    _, status, _ = framework.run_pre_filter_plugins(state, pod)
    assert status is None or status.is_success()
    return state


def test_filters_by_requests_answers_as_the_filters_do_on_any_pods() -> None:
    framework = requests_framework()
    pod = make_pod().name("p").req({"cpu": "2", "memory": "1Gi"}).obj()
    state = pre_filtered_state(framework, pod)
    passes = framework.filters_by_requests(state, pod)
    assert passes is not None
    node = make_node().name("n").capacity({"cpu": "4", "memory": "4Gi", "pods": 3}).obj()
    on_node = [
        make_pod().name(f"r{i}").req({"cpu": cpu, "memory": "1Gi"}).node("n").obj()
        for i, cpu in enumerate(["1", "1500m", "500m", "100m"])
    ]
    for count in range(len(on_node) + 1):
        node_info = NodeInfo(node, on_node[:count])
        want = framework.run_filter_plugins(state, pod, node_info) is None
        assert passes(node_info.allocatable, node_info.requested, len(node_info.pods)) is want
        assert want is (count <= 1)


def test_filters_by_requests_key_tells_checks_that_answer_alike() -> None:
    framework = requests_framework()

    def key_of(requests: dict[str, str], name: str = "p") -> object:
        pod = make_pod().name(name).req(requests).obj()
        return framework.filters_by_requests_key(pre_filtered_state(framework, pod), pod)

    two_cpus = key_of({"cpu": "2", "memory": "1Gi"})
    assert two_cpus is not None
    assert key_of({"cpu": "2", "memory": "1Gi"}, "q") == two_cpus
    assert key_of({"cpu": "2", "memory": "2Gi"}) != two_cpus
    assert key_of({"cpu": "2", "memory": "1Gi", "example.com/gpu": "1"}) != two_cpus
    # No check, no key.
    with_port = make_pod().name("p").host_port(8080).obj()
    state = pre_filtered_state(framework, with_port)
    assert framework.filters_by_requests_key(state, with_port) is None


def test_filters_by_requests_declines_a_filter_that_reads_the_pods() -> None:
    framework = requests_framework()
    with_port = make_pod().name("p").host_port(8080).obj()
    # NodePorts runs (the pod asks for a host port) and reads the node's used ports.
    assert (
        framework.filters_by_requests(pre_filtered_state(framework, with_port), with_port) is None
    )


def test_filters_by_requests_declines_a_filter_that_does_not_say_what_it_reads() -> None:
    framework = requests_framework(FakePlugin("Opaque", Injected()))
    pod = make_pod().name("p").obj()
    state = pre_filtered_state(framework, pod)
    assert framework.filters_by_requests(state, pod) is None
    state.skip_filter_plugins = {*state.skip_filter_plugins, "Opaque"}
    assert framework.filters_by_requests(state, pod) is not None


def test_filters_by_requests_declines_when_pre_filter_extensions_run() -> None:
    extended = FakePlugin("Extended", Injected())
    extended.filter_reads_node_only = True  # type: ignore[attr-defined]
    framework = requests_framework(extended, pre_filter_extra=True)
    pod = make_pod().name("p").obj()
    state = pre_filtered_state(framework, pod)
    # Its AddPod/RemovePod would change the cycle state the filters read.
    assert framework.filters_by_requests(state, pod) is None
    state.skip_filter_plugins = {*state.skip_filter_plugins, "Extended"}
    assert framework.filters_by_requests(state, pod) is not None


def test_node_only_filters_run_only_the_filters_that_read_the_node_alone() -> None:
    framework = requests_framework()
    pod = make_pod().name("p").req({"cpu": "2"}).obj()
    state = pre_filtered_state(framework, pod)
    node_only = framework.node_only_filters(state)
    node = make_node().name("n").capacity({"cpu": "4", "pods": 10}).obj()
    full = NodeInfo(node, [make_pod().name("r").req({"cpu": "3"}).node("n").obj()])
    # NodeResourcesFit rejects the full node; TaintToleration, which reads the node alone, not.
    rejected = framework.run_filter_plugins(state, pod, full)
    assert rejected is not None and rejected.plugin == NODE_RESOURCES_FIT
    assert node_only(state, pod, full) is None
    tainted = make_node().name("t").capacity({"cpu": "4"}).taints([Taint("k", "NoSchedule")]).obj()
    status = node_only(state, pod, NodeInfo(tainted))
    assert status is not None and status.plugin == TAINT_TOLERATION
    assert status == framework.run_filter_plugins(state, pod, NodeInfo(tainted))


class SlowFilter(FakePlugin):
    """A filter plugin that takes ``seconds`` on each node."""

    def __init__(self, name: str, seconds: float) -> None:
        super().__init__(name, Injected(filter_status=Code.Success))
        self.seconds = seconds

    def filter(self, state: CycleState, pod: Pod, node_info: NodeInfo) -> Status | None:
        time.sleep(self.seconds)
        return super().filter(state, pod, node_info)


def test_it_measures_each_filter_plugins_own_time() -> None:
    framework = with_plugins_at("filter", [SlowFilter("Slow", 0.01), SlowFilter("Quick", 0.0)])
    node_info = NodeInfo(make_node().name(NODE_NAME).obj())
    for _ in range(3):
        assert framework.run_filter_plugins(CycleState(), make_pod().obj(), node_info) is None
    durations = framework.filter_durations
    assert durations["Slow"] >= 0.03
    # Each plugin's own time, not a share: the quick one took a fraction (even on a busy machine).
    assert durations["Quick"] < durations["Slow"] / 2
    framework.filter_durations.clear()
    assert framework.filter_durations == {}


# ---------------------------------------------------------------------------------------------
# Filter with nominated pods

LOW = make_pod().name("low").priority(0).nominated_node_name(NODE_NAME).obj()
HIGH = make_pod().name("high").priority(1000).nominated_node_name(NODE_NAME).obj()

NOMINATED_CASES = [
    pytest.param(None, None, LOW, None, None, id="node has no nominated pod"),
    pytest.param(Code.Success, Code.Success, LOW, HIGH, None,
                 id="high-priority nominated pod and all filters succeed"),
    pytest.param(Code.Error, None, LOW, HIGH,
                 as_status(f'running AddPod on PreFilter plugin "TestPlugin1": {INJECT_REASON}'),
                 id="high-priority nominated pod and pre filters fail"),
    pytest.param(Code.Success, Code.Error, LOW, HIGH, filter_error("TestPlugin2"),
                 id="high-priority nominated pod and filters fail"),
    pytest.param(Code.Unschedulable, Code.Success, HIGH, LOW, None,
                 id="low-priority nominated pod is not added, so AddPod never runs"),
]  # fmt: skip


@pytest.mark.parametrize(
    ("add_pod_code", "filter_code", "pod", "nominated", "want"), NOMINATED_CASES
)
def test_it_filters_with_nominated_pods_of_higher_or_equal_priority(
    add_pod_code: Code | None,
    filter_code: Code | None,
    pod: Pod,
    nominated: Pod | None,
    want: Status | None,
) -> None:
    config = Plugins()
    reg = Registry()
    if add_pod_code is not None:
        pre_filter = FakePlugin("TestPlugin1", Injected(pre_filter_add_pod_status=add_pod_code))
        reg.register(pre_filter.plugin_name, lambda args, handle: pre_filter)
        config.pre_filter.enabled.append(Plugin(pre_filter.plugin_name))
    if filter_code is not None:
        filter_plugin = FakePlugin("TestPlugin2", Injected(filter_status=filter_code))
        reg.register(filter_plugin.plugin_name, lambda args, handle: filter_plugin)
        config.filter.enabled.append(Plugin(filter_plugin.plugin_name))
    handle = Handle(nominated=[nominated] if nominated else [])
    framework = with_queue_sort_and_bind(config, reg, handle=handle)
    node_info = NodeInfo(make_node().name(NODE_NAME).obj())
    got = framework.run_filter_plugins_with_nominated_pods(CycleState(), pod, node_info)
    assert same_status(got, want), got


class RequiresNominatedPodAbsent:
    """Rejects a node that holds a pod named "high": shows which pass saw the nominated pod."""

    def __init__(self) -> None:
        self.seen: list[list[str]] = []

    def name(self) -> str:
        return "Counter"

    def filter(self, state: CycleState, pod: Pod, node_info: NodeInfo) -> Status | None:
        self.seen.append([p.pod.name for p in node_info.pods])
        return None


def test_it_filters_twice_with_and_without_the_nominated_pods() -> None:
    counter = RequiresNominatedPodAbsent()
    framework = with_plugins_at("filter", [counter], handle=Handle(nominated=[HIGH]))
    node_info = NodeInfo(make_node().name(NODE_NAME).obj(), [make_pod().name("running").obj()])
    assert framework.run_filter_plugins_with_nominated_pods(CycleState(), LOW, node_info) is None
    assert counter.seen == [["running", "high"], ["running"]]
    assert [p.pod.name for p in node_info.pods] == ["running"]


# ---------------------------------------------------------------------------------------------
# PostFilter


POST_FILTER_CASES = [
    pytest.param([Code.Success], Status(Code.Success, (INJECT_REASON,)),
                 id="a single plugin makes a Pod schedulable"),
    pytest.param([Code.Unschedulable, Code.Success], Status(Code.Success, (INJECT_REASON,)),
                 id="plugin1 fails, plugin2 makes the Pod schedulable"),
    pytest.param([Code.Success, Code.Unschedulable], Status(Code.Success, (INJECT_REASON,)),
                 id="plugin1 makes the Pod schedulable, plugin2 is not run"),
    pytest.param([Code.Error, Code.Success], as_status(INJECT_REASON).with_plugin("TestPlugin1"),
                 id="plugin1 errs, so plugin2 is not run"),
    pytest.param([Code.Unschedulable, Code.UnschedulableAndUnresolvable],
                 rejected(Code.UnschedulableAndUnresolvable, "TestPlugin2"),
                 id="plugin1 fails, plugin2 makes the Pod unresolvable"),
    pytest.param([Code.Unschedulable, Code.Unschedulable],
                 rejected(Code.Unschedulable, "TestPlugin1", INJECT_REASON, INJECT_REASON),
                 id="both plugins failed to make a Pod schedulable"),
]  # fmt: skip


@pytest.mark.parametrize(("codes", "want"), POST_FILTER_CASES)
def test_it_runs_post_filter_plugins_until_one_succeeds_or_errs(
    codes: list[Code], want: Status
) -> None:
    plugins = [
        FakePlugin(f"TestPlugin{i + 1}", Injected(post_filter_status=c))
        for i, c in enumerate(codes)
    ]
    framework = with_plugins_at("postFilter", plugins)
    _, got = framework.run_post_filter_plugins(CycleState(), make_pod().obj(), NodeToStatus())
    assert same_status(got, want), got


# ---------------------------------------------------------------------------------------------
# PreScore / Score


PRE_SCORE_CASES = [
    pytest.param([("success1", Code.Success), ("success2", Code.Success)], set(), Code.Success,
                 id="all PreScorePlugins returned success"),
    pytest.param([("success", Code.Success), ("error", Code.Error)], set(), Code.Error,
                 id="one success, another non-success"),
    pytest.param([("skip", Code.Skip), ("error", Code.Error)], {"skip"}, Code.Error,
                 id="one skip, another non-success"),
    pytest.param([("skip1", Code.Skip), ("skip2", Code.Skip), ("skip3", Code.Skip)],
                 {"skip1", "skip2", "skip3"}, Code.Success,
                 id="all PreScore plugins returned skip"),
    pytest.param([("skip1", Code.Skip), ("success1", Code.Success), ("skip2", Code.Skip),
                  ("success2", Code.Success)], {"skip1", "skip2"}, Code.Success,
                 id="some PreScore plugins returned skip"),
]  # fmt: skip


@pytest.mark.parametrize(("plugins", "want_skipped", "want_code"), PRE_SCORE_CASES)
def test_it_runs_pre_score_plugins_and_records_the_skipped_ones(
    plugins: list[tuple[str, Code]], want_skipped: set[str], want_code: Code
) -> None:
    framework = with_plugins_at(
        "preScore", [FakePlugin(name, Injected(pre_score_status=code)) for name, code in plugins]
    )
    state = CycleState()
    status = framework.run_pre_score_plugins(state, make_pod().obj(), [])
    assert (status.code if status else Code.Success) == want_code
    assert state.skip_score_plugins == want_skipped


def scores(*per_plugin: tuple[str, int]) -> list[NodePluginScores]:
    total = sum(score for _, score in per_plugin)
    return [NodePluginScores(node, list(per_plugin), total) for node in ("node1", "node2")]


SCORE_CASES = [
    pytest.param(score_config(), [], set(), scores(), id="no Score plugins"),
    pytest.param(score_config(SCORE_PLUGIN_1), [(SCORE_PLUGIN_1, Injected(score_res=1))], set(),
                 scores((SCORE_PLUGIN_1, 1)), id="single Score plugin"),
    pytest.param(score_config(SCORE_WITH_NORMALIZE_PLUGIN_1),
                 [(SCORE_WITH_NORMALIZE_PLUGIN_1, Injected(score_res=10, normalize_res=5))], set(),
                 scores((SCORE_WITH_NORMALIZE_PLUGIN_1, 5)), id="single ScoreWithNormalize plugin"),
    pytest.param(
        score_config(SCORE_PLUGIN_1, SCORE_WITH_NORMALIZE_PLUGIN_1, SCORE_WITH_NORMALIZE_PLUGIN_2),
        [(SCORE_PLUGIN_1, Injected(score_res=1)),
         (SCORE_WITH_NORMALIZE_PLUGIN_1, Injected(score_res=3, normalize_res=4)),
         (SCORE_WITH_NORMALIZE_PLUGIN_2, Injected(score_res=4, normalize_res=5))],
        set(),
        scores((SCORE_PLUGIN_1, 1), (SCORE_WITH_NORMALIZE_PLUGIN_1, 4),
               (SCORE_WITH_NORMALIZE_PLUGIN_2, 10)),
        id="3 Score plugins, 2 NormalizeScore plugins, weight 2 doubles",
    ),
    pytest.param(
        Plugins(multi_point=PluginSet([Plugin(SCORE_PLUGIN_1)]),
                score=PluginSet([Plugin(SCORE_PLUGIN_1, 3)])),
        [(SCORE_PLUGIN_1, Injected(score_res=1))], set(), scores((SCORE_PLUGIN_1, 3)),
        id="single Score plugin with MultiPointExpansion",
    ),
    pytest.param(
        score_config(SCORE_PLUGIN_1, SCORE_WITH_NORMALIZE_PLUGIN_1),
        [(SCORE_PLUGIN_1, Injected(score_res=1)),
         (SCORE_WITH_NORMALIZE_PLUGIN_1, Injected(score_status=Code.Error))],
        {SCORE_WITH_NORMALIZE_PLUGIN_1}, scores((SCORE_PLUGIN_1, 1)),
        id="one success plugin, one skip plugin",
    ),
    pytest.param(score_config(SCORE_PLUGIN_1),
                 [(SCORE_PLUGIN_1, Injected(score_status=Code.Error))],
                 {SCORE_PLUGIN_1}, scores(), id="all plugins are skipped in prescore"),
    pytest.param(score_config(SCORE_PLUGIN_1), [], {SCORE_PLUGIN_1, "score-plugin-unknown"},
                 scores(), id="more skipped plugins than score plugins"),
]  # fmt: skip


def two_nodes() -> list[NodeInfo]:
    return [NodeInfo(make_node().name(name).obj()) for name in ("node1", "node2")]


@pytest.mark.parametrize(("plugins", "injections", "skipped", "want"), SCORE_CASES)
def test_it_weighs_normalized_scores(
    plugins: Plugins,
    injections: list[tuple[str, Injected]],
    skipped: set[str],
    want: list[NodePluginScores],
) -> None:
    config = [PluginConfig(name, inj) for name, inj in injections]
    framework = with_queue_sort_and_bind(plugins, plugin_config=config)
    state = CycleState()
    state.skip_score_plugins = skipped
    got, status = framework.run_score_plugins(state, make_pod().obj(), two_nodes())
    assert status is None
    assert got == want


SCORE_ERROR_CASES = [
    pytest.param(
        [SCORE_PLUGIN_1, SCORE_WITH_NORMALIZE_PLUGIN_1],
        Injected(score_status=Code.Error),
        f'running Score plugins: plugin "{SCORE_WITH_NORMALIZE_PLUGIN_1}" failed with: '
        "injecting failure.",
        id="score fails",
    ),
    pytest.param(
        [SCORE_PLUGIN_1, SCORE_WITH_NORMALIZE_PLUGIN_1],
        Injected(normalize_status=Code.Error),
        f'running Normalize on Score plugins: plugin "{SCORE_WITH_NORMALIZE_PLUGIN_1}" failed '
        "with: injecting failure.",
        id="normalize fails",
    ),
    pytest.param(
        [SCORE_PLUGIN_1],
        Injected(score_res=MAX_NODE_SCORE + 1),
        f'applying score defaultWeights on Score plugins: plugin "{SCORE_PLUGIN_1}" returns an '
        f"invalid score {MAX_NODE_SCORE + 1}, it should in the range of [0, 100] after normalizing",
        id="Score plugin returns a score greater than MaxNodeScore",
    ),
    pytest.param(
        [SCORE_PLUGIN_1],
        Injected(score_res=MIN_NODE_SCORE - 1),
        f'applying score defaultWeights on Score plugins: plugin "{SCORE_PLUGIN_1}" returns an '
        f"invalid score {MIN_NODE_SCORE - 1}, it should in the range of [0, 100] after normalizing",
        id="Score plugin returns a score less than MinNodeScore",
    ),
    pytest.param(
        [SCORE_WITH_NORMALIZE_PLUGIN_1],
        Injected(normalize_res=MAX_NODE_SCORE + 1),
        f'applying score defaultWeights on Score plugins: plugin "{SCORE_WITH_NORMALIZE_PLUGIN_1}"'
        f" returns an invalid score {MAX_NODE_SCORE + 1}, it should in the range of [0, 100] "
        "after normalizing",
        id="ScoreWithNormalize plugin returns a score greater than MaxNodeScore",
    ),
    pytest.param(
        [SCORE_WITH_NORMALIZE_PLUGIN_1],
        Injected(normalize_res=MIN_NODE_SCORE - 1),
        f'applying score defaultWeights on Score plugins: plugin "{SCORE_WITH_NORMALIZE_PLUGIN_1}"'
        f" returns an invalid score {MIN_NODE_SCORE - 1}, it should in the range of [0, 100] "
        "after normalizing",
        id="ScoreWithNormalize plugin returns a score less than MinNodeScore",
    ),
]


@pytest.mark.parametrize(("names", "inj", "message"), SCORE_ERROR_CASES)
def test_it_fails_scoring_on_a_plugin_error_or_an_invalid_score(
    names: list[str], inj: Injected, message: str
) -> None:
    framework = with_queue_sort_and_bind(
        score_config(*names), plugin_config=[PluginConfig(names[-1], inj)]
    )
    got, status = framework.run_score_plugins(CycleState(), make_pod().obj(), two_nodes())
    assert got == []
    assert status is not None and status.code == Code.Error
    assert status.as_error() == message


def test_it_scores_every_plugin_before_normalizing_any() -> None:
    """An invalid score of the first plugin loses to a Score error of the second."""
    config = [
        PluginConfig(SCORE_WITH_NORMALIZE_PLUGIN_1, Injected(normalize_res=MAX_NODE_SCORE + 1)),
        PluginConfig(SCORE_PLUGIN_1, Injected(score_status=Code.Error)),
    ]
    framework = with_queue_sort_and_bind(
        score_config(SCORE_WITH_NORMALIZE_PLUGIN_1, SCORE_PLUGIN_1), plugin_config=config
    )
    _, status = framework.run_score_plugins(CycleState(), make_pod().obj(), two_nodes())
    assert status is not None
    assert status.as_error().startswith(f'running Score plugins: plugin "{SCORE_PLUGIN_1}"')


# ---------------------------------------------------------------------------------------------
# Reserve, Permit, PreBind, Bind


def point_error(point: str, plugin: str) -> Status:
    return as_status(f'running {point} plugin "{plugin}": {INJECT_REASON}')


def reserve_like_cases(point: str) -> list[object]:
    return [
        pytest.param([], None, id=f"No{point}Plugin"),
        pytest.param([Code.Success], None, id=f"Success{point}Plugins"),
        pytest.param([Code.Unschedulable], rejected(Code.Unschedulable, "TestPlugin"),
                     id=f"Unschedulable{point}Plugin"),
        pytest.param([Code.Error], point_error(point, "TestPlugin"), id=f"Error{point}Plugin"),
        pytest.param([Code.UnschedulableAndUnresolvable],
                     rejected(Code.UnschedulableAndUnresolvable, "TestPlugin"),
                     id=f"UnschedulableAndUnresolvable{point}Plugin"),
        pytest.param([Code.Success, Code.Success], None, id=f"SuccessSuccess{point}Plugins"),
        pytest.param([Code.Error, Code.Error], point_error(point, "TestPlugin"),
                     id=f"ErrorError{point}Plugins"),
        pytest.param([Code.Success, Code.Error], point_error(point, "TestPlugin 1"),
                     id=f"SuccessError{point}Plugins"),
        pytest.param([Code.Error, Code.Success], point_error(point, "TestPlugin"),
                     id=f"ErrorSuccess{point}Plugin"),
        pytest.param([Code.Unschedulable, Code.Success], rejected(Code.Unschedulable, "TestPlugin"),
                     id=f"UnschedulableAndSuccess{point}Plugin"),
    ]  # fmt: skip


def numbered(codes: list[Code], make: type[Injected], field_name: str) -> list[FakePlugin]:
    names = ["TestPlugin", "TestPlugin 1"]
    return [FakePlugin(names[i], make(**{field_name: c})) for i, c in enumerate(codes)]


@pytest.mark.parametrize(("codes", "want"), reserve_like_cases("Reserve"))
def test_it_stops_reserving_at_the_first_failure(codes: list[Code], want: Status | None) -> None:
    framework = with_plugins_at("reserve", numbered(codes, Injected, "reserve_status"))
    got = framework.run_reserve_plugins_reserve(CycleState(), make_pod().obj(), "")
    assert same_status(got, want), got


@pytest.mark.parametrize(("codes", "want"), reserve_like_cases("PreBind"))
def test_it_stops_pre_binding_at_the_first_failure(codes: list[Code], want: Status | None) -> None:
    framework = with_plugins_at("preBind", numbered(codes, Injected, "pre_bind_status"))
    got = framework.run_pre_bind_plugins(CycleState(), make_pod().obj(), "")
    assert same_status(got, want), got


def test_it_unreserves_in_the_reverse_order_of_reserve() -> None:
    calls: list[str] = []

    class Recording(FakePlugin):
        def unreserve(self, state: CycleState, pod: Pod, node_name: str) -> None:
            calls.append(self.plugin_name)

    framework = with_plugins_at("reserve", [Recording("a"), Recording("b"), Recording("c")])
    framework.run_reserve_plugins_unreserve(CycleState(), make_pod().obj(), "")
    assert calls == ["c", "b", "a"]


WAIT_MESSAGE = "one or more plugins asked to wait and no plugin rejected pod"
PERMIT_CASES = [
    pytest.param([], None, id="NilPermitPlugin"),
    pytest.param([Code.Success], None, id="SuccessPermitPlugin"),
    pytest.param([Code.Unschedulable], rejected(Code.Unschedulable, "TestPlugin"),
                 id="UnschedulablePermitPlugin"),
    pytest.param([Code.Error], point_error("Permit", "TestPlugin").with_plugin("TestPlugin"),
                 id="ErrorPermitPlugin"),
    pytest.param([Code.UnschedulableAndUnresolvable],
                 rejected(Code.UnschedulableAndUnresolvable, "TestPlugin"),
                 id="UnschedulableAndUnresolvablePermitPlugin"),
    pytest.param([Code.Wait],
                 Status(Code.Wait, (f'{WAIT_MESSAGE} ""',)),
                 id="WaitPermitPlugin"),
    pytest.param([Code.Success, Code.Success], None, id="SuccessSuccessPermitPlugin"),
    pytest.param([Code.Error, Code.Error], point_error("Permit", "TestPlugin"),
                 id="ErrorAndErrorPlugins"),
]  # fmt: skip


@pytest.mark.parametrize(("codes", "want"), PERMIT_CASES)
def test_it_runs_permit_plugins(codes: list[Code], want: Status | None) -> None:
    framework = with_plugins_at("permit", numbered(codes, Injected, "permit_status"))
    got = framework.run_permit_plugins(CycleState(), make_pod().obj(), "")
    assert same_status(got, want), got


class Clock:
    def __init__(self) -> None:
        self.now = 100.0

    def __call__(self) -> float:
        return self.now


def waiting_framework(clock: Clock) -> tuple[Framework, Pod]:
    reg = Registry({PERMIT_PLUGIN: lambda args, handle: WaitingPermitPlugin()})
    plugins = Plugins(permit=PluginSet([Plugin(PERMIT_PLUGIN, 1)]))
    framework = with_queue_sort_and_bind(plugins, reg)
    framework.clock_now = clock
    pod = make_pod().name("pod").uid("pod").obj()
    status = framework.run_permit_plugins(CycleState(), pod, "")
    assert status is not None and status.code == Code.Wait
    return framework, pod


def test_it_holds_a_waiting_pod_until_rejected() -> None:
    framework, pod = waiting_framework(Clock())
    waiting = framework.get_waiting_pod(pod.key)
    assert waiting is not None
    waiting.reject(PERMIT_PLUGIN, "reject message")
    got = framework.wait_on_permit(pod)
    assert same_status(got, rejected(Code.Unschedulable, PERMIT_PLUGIN, "reject message"))
    assert framework.get_waiting_pod(pod.key) is None


def test_it_lets_a_waiting_pod_go_once_allowed() -> None:
    framework, pod = waiting_framework(Clock())
    waiting = framework.get_waiting_pod(pod.key)
    assert waiting is not None
    waiting.allow(PERMIT_PLUGIN)
    # Success was signalled first: a later rejection does not undo it.
    waiting.reject(PERMIT_PLUGIN, "too late")
    assert framework.wait_on_permit(pod) is None


def test_it_rejects_a_waiting_pod_at_its_timeout() -> None:
    clock = Clock()
    framework, pod = waiting_framework(clock)
    waiting = framework.get_waiting_pod(pod.key)
    assert waiting is not None and waiting.deadline() == 110.0
    clock.now = 110.0
    got = framework.wait_on_permit(pod)
    message = f"rejected due to timeout after waiting 10s at plugin {PERMIT_PLUGIN}"
    assert same_status(got, rejected(Code.Unschedulable, PERMIT_PLUGIN, message))


BIND_CASES = [
    pytest.param([Code.Success], Code.Success, id="simple success"),
    pytest.param([Code.Skip, Code.Error, Code.Success], Code.Error, id="error on second"),
    pytest.param([Code.Skip, Code.Skip, Code.Skip], Code.Skip, id="all skip"),
    pytest.param([Code.Skip, Code.Success, Code.Error], Code.Success,
                 id="error on third, but not reached"),
    pytest.param([], Code.Success, id="no bind plugin, returns default binder"),
    pytest.param([Code.Unschedulable], Code.Unschedulable, id="invalid status"),
    pytest.param([Code.Error], Code.Error, id="simple error"),
    pytest.param([Code.Skip, Code.Success], Code.Success, id="success on second, returns success"),
    pytest.param([Code.Skip, Code.UnschedulableAndUnresolvable], Code.UnschedulableAndUnresolvable,
                 id="invalid status, returns error"),
    pytest.param([Code.Success, Code.Error], Code.Success, id="error after success status"),
    pytest.param([Code.Error, Code.Success], Code.Error, id="success after error status"),
]  # fmt: skip


@pytest.mark.parametrize(("codes", "want"), BIND_CASES)
def test_it_binds_with_the_first_plugin_that_does_not_skip(codes: list[Code], want: Code) -> None:
    plugins = [FakePlugin(f"bind-{i}", Injected(bind_status=c)) for i, c in enumerate(codes)]
    framework = with_plugins_at("bind", plugins)
    got = framework.run_bind_plugins(CycleState(), make_pod().obj(), "")
    assert (got.code if got else Code.Success) == want
    if want == Code.Error:
        failing = codes.index(Code.Error)
        assert got is not None
        assert got.as_error() == f'running Bind plugin "bind-{failing}": {INJECT_REASON}'


def test_it_runs_pre_filter_plugins_over_the_snapshot_nodes() -> None:
    seen: list[list[str]] = []

    class Recording(FakePlugin):
        def pre_filter(
            self, state: CycleState, pod: Pod, nodes: Sequence[NodeInfo]
        ) -> tuple[PreFilterResult | None, Status | None]:
            seen.append([n.name for n in nodes])
            return None, None

    snapshot = new_snapshot([], [make_node().name("a").obj(), make_node().name("b").obj()])
    framework = with_plugins_at("preFilter", [Recording("r")], handle=Handle(snapshot))
    framework.run_pre_filter_plugins(CycleState(), make_pod().obj())
    assert seen == [["a", "b"]]


# ---------------------------------------------------------------------------------------------
# Plugins as built


def test_it_hands_each_plugin_its_configured_args() -> None:
    received: list[object] = []

    def recording(args: object, handle: object) -> FakePlugin:
        received.append(args)
        return FakePlugin("recording")

    reg = Registry({"recording": recording})
    config = [PluginConfig("recording", Injected(score_res=7))]
    with_queue_sort_and_bind(Plugins(filter=PluginSet([Plugin("recording")])), reg, config)
    assert received == [Injected(score_res=7)]


class PreEnqueuePlugin:
    def name(self) -> str:
        return "preEnqueue-plugin"

    def pre_enqueue(self, pod: Pod) -> Status | None:
        return None


@pytest.mark.parametrize("plugins", [[], [PreEnqueuePlugin()]], ids=["none", "one"])
def test_it_lists_the_pre_enqueue_plugins(plugins: list[PreEnqueuePlugin]) -> None:
    framework = with_plugins_at("preEnqueue", plugins)
    assert framework.pre_enqueue_plugins() == plugins


def test_it_runs_pre_filter_and_its_extensions_once_each() -> None:
    calls: list[str] = []

    class Counting(FakePlugin):
        def pre_filter(
            self, state: CycleState, pod: Pod, nodes: Sequence[NodeInfo]
        ) -> tuple[PreFilterResult | None, Status | None]:
            calls.append(f"{self.plugin_name}.pre_filter")
            return None, None

        def add_pod(
            self, state: CycleState, pod: Pod, pod_info: PodInfo, node_info: NodeInfo
        ) -> Status | None:
            calls.append(f"{self.plugin_name}.add_pod")
            return None

        def remove_pod(
            self, state: CycleState, pod: Pod, pod_info: PodInfo, node_info: NodeInfo
        ) -> Status | None:
            calls.append(f"{self.plugin_name}.remove_pod")
            return None

    class NoExtensions(Counting):
        def pre_filter_extensions(self) -> None:  # type: ignore[override]
            return None

    plugins = [Counting("with-extensions"), NoExtensions("without")]
    framework = with_plugins_at("preFilter", plugins)
    state, pod = CycleState(), make_pod().obj()
    node_info = NodeInfo(make_node().name("n").obj())
    framework.run_pre_filter_plugins(state, pod)
    framework.run_pre_filter_extension_add_pod(state, pod, PodInfo(pod), node_info)
    framework.run_pre_filter_extension_remove_pod(state, pod, PodInfo(pod), node_info)
    assert calls == [
        "with-extensions.pre_filter",
        "without.pre_filter",
        "with-extensions.add_pod",
        "with-extensions.remove_pod",
    ]
