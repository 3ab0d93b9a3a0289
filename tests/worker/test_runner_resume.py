"""A queue with the cluster's lifetime and a clock that runs without a runner
(docs/live-system.md, "The queue between runners" and "Time"): a new runner resumes the saved
queue, changes made while no runner was alive reach it as the events they are, a live cluster's
clock is wall time times speed, and a runner with work due later stops and is woken up then."""

from __future__ import annotations

import time
from collections.abc import Iterator
from typing import Any

import pytest
from runner_fixtures import RunnerThread, wait_until

from schedviz.cluster import services
from schedviz.cluster.clock import cluster_clock_time
from schedviz.cluster.models import Cluster, Cycle, PendingPods, Pod
from schedviz.cluster.queue_state import queue_state_get
from schedviz.scheduler.backend.queue.persistence import POD_FIELDS
from worker import dispatch, session
from worker.runner import (
    STOP_GONE,
    STOP_IDLE,
    STOP_MAX_SECONDS,
    STOP_UP_TO_DATE,
    run_cluster,
)
from worker.session import FUTILE_SLICE
from worker.session_clock import FUTILE_WAKE_FLOOR

pytestmark = pytest.mark.django_db(transaction=True)

SMALL_NODE = """
apiVersion: v1
kind: Node
metadata: {name: %s}
status: {allocatable: {cpu: "%s", memory: 8Gi, pods: "110"}}
"""
BIG_POD = """
apiVersion: v1
kind: Pod
metadata: {name: big}
spec: {containers: [{name: c, image: busybox, resources: {requests: {cpu: "8"}}}]}
"""
PRIORITY_CLASS = """
apiVersion: scheduling.k8s.io/v1
kind: PriorityClass
metadata: {name: unrelated}
value: 10
"""


@pytest.fixture(autouse=True)
def _settings(settings: Any) -> Iterator[None]:
    settings.SCHEDVIZ_START_RUNNERS = False
    settings.SCHEDVIZ_RUNNER_IDLE_SECONDS = 0
    yield
    dispatch.cancel_wake_ups()


def stuck_cluster(speed: float = 1.0) -> Cluster:
    """A live cluster whose one pod fits no node: unschedulable, waiting for a node event."""
    cluster = services.cluster_create(name="stuck", speed=speed)
    services.manifests_apply(cluster=cluster, text=SMALL_NODE % ("small", "2") + "---" + BIG_POD)
    return cluster


def attempts(cluster: Cluster) -> list[tuple[int, str]]:
    return list(
        Cycle.objects.filter(cluster=cluster, pod_name="big")
        .order_by("number")
        .values_list("attempt", "result")
    )


def test_an_unschedulable_pod_is_not_retried_by_a_change_its_plugins_ignore() -> None:
    cluster = stuck_cluster()
    first = run_cluster(cluster.pk)
    assert (first.stopped, first.cycles) == (STOP_IDLE, 1)
    saved = queue_state_get(cluster_id=cluster.pk)
    assert saved is not None
    (saved_entry,) = saved.state["queue"]["unschedulablePods"]
    entry = dict(zip(POD_FIELDS, saved_entry, strict=True))
    assert (entry["pod"], entry["attempts"], entry["unschedulablePlugins"]) == (
        "default/big",
        1,
        ["NodeResourcesFit"],
    )
    # While no runner is alive: a change no plugin that rejected the pod registered for.
    services.manifests_apply(cluster=cluster, text=PRIORITY_CLASS)
    assert run_cluster(cluster.pk).cycles == 0
    assert attempts(cluster) == [(1, "Unschedulable")]
    # A node the pod fits: the event NodeResourcesFit's hint accepts, delivered to the resumed
    # queue from the change log; the pod is retried, its attempts counted on.
    services.manifests_apply(cluster=cluster, text=SMALL_NODE % ("large", "16"))
    assert run_cluster(cluster.pk).cycles == 1
    assert attempts(cluster) == [(1, "Unschedulable"), (2, "Scheduled")]
    assert Pod.objects.get(cluster=cluster, name="big").node_name == "large"


def test_a_node_that_came_and_went_while_no_runner_ran_is_seen_as_both_events() -> None:
    cluster = stuck_cluster()
    run_cluster(cluster.pk)
    services.manifests_apply(cluster=cluster, text=SMALL_NODE % ("large", "16"))
    services.objects_delete(cluster=cluster, refs=[services.ObjectRef("Node", "large", "")])
    # The node add moved the pod (after its backoff, which the live clock runs out): it is
    # tried once more and finds no node again.
    result = run_cluster(cluster.pk, max_seconds=5)
    assert result.cycles == 1
    assert attempts(cluster) == [(1, "Unschedulable"), (2, "Unschedulable")]


def test_a_saved_queue_for_another_configuration_is_not_resumed() -> None:
    cluster = stuck_cluster()
    run_cluster(cluster.pk)
    Cluster.objects.filter(pk=cluster.pk).update(scheduler_settings={"podInitialBackoffSeconds": 2})
    # A fresh scheduler, as a restarted kube-scheduler: the pod is queued and tried at once.
    assert run_cluster(cluster.pk).cycles == 1
    assert [a for a, _ in attempts(cluster)] == [1, 1]


def test_a_live_clusters_clock_runs_on_while_no_runner_is_alive() -> None:
    cluster = stuck_cluster(speed=20.0)
    run_cluster(cluster.pk)
    cluster.refresh_from_db()
    walls = [time.time()]
    before = cluster_clock_time(cluster=cluster, wall=walls[0])
    time.sleep(0.5)
    cluster.refresh_from_db()
    walls.append(time.time())
    after = cluster_clock_time(cluster=cluster, wall=walls[1])
    # Twenty scheduler seconds a wall second, however long the sleep really was.
    assert after - before == pytest.approx((walls[1] - walls[0]) * 20, rel=1e-6)
    assert after - before >= 0.5 * 20 * 0.999
    services.manifests_apply(cluster=cluster, text=SMALL_NODE % ("large", "16"))
    run_cluster(cluster.pk)
    second = Cycle.objects.filter(cluster=cluster).order_by("-number").first()
    assert second is not None and second.scheduler_time >= after


def test_a_runner_with_work_due_later_stops_and_is_woken_up_then(file_database: None) -> None:
    # At speed 100 the 5-minute unschedulablePods flush is 3 wall seconds away.
    cluster = stuck_cluster(speed=100.0)
    result = run_cluster(cluster.pk)
    assert result.stopped == STOP_IDLE
    # The wake-up is the flush that moves the pod: the first 30 s flush tick at least 300 s
    # after its attempt (podMaxInUnschedulablePodsDuration), read on the cluster's own clock at
    # the wake-up's wall time (how long the runner took to get there does not matter).
    first = Cycle.objects.get(cluster=cluster, attempt=1)
    cluster.refresh_from_db()
    assert result.wake_in is not None and result.wake_at is not None
    due = cluster_clock_time(cluster=cluster, wall=result.wake_at)
    assert first.scheduler_time + 300.0 <= due + 1e-3 < first.scheduler_time + 330.0 + 1e-3
    assert 0 < result.wake_in <= 3.3  # at most 330 scheduler seconds at speed 100
    assert PendingPods.objects.get(cluster=cluster).wake_at == result.wake_at
    dispatch.wake_later(result)
    # Nobody touches the cluster: the flush retries the pod once, at its time.
    wait_until(lambda: len(attempts(cluster)) == 2, timeout=15)
    retried = Cycle.objects.filter(cluster=cluster).order_by("-number").first()
    assert retried is not None and retried.attempt == 2
    assert retried.scheduler_time >= first.scheduler_time + 300.0
    thread = dispatch.runner_thread(cluster.pk)
    if thread is not None:
        thread.join(timeout=10)
    assert attempts(cluster) == [(1, "Unschedulable"), (2, "Unschedulable")]


def test_a_wake_up_that_a_later_runner_replaced_ends_at_once() -> None:
    cluster = stuck_cluster(speed=100.0)
    first = run_cluster(cluster.pk)
    assert first.wake_at is not None
    # The same wake-up, saved again by a runner that ran for an unrelated change, still holds.
    services.manifests_apply(cluster=cluster, text=PRIORITY_CLASS)
    second = run_cluster(cluster.pk)
    assert second.wake_at == pytest.approx(first.wake_at, abs=1e-3)
    # A node the pod fits: the next runner schedules it and needs no wake-up.
    services.manifests_apply(cluster=cluster, text=SMALL_NODE % ("large", "16"))
    assert run_cluster(cluster.pk).wake_at is None
    assert run_cluster(cluster.pk, wake_at=first.wake_at).stopped == STOP_UP_TO_DATE


def test_a_wake_up_of_a_deleted_cluster_does_nothing() -> None:
    cluster = stuck_cluster(speed=100.0)
    result = run_cluster(cluster.pk)
    services.cluster_delete(cluster=cluster)
    assert result.wake_at is not None
    assert run_cluster(cluster.pk, wake_at=result.wake_at).stopped in (STOP_GONE, STOP_UP_TO_DATE)


def test_deleting_a_cluster_stops_its_runner_at_its_next_look(
    file_database: None, settings: Any
) -> None:
    settings.SCHEDVIZ_RUNNER_IDLE_SECONDS = 600  # it would linger that long with nothing to do
    cluster = stuck_cluster()
    thread = RunnerThread(cluster.pk)
    thread.start()
    wait_until(lambda: len(attempts(cluster)) == 1, timeout=20)
    services.cluster_delete(cluster=cluster)
    thread.join(timeout=60)  # a bound for a hang; idle, it would stay 600 s
    assert not thread.is_alive()
    assert thread.result is not None and thread.result.stopped == STOP_GONE


def test_at_a_billion_times_wall_speed_the_loop_makes_progress_and_stops_on_time() -> None:
    # Every wall microsecond is minutes of scheduler time: each loop catches the flushes up at
    # once (no loop over missed ticks) and retries the pod the 5-minute flush moved.
    # Beyond what the API and forms accept (the loop must not depend on that): set directly.
    cluster = stuck_cluster()
    Cluster.objects.filter(pk=cluster.pk).update(speed=1e9)
    result = run_cluster(cluster.pk, max_seconds=2)
    # Retried on the unchanged cluster, the pod is futile work: the runner gives its worker up
    # after a slice (or its two seconds run out first), woken up no sooner than the floor.
    assert result.stopped in (STOP_MAX_SECONDS, STOP_IDLE) and result.cycles >= 2
    if result.stopped == STOP_IDLE:
        assert result.wake_in is not None and result.wake_in >= FUTILE_WAKE_FLOOR


def test_a_runner_only_retrying_an_erroring_pod_gives_its_worker_up_and_wakes_for_the_retry() -> (
    None
):
    # No node at all: an error, retried every podMaxBackoffSeconds (10 s) for ever, which at
    # speed 100 is due every 0.1 wall seconds, always within the in-place wait.
    cluster = services.cluster_create(name="nowhere", speed=100.0)
    services.manifests_apply(cluster=cluster, text=BIG_POD)
    # Without the slice it would retry until max_seconds (a bound for a hang, 30 slices).
    result = run_cluster(cluster.pk, max_seconds=FUTILE_SLICE * 30)
    assert result.stopped == STOP_IDLE
    # Woken up for the next retry, but no sooner than the floor: not every 0.1 s.
    assert result.wake_in is not None and result.wake_in >= FUTILE_WAKE_FLOOR
    assert len(attempts(cluster)) >= 3


def test_a_stuck_cluster_at_the_top_speed_gives_its_worker_up_and_sleeps_till_the_floor(
    settings: Any,
) -> None:
    # The pod fits nowhere; at speed 10000 the 5-minute flush of unschedulablePods retries it
    # every 30 ms of wall time, for ever: it held a worker for minutes, starving the clusters
    # queued behind it. Every retry decides the same on the unchanged cluster.
    settings.SCHEDVIZ_RUNNER_IDLE_SECONDS = 30  # never idle that long: a retry every 30 ms
    cluster = stuck_cluster(speed=10000.0)
    result = run_cluster(cluster.pk, max_seconds=FUTILE_SLICE * 30)
    assert result.stopped == STOP_IDLE
    assert result.wake_in is not None and result.wake_in >= FUTILE_WAKE_FLOOR
    assert len(attempts(cluster)) >= 2  # the flush did retry it meanwhile, as upstream's does
    # A change starts a runner at once, floor or not: a node it fits.
    services.manifests_apply(cluster=cluster, text=SMALL_NODE % ("large", "16"))
    assert run_cluster(cluster.pk, max_seconds=FUTILE_SLICE * 30).cycles >= 1
    assert Pod.objects.get(cluster=cluster, name="big").node_name == "large"


def test_a_runner_that_places_nothing_for_a_while_yields_and_goes_on_from_its_queue(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # A queue too long to try every pod within a slice: no pod placed, no change seen for
    # NO_PROGRESS_SECONDS (here at once) and the runner gives its worker up; woken, the next one
    # goes on with the pods not tried yet, from the saved queue.
    monkeypatch.setattr(session, "FUTILE_SLICE", 0.0)
    monkeypatch.setattr(session, "NO_PROGRESS_SECONDS", 0.0)
    cluster = services.cluster_create(name="long", speed=10000.0)
    pods = "---".join(BIG_POD.replace("name: big", f"name: big-{i}") for i in range(20))
    services.manifests_apply(cluster=cluster, text=SMALL_NODE % ("small", "2") + "---" + pods)
    first = run_cluster(cluster.pk)
    assert first.stopped == STOP_IDLE and 1 <= first.cycles < 20
    assert first.wake_in is not None and first.wake_in >= FUTILE_WAKE_FLOOR
    tried = set(Cycle.objects.filter(cluster=cluster).values_list("pod_name", flat=True))
    second = run_cluster(cluster.pk, wake_at=first.wake_at)
    assert second.cycles >= 1
    tried_then = set(Cycle.objects.filter(cluster=cluster).values_list("pod_name", flat=True))
    assert tried_then - tried, "the woken runner tried no pod left untried"
