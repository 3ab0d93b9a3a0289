"""Where the cluster announces work to whatever runs its scheduler, without knowing what that is.

A committed user-facing write (an object, the run state) asks for a runner: the services call
``start_runner`` once the transaction has committed (``transaction.on_commit``). The worker app
registers what starts one (``worker.dispatch.ensure_runner``) in its ``AppConfig.ready``; the
dependency points from the worker to the cluster, never back. With no runner registered (no
worker app in this deployment) nothing is announced: the change waits in the change log, where
the next runner to start follows it (``selectors.stranded_clusters``).
"""

from __future__ import annotations

import logging
from collections.abc import Callable

logger = logging.getLogger(__name__)

RunnerStarter = Callable[[int], None]

_runner_starter: RunnerStarter | None = None


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
