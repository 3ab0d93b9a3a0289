"""The runner: one cluster's kube-scheduler process (docs/live-system.md).

``run_cluster`` takes the cluster's ``Lease`` (leader election, worker/lease.py) and runs
sessions (worker/session.py): each lists the cluster into a ``DatabaseStore`` (the informer
cache), builds a ``Scheduler`` from the cluster's profiles, then loops: follow the change log,
obey the run state, run due work and one cycle, write Cycle and Event rows in batches, publish.
It gives the lease up when the cluster has been idle for ``SCHEDVIZ_RUNNER_IDLE_SECONDS``
(nothing poppable, nothing waiting, no new change).

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
import gc
import logging
import time
from datetime import datetime

from schedviz.cluster import selectors
from schedviz.cluster.models import Cluster
from schedviz.cluster.queue_state import queue_state_get
from schedviz.scheduler.collector import scheduling_collector
from worker.db_store import DATABASE_ERRORS
from worker.lease import (
    default_holder,
    drop_connection,
    lease_acquire,
    lease_release,
    limit_database_session,
)
from worker.publish import Publisher
from worker.run_result import (
    STOP_CONFIG,
    STOP_DATABASE,
    STOP_DEBUG_ABANDONED,
    STOP_GONE,
    STOP_HELD,
    STOP_IDLE,
    STOP_LEASE_LOST,
    STOP_MAX_CYCLES,
    STOP_MAX_SECONDS,
    STOP_RESTART,
    STOP_UP_TO_DATE,
    RunResult,
)
from worker.session import Session

__all__ = [
    "STOP_CONFIG",
    "STOP_DATABASE",
    "STOP_DEBUG_ABANDONED",
    "STOP_GONE",
    "STOP_HELD",
    "STOP_IDLE",
    "STOP_LEASE_LOST",
    "STOP_MAX_CYCLES",
    "STOP_MAX_SECONDS",
    "STOP_RESTART",
    "STOP_UP_TO_DATE",
    "RunResult",
    "run_cluster",
]

logger = logging.getLogger(__name__)

# A runner whose database fails starts over on a new connection, this many times in a row
# without a cycle in between, waiting a little longer each time; then the run fails and the
# lease expires (a distributed deployment resumes the cluster later).
DATABASE_RETRIES = 5
DATABASE_RETRY_SECONDS = 0.5


def _wake_replaced(cluster_id: int, wake_at: float) -> bool:
    """Whether a later runner saved another wake-up than ``wake_at`` (or none) and no change
    came after it stopped: it has done what this wake-up was for."""
    saved = queue_state_get(cluster_id=cluster_id)
    if saved is not None and saved.wake_at is not None and abs(saved.wake_at - wake_at) < 1e-3:
        return False
    return cluster_id not in selectors.stranded_clusters(cluster_ids=[cluster_id])


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
                    drop_connection()
                    time.sleep(DATABASE_RETRY_SECONDS * failures)
                    continue
                if not again:
                    return result
        finally:
            with contextlib.suppress(*DATABASE_ERRORS):
                limit_database_session(False)
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
    limit_database_session(True)  # again on each session: a new connection after a failure
    cluster = Cluster.objects.filter(pk=cluster_id).first()
    if cluster is None:
        result.stopped = STOP_GONE
        return False
    if not lease_acquire(cluster_id=cluster_id, holder=result.holder):
        if not Cluster.objects.filter(pk=cluster_id).exists():
            result.stopped = STOP_GONE  # deleted while this runner stopped or started
        elif not result.acquired:
            result.stopped = STOP_HELD
        return False
    result.acquired = True
    session: Session | None = None
    database_failed = False
    try:
        session = Session(cluster, result, publisher, deadline, max_cycles)
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
    # go round again rather than leave it undone; not after giving the worker up (its own
    # writes are in the change log too): the wake-up it planned starts it again.
    again = result.stopped in (STOP_RESTART, STOP_LEASE_LOST) or (
        result.stopped == STOP_IDLE
        and session is not None
        and not session.gave_up
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
