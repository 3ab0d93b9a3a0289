"""One profile's plugins, and every extension point run the way upstream runs it.

Mirrors pkg/scheduler/framework/runtime/framework.go (``frameworkImpl``): plugins are built once
per profile from the registry, placed at the extension points they implement (with multiPoint
expansion), and run in configured order. Timing and statuses are recorded here, around the
plugins, into the cycle's trace (upstream's instrumented plugins and metrics); a plugin never
knows it is traced.

Deliberately different: no goroutines. Filter and Score run node after node in the order
upstream's parallelizer hands out indexes, which is what a run with one worker would do and keeps
every run deterministic. Waiting pods (Permit ``Wait``) are resolved by the scheduling loop
against its clock instead of by timers. ``filters_by_requests`` (not in upstream) tells
preemption's dry run when the cycle's filters can be answered from a node's requests alone.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Hashable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import numpy as np

from schedviz.kube.objects import Pod, PodCondition
from schedviz.scheduler.apis.config.types import EXTENSION_POINTS as EXTENSION_POINTS_V1
from schedviz.scheduler.apis.config.types import KubeSchedulerProfile, PluginSet
from schedviz.scheduler.framework import interface as fw
from schedviz.scheduler.framework.cycle_state import CycleState
from schedviz.scheduler.framework.interface import (
    MAX_NODE_SCORE,
    MAX_TOTAL_SCORE,
    MIN_NODE_SCORE,
    Code,
    NodePluginScores,
    NodeScore,
    PostFilterResult,
    PreFilterResult,
    ScoredNodes,
    Status,
    as_status,
)
from schedviz.scheduler.framework.runtime.registry import Registry
from schedviz.scheduler.framework.types import (
    ActionType,
    ClusterEvent,
    ClusterEventWithHint,
    EventResource,
    NodeInfo,
    NodeToStatus,
    PodInfo,
    QueuedPodInfo,
    Resource,
)
from schedviz.scheduler.trace import CycleTrace, PointRecord

if TYPE_CHECKING:
    from schedviz.scheduler.backend.cache.columns import IntArray, NodeColumns

# Extension point names as they appear in KubeSchedulerConfiguration, with the protocol a plugin
# must implement to sit there.
EXTENSION_POINTS: dict[str, type[Any]] = {
    "preEnqueue": fw.PreEnqueuePlugin,
    "queueSort": fw.QueueSortPlugin,
    "preFilter": fw.PreFilterPlugin,
    "filter": fw.FilterPlugin,
    "postFilter": fw.PostFilterPlugin,
    "preScore": fw.PreScorePlugin,
    "score": fw.ScorePlugin,
    "reserve": fw.ReservePlugin,
    "permit": fw.PermitPlugin,
    "preBind": fw.PreBindPlugin,
    "bind": fw.BindPlugin,
    "postBind": fw.PostBindPlugin,
}
_INTERFACE_NAMES = {
    "preEnqueue": "PreEnqueuePlugin",
    "queueSort": "QueueSortPlugin",
    "preFilter": "PreFilterPlugin",
    "filter": "FilterPlugin",
    "postFilter": "PostFilterPlugin",
    "preScore": "PreScorePlugin",
    "score": "ScorePlugin",
    "reserve": "ReservePlugin",
    "permit": "PermitPlugin",
    "preBind": "PreBindPlugin",
    "bind": "BindPlugin",
    "postBind": "PostBindPlugin",
}
# The order upstream's getExtensionPoints builds them in, which decides the first error reported.
_BUILD_ORDER = (
    "preFilter",
    "filter",
    "postFilter",
    "reserve",
    "preScore",
    "score",
    "preBind",
    "bind",
    "postBind",
    "permit",
    "preEnqueue",
    "queueSort",
)
# Points whose plugins can reject a pod, and so must say which events could requeue it.
_REJECTING_POINTS = ("preEnqueue", "preFilter", "filter", "reserve", "permit")
# Upstream's maxTimeout for Permit.
MAX_PERMIT_TIMEOUT = 15 * 60.0

WILDCARD_EVENT = ClusterEvent(EventResource.WildCard, ActionType.All)

# A skip set and the (name, filter, filter_columns or None) of each filter plugin it leaves to run.
_ActiveFilters = tuple[
    set[str],
    list[
        tuple[
            str,
            Callable[[CycleState, Pod, NodeInfo], Status | None],
            Callable[..., Any] | None,
        ]
    ],
]


class FrameworkError(ValueError):
    """The profile cannot be built (unknown plugin, wrong extension point, ...)."""


@dataclass(slots=True)
class WaitingPod:
    """A pod held at Permit (upstream ``waitingPod``): each Wait-ing plugin must allow it."""

    pod: Pod
    node_name: str
    pending_plugins: dict[str, float]  # plugin -> deadline (clock seconds)
    timeouts: dict[str, float] = field(default_factory=dict)  # plugin -> seconds asked for
    rejection: Status | None = None

    def allow(self, plugin: str) -> None:
        self.pending_plugins.pop(plugin, None)

    def reject(self, plugin: str, message: str) -> None:
        # Once every plugin allowed the pod, success is already signalled and wins.
        if self.rejection is None and self.pending_plugins:
            self.rejection = Status(Code.Unschedulable, (message,), plugin)

    def allowed(self) -> bool:
        return self.rejection is None and not self.pending_plugins

    def deadline(self) -> float:
        return min(self.pending_plugins.values(), default=0.0)


class Framework:
    """A profile's plugins, ready to run (upstream ``frameworkImpl``)."""

    def __init__(
        self,
        profile: KubeSchedulerProfile,
        registry: Registry,
        handle: Any,
        *,
        clock_now: Callable[[], float] = time.monotonic,
    ) -> None:
        self.profile_name = profile.scheduler_name
        self.percentage_of_nodes_to_score = profile.percentage_of_nodes_to_score
        self.handle = handle
        self.clock_now = clock_now
        self.plugins_map: dict[str, Any] = {}
        self.points: dict[str, list[Any]] = {point: [] for point in EXTENSION_POINTS}
        self.score_plugin_weight: dict[str, int] = {}
        self.waiting_pods: dict[str, WaitingPod] = {}
        # The trace of the cycle being run, set by the scheduler; None runs untraced.
        self.trace: CycleTrace | None = None
        # The filter plugins for the skip set of the cycle being run.
        self._filters_for_skip: _ActiveFilters | None = None
        # Wall seconds each Filter plugin has spent since the scheduler last cleared it (once
        # per cycle, before its Filter walk): upstream's per-plugin plugin_execution_duration.
        self.filter_durations: dict[str, float] = {}
        self._build(profile, registry)

    # ------------------------------------------------------------------ construction

    def _build(self, profile: KubeSchedulerProfile, registry: Registry) -> None:
        args: dict[str, Any] = {}
        for config in profile.plugin_config:
            if config.name in args:
                raise FrameworkError(f"repeated config for plugin {config.name}")
            args[config.name] = config.args
        needed: list[str] = []
        for point in EXTENSION_POINTS_V1:
            for ref in profile.plugins.get(point).enabled:
                if ref.name not in needed:
                    needed.append(ref.name)
        for name in needed:
            # A name the registry lacks fails below, at the first point that enables it.
            factory = registry.get(name)
            if factory is None:
                continue
            try:
                plugin = factory(args.get(name), self)
            except Exception as error:
                raise FrameworkError(f'initializing plugin "{name}": {error}') from error
            self.plugins_map[name] = plugin
        for point in _BUILD_ORDER:
            protocol = EXTENSION_POINTS[point]
            plugin_set = _plugin_set(profile, point)
            names: list[str] = []
            for ref in plugin_set.enabled:
                plugin = self.plugins_map.get(ref.name)
                if plugin is None:
                    raise FrameworkError(f'{_INTERFACE_NAMES[point]} "{ref.name}" does not exist')
                if not isinstance(plugin, protocol):
                    raise FrameworkError(
                        f'plugin "{ref.name}" does not extend {_INTERFACE_NAMES[point]} plugin'
                    )
                if ref.name in names:
                    raise FrameworkError(
                        f'plugin "{ref.name}" already registered as "{_INTERFACE_NAMES[point]}"'
                    )
                names.append(ref.name)
            self.points[point] = [self.plugins_map[n] for n in names]
        self._expand_multi_point(profile)
        name = profile.scheduler_name
        if len(self.points["queueSort"]) != 1:
            raise FrameworkError(
                "only one queue sort plugin required for profile with scheduler name "
                f'"{name}", but got {len(self.points["queueSort"])}'
            )
        if not self.points["bind"]:
            raise FrameworkError(
                f'at least one bind plugin is needed for profile with scheduler name "{name}"'
            )
        self._set_score_weights(profile)
        # Plugin.name() may differ from the configured name: such a plugin has no weight.
        for plugin in self.points["score"]:
            if not self.score_plugin_weight.get(plugin.name()):
                raise FrameworkError(
                    f'score plugin "{plugin.name()}" is not configured with weight'
                )

    def _expand_multi_point(self, profile: KubeSchedulerProfile) -> None:
        multi = profile.plugins.multi_point
        for point in _BUILD_ORDER:
            protocol = EXTENSION_POINTS[point]
            plugin_set = _plugin_set(profile, point)
            disabled = {ref.name for ref in plugin_set.disabled}
            if "*" in disabled:
                continue
            enabled = [ref.name for ref in plugin_set.enabled]
            multi_enabled: list[str] = []
            overrides: list[str] = []
            for ref in multi.enabled:
                plugin = self.plugins_map.get(ref.name)
                if plugin is None:
                    raise FrameworkError(f'{_INTERFACE_NAMES[point]} "{ref.name}" does not exist')
                if not isinstance(plugin, protocol) or ref.name in disabled:
                    continue
                if ref.name in enabled:
                    # Explicitly configured at this point: that setting wins.
                    overrides.append(ref.name)
                    continue
                if ref.name in multi_enabled:
                    raise FrameworkError(
                        f'plugin "{ref.name}" already registered as "{_INTERFACE_NAMES[point]}"'
                    )
                multi_enabled.append(ref.name)
            ordered = [n for n in enabled if n in overrides]
            ordered += multi_enabled
            ordered += [n for n in enabled if n not in overrides]
            self.points[point] = [self.plugins_map[n] for n in ordered]

    def _set_score_weights(self, profile: KubeSchedulerProfile) -> None:
        refs = [*profile.plugins.score.enabled, *profile.plugins.multi_point.enabled]
        total = 0
        for ref in refs:
            if not isinstance(self.plugins_map.get(ref.name), fw.ScorePlugin):
                continue
            if ref.name in self.score_plugin_weight:
                continue
            weight = ref.weight or 1
            self.score_plugin_weight[ref.name] = weight
            if weight * MAX_NODE_SCORE > MAX_TOTAL_SCORE - total:
                raise FrameworkError("total score of Score plugins could overflow")
            total += weight * MAX_NODE_SCORE

    # ------------------------------------------------------------------ Handle

    def snapshot_shared_lister(self) -> fw.NodeInfoLister:
        return self.handle.snapshot_shared_lister()  # type: ignore[no-any-return]

    @property
    def objects(self) -> fw.ObjectLister:
        return self.handle.objects  # type: ignore[no-any-return]

    def bind_pod(self, pod: Pod, node_name: str) -> Status | None:
        return self.handle.bind_pod(pod, node_name)  # type: ignore[no-any-return]

    def nominated_pods_for_node(self, node_name: str) -> list[PodInfo]:
        return self.handle.nominated_pods_for_node(node_name)  # type: ignore[no-any-return]

    def get_waiting_pod(self, pod_key: str) -> WaitingPod | None:
        return self.waiting_pods.get(pod_key)

    def iterate_over_waiting_pods(self) -> list[WaitingPod]:
        return list(self.waiting_pods.values())

    def reject_waiting_pod(self, pod_key: str) -> bool:
        waiting = self.waiting_pods.get(pod_key)
        if waiting is None:
            return False
        waiting.reject("", "removed")
        return True

    def delete_pod(self, pod: Pod) -> None:
        """Deletes a pod through the API (preemption victims); LookupError when it is gone."""
        self.handle.delete_pod(pod)

    def record_event(self, type_: str, reason: str, pod: Pod, message: str) -> object:
        """Records an Event about ``pod`` (upstream ``EventRecorder().Eventf``)."""
        return self.handle.record_event(type_, reason, pod, message)

    def run_async(self, work: Callable[[], None]) -> None:
        """Runs ``work`` as a goroutine would: after the current scheduling cycle."""
        self.handle.run_async(work)

    def activate(self, pods: Mapping[str, Pod]) -> None:
        """Moves the pods to activeQ (upstream ``Handle.Activate``)."""
        self.handle.activate(pods)

    def patch_pod_status(
        self, pod: Pod, condition: PodCondition | None, nominated_node_name: str | None
    ) -> Pod | None:
        """Patches a condition and/or nominatedNodeName (None leaves it); None: pod gone."""
        return self.handle.store.update_pod_status(  # type: ignore[no-any-return]
            pod, condition, nominated_node_name
        )

    # ------------------------------------------------------------------ queries

    def plugin_names(self, point: str) -> list[str]:
        return [plugin.name() for plugin in self.points[point]]

    def has_filter_plugins(self) -> bool:
        return bool(self.points["filter"])

    def has_post_filter_plugins(self) -> bool:
        return bool(self.points["postFilter"])

    def has_score_plugins(self) -> bool:
        return bool(self.points["score"])

    def queue_sort_less(self) -> Callable[[QueuedPodInfo, QueuedPodInfo], bool]:
        return self.points["queueSort"][0].less  # type: ignore[no-any-return]

    def pre_enqueue_plugins(self) -> list[fw.PreEnqueuePlugin]:
        return list(self.points["preEnqueue"])

    def enqueue_extensions(self) -> list[tuple[str, list[ClusterEventWithHint]]]:
        """Each rejecting plugin's registered events; plugins that register none get them all."""
        seen: list[str] = []
        for point in _REJECTING_POINTS:
            for plugin in self.points[point]:
                if plugin.name() not in seen:
                    seen.append(plugin.name())
        result: list[tuple[str, list[ClusterEventWithHint]]] = []
        for name in seen:
            plugin = self.plugins_map[name]
            if isinstance(plugin, fw.EnqueueExtensions):
                result.append((name, plugin.events_to_register()))
            else:
                result.append((name, [ClusterEventWithHint(WILDCARD_EVENT)]))
        return result

    # ------------------------------------------------------------------ recording

    def _record(
        self,
        point: str,
        plugin: str,
        status: Status | None,
        started: float,
        **extra: Any,
    ) -> None:
        trace = self.trace
        if trace is not None:
            trace.points.append(
                PointRecord(
                    point=point,
                    plugin=plugin,
                    code=Code.Success if status is None else status.code,
                    reasons=() if status is None else status.reasons,
                    duration=time.perf_counter() - started,
                    **extra,
                )
            )

    # ------------------------------------------------------------------ PreEnqueue

    def run_pre_enqueue_plugins(self, pod: Pod) -> Status | None:
        for plugin in self.points["preEnqueue"]:
            status: Status | None = plugin.pre_enqueue(pod)
            if status is not None and not status.is_success():
                return status.with_plugin(plugin.name())
        return None

    # ------------------------------------------------------------------ PreFilter

    def run_pre_filter_plugins(
        self, state: CycleState, pod: Pod
    ) -> tuple[PreFilterResult | None, Status | None, set[str]]:
        # Set before the plugins run and filled in place, so that the plugins skipped so far are
        # recorded whichever way this returns (upstream sets them in a defer).
        skip: set[str] = set()
        state.skip_filter_plugins = skip
        nodes = self.snapshot_shared_lister().list()
        result: PreFilterResult | None = None
        plugins_with_nodes: set[str] = set()
        return_status: Status | None = None
        for plugin in self.points["preFilter"]:
            name = plugin.name()
            started = time.perf_counter()
            try:
                plugin_result, status = plugin.pre_filter(state, pod, nodes)
            except Exception as error:  # a plugin bug is an Error status, as a Go panic is not
                plugin_result, status = None, as_status(error)
            self._record("PreFilter", name, status, started)
            if status is not None and status.is_skip():
                skip.add(name)
                continue
            if status is not None and not status.is_success():
                status = status.with_plugin(name)
                if status.code == Code.UnschedulableAndUnresolvable:
                    return None, status, set()
                if status.code == Code.Unschedulable:
                    return_status = status
                    continue
                message = f'running PreFilter plugin "{name}": {status.as_error()}'
                return None, as_status(message).with_plugin(name), set()
            if plugin_result is not None and not plugin_result.all_nodes():
                plugins_with_nodes.add(name)
            result = plugin_result if result is None else result.merge(plugin_result)
            if result is not None and not result.all_nodes() and not result.node_names:
                listed = sorted(plugins_with_nodes)
                if len(listed) == 1:
                    message = f"node(s) didn't satisfy plugin {listed[0]}"
                else:
                    message = f"node(s) didn't satisfy plugin(s) {_go_list(listed)} simultaneously"
                return (
                    result,
                    Status(Code.UnschedulableAndUnresolvable, (message,)),
                    plugins_with_nodes,
                )
        return result, return_status, plugins_with_nodes

    def run_pre_filter_extension_add_pod(
        self, state: CycleState, pod: Pod, pod_info_to_add: PodInfo, node_info: NodeInfo
    ) -> Status | None:
        for plugin in self.points["preFilter"]:
            extensions = plugin.pre_filter_extensions()
            if extensions is None or plugin.name() in state.skip_filter_plugins:
                continue
            status = extensions.add_pod(state, pod, pod_info_to_add, node_info)
            if status is not None and not status.is_success():
                return as_status(
                    f'running AddPod on PreFilter plugin "{plugin.name()}": {status.as_error()}'
                )
        return None

    def run_pre_filter_extension_remove_pod(
        self, state: CycleState, pod: Pod, pod_info_to_remove: PodInfo, node_info: NodeInfo
    ) -> Status | None:
        for plugin in self.points["preFilter"]:
            extensions = plugin.pre_filter_extensions()
            if extensions is None or plugin.name() in state.skip_filter_plugins:
                continue
            status = extensions.remove_pod(state, pod, pod_info_to_remove, node_info)
            if status is not None and not status.is_success():
                return as_status(
                    f'running RemovePod on PreFilter plugin "{plugin.name()}": {status.as_error()}'
                )
        return None

    # ------------------------------------------------------------------ Filter

    def run_filter_plugins(self, state: CycleState, pod: Pod, node_info: NodeInfo) -> Status | None:
        active = self._filters_for_skip
        if active is None or active[0] is not state.skip_filter_plugins:
            active = self._active_filters(state)
        durations = self.filter_durations
        clock = time.perf_counter
        for name, filter_node, _ in active[1]:
            status: Status | None
            began = clock()
            try:
                status = filter_node(state, pod, node_info)
            except Exception as error:
                status = as_status(error)
            durations[name] = durations.get(name, 0.0) + clock() - began
            if status is not None and status.code != Code.Success:
                return _filter_rejection(name, status)
        return None

    def run_filter_plugins_on_rows(
        self,
        state: CycleState,
        pod: Pod,
        columns: NodeColumns,
        rows: IntArray,
        nodes: Sequence[NodeInfo],
    ) -> list[Status | None]:
        """``run_filter_plugins`` for many nodes at once (``nodes``, at ``rows`` of ``columns``).
        Not in upstream; the statuses are exactly those ``run_filter_plugins`` gives node by node.

        Plugin after plugin, each over the nodes no earlier plugin rejected: a column-wise
        plugin tells which nodes it lets through and which it rejects alike, and ``filter`` is
        asked about the rest and about one node of each such class (every node, for a plugin
        without columns). Filters only read the cycle state, so the order of the calls changes
        no answer.
        """
        active = self._filters_for_skip
        if active is None or active[0] is not state.skip_filter_plugins:
            active = self._active_filters(state)
        results: list[Status | None] = [None] * len(nodes)
        alive = np.arange(len(nodes), dtype=np.int64)
        durations = self.filter_durations
        clock = time.perf_counter
        for name, filter_node, filter_columns in active[1]:
            if not alive.size:
                break
            began = clock()
            rejected_some = self._filter_rows(
                name, filter_node, filter_columns, state, pod, columns, rows, nodes, alive, results
            )
            durations[name] = durations.get(name, 0.0) + clock() - began
            if rejected_some:
                alive = alive[[results[k] is None for k in alive.tolist()]]
        return results

    def _filter_rows(
        self,
        name: str,
        filter_node: Callable[[CycleState, Pod, NodeInfo], Status | None],
        filter_columns: Any,
        state: CycleState,
        pod: Pod,
        columns: NodeColumns,
        rows: IntArray,
        nodes: Sequence[NodeInfo],
        alive: IntArray,
        results: list[Status | None],
    ) -> bool:
        """One Filter plugin over the ``alive`` nodes, its rejections written to ``results``;
        False when it let every node through without asking."""
        classes = filter_columns(state, pod, columns, rows[alive]) if filter_columns else None
        if classes is None:
            ask = alive.tolist()
        else:
            ask = alive[classes == fw.FILTER_ASK].tolist()
            shared = classes > fw.FILTER_PASSES
            if shared.any():
                members, of_class = alive[shared], classes[shared]
                ask += self._filter_classes(
                    name, filter_node, state, pod, nodes, members, of_class, results
                )
            elif not ask:
                return False  # every node passed
        for k in ask:
            status: Status | None
            try:
                status = filter_node(state, pod, nodes[k])
            except Exception as error:
                status = as_status(error)
            if status is not None and status.code != Code.Success:
                results[k] = _filter_rejection(name, status)
        return True

    @staticmethod
    def _filter_classes(
        name: str,
        filter_node: Callable[[CycleState, Pod, NodeInfo], Status | None],
        state: CycleState,
        pod: Pod,
        nodes: Sequence[NodeInfo],
        members: IntArray,
        classes: IntArray,
        results: list[Status | None],
    ) -> list[int]:
        """Asks ``filter`` about one node of each class and gives its rejection to the whole
        class; returns the nodes to ask one by one (a class whose node passed, against the
        plugin's word)."""
        ask: list[int] = []
        order = np.argsort(classes, kind="stable")
        bounds = np.flatnonzero(np.diff(classes[order])) + 1
        for group in np.split(members[order], bounds):
            first = int(group[0])
            status: Status | None
            try:
                status = filter_node(state, pod, nodes[first])
            except Exception as error:
                status = as_status(error)
            if status is None or status.code == Code.Success:
                ask += group[1:].tolist()
                continue
            rejection = _filter_rejection(name, status)
            for k in group.tolist():
                results[k] = rejection
        return ask

    def _active_filters(self, state: CycleState) -> _ActiveFilters:
        """The filter plugins the cycle runs (PreFilter's Skips left out), worked out once per
        cycle rather than once per node: the skip set is replaced, never changed, between
        cycles."""
        skip = state.skip_filter_plugins
        active = [
            (p.name(), p.filter, getattr(p, "filter_columns", None))
            for p in self.points["filter"]
            if p.name() not in skip
        ]
        self._filters_for_skip = (skip, active)
        return self._filters_for_skip

    def filters_by_requests(self, state: CycleState, pod: Pod) -> fw.RequestsCheck | None:
        """Whether the cycle's filters would still pass a node they passed once it holds other
        pods, from the node's allocatable and those pods' total requests and number alone; None
        when that cannot be told this way. Not in upstream (preemption's dry run uses it).

        It can when every Filter plugin the cycle runs (PreFilter's Skips left out) reads of a
        node either the node alone (``NodeOnlyFilterPlugin``: same verdict whatever its pods)
        or only its pods' count and total requests (``RequestsFilterPlugin``), and no PreFilter
        plugin the cycle runs has AddPod/RemovePod extensions (so adding or removing a pod
        leaves the cycle state as it is). The answer is then the requests plugins' answers.
        """
        plugins = self._requests_filters(state)
        if plugins is None:
            return None
        checks = [plugin.filter_requests_check(state, pod) for plugin in plugins]
        if len(checks) == 1:
            return checks[0]

        def passes(allocatable: Resource, requested: Resource, pods: int) -> bool:
            return all(check(allocatable, requested, pods) for check in checks)

        return passes

    def filters_by_requests_key(self, state: CycleState, pod: Pod) -> Hashable | None:
        """A value equal for two cycles whose ``filters_by_requests`` checks answer alike (the
        requests plugins' ``filter_requests_key``, by plugin); None when there is no check or a
        requests plugin does not say. Not in upstream (preemption's dry run keeps its answers
        by it)."""
        plugins = self._requests_filters(state)
        if plugins is None:
            return None
        keys: list[tuple[str, Hashable]] = []
        for plugin in plugins:
            key_of = getattr(plugin, "filter_requests_key", None)
            key = key_of(state, pod) if key_of is not None else None
            if key is None:
                return None
            keys.append((plugin.name(), key))
        return tuple(keys)

    def _requests_filters(self, state: CycleState) -> list[fw.RequestsFilterPlugin] | None:
        """The Filter plugins of the cycle that read the node's pods' requests and count (see
        ``filters_by_requests``); None when one reads more or a PreFilter extension runs."""
        skip = state.skip_filter_plugins
        for plugin in self.points["preFilter"]:
            if plugin.name() not in skip and plugin.pre_filter_extensions() is not None:
                return None
        plugins: list[fw.RequestsFilterPlugin] = []
        for plugin in self.points["filter"]:
            if plugin.name() in skip or getattr(plugin, "filter_reads_node_only", False) is True:
                continue
            if getattr(plugin, "filter_requests_check", None) is None:
                return None
            plugins.append(plugin)
        return plugins

    def node_only_filters(
        self, state: CycleState
    ) -> Callable[[CycleState, Pod, NodeInfo], Status | None]:
        """``run_filter_plugins`` over only the Filter plugins the cycle runs that read of a
        node the node alone (``NodeOnlyFilterPlugin``), in their order: the cycle's verdict on
        a node the other plugins pass. Not in upstream (preemption's dry run uses it)."""
        filters = [
            (plugin.name(), plugin.filter)
            for plugin in self.points["filter"]
            if plugin.name() not in state.skip_filter_plugins
            and getattr(plugin, "filter_reads_node_only", False) is True
        ]

        def run(state: CycleState, pod: Pod, node_info: NodeInfo) -> Status | None:
            for name, filter_node in filters:
                status: Status | None
                try:
                    status = filter_node(state, pod, node_info)
                except Exception as error:
                    status = as_status(error)
                if status is not None and status.code != Code.Success:
                    return _filter_rejection(name, status)
            return None

        return run

    def run_filter_plugins_with_nominated_pods(
        self, state: CycleState, pod: Pod, node_info: NodeInfo
    ) -> Status | None:
        """Filters twice when higher-or-equal priority pods are nominated to the node: once
        counting them as running, then, if that passes, once without them."""
        added = self._add_ge_nominated_pods(pod, state, node_info)
        if isinstance(added, Status):
            return added
        pods_added, state_with, node_info_with = added
        status = self.run_filter_plugins(state_with, pod, node_info_with)
        if not pods_added or (status is not None and status.code != Code.Success):
            return status
        return self.run_filter_plugins(state, pod, node_info)

    def _add_ge_nominated_pods(
        self, pod: Pod, state: CycleState, node_info: NodeInfo
    ) -> tuple[bool, CycleState, NodeInfo] | Status:
        if node_info.node is None:
            return False, state, node_info
        nominated = self.nominated_pods_for_node(node_info.node.name)
        if not nominated:
            return False, state, node_info
        node_info_out = node_info.snapshot()
        state_out = state.clone()
        added = False
        priority = pod.effective_priority
        for pod_info in nominated:
            if pod_info.pod.effective_priority >= priority and pod_info.key != pod.key:
                node_info_out.add_pod_info(pod_info)
                status = self.run_pre_filter_extension_add_pod(
                    state_out, pod, pod_info, node_info_out
                )
                if status is not None and not status.is_success():
                    return status
                added = True
        return added, state_out, node_info_out

    # ------------------------------------------------------------------ PostFilter

    def run_post_filter_plugins(
        self, state: CycleState, pod: Pod, node_to_status: NodeToStatus
    ) -> tuple[PostFilterResult | None, Status | None]:
        result: PostFilterResult | None = None
        reasons: list[str] = []
        rejector = ""
        for plugin in self.points["postFilter"]:
            name = plugin.name()
            started = time.perf_counter()
            try:
                plugin_result, status = plugin.post_filter(state, pod, node_to_status)
            except Exception as error:
                plugin_result, status = None, as_status(error)
            self._record("PostFilter", name, status, started)
            if status is None or status.is_success():
                return plugin_result, status
            if status.code == Code.UnschedulableAndUnresolvable:
                return plugin_result, status.with_plugin(name)
            if not status.is_rejected():
                return None, as_status(status.as_error()).with_plugin(name)
            if (
                plugin_result is not None
                and plugin_result.nominating_info is not None
                and plugin_result.nominating_info.mode_override
            ):
                result = plugin_result
            reasons.extend(status.reasons)
            if not rejector:
                rejector = name
        return result, Status(Code.Unschedulable, tuple(reasons), rejector)

    # ------------------------------------------------------------------ PreScore / Score

    def run_pre_score_plugins(
        self, state: CycleState, pod: Pod, nodes: Sequence[NodeInfo]
    ) -> Status | None:
        skip: set[str] = set()
        state.skip_score_plugins = skip  # filled in place: kept when a plugin fails
        for plugin in self.points["preScore"]:
            name = plugin.name()
            started = time.perf_counter()
            try:
                status = plugin.pre_score(state, pod, nodes)
            except Exception as error:
                status = as_status(error)
            self._record("PreScore", name, status, started)
            if status is not None and status.is_skip():
                skip.add(name)
                continue
            if status is not None and not status.is_success():
                return as_status(f'running PreScore plugin "{name}": {status.as_error()}')
        return None

    def run_score_plugins(
        self,
        state: CycleState,
        pod: Pod,
        nodes: Sequence[NodeInfo],
        columns: NodeColumns | None = None,
        rows: IntArray | None = None,
        *,
        names: list[str] | None = None,
    ) -> tuple[Sequence[NodePluginScores], Status | None]:
        """Upstream's three passes: Score every node, then NormalizeScore, then weights.

        Upstream's parallelizer takes node after node, each plugin in turn. Scores do not depend
        on the order, so each plugin here scores all nodes in one tight loop (and is timed once);
        when plugins fail, the error reported is the one node-major order meets first. Scores
        are kept as plain columns of integers, one per plugin, and become upstream's
        NodeScore list only for a plugin that normalizes them; the normalized columns are
        checked, weighted and summed as one matrix. Given the nodes' ``rows`` of
        ``columns``, a column-wise plugin scores them all at once (not in upstream). ``names``:
        the nodes' names when the caller has them already.
        """
        plugins = [p for p in self.points["score"] if p.name() not in state.skip_score_plugins]
        node_names = (
            names
            if names is not None
            else columns.names_at(rows)
            if columns is not None and rows is not None
            else [node_info.name for node_info in nodes]
        )
        elapsed: dict[str, float] = {}
        # Each plugin's scores: a column-wise plugin's array, the others' list.
        plugin_scores: dict[str, IntArray | list[int]] = {}
        # (node index, plugin index, plugin name, status) of each plugin's first failure.
        failures: list[tuple[int, int, str, Status]] = []
        for plugin_index, plugin in enumerate(plugins):
            name = plugin.name()
            begin = time.perf_counter()
            column = None
            if columns is not None and rows is not None:
                score_columns = getattr(plugin, "score_columns", None)
                if score_columns is not None:
                    column = score_columns(state, pod, columns, rows)
            if column is not None:
                scores, status = column, None
            else:
                scores, status = _score_nodes(plugin, state, pod, nodes)
            elapsed[name] = time.perf_counter() - begin
            if status is not None:
                failures.append((len(scores), plugin_index, name, status))
            plugin_scores[name] = scores
        if failures:
            _, _, name, status = min(failures, key=lambda failure: failure[:2])
            self._record("Score", name, status, time.perf_counter() - elapsed[name])
            return [], as_status(
                f'running Score plugins: plugin "{name}" failed with: {status.as_error()}'
            )
        trace = self.trace
        # The raw scores as lists (the trace keeps them); normalizing puts a new list in
        # plugin_scores, so these stay the raw scores.
        raw = {name: _as_list(scores) for name, scores in plugin_scores.items()}
        # The plugins whose scores were normalized (into a new list each).
        normalized_by: set[str] = set()
        for plugin in plugins:
            name = plugin.name()
            extensions = plugin.score_extensions()
            if extensions is None:
                continue
            normalized_by.add(name)
            begin = time.perf_counter()
            # A column normalizer (not upstream) gives the same scores without NodeScores.
            normalize_column = getattr(extensions, "normalize_score_column", None)
            if normalize_column is not None:
                plugin_scores[name] = normalize_column(state, pod, raw[name])
                elapsed[name] += time.perf_counter() - begin
                continue
            node_scores = [NodeScore(n, s) for n, s in zip(node_names, raw[name], strict=True)]
            status = extensions.normalize_score(state, pod, node_scores)
            plugin_scores[name] = [node_score.score for node_score in node_scores]
            elapsed[name] += time.perf_counter() - begin
            if status is not None and not status.is_success():
                self._record("Score", name, status, time.perf_counter() - elapsed[name])
                return [], as_status(
                    f'running Normalize on Score plugins: plugin "{name}" failed with: '
                    f"{status.as_error()}"
                )
        names = [plugin.name() for plugin in plugins]
        # The normalized scores, a row per plugin, a column per node.
        normalized = np.array(
            [plugin_scores[name] for name in names] or np.zeros((0, len(nodes))), dtype=np.int64
        ).reshape(len(names), len(nodes))
        invalid = (normalized < MIN_NODE_SCORE) | (normalized > MAX_NODE_SCORE)
        if invalid.any():
            # The first plugin (in order) with a score out of range, and its first such score.
            row = int(invalid.any(axis=1).argmax())
            name, score = names[row], int(normalized[row, int(invalid[row].argmax())])
            message = (
                f'applying score defaultWeights on Score plugins: plugin "{name}" returns '
                f"an invalid score {score}, it should in the range of "
                f"[{MIN_NODE_SCORE}, {MAX_NODE_SCORE}] after normalizing"
            )
            self._record("Score", name, as_status(message), time.perf_counter() - elapsed[name])
            return [], as_status(message)
        weights = [self.score_plugin_weight[name] for name in names]
        weighted = normalized * np.array(weights, dtype=np.int64).reshape(-1, 1)
        all_scores = ScoredNodes(
            node_names, names, _WeightedRows(weighted), weighted.sum(axis=0).tolist()
        )
        for name, weight in zip(names, weights, strict=True):
            self._record("Score", name, None, time.perf_counter() - elapsed[name], calls=len(nodes))
            if trace is not None:
                trace.score_plugins.append((name, weight))
                trace.raw_scores.append(raw[name])
                trace.normalized_scores.append(
                    _as_list(plugin_scores[name]) if name in normalized_by else raw[name]
                )
        return all_scores, None

    # ------------------------------------------------------------------ Reserve / Permit

    def run_reserve_plugins_reserve(
        self, state: CycleState, pod: Pod, node_name: str
    ) -> Status | None:
        for plugin in self.points["reserve"]:
            name = plugin.name()
            started = time.perf_counter()
            status: Status | None
            try:
                status = plugin.reserve(state, pod, node_name)
            except Exception as error:
                status = as_status(error)
            self._record("Reserve", name, status, started)
            if status is not None and not status.is_success():
                if status.is_rejected():
                    return status.with_plugin(name)
                return as_status(
                    f'running Reserve plugin "{name}": {status.as_error()}'
                ).with_plugin(name)
        return None

    def run_reserve_plugins_unreserve(self, state: CycleState, pod: Pod, node_name: str) -> None:
        # Unreserve runs in the reverse order of Reserve.
        for plugin in reversed(self.points["reserve"]):
            started = time.perf_counter()
            plugin.unreserve(state, pod, node_name)
            self._record("Unreserve", plugin.name(), None, started)

    def run_permit_plugins(self, state: CycleState, pod: Pod, node_name: str) -> Status | None:
        """Success, a rejection, or Wait (the pod is then held in ``waiting_pods``)."""
        pending: dict[str, float] = {}
        timeouts: dict[str, float] = {}
        for plugin in self.points["permit"]:
            name = plugin.name()
            started = time.perf_counter()
            status: Status | None
            timeout: float
            try:
                status, timeout = plugin.permit(state, pod, node_name)
            except Exception as error:
                status, timeout = as_status(error), 0.0
            self._record("Permit", name, status, started)
            if status is None or status.is_success():
                continue
            if status.is_rejected():
                return status.with_plugin(name)
            if status.is_wait():
                timeouts[name] = min(timeout, MAX_PERMIT_TIMEOUT)
                pending[name] = self.clock_now() + timeouts[name]
                continue
            return as_status(f'running Permit plugin "{name}": {status.as_error()}').with_plugin(
                name
            )
        if pending:
            self.waiting_pods[pod.key] = WaitingPod(pod, node_name, pending, timeouts)
            message = f'one or more plugins asked to wait and no plugin rejected pod "{pod.name}"'
            return Status(Code.Wait, (message,))
        return None

    def wait_on_permit(self, pod: Pod) -> Status | None:
        """The outcome for a waiting pod once it is allowed, rejected or timed out."""
        waiting = self.waiting_pods.pop(pod.key, None)
        if waiting is None:
            return None
        if waiting.rejection is not None:
            return waiting.rejection
        if waiting.pending_plugins:
            plugin = min(waiting.pending_plugins, key=waiting.pending_plugins.__getitem__)
            waited = go_duration(waiting.timeouts.get(plugin, 0.0))
            message = f"rejected due to timeout after waiting {waited} at plugin {plugin}"
            return Status(Code.Unschedulable, (message,), plugin)
        return None

    # ------------------------------------------------------------------ binding

    def run_pre_bind_plugins(self, state: CycleState, pod: Pod, node_name: str) -> Status | None:
        for plugin in self.points["preBind"]:
            name = plugin.name()
            if name in state.skip_pre_bind_plugins:
                continue
            started = time.perf_counter()
            status: Status | None
            try:
                status = plugin.pre_bind(state, pod, node_name)
            except Exception as error:
                status = as_status(error)
            self._record("PreBind", name, status, started)
            if status is not None and not status.is_success():
                if status.is_rejected():
                    return status.with_plugin(name)
                return as_status(
                    f'running PreBind plugin "{name}": {status.as_error()}'
                ).with_plugin(name)
        return None

    def run_bind_plugins(self, state: CycleState, pod: Pod, node_name: str) -> Status | None:
        status: Status | None = None
        for plugin in self.points["bind"]:
            name = plugin.name()
            started = time.perf_counter()
            try:
                status = plugin.bind(state, pod, node_name)
            except Exception as error:
                status = as_status(error)
            self._record("Bind", name, status, started)
            if status is not None and status.is_skip():
                continue
            if status is not None and not status.is_success():
                if status.is_rejected():
                    return status.with_plugin(name)
                return as_status(f'running Bind plugin "{name}": {status.as_error()}').with_plugin(
                    name
                )
            return status
        return status

    def run_post_bind_plugins(self, state: CycleState, pod: Pod, node_name: str) -> None:
        for plugin in self.points["postBind"]:
            started = time.perf_counter()
            plugin.post_bind(state, pod, node_name)
            self._record("PostBind", plugin.name(), None, started)


def _filter_rejection(name: str, status: Status) -> Status:
    """A filter plugin's failing status as the framework reports it: named after the plugin,
    and an error wrapped with the plugin's name."""
    if not status.is_rejected():
        status = as_status(f'running "{name}" filter plugin: {status.as_error()}')
    return status.with_plugin(name)


def _as_list(scores: IntArray | list[int]) -> list[int]:
    return scores.tolist() if isinstance(scores, np.ndarray) else scores


class _WeightedRows(Sequence[tuple[int, ...]]):
    """Each node's weighted scores, a plugin after another, read from the weighted matrix (a
    row per plugin) only for the nodes whose NodePluginScores are asked for: the scheduler
    reads the totals alone (``ScoredNodes``)."""

    __slots__ = ("_weighted",)

    def __init__(self, weighted: IntArray) -> None:
        self._weighted = weighted

    def __len__(self) -> int:
        return int(self._weighted.shape[1])

    def __getitem__(self, index: Any) -> Any:
        if isinstance(index, slice):
            return [self[i] for i in range(*index.indices(len(self)))]
        return tuple(self._weighted[:, index].tolist())


def _score_nodes(
    plugin: fw.ScorePlugin, state: CycleState, pod: Pod, nodes: Sequence[NodeInfo]
) -> tuple[list[int], Status | None]:
    """One plugin's score of each node, in order, up to its first failure (then with it)."""
    scores: list[int] = []
    append = scores.append
    # fw.NodeScorerPlugin, tested by attribute: isinstance() on a protocol is slow.
    node_scorer: Callable[[CycleState, Pod], fw.NodeScorer | Status] | None = getattr(
        plugin, "node_scorer", None
    )
    if node_scorer is not None:
        try:
            score_node = node_scorer(state, pod)
        except Exception as error:
            score_node = as_status(error)
        if isinstance(score_node, Status):
            # Score would fail on the first node already.
            return scores, score_node if nodes else None
        try:
            for node_info in nodes:
                append(score_node(node_info))
        except Exception as error:
            return scores, as_status(error)
        return scores, None
    score = plugin.score
    for node_info in nodes:
        try:
            value, status = score(state, pod, node_info)
        except Exception as error:
            return scores, as_status(error)
        if status is not None and status.code != Code.Success:
            return scores, status
        append(value)
    return scores, None


def _plugin_set(profile: KubeSchedulerProfile, point: str) -> PluginSet:
    return profile.plugins.get(point)


def _go_list(items: Sequence[str]) -> str:
    """How Go's %v prints a []string: ``[a b c]``."""
    return "[" + " ".join(items) + "]"


def go_list(items: Sequence[str]) -> str:
    return _go_list(items)


def go_duration(seconds: float) -> str:
    """How Go prints a time.Duration: ``10s``, ``1.5s``, ``15m0s``, ``1h0m0s``."""
    if seconds == 0:
        return "0s"
    if seconds < 1:
        return f"{seconds * 1000:g}ms"
    hours, rest = divmod(seconds, 3600)
    minutes, secs = divmod(rest, 60)
    text = f"{secs:g}s"
    if hours or minutes:
        text = f"{int(minutes)}m" + text
    if hours:
        text = f"{int(hours)}h" + text
    return text


ProfileMap = Mapping[str, Framework]
