"""worker.compare: a variant executed (claimed, progress, result), a crash recorded as a failure,
a retried task that counts nothing twice, and the embedded threads the request does not wait for."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest
from runner_fixtures import wait_until

from schedviz.cluster.models import Cluster
from schedviz.compare import engine, selectors, services
from schedviz.compare.models import CompareRun, CompareVariant
from schedviz.compare.services import VariantSpec
from worker import compare, tasks

VARIANTS = [
    VariantSpec(name="spread", profile="default-scheduler"),
    VariantSpec(name="pack", profile="packer"),
]


@pytest.fixture
def run(settings: Any, two_profile_cluster: Cluster) -> CompareRun:
    settings.SCHEDVIZ_START_RUNNERS = False
    return services.compare_run_create(cluster=two_profile_cluster, variants=VARIANTS)


@pytest.mark.django_db
def test_an_executed_variant_stores_its_result_with_every_pod_done(run: CompareRun) -> None:
    variant = run.variants.get(name="pack")
    answer = tasks.run_compare_variant(variant.id)
    assert answer["outcome"] == compare.SUCCEEDED and answer["worker"] == compare.process_name()
    variant.refresh_from_db()
    assert variant.status == "succeeded"
    assert (variant.pods_done, variant.pods_total) == (5, 5)
    assert variant.result is not None
    assert {pod["node"] for pod in variant.result["pods"].values()} == {"node-b"}


@pytest.mark.django_db
def test_a_retried_task_of_a_finished_variant_changes_nothing(run: CompareRun) -> None:
    variant = run.variants.get(name="spread")
    compare.execute_variant(variant.id)
    variant.refresh_from_db()
    finished_at, result = variant.finished_at, variant.result
    assert compare.execute_variant(variant.id) == compare.SKIPPED
    variant.refresh_from_db()
    assert (variant.finished_at, variant.result, variant.pods_done) == (finished_at, result, 5)


@pytest.mark.django_db
def test_a_variant_that_crashes_is_marked_failed_with_its_error(
    run: CompareRun, monkeypatch: pytest.MonkeyPatch
) -> None:

    def crash(*args: Any, **kwargs: Any) -> dict[str, Any]:
        kwargs["progress"](1, 5)
        raise RuntimeError("the engine broke")

    monkeypatch.setattr(engine, "run_variant", crash)
    variant = run.variants.get(name="spread")
    assert compare.execute_variant(variant.id) == compare.FAILED
    variant.refresh_from_db()
    assert variant.status == "failed"
    assert variant.error == "RuntimeError: the engine broke"
    assert variant.pods_done == 1
    assert selectors.compare_run_state(run=run).status == "running"  # the other one is pending
    compare.execute_variant(run.variants.get(name="pack").id)
    state = selectors.compare_run_state(run=run)
    assert state.status == "failed" and state.comparison is None


@pytest.fixture
def embedded(settings: Any, file_database: None) -> Iterator[None]:
    settings.CELERY_TASK_ALWAYS_EAGER = True
    settings.SCHEDVIZ_START_RUNNERS = False  # no cluster runner: only the variants' threads
    yield
    for thread in compare.variant_threads():
        thread.join(timeout=60)
        assert not thread.is_alive()


@pytest.mark.django_db(transaction=True)
def test_embedded_runs_go_to_background_threads_and_finish_with_a_comparison(
    embedded: None, run: CompareRun
) -> None:
    # The threads started when the run's creating transaction committed.
    wait_until(
        lambda: (
            not CompareVariant.objects.filter(run=run)
            .exclude(status=CompareVariant.Status.SUCCEEDED)
            .exists()
        ),
        timeout=60,
    )
    state = selectors.compare_run_state(run=run)
    assert state.status == "succeeded"
    assert state.comparison is not None
    assert state.comparison.differing  # spread over two nodes, or packed onto one


@pytest.mark.django_db
def test_an_execution_taken_over_by_another_stops_at_its_next_progress_report(
    run: CompareRun, monkeypatch: pytest.MonkeyPatch
) -> None:
    variant = run.variants.get(name="spread")
    reports: list[int] = []

    def taken_over(*args: Any, **kwargs: Any) -> dict[str, Any]:
        kwargs["progress"](0, 5)
        reports.append(0)
        services.variant_claim(variant_id=variant.id, worker="the retry")
        kwargs["progress"](2, 5)
        reports.append(2)
        return {"pods": {}}

    monkeypatch.setattr(engine, "run_variant", taken_over)
    assert compare.execute_variant(variant.id) == compare.SUPERSEDED
    assert reports == [0]
    variant.refresh_from_db()
    assert (variant.status, variant.worker, variant.result) == ("running", "the retry", None)
