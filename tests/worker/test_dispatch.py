"""ensure_runner: a thread per cluster in embedded mode, the Celery task when distributed."""

from __future__ import annotations

import threading
from collections.abc import Iterator
from datetime import datetime, timedelta
from typing import Any

import pytest
from django.utils import timezone
from runner_fixtures import manifests, wait_until

from schedviz.cluster import services
from schedviz.cluster.models import Cluster, Cycle, Lease, Pod
from worker import dispatch, tasks
from worker.runner import STOP_IDLE, STOP_UP_TO_DATE, run_cluster

pytestmark = pytest.mark.django_db(transaction=True)


@pytest.fixture
def embedded(settings: Any, file_database: None) -> Iterator[None]:
    settings.CELERY_TASK_ALWAYS_EAGER = True
    settings.SCHEDVIZ_START_RUNNERS = True
    settings.SCHEDVIZ_RUNNER_IDLE_SECONDS = 0
    yield
    for thread in list(dispatch._threads.values()):
        thread.join(timeout=30)
        assert not thread.is_alive()


def all_bound(cluster: Cluster) -> bool:
    nodes = Pod.objects.filter(cluster=cluster).values_list("node_name", flat=True)
    return bool(nodes) and all(nodes)


def test_committed_changes_start_a_runner_thread_each_time(embedded: None) -> None:
    cluster = services.cluster_create(name="c", clock_mode=Cluster.ClockMode.VIRTUAL)
    services.manifests_apply(cluster=cluster, text=manifests(2, 3))
    wait_until(lambda: all_bound(cluster))
    first = dispatch._threads.get(cluster.pk)
    if first is not None:
        first.join(timeout=30)
    services.manifests_apply(cluster=cluster, text=manifests(0, 2, prefix="later"))
    wait_until(lambda: all_bound(cluster) and Pod.objects.filter(cluster=cluster).count() == 5)
    wait_until(lambda: dispatch.runner_thread(cluster.pk) is None)
    assert Cycle.objects.filter(cluster=cluster).count() == 5


def test_a_process_runs_one_thread_per_cluster(embedded: None, settings: Any) -> None:
    settings.SCHEDVIZ_START_RUNNERS = False
    settings.SCHEDVIZ_RUNNER_IDLE_SECONDS = 1
    cluster = services.cluster_create(name="c")
    dispatch.ensure_runner(cluster.pk)
    thread = dispatch.runner_thread(cluster.pk)
    assert thread is not None
    dispatch.ensure_runner(cluster.pk)
    assert dispatch.runner_thread(cluster.pk) is thread
    assert [t for t in threading.enumerate() if t.name == thread.name] == [thread]


def test_distributed_it_sends_the_task_unless_a_live_runner_holds_the_lease(
    settings: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    settings.CELERY_TASK_ALWAYS_EAGER = False
    settings.SCHEDVIZ_START_RUNNERS = False
    sent: list[tuple[Any, ...]] = []
    monkeypatch.setattr(tasks.run_cluster, "delay", lambda *args: sent.append(args))
    cluster = services.cluster_create(name="c")
    dispatch.ensure_runner(cluster.pk)
    ((cluster_id, requested_at),) = sent
    assert cluster_id == cluster.pk
    assert abs(datetime.fromisoformat(requested_at) - timezone.now()) < timedelta(seconds=5)
    assert dispatch.runner_thread(cluster.pk) is None
    Lease.objects.create(cluster=cluster, holder="alive", renewed_at=timezone.now())
    dispatch.ensure_runner(cluster.pk)
    assert len(sent) == 1
    Lease.objects.filter(cluster=cluster).update(renewed_at=timezone.now() - timedelta(minutes=1))
    dispatch.ensure_runner(cluster.pk)  # its holder died
    assert len(sent) == 2


def test_a_task_that_waited_behind_a_later_run_ends_at_once(settings: Any) -> None:
    settings.SCHEDVIZ_START_RUNNERS = False
    settings.SCHEDVIZ_RUNNER_IDLE_SECONDS = 0
    cluster = services.cluster_create(name="c", clock_mode=Cluster.ClockMode.VIRTUAL)
    services.manifests_apply(cluster=cluster, text=manifests(1, 1))
    requested_at = timezone.now() - timedelta(seconds=10)
    assert run_cluster(cluster.pk, requested_at=requested_at).cycles == 1
    late = run_cluster(cluster.pk, requested_at=requested_at)
    assert late.stopped == STOP_UP_TO_DATE and not late.acquired
    fresh = run_cluster(cluster.pk, requested_at=timezone.now())
    assert fresh.acquired and fresh.stopped == STOP_IDLE


def test_the_task_runs_the_runner_and_reports(settings: Any) -> None:
    settings.SCHEDVIZ_START_RUNNERS = False
    settings.SCHEDVIZ_RUNNER_IDLE_SECONDS = 0
    cluster = services.cluster_create(name="c", clock_mode=Cluster.ClockMode.VIRTUAL)
    services.manifests_apply(cluster=cluster, text=manifests(1, 2))
    report = tasks.run_cluster.apply(args=(cluster.pk, timezone.now().isoformat())).get()
    assert report["acquired"] and report["cycles"] == 2 and report["stopped"] == "idle"
