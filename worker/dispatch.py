"""Starting a cluster's runner where this deployment runs them.

Embedded mode (no REDIS_URL, Celery tasks eager): a daemon thread of this process, one per
cluster; a request for a cluster whose thread is still running marks it to go round once more
when it stops, so a change committed while it was stopping is not left unscheduled; a lease
held by someone else (this server before a restart) is waited out once. Distributed
mode: the Celery task ``worker.tasks.run_cluster``, sent only when no live runner holds the
cluster's lease (that runner follows the change log itself); the lease keeps it to one runner
per cluster however many tasks are sent, and a task that finds a runner has run since it was
sent ends at once.

Embedded mode, in the serving process (``manage.py serve``): a watch thread
(``watch_for_work``) reads the change log's newest id every ``WATCH_INTERVAL`` seconds and starts
a runner for each cluster with a change no runner has seen (``selectors.stranded_clusters``):
one committed by another process, such as ``manage.py apply`` beside the server, which starts no
runner itself (its thread would die with it). Every ``SCHEDVIZ_RESUME_SECONDS`` it also resumes
clusters whose lease expired with a holder or whose wake-up is overdue, as the distributed
mode's periodic task does.
"""

from __future__ import annotations

import asyncio
import logging
import threading
import time

from asgiref.sync import SyncToAsync
from django.conf import settings
from django.db import connection
from django.utils import timezone

from schedviz.cluster import selectors
from worker import runner
from worker.publish import Publisher

logger = logging.getLogger(__name__)

_lock = threading.Lock()
_threads: dict[int, threading.Thread] = {}
_again: set[int] = set()
# Embedded mode: the timer that starts a cluster's runner again when its work falls due.
_timers: dict[int, threading.Timer] = {}


def wake_later(result: runner.RunResult) -> None:
    """A runner that stopped with work due later (a backoff ending, a queue flush) is started
    again then: a Celery task with a countdown, or a timer of this process (embedded). Nothing
    waits meanwhile. A wake-up lost anyway (a broker restart) is found by the periodic resume
    (``runner.overdue_clusters``)."""
    if result.wake_in is None or result.wake_at is None:
        return
    if settings.CELERY_TASK_ALWAYS_EAGER:
        _wake_thread_later(result.cluster_id, result.wake_in)
        return
    from worker.tasks import run_cluster

    try:
        run_cluster.apply_async((result.cluster_id, None, result.wake_at), countdown=result.wake_in)
    except Exception:
        logger.exception("could not send the wake-up of cluster %s", result.cluster_id)


def cancel_wake_ups() -> None:
    """Cancels this process's pending wake-up timers (embedded mode; a server shutting down,
    tests)."""
    with _lock:
        timers = list(_timers.values())
        _timers.clear()
    for timer in timers:
        timer.cancel()


def _wake_thread_later(cluster_id: int, delay: float) -> None:
    loop = _loops.get(cluster_id)
    timer = threading.Timer(delay, _ensure_thread, args=(cluster_id, loop))
    timer.daemon = True
    with _lock:
        previous = _timers.pop(cluster_id, None)
        if previous is not None:
            previous.cancel()
        _timers[cluster_id] = timer
    timer.start()


# The server's event loop each cluster's runner thread published through.
_loops: dict[int, asyncio.AbstractEventLoop | None] = {}
# The serving process's event loop, as last seen by a request (the watch's runners publish
# through it).
_serving_loop: asyncio.AbstractEventLoop | None = None

# Embedded mode: how often (seconds) the serving process looks at the change log for changes
# committed by other processes.
WATCH_INTERVAL = 0.5
_watch: threading.Thread | None = None


def serving_loop_seen(loop: asyncio.AbstractEventLoop) -> None:
    """The serving process's event loop (schedviz/asgi.py tells it at each connection): the
    in-memory channel layer's browsers listen in it."""
    global _serving_loop
    _serving_loop = loop


def watch_for_work() -> None:
    """Starts the serving process's watch thread (embedded mode; the module docstring). The
    distributed mode needs none: every process sends its runner tasks to the workers."""
    global _watch
    if not settings.CELERY_TASK_ALWAYS_EAGER or not settings.SCHEDVIZ_START_RUNNERS:
        return
    with _lock:
        if _watch is not None and _watch.is_alive():
            return
        _watch = threading.Thread(target=_watch_loop, name="schedviz-watch", daemon=True)
        _watch.start()


def _watch_loop() -> None:
    seen: int | None = None
    next_resume = time.monotonic() + settings.SCHEDVIZ_RESUME_SECONDS
    failing = False
    while True:
        try:
            seen = _watch_once(seen)
            if time.monotonic() >= next_resume:
                next_resume = time.monotonic() + settings.SCHEDVIZ_RESUME_SECONDS
                due = selectors.orphaned_clusters() + selectors.overdue_clusters(now=time.time())
                for cluster_id in sorted(set(due)):
                    _ensure_thread(cluster_id, _serving_loop)
            failing = False
        except Exception as error:
            if not failing:  # once per outage, not every half second
                logger.warning("the watch for other processes' changes failed: %s", error)
            failing = True
            connection.close()
        time.sleep(WATCH_INTERVAL)


def _watch_once(seen: int | None) -> int:
    """One look at the change log: a runner for every cluster changed since ``seen`` (None:
    the first look, every cluster) that no runner has seen; answers the newest change's id."""
    newest, changed = selectors.clusters_changed_after(change_id=seen or 0)
    if seen is None or changed:
        ids = None if seen is None else changed
        for cluster_id in selectors.stranded_clusters(cluster_ids=ids):
            _ensure_thread(cluster_id, _serving_loop)
    return newest


def ensure_runner(cluster_id: int) -> None:
    if settings.CELERY_TASK_ALWAYS_EAGER:
        _ensure_thread(cluster_id)
    elif not selectors.lease_held(cluster_id=cluster_id):
        # A live runner follows the change log and sees the change itself.
        from worker.tasks import run_cluster

        try:
            run_cluster.delay(cluster_id, timezone.now().isoformat())
        except Exception:
            # The change is committed; with the broker down the periodic resume starts the
            # runner (tasks.resume_orphaned_clusters), so the writer is not told it failed.
            logger.exception("could not send the runner task of cluster %s", cluster_id)


def runner_thread(cluster_id: int) -> threading.Thread | None:
    """This process's live runner thread for the cluster, if any."""
    with _lock:
        thread = _threads.get(cluster_id)
        return thread if thread is not None and thread.is_alive() else None


def _ensure_thread(cluster_id: int, loop: asyncio.AbstractEventLoop | None = None) -> None:
    # A request handled by the ASGI server runs in a thread of its event loop's executor; the
    # in-memory channel layer belongs to that loop, so the runner publishes through it.
    global _serving_loop
    loop = loop or _server_loop() or _loops.get(cluster_id)
    with _lock:
        if loop is not None:
            _serving_loop = loop
        _loops[cluster_id] = loop
        timer = _timers.pop(cluster_id, None)
        if timer is not None:
            timer.cancel()
        thread = _threads.get(cluster_id)
        if thread is not None and thread.is_alive():
            _again.add(cluster_id)
            return
        thread = threading.Thread(
            target=_run_in_thread,
            args=(cluster_id, loop),
            name=f"schedviz-runner-{cluster_id}",
            daemon=True,
        )
        _threads[cluster_id] = thread
        thread.start()


def _server_loop() -> asyncio.AbstractEventLoop | None:
    loop = getattr(SyncToAsync.threadlocal, "main_event_loop", None)
    return loop if isinstance(loop, asyncio.AbstractEventLoop) else None


def _run_in_thread(cluster_id: int, loop: asyncio.AbstractEventLoop | None) -> None:
    # Started before any request (at boot, by the watch): the serving loop once one is seen.
    publisher = Publisher(cluster_id, loop=loop, loop_source=lambda: _serving_loop)
    try:
        while True:
            with _lock:
                _again.discard(cluster_id)
            try:
                result = runner.run_cluster(cluster_id, publisher=publisher)
                if result.stopped == runner.STOP_HELD:
                    # One process schedules everything here: the holder is most likely this
                    # server's previous life. Its lease expires; try once more then.
                    time.sleep(selectors.seconds_until_held_leases_expire(cluster_id) + 0.5)
                    result = runner.run_cluster(cluster_id, publisher=publisher)
            except Exception:
                logger.exception("the runner of cluster %s failed", cluster_id)
                with _lock:
                    _threads.pop(cluster_id, None)
                return
            with _lock:
                if not _go_again(cluster_id, result):
                    _threads.pop(cluster_id, None)
                    again = False
                else:
                    again = True
            if not again:
                wake_later(result)
                return
    finally:
        publisher.close()
        connection.close()


def _go_again(cluster_id: int, result: runner.RunResult) -> bool:
    """Whether a request came while the thread ran that its run may not have seen: an idle
    runner has seen every change up to its last look, so only a later one counts, or a step
    it did not take."""
    if cluster_id not in _again:
        return False
    if result.stopped != runner.STOP_IDLE:
        return True
    return selectors.runner_work_waiting(
        cluster_id=cluster_id, after_change_id=result.last_change_id
    )
