"""Distributed mode: a comparison's variants fanned out to real Celery workers over Redis, each
on a worker process of its own, with the results of the embedded path.

Run with REDIS_URL and DATABASE_URL (PostgreSQL) set, as scripts/test does; skipped without.
"""

from __future__ import annotations

import os
from typing import Any

import pytest
from runner_fixtures import wait_until
from test_distributed import Workers, workers

from schedviz.celery import app
from schedviz.cluster import services as cluster_services
from schedviz.compare import services
from schedviz.compare.management.commands.bench_compare import variant_specs, workload_yaml
from schedviz.compare.models import CompareRun, CompareVariant
from worker import compare

__all__ = ["workers"]  # a fixture, used by name

pytestmark = [
    pytest.mark.distributed,
    pytest.mark.skipif(
        not (os.environ.get("REDIS_URL") and os.environ.get("DATABASE_URL")),
        reason="distributed tests need REDIS_URL and DATABASE_URL (PostgreSQL) set",
    ),
    pytest.mark.django_db(transaction=True),
]


def _finished(run: CompareRun) -> bool:
    open_states = [CompareVariant.Status.PENDING, CompareVariant.Status.RUNNING]
    return not CompareVariant.objects.filter(run=run, status__in=open_states).exists()


def _results(run: CompareRun) -> dict[str, Any]:
    results = {}
    for variant in run.variants.order_by("position"):
        assert variant.status == CompareVariant.Status.SUCCEEDED, variant.error
        result = dict(variant.result or {})
        result.pop("wallSeconds")  # the only field that varies run to run
        results[variant.name] = result
    return results


def test_two_variants_fan_out_to_two_workers_and_match_the_embedded_results(
    workers: Workers, settings: Any
) -> None:
    workers.start()
    workers.start()
    wait_until(lambda: len(app.control.ping(timeout=1.0)) == 2, timeout=60)
    cluster = cluster_services.cluster_create(name="fan-out")
    text = workload_yaml(20, 200)
    specs = variant_specs(2)
    run = services.compare_run_create(
        cluster=cluster, source="manifests", manifests=text, variants=specs, seed=5
    )
    wait_until(lambda: _finished(run), timeout=180)
    distributed = _results(run)
    ran_on = set(run.variants.values_list("worker", flat=True))
    assert len(ran_on) == 2 and compare.process_name() not in ran_on

    settings.CELERY_TASK_ALWAYS_EAGER = True  # the embedded path: threads of this process
    embedded_run = services.compare_run_create(
        cluster=cluster, source="manifests", manifests=text, variants=specs, seed=5
    )
    wait_until(lambda: _finished(embedded_run), timeout=180)
    assert set(embedded_run.variants.values_list("worker", flat=True)) == {compare.process_name()}
    embedded = _results(embedded_run)
    assert distributed == embedded
    assert len(distributed["least-allocated"]["pods"]) == 200
    assert distributed["least-allocated"]["pods"] != distributed["most-allocated"]["pods"]
