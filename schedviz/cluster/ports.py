"""Where the cluster announces work to whatever runs its scheduler, without knowing what that is.

A committed user-facing write (an object, the run state) asks for a runner: the services call
``start_runner`` once the transaction has committed (``transaction.on_commit``). The worker app
registers what starts one (``worker.dispatch.ensure_runner``) in its ``AppConfig.ready``; the
dependency points from the worker to the cluster, never back. With no runner registered (no
worker app in this deployment) nothing is announced: the change waits in the change log, where
the next runner to start follows it (``selectors.stranded_clusters``).

A process that serves the site in the embedded mode also watches for changes other processes
commit (``manage.py apply`` beside ``manage.py serve``): ``watch_for_work``, which the worker app
fills with ``worker.dispatch.watch_for_work``. A command that only writes and exits starts no
runner of its own (``runners_elsewhere``): a runner thread would die with it.
"""

from __future__ import annotations

import contextlib
import logging
from collections.abc import Callable, Iterator

from django.conf import settings

logger = logging.getLogger(__name__)

RunnerStarter = Callable[[int], None]

_runner_starter: RunnerStarter | None = None
_work_watcher: Callable[[], None] | None = None


def register_runner_starter(starter: RunnerStarter | None) -> RunnerStarter | None:
    """Makes ``starter(cluster_id)`` what starts a cluster's runner (None: nothing does);
    answers the one registered before."""
    global _runner_starter
    previous, _runner_starter = _runner_starter, starter
    return previous


def start_runner(cluster_id: int) -> None:
    """Asks the registered runner starter to make sure a runner schedules the cluster."""
    if _runner_starter is None:
        logger.debug("no runner starter is registered: cluster %s waits for a runner", cluster_id)
        return
    _runner_starter(cluster_id)


@contextlib.contextmanager
def runners_elsewhere() -> Iterator[None]:
    """While it lasts, this process (a command that writes and exits) starts no runner itself.
    The change waits in the change log for the serving process's watch (embedded) or the
    workers (distributed: the runner starter sends a task, which outlives this process, so it
    stays)."""
    if not settings.CELERY_TASK_ALWAYS_EAGER:
        yield
        return
    previous = register_runner_starter(None)
    try:
        yield
    finally:
        register_runner_starter(previous)


def register_work_watcher(watcher: Callable[[], None] | None) -> None:
    """Makes ``watcher()`` what a serving process calls to start watching for changes
    committed by other processes."""
    global _work_watcher
    _work_watcher = watcher


def watch_for_work() -> None:
    """A serving process starts watching for changes other processes commit (see above)."""
    if _work_watcher is not None:
        _work_watcher()
