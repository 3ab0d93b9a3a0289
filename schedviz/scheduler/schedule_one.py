"""One scheduling cycle and its binding cycle.

Mirrors pkg/scheduler/schedule_one.go: pop a pod, find the nodes that fit (PreFilter, the
nominated node first, Filter over an adaptive number of nodes from a rotating start index, then
the filtering extenders), score them (PreScore, Score, NormalizeScore, weights, the extenders'
Prioritize), pick the host (reservoir sampling among the top scores), assume it in the cache,
Reserve, Permit, then bind (PreBind, a binding extender or the Bind plugins, PostBind).
Failures go back to the queue as upstream's ``handleSchedulingFailure`` does, with the pod's
PodScheduled condition and a FailedScheduling event carrying the same message. The pods plugins
put into the cycle's ``PodsToActivate`` move to activeQ after a successful scheduling cycle and
again after a successful binding cycle. Goroutines a plugin starts (async preemption) run right
after the cycle, before the next pop (``run_async_work``).

Deliberately different: the binding cycle runs right after the scheduling cycle instead of in a
goroutine (a pod held at Permit resumes when the loop sees it allowed, rejected or timed out), and
Filter/Score walk nodes one by one in the order upstream's parallelizer would hand them out.
"""

from __future__ import annotations

import random
import time
from collections import Counter
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, replace
from itertools import chain, compress, repeat
from operator import attrgetter, eq, is_not, itemgetter
from typing import TYPE_CHECKING, Any, cast

import numpy as np

from schedviz.kube.objects import Pod, PodCondition
from schedviz.scheduler import debugger as points
from schedviz.scheduler.debugger import DebugCycle, Debugger
from schedviz.scheduler.extender import (
    EXTENDER_NAME,
    MAX_EXTENDER_PRIORITY,
    ExtenderError,
    HTTPExtender,
)
from schedviz.scheduler.framework.cycle_state import (
    PODS_TO_ACTIVATE_KEY,
    CycleState,
    PodsToActivate,
)
from schedviz.scheduler.framework.interface import (
    MAX_NODE_SCORE,
    Code,
    NodePluginScores,
    NominatingInfo,
    ScoredNodes,
    Status,
    as_status,
)
from schedviz.scheduler.framework.runtime.framework import Framework, go_list
from schedviz.scheduler.framework.types import (
    EVENT_ASSIGNED_POD_DELETE,
    Diagnosis,
    FitError,
    NodeInfo,
    NodeToStatus,
    QueuedPodInfo,
)
from schedviz.scheduler.trace import (
    QUEUE_DETAIL_LIMIT,
    RESULT_ERROR,
    RESULT_SCHEDULED,
    RESULT_UNSCHEDULABLE,
    RESULT_WAITING,
    CycleTrace,
    FilterColumns,
)

if TYPE_CHECKING:
    from schedviz.scheduler.backend.cache.cache import Cache
    from schedviz.scheduler.backend.cache.columns import IntArray
    from schedviz.scheduler.backend.cache.snapshot import Snapshot
    from schedviz.scheduler.backend.queue.scheduling_queue import PriorityQueue
    from schedviz.scheduler.clock import Clock
    from schedviz.scheduler.store import ClusterStore, InformerView

# schedule_one.go constants.
MIN_FEASIBLE_NODES_TO_FIND = 100
MIN_FEASIBLE_NODES_PERCENTAGE_TO_FIND = 5
NUMBER_OF_HIGHEST_SCORED_NODES_TO_REPORT = 3
ERR_NO_NODES_AVAILABLE = "no nodes available to schedule pods"
POD_REASON_UNSCHEDULABLE = "Unschedulable"
POD_REASON_SCHEDULER_ERROR = "SchedulerError"
# An event message is cut to this many bytes (truncateMessage in schedule_one.go).
MAX_EVENT_MESSAGE = 1024
# The fewest nodes a column-wise filter batch after the first holds (``next_filter_batch``).
MIN_FILTER_BATCH = 32


class NoNodesAvailableError(Exception):
    def __str__(self) -> str:
        return ERR_NO_NODES_AVAILABLE


@dataclass(slots=True)
class ScheduleResult:
    suggested_host: str = ""
    evaluated_nodes: int = 0
    feasible_nodes: int = 0
    nominating_info: NominatingInfo | None = None


CLEAR_NOMINATED_NODE = NominatingInfo("", mode_override=True)

# A pod held at Permit: its framework, cycle state, assumed pod, result and trace.
WaitingCycle = tuple[Framework, CycleState, QueuedPodInfo, ScheduleResult, CycleTrace]


def num_feasible_nodes_to_find(percentage: int, num_all_nodes: int) -> int:
    """How many feasible nodes to look for before scoring (adaptive when percentage is 0)."""
    if num_all_nodes < MIN_FEASIBLE_NODES_TO_FIND:
        return num_all_nodes
    if percentage == 0:
        percentage = 50 - num_all_nodes // 125
        if percentage < MIN_FEASIBLE_NODES_PERCENTAGE_TO_FIND:
            percentage = MIN_FEASIBLE_NODES_PERCENTAGE_TO_FIND
    num_nodes = num_all_nodes * percentage // 100
    if num_nodes < MIN_FEASIBLE_NODES_TO_FIND:
        return MIN_FEASIBLE_NODES_TO_FIND
    return num_nodes


_name_of = attrgetter("name")
_plugin_of = attrgetter("plugin")
_second = itemgetter(1)
# Statuses after which the filter walk does not simply record a rejection.
_PASS_OR_ERROR = (Code.Success, Code.Error)


def select_host(scores: Sequence[NodePluginScores], rng: random.Random) -> tuple[str, list[str]]:
    """The host with the highest total; ties broken by reservoir sampling. Returns the tie set."""
    if not scores:
        raise ValueError("empty priorityList")
    return select_host_of([s.name for s in scores], [s.total_score for s in scores], rng)


def select_host_of(
    names: Sequence[str], totals: Sequence[int], rng: random.Random
) -> tuple[str, list[str]]:
    """``select_host`` given the nodes' names and totals in order.

    Upstream keeps a node with probability 1/count as count ties go by, which is
    ``rng.randrange(count) == 0``; the draw is written out here as CPython's randrange(n) makes
    it (``Random._randbelow_with_getrandbits``: bit_length bits, again while too large), since
    a large cluster can tie on hundreds of nodes per cycle. test_schedule_one checks the two
    agree.
    """
    positions = tie_positions(totals)
    return names[positions[_reservoir_pick(len(positions), rng)]], [names[i] for i in positions]


def tie_positions(totals: Sequence[int]) -> list[int]:
    """The positions of the highest totals, in order."""
    return list(compress(range(len(totals)), map(eq, repeat(max(totals)), totals)))


def _reservoir_pick(count: int, rng: random.Random) -> int:
    """Which of ``count`` ties ``select_host_of`` keeps (see there)."""
    selected = 0
    getrandbits = rng.getrandbits
    for n in range(2, count + 1):
        k = n.bit_length()
        draw = getrandbits(k)
        while draw >= n:
            draw = getrandbits(k)
        if draw == 0:
            selected = n - 1
    return selected


def next_filter_batch(batch: int, to_find: int, done: int, passed: int) -> int:
    """How many nodes the filter walk's next batch holds, after ``done`` nodes of which
    ``passed`` were feasible, the last batch holding ``batch``: what is still wanted at the
    pass rate so far, a quarter more, not less than a batch's fixed cost is worth; twice the
    last while none passed. So a few rejected nodes in the first batch do not cost a second
    batch twice its size. Not in upstream, whose walk is node by node."""
    if not passed:
        return batch * 2
    wanted = max(to_find - passed, 1)
    return min(batch * 2, max(MIN_FILTER_BATCH, -(-wanted * done * 5 // (passed * 4))))


def truncate_message(message: str) -> str:
    encoded = message.encode()
    if len(encoded) <= MAX_EVENT_MESSAGE:
        return message
    suffix = " ..."
    return encoded[: MAX_EVENT_MESSAGE - len(suffix)].decode(errors="ignore") + suffix


class ScheduleOne:
    """The scheduling and binding cycles; mixed into ``Scheduler``, which owns this state."""

    queue: PriorityQueue
    cache: Cache
    snapshot: Snapshot
    store: ClusterStore
    informers: InformerView
    async_work: list[Callable[[], None]]
    # The PostFilter result of the running cycle, re-read once its goroutines have run.
    _preemption_details: object | None = None
    # The last column-wise filter walk's feasible list, their rows and the node order they are
    # rows of: prioritize_nodes takes the rows from here when it scores that very list.
    _feasible_rows: tuple[list[NodeInfo], list[int], tuple[str, ...]] | None = None
    clock: Clock
    rng: random.Random
    profiles: dict[str, Framework]
    extenders: list[HTTPExtender]
    capture_queue: bool
    cycle_count: int
    next_start_node_index: int
    percentage_of_nodes_to_score: int
    queue_was_empty: bool
    waiting: list[WaitingCycle]
    cluster_generation: int
    # The cluster generation each pod's last scheduling attempt started from.
    attempt_generations: dict[str, int]
    _emit: Callable[[CycleTrace], None] | None
    # Attached for a cycle by whoever steps through it (None: no stops, one check per point).
    debugger: Debugger | None
    _debugging: DebugCycle | None

    def record_event(self, type_: str, reason: str, pod: Pod, message: str) -> dict[str, str]:
        event = self.store.record_event(type_, reason, pod, message)
        return {
            "type": event.type,
            "reason": event.reason,
            "object": event.object,
            "message": event.message,
        }

    def emit(self, trace: CycleTrace) -> None:
        if self._emit is not None:
            self._emit(trace)

    def _trace_into(self, framework: Framework, trace: CycleTrace | None) -> None:
        """Points the framework and the extenders at the cycle they now record (None: off)."""
        framework.trace = trace
        for extender in self.extenders:
            extender.trace = trace

    def schedule_one(self) -> CycleTrace | None:
        queue_state = (
            self.queue.snapshot_state(limit=QUEUE_DETAIL_LIMIT) if self.capture_queue else {}
        )
        pod_info = self.queue.pop()
        self.queue_was_empty = pod_info is None
        if pod_info is None:
            return None
        pod = pod_info.pod
        framework = self.profiles.get(pod.scheduler_name)
        if framework is None:
            # Not ours: upstream logs "Error occurred" and drops it.
            self.queue.done(pod.key)
            return None
        if self._skip_pod_schedule(pod):
            self.queue.done(pod.key)
            return None
        self.cycle_count += 1
        self.attempt_generations[pod.key] = self.cluster_generation
        started = time.perf_counter()
        trace = CycleTrace(
            cycle=self.cycle_count,
            pod=pod.key,
            profile=framework.profile_name,
            attempt=pod_info.attempts,
            time=self.clock.now(),
            wall_time=time.time(),
            queue=queue_state,
            # The scheduler's nextStartNodeIndex, whether or not this cycle walks the nodes.
            start_index=self.next_start_node_index,
        )
        self._trace_into(framework, trace)
        state = CycleState()
        # Filled by plugins, emptied into activeQ after a successful cycle (and binding).
        pods_to_activate = PodsToActivate()
        state.write(PODS_TO_ACTIVATE_KEY, pods_to_activate)
        if self.debugger is not None:
            self._debugging = DebugCycle(self.debugger, framework, state, trace)
        try:
            self._cycle(framework, state, pod_info, trace)
            self.run_async_work(trace)
            if self._debugging is not None:
                self._debugging.before(points.END, pod, ())
            return trace
        finally:
            self._debugging = None
            self._trace_into(framework, None)
            if self._preemption_details is not None:
                # The cycle stopped before its goroutines ran: what PostFilter decided.
                trace.preemption = _preemption_json(self._preemption_details, trace.nominated_node)
                self._preemption_details = None
            trace.duration = time.perf_counter() - started
            self.emit(trace)

    def _cycle(
        self, framework: Framework, state: CycleState, pod_info: QueuedPodInfo, trace: CycleTrace
    ) -> None:
        """The scheduling cycle, then at once the binding cycle unless the pod waits at Permit."""
        pod = pod_info.pod
        result, assumed_pod_info, status = self.scheduling_cycle(framework, state, pod_info, trace)
        if status is not None and not status.is_success():
            self._finish_trace(trace, status, result)
            self.handle_scheduling_failure(
                framework, pod_info, status, result.nominating_info, trace
            )
            return
        assert assumed_pod_info is not None
        trace.selected_node = result.suggested_host
        if framework.get_waiting_pod(pod.key) is not None:
            trace.result = RESULT_WAITING
            # Upstream's Wait status text; the outcome replaces it when the wait ends.
            trace.message = (
                f'one or more plugins asked to wait and no plugin rejected pod "{pod.name}"'
            )
            self.waiting.append((framework, state, assumed_pod_info, result, trace))
            return
        self.run_binding_cycle(framework, state, assumed_pod_info, result, trace)

    def run_async_work(self, trace: CycleTrace) -> None:
        """The goroutines the cycle started (async preemption), in the order they started, now
        that the cycle is over; the trace's preemption record gets what they did."""
        while self.async_work:
            work = self.async_work.pop(0)
            work()
        details = self._preemption_details
        if details is not None:
            trace.preemption = _preemption_json(details, trace.nominated_node)
            self._preemption_details = None

    def _skip_pod_schedule(self, pod: Pod) -> bool:
        if pod.deletion_timestamp:
            message = f"skip schedule deleting pod: {pod.namespace}/{pod.name}"
            self.record_event("Warning", "FailedScheduling", pod, message)
            return True
        return self.cache.is_assumed_pod(pod)

    def _finish_trace(self, trace: CycleTrace, status: Status, result: ScheduleResult) -> None:
        trace.result = RESULT_UNSCHEDULABLE if status.is_rejected() else RESULT_ERROR
        trace.message = status.as_error()
        trace.feasible_nodes = trace.feasible_nodes or result.feasible_nodes

    # ------------------------------------------------------------------ scheduling cycle

    def scheduling_cycle(
        self,
        framework: Framework,
        state: CycleState,
        pod_info: QueuedPodInfo,
        trace: CycleTrace,
    ) -> tuple[ScheduleResult, QueuedPodInfo | None, Status | None]:
        pod = pod_info.pod
        try:
            result = self.schedule_pod(framework, state, pod, trace)
        except NoNodesAvailableError as error:
            return (
                ScheduleResult(nominating_info=CLEAR_NOMINATED_NODE),
                pod_info,
                Status(Code.UnschedulableAndUnresolvable, (str(error),), error=str(error)),
            )
        except FitError as fit_error:
            if not framework.has_post_filter_plugins():
                return (
                    ScheduleResult(nominating_info=CLEAR_NOMINATED_NODE),
                    pod_info,
                    _fit_status(Code.Unschedulable, fit_error),
                )
            if self._debugging is not None:
                self._debugging.before(
                    points.POST_FILTER, pod, framework.plugin_names("postFilter")
                )
            post_result, post_status = framework.run_post_filter_plugins(
                state, pod, fit_error.diagnosis.node_to_status
            )
            fit_error.diagnosis.post_filter_msg = post_status.message() if post_status else ""
            nominating = post_result.nominating_info if post_result is not None else None
            if nominating is not None and nominating.nominated_node_name:
                trace.nominated_node = nominating.nominated_node_name
            if post_result is None or self._debugging is not None:
                # Otherwise made once, after the goroutines ran (``run_async_work``): the
                # record of 500 candidates is not built twice.
                trace.preemption = _preemption_json(post_result, trace.nominated_node)
            self._preemption_details = post_result
            return (
                ScheduleResult(nominating_info=nominating),
                pod_info,
                _fit_status(Code.Unschedulable, fit_error),
            )
        except _SchedulingError as error:
            return ScheduleResult(nominating_info=CLEAR_NOMINATED_NODE), pod_info, error.status

        host = result.suggested_host
        assumed_pod = replace(pod, node_name=host)
        assumed_info = replace(pod_info)
        assumed_info.pod_info = type(pod_info.pod_info)(assumed_pod)
        try:
            self.cache.assume_pod(assumed_pod)
        except Exception as error:
            return (
                ScheduleResult(nominating_info=CLEAR_NOMINATED_NODE),
                assumed_info,
                as_status(error),
            )
        # Assumed, the pod counts on its node; as a nominated pod it would count twice.
        self.queue.delete_nominated_pod_if_exists(assumed_pod)
        if self._debugging is not None:
            self._debugging.before(points.RESERVE, assumed_pod, framework.plugin_names("reserve"))
        status = framework.run_reserve_plugins_reserve(state, assumed_pod, host)
        if status is not None and not status.is_success():
            framework.run_reserve_plugins_unreserve(state, assumed_pod, host)
            self.cache.forget_pod(assumed_pod)
            return (
                ScheduleResult(nominating_info=CLEAR_NOMINATED_NODE),
                assumed_info,
                (_single_node_rejection(pod, host, status) if status.is_rejected() else status),
            )
        if self._debugging is not None:
            self._debugging.before(points.PERMIT, assumed_pod, framework.plugin_names("permit"))
        status = framework.run_permit_plugins(state, assumed_pod, host)
        if status is not None and not status.is_wait() and not status.is_success():
            framework.run_reserve_plugins_unreserve(state, assumed_pod, host)
            self.cache.forget_pod(assumed_pod)
            return (
                ScheduleResult(nominating_info=CLEAR_NOMINATED_NODE),
                assumed_info,
                (_single_node_rejection(pod, host, status) if status.is_rejected() else status),
            )
        # At the end of a successful scheduling cycle, move up the pods plugins asked for.
        self._activate_pods(state, clear=True)
        return result, assumed_info, None

    def _activate_pods(self, state: CycleState, *, clear: bool) -> None:
        try:
            pods_to_activate = state.read_as(PODS_TO_ACTIVATE_KEY, PodsToActivate)
        except (KeyError, TypeError):
            return
        if pods_to_activate.map:
            self.queue.activate(pods_to_activate.map)
            if clear:
                pods_to_activate.map = {}

    def schedule_pod(
        self, framework: Framework, state: CycleState, pod: Pod, trace: CycleTrace
    ) -> ScheduleResult:
        self.cache.update_snapshot(self.snapshot)
        trace.all_nodes = self.snapshot.node_names
        if self.snapshot.num_nodes() == 0:
            raise NoNodesAvailableError()
        feasible, diagnosis = self.find_nodes_that_fit_pod(framework, state, pod, trace)
        trace.feasible_nodes = len(feasible)
        trace.evaluated_nodes = len(feasible) + len(diagnosis.node_to_status)
        if not feasible:
            raise FitError(pod, self.snapshot.num_nodes(), diagnosis)
        if len(feasible) == 1:
            # One feasible node: no need to score.
            trace.evaluated_nodes = 1 + len(diagnosis.node_to_status)
            return ScheduleResult(feasible[0].name, 1 + len(diagnosis.node_to_status), 1)
        scores = self.prioritize_nodes(framework, state, pod, feasible, trace)
        # prioritize_nodes leaves the nodes' names and totals in the trace, in order.
        if not scores:
            host, ties = select_host(scores, self.rng)  # raises: nothing was scored
        else:
            positions = tie_positions(trace.totals)
            names = trace.score_nodes
            ties = [names[i] for i in positions]
            host = ties[_reservoir_pick(len(positions), self.rng)]
            score_rows = trace.score_rows
            if score_rows is not None:
                trace.tie_rows = [score_rows[i] for i in positions]
        trace.tie_set = ties
        return ScheduleResult(host, len(feasible) + len(diagnosis.node_to_status), len(feasible))

    def find_nodes_that_fit_pod(
        self, framework: Framework, state: CycleState, pod: Pod, trace: CycleTrace
    ) -> tuple[list[NodeInfo], Diagnosis]:
        diagnosis = Diagnosis()
        all_nodes = self.snapshot.list()
        if self._debugging is not None:
            self._debugging.before(points.PRE_FILTER, pod, framework.plugin_names("preFilter"))
        pre_result, status, unscheduled_plugins = framework.run_pre_filter_plugins(state, pod)
        diagnosis.unschedulable_plugins = set(unscheduled_plugins)
        trace.skipped_filter_plugins = tuple(
            n for n in framework.plugin_names("filter") if n in state.skip_filter_plugins
        )
        if status is not None and not status.is_success():
            if not status.is_rejected():
                raise _SchedulingError(status)
            diagnosis.node_to_status.absent_nodes_status = status
            diagnosis.pre_filter_msg = status.message()
            _add_plugin_status(diagnosis, status)
            trace.pre_filter_status = status
            if pre_result is not None and pre_result.node_names is not None:
                trace.pre_filter_nodes = pre_result.node_names
            return [], diagnosis

        if self._debugging is not None and framework.has_filter_plugins():
            self._debugging.before(
                points.FILTER,
                pod,
                [n for n in framework.plugin_names("filter") if n not in state.skip_filter_plugins],
            )
        if pre_result is not None and pre_result.node_names is not None:
            # Recorded before the nominated node is tried: PreFilter narrowed this cycle even
            # when that node fits.
            trace.pre_filter_nodes = pre_result.node_names
        if pod.nominated_node_name:
            trace.nominated_node_tried = pod.nominated_node_name
            nominated = self.snapshot.get(pod.nominated_node_name)
            if nominated is not None:
                try:
                    fits = self.find_nodes_that_pass_filters(
                        framework, state, pod, diagnosis, [nominated], trace
                    )
                    fits = self.find_nodes_that_pass_extenders(
                        pod, fits, diagnosis.node_to_status, trace
                    )
                except _SchedulingError:
                    # Upstream logs "Evaluation failed on nominated node" and tries every node.
                    fits = []
                if fits:
                    return fits, diagnosis

        nodes: Sequence[NodeInfo] = all_nodes
        if pre_result is not None and pre_result.node_names is not None:
            wanted = pre_result.node_names
            nodes = [n for n in all_nodes if n.name in wanted]
            # Upstream's diagnosis.UnschedulablePlugins is RunPreFilterPlugins' own set, so the
            # plugin that rejected the nominated node above is named here too.
            cut = Status(
                Code.UnschedulableAndUnresolvable,
                (
                    "node(s) didn't satisfy plugin(s) "
                    f"{go_list(sorted(diagnosis.unschedulable_plugins))}",
                ),
            )
            diagnosis.node_to_status.absent_nodes_status = cut
            trace.pre_filter_status = cut
        feasible: list[NodeInfo] = []
        try:
            feasible = self.find_nodes_that_pass_filters(
                framework, state, pod, diagnosis, nodes, trace
            )
        except _SchedulingError as error:
            feasible = error.feasible
            raise
        finally:
            # Moved even after a filter error, so that every node keeps its chance to be searched.
            processed = len(feasible) + len(diagnosis.node_to_status)
            self.next_start_node_index = (self.next_start_node_index + processed) % len(all_nodes)
        after_extenders = self.find_nodes_that_pass_extenders(
            pod, feasible, diagnosis.node_to_status, trace
        )
        if len(after_extenders) != len(feasible):
            # Extenders have no EnqueueExtensions: any cluster event may requeue the pod.
            diagnosis.unschedulable_plugins.add(EXTENDER_NAME)
        return after_extenders, diagnosis

    def has_scoring(self, framework: Framework) -> bool:
        return framework.has_score_plugins() or any(e.is_prioritizer() for e in self.extenders)

    def has_extender_filters(self) -> bool:
        return any(e.is_filter() for e in self.extenders)

    def find_nodes_that_pass_extenders(
        self,
        pod: Pod,
        feasible: list[NodeInfo],
        statuses: NodeToStatus,
        trace: CycleTrace,
    ) -> list[NodeInfo]:
        """Each interested extender in turn narrows the nodes the filter plugins let through."""
        for extender in self.extenders:
            if not feasible:
                break
            if not extender.is_interested(pod):
                continue
            try:
                result = extender.filter(pod, feasible)
            except ExtenderError as error:
                if extender.is_ignorable():
                    continue
                raise _SchedulingError(as_status(str(error)), feasible) from None
            for name, message in result.failed_and_unresolvable.items():
                self._set_extender_status(
                    statuses, trace, extender, name, Code.UnschedulableAndUnresolvable, message
                )
            for name, message in result.failed.items():
                if name in result.failed_and_unresolvable:
                    continue  # FailedAndUnresolvableNodes takes precedence
                self._set_extender_status(
                    statuses, trace, extender, name, Code.Unschedulable, message
                )
            feasible = result.nodes
        return feasible

    @staticmethod
    def _set_extender_status(
        statuses: NodeToStatus,
        trace: CycleTrace,
        extender: HTTPExtender,
        node_name: str,
        code: Code,
        message: str,
    ) -> None:
        status = Status(code, (message,))
        statuses.set(node_name, status)
        # Upstream's status names no plugin; the trace names the extender that set it.
        trace.extender_results[node_name] = status.with_plugin(extender.name())

    def find_nodes_that_pass_filters(
        self,
        framework: Framework,
        state: CycleState,
        pod: Pod,
        diagnosis: Diagnosis,
        nodes: Sequence[NodeInfo],
        trace: CycleTrace,
    ) -> list[NodeInfo]:
        num_all = len(nodes)
        percentage = framework.percentage_of_nodes_to_score
        if percentage is None:
            percentage = self.percentage_of_nodes_to_score
        to_find = num_feasible_nodes_to_find(percentage, num_all)
        if not self.has_extender_filters() and not self.has_scoring(framework):
            # Nothing would narrow or rank the nodes, so the first feasible one will do.
            to_find = 1
        start = self.next_start_node_index
        filter_names = tuple(
            n for n in framework.plugin_names("filter") if n not in state.skip_filter_plugins
        )
        trace.filter_plugins = filter_names
        position = {name: index for index, name in enumerate(filter_names)}
        if not framework.has_filter_plugins():
            feasible = [nodes[(start + i) % num_all] for i in range(to_find)]
            for node_info in feasible:
                trace.filter_results[node_info.name] = (0, None)
            return feasible
        feasible = []
        rejected: list[tuple[str, Status]] = []
        error: _SchedulingError | None = None
        plugin_count = len(filter_names)
        passed_all = (plugin_count, None)  # a feasible node's result, shared (immutable)
        framework.filter_durations.clear()
        # A column-wise walk records its outcomes as columns of rows (``FilterColumns``), made
        # into the per-node dict only if read; feasible_rows follows feasible.
        walk = self._filter_walk(framework, state, pod, nodes, start, to_find, feasible.__len__)
        first = next(walk, None)
        pending: FilterColumns | None = None
        feasible_rows: list[int] = []
        if (
            first is not None
            and first[2] is not None
            and self.snapshot.node_names is trace.all_nodes
            and not trace.filter_results
        ):
            pending = FilterColumns(trace.all_nodes)
            trace.set_filter_columns(pending)
        results = trace.filter_results if pending is None else {}

        def take_passed(
            batch: Sequence[NodeInfo], batch_rows: Sequence[int] | None, begin: int, end: int
        ) -> None:
            """Nodes ``begin:end`` of the batch passed every filter: they are feasible."""
            taken = batch[begin:end]
            feasible.extend(taken)
            if pending is not None and batch_rows is not None:
                taken_rows = batch_rows[begin : begin + len(taken)]
                feasible_rows.extend(taken_rows)
                pending.rows.extend(taken_rows)
                pending.passed.extend(repeat(plugin_count, len(taken_rows)))
                pending.statuses.extend(repeat(None, len(taken_rows)))
            else:
                results.update(zip(map(_name_of, taken), repeat(passed_all)))

        for batch, statuses, batch_rows in chain((first,) if first else (), walk):
            wanted = to_find - len(feasible)
            if not any(map(is_not, statuses, repeat(None))):
                # Every node of the batch passed: take what is still wanted.
                take_passed(batch, batch_rows, 0, wanted)
                if len(feasible) >= to_find:
                    break
                continue
            distinct = dict(zip(map(id, statuses), statuses, strict=True))
            if all(
                status is not None and status.code not in _PASS_OR_ERROR
                for status in distinct.values()
            ):
                # Every node of the batch was rejected; its nodes share a few status objects
                # (a class of nodes a plugin rejected alike shares one), so each outcome is
                # worked out once per status.
                names = list(map(_name_of, batch))
                rejected.extend(zip(names, cast("list[Status]", statuses), strict=True))
                passed_of = {
                    key: position.get(status.plugin, 0)
                    for key, status in distinct.items()
                    if status is not None
                }
                if pending is not None and batch_rows is not None:
                    pending.rows.extend(batch_rows)
                    pending.passed.extend(map(passed_of.__getitem__, map(id, statuses)))
                    pending.statuses.extend(statuses)
                    continue
                outcome = {key: (passed_of[key], distinct[key]) for key in passed_of}
                results.update(zip(names, map(outcome.__getitem__, map(id, statuses)), strict=True))
                continue
            # The nodes between two rejections passed: taken a run at a time, as many as wanted.
            failed = [
                k
                for k, status in enumerate(statuses)
                if status is not None and status.code != Code.Success
            ]
            previous = 0
            for k in (*failed, len(batch)):
                if k > previous:
                    wanted = to_find - len(feasible)
                    take_passed(batch, batch_rows, previous, min(k, previous + wanted))
                    if len(feasible) >= to_find:
                        break
                if k == len(batch):
                    break
                previous = k + 1
                node_info, status = batch[k], cast("Status", statuses[k])
                if status.code == Code.Error:
                    # The walk stops; what it saw so far is still recorded, as upstream does.
                    error = _SchedulingError(status, feasible)
                    break
                rejected.append((node_info.name, status))
                if pending is not None and batch_rows is not None:
                    pending.rows.append(batch_rows[k])
                    pending.passed.append(position.get(status.plugin, 0))
                    pending.statuses.append(status)
                else:
                    results[node_info.name] = (position.get(status.plugin, 0), status)
            if error is not None or len(feasible) >= to_find:
                break
        self._feasible_rows = (
            (feasible, feasible_rows, trace.all_nodes) if pending is not None else None
        )
        diagnosis.node_to_status.update(rejected)
        rejections = list(map(_second, rejected))
        # Each distinct status once, in the order of first appearance (as node by node).
        for status in dict(zip(map(id, rejections), rejections, strict=True)).values():
            _add_plugin_status(diagnosis, status)
        self._record_filter_point(framework, trace, rejected)
        if error is not None:
            raise error
        if num_all < MIN_FEASIBLE_NODES_TO_FIND:
            self._record_unevaluated(framework, state, pod, nodes, trace, position)
        return feasible

    def _filter_walk(
        self,
        framework: Framework,
        state: CycleState,
        pod: Pod,
        nodes: Sequence[NodeInfo],
        start: int,
        to_find: int,
        found: Callable[[], int],
    ) -> Iterator[tuple[list[NodeInfo], list[Status | None], list[int] | None]]:
        """The nodes from ``start`` on, round the list, in batches, each with the filters'
        verdicts on its nodes and the nodes' rows in the snapshot's columns (None when the
        walk is not column-wise).

        Upstream filters node after node (16 at a time) until it has found enough. Here the
        nodes are filtered in batches, column-wise where plugins can
        (``run_filter_plugins_on_rows``), and the nodes pods are nominated to one by one with
        those pods: the caller stops where upstream stops and forgets the nodes filtered past
        that point, so the outcome is the same. Without columns, one node at a time. The
        first batch is as many nodes as are wanted, the next ones by ``next_filter_batch``
        from the feasible nodes ``found`` so far.
        """
        num_all = len(nodes)
        columns = self.snapshot.node_columns()
        nominated = self.queue.nominator.nominated_pods
        all_rows = columns.rows(nodes) if columns.exact else None
        if all_rows is None:
            # Upstream asks for each node which pods are nominated to it.
            run_filters = (
                framework.run_filter_plugins_with_nominated_pods
                if nominated
                else framework.run_filter_plugins
            )
            for i in range(num_all):
                node_info = nodes[(start + i) % num_all]
                yield [node_info], [run_filters(state, pod, node_info)], None
            return
        # The nodes pods are nominated to are filtered one by one, with those pods, as
        # upstream does; on every other node that is the plain filter run.
        index = columns.index
        nominated_rows = np.fromiter(
            (index[name] for name in nominated if name in index), dtype=np.int64
        )
        done = 0
        batch = max(to_find, 1)
        while done < num_all:
            size = min(batch, num_all - done)
            order = np.arange(start + done, start + done + size, dtype=np.int64) % num_all
            batch_nodes = list(map(nodes.__getitem__, order.tolist()))
            rows = all_rows[order]
            batch_rows = rows.tolist()
            is_nominated = np.isin(rows, nominated_rows) if len(nominated_rows) else None
            if is_nominated is None or not is_nominated.any():
                statuses = framework.run_filter_plugins_on_rows(
                    state, pod, columns, rows, batch_nodes
                )
            else:
                # Each node is filtered once: the others column-wise, these with their pods.
                statuses = [None] * size
                others = np.flatnonzero(~is_nominated)
                if others.size:
                    other_nodes = list(map(batch_nodes.__getitem__, others.tolist()))
                    answers = framework.run_filter_plugins_on_rows(
                        state, pod, columns, rows[others], other_nodes
                    )
                    for k, status in zip(others.tolist(), answers, strict=True):
                        statuses[k] = status
                for k in np.flatnonzero(is_nominated).tolist():
                    statuses[k] = framework.run_filter_plugins_with_nominated_pods(
                        state, pod, batch_nodes[k]
                    )
            yield batch_nodes, statuses, batch_rows
            done += size
            batch = next_filter_batch(batch, to_find, done, found())

    def _record_unevaluated(
        self,
        framework: Framework,
        state: CycleState,
        pod: Pod,
        nodes: Sequence[NodeInfo],
        trace: CycleTrace,
        position: dict[str, int],
    ) -> None:
        """What the filters would say on the nodes the walk never reached, for the trace only.

        The scheduler's decision is already made and does not use these. Filters read the
        cycle state and never write it, so asking them changes nothing. Kept to small clusters
        (fewer nodes than upstream ever stops early on), where the walk stops only because
        nothing scores, so every trace there is complete.
        """
        for node_info in nodes:
            if node_info.name in trace.filter_results:
                continue
            status = framework.run_filter_plugins_with_nominated_pods(state, pod, node_info)
            if status is None or status.code == Code.Success:
                trace.unevaluated_filter_results[node_info.name] = (len(trace.filter_plugins), None)
            else:
                passed = position.get(status.plugin, 0)
                trace.unevaluated_filter_results[node_info.name] = (passed, status)

    def _record_filter_point(
        self,
        framework: Framework,
        trace: CycleTrace,
        rejected: list[tuple[str, Status]],
    ) -> None:
        """One Filter record per plugin: the nodes it rejected, over the nodes evaluated, and
        the time it took itself (the framework measures each plugin)."""
        from schedviz.scheduler.trace import PointRecord

        durations = framework.filter_durations
        per_plugin = Counter(map(_plugin_of, map(_second, rejected)))
        evaluated = trace.filtered_count()
        for name in trace.filter_plugins:
            count = per_plugin.get(name, 0)
            trace.points.append(
                PointRecord(
                    point="Filter",
                    plugin=name,
                    code=Code.Unschedulable if count else Code.Success,
                    duration=durations.get(name, 0.0),
                    calls=evaluated,
                    rejected=count,
                )
            )

    def prioritize_nodes(
        self,
        framework: Framework,
        state: CycleState,
        pod: Pod,
        nodes: list[NodeInfo],
        trace: CycleTrace,
    ) -> Sequence[NodePluginScores]:
        columns = self.snapshot.node_columns()
        rows: IntArray | None = None
        kept = self._feasible_rows
        if (
            kept is not None
            and kept[0] is nodes
            and len(kept[1]) == len(nodes)
            and kept[2] is columns.names
            and columns.exact
        ):
            # The filter walk's rows of these very nodes.
            score_rows = kept[1]
            rows = np.array(score_rows, dtype=np.int64)
            trace.score_nodes = list(map(columns.names.__getitem__, score_rows))
            if columns.names is trace.all_nodes:
                trace.score_rows = score_rows
        else:
            rows = columns.rows(nodes) if columns.exact else None
            trace.score_nodes = (
                columns.names_at(rows) if rows is not None else [n.name for n in nodes]
            )
        if not self.extenders and not framework.has_score_plugins():
            trace.totals = [1] * len(nodes)
            return [NodePluginScores(n.name, [], 1) for n in nodes]
        if self._debugging is not None:
            self._debugging.before(points.PRE_SCORE, pod, framework.plugin_names("preScore"))
        status = framework.run_pre_score_plugins(state, pod, nodes)
        if status is not None and not status.is_success():
            raise _SchedulingError(status)
        if self._debugging is not None:
            self._debugging.before(
                points.SCORE,
                pod,
                [n for n in framework.plugin_names("score") if n not in state.skip_score_plugins],
            )
        scores, status = framework.run_score_plugins(
            state, pod, nodes, columns, rows, names=trace.score_nodes
        )
        if status is not None and not status.is_success():
            raise _SchedulingError(status)
        if self.extenders:
            self._add_extender_scores(pod, nodes, scores, trace)
            trace.totals = [s.total_score for s in scores]
        else:
            trace.totals = (
                list(scores.totals)
                if isinstance(scores, ScoredNodes)
                else [s.total_score for s in scores]
            )
        return scores

    def _add_extender_scores(
        self,
        pod: Pod,
        nodes: list[NodeInfo],
        scores: Sequence[NodePluginScores],
        trace: CycleTrace,
    ) -> None:
        """Each interested extender's score, times its weight, scaled from 0-10 to 0-100."""
        scale = MAX_NODE_SCORE // MAX_EXTENDER_PRIORITY
        by_node = {node_scores.name: node_scores for node_scores in scores}
        for extender in self.extenders:
            if not extender.is_interested(pod):
                continue
            try:
                priorities, weight = extender.prioritize(pod, nodes)
            except ExtenderError:
                continue  # an extender's scores are optional: the others decide without it
            for name, score in priorities.items():
                node_scores = by_node.get(name)
                if node_scores is None:
                    continue
                final = score * weight * scale
                node_scores.scores.append((extender.name(), final))
                node_scores.total_score += final
            if extender.is_prioritizer():
                raw = [priorities.get(n.name, 0) for n in nodes]
                trace.score_plugins.append((extender.name(), weight))
                trace.raw_scores.append(raw)
                trace.normalized_scores.append([score * scale for score in raw])

    # ------------------------------------------------------------------ binding cycle

    def run_binding_cycle(
        self,
        framework: Framework,
        state: CycleState,
        assumed_info: QueuedPodInfo,
        result: ScheduleResult,
        trace: CycleTrace,
    ) -> None:
        self._trace_into(framework, trace)
        try:
            status = self.binding_cycle(framework, state, assumed_info, result)
            if status is not None and not status.is_success():
                self.handle_binding_cycle_error(
                    framework, state, assumed_info, result, status, trace
                )
                return
            trace.result = RESULT_SCHEDULED
            pod = assumed_info.pod
            trace.message = (
                f"Successfully assigned {pod.namespace}/{pod.name} to {result.suggested_host}"
            )
            trace.events.append(self.record_event("Normal", "Scheduled", pod, trace.message))
        finally:
            self._trace_into(framework, None)

    def binding_cycle(
        self,
        framework: Framework,
        state: CycleState,
        assumed_info: QueuedPodInfo,
        result: ScheduleResult,
    ) -> Status | None:
        pod = assumed_info.pod
        host = result.suggested_host
        status = framework.wait_on_permit(pod)
        if status is not None and not status.is_success():
            if status.is_rejected():
                return _single_node_rejection(pod, host, status)
            return status
        # Past Permit no failure makes the pod unschedulable (PreBind and Bind failures back
        # off), so the queue can stop recording events for it.
        self.queue.done(pod.key)
        debugging = self._debugging
        if debugging is not None:
            debugging.before(
                points.PRE_BIND,
                pod,
                [
                    n
                    for n in framework.plugin_names("preBind")
                    if n not in state.skip_pre_bind_plugins
                ],
            )
        status = framework.run_pre_bind_plugins(state, pod, host)
        if status is not None and not status.is_success():
            return status
        if debugging is not None:
            debugging.before(points.BIND, pod, self._binders(framework, pod))
        status = self.bind(framework, state, pod, host)
        if status is not None and not status.is_success():
            return status
        self.cache.finish_binding(pod, self.clock.now())
        if debugging is not None:
            debugging.before(points.POST_BIND, pod, framework.plugin_names("postBind"))
        framework.run_post_bind_plugins(state, pod, host)
        # At the end of a successful binding cycle, move up the pods plugins asked for.
        self._activate_pods(state, clear=False)
        return None

    def bind(self, framework: Framework, state: CycleState, pod: Pod, host: str) -> Status | None:
        """An interested binder extender binds; otherwise the Bind plugins do."""
        bound, status = self.extenders_binding(pod, host)
        if bound:
            return status
        return framework.run_bind_plugins(state, pod, host)

    def _binders(self, framework: Framework, pod: Pod) -> list[str]:
        """Who is about to bind: an interested binder extender, else the Bind plugins."""
        for extender in self.extenders:
            if extender.is_binder() and extender.is_interested(pod):
                return [extender.name()]
        return framework.plugin_names("bind")

    def extenders_binding(self, pod: Pod, host: str) -> tuple[bool, Status | None]:
        for extender in self.extenders:
            if not extender.is_binder() or not extender.is_interested(pod):
                continue
            try:
                extender.bind(pod, host)
            except ExtenderError as error:
                if extender.is_ignorable():
                    continue
                return True, as_status(str(error))
            # The extender bound the pod through its own client; the simulated cluster only
            # learns of it here.
            return True, self.store.bind(pod, host)
        return False, None

    def handle_binding_cycle_error(
        self,
        framework: Framework,
        state: CycleState,
        assumed_info: QueuedPodInfo,
        result: ScheduleResult,
        status: Status,
        trace: CycleTrace,
    ) -> None:
        pod = assumed_info.pod
        framework.run_reserve_plugins_unreserve(state, pod, result.suggested_host)
        trace.result = RESULT_UNSCHEDULABLE if status.is_rejected() else RESULT_ERROR
        trace.message = status.as_error()
        try:
            self.cache.forget_pod(pod)
        except Exception:  # upstream logs "scheduler cache ForgetPod failed" and carries on
            forgotten = False
        else:
            forgotten = True
        # Forgetting an assumed pod frees what it held, like a deleted pod. When the pod was
        # rejected the move waits until it is back in the queue, and skips the pod itself.
        if forgotten and not status.is_rejected():
            self.queue.move_all_to_active_or_backoff_queue(
                EVENT_ASSIGNED_POD_DELETE, pod, None, None
            )
        self.handle_scheduling_failure(framework, assumed_info, status, CLEAR_NOMINATED_NODE, trace)
        if forgotten and status.is_rejected():
            self.queue.move_all_to_active_or_backoff_queue(
                EVENT_ASSIGNED_POD_DELETE, pod, None, lambda other: other.key != pod.key
            )

    # ------------------------------------------------------------------ failures

    def handle_scheduling_failure(
        self,
        framework: Framework,
        pod_info: QueuedPodInfo,
        status: Status,
        nominating_info: NominatingInfo | None,
        trace: CycleTrace,
    ) -> None:
        reason = POD_REASON_UNSCHEDULABLE if status.is_rejected() else POD_REASON_SCHEDULER_ERROR
        if not status.is_rejected():
            # An error may pass (an extender down, an API failure): a retry is never futile.
            self.attempt_generations.pop(pod_info.pod.key, None)
        fit_error = status.cause if isinstance(status.cause, FitError) else None
        if fit_error is not None:
            pod_info.unschedulable_plugins = set(fit_error.diagnosis.unschedulable_plugins)
            pod_info.pending_plugins = set(fit_error.diagnosis.pending_plugins)
        pod = pod_info.pod
        error_message = status.as_error()
        if fit_error is not None:
            error_message = str(fit_error)
        trace.message = error_message
        cached = self.informers.get("Pod", pod.key)
        requeued = False
        if isinstance(cached, Pod) and not cached.node_name:
            pod_info.pod_info = type(pod_info.pod_info)(cached)
            self.queue.add_unschedulable_if_not_present(pod_info, self.queue.scheduling_cycle())
            requeued = True
        if not requeued:
            self.queue.done(pod.key)
        # None is ModeNoop: the nomination is re-read from the pod as the informer has it.
        self.queue.add_nominated_pod(pod_info.pod_info, nominating_info)
        trace.events.append(
            self.record_event("Warning", "FailedScheduling", pod, truncate_message(error_message))
        )
        nominated: str | None = None
        if nominating_info is not None and nominating_info.mode_override:
            nominated = nominating_info.nominated_node_name
        self.store.update_pod_status(
            pod, PodCondition("PodScheduled", "False", reason, error_message), nominated
        )


class _SchedulingError(Exception):
    def __init__(self, status: Status, feasible: list[NodeInfo] | None = None) -> None:
        super().__init__(status.as_error())
        self.status = status
        # Filter errors: the feasible nodes found before the failing one.
        self.feasible = feasible or []


def _fit_status(code: Code, fit_error: FitError) -> Status:
    """A status carrying the FitError, as upstream's ``NewStatus(code).WithError(fitErr)``."""
    message = str(fit_error)
    return Status(code, (message,), error=message, cause=fit_error)


def _single_node_rejection(pod: Pod, host: str, status: Status) -> Status:
    node_to_status = NodeToStatus()
    node_to_status.set(host, status)
    diagnosis = Diagnosis(node_to_status=node_to_status)
    _add_plugin_status(diagnosis, status)
    return _fit_status(status.code, FitError(pod, 1, diagnosis))


def _preemption_json(result: object, nominated_node: str) -> dict[str, Any]:
    """What PostFilter decided, for the trace; preemption plugins attach ``details``."""
    details = getattr(result, "details", None)
    if details is not None and hasattr(details, "to_json"):
        data: dict[str, Any] = details.to_json()
        return data
    return {"nominatedNode": nominated_node or None, "victims": [], "candidates": []}


def _add_plugin_status(diagnosis: Diagnosis, status: Status) -> None:
    if not status.plugin:
        return
    if status.is_rejected():
        diagnosis.unschedulable_plugins.add(status.plugin)
    if status.code == Code.Pending:
        diagnosis.pending_plugins.add(status.plugin)
