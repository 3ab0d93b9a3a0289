"""The runner's group commit of binding cycles on the live clock (worker/binding.py)."""

from __future__ import annotations

import threading
from collections.abc import Iterator
from datetime import timedelta
from typing import Any

import pytest
from django.db import OperationalError
from django.utils import timezone
from runner_fixtures import RunnerThread, manifests

from schedviz.cluster import services
from schedviz.cluster.models import Change, Cluster, Cycle, Lease, Pod
from worker import runner, session
from worker.db_store import DatabaseStore
from worker.runner import STOP_IDLE, STOP_LEASE_LOST, run_cluster

pytestmark = pytest.mark.django_db(transaction=True)


@pytest.fixture(autouse=True)
def _settings(settings: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    settings.SCHEDVIZ_START_RUNNERS = False
    settings.SCHEDVIZ_RUNNER_IDLE_SECONDS = 0
    # One group for all the pods: bound once the queue is empty.
    monkeypatch.setattr(session, "BIND_BATCH", 1000)
    monkeypatch.setattr(session, "BIND_WAIT", 1000.0)


def live_cluster(nodes: int, pods: int) -> Cluster:
    cluster = services.cluster_create(name="live", speed=100.0)
    services.manifests_apply(cluster=cluster, text=manifests(nodes, pods))
    return cluster


def bound(cluster: Cluster) -> dict[str, str]:
    return dict(Pod.objects.filter(cluster=cluster).values_list("name", "node_name"))


def binds_per_pod(cluster: Cluster) -> dict[str, int]:
    binds: dict[str, int] = {}
    for name, manifest in Change.objects.filter(
        cluster=cluster, kind="Pod", type=Change.Type.MODIFIED
    ).values_list("name", "manifest"):
        if manifest.get("spec", {}).get("nodeName"):
            binds[name] = binds.get(name, 0) + 1
    return binds


def scheduled_cycles(cluster: Cluster) -> dict[str, str]:
    return dict(
        Cycle.objects.filter(cluster=cluster, result="Scheduled").values_list("pod_name", "node")
    )


def count_fences(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    fences: list[int] = []
    real = session.lease_fence

    def fence(**kwargs: Any) -> bool:
        fences.append(1)
        return real(**kwargs)

    monkeypatch.setattr(session, "lease_fence", fence)
    return fences


def test_the_binds_of_several_cycles_share_one_fenced_transaction(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    cluster = live_cluster(2, 6)
    fences = count_fences(monkeypatch)
    result = run_cluster(cluster.pk)
    assert result.stopped == STOP_IDLE and result.cycles == 6
    assert binds_per_pod(cluster) == {f"pod-{i}": 1 for i in range(6)}
    assert scheduled_cycles(cluster) == bound(cluster)
    # One group of six binds, one batch of Cycle rows, the queue saved when the runner stops
    # (each write fenced once).
    assert len(fences) == 3
    numbers = list(Cycle.objects.filter(cluster=cluster).order_by("id").values_list("number"))
    assert numbers == sorted(numbers)


def test_a_bind_that_fails_in_a_group_is_traced_requeued_and_leaves_the_others_bound(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    cluster = live_cluster(2, 4)
    real_bind = services.pod_bind
    failed: list[str] = []

    def bind(**kwargs: Any) -> services.PodBinding:
        # As a lost compare-and-set fails: nothing written (so the group needs no savepoint).
        if kwargs["name"] == "pod-2" and not failed:
            failed.append(kwargs["name"])
            raise services.BindConflict(["the compare-and-set lost"])
        return real_bind(**kwargs)

    monkeypatch.setattr(services, "pod_bind", bind)
    result = run_cluster(cluster.pk)
    assert result.stopped == STOP_IDLE and failed == ["pod-2"]
    assert binds_per_pod(cluster) == {f"pod-{i}": 1 for i in range(4)}
    (error,) = Cycle.objects.filter(cluster=cluster, pod_name="pod-2", result="Error")
    assert error.message == 'running Bind plugin "DefaultBinder": the compare-and-set lost'
    retried = Cycle.objects.get(cluster=cluster, pod_name="pod-2", result="Scheduled")
    assert retried.number > error.number
    assert scheduled_cycles(cluster) == bound(cluster)


class PausingGroup:
    """DatabaseStore.group that holds the runner thread before its first group commit begins."""

    def __init__(self, monkeypatch: pytest.MonkeyPatch) -> None:
        self.paused = threading.Event()
        self.resume = threading.Event()
        real = DatabaseStore.group

        def group(store: DatabaseStore, pods: Any = ()) -> Any:
            if not self.paused.is_set():
                self.paused.set()
                assert self.resume.wait(timeout=30)
            return real(store, pods)

        monkeypatch.setattr(DatabaseStore, "group", group)


@pytest.fixture
def thread_database(file_database: None) -> Iterator[None]:
    yield


def test_a_group_commit_fenced_by_a_lost_lease_binds_none(
    monkeypatch: pytest.MonkeyPatch, thread_database: None
) -> None:
    cluster = live_cluster(2, 5)
    pausing = PausingGroup(monkeypatch)
    paused = RunnerThread(cluster.pk, holder="paused")
    paused.start()
    assert pausing.paused.wait(timeout=20)
    # The pause outlasted the lease and another runner took it.
    Lease.objects.filter(cluster=cluster).update(
        holder="successor", renewed_at=timezone.now() - timedelta(seconds=1)
    )
    pausing.resume.set()
    paused.join(timeout=30)
    assert paused.result is not None and paused.result.stopped == STOP_LEASE_LOST
    assert not any(bound(cluster).values())
    assert binds_per_pod(cluster) == {}
    assert not Cycle.objects.filter(cluster=cluster).exists()


def test_a_runner_killed_inside_a_group_commit_loses_no_pod_and_binds_none_twice(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    cluster = live_cluster(2, 6)
    real_bind = DatabaseStore.bind
    calls = {"n": 0}

    def dying_bind(self: DatabaseStore, pod: Any, node_name: str) -> Any:
        calls["n"] += 1
        if calls["n"] == 4:
            raise SystemExit("killed")  # three binds done, the group not committed
        return real_bind(self, pod, node_name)

    monkeypatch.setattr(DatabaseStore, "bind", dying_bind)
    with pytest.raises(SystemExit):
        run_cluster(cluster.pk, holder="doomed")
    assert not any(bound(cluster).values())
    Lease.objects.filter(cluster=cluster).update(
        holder="doomed", renewed_at=timezone.now() - timedelta(minutes=1)
    )
    monkeypatch.setattr(DatabaseStore, "bind", real_bind)
    result = run_cluster(cluster.pk)
    assert result.acquired and result.cycles == 6
    assert binds_per_pod(cluster) == {f"pod-{i}": 1 for i in range(6)}
    assert scheduled_cycles(cluster) == bound(cluster)


def test_a_connection_dropped_in_a_group_commit_starts_over_and_binds_each_pod_once(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    cluster = live_cluster(2, 6)
    real_bind = services.pod_bind
    calls = {"n": 0}

    def bind(**kwargs: Any) -> services.PodBinding:
        calls["n"] += 1
        if calls["n"] == 3:
            raise OperationalError("server closed the connection unexpectedly")
        return real_bind(**kwargs)

    monkeypatch.setattr(runner, "DATABASE_RETRY_SECONDS", 0.01)
    monkeypatch.setattr(services, "pod_bind", bind)
    result = run_cluster(cluster.pk)
    assert result.stopped == STOP_IDLE
    assert binds_per_pod(cluster) == {f"pod-{i}": 1 for i in range(6)}
    assert scheduled_cycles(cluster) == bound(cluster)
    numbers = list(Cycle.objects.filter(cluster=cluster).values_list("number", flat=True))
    assert len(numbers) == len(set(numbers))
    assert not Cycle.objects.filter(cluster=cluster).exclude(result="Scheduled").exists()
