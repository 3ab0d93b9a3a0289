"""The runner on the live clock: pause, step, resume; the lease; a runner killed mid-run."""

from __future__ import annotations

import gc
import os
import subprocess
import sys
import threading
import time
import weakref
from collections.abc import Iterator
from datetime import timedelta
from pathlib import Path
from typing import Any

import pytest
from django.db import OperationalError, transaction
from django.utils import timezone
from runner_fixtures import RunnerThread, manifests, wait_until

from schedviz.cluster import services
from schedviz.cluster.models import Change, Cluster, Cycle, Lease, Pod
from schedviz.cluster.selectors import stranded_clusters
from schedviz.scheduler.framework.interface import Code
from worker import runner, session
from worker.db_store import DatabaseStore
from worker.runner import (
    STOP_HELD,
    STOP_IDLE,
    STOP_LEASE_LOST,
    STOP_MAX_CYCLES,
    lease_acquire,
    run_cluster,
)

pytestmark = pytest.mark.django_db(transaction=True)

ROOT = str(Path(__file__).resolve().parents[2])


def live_cluster(nodes: int, pods: int, **fields: Any) -> Cluster:
    cluster = services.cluster_create(name="live", speed=100.0, **fields)
    services.manifests_apply(cluster=cluster, text=manifests(nodes, pods))
    return cluster


def bound(cluster: Cluster) -> dict[str, str]:
    return dict(Pod.objects.filter(cluster=cluster).values_list("name", "node_name"))


@pytest.fixture(autouse=True)
def _settings(settings: Any) -> None:
    settings.SCHEDVIZ_START_RUNNERS = False
    settings.SCHEDVIZ_RUNNER_IDLE_SECONDS = 0


@pytest.fixture
def threads(file_database: None) -> Iterator[list[RunnerThread]]:
    started: list[RunnerThread] = []
    yield started
    for thread in started:
        thread.join(timeout=30)
        assert not thread.is_alive()


def start(threads: list[RunnerThread], cluster_id: int, **kwargs: Any) -> RunnerThread:
    thread = RunnerThread(cluster_id, **kwargs)
    threads.append(thread)
    thread.start()
    return thread


def test_a_live_runner_binds_every_pod_and_keeps_the_scheduler_clock() -> None:
    cluster = live_cluster(2, 5)
    result = run_cluster(cluster.pk)
    assert result.stopped == STOP_IDLE and result.cycles == 5
    assert all(bound(cluster).values())
    cluster.refresh_from_db()
    assert cluster.scheduler_time > 0
    times = list(Cycle.objects.filter(cluster=cluster).values_list("scheduler_time", flat=True))
    assert times == sorted(times)


def test_an_ended_session_leaves_no_listed_cluster_behind(monkeypatch: pytest.MonkeyPatch) -> None:
    # A session freezes the process for the collector (gc.freeze) and unfreezes it as it ends;
    # its informer cache and scheduler, in reference cycles, are then garbage that only a full
    # collection frees. Not freed as the session ends, the next session's freeze kept them for
    # its lifetime, and so on: a server whose runner went round every few seconds kept every
    # session's pods (tests/webui/test_soak.py). With the collector off, only the runner's own
    # collection can free them here.
    kept: list[weakref.ref[Any]] = []
    run = session.Session.run

    def run_and_track(session: Any) -> None:
        run(session)
        kept.extend(weakref.ref(part) for part in (session, session.store, session.scheduler))

    monkeypatch.setattr(session.Session, "run", run_and_track)
    cluster = live_cluster(2, 0)
    gc.disable()
    try:
        for round_ in range(3):
            text = manifests(0, 5, prefix=f"round{round_}")
            services.manifests_apply(cluster=cluster, text=text)
            result = run_cluster(cluster.pk)
            assert result.stopped == STOP_IDLE and result.cycles == 5
            assert len(kept) == 3 * (round_ + 1)
            assert [ref() for ref in kept] == [None] * len(kept)
    finally:
        gc.enable()
    assert all(bound(cluster).values())


def test_a_runner_scheduling_a_stream_of_pods_keeps_its_session(
    settings: Any, monkeypatch: pytest.MonkeyPatch, threads: list[RunnerThread]
) -> None:
    # Between two pods of a stream the queue is empty: no retry at all, not futile retries.
    # Taken for those, the runner stopped every FUTILE_SLICE and a new session listed the
    # cluster again (16 sessions in the 45 s soak test).
    settings.SCHEDVIZ_RUNNER_IDLE_SECONDS = 1
    sessions: list[Any] = []
    run = session.Session.run

    def run_and_count(session: Any) -> None:
        sessions.append(session.result.stopped)
        run(session)

    monkeypatch.setattr(session.Session, "run", run_and_count)
    cluster = live_cluster(2, 0)
    start(threads, cluster.pk)
    wait_until(lambda: Lease.objects.filter(cluster=cluster).exclude(holder="").exists())
    streamed_until = time.monotonic() + session.FUTILE_SLICE * 2
    number = 0
    while time.monotonic() < streamed_until:
        text = manifests(0, 1, prefix=f"stream{number}")
        services.manifests_apply(cluster=cluster, text=text)
        number += 1
        time.sleep(0.1)
    threads[0].join(timeout=30)
    assert threads[0].result is not None and threads[0].result.stopped == STOP_IDLE
    assert threads[0].result.cycles == number and all(bound(cluster).values())
    assert len(sessions) == 1


def test_paused_it_runs_only_the_steps_asked_for(settings: Any) -> None:
    cluster = live_cluster(1, 4, run_state=Cluster.RunState.PAUSED)
    Cluster.objects.filter(pk=cluster.pk).update(pending_steps=2)
    result = run_cluster(cluster.pk)
    assert result.cycles == 2
    assert sorted(n for n in bound(cluster).values() if n) == ["node-0", "node-0"]
    cluster.refresh_from_db()
    assert cluster.pending_steps == 0


def test_a_step_asked_for_while_the_runner_stops_is_taken(monkeypatch: pytest.MonkeyPatch) -> None:
    # The runner reads steps only every CONTROL_INTERVAL, and no runner is started for a step
    # while its lease is held: one asked for as it gives the lease up is its to take.
    cluster = live_cluster(1, 3, run_state=Cluster.RunState.PAUSED)
    release = runner.lease_release
    asked: list[int] = []

    def step_then_release(*, cluster_id: int, holder: str) -> None:
        if not asked:
            asked.append(cluster_id)
            services.cluster_step(cluster=cluster)
        release(cluster_id=cluster_id, holder=holder)

    monkeypatch.setattr(runner, "lease_release", step_then_release)
    result = run_cluster(cluster.pk)
    assert asked and result.stopped == STOP_IDLE
    assert result.cycles == 1
    assert sorted(n for n in bound(cluster).values() if n) == ["node-0"]
    cluster.refresh_from_db()
    assert cluster.pending_steps == 0


def test_pause_step_and_resume_reach_a_running_runner(
    settings: Any, threads: list[RunnerThread]
) -> None:
    settings.SCHEDVIZ_RUNNER_IDLE_SECONDS = 1
    cluster = live_cluster(1, 5, run_state=Cluster.RunState.PAUSED)
    start(threads, cluster.pk)
    wait_until(lambda: Lease.objects.filter(cluster=cluster).exclude(holder="").exists())
    time.sleep(0.3)
    assert Cycle.objects.filter(cluster=cluster).count() == 0
    services.cluster_step(cluster=cluster)
    wait_until(lambda: Cycle.objects.filter(cluster=cluster).count() == 1)
    services.cluster_step(cluster=cluster)
    wait_until(lambda: Cycle.objects.filter(cluster=cluster).count() == 2)
    time.sleep(0.3)
    assert Cycle.objects.filter(cluster=cluster).count() == 2
    services.cluster_set_run_state(cluster=cluster, run_state=Cluster.RunState.RUNNING)
    wait_until(lambda: all(bound(cluster).values()))
    threads[0].join(timeout=30)
    assert threads[0].result is not None and threads[0].result.cycles == 5


def test_a_second_runner_leaves_a_cluster_whose_lease_is_held(threads: list[RunnerThread]) -> None:
    cluster = live_cluster(1, 2)
    Lease.objects.create(cluster=cluster, holder="someone-else", renewed_at=timezone.now())
    result = run_cluster(cluster.pk)
    assert result.stopped == STOP_HELD and not result.acquired and result.cycles == 0
    assert not any(bound(cluster).values())
    assert Lease.objects.get(cluster=cluster).holder == "someone-else"


def test_an_expired_lease_is_taken_over() -> None:
    cluster = live_cluster(1, 2)
    Lease.objects.create(
        cluster=cluster, holder="dead-worker", renewed_at=timezone.now() - timedelta(minutes=1)
    )
    result = run_cluster(cluster.pk, holder="me")
    assert result.acquired and result.cycles == 2
    assert all(bound(cluster).values())
    assert Lease.objects.get(cluster=cluster).holder == ""


def test_of_two_runners_racing_for_a_lease_one_wins() -> None:
    cluster = live_cluster(0, 0)
    assert lease_acquire(cluster_id=cluster.pk, holder="a")
    assert not lease_acquire(cluster_id=cluster.pk, holder="b")
    assert lease_acquire(cluster_id=cluster.pk, holder="a")  # renewal by its holder


def test_while_one_runner_runs_another_exits_at_once(
    settings: Any, threads: list[RunnerThread]
) -> None:
    settings.SCHEDVIZ_RUNNER_IDLE_SECONDS = 1
    cluster = live_cluster(1, 1)
    first = start(threads, cluster.pk)
    wait_until(lambda: all(bound(cluster).values()))
    second = run_cluster(cluster.pk)
    assert second.stopped == STOP_HELD
    first.join(timeout=30)
    assert first.result is not None and first.result.stopped == STOP_IDLE


def test_a_runner_whose_lease_is_taken_stops(settings: Any, threads: list[RunnerThread]) -> None:
    settings.SCHEDVIZ_RUNNER_IDLE_SECONDS = 30
    cluster = live_cluster(1, 1)
    first = start(threads, cluster.pk)
    wait_until(lambda: all(bound(cluster).values()))
    Lease.objects.filter(cluster=cluster).update(holder="usurper", renewed_at=timezone.now())
    first.join(timeout=10)
    assert first.result is not None and first.result.stopped == STOP_LEASE_LOST
    assert Lease.objects.get(cluster=cluster).holder == "usurper"


def test_a_runner_killed_between_assume_and_bind_loses_no_pod(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    cluster = live_cluster(2, 6, clock_mode=Cluster.ClockMode.VIRTUAL)
    real_bind = DatabaseStore.bind
    calls = {"n": 0}

    def dying_bind(self: DatabaseStore, pod: Any, node_name: str) -> Any:
        calls["n"] += 1
        if calls["n"] == 3:
            raise SystemExit("killed")  # the third pod is assumed, never bound
        return real_bind(self, pod, node_name)

    monkeypatch.setattr(DatabaseStore, "bind", dying_bind)
    with pytest.raises(SystemExit):
        run_cluster(cluster.pk, holder="doomed")
    assert sum(1 for node in bound(cluster).values() if node) == 2
    # A killed process does not give its lease up: it expires.
    Lease.objects.filter(cluster=cluster).update(
        holder="doomed", renewed_at=timezone.now() - timedelta(minutes=1)
    )
    monkeypatch.setattr(DatabaseStore, "bind", real_bind)
    result = run_cluster(cluster.pk)
    assert result.acquired and result.cycles == 4
    assert all(bound(cluster).values())
    binds = Change.objects.filter(cluster=cluster, kind="Pod", type=Change.Type.MODIFIED)
    bound_names = [c.name for c in binds if c.manifest.get("spec", {}).get("nodeName")]
    assert sorted(bound_names) == sorted(f"pod-{i}" for i in range(6))


def binds_per_pod(cluster: Cluster) -> dict[str, int]:
    """How many binds of each pod the change log holds."""
    binds: dict[str, int] = {}
    for name, manifest in Change.objects.filter(
        cluster=cluster, kind="Pod", type=Change.Type.MODIFIED
    ).values_list("name", "manifest"):
        if manifest.get("spec", {}).get("nodeName"):
            binds[name] = binds.get(name, 0) + 1
    return binds


def assert_consistent(cluster: Cluster, pods: int) -> None:
    """Every pod bound once; the change log, the pods and the stored traces agree."""
    assert binds_per_pod(cluster) == {f"pod-{i}": 1 for i in range(pods)}
    numbers = list(Cycle.objects.filter(cluster=cluster).values_list("number", flat=True))
    assert len(numbers) == len(set(numbers))
    assert not Cycle.objects.filter(cluster=cluster).exclude(result="Scheduled").exists()
    scheduled = dict(
        Cycle.objects.filter(cluster=cluster, result="Scheduled").values_list("pod_name", "node")
    )
    assert scheduled == bound(cluster)


class PausingBind:
    """DatabaseStore.bind that holds a runner thread at its ``at``-th bind until resumed, as a
    process stopped by the machine (SIGSTOP, a long GC pause, a suspended VM) would be held."""

    def __init__(self, monkeypatch: pytest.MonkeyPatch, at: int) -> None:
        self.calls = 0
        self.paused = threading.Event()
        self.resume = threading.Event()
        real = DatabaseStore.bind

        def bind(store: DatabaseStore, pod: Any, node_name: str) -> Any:
            if isinstance(threading.current_thread(), RunnerThread):
                self.calls += 1
                if self.calls == at:
                    self.paused.set()
                    assert self.resume.wait(timeout=30)
            return real(store, pod, node_name)

        monkeypatch.setattr(DatabaseStore, "bind", bind)


def expire_lease(cluster: Cluster) -> None:
    Lease.objects.filter(cluster=cluster).update(renewed_at=timezone.now() - timedelta(minutes=1))


def test_a_holder_paused_past_its_lease_binds_nothing_once_another_took_over(
    monkeypatch: pytest.MonkeyPatch, threads: list[RunnerThread]
) -> None:
    monkeypatch.setattr(session, "FLUSH_CYCLES", 1)  # cycles 1 and 2 are stored before the pause
    cluster = live_cluster(2, 6, clock_mode=Cluster.ClockMode.VIRTUAL)
    pausing = PausingBind(monkeypatch, at=3)
    paused = start(threads, cluster.pk, holder="paused")
    assert pausing.paused.wait(timeout=20)
    expire_lease(cluster)  # the pause outlasted the lease
    successor = run_cluster(cluster.pk, holder="successor")
    assert successor.acquired and successor.cycles == 4
    pausing.resume.set()  # the paused runner wakes up in the middle of its third cycle
    paused.join(timeout=30)
    assert paused.result is not None and paused.result.acquired
    # Its bind was refused, and the trace of that cycle (its number is the successor's now)
    # was not written.
    assert_consistent(cluster, 6)
    assert list(Cycle.objects.filter(cluster=cluster).values_list("number", flat=True)) == [
        1,
        2,
        3,
        4,
        5,
        6,
    ]


def test_a_holder_paused_past_its_lease_that_nobody_took_starts_over_and_binds_the_rest(
    monkeypatch: pytest.MonkeyPatch, threads: list[RunnerThread]
) -> None:
    monkeypatch.setattr(session, "FLUSH_CYCLES", 1)
    cluster = live_cluster(2, 6, clock_mode=Cluster.ClockMode.VIRTUAL)
    pausing = PausingBind(monkeypatch, at=3)
    paused = start(threads, cluster.pk, holder="paused")
    assert pausing.paused.wait(timeout=20)
    expire_lease(cluster)
    pausing.resume.set()
    paused.join(timeout=30)
    # The expired lease refused the bind it woke up in; the runner took the lease again, listed
    # the cluster afresh and scheduled the pod with the others.
    assert paused.result is not None and paused.result.stopped == STOP_IDLE
    assert_consistent(cluster, 6)


def test_change_rows_delivered_again_and_out_of_order_bind_each_pod_once(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    cluster = live_cluster(2, 10, clock_mode=Cluster.ClockMode.VIRTUAL)
    real_follow = DatabaseStore.follow
    redelivered = {"rows": 0}

    def follow_then_redeliver_backwards(store: DatabaseStore) -> int:
        applied = real_follow(store)
        # Every row so far again, newest first: each pod's addition comes after its bind.
        for row in Change.objects.filter(cluster=cluster, id__lte=store.last_change_id).order_by(
            "-id"
        ):
            store._apply_change(row)
            redelivered["rows"] += 1
        return applied

    monkeypatch.setattr(DatabaseStore, "follow", follow_then_redeliver_backwards)
    result = run_cluster(cluster.pk)
    assert result.cycles == 10 and redelivered["rows"] > 10
    assert_consistent(cluster, 10)


def connection_dropped() -> OperationalError:
    return OperationalError("server closed the connection unexpectedly")


@pytest.mark.parametrize("where", ["bind-before-commit", "bind-after-commit", "following"])
def test_a_dropped_database_connection_is_reopened_and_each_pod_bound_once(
    monkeypatch: pytest.MonkeyPatch, where: str
) -> None:
    cluster = live_cluster(2, 8, clock_mode=Cluster.ClockMode.VIRTUAL)
    calls = {"bind": 0, "follow": 0}
    real_bind, real_follow = services.pod_bind, DatabaseStore.follow

    def failing_bind(**kwargs: Any) -> services.PodBinding:
        calls["bind"] += 1
        if calls["bind"] == 3 and where == "bind-before-commit":
            raise connection_dropped()
        binding = real_bind(**kwargs)
        if calls["bind"] == 3 and where == "bind-after-commit":
            # Committed, but the answer never arrives.
            def drop() -> None:
                raise connection_dropped()

            transaction.on_commit(drop)
        return binding

    def failing_follow(store: DatabaseStore) -> int:
        calls["follow"] += 1
        if calls["follow"] == 5 and where == "following":
            raise connection_dropped()
        return real_follow(store)

    monkeypatch.setattr(runner, "DATABASE_RETRY_SECONDS", 0.01)
    monkeypatch.setattr(services, "pod_bind", failing_bind)
    monkeypatch.setattr(DatabaseStore, "follow", failing_follow)
    result = run_cluster(cluster.pk)
    assert result.stopped == STOP_IDLE
    assert binds_per_pod(cluster) == {f"pod-{i}": 1 for i in range(8)}
    numbers = list(Cycle.objects.filter(cluster=cluster).values_list("number", flat=True))
    assert len(numbers) == len(set(numbers))
    assert not Cycle.objects.filter(cluster=cluster).exclude(result="Scheduled").exists()
    scheduled = dict(
        Cycle.objects.filter(cluster=cluster, result="Scheduled").values_list("pod_name", "node")
    )
    placed = bound(cluster)
    assert all(placed[pod] == node for pod, node in scheduled.items())
    # Only the cycle whose bind committed unanswered is without its trace.
    untraced = set(placed) - set(scheduled)
    assert len(untraced) == (1 if where == "bind-after-commit" else 0)


def test_max_cycles_stops_a_run_and_the_next_one_goes_on() -> None:
    cluster = live_cluster(1, 4, clock_mode=Cluster.ClockMode.VIRTUAL)
    first = run_cluster(cluster.pk, max_cycles=1)
    assert first.stopped == STOP_MAX_CYCLES and first.cycles == 1
    second = run_cluster(cluster.pk)
    assert second.cycles == 3
    assert list(Cycle.objects.filter(cluster=cluster).values_list("number", flat=True)) == [
        1,
        2,
        3,
        4,
    ]


def test_a_bind_that_loses_the_compare_and_set_is_an_error_status() -> None:
    cluster = live_cluster(2, 1)
    one, two = DatabaseStore(cluster), DatabaseStore(cluster)
    one.list_cluster()
    two.list_cluster()
    pod = one.get("Pod", "default/pod-0")
    assert one.bind(pod, "node-0") is None
    status = two.bind(pod, "node-1")
    assert status is not None and status.code == Code.Error
    assert status.reasons == (
        'Operation cannot be fulfilled on pods/binding "pod-0": pod pod-0 is already assigned '
        'to node "node-0"',
    )
    assert bound(cluster) == {"pod-0": "node-0"}


def test_a_running_runner_picks_up_a_new_scheduler_configuration(
    settings: Any, threads: list[RunnerThread]
) -> None:
    settings.SCHEDVIZ_RUNNER_IDLE_SECONDS = 2
    cluster = live_cluster(1, 0)
    pod = """
apiVersion: v1
kind: Pod
metadata: {name: waits}
spec: {schedulerName: second-scheduler, containers: [{name: c, image: busybox}]}
"""
    services.manifests_apply(cluster=cluster, text=pod)
    start(threads, cluster.pk)
    wait_until(lambda: Lease.objects.filter(cluster=cluster).exclude(holder="").exists())
    time.sleep(0.3)
    assert bound(cluster) == {"waits": ""}
    config = """
apiVersion: kubescheduler.config.k8s.io/v1
kind: KubeSchedulerConfiguration
profiles: [{schedulerName: default-scheduler}, {schedulerName: second-scheduler}]
"""
    services.manifests_apply(cluster=cluster, text=config)
    wait_until(lambda: bound(cluster) == {"waits": "node-0"})


def test_a_node_added_while_it_runs_lets_a_pending_pod_through_after_its_backoff(
    settings: Any, threads: list[RunnerThread]
) -> None:
    settings.SCHEDVIZ_RUNNER_IDLE_SECONDS = 2
    cluster = live_cluster(0, 0)
    small_node_big_pod = """
apiVersion: v1
kind: Node
metadata: {name: small}
status: {allocatable: {cpu: "1", pods: "110"}}
---
apiVersion: v1
kind: Pod
metadata: {name: big}
spec: {containers: [{name: c, image: busybox, resources: {requests: {cpu: "2"}}}]}
"""
    services.manifests_apply(cluster=cluster, text=small_node_big_pod)
    start(threads, cluster.pk)
    wait_until(lambda: Cycle.objects.filter(cluster=cluster).exists())
    services.manifests_apply(cluster=cluster, text=manifests(1, 0))
    wait_until(lambda: bound(cluster) == {"big": "node-0"})
    wait_until(lambda: Cycle.objects.filter(cluster=cluster).count() == 2)
    results = list(Cycle.objects.filter(cluster=cluster).values_list("result", "attempt"))
    assert results == [("Unschedulable", 1), ("Scheduled", 2)]


def test_a_cluster_with_a_change_no_runner_saw_is_stranded_until_a_runner_runs() -> None:
    cluster = live_cluster(1, 1, clock_mode=Cluster.ClockMode.VIRTUAL)
    assert stranded_clusters() == [cluster.pk]  # its task never ran (the broker was down)
    run_cluster(cluster.pk)
    assert stranded_clusters() == []
    Lease.objects.filter(cluster=cluster).update(renewed_at=timezone.now() - timedelta(minutes=1))
    services.manifests_apply(cluster=cluster, text=manifests(0, 1, prefix="later"))
    assert stranded_clusters() == [cluster.pk]


@pytest.mark.parametrize("where", ["inside-bind", "after-bind"])
def test_a_runner_process_killed_in_or_after_a_bind_loses_nothing_and_binds_nothing_twice(
    file_database: None, tmp_path: Path, where: str
) -> None:
    from django.db import connection

    if connection.vendor != "sqlite":
        pytest.skip("the killed process opens the test's SQLite file")
    cluster = live_cluster(2, 6, clock_mode=Cluster.ClockMode.VIRTUAL)
    marker = tmp_path / "stopped"
    env = {k: v for k, v in os.environ.items() if k not in ("DATABASE_URL", "REDIS_URL")}
    env.update(SCHEDVIZ_VAR_DIR=str(tmp_path), SCHEDVIZ_START_RUNNERS="false", PYTHONPATH=ROOT)
    child = subprocess.Popen(
        [
            sys.executable,
            str(Path(__file__).parent / "killed_runner.py"),
            str(cluster.pk),
            where,
            str(marker),
        ],
        cwd=ROOT,
        env=env,
    )
    try:
        wait_until(marker.exists, timeout=60)
    finally:
        child.kill()
        child.wait()
    assert Lease.objects.get(cluster=cluster).holder == "doomed"  # a dead holder keeps it
    assert not Cycle.objects.filter(cluster=cluster).exists()  # none of its cycles written
    was_bound = sum(1 for node in bound(cluster).values() if node)
    assert was_bound == (3 if where == "after-bind" else 2)
    expire_lease(cluster)
    result = run_cluster(cluster.pk)
    assert result.acquired and result.cycles == 6 - was_bound
    # Each pod bound once, the change log and the pods agree; the traces of the dead runner's
    # last cycles were lost with it: the pods it bound have no Cycle row, and are not scheduled
    # again.
    assert binds_per_pod(cluster) == {f"pod-{i}": 1 for i in range(6)}
    scheduled = dict(
        Cycle.objects.filter(cluster=cluster, result="Scheduled").values_list("pod_name", "node")
    )
    placed = bound(cluster)
    assert len(scheduled) == 6 - was_bound
    assert all(placed[pod] == node for pod, node in scheduled.items())
    assert list(Cycle.objects.filter(cluster=cluster).values_list("number", flat=True)) == list(
        range(1, 7 - was_bound)
    )


def test_writes_slower_than_the_flush_interval_still_leave_cycles_between_them(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    cluster = live_cluster(2, 30)
    monkeypatch.setattr(session, "FLUSH_INTERVAL", 0.1)
    monkeypatch.setattr(session, "FLUSH_CYCLES", 5)
    monkeypatch.setattr(session, "BIND_BATCH", 1)  # each trace ready after its own cycle
    real_write = session.Session._write_records
    writes: list[int] = []

    def slow_write(session: Any, traces: list[Any], *args: Any, **kwargs: Any) -> None:
        if traces:
            writes.append(len(traces))
            time.sleep(0.15)  # longer than the interval: a big queue saved on a loaded machine
        real_write(session, traces, *args, **kwargs)

    monkeypatch.setattr(session.Session, "_write_records", slow_write)
    result = run_cluster(cluster.pk)
    assert result.stopped == STOP_IDLE and result.cycles == 30
    assert sum(writes) == 30
    # Timed from the end of the last write, not its start: not one write per cycle.
    assert len(writes) <= 15
