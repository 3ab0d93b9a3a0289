"""The step debugger in the runner: a cycle that really stops, commands, and what ends it."""

from __future__ import annotations

import time
from collections.abc import Iterator
from datetime import timedelta
from typing import Any

import pytest
from django.utils import timezone
from runner_fixtures import RunnerThread, manifests, wait_until

from schedviz.cluster import services
from schedviz.cluster.models import Change, Cluster, Cycle, DebugSession, Lease, Pod
from schedviz.scheduler.debugger import END, Stop
from worker.debugging import RunnerDebugger
from worker.runner import STOP_DEBUG_ABANDONED, STOP_GONE, run_cluster

pytestmark = pytest.mark.django_db(transaction=True)

SCHEDULED_POINTS = [
    "PreFilter",
    "Filter",
    "PreScore",
    "Score",
    "Reserve",
    "Permit",
    "PreBind",
    "Bind",
    "PostBind",
    END,
]


@pytest.fixture(autouse=True)
def _settings(settings: Any) -> None:
    settings.SCHEDVIZ_START_RUNNERS = False
    settings.SCHEDVIZ_RUNNER_IDLE_SECONDS = 1


@pytest.fixture
def threads(file_database: None) -> Iterator[list[RunnerThread]]:
    started: list[RunnerThread] = []
    yield started
    for thread in started:
        thread.join(timeout=30)
        assert not thread.is_alive()


def paused_cluster(nodes: int = 2, pods: int = 1, **fields: Any) -> Cluster:
    fields.setdefault("clock_mode", Cluster.ClockMode.VIRTUAL)
    cluster = services.cluster_create(name="debugged", run_state=Cluster.RunState.PAUSED, **fields)
    services.manifests_apply(cluster=cluster, text=manifests(nodes, pods))
    return cluster


def start(threads: list[RunnerThread], cluster: Cluster) -> RunnerThread:
    thread = RunnerThread(cluster.pk)
    threads.append(thread)
    thread.start()
    return thread


def session(cluster: Cluster) -> DebugSession:
    return DebugSession.objects.get(cluster=cluster)


def stopped_at(cluster: Cluster, sequence: int) -> bool:
    current = DebugSession.objects.filter(cluster=cluster).first()
    return (
        current is not None
        and current.state == DebugSession.State.STOPPED
        and current.sequence == sequence
    )


def finished(cluster: Cluster) -> bool:
    return session(cluster).state == DebugSession.State.FINISHED


def bound(cluster: Cluster) -> dict[str, str]:
    return dict(Pod.objects.filter(cluster=cluster).values_list("name", "node_name"))


def test_a_stepped_cycle_waits_before_each_point_until_told_to_continue(
    threads: list[RunnerThread],
) -> None:
    cluster = paused_cluster()
    services.debug_step_into(cluster=cluster)
    start(threads, cluster)
    wait_until(lambda: stopped_at(cluster, 1))
    first = session(cluster)
    assert (first.point, first.pod, first.cycle) == ("PreFilter", "default/pod-0", 1)
    assert "NodeResourcesFit" in first.plugins and first.previous == []
    time.sleep(0.3)  # it really waits
    assert stopped_at(cluster, 1)
    assert bound(cluster) == {"pod-0": ""} and not Cycle.objects.filter(cluster=cluster).exists()

    services.debug_command(cluster=cluster, command="continue", sequence=1)
    wait_until(lambda: stopped_at(cluster, 2))
    second = session(cluster)
    assert second.point == "Filter"
    assert [p["point"] for p in second.previous] == ["PreFilter"]
    texts = [entry["text"] for entry in second.state_entries]
    assert "PreFilter NodeResourcesFit computed requests cpu=100m" in texts

    sequence = 2
    while not finished(cluster):
        services.debug_command(cluster=cluster, command="continue", sequence=sequence)
        sequence += 1
        wait_until(lambda at=sequence: stopped_at(cluster, at) or finished(cluster))
    ended = session(cluster)
    assert ended.reached == SCHEDULED_POINTS
    assert ended.outcome["result"] == "Scheduled" and ended.outcome["node"]
    assert bound(cluster) == {"pod-0": ended.outcome["node"]}
    wait_until(lambda: Cycle.objects.filter(cluster=cluster).count() == 1)


def test_finish_runs_the_rest_of_the_cycle_without_stopping(threads: list[RunnerThread]) -> None:
    cluster = paused_cluster()
    services.debug_step_into(cluster=cluster)
    start(threads, cluster)
    wait_until(lambda: stopped_at(cluster, 1))
    services.debug_command(cluster=cluster, command="finish")
    wait_until(lambda: finished(cluster))
    ended = session(cluster)
    assert ended.sequence == 1 and ended.reached == SCHEDULED_POINTS
    assert all(bound(cluster).values())


def test_a_pod_that_fits_nowhere_stops_at_postfilter(threads: list[RunnerThread]) -> None:
    cluster = paused_cluster(nodes=0)
    services.manifests_apply(
        cluster=cluster,
        text=manifests(1, 0)
        + """
---
apiVersion: v1
kind: Pod
metadata: {name: huge}
spec: {containers: [{name: c, image: busybox, resources: {requests: {cpu: "64"}}}]}
""",
    )
    Pod.objects.filter(cluster=cluster).exclude(name="huge").delete()
    services.debug_step_into(cluster=cluster)
    start(threads, cluster)
    for sequence in (1, 2):
        wait_until(lambda: stopped_at(cluster, sequence))  # noqa: B023
        services.debug_command(cluster=cluster, command="continue")
    wait_until(lambda: stopped_at(cluster, 3))
    assert session(cluster).point == "PostFilter"
    services.debug_command(cluster=cluster, command="continue")
    wait_until(lambda: finished(cluster))
    assert session(cluster).outcome["result"] == "Unschedulable"


@pytest.mark.parametrize("clock_mode", [Cluster.ClockMode.VIRTUAL, Cluster.ClockMode.LIVE])
def test_the_clock_stands_still_while_a_cycle_is_stopped(
    threads: list[RunnerThread], clock_mode: str
) -> None:
    cluster = paused_cluster(clock_mode=clock_mode, speed=1000.0)
    # Virtual time goes on from scheduler_time, a paused live clock reads its anchor.
    Cluster.objects.filter(pk=cluster.pk).update(scheduler_time=5.0, clock_anchor_time=5.0)
    services.debug_step_into(cluster=cluster)
    start(threads, cluster)
    wait_until(lambda: stopped_at(cluster, 1))
    time.sleep(0.5)
    services.debug_command(cluster=cluster, command="finish")
    wait_until(lambda: finished(cluster))
    wait_until(lambda: Cycle.objects.filter(cluster=cluster).exists())
    assert Cycle.objects.get(cluster=cluster).scheduler_time == 5.0
    threads[0].join(timeout=30)
    cluster.refresh_from_db()
    assert cluster.scheduler_time == 5.0


def test_resuming_the_cluster_finishes_the_stopped_cycle(threads: list[RunnerThread]) -> None:
    cluster = paused_cluster(pods=3)
    services.debug_step_into(cluster=cluster)
    start(threads, cluster)
    wait_until(lambda: stopped_at(cluster, 1))
    services.cluster_set_run_state(cluster=cluster, run_state=Cluster.RunState.RUNNING)
    wait_until(lambda: all(bound(cluster).values()))
    assert finished(cluster) and session(cluster).sequence == 1


def test_deleting_the_cluster_while_a_cycle_is_stopped_ends_the_runner(
    threads: list[RunnerThread],
) -> None:
    cluster = paused_cluster()
    services.debug_step_into(cluster=cluster)
    thread = start(threads, cluster)
    wait_until(lambda: stopped_at(cluster, 1))
    services.cluster_delete(cluster=cluster)
    thread.join(timeout=30)
    assert thread.result is not None and thread.result.stopped == STOP_GONE


def test_a_reset_while_a_cycle_is_stopped_abandons_it(threads: list[RunnerThread]) -> None:
    cluster = paused_cluster()
    services.debug_step_into(cluster=cluster)
    thread = start(threads, cluster)
    wait_until(lambda: stopped_at(cluster, 1))
    services.cluster_reset(cluster=cluster)
    thread.join(timeout=30)
    assert thread.result is not None and thread.result.stopped == STOP_DEBUG_ABANDONED
    assert not Cycle.objects.filter(cluster=cluster).exists()


def test_a_stop_nobody_answers_is_abandoned_and_its_pod_stays_pending(
    settings: Any, threads: list[RunnerThread]
) -> None:
    settings.SCHEDVIZ_DEBUG_WAIT_SECONDS = 1
    cluster = paused_cluster()
    services.debug_step_into(cluster=cluster)
    thread = start(threads, cluster)
    thread.join(timeout=30)
    assert thread.result is not None and thread.result.stopped == STOP_DEBUG_ABANDONED
    ended = session(cluster)
    assert ended.state == DebugSession.State.ABANDONED
    assert "still pending" in ended.outcome["message"]
    assert bound(cluster) == {"pod-0": ""} and not Cycle.objects.filter(cluster=cluster).exists()


def test_stepping_into_an_empty_queue_answers_that_there_was_nothing() -> None:
    cluster = paused_cluster(pods=0)
    services.debug_step_into(cluster=cluster)
    run_cluster(cluster.pk)
    ended = session(cluster)
    assert ended.state == DebugSession.State.FINISHED
    assert ended.outcome["message"] == "No pod was waiting to be scheduled."


def test_a_runner_killed_while_stopped_mid_cycle_loses_nothing(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    cluster = paused_cluster(pods=2)
    real_stop = RunnerDebugger.stop

    def dies_before_bind(self: RunnerDebugger, stop: Stop) -> None:
        if stop.point == "Bind":
            raise SystemExit("killed")  # the pod is assumed, reserved, permitted: never bound
        real_stop(self, stop)

    monkeypatch.setattr(RunnerDebugger, "stop", dies_before_bind)
    monkeypatch.setattr(RunnerDebugger, "wait_for_command", lambda self, sequence: "continue")
    services.debug_step_into(cluster=cluster)
    with pytest.raises(SystemExit):
        run_cluster(cluster.pk, holder="doomed")
    assert session(cluster).point == "PreBind"
    assert not any(bound(cluster).values())
    # A killed process does not give its lease up: it expires.
    Lease.objects.filter(cluster=cluster).update(
        holder="doomed", renewed_at=timezone.now() - timedelta(minutes=1)
    )
    monkeypatch.undo()
    services.cluster_set_run_state(cluster=cluster, run_state=Cluster.RunState.RUNNING)
    result = run_cluster(cluster.pk)
    assert result.acquired and result.cycles == 2
    assert all(bound(cluster).values())
    assert session(cluster).state == DebugSession.State.ABANDONED
    binds = Change.objects.filter(cluster=cluster, kind="Pod", type=Change.Type.MODIFIED)
    bound_names = [c.name for c in binds if c.manifest.get("spec", {}).get("nodeName")]
    assert sorted(bound_names) == ["pod-0", "pod-1"]
