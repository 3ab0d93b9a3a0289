"""The scheduler: profiles, cache, queue, and the loop that runs cycles.

Mirrors pkg/scheduler/scheduler.go (``New``, ``buildExtenders``, ``buildQueueingHintMap``,
``Run``). One
``Framework`` per profile, one cache, one queue shared by the profiles, one snapshot refreshed at
the start of every cycle. The loop is driven by the caller instead of goroutines:
``run_until_idle`` runs cycles in virtual time, jumping the clock to the next thing that can
happen (a backoff ending, the 1 s and 30 s queue flushes, a Permit timeout), and stops when no
pod can make progress without a new cluster event: a schedviz addition, since upstream runs
forever. A pod in backoffQ whose last attempt was rejected on the cluster as it still is would be
rejected again (``cluster_generation``), and the 5-minute flush of unschedulablePods retries
pods whose queueing hints heard no event that could help them.
"""

from __future__ import annotations

import math
import random
from collections import Counter
from collections.abc import Callable, Mapping, Sequence
from typing import Any

from schedviz.kube.decode import decode_object
from schedviz.kube.objects import Pod
from schedviz.scheduler.apis.config.types import KubeSchedulerConfiguration
from schedviz.scheduler.backend.cache.cache import Cache
from schedviz.scheduler.backend.cache.snapshot import Snapshot
from schedviz.scheduler.backend.queue.persistence import (
    QueueDataError,
    queue_from_data,
    queue_to_data,
)
from schedviz.scheduler.backend.queue.scheduling_queue import (
    PriorityQueue,
    QueueingHintFunction,
)
from schedviz.scheduler.clock import Clock
from schedviz.scheduler.eventhandlers import EventHandlers
from schedviz.scheduler.extender import build_extenders, profiles_with_ignored_resources
from schedviz.scheduler.framework.interface import NodeInfoLister, Status
from schedviz.scheduler.framework.runtime.framework import Framework
from schedviz.scheduler.framework.runtime.registry import Registry
from schedviz.scheduler.framework.types import (
    ActionType,
    ClusterEvent,
    EventResource,
    PodInfo,
    QueueingHint,
)
from schedviz.scheduler.schedule_one import ScheduleOne, WaitingCycle
from schedviz.scheduler.store import ClusterStore, InformerView
from schedviz.scheduler.trace import CycleTrace

# The queue's periodic flushes (scheduling_queue.go's Run).
BACKOFF_FLUSH_PERIOD = 1.0
UNSCHEDULABLE_FLUSH_PERIOD = 30.0
# How often ``run_until_idle`` lets one pod be tried at one virtual instant, on a cluster that
# has not changed, before it calls the run a loop without progress (not upstream's).
RETRIES_AT_ONE_INSTANT = 100

HintMap = dict[ClusterEvent, list[QueueingHintFunction]]


def _default_queueing_hint(pod: Pod, old: object, new: object) -> QueueingHint:
    return QueueingHint.Queue


def build_queueing_hint_map(framework: Framework) -> HintMap:
    """Each plugin's registered events and hints (upstream ``buildQueueingHintMap``)."""
    hints: HintMap = {}
    node_taint = ClusterEvent(EventResource.Node, ActionType.UpdateNodeTaint)
    for plugin_name, events in framework.enqueue_extensions():
        registers_node_add = False
        registers_node_taint = False
        for event_with_hint in events:
            event = event_with_hint.event
            hint = event_with_hint.queueing_hint_fn or _default_queueing_hint
            if event.resource == EventResource.Node:
                registers_node_add |= bool(event.action_type & ActionType.Add)
                registers_node_taint |= bool(event.action_type & ActionType.UpdateNodeTaint)
            hints.setdefault(event, []).append(QueueingHintFunction(plugin_name, hint))
        if registers_node_add and not registers_node_taint:
            # Upstream's mitigation for kubernetes#109437: a plugin that waits for new nodes
            # also hears of taint changes, so a node that loses a taint is not missed.
            hints.setdefault(node_taint, []).append(
                QueueingHintFunction(plugin_name, _default_queueing_hint)
            )
    return hints


def _next_tick(tick: float, now: float, period: float) -> float:
    """The first of the ticks ``tick + k * period`` that is after ``now`` (``tick <= now``)."""
    following = tick + (math.floor((now - tick) / period) + 1) * period
    # Rounding may land on now or just before it at large times: one more period then.
    return following if following > now else following + period


def _manifest_of(obj: object) -> Any:
    return getattr(obj, "manifest", None) or None


def _object_from_manifest(manifest: Any) -> object:
    # The events of pods in flight are read only while those pods are: a restored scheduler
    # puts them back in activeQ, so an object without its manifest is not needed again.
    return decode_object(manifest) if isinstance(manifest, dict) else None


class Scheduler(EventHandlers, ScheduleOne):
    def __init__(
        self,
        config: KubeSchedulerConfiguration,
        registry: Registry,
        store: ClusterStore,
        clock: Clock,
        *,
        seed: int = 0,
        emit: Callable[[CycleTrace], None] | None = None,
        capture_queue: bool = True,
        extender_allowed_hosts: frozenset[str] | None = None,
        saved_state: dict[str, Any] | None = None,
    ) -> None:
        """``extender_allowed_hosts``: the hosts extenders may be called on (None: any); an
        extender elsewhere is refused here with ExtenderConfigError. ``saved_state``: what
        ``state_to_data`` of an earlier scheduler of this cluster gave, with ``store`` listed
        at the moment it was saved: the queue goes on from it instead of queueing every
        pending pod afresh (raises QueueDataError when it cannot be read)."""
        self.config = config
        self.store = store
        self.informers = InformerView(store)
        self.clock = clock
        self.rng = random.Random(seed)
        self.cache = Cache()
        self.snapshot = Snapshot()
        self.percentage_of_nodes_to_score = config.percentage_of_nodes_to_score or 0
        self.next_start_node_index = 0
        self.cycle_count = 0
        self.capture_queue = capture_queue
        self._emit = emit
        # Whether the last schedule_one found the queue empty.
        self.queue_was_empty = False
        self.waiting: list[WaitingCycle] = []
        self.cluster_generation = 0
        self.attempt_generations: dict[str, int] = {}
        # Whether the last run_until_idle ended at its cycle cap with work left.
        self.stopped_at_cap = False
        # Whether the last run_until_idle ended a loop of retries at one virtual instant.
        self.stopped_looping = False
        self.async_work: list[Callable[[], None]] = []
        self.debugger = None
        self._debugging = None
        self.extenders = build_extenders(config.extenders, extender_allowed_hosts)
        self.profiles: dict[str, Framework] = {}
        for profile in profiles_with_ignored_resources(config.extenders, config.profiles):
            self.profiles[profile.scheduler_name] = Framework(
                profile, registry, self, clock_now=clock.now
            )
        first = next(iter(self.profiles.values()))
        self.queue = PriorityQueue(
            less=first.queue_sort_less(),
            clock=clock,
            pod_initial_backoff=float(config.pod_initial_backoff_seconds),
            pod_max_backoff=float(config.pod_max_backoff_seconds),
            pre_enqueue_plugins={
                name: fwk.pre_enqueue_plugins() for name, fwk in self.profiles.items()
            },
            queueing_hints={
                name: build_queueing_hint_map(fwk) for name, fwk in self.profiles.items()
            },
        )
        self._next_backoff_flush = clock.now() + BACKOFF_FLUSH_PERIOD
        self._next_unschedulable_flush = clock.now() + UNSCHEDULABLE_FLUSH_PERIOD
        store.watch(self.handle_watch_event)
        self._list_and_watch(saved_state)

    def _list_and_watch(self, saved_state: dict[str, Any] | None) -> None:
        """The informers' initial list: nodes first, then bound pods, then pending ones (into
        the queue, or the saved queue restored)."""
        for node in self.informers.list_objects("Node"):
            self.add_node_to_cache(node)
        pods = self.informers.pods()
        for pod in pods:
            if pod.node_name:
                self.add_pod_to_cache(pod)
        if saved_state is not None:
            self._restore_state(saved_state)
        for pod in pods:
            if (
                not pod.node_name
                and self.responsible_for_pod(pod)
                and self.queue.get_pod(pod.key) is None
            ):
                self.add_pod_to_scheduling_queue(pod)

    # ------------------------------------------------------------------ saved state

    def state_to_data(self) -> dict[str, Any]:
        """The queue and the flush ticks as JSON-able values, for a later scheduler of the
        cluster (``saved_state``)."""
        return {
            "queue": queue_to_data(self.queue, encode=_manifest_of),
            "nextBackoffFlush": self._next_backoff_flush,
            "nextUnschedulableFlush": self._next_unschedulable_flush,
        }

    def _restore_state(self, data: dict[str, Any]) -> None:
        try:
            queue_data = data["queue"]
            next_backoff_flush = float(data["nextBackoffFlush"])
            next_unschedulable_flush = float(data["nextUnschedulableFlush"])
        except (KeyError, TypeError, ValueError) as error:
            raise QueueDataError(f"the saved scheduler state is malformed: {error!r}") from error

        def pending(key: str) -> Pod | None:
            pod = self.store.get("Pod", key)
            if isinstance(pod, Pod) and not pod.node_name and self.responsible_for_pod(pod):
                return pod
            return None

        queue_from_data(self.queue, queue_data, pods=pending, decode=_object_from_manifest)
        # The cycles of the pods in flight ended with the scheduler that ran them: each goes
        # back to activeQ, its attempts kept, as a pod whose cycle was abandoned.
        self.queue.requeue_in_flight()
        self._next_backoff_flush = next_backoff_flush
        self._next_unschedulable_flush = next_unschedulable_flush

    # ------------------------------------------------------------------ Handle (shared part)

    def snapshot_shared_lister(self) -> NodeInfoLister:
        return self.snapshot

    @property
    def objects(self) -> InformerView:
        return self.informers

    def bind_pod(self, pod: Pod, node_name: str) -> Status | None:
        return self.store.bind(pod, node_name)

    def nominated_pods_for_node(self, node_name: str) -> list[PodInfo]:
        if not self.queue.nominator.nominated_pods.get(node_name):
            return []  # the usual case, asked once per node per cycle: keep it cheap
        return self.queue.nominated_pods_for_node(node_name)

    def delete_pod(self, pod: Pod) -> None:
        """Deletes a pod through the API (preemption victims)."""
        self.store.delete("Pod", pod.key)

    def run_async(self, work: Callable[[], None]) -> None:
        """A goroutine a plugin starts: run after the current cycle (``run_async_work``)."""
        self.async_work.append(work)

    def activate(self, pods: Mapping[str, Pod]) -> None:
        self.queue.activate(pods)

    # ------------------------------------------------------------------ the loop

    def run_due_work(self) -> None:
        """Whatever is due at the clock's time: queue flushes and Permit outcomes."""
        now = self.clock.now()
        # Ticks missed (a runner that woke up late, a clock at a high speed) are made up by one
        # flush: at one time, a second flush finds nothing the first left. The next tick is the
        # first after now, however far behind the clock has run, so no loop here counts ticks.
        if now >= self._next_backoff_flush:
            self.queue.flush_backoff_q_completed()
            self._next_backoff_flush = _next_tick(
                self._next_backoff_flush, now, BACKOFF_FLUSH_PERIOD
            )
        if now >= self._next_unschedulable_flush:
            self.queue.flush_unschedulable_pods_leftover()
            self._next_unschedulable_flush = _next_tick(
                self._next_unschedulable_flush, now, UNSCHEDULABLE_FLUSH_PERIOD
            )
        self._resume_waiting_pods(now)

    def _resume_waiting_pods(self, now: float) -> None:
        still: list[Any] = []
        for entry in self.waiting:
            framework, state, assumed, result, trace = entry
            waiting = framework.get_waiting_pod(assumed.pod.key)
            if (
                waiting is None
                or waiting.rejection is not None
                or waiting.allowed()
                or (waiting.pending_plugins and now >= waiting.deadline())
            ):
                self.run_binding_cycle(framework, state, assumed, result, trace)
                self.emit(trace)
            else:
                still.append(entry)
        self.waiting = still

    def next_wakeup(self) -> float | None:
        """When something next becomes possible without a new cluster event: the flush tick
        that moves a pod out of backoffQ, or a Permit timeout. (The 5-minute flush of
        unschedulablePods is not counted: retrying an unchanged cluster changes nothing.)"""
        candidates: list[float] = []
        backoff = self.queue.next_wakeup()
        if backoff is not None:
            ticks = max(0, math.ceil((backoff - self._next_backoff_flush) / BACKOFF_FLUSH_PERIOD))
            candidates.append(self._next_backoff_flush + ticks * BACKOFF_FLUSH_PERIOD)
        for framework, _, assumed, _, _ in self.waiting:
            waiting = framework.get_waiting_pod(assumed.pod.key)
            if waiting is not None and waiting.pending_plugins:
                candidates.append(waiting.deadline())
        return min(candidates) if candidates else None

    def next_unschedulable_flush(self) -> float | None:
        """The 30-second flush tick that moves the oldest pod out of unschedulablePods after
        podMaxInUnschedulablePodsDuration (None when the pool holds no such pod). A live
        cluster wakes up for it; ``next_wakeup`` leaves it out for runs in virtual time."""
        timeout = self.queue.next_unschedulable_timeout()
        if timeout is None:
            return None
        first = self._next_unschedulable_flush
        ticks = max(0, math.ceil((timeout - first) / UNSCHEDULABLE_FLUSH_PERIOD))
        return first + ticks * UNSCHEDULABLE_FLUSH_PERIOD

    def step(self) -> CycleTrace | None:
        """Runs due work and at most one scheduling cycle."""
        self.run_due_work()
        return self.schedule_one()

    def run_until_idle(self, advance: Callable[[float], None], max_cycles: int = 1_000_000) -> int:
        """Runs cycles, moving virtual time with ``advance``, until nothing can progress: the
        active queue is empty, no pod waits at Permit, and every pod in backoffQ was last tried
        on the cluster as it is now (a retry would decide the same: a pod that failed with an
        error, like no nodes at all, goes back through backoffQ forever in upstream)."""
        cycles = 0
        self.stopped_at_cap = self.stopped_looping = False
        instant = (self.cluster_generation, self.clock.now())
        tries: Counter[str] = Counter()
        while cycles < max_cycles:
            self.run_due_work()
            trace = self.schedule_one()
            if trace is not None:
                cycles += 1
                # Pods that activate each other (a gang's siblings, PopFromBackoffQ) can retry
                # for ever at one virtual instant on an unchanged cluster: upstream paces that
                # loop only by real time, so a run in virtual time ends it here.
                if (self.cluster_generation, self.clock.now()) != instant:
                    instant = (self.cluster_generation, self.clock.now())
                    tries.clear()
                tries[trace.pod] += 1
                if tries[trace.pod] > RETRIES_AT_ONE_INSTANT:
                    self.stopped_looping = True
                    return cycles
                continue
            if not self.queue_was_empty:
                continue  # popped a pod that needed no cycle (not ours, or assumed)
            wake = self.next_wakeup()
            if wake is None or self.retries_futile():
                return cycles
            advance(max(wake, self.clock.now()))
        self.stopped_at_cap = True
        return cycles

    def retries_futile(self) -> bool:
        """Nothing in activeQ, no pod waits at Permit, and every pod in backoffQ was last tried
        on the cluster as it is now: what is left to do would decide as before."""
        return (
            not len(self.queue.active_q)
            and not self._permit_waits()
            and self._backoff_retries_futile()
        )

    def _permit_waits(self) -> bool:
        return any(
            (waiting := framework.get_waiting_pod(assumed.pod.key)) is not None
            and bool(waiting.pending_plugins)
            for framework, _, assumed, _, _ in self.waiting
        )

    def _backoff_retries_futile(self) -> bool:
        """Every pod in backoffQ had its last attempt on the current cluster."""
        generation = self.cluster_generation
        return all(
            self.attempt_generations.get(pod.key) == generation
            for pod in self.queue.pods_in_backoff_q()
        )

    def pending_pods(self) -> Sequence[Pod]:
        pods, _ = self.queue.pending_pods()
        return pods

    def profile_names(self) -> Mapping[str, Framework]:
        return self.profiles
