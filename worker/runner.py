"""The runner: one cluster's kube-scheduler process (docs/live-system.md).

``run_cluster`` takes the cluster's ``Lease`` (leader election), lists the cluster into a
``DatabaseStore`` (the informer cache), builds a ``Scheduler`` from the cluster's profiles, then
loops: follow the change log, obey the run state, run due work and one cycle, write Cycle and
Event rows in batches, publish. It gives the lease up when the cluster has been idle for
``SCHEDVIZ_RUNNER_IDLE_SECONDS`` (nothing poppable, nothing waiting, no new change).

Clock modes: virtual time jumps to the next thing that can happen whenever no pod can be
popped, so a run goes to idle at full speed and the same input gives the same trace; live time
is the wall clock scaled by the cluster's speed. Paused, the clock stands still and only the
cycles asked for with the step button (``pending_steps``) run; a step with nothing poppable
moves the clock to the next wake-up (a backoff ending) first.

A runner killed anywhere loses nothing: a pod assumed but not bound exists only in its memory,
and the next holder of the lease lists the database, where the pod is still pending.

Faults (docs/live-system.md, "Faults"): every write of the runner (binds, pod status, victims,
Cycle rows) is fenced by the lease in its own transaction, so a runner that lost the lease while
it was paused writes nothing more; it renews the lease before a cycle once a third of the lease
has gone by. A dropped database connection ends the session, not the run: the runner reconnects
and starts over from a fresh list, as an informer relists after a broken watch.
"""

from __future__ import annotations

import contextlib
import functools
import gc
import logging
import math
import os
import socket
import threading
import time
import uuid
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from django.conf import settings
from django.db import OperationalError, connection, transaction
from django.db.models import F, Field, Max
from django.utils import timezone

from schedviz.cluster import live, selectors, services
from schedviz.cluster.clock import clock_advance, clock_start
from schedviz.cluster.models import Cluster, Cycle, DebugSession, Lease
from schedviz.cluster.queue_state import (
    config_digest,
    queue_state_forget,
    queue_state_get,
    queue_state_save,
)
from schedviz.controllers.persistentvolume import PersistentVolumeController
from schedviz.kube.objects import PersistentVolume, PersistentVolumeClaim, Pod, StorageClass
from schedviz.scheduler.apis.config.types import KubeSchedulerConfiguration
from schedviz.scheduler.apis.config.v1 import ConfigError, decode_configuration
from schedviz.scheduler.backend.queue.persistence import QueueDataError
from schedviz.scheduler.clock import ScaledWallClock, VirtualClock
from schedviz.scheduler.collector import scheduling_collector
from schedviz.scheduler.framework.plugins.registry import new_in_tree_registry
from schedviz.scheduler.framework.runtime.registry import Registry
from schedviz.scheduler.trace import RESULT_WAITING, CycleTrace
from worker.binding import GroupBindingScheduler
from worker.db_store import DATABASE_ERRORS, DatabaseStore, LeaseLostError
from worker.debugging import (
    ABANDON_GONE,
    DebugAbandoned,
    RunnerDebugger,
    debug_session_abandon,
)
from worker.publish import QUEUE_LIST_LIMIT, Publisher

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
# Every this many wall seconds of work, a runner whose only work left is retrying pods on a
# cluster that has not changed since their last attempt (an error like no nodes at all retries
# every podMaxBackoffSeconds for ever, at a high speed always due within IN_PLACE_WAIT) gives
# its worker up and is woken up for the next retry, behind the other clusters waiting.
FUTILE_SLICE = 2.0
# A paused step runs at most this many empty pops and clock jumps looking for a cycle.
STEP_SEARCH_LIMIT = 1000
# The queue is saved with a batch of Cycle rows at most every STATE_SAVE_INTERVAL seconds (and
# always when the runner stops), and no sooner after a save than STATE_SAVE_COST times the wall
# time that save took: a queue of thousands of pods (tens of milliseconds to save) then costs the
# loop at most about 1/STATE_SAVE_COST of its time. A runner killed loses at most that much of
# its queue's history.
STATE_SAVE_INTERVAL = 1.0
STATE_SAVE_COST = 20

STOP_IDLE = "idle"
STOP_HELD = "held by another runner"
STOP_UP_TO_DATE = "a later runner saw the change"
STOP_LEASE_LOST = "lease lost"
STOP_GONE = "cluster deleted"
STOP_MAX_SECONDS = "max_seconds"
STOP_MAX_CYCLES = "max_cycles"
STOP_CONFIG = "configuration error"
STOP_RESTART = "clock mode or scheduler configuration changed"
STOP_DEBUG_ABANDONED = "a cycle stopped in the debugger was abandoned"
STOP_DATABASE = "database connection lost"

# A runner whose database fails starts over on a new connection, this many times in a row
# without a cycle in between, waiting a little longer each time; then the run fails and the
# lease expires (a distributed deployment resumes the cluster later).
DATABASE_RETRIES = 5
DATABASE_RETRY_SECONDS = 0.5

_RAN, _POPPED, _EMPTY = "ran", "popped", "empty"


@dataclass
class RunResult:
    cluster_id: int
    holder: str
    # Whether this runner held the lease at all.
    acquired: bool = False
    cycles: int = 0
    stopped: str = ""
    scheduler_time: float = 0.0
    error: str = ""
    # The last Change row the runner followed.
    last_change_id: int = 0
    # Stopped with work due later (a backoff ending, a queue flush of a live cluster): in how
    # many wall seconds, and at what Unix time, a runner is to start again (dispatch wakes it).
    wake_in: float | None = None
    wake_at: float | None = None


def default_holder() -> str:
    """Who holds a lease: host, process, thread and a nonce (a restarted thread is new)."""
    return (f"{socket.gethostname()}:{os.getpid()}:{threading.get_ident()}:{uuid.uuid4().hex[:8]}")[
        :200
    ]


# ---------------------------------------------------------------------------------------------
# The lease (leader election)


def lease_acquire(*, cluster_id: int, holder: str) -> bool:
    """Takes the cluster's lease if it is free, expired or ours: a compare-and-set on
    (holder, renewed_at), so of two runners racing for it exactly one wins. A lease row locked
    by another (a frozen holder inside a write, until the server ends its transaction) is not
    waited for beyond the runner's lock timeout: not taken this time."""
    lease, _ = Lease.objects.get_or_create(cluster_id=cluster_id)
    now = timezone.now()
    if lease.holder and lease.holder != holder and not selectors.lease_expired(lease, now):
        return False
    try:
        won = Lease.objects.filter(
            cluster_id=cluster_id, holder=lease.holder, renewed_at=lease.renewed_at
        ).update(holder=holder, renewed_at=now)
    except OperationalError as error:
        if not _lock_not_available(error):
            raise
        return False
    return won == 1


def lease_renew(*, cluster_id: int, holder: str) -> bool:
    """False when someone else has taken the lease over (this runner must stop at once), or is
    taking it (the row locked by another past the lock timeout)."""
    try:
        renewed = Lease.objects.filter(cluster_id=cluster_id, holder=holder).update(
            renewed_at=timezone.now()
        )
    except OperationalError as error:
        if not _lock_not_available(error):
            raise
        return False
    return renewed == 1


def lease_fence(*, cluster_id: int, holder: str) -> bool:
    """Inside a write's transaction: whether ``holder`` still holds the lease and it has not
    expired (the fencing check: the holder names one tenure, its nonce included). The lease row
    is locked until the write commits, so a takeover does not happen in the middle of it and
    the next holder lists the cluster with that write in it; a row another has locked (a
    takeover under way) is not waited for (NOWAIT): the write is refused."""
    try:
        # A savepoint: a refused lock leaves the write's transaction.
        with transaction.atomic(), connection.cursor() as cursor:
            cursor.execute(_fence_sql(), [cluster_id, holder])
            row = cursor.fetchone()
    except OperationalError as error:
        if not _lock_not_available(error):
            raise
        return False
    if row is None:
        return False
    lease = Lease(
        cluster_id=cluster_id,
        holder=holder,
        renewed_at=_renewed_at_value(row[0]),
        duration_seconds=row[1],
    )
    return not selectors.lease_expired(lease, timezone.now())


# The fence runs before every write of the runner (each batch of Cycle rows, each group of
# binds): its statement is SQL written once per process, as the ORM writes it (the lock where
# the database has one; SQLite serializes writers anyway), not built per write.
@functools.cache
def _fence_sql() -> str:
    q = connection.ops.quote_name
    meta = Lease._meta

    def column(name: str) -> str:
        field = meta.get_field(name)
        assert isinstance(field, Field) and field.column
        return q(field.column)

    lock = (
        " FOR UPDATE NOWAIT"
        if connection.features.has_select_for_update
        and connection.features.has_select_for_update_nowait
        else ""
    )
    return (
        f"SELECT {column('renewed_at')}, {column('duration_seconds')} FROM {q(meta.db_table)} "
        f"WHERE {column('cluster')} = %s AND {column('holder')} = %s{lock}"
    )


def _renewed_at_value(value: Any) -> datetime | None:
    """``renewed_at`` as the ORM reads it (SQLite hands a datetime over as text)."""
    field = Lease._meta.get_field("renewed_at")
    assert isinstance(field, Field)
    column = field.get_col(Lease._meta.db_table)
    for convert in connection.ops.get_db_converters(column):
        value = convert(value, column, connection)
    assert value is None or isinstance(value, datetime)
    return value


def _lock_not_available(error: OperationalError) -> bool:
    """PostgreSQL's lock_not_available (55P03): NOWAIT refused, or lock_timeout ran out."""
    cause = error.__cause__
    return getattr(cause, "sqlstate", None) == "55P03" or getattr(cause, "pgcode", None) == "55P03"


# PostgreSQL limits on a runner's connection, so that a frozen or cut-off runner cannot hold
# anyone up: its transaction is ended by the server after RUNNER_IDLE_IN_TRANSACTION seconds
# idle (its locks, the lease row's among them, go with it), a lock is waited for at most
# RUNNER_LOCK_TIMEOUT seconds, a statement runs at most RUNNER_STATEMENT_TIMEOUT seconds.
RUNNER_IDLE_IN_TRANSACTION = 5.0
RUNNER_LOCK_TIMEOUT = 2.0
RUNNER_STATEMENT_TIMEOUT = 30.0
_RUNNER_SESSION_LIMITS = {
    "idle_in_transaction_session_timeout": RUNNER_IDLE_IN_TRANSACTION,
    "lock_timeout": RUNNER_LOCK_TIMEOUT,
    "statement_timeout": RUNNER_STATEMENT_TIMEOUT,
}


def _limit_database_session(limited: bool) -> None:
    """Sets the runner's limits on this connection (PostgreSQL), or takes them off again (the
    worker process's connection serves other tasks too)."""
    if connection.vendor != "postgresql":
        return
    with connection.cursor() as cursor:
        for name, seconds in _RUNNER_SESSION_LIMITS.items():
            if limited:
                cursor.execute("SELECT set_config(%s, %s, false)", [name, f"{int(seconds * 1000)}"])
            else:
                cursor.execute(f"RESET {name}")


def lease_release(*, cluster_id: int, holder: str) -> None:
    """Gives the lease up; ``renewed_at`` keeps when, for ``ran_since``."""
    Lease.objects.filter(cluster_id=cluster_id, holder=holder).update(
        holder="", renewed_at=timezone.now()
    )


def _wake_replaced(cluster_id: int, wake_at: float) -> bool:
    """Whether a later runner saved another wake-up than ``wake_at`` (or none) and no change
    came after it stopped: it has done what this wake-up was for."""
    saved = queue_state_get(cluster_id=cluster_id)
    if saved is not None and saved.wake_at is not None and abs(saved.wake_at - wake_at) < 1e-3:
        return False
    return cluster_id not in selectors.stranded_clusters(cluster_ids=[cluster_id])


# ---------------------------------------------------------------------------------------------
# Building the scheduler


def cluster_configuration(
    document: dict[str, Any], registry: Registry
) -> KubeSchedulerConfiguration:
    """The cluster's KubeSchedulerConfiguration from its v1 document (Profile rows and settings;
    none: the v1 defaults)."""
    return decode_configuration(document, known_plugins=set(registry))


# ---------------------------------------------------------------------------------------------
# The loop


def run_cluster(
    cluster_id: int,
    *,
    holder: str | None = None,
    max_seconds: float | None = None,
    max_cycles: int | None = None,
    publisher: Publisher | None = None,
    requested_at: datetime | None = None,
    wake_at: float | None = None,
) -> RunResult:
    """Schedules the cluster until it is idle (or ``max_seconds``/``max_cycles``), holding its
    lease; returns at once when another live runner holds it, or when a runner has run and
    stopped since ``requested_at`` (a task that waited in the queue behind another), or when
    ``wake_at`` is a wake-up a later runner replaced with its own (or none)."""
    result = RunResult(cluster_id, holder or default_holder())
    if requested_at is not None and selectors.ran_since(cluster_id=cluster_id, when=requested_at):
        result.stopped = STOP_UP_TO_DATE
        return result
    if wake_at is not None and _wake_replaced(cluster_id, wake_at):
        result.stopped = STOP_UP_TO_DATE
        return result
    deadline = time.monotonic() + max_seconds if max_seconds is not None else None
    own_publisher = publisher is None
    publisher = publisher if publisher is not None else Publisher(cluster_id)
    # A process that schedules runs its collector tuned for it (schedviz/scheduler/collector.py).
    with scheduling_collector():
        try:
            failures, cycles_at_failure = 0, 0
            while True:
                try:
                    again = _tenure(cluster_id, result, publisher, deadline, max_cycles)
                except DATABASE_ERRORS as error:
                    failures = 1 if result.cycles > cycles_at_failure else failures + 1
                    cycles_at_failure = result.cycles
                    if failures > DATABASE_RETRIES:
                        raise
                    logger.warning(
                        "cluster %s: the database connection failed (%s); starting over",
                        cluster_id,
                        error,
                    )
                    result.stopped = STOP_DATABASE
                    _drop_connection()
                    time.sleep(DATABASE_RETRY_SECONDS * failures)
                    continue
                if not again:
                    return result
        finally:
            with contextlib.suppress(*DATABASE_ERRORS):
                _limit_database_session(False)
            if own_publisher:
                publisher.close()


def _tenure(
    cluster_id: int,
    result: RunResult,
    publisher: Publisher,
    deadline: float | None,
    max_cycles: int | None,
) -> bool:
    """Takes the lease and runs one session; True when the runner must go round again."""
    _limit_database_session(True)  # again on each session: a new connection after a failure
    cluster = Cluster.objects.filter(pk=cluster_id).first()
    if cluster is None:
        result.stopped = STOP_GONE
        return False
    if not lease_acquire(cluster_id=cluster_id, holder=result.holder):
        if not result.acquired:
            result.stopped = STOP_HELD
        return False
    result.acquired = True
    session: _Session | None = None
    database_failed = False
    try:
        session = _Session(cluster, result, publisher, deadline, max_cycles)
        session.run()
    except DATABASE_ERRORS:
        # The connection is gone: nothing more to write on it (the lease stays ours, and the
        # next session takes it again).
        database_failed = True
        raise
    finally:
        if not database_failed:
            lease_release(cluster_id=cluster_id, holder=result.holder)
            # Another runner holds the lease after a loss: what browsers hear is its status.
            if result.stopped not in (STOP_RESTART, STOP_LEASE_LOST):
                extra = {"error": result.error} if result.error else {}
                # What is still due goes first: the idle status is the last word browsers hear.
                publisher.flush(force=True)
                publisher.status("idle", stopped=result.stopped, **extra)
    # A lost lease may have expired without anyone taking it: take it again (a fresh list)
    # unless another runner holds it now. A change committed while this runner was stopping
    # started no runner (the lease was still held), nor did a step or a step into asked for then:
    # go round again rather than leave it undone.
    again = result.stopped in (STOP_RESTART, STOP_LEASE_LOST) or (
        result.stopped == STOP_IDLE
        and session is not None
        and selectors.runner_work_waiting(
            cluster_id=cluster_id, after_change_id=session.store.last_change_id
        )
    )
    # The session's informer cache and scheduler, unfrozen as it ended, are garbage now, much of
    # it in reference cycles (the scheduler and its plugins, the store and its handlers) that
    # only a full collection frees. Left to the collector's own pace, the next session's
    # gc.freeze() would keep them for its lifetime, and its garbage for the next one's: every
    # session's listed cluster was kept, ~30 MB in the 45 s soak test (tests/webui/test_soak.py).
    session = None
    gc.collect()
    return again


def _drop_connection() -> None:
    """Closes a broken connection; Django opens a new one at the next query."""
    with contextlib.suppress(*DATABASE_ERRORS):
        connection.close()


class _Session:
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
            _drop_connection()
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

    def _on_volume_event(self, event_type: str, old: Any, new: Any) -> None:
        if isinstance(new or old, PersistentVolume | PersistentVolumeClaim | StorageClass):
            self.volumes_changed = True

    def _sync_volumes(self) -> None:
        """The PV controller's sync of every claim, its writes to the change log; a write
        refused for the lease sets ``fenced_off``, which stops the loop."""
        if not self.volumes_changed:
            return
        self.volumes_changed = False
        with contextlib.suppress(LeaseLostError):
            self.volume_controller.sync_all()

    def _on_pod_bound(self, event_type: str, old: Any, new: Any) -> None:
        if not isinstance(new, Pod) or not new.node_name or (old is not None and old.node_name):
            return
        for owner in new.owner_references:
            if owner.controller and owner.kind == "StatefulSet":
                self.ordinals_due.add((new.namespace, owner.name))

    def _sync_stateful_sets(self) -> None:
        """The StatefulSet controller's part after a binding: each one's next ordinal, written
        with the runner's lease checked; a refused write sets ``fenced_off``."""
        due, self.ordinals_due = self.ordinals_due, set()
        for namespace, name in sorted(due):
            try:
                with self.store.write():
                    services.workload_sync(
                        cluster=self.cluster, kind="StatefulSet", namespace=namespace, name=name
                    )
            except LeaseLostError:
                return
            except services.ServiceError as error:
                # Deleted meanwhile, or its next pod refused (a limit): nothing to create.
                logger.info(
                    "cluster %s: StatefulSet %s/%s: %s", self.cluster_id, namespace, name, error
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
                    if self._only_futile_retries():
                        self._flush()
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

    def _only_futile_retries(self) -> bool:
        """Whether all the work left is retrying pods in backoffQ on an unchanged cluster. With
        backoffQ empty too there is no retry at all: the work was cycles of new pods (a stream
        of them keeps the queue empty between cycles), and the runner stops once idle instead
        of handing over to a new session, which lists the cluster again, every FUTILE_SLICE."""
        return bool(len(self.scheduler.queue.backoff_q)) and self.scheduler.retries_futile()

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

    def _wall_seconds_until(self, when: float) -> float:
        speed = self.clock.speed if isinstance(self.clock, ScaledWallClock) else 0.0
        if speed <= 0:
            return math.inf
        return max(0.0, (when - self.clock.now()) / speed)

    def _plan_wake(self) -> None:
        """When a runner must start again with no change to start it: the next backoff expiry
        or Permit timeout, or the queue flush that retries a pod waiting past
        podMaxInUnschedulablePodsDuration. Live and running only (paused, the clock stands
        still; virtual time runs to idle before the runner stops)."""
        if self.virtual or self.paused or self.result.stopped != STOP_IDLE:
            return
        dues = [
            due
            for due in (self.scheduler.next_wakeup(), self.scheduler.next_unschedulable_flush())
            if due is not None
        ]
        if not dues:
            return
        delay = self._wall_seconds_until(min(dues))
        if math.isinf(delay):
            return
        self.result.wake_in = delay
        self.result.wake_at = time.time() + delay

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

    def _advance(self, when: float) -> None:
        if isinstance(self.clock, VirtualClock):
            self.clock.set(max(when, self.clock.now()))
            return
        # A paused step to the next wake-up moves the cluster's clock, not only this one's.
        when = max(when, self.clock.now())
        wall = time.time()
        if clock_advance(cluster_id=self.cluster_id, old=self.anchor, when=when, wall=wall):
            self.anchor = (when, wall)
        self.clock.advance_to(when)

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

    # ------------------------------------------------------------------ records and publishing

    def _on_trace(self, trace: CycleTrace) -> None:
        if self.store.connection_failed is not None:
            return  # its bind may or may not have committed: the next list tells
        # A cycle held at Permit is emitted again with its outcome: the latest one is kept.
        self.pending[trace.cycle] = trace
        self.publisher.cycle(live.cycle_summary(trace))

    def _offer_queue(self) -> None:
        queue = self.scheduler.queue
        self.publisher.queue(
            lambda: (queue.snapshot_state(limit=QUEUE_LIST_LIMIT), len(queue.pending_pods()[0]))
        )

    def _queue_counts(self) -> dict[str, int]:
        """The queue's size by sub-queue, as upstream's scheduler_pending_pods counts it."""
        queue = self.scheduler.queue
        gated = sum(1 for pod in queue.unschedulable_pods if pod.gated)
        return {
            "active": len(queue.active_q),
            "backoff": len(queue.backoff_q),
            "unschedulable": len(queue.unschedulable_pods) - gated,
            "gated": gated,
        }

    def _flush(self, *, final: bool = False) -> None:
        """Writes the cycles and events finished, with the queue now and then; ``final``: the
        queue and the wake-up in any case (the runner stops)."""
        try:
            self._write_pending(final=final)
        finally:
            # From the end of the write: a write that took longer than FLUSH_INTERVAL (a big
            # queue saved, a loaded machine) leaves the next cycles time to run before another,
            # rather than one write after every cycle.
            self.last_flush = time.monotonic()

    def _write_pending(self, *, final: bool) -> None:
        now = time.monotonic()
        traces = list(self.pending.values())
        self.pending = {}
        events = self.store.take_events()
        save_state = final or (traces and now >= self.next_state_save)
        if traces or events or save_state:
            try:
                self._write_records(traces, events, bool(save_state))
            except LeaseLostError:
                # Another runner numbers the cycles now: these are not written, nor shown.
                self.publisher.drop_cycles()
                return
            self.written_waiting.update(t.cycle for t in traces if t.result == RESULT_WAITING)
        self.publisher.flush()

    def _write_records(
        self, traces: list[CycleTrace], events: list[Any], save_state: bool = False
    ) -> None:
        cluster = self.store.cluster
        with self.store.write():
            rewritten = [t.cycle for t in traces if t.cycle in self.written_waiting]
            if rewritten:
                Cycle.objects.filter(cluster=cluster, number__in=rewritten).delete()
                self.written_waiting.difference_update(rewritten)
            if traces:
                services.cycles_create(cluster=cluster, traces=traces)
            if events:
                services.events_create(cluster=cluster, events=events)
            services.pending_pods_record(
                cluster=cluster,
                counts=self._queue_counts(),
                queue=self.scheduler.queue.snapshot_state(limit=QUEUE_LIST_LIMIT),
                scheduler_time=self.clock.now(),
                last_cycle=self.scheduler.cycle_count,
            )
            Cluster.objects.filter(pk=self.cluster_id).update(scheduler_time=self.clock.now())
            if save_state:
                # The queue as it stands after every change followed so far: the next runner
                # lists the cluster as of that change and goes on from here.
                started = time.monotonic()
                queue_state_save(
                    cluster=cluster,
                    state=self.scheduler.state_to_data(),
                    change_id=self.store.last_change_id,
                    config_digest=self.digest,
                    wake_at=self.result.wake_at,
                )
                ended = time.monotonic()
                self.next_state_save = ended + max(
                    STATE_SAVE_INTERVAL, STATE_SAVE_COST * (ended - started)
                )
