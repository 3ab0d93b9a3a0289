"""The scheduling queue: activeQ, backoffQ, the unschedulable pod pool, in-flight pods, nominator.

Mirrors pkg/scheduler/backend/queue/scheduling_queue.go as of v1.34/v1.35, with the features on by
default there and nothing alpha (no pod groups, no DRA):
- SchedulerQueueingHints (GA, locked on since v1.34): pods rejected while events arrived are
  judged by those events' queueing hints; ``move_request_cycle`` is kept up to date as upstream,
  though with hints on nothing reads it;
- SchedulerPopFromBackoffQ (beta, on by default since v1.33): when activeQ is empty, ``pop`` takes
  the head of backoffQ; PreEnqueue plugins run when a pod enters backoffQ, not when it leaves.

Differences, deliberate:
- no goroutines and no locks. Upstream's ``Run`` starts two tickers; here the scheduling loop
  calls ``flush_backoff_q_completed`` every second (aligned to whole seconds) and
  ``flush_unschedulable_pods_leftover`` every 30 seconds, and ``next_wakeup`` says when the next
  backoff completes, so a loop in virtual time can jump the clock;
- ``pop`` never blocks: it returns None when there is nothing to pop;
- pods are identified by ``namespace/name`` where upstream uses the UID;
- pods keep the order they arrived in where upstream iterates Go maps in random order;
- the metrics are left out; ``on_pre_enqueue`` lets the runtime trace PreEnqueue results instead,
  and the queue keeps the moves since the last pop (which event moved which pod to which queue,
  by which plugin's hint: what upstream logs as "Pod moved to an internal scheduling queue") for
  the trace's ``queue.moves``;
- ``nominated_pods_for_node`` copies each pod one level deep (a new ``Pod`` and ``PodInfo``) where
  upstream deep-copies: the scheduler never edits a pod in place (updates replace it), so its
  nested values can be shared, and a deep copy of every nominated pod on every filtered node
  cost more than the filters themselves.
"""

from __future__ import annotations

import copy
import math
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from enum import IntEnum
from operator import attrgetter
from typing import Any

from schedviz.kube.objects import Pod
from schedviz.scheduler.backend.queue.active_queue import ActiveQueue, InFlightEvent
from schedviz.scheduler.backend.queue.backoff_queue import NO_BACKOFF, BackoffQueue
from schedviz.scheduler.backend.queue.nominator import Nominator, PodLister
from schedviz.scheduler.backend.queue.unschedulable_pods import UnschedulablePods
from schedviz.scheduler.clock import Clock
from schedviz.scheduler.framework.events import pod_scheduling_properties_change
from schedviz.scheduler.framework.interface import (
    NominatingInfo,
    PreEnqueuePlugin,
    Status,
    as_status,
)
from schedviz.scheduler.framework.plugins.names import POD_TOPOLOGY_SPREAD
from schedviz.scheduler.framework.types import (
    EVENT_ASSIGNED_POD_ADD,
    EVENT_FORCE_ACTIVATE,
    EVENT_UNSCHEDULABLE_TIMEOUT,
    ActionType,
    ClusterEvent,
    EventResource,
    PodInfo,
    QueuedPodInfo,
    QueueingHint,
    QueueingHintFn,
)
from schedviz.scheduler.trace import QueueEntries

# Defaults of the scheduler configuration (seconds).
DEFAULT_POD_INITIAL_BACKOFF_DURATION = 1.0
DEFAULT_POD_MAX_BACKOFF_DURATION = 10.0
DEFAULT_POD_MAX_IN_UNSCHEDULABLE_PODS_DURATION = 300.0
# Periods of upstream's background loops, which the scheduling loop calls here.
FLUSH_BACKOFF_Q_PERIOD = 1.0
FLUSH_UNSCHEDULABLE_PODS_PERIOD = 30.0

# Queue names, as upstream logs them.
ACTIVE_Q = "Active"
BACKOFF_Q = "Backoff"
UNSCHEDULABLE_Q = "Unschedulable"

# Special event labels (pkg/scheduler/framework/events.go).
SCHEDULE_ATTEMPT_FAILURE = "ScheduleAttemptFailure"
BACKOFF_COMPLETE = "BackoffComplete"
POP_FROM_BACKOFF_Q = "PopFromBackoffQ"
FORCE_ACTIVATE = "ForceActivate"
UNSCHEDULABLE_TIMEOUT = "UnschedulableTimeout"

EVENT_UNSCHEDULED_POD_ADD = ClusterEvent(EventResource.UnschedulablePod, ActionType.Add)
EVENT_UNSCHEDULED_POD_UPDATE = ClusterEvent(EventResource.UnschedulablePod, ActionType.Update)
_POD_SCALE_DOWN = ClusterEvent(EventResource.Pod, ActionType.UpdatePodScaleDown)

PENDING_PODS_SUMMARY = "activeQ:{}; backoffQ:{}; unschedulablePods:{}"

# The moves kept between two pops: the trace shows its first QUEUE_DETAIL_LIMIT; more are
# counted, not kept (a flush may move thousands of pods at once).
MOVES_KEPT = 1000

# preCheck: lets the caller skip pods before their hints are asked (upstream PreEnqueueCheck).
PreEnqueueCheck = Callable[[Pod], bool]
# (pod key, plugin name, status) for every PreEnqueue plugin run.
OnPreEnqueue = Callable[[str, str, Status | None], None]
NamespaceLabels = Callable[[str], Mapping[str, str] | None]


@dataclass(frozen=True, slots=True)
class QueueingHintFunction:
    """A queueing hint function with the name of the plugin that registered it."""

    plugin_name: str
    queueing_hint_fn: QueueingHintFn


QueueingHintMap = Mapping[ClusterEvent, Sequence[QueueingHintFunction]]


class QueueingStrategy(IntEnum):
    """Where a pod goes after an event (upstream ``queueingStrategy``)."""

    QUEUE_SKIP = 0
    QUEUE_AFTER_BACKOFF = 1
    QUEUE_IMMEDIATELY = 2


@dataclass(slots=True)
class _Profiles:
    pre_enqueue: Mapping[str, Sequence[PreEnqueuePlugin]] = field(default_factory=dict)
    hints: Mapping[str, QueueingHintMap] = field(default_factory=dict)
    # plugin name -> every event it registered, across profiles (upstream pluginToEventsMap)
    plugin_events: dict[str, list[ClusterEvent]] = field(default_factory=dict)


class PriorityQueue:
    """kube-scheduler's PriorityQueue. See the module docstring for how the loop drives it."""

    def __init__(
        self,
        *,
        less: Callable[[QueuedPodInfo, QueuedPodInfo], bool],
        clock: Clock,
        pod_initial_backoff: float = DEFAULT_POD_INITIAL_BACKOFF_DURATION,
        pod_max_backoff: float = DEFAULT_POD_MAX_BACKOFF_DURATION,
        pod_max_in_unschedulable_pods_duration: float = (
            DEFAULT_POD_MAX_IN_UNSCHEDULABLE_PODS_DURATION
        ),
        pre_enqueue_plugins: Mapping[str, Sequence[PreEnqueuePlugin]] | None = None,
        queueing_hints: Mapping[str, QueueingHintMap] | None = None,
        on_pre_enqueue: OnPreEnqueue | None = None,
        pod_lister: PodLister | None = None,
        namespace_labels: NamespaceLabels | None = None,
        pop_from_backoff_q: bool = True,
    ) -> None:
        self._clock = clock
        self.pod_max_in_unschedulable_pods_duration = pod_max_in_unschedulable_pods_duration
        self.pop_from_backoff_q = pop_from_backoff_q
        self.backoff_q = BackoffQueue(
            clock=clock,
            pod_initial_backoff=pod_initial_backoff,
            pod_max_backoff=pod_max_backoff,
            active_q_less=less,
            pop_from_backoff_q=pop_from_backoff_q,
        )
        self.active_q = ActiveQueue(less, self.backoff_q if pop_from_backoff_q else None)
        self.unschedulable_pods = UnschedulablePods()
        self.nominator = Nominator(pod_lister)
        hints = queueing_hints or {}
        plugin_events: dict[str, list[ClusterEvent]] = {}
        for hint_map in hints.values():
            for event, functions in hint_map.items():
                for function in functions:
                    plugin_events.setdefault(function.plugin_name, []).append(event)
        self._profiles = _Profiles(pre_enqueue_plugins or {}, hints, plugin_events)
        # Worked out once per event rather than once per pool pod (not in upstream, which asks
        # every registered event of the pod's profile for every pod): the hint functions whose
        # registered event matches, in the hint map's order, and whether any profile cares.
        self._hints_by_event: dict[tuple[str, ClusterEvent], tuple[QueueingHintFunction, ...]] = {}
        self._events_of_interest: dict[ClusterEvent, bool] = {}
        self._on_pre_enqueue = on_pre_enqueue
        self._namespace_labels = namespace_labels
        # The last ``QueuedPodInfo.stamp`` given.
        self.last_stamp = 0
        # The scheduling cycle of the last move request (kept, unread, as upstream with hints on).
        self.move_request_cycle = -1
        # One per limit asked for (the trace's, the live view's).
        self._snapshot_caches: dict[int | None, _SnapshotCache] = {}
        # The moves since the last pop (``_record_move``), the first MOVES_KEPT of them, and how
        # many there were.
        self._moves: list[dict[str, Any]] = []
        self.moves_since_pop = 0
        # event -> (pool version, the pool pods it may move): _pods_an_event_may_move.
        self._may_move: dict[ClusterEvent, tuple[int, list[QueuedPodInfo]]] = {}

    # ------------------------------------------------------------------------------ entering

    def new_queued_pod_info(self, pod: Pod, *plugins: str) -> QueuedPodInfo:
        return QueuedPodInfo(
            pod_info=PodInfo(pod),
            timestamp=self._clock.now(),
            unschedulable_plugins=set(plugins),
            stamp=self._take_stamp(),
        )

    def _take_stamp(self) -> int:
        """The next place in the order timestamps were taken (``QueuedPodInfo.stamp``)."""
        self.last_stamp += 1
        return self.last_stamp

    def add(self, pod: Pod) -> None:
        """A new pending pod (the informer's add event for an unscheduled pod)."""
        self._move_to_active_q(
            self.new_queued_pod_info(pod), EVENT_UNSCHEDULED_POD_ADD.label(), False
        )

    def activate(self, pods: Mapping[str, Pod]) -> None:
        """Moves the pods to activeQ (plugins' PodsToActivate). A pod in flight gets a
        ForceActivate event, so it is requeued when it comes back; unknown pods are ignored."""
        for pod in pods.values():
            if self._activate(pod):
                continue
            self.active_q.add_events_if_pod_in_flight(None, pod, [EVENT_FORCE_ACTIVATE])
            self.move_request_cycle = self.active_q.scheduling_cycle

    def _activate(self, pod: Pod) -> bool:
        pinfo = self.unschedulable_pods.get(pod.key)
        moves_from_backoff_q = False
        if pinfo is None:
            pinfo = self.backoff_q.delete(pod.key)
            if pinfo is None:
                # Already in activeQ, in flight, or unknown.
                return False
            moves_from_backoff_q = True
        moved = self._move_to_active_q(pinfo, FORCE_ACTIVATE, moves_from_backoff_q)
        if moved:
            self._record_move(FORCE_ACTIVATE, pinfo.key, ACTIVE_Q)
        return moved

    # ------------------------------------------------------------------------------ popping

    def scheduling_cycle(self) -> int:
        return self.active_q.scheduling_cycle

    def pop(self) -> QueuedPodInfo | None:
        """The next pod to schedule, now in flight, its attempts counted and the rejecting
        plugins of its last attempt cleared; None when activeQ is empty (and, with
        PopFromBackoffQ, backoffQ's regular heap too)."""
        pinfo = self.active_q.pop()
        if pinfo is not None:
            self._moves = []
            self.moves_since_pop = 0
        return pinfo

    @property
    def last_popped_from_backoff_q(self) -> bool:
        """Whether the last pod popped came straight from backoffQ (event PopFromBackoffQ)."""
        return self.active_q.last_popped_from_backoff_q

    def done(self, pod_key: str) -> None:
        """Must follow every pop, once the pod's scheduling and binding are over."""
        self.active_q.done(pod_key)

    def requeue_in_flight(self) -> None:
        """Puts every pod in flight back at activeQ, its attempts kept, as done: a restored
        queue's in-flight pods belonged to cycles that ended with the process that ran them."""
        for pinfo in self.active_q.in_flight_pods():
            self.done(pinfo.key)
            self.active_q.add(pinfo)

    # ------------------------------------------------------------------------------ failures

    def add_unschedulable_if_not_present(
        self, pinfo: QueuedPodInfo, pod_scheduling_cycle: int
    ) -> str | None:
        """A pod whose attempt failed comes back: to activeQ, backoffQ or the unschedulable
        pool, as its rejecting plugins' hints judge the events seen while it was in flight.
        Returns upstream's error text when the pod is already queued, else None. The pod is done
        either way. ``pod_scheduling_cycle`` only mattered without queueing hints; it is kept
        for upstream's signature."""
        try:
            return self._add_unschedulable_if_not_present(pinfo)
        finally:
            self.done(pinfo.key)

    def _add_unschedulable_if_not_present(self, pinfo: QueuedPodInfo) -> str | None:
        pod = pinfo.pod
        if pinfo.key in self.unschedulable_pods:
            return f"Pod {pod.key} is already present in unschedulable queue"
        if self.active_q.has(pinfo.key):
            return f"Pod {pod.key} is already present in the active queue"
        if self.backoff_q.has(pinfo.key):
            return f"Pod {pod.key} is already present in the backoff queue"
        if not pinfo.unschedulable_plugins and not pinfo.pending_plugins:
            # An unexpected error (a failed API call, say), not a rejection.
            pinfo.consecutive_errors_count += 1
        else:
            pinfo.unschedulable_count += 1
            pinfo.consecutive_errors_count = 0
        pinfo.timestamp = self._clock.now()
        pinfo.stamp = self._take_stamp()
        # The counts and the timestamp changed, so the cached expiry is stale.
        pinfo.backoff_expiration = None
        strategy, cause = self._determine_scheduling_hint_for_in_flight_pod(pinfo)
        queue = self._requeue_pod_with_queueing_strategy(pinfo, strategy, SCHEDULE_ATTEMPT_FAILURE)
        if cause is not None and queue != UNSCHEDULABLE_Q:
            # An event seen while the pod was in flight sent it back at once.
            event, plugin = cause
            self._record_move(SCHEDULE_ATTEMPT_FAILURE, pinfo.key, queue, plugin, event)
        return None

    def _determine_scheduling_hint_for_in_flight_pod(
        self, pinfo: QueuedPodInfo
    ) -> tuple[QueueingStrategy, tuple[InFlightEvent, str] | None]:
        """Where the returning pod goes, and the in-flight event and plugin whose hint decided
        it (None: no event did)."""
        if not pinfo.unschedulable_plugins and not pinfo.pending_plugins:
            # Retry after backoff: no event may ever be registered for an error.
            return QueueingStrategy.QUEUE_AFTER_BACKOFF, None
        events = self.active_q.cluster_events_for_pod(pinfo.key)
        if events is None:
            # Upstream reports this as a bug and retries the pod.
            return QueueingStrategy.QUEUE_AFTER_BACKOFF, None
        strategy = QueueingStrategy.QUEUE_SKIP
        cause: tuple[InFlightEvent, str] | None = None
        for event in events:
            hint, plugin = self._worth_requeuing(pinfo, event.event, event.old_obj, event.new_obj)
            if hint == QueueingStrategy.QUEUE_IMMEDIATELY:
                return hint, (event, plugin)
            if hint == QueueingStrategy.QUEUE_AFTER_BACKOFF:
                strategy = hint
                if cause is None:
                    cause = (event, plugin)
                if not pinfo.pending_plugins:
                    return strategy, cause
        return strategy, cause

    # ------------------------------------------------------------------------------ flushes

    def flush_backoff_q_completed(self) -> None:
        """Moves the pods whose backoff is over to activeQ (upstream: every second)."""
        for pinfo in self.backoff_q.pop_all_backoff_completed():
            if self._move_to_active_q(pinfo, BACKOFF_COMPLETE, True):
                self._record_move(BACKOFF_COMPLETE, pinfo.key, ACTIVE_Q)

    def flush_unschedulable_pods_leftover(self) -> None:
        """Moves pods that have waited longer than podMaxInUnschedulablePodsDuration
        (upstream: every 30 seconds)."""
        now = self._clock.now()
        limit = self.pod_max_in_unschedulable_pods_duration
        to_move = [p for p in self.unschedulable_pods if now - p.timestamp > limit]
        if to_move:
            self._move_pods_to_active_or_backoff_queue(
                to_move, EVENT_UNSCHEDULABLE_TIMEOUT, None, None
            )

    def next_wakeup(self) -> float | None:
        """The earliest time ``flush_backoff_q_completed`` would move a pod; None if backoffQ is
        empty."""
        return self.backoff_q.next_completion()

    def next_unschedulable_timeout(self) -> float | None:
        """The earliest time ``flush_unschedulable_pods_leftover`` would move a non-gated pod
        (it moves pods strictly older than the limit, at the next 30-second flush after this)."""
        stamps = [p.timestamp for p in self.unschedulable_pods if not p.gated]
        if not stamps:
            return None
        return math.nextafter(min(stamps) + self.pod_max_in_unschedulable_pods_duration, math.inf)

    # ------------------------------------------------------------------------------ informer events

    def update(self, old_pod: Pod, new_pod: Pod) -> None:
        """An unscheduled pod changed. In flight: the change is recorded for its return. In
        activeQ/backoffQ: updated in place. In the pool: its hints decide whether the change
        moves it. Elsewhere: added to activeQ."""
        events = pod_scheduling_properties_change(new_pod, old_pod)
        if self.active_q.add_events_if_pod_in_flight(old_pod, new_pod, events):
            return
        for queue in (self.active_q, self.backoff_q):
            queued = queue.update(new_pod, old_pod.key)
            if queued is not None:
                self.nominator.update_nominated_pod(old_pod, queued.pod_info)
                return
        pinfo = self.unschedulable_pods.get(new_pod.key)
        if pinfo is not None:
            pinfo.pod_info.update(new_pod)
            self.unschedulable_pods.touch()
            self.nominator.update_nominated_pod(old_pod, pinfo.pod_info)
            for event in events:
                hint, plugin = self._worth_requeuing(pinfo, event, old_pod, new_pod)
                queue_name = self._requeue_pod_with_queueing_strategy(pinfo, hint, event.label())
                if queue_name != UNSCHEDULABLE_Q:
                    self._record_move(
                        event.label(),
                        pinfo.key,
                        queue_name,
                        plugin,
                        InFlightEvent(event, None, new_pod),
                    )
                if queue_name == ACTIVE_Q or (self.pop_from_backoff_q and queue_name == BACKOFF_Q):
                    break
            return
        self._move_to_active_q(
            self.new_queued_pod_info(new_pod), EVENT_UNSCHEDULED_POD_UPDATE.label(), False
        )

    def delete(self, pod: Pod) -> None:
        """An unscheduled pod was deleted."""
        self.nominator.delete_nominated_pod_if_exists(pod)
        if self.active_q.delete(pod.key) is not None:
            return
        if self.backoff_q.delete(pod.key) is not None:
            return
        self.unschedulable_pods.delete(pod.key)

    def assigned_pod_added(self, pod: Pod) -> None:
        """A bound pod appeared: it may satisfy pods' affinity or spread constraints."""
        self._move_pods_to_active_or_backoff_queue(
            self._unschedulable_pods_with_cross_topology_term(pod),
            EVENT_ASSIGNED_POD_ADD,
            None,
            pod,
        )

    def assigned_pod_updated(self, old_pod: Pod, new_pod: Pod, event: ClusterEvent) -> None:
        """A bound pod changed; a scale-down may free resources for any pod."""
        if _POD_SCALE_DOWN.match(event):
            self.move_all_to_active_or_backoff_queue(event, old_pod, new_pod, None)
        else:
            self._move_pods_to_active_or_backoff_queue(
                self._unschedulable_pods_with_cross_topology_term(new_pod),
                event,
                old_pod,
                new_pod,
            )

    def move_all_to_active_or_backoff_queue(
        self,
        event: ClusterEvent,
        old_obj: object,
        new_obj: object,
        precheck: PreEnqueueCheck | None = None,
    ) -> None:
        """A cluster event: every pool pod whose rejecting plugins' hints say Queue moves."""
        if not self._is_event_of_interest(event):
            return
        pods = self._pods_an_event_may_move(event)
        if precheck is not None:
            pods = [p for p in pods if precheck(p.pod)]
        self._move_pods_to_active_or_backoff_queue(pods, event, old_obj, new_obj)

    def _pods_an_event_may_move(self, event: ClusterEvent) -> list[QueuedPodInfo]:
        """The pool pods, in order, less those ``_move_pods_to_active_or_backoff_queue`` would
        pass over for this event without asking a hint: gated by a plugin that registered no
        such event, or rejected only by plugins that registered no hint for it. Not in
        upstream, which asks every pod: kept per event until the pool changes, since a bound
        pod's event comes with every binding and rarely moves anything."""
        pool = self.unschedulable_pods
        if event.is_wildcard():
            return list(pool)
        cached = self._may_move.get(event)
        if cached is not None and cached[0] == pool.version:
            return cached[1]
        pods = [p for p in pool if not self._passed_over(p, event)]
        self._may_move[event] = (pool.version, pods)
        return pods

    def _passed_over(self, pinfo: QueuedPodInfo, event: ClusterEvent) -> bool:
        """Whether a pod stays in the pool on this (not wildcard) event, no hint asked."""
        if pinfo.gated:
            return not any(e.match(event) for e in pinfo.gating_plugin_events)
        rejectors = pinfo.unschedulable_plugins | pinfo.pending_plugins
        scheduler_name = pinfo.pod.scheduler_name
        hint_map = self._profiles.hints.get(scheduler_name)
        if not rejectors or hint_map is None:
            return False
        return not any(
            function.plugin_name in rejectors
            for function in self._hints_for(hint_map, scheduler_name, event)
        )

    # ------------------------------------------------------------------------------ moving

    def _move_pods_to_active_or_backoff_queue(
        self,
        pods: Iterable[QueuedPodInfo],
        event: ClusterEvent,
        old_obj: object,
        new_obj: object,
    ) -> None:
        if not self._is_event_of_interest(event):
            return
        for pinfo in pods:
            if pinfo.gated and not any(e.match(event) for e in pinfo.gating_plugin_events):
                # Only an event its gating plugin registered can move a gated pod.
                continue
            hint, plugin = self._worth_requeuing(pinfo, event, old_obj, new_obj)
            if hint == QueueingStrategy.QUEUE_SKIP:
                continue
            self.unschedulable_pods.delete(pinfo.key)
            label = event.label()
            queue = self._requeue_pod_with_queueing_strategy(pinfo, hint, label)
            if queue != UNSCHEDULABLE_Q:
                self._record_move(
                    label, pinfo.key, queue, plugin, InFlightEvent(event, old_obj, new_obj)
                )
        self.move_request_cycle = self.active_q.scheduling_cycle
        # Pods in flight now may come back rejected: they need to know about this event.
        self.active_q.add_event_if_any_in_flight(old_obj, new_obj, event)

    def _requeue_pod_with_queueing_strategy(
        self, pinfo: QueuedPodInfo, strategy: QueueingStrategy, event: str
    ) -> str:
        if strategy == QueueingStrategy.QUEUE_SKIP:
            self.unschedulable_pods.add_or_update(pinfo)
            return UNSCHEDULABLE_Q
        # The backoff may have run out while the pod waited in the pool.
        if strategy == QueueingStrategy.QUEUE_AFTER_BACKOFF and self.backoff_q.is_pod_backing_off(
            pinfo
        ):
            return BACKOFF_Q if self._move_to_backoff_q(pinfo, event) else UNSCHEDULABLE_Q
        # Queue immediately, or after a backoff that is already over. A gated pod is left in
        # the pool by _move_to_active_q.
        return ACTIVE_Q if self._move_to_active_q(pinfo, event, False) else UNSCHEDULABLE_Q

    def _move_to_active_q(
        self, pinfo: QueuedPodInfo, event: str, moves_from_backoff_q: bool
    ) -> bool:
        """To activeQ if the PreEnqueue plugins admit the pod, else to the pool, gated."""
        # With PopFromBackoffQ the plugins ran when the pod entered backoffQ.
        if not (self.pop_from_backoff_q and moves_from_backoff_q):
            self._run_pre_enqueue_plugins(pinfo)
        key = pinfo.key
        if pinfo.gated:
            if self.active_q.has(key) or self.backoff_q.has(key) or key in self.unschedulable_pods:
                return False
            self.unschedulable_pods.add_or_update(pinfo)
            return False
        if pinfo.initial_attempt_timestamp is None:
            pinfo.initial_attempt_timestamp = self._clock.now()
        self.unschedulable_pods.delete(key)
        self.backoff_q.delete(key)
        self.active_q.add(pinfo)
        if event in (EVENT_UNSCHEDULED_POD_ADD.label(), EVENT_UNSCHEDULED_POD_UPDATE.label()):
            self.nominator.add_nominated_pod(pinfo.pod_info, None)
        return True

    def _move_to_backoff_q(self, pinfo: QueuedPodInfo, event: str) -> bool:
        """To backoffQ; with PopFromBackoffQ the PreEnqueue plugins decide here (gated: pool)."""
        if self.pop_from_backoff_q:
            self._run_pre_enqueue_plugins(pinfo)
            if pinfo.gated:
                if pinfo.key not in self.unschedulable_pods:
                    self.unschedulable_pods.add_or_update(pinfo)
                return False
        self.unschedulable_pods.delete(pinfo.key)
        self.backoff_q.add(pinfo)
        return True

    # ------------------------------------------------------------------------------ plugins

    def _run_pre_enqueue_plugins(self, pinfo: QueuedPodInfo) -> None:
        """Runs the profile's PreEnqueue plugins, the gating one first; the first rejection
        gates the pod (and joins its unschedulable plugins), success ungates it."""
        plugins = self._profiles.pre_enqueue.get(pinfo.pod.scheduler_name, ())
        gating = pinfo.gating_plugin
        if gating:
            first = [p for p in plugins if p.name() == gating]
            rest = [p for p in plugins if p.name() != gating]
            plugins = first + rest
        if self.unschedulable_pods.get(pinfo.key) is pinfo:
            # Its gate and plugins may change in place.
            self.unschedulable_pods.touch()
        for plugin in plugins:
            if not self._run_pre_enqueue_plugin(plugin, pinfo):
                return
        pinfo.gating_plugin = ""

    def _run_pre_enqueue_plugin(self, plugin: PreEnqueuePlugin, pinfo: QueuedPodInfo) -> bool:
        name = plugin.name()
        try:
            status = plugin.pre_enqueue(pinfo.pod)
        except Exception as error:  # a plugin bug is an Error status, as the framework does
            status = as_status(error)
        if status is not None:
            status = status.with_plugin(name)
        if self._on_pre_enqueue is not None:
            self._on_pre_enqueue(pinfo.key, name, status)
        if status is None or status.is_success():
            return True
        pinfo.unschedulable_plugins.add(name)
        pinfo.gating_plugin = name
        pinfo.gating_plugin_events = list(self._profiles.plugin_events.get(name, ()))
        return False

    def _is_event_of_interest(self, event: ClusterEvent) -> bool:
        interest = self._events_of_interest.get(event)
        if interest is None:
            interest = self._events_of_interest[event] = event.is_wildcard() or any(
                registered.match(event)
                for hint_map in self._profiles.hints.values()
                for registered in hint_map
            )
        return interest

    def _hints_for(
        self, hint_map: QueueingHintMap, scheduler_name: str, event: ClusterEvent
    ) -> tuple[QueueingHintFunction, ...]:
        """The hint functions of ``hint_map`` (the profile ``scheduler_name``'s) registered
        for an event that ``event`` matches, in the map's order."""
        key = (scheduler_name, event)
        functions = self._hints_by_event.get(key)
        if functions is None:
            functions = self._hints_by_event[key] = tuple(
                function
                for registered, registered_functions in hint_map.items()
                if registered.match(event)
                for function in registered_functions
            )
        return functions

    def _is_pod_worth_requeuing(
        self, pinfo: QueuedPodInfo, event: ClusterEvent, old_obj: object, new_obj: object
    ) -> QueueingStrategy:
        """Asks the hints of the plugins that rejected the pod. A Pending plugin's Queue means
        activeQ at once; an Unschedulable plugin's Queue means after backoff; a hint that fails
        counts as Queue."""
        return self._worth_requeuing(pinfo, event, old_obj, new_obj)[0]

    def _worth_requeuing(
        self, pinfo: QueuedPodInfo, event: ClusterEvent, old_obj: object, new_obj: object
    ) -> tuple[QueueingStrategy, str]:
        """``_is_pod_worth_requeuing``, and the plugin whose hint decided ("" when no hint
        did: a wildcard event, an error, a profile without hints)."""
        rejectors = pinfo.unschedulable_plugins | pinfo.pending_plugins
        if not rejectors:
            return QueueingStrategy.QUEUE_AFTER_BACKOFF, ""
        if event.is_wildcard():
            # A wildcard event carrying a pod (ForceActivate) is for that pod only.
            if new_obj is not None and (not isinstance(new_obj, Pod) or new_obj.key != pinfo.key):
                return QueueingStrategy.QUEUE_SKIP, ""
            return QueueingStrategy.QUEUE_AFTER_BACKOFF, ""
        hint_map = self._profiles.hints.get(pinfo.pod.scheduler_name)
        if hint_map is None:
            # Upstream: a bug; the pod is retried.
            return QueueingStrategy.QUEUE_AFTER_BACKOFF, ""
        strategy = QueueingStrategy.QUEUE_SKIP
        decided = ""
        for function in self._hints_for(hint_map, pinfo.pod.scheduler_name, event):
            if function.plugin_name not in rejectors:
                continue
            try:
                hint = function.queueing_hint_fn(pinfo.pod, old_obj, new_obj)
            except Exception:  # an erring hint must not strand the pod
                hint = QueueingHint.Queue
            if hint == QueueingHint.QueueSkip:
                continue
            if function.plugin_name in pinfo.pending_plugins:
                return QueueingStrategy.QUEUE_IMMEDIATELY, function.plugin_name
            if not pinfo.pending_plugins:
                return QueueingStrategy.QUEUE_AFTER_BACKOFF, function.plugin_name
            strategy = QueueingStrategy.QUEUE_AFTER_BACKOFF
            decided = decided or function.plugin_name
        return strategy, decided

    def _record_move(
        self,
        event: str,
        pod: str,
        queue: str,
        plugin: str = "",
        cause: InFlightEvent | None = None,
    ) -> None:
        """Keeps a move for the trace: the event's label, the pod, the queue it went to, the
        plugin whose hint said Queue, and the event's object (for ScheduleAttemptFailure, the
        event seen in flight that sent the pod back: its label too)."""
        self.moves_since_pop += 1
        if len(self._moves) >= MOVES_KEPT:
            return
        move: dict[str, Any] = {"event": event, "pod": pod, "queue": queue}
        if plugin:
            move["plugin"] = plugin
        if cause is not None:
            if event == SCHEDULE_ATTEMPT_FAILURE:
                move["cause"] = cause.event.label()
            name = _object_name(cause.new_obj if cause.new_obj is not None else cause.old_obj)
            if name:
                move["object"] = name
        self._moves.append(move)

    def _unschedulable_pods_with_cross_topology_term(self, pod: Pod) -> list[QueuedPodInfo]:
        """Pool pods that a pod event may help: rejected by PodTopologySpread in the same
        namespace, or with a required affinity term the pod matches."""
        labels = self._namespace_labels(pod.namespace) if self._namespace_labels else None
        namespace_labels = dict(labels) if labels is not None else None
        result: list[QueuedPodInfo] = []
        for pinfo in self.unschedulable_pods:
            if (
                POD_TOPOLOGY_SPREAD in pinfo.unschedulable_plugins
                and pod.namespace == pinfo.pod.namespace
            ) or any(
                term.matches(pod, namespace_labels)
                for term in pinfo.pod_info.required_affinity_terms
            ):
                result.append(pinfo)
        return result

    # ------------------------------------------------------------------------------ nominator

    def add_nominated_pod(self, pod_info: PodInfo, nominating_info: NominatingInfo | None) -> None:
        self.nominator.add_nominated_pod(pod_info, nominating_info)

    def delete_nominated_pod_if_exists(self, pod: Pod) -> None:
        self.nominator.delete_nominated_pod_if_exists(pod)

    def update_nominated_pod(self, old_pod: Pod, new_pod_info: PodInfo) -> None:
        self.nominator.update_nominated_pod(old_pod, new_pod_info)

    def nominated_pods_for_node(self, node_name: str) -> list[PodInfo]:
        """Copies of the pods nominated to the node, in nomination order, as the queue holds
        them; a bare pod (name, namespace, uid) when the queue does not hold it, e.g. while it is
        in flight, as upstream. A copy is a new ``Pod`` and ``PodInfo`` sharing the pod's nested
        values, which nothing edits in place."""
        result: list[PodInfo] = []
        for ref in self.nominator.nominated_refs_for_node(node_name):
            pinfo = self.get_pod(ref.key)
            if pinfo is None:
                result.append(PodInfo(ref.to_pod()))
            else:
                result.append(PodInfo(copy.copy(pinfo.pod_info.pod)))
        return result

    # ------------------------------------------------------------------------------ reading

    def get_pod(self, key: str, *, include_in_flight: bool = False) -> QueuedPodInfo | None:
        """The queued pod with this key, from activeQ, backoffQ or the pool (upstream GetPod);
        optionally from the pods in flight too."""
        pinfo = (
            self.active_q.get(key) or self.unschedulable_pods.get(key) or self.backoff_q.get(key)
        )
        if pinfo is None and include_in_flight:
            pinfo = next((p for p in self.active_q.in_flight_pods() if p.key == key), None)
        return pinfo

    def has(self, key: str) -> bool:
        return self.get_pod(key) is not None

    def pods_in_active_q(self) -> list[Pod]:
        return [p.pod for p in self.active_q.items()]

    def pods_in_backoff_q(self) -> list[Pod]:
        return [p.pod for p in self.backoff_q.items()]

    def unschedulable_pod_list(self) -> list[Pod]:
        return [p.pod for p in self.unschedulable_pods]

    def in_flight_pods(self) -> list[Pod]:
        return [p.pod for p in self.active_q.in_flight_pods()]

    def pending_pods(self) -> tuple[list[Pod], str]:
        """Every queued pod and upstream's PendingPodsSummary line."""
        active = self.pods_in_active_q()
        backoff = self.pods_in_backoff_q()
        pool = self.unschedulable_pod_list()
        summary = PENDING_PODS_SUMMARY.format(len(active), len(backoff), len(pool))
        return active + backoff + pool, summary

    def snapshot_state(self, limit: int | None = None) -> dict[str, Any]:
        """The queues for a trace, as JSON-able values: activeQ in pop order, backoffQ by
        expiry, the pool (gated pods apart, in arrival order), the pods in flight and the labels
        of the events recorded for them, and the moves since the last pop (``_record_move``).
        With ``limit``, each list keeps its first ``limit`` entries (``pending_pods`` still
        counts them all; ``moves_since_pop`` counts the moves).

        Traces ask for this before every cycle, and between two cycles the pool seldom changes
        and activeQ usually loses its head: the lists and entries of the last snapshot are
        handed out again where they still hold (``_SnapshotCache``). Nothing edits them once
        made, so the traces of earlier cycles that share them never change."""
        cache = self._snapshot_caches.get(limit)
        if cache is None:
            cache = self._snapshot_caches[limit] = _SnapshotCache()
        pool = self.unschedulable_pods
        if cache.pool_version != pool.version:
            cache.pool_version = pool.version
            cache.unschedulable, cache.gated = _pool_entries(pool, limit)
        backoff = []
        for p, error in self.backoff_q.ordered(limit):
            expiry = self.backoff_q.get_backoff_time(p)
            entry: dict[str, Any] = {
                "pod": p.key,
                "attempts": p.attempts,
                "backoffExpiration": None if expiry == NO_BACKOFF else expiry,
            }
            if error:
                entry["error"] = True
            backoff.append(entry)
        in_flight = self.active_q.in_flight_pods()
        events = [
            e.event.label() for e in self.active_q.in_flight_log() if isinstance(e, InFlightEvent)
        ]
        return {
            "activeQ": cache.active.entries(self.active_q.ordered(limit)),
            "backoffQ": backoff,
            "unschedulablePods": cache.unschedulable,
            "gated": cache.gated,
            "inFlight": cache.in_flight.entries(in_flight[:limit]),
            "inFlightEvents": events[:limit],
            "moves": self._moves[:limit],
        }


def _object_name(obj: object) -> str:
    """A cluster event's object as the trace names it: ``namespace/name`` for a pod (or any
    namespaced object), the name otherwise; "" for none."""
    if isinstance(obj, Pod):
        return obj.key
    name = getattr(obj, "name", None)
    if not isinstance(name, str) or not name:
        return ""
    namespace = getattr(obj, "namespace", None)
    return f"{namespace}/{name}" if isinstance(namespace, str) and namespace else name


_attempts = attrgetter("attempts")


class _Entries:
    """The ``_entry`` list of a run of pods, made from the last one: the pods the last run
    started with may have left (popped), the rest of it starts this run, in order, and the
    pods after it are new. An entry holds the pod's key, which a queued pod never changes, and
    its attempts, compared here; a kept entry keeps its packed form too."""

    __slots__ = ("_attempts", "_entries", "_ids", "_pods")

    def __init__(self) -> None:
        self._pods: list[QueuedPodInfo] = []  # kept alive, so that their ids stay theirs
        self._ids: list[int] = []
        self._attempts: list[int] = []
        self._entries = QueueEntries()

    def entries(self, pods: list[QueuedPodInfo]) -> QueueEntries:
        ids = list(map(id, pods))
        attempts = list(map(_attempts, pods))
        last_ids, last = self._ids, self._entries
        if ids == last_ids and attempts == self._attempts:
            return last
        start = kept = 0
        if ids and ids[0] in last_ids:
            start = last_ids.index(ids[0])
            end = min(len(last_ids), start + len(ids))
            if last_ids[start:end] == ids[: end - start] and (
                self._attempts[start:end] == attempts[: end - start]
            ):
                kept = end - start
        entries = QueueEntries(last[start : start + kept])
        entries.extend(_entry(p) for p in pods[kept:])
        if last.packed is not None and kept:
            entries.packed = last.packed[start : start + kept]
            entries.packed.extend([None] * (len(pods) - kept))
        self._pods, self._ids, self._attempts, self._entries = pods, ids, attempts, entries
        return entries


class _SnapshotCache:
    """What ``snapshot_state`` made last for a limit: the pool's entries as of a pool version,
    and the activeQ and in-flight entries (``_Entries``)."""

    __slots__ = ("active", "gated", "in_flight", "pool_version", "unschedulable")

    def __init__(self) -> None:
        self.pool_version = -1
        self.unschedulable = QueueEntries()
        self.gated = QueueEntries()
        self.active = _Entries()
        self.in_flight = _Entries()


def _pool_entries(pool: UnschedulablePods, limit: int | None) -> tuple[QueueEntries, QueueEntries]:
    """The pool's entries, gated pods apart, each list its first ``limit`` pods."""
    unschedulable = QueueEntries()
    gated = QueueEntries()
    for p in pool:
        if p.gated:
            if limit is None or len(gated) < limit:
                gated.append(_gated_entry(p))
        elif limit is None or len(unschedulable) < limit:
            unschedulable.append(_unschedulable_entry(p))
    return unschedulable, gated


def _entry(p: QueuedPodInfo) -> dict[str, Any]:
    return {"pod": p.key, "attempts": p.attempts}


def _gated_entry(p: QueuedPodInfo) -> dict[str, Any]:
    return {
        "pod": p.key,
        "attempts": p.attempts,
        "gatingPlugin": p.gating_plugin,
        "since": p.timestamp,
    }


def _unschedulable_entry(p: QueuedPodInfo) -> dict[str, Any]:
    return {
        "pod": p.key,
        "attempts": p.attempts,
        "unschedulablePlugins": sorted(p.unschedulable_plugins),
        "pendingPlugins": sorted(p.pending_plugins),
        "since": p.timestamp,
    }
