"""Distributed mode: a scenario run's configurations fanned out to real Celery workers over
Redis, each on a worker process of its own, with the results of the embedded path.

Run with REDIS_URL and DATABASE_URL (PostgreSQL) set, as scripts/test does; skipped without.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import pytest
from runner_fixtures import wait_until
from test_distributed import Workers, workers

from schedviz.celery import app
from schedviz.cluster import services as cluster_services
from schedviz.compare import scenarios
from schedviz.compare.models import CompareRun, CompareVariant
from schedviz.compare.services import VariantSpec
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

SCENARIO = (
    Path(__file__).resolve().parents[2] / "schedviz/lessons/priority-and-preemption/scenario.yaml"
)
SPREAD = "apiVersion: kubescheduler.config.k8s.io/v1\nkind: KubeSchedulerConfiguration\n"
PACK = SPREAD + (
    "profiles:\n- schedulerName: default-scheduler\n  pluginConfig:\n  - name: NodeResourcesFit\n"
    "    args: {scoringStrategy: {type: MostAllocated}}\n"
)


def _finished(run: CompareRun) -> bool:
    open_states = [CompareVariant.Status.PENDING, CompareVariant.Status.RUNNING]
    return not CompareVariant.objects.filter(run=run, status__in=open_states).exists()


def _results(run: CompareRun) -> dict[str, Any]:
    results = {}
    for variant in run.variants.order_by("position"):
        assert variant.status == CompareVariant.Status.SUCCEEDED, variant.error
        result = dict(variant.result or {})
        result["schedviz"] = dict(result["schedviz"])
        result["schedviz"].pop("cluster")  # the stored cluster: a new one per run
        results[variant.name] = result
    return results


def test_a_scenarios_configurations_fan_out_and_match_the_embedded_results(
    workers: Workers, settings: Any
) -> None:
    workers.start()
    workers.start()
    wait_until(lambda: len(app.control.ping(timeout=1.0)) == 2, timeout=60)
    cluster = cluster_services.cluster_create(name="scenario fan-out")
    specs = [
        VariantSpec(name="spread", configuration=SPREAD),
        VariantSpec(name="pack", configuration=PACK),
    ]
    text = SCENARIO.read_text()
    run = scenarios.scenario_run_create(cluster=cluster, scenario=text, variants=specs, seed=5)
    wait_until(lambda: _finished(run), timeout=180)
    distributed = _results(run)
    ran_on = set(run.variants.values_list("worker", flat=True))
    assert len(ran_on) == 2 and compare.process_name() not in ran_on

    settings.CELERY_TASK_ALWAYS_EAGER = True  # the embedded path: threads of this process
    embedded_run = scenarios.scenario_run_create(
        cluster=cluster, scenario=text, variants=specs, seed=5
    )
    wait_until(lambda: _finished(embedded_run), timeout=180)
    assert distributed == _results(embedded_run)
    assert distributed["spread"]["status"]["phase"] == "Succeeded"
