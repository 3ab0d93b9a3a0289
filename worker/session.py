"""One session of a runner: a tenure of the cluster's lease with a fresh informer cache and
scheduler (worker/runner.py runs them; docs/live-system.md).

The session lists the cluster into a ``DatabaseStore`` (the informer cache), builds a
``Scheduler`` from the cluster's profiles (resumed from the saved queue when there is one), then
loops: follow the change log, obey the run state, run due work and one cycle, write Cycle and
Event rows in batches (worker/session_records.py), publish. The clock is the cluster's
(worker/session_clock.py); the controllers run beside the scheduler
(worker/session_controllers.py); a cycle stepped into stops in the debugger (worker/debugging.py).
"""

from __future__ import annotations

import contextlib
import gc
import logging
import time
from typing import Any

from django.conf import settings
from django.db.models import F, Max

from schedviz.cluster import services
from schedviz.cluster.clock import clock_start
from schedviz.cluster.models import Cluster, Cycle, DebugSession, Lease
from schedviz.cluster.queue_state import config_digest, queue_state_forget, queue_state_get
from schedviz.controllers.persistentvolume import PersistentVolumeController
from schedviz.scheduler.apis.config.types import KubeSchedulerConfiguration
from schedviz.scheduler.apis.config.v1 import ConfigError, decode_configuration
from schedviz.scheduler.backend.queue.persistence import QueueDataError
from schedviz.scheduler.clock import ScaledWallClock, VirtualClock
from schedviz.scheduler.framework.plugins.registry import new_in_tree_registry
from schedviz.scheduler.framework.runtime.registry import Registry
from schedviz.scheduler.trace import CycleTrace
from worker.binding import GroupBindingScheduler
from worker.db_store import DATABASE_ERRORS, DatabaseStore, LeaseLostError
from worker.debugging import (
    ABANDON_GONE,
    DebugAbandoned,
    RunnerDebugger,
    debug_session_abandon,
)
from worker.lease import drop_connection, lease_fence, lease_renew
from worker.publish import Publisher
from worker.run_result import (
    STOP_CONFIG,
    STOP_DEBUG_ABANDONED,
    STOP_GONE,
    STOP_IDLE,
    STOP_LEASE_LOST,
    STOP_MAX_CYCLES,
    STOP_MAX_SECONDS,
    STOP_RESTART,
    RunResult,
)
from worker.session_clock import FUTILE_WAKE_FLOOR, IDLE_FUTILE_WAKE_FLOOR, SessionClock
from worker.session_controllers import ControllersSync
from worker.session_records import SessionRecords

logger = logging.getLogger(__name__)

# How often the loop re-reads the cluster's run state, speed and pending steps.
CONTROL_INTERVAL = 0.2
# Cycle and Event rows are written every FLUSH_CYCLES cycles or FLUSH_INTERVAL seconds after the
# last write ended.
FLUSH_CYCLES = 50
FLUSH_INTERVAL = 0.2
# On the live clock, binding cycles wait for a group commit (worker/binding.py) of at most
# BIND_BATCH pods, at most BIND_WAIT seconds, and no longer than the queue has pods to schedule.
BIND_BATCH = 50
BIND_WAIT = 0.05
# On the live clock, while pods are being scheduled, the change log is read at most this often
# (its query costs more than a small cycle); with nothing to schedule, and in virtual time (the
# simulator's order), before every cycle.
FOLLOW_INTERVAL = 0.02
# Sleep between polls when there is nothing to do.
IDLE_POLL = 0.02
# Work due this soon (wall seconds) is waited for in place; later work is woken up for.
IN_PLACE_WAIT = 0.25
# Every this many wall seconds of work, a live runner whose only work left is retrying pods on
# a cluster that has not changed since their last attempt (an error like no nodes at all retries
# every podMaxBackoffSeconds for ever; pods that fit nowhere are retried by the 5-minute flush
# of unschedulablePods, every 30 ms of wall time at speed 10000) gives its worker up and is
# woken up for the next retry, behind the other clusters waiting, and no sooner than
# FUTILE_WAKE_FLOOR (worker/session_clock.py) wall seconds later (a change to the cluster
# starts a runner at once). So does one that has placed no pod and seen no change for
# NO_PROGRESS_SECONDS of work (a queue too long to try every pod within a slice): it goes on
# from its saved queue when woken. A virtual cluster stops when its only work left is futile,
# as the simulator does; a paused one steps on.
FUTILE_SLICE = 0.5
NO_PROGRESS_SECONDS = 10.0
# A paused step runs at most this many empty pops and clock jumps looking for a cycle.
STEP_SEARCH_LIMIT = 1000

_RAN, _POPPED, _EMPTY = "ran", "popped", "empty"


def cluster_configuration(
    document: dict[str, Any], registry: Registry
) -> KubeSchedulerConfiguration:
    """The cluster's KubeSchedulerConfiguration from its v1 document (Profile rows and settings;
    none: the v1 defaults)."""
    return decode_configuration(document, known_plugins=set(registry))


class Session(SessionClock, ControllersSync, SessionRecords):
    """One tenure of the lease: a fresh informer cache and scheduler."""

    def __init__(
        self,
        cluster: Cluster,
        result: RunResult,
        publisher: Publisher,
        deadline: float | None,
        max_cycles: int | None,
    ) -> None:
        self.result = result
        self.publisher = publisher
        self.deadline = deadline
        self.max_cycles = max_cycles
        self.cluster = cluster
        self.cluster_id = cluster.pk
        self.idle_seconds = float(settings.SCHEDVIZ_RUNNER_IDLE_SECONDS)
        holder = result.holder
        self.store = DatabaseStore(
            cluster, fence=lambda: lease_fence(cluster_id=cluster.pk, holder=holder)
        )
        self.pending: dict[int, CycleTrace] = {}
        # Cycle numbers written while their pod waited at Permit (re-emitted with the outcome).
        self.written_waiting: set[int] = set()
        self.last_flush = time.monotonic()
        # When the queue may be saved again (time.monotonic).
        self.next_state_save = 0.0
        self.lease_renew_every = 5.0
        self.anchor: tuple[float, float | None] = (0.0, None)
        # Pods placed in this session; whether it gave its worker up with only futile work left,
        # and how soon it may be woken up then (FUTILE_SLICE).
        self.placed = 0
        self.gave_up = False
        self.wake_floor = 0.0

    # ------------------------------------------------------------------ set-up

    def run(self) -> None:
        cluster = self.cluster
        self.result.wake_in = self.result.wake_at = None
        self.virtual = cluster.clock_mode == Cluster.ClockMode.VIRTUAL
        self.paused = cluster.run_state == Cluster.RunState.PAUSED
        self.pending_steps = cluster.pending_steps
        services.debug_session_orphaned(cluster_id=cluster.pk)
        self.debug_requested = DebugSession.objects.filter(
            cluster=cluster, state=DebugSession.State.REQUESTED
        ).exists()
        self.speed = cluster.speed
        self.clock: VirtualClock | ScaledWallClock
        if self.virtual:
            self.clock = VirtualClock(cluster.scheduler_time)
        else:
            # The cluster's own clock, which ran on while no runner was alive.
            self.anchor = clock_start(cluster_id=cluster.pk)
            self.clock = ScaledWallClock(
                self.anchor[0],
                0.0 if self.paused else cluster.speed,
                wall=time.time,
                wall_start=self.anchor[1],
            )
        self.lease_renew_every = max(0.5, self._lease_duration() / 3)
        registry = new_in_tree_registry()
        self.config_document = services.scheduler_config_document(cluster=cluster)
        self.digest = config_digest(document=self.config_document, clock_mode=cluster.clock_mode)
        self.store.now = self.clock.now
        saved = queue_state_get(cluster_id=cluster.pk)
        if saved is not None and saved.config_digest != self.digest:
            saved = None  # another configuration: a fresh scheduler, as after a restart
        try:
            config = cluster_configuration(self.config_document, registry)
            self.scheduler = self._build_scheduler(config, registry, saved)
        except (ConfigError, ValueError) as error:  # ExtenderConfigError is a ValueError
            logger.error("cluster %s: cannot build the scheduler: %s", cluster.pk, error)
            self.result.stopped = STOP_CONFIG
            self.result.error = str(error)
            return
        # kube-controller-manager's PV controller beside the scheduler, as in ``simulate``,
        # synced after each follow that changed a claim, a volume or a class (not inside it:
        # a refused write must not cut a followed batch short).
        self.volume_controller = PersistentVolumeController(self.store)
        self.volumes_changed = True
        self.store.watch(self._on_volume_event)
        # OrderedReady StatefulSets (namespace, name) whose last pod was bound: the
        # controller's next ordinal is due (services.workload_sync).
        self.ordinals_due: set[tuple[str, str]] = set()
        self.store.watch(self._on_pod_bound)
        self.store.watch(self.publisher.object_changed)
        # Cycle numbers go on from the last runner's.
        last = Cycle.objects.filter(cluster=cluster).aggregate(m=Max("number"))["m"]
        self.scheduler.cycle_count = last or 0
        self.publisher.status("running", clock=cluster.clock_mode, paused=self.paused)
        self._offer_queue()
        # The listed cluster lives as long as the session: the collector need not walk it again
        # (a full collection of a 5000-node cluster takes about 50 ms). No collection first: it
        # would hold the session up as long; the previous session's garbage was collected as it
        # ended (_tenure), and what this freeze keeps is collected after this one's.
        gc.freeze()
        try:
            self._loop()
        except DATABASE_ERRORS:
            # The cycles finished before the failure are kept, on a new connection if the
            # database answers; the run starts over after that.
            drop_connection()
            self.store.connection_failed = None
            with contextlib.suppress(Exception):
                self._flush()
            raise
        except BaseException:
            # Keep what can be kept, but let the failure be the one reported.
            with contextlib.suppress(Exception):
                self._flush()
            raise
        else:
            if self.result.stopped != STOP_LEASE_LOST:
                self._bind_deferred()
                # Stopped idle with only futile retries left (the next one the 5-minute flush
                # of unschedulablePods, every 30 ms of wall time at speed 10000): woken up no
                # sooner than a second later, rather than a new session at every flush.
                if not self.gave_up and self._only_futile_work(stalled=0.0):
                    self.wake_floor = IDLE_FUTILE_WAKE_FLOOR
                self._plan_wake()
            self._flush(final=True)
        finally:
            gc.unfreeze()
            self.result.scheduler_time = self.clock.now()
            self.result.last_change_id = self.store.last_change_id

    def _build_scheduler(
        self, config: KubeSchedulerConfiguration, registry: Registry, saved: Any
    ) -> GroupBindingScheduler:
        """The scheduler over the listed cluster: resumed from the saved queue (the cluster
        listed as it was when the queue was saved, the changes since followed as events), or
        a fresh one that queues every pending pod."""
        if saved is not None:
            self.store.list_cluster_at(saved.change_id)
            try:
                return self._new_scheduler(config, registry, saved.state)
            except QueueDataError as error:
                logger.warning(
                    "cluster %s: the saved queue is not resumed: %s", self.cluster_id, error
                )
                queue_state_forget(cluster_id=self.cluster_id)
                holder = self.result.holder
                self.store = DatabaseStore(
                    self.cluster,
                    fence=lambda: lease_fence(cluster_id=self.cluster_id, holder=holder),
                )
                self.store.now = self.clock.now
        self.store.list_cluster()
        return self._new_scheduler(config, registry, None)

    def _new_scheduler(
        self, config: KubeSchedulerConfiguration, registry: Registry, state: Any
    ) -> GroupBindingScheduler:
        return GroupBindingScheduler(
            config,
            registry,
            self.store,
            self.clock,
            seed=self.cluster.seed,
            emit=self._on_trace,
            extender_allowed_hosts=settings.SCHEDVIZ_EXTENDER_ALLOWED_HOSTS,
            saved_state=state,
        )

    def _lease_duration(self) -> float:
        lease = Lease.objects.filter(cluster_id=self.cluster_id).first()
        return lease.duration_seconds if lease is not None else 15.0

    # ------------------------------------------------------------------ the loop

    def _loop(self) -> None:
        now = time.monotonic()
        next_control = now + CONTROL_INTERVAL
        next_renew = now + self.lease_renew_every
        next_follow = now
        last_activity = now
        last_slice = now
        progress, progress_at = self._progress_mark(), now
        while True:
            now = time.monotonic()
            # Checked before every cycle: a runner paused past a third of its lease renews it
            # (or learns it lost it) before it does anything else.
            renew = now >= next_renew
            if renew:
                next_renew = now + self.lease_renew_every
            if (renew or now >= next_control) and not self._still_holding(renew):
                self.result.stopped = STOP_LEASE_LOST
                return
            if now >= next_control:
                next_control = now + CONTROL_INTERVAL
                if not self._control():
                    return
            if self.deadline is not None and now >= self.deadline:
                self.result.stopped = STOP_MAX_SECONDS
                return
            if self.max_cycles is not None and self.result.cycles >= self.max_cycles:
                self.result.stopped = STOP_MAX_CYCLES
                return
            if now >= next_follow or self.virtual or self.paused or self.scheduler.queue_was_empty:
                next_follow = now + FOLLOW_INTERVAL
                followed = self.store.follow()
            else:
                followed = 0
            if followed:
                last_activity = now
                # Pods added while paused wait in activeQ: shown before any cycle runs.
                self._offer_queue()
            self._sync_volumes()
            self._sync_stateful_sets()
            try:
                worked = self._work()
            except DebugAbandoned as abandoned:
                self._abandon_debugged_cycle(abandoned)
                return
            deferred = self.scheduler.deferred
            if deferred and (
                len(deferred) >= BIND_BATCH or now - self.scheduler.deferred_since >= BIND_WAIT
            ):
                self._bind_deferred()
            if self.store.connection_failed is not None:
                # A write failed with its connection inside a cycle (the framework made it a
                # status): the cycle's outcome is unknown, the session starts over.
                raise self.store.connection_failed
            if self.store.fenced_off:
                # A write was refused: the lease was lost in the middle of a cycle.
                self.result.stopped = STOP_LEASE_LOST
                return
            if worked:
                last_activity = now
                if now - last_slice >= FUTILE_SLICE:
                    mark = self._progress_mark()
                    if mark != progress:
                        progress, progress_at = mark, now
                    if self._only_futile_work(stalled=now - progress_at):
                        self._flush()
                        self.gave_up, self.wake_floor = True, FUTILE_WAKE_FLOOR
                        self.result.stopped = STOP_IDLE
                        return
                    last_slice = now
                self._offer_queue()
                if len(self.pending) >= FLUSH_CYCLES or now - self.last_flush >= FLUSH_INTERVAL:
                    self._flush()
                continue
            self._flush()
            if now - last_activity >= self.idle_seconds:
                self.result.stopped = STOP_IDLE
                return
            time.sleep(IDLE_POLL)

    def _progress_mark(self) -> tuple[int, int]:
        """Pods placed and cluster changes seen so far: unchanged, nothing moved forward."""
        return self.placed, self.scheduler.cluster_generation

    def _only_futile_work(self, *, stalled: float) -> bool:
        """Whether the runner is to give its worker up (FUTILE_SLICE): pods are left, none
        waits at Permit or for its bind, and every one was last tried on the cluster as it is
        now (a retry would decide the same), or (live) nothing moved forward for
        NO_PROGRESS_SECONDS. With no pod left there is no retry at all: the work was cycles of
        new pods (a stream of them keeps the queue empty between cycles), and the runner stops
        once idle instead of handing over to a new session, which lists the cluster again."""
        scheduler = self.scheduler
        if self.paused or scheduler.waiting or scheduler.deferred:
            return False  # paused, the steps asked for are the work, futile or not
        pending = scheduler.pending_pods()
        if not pending:
            return False
        if not self.virtual and stalled >= NO_PROGRESS_SECONDS:
            return True
        generation = scheduler.cluster_generation
        return all(scheduler.attempt_generations.get(pod.key) == generation for pod in pending)

    def _work(self) -> bool:
        """Runs what the run state allows; False when there is nothing to do now."""
        # Paused steps and the debugger's stops go through the binding cycle at once.
        self.scheduler.bind_later = not self.virtual and not self.paused
        if self.paused:
            if self._bind_deferred():
                return True
            if self.debug_requested and self._claim_debug():
                self._step_into()
                return True
            if self.pending_steps > 0 and self._claim_step():
                self._step()
                return True
            return False
        if self._cycle() != _EMPTY:
            return True
        if self._bind_deferred():
            return True  # nothing left to schedule now: follow the binds back first
        wake = self.scheduler.next_wakeup()
        if wake is None:
            return False
        if self.virtual:
            self._advance(wake)
            return True
        # Live: a backoff ends or a Permit times out later. Within IN_PLACE_WAIT, or a pod
        # waits at Permit (its cycle lives only here): wait here. Later: nothing to do now; the
        # runner stops when idle and is woken up then, its worker free meanwhile.
        if self.scheduler.waiting or self._wall_seconds_until(wake) <= IN_PLACE_WAIT:
            time.sleep(IDLE_POLL)
            return True
        return False

    def _bind_deferred(self) -> bool:
        """The group commit of the binding cycles waiting (worker/binding.py); whether there
        were any. The lease lost: nothing is bound and ``fenced_off`` stops the loop. The
        connection dropped: nothing of the group is kept (not its events either) and the
        session starts over."""
        events = len(self.store.events)
        try:
            bound = self.scheduler.bind_deferred(self.store.group)
        except LeaseLostError:
            return False
        except DATABASE_ERRORS:
            del self.store.events[events:]
            raise
        if self.store.connection_failed is not None:
            del self.store.events[events:]
            raise self.store.connection_failed
        return bound

    def _cycle(self) -> str:
        """Due work and one cycle: _RAN, _POPPED (a pod that needed no cycle) or _EMPTY."""
        self.scheduler.run_due_work()
        if self.scheduler.schedule_one() is not None:
            self.result.cycles += 1
            return _RAN
        return _EMPTY if self.scheduler.queue_was_empty else _POPPED

    def _step(self) -> None:
        """One cycle while paused, moving the clock to the next wake-up if none is due."""
        for _ in range(STEP_SEARCH_LIMIT):
            outcome = self._cycle()
            if outcome == _RAN:
                return
            if outcome == _POPPED:
                continue
            wake = self.scheduler.next_wakeup()
            if wake is None:
                return
            self._advance(wake)

    def _claim_debug(self) -> bool:
        self.debug_requested = False
        return services.debug_session_claim(cluster_id=self.cluster_id)

    def _step_into(self) -> None:
        """One cycle while paused, stopping before each extension point (worker/debugging.py)."""
        debugger = RunnerDebugger(
            self.cluster_id,
            self.publisher,
            lambda: lease_renew(cluster_id=self.cluster_id, holder=self.result.holder),
            self.lease_renew_every,
        )
        self.scheduler.debugger = debugger
        try:
            self._step()
        finally:
            self.scheduler.debugger = None
        if not debugger.reached:
            debugger.nothing_to_step_into()
        self._flush()

    def _abandon_debugged_cycle(self, abandoned: DebugAbandoned) -> None:
        """Keeps nothing of the cycle: its pod, assumed only here, is pending in the database."""
        self.pending.pop(abandoned.cycle, None)
        self.scheduler.debugger = None
        self.result.stopped = (
            STOP_GONE if abandoned.reason == ABANDON_GONE else STOP_DEBUG_ABANDONED
        )
        if self.result.stopped != STOP_GONE:
            with contextlib.suppress(Exception):
                debug_session_abandon(self.cluster_id, self.publisher, abandoned.reason)

    def _still_holding(self, renew: bool) -> bool:
        if renew:
            return lease_renew(cluster_id=self.cluster_id, holder=self.result.holder)
        return Lease.objects.filter(cluster_id=self.cluster_id, holder=self.result.holder).exists()

    def _claim_step(self) -> bool:
        claimed = (
            Cluster.objects.filter(pk=self.cluster_id, pending_steps__gt=0).update(
                pending_steps=F("pending_steps") - 1
            )
            == 1
        )
        self.pending_steps = max(0, self.pending_steps - 1) if claimed else 0
        return claimed

    def _control(self) -> bool:
        """Re-reads the run state, speed and steps; False when the session must end."""
        row = (
            Cluster.objects.filter(pk=self.cluster_id)
            .values(
                "clock_mode",
                "run_state",
                "speed",
                "pending_steps",
                "scheduler_settings",
                "debug_session__state",
                "clock_anchor_time",
                "clock_anchor_wall",
            )
            .first()
        )
        if row is None:
            self.result.stopped = STOP_GONE
            return False
        # A new configuration or clock needs a new scheduler: the session starts again.
        document = services.scheduler_config_document(
            cluster=Cluster(pk=self.cluster_id, scheduler_settings=row["scheduler_settings"])
        )
        if (
            row["clock_mode"] == Cluster.ClockMode.VIRTUAL
        ) != self.virtual or document != self.config_document:
            self.result.stopped = STOP_RESTART
            return False
        paused = row["run_state"] == Cluster.RunState.PAUSED
        if paused != self.paused:
            self.publisher.status("running", clock=row["clock_mode"], paused=paused)
        self.paused = paused
        self.speed = row["speed"]
        self.pending_steps = row["pending_steps"]
        self.debug_requested = row["debug_session__state"] == DebugSession.State.REQUESTED
        if isinstance(self.clock, ScaledWallClock):
            speed = 0.0 if paused else self.speed
            anchor = (row["clock_anchor_time"], row["clock_anchor_wall"])
            if anchor[1] is not None and (anchor != self.anchor or speed != self.clock.speed):
                # The cluster's clock was re-anchored (a change of speed or run state): follow.
                self.anchor = anchor
                self.clock.set_anchor(anchor[0], anchor[1], speed)
            elif speed != self.clock.speed:
                self.clock.set_speed(speed)
        return True
