"""Running a comparison's variants where this deployment runs work.

Embedded mode (no REDIS_URL, Celery tasks eager): one daemon thread per variant, so the request
that created the run returns at once (like the runners of ``worker.dispatch``). Distributed
mode: one Celery task ``worker.tasks.run_compare_variant`` per variant, fanned out over the
workers. ``execute_variant`` is what either runs: it claims the variant, schedules the workload
in virtual time (``schedviz.compare.engine``; a scenario run's variant runs its scenario,
``schedviz.compare.scenarios``) writing progress now and then, and stores the
result, or the error when the run crashed.
"""

from __future__ import annotations

import logging
import os
import socket
import threading

from django.conf import settings
from django.db import connection

from schedviz.compare import engine, scenarios, services
from schedviz.compare.models import CompareRun, CompareVariant

logger = logging.getLogger(__name__)

SKIPPED, SUCCEEDED, FAILED, SUPERSEDED = "skipped", "succeeded", "failed", "superseded"

_lock = threading.Lock()
_threads: dict[int, threading.Thread] = {}


class _Superseded(Exception):
    """The execution no longer owns its variant: it stops without writing anything more."""


def start_run(run_id: int) -> None:
    variant_ids = list(
        CompareVariant.objects.filter(run_id=run_id)
        .order_by("position")
        .values_list("id", flat=True)
    )
    for variant_id in variant_ids:
        start_variant(variant_id)


def start_variant(variant_id: int) -> None:
    if settings.CELERY_TASK_ALWAYS_EAGER:
        thread = threading.Thread(
            target=_run_in_thread,
            args=(variant_id,),
            name=f"schedviz-compare-{variant_id}",
            daemon=True,
        )
        with _lock:
            _threads[variant_id] = thread
        thread.start()
    else:
        from worker.tasks import run_compare_variant

        run_compare_variant.delay(variant_id)


def variant_threads() -> list[threading.Thread]:
    """This process's variant threads still running (embedded mode)."""
    with _lock:
        return [thread for thread in _threads.values() if thread.is_alive()]


def process_name() -> str:
    return f"{socket.gethostname()}:{os.getpid()}"


def _run_in_thread(variant_id: int) -> None:
    try:
        execute_variant(variant_id)
    finally:
        connection.close()
        with _lock:
            _threads.pop(variant_id, None)


def execute_variant(variant_id: int) -> str:
    """Runs the variant unless it has finished; returns what became of it."""
    attempt = services.variant_claim(variant_id=variant_id, worker=process_name())
    if attempt is None:
        return SKIPPED
    variant = CompareVariant.objects.select_related("run").get(id=variant_id)

    def progress(done: int, total: int) -> None:
        if not services.variant_progress(
            variant_id=variant_id, attempt=attempt, done=done, total=total
        ):
            raise _Superseded  # another execution took the variant over, or it was deleted

    try:
        if variant.run.source == CompareRun.Source.SCENARIO:
            result = scenarios.run_scenario_variant(variant, progress=progress)
        else:
            result = engine.run_variant(
                variant.run.manifests,
                variant.configuration,
                scheduler_name=variant.profile,
                seed=variant.run.seed,
                progress=progress,
                extender_allowed_hosts=settings.SCHEDVIZ_EXTENDER_ALLOWED_HOSTS,
            )
    except _Superseded:
        return SUPERSEDED
    except Exception as error:
        logger.exception("variant %s of comparison %s failed", variant.name, variant.run_id)
        failed = services.variant_fail(
            variant_id=variant_id, attempt=attempt, error=f"{type(error).__name__}: {error}"
        )
        return FAILED if failed else SUPERSEDED
    finished = services.variant_finish(variant_id=variant_id, attempt=attempt, result=result)
    return SUCCEEDED if finished else SUPERSEDED
