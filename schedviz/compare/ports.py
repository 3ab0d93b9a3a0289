"""Where a comparison run is handed to whatever executes its variants, without knowing what
that is.

``compare_run_create`` calls ``start_run`` once its transaction has committed. The worker app
registers what starts a run (``worker.compare.start_run``: a thread per variant when embedded, a
Celery task per variant when distributed) in its ``AppConfig.ready``; the dependency points from
the worker to the comparison, never back. With none registered a run could never execute, so
``compare_run_create`` refuses to create one (``run_starter_registered``).
"""

from __future__ import annotations

from collections.abc import Callable

RunStarter = Callable[[int], None]

_run_starter: RunStarter | None = None


def register_run_starter(starter: RunStarter | None) -> RunStarter | None:
    """Makes ``starter(run_id)`` what starts a run's variants (None: nothing does); answers the
    one registered before."""
    global _run_starter
    previous, _run_starter = _run_starter, starter
    return previous


def run_starter_registered() -> bool:
    return _run_starter is not None


def start_run(run_id: int) -> None:
    """Hands the run to the registered starter."""
    if _run_starter is None:
        raise RuntimeError(f"no run starter is registered: comparison run {run_id} cannot start")
    _run_starter(run_id)
