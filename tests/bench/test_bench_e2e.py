"""``manage.py bench --mode e2e``: the workload goes through the database, the runner and the
websocket consumers; the measured pods are bound once, their cycles stored, every client hears
of them. Speed is never asserted here."""

from __future__ import annotations

import json
from io import StringIO
from typing import Any

import pytest
from django.core.management import call_command
from test_workloads import BENCH_JSON_KEYS

from schedviz.bench.workloads import WORKLOADS, Workload
from schedviz.cluster.models import Change, Cluster, Cycle
from schedviz.cluster.models import Pod as PodRow
from worker import bench_e2e as e2e
from worker.bench_e2e import E2EError, run_e2e

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.usefixtures("file_database")]

E2E_EXTRA_KEYS = {
    "target",
    "meetsTarget",
    "traceJsonBytesPerCycle",
    "ended",
    "database",
    "wsClients",
    "wsMessages",
    "wsMessagesPerClientMin",
    "wsMessagesPerClientMax",
    "wsCyclesStored",
    "wsCyclesCoalesced",
    "wsCyclesLost",
    "wsCloseTimeouts",
}


@pytest.fixture(autouse=True)
def _runners(settings: Any) -> None:
    settings.SCHEDVIZ_START_RUNNERS = True
    settings.SCHEDVIZ_RUNNER_IDLE_SECONDS = 1


class _Observed:
    """What the run left in the database just before its cluster was deleted."""

    def __init__(self) -> None:
        self.pods: list[tuple[str, str, str]] = []
        # Per pod, how many changes took spec.nodeName from empty to a node.
        self.bind_changes: dict[str, int] = {}
        self.cycles: list[tuple[str, str, str]] = []
        self.clients: list[e2e.WebsocketClient] = []


@pytest.fixture
def observed(monkeypatch: pytest.MonkeyPatch) -> _Observed:
    seen = _Observed()
    close_clients = e2e._E2ERun.close_clients

    def spy(run: e2e._E2ERun) -> dict[str, Any]:
        cluster = run.cluster
        seen.pods = list(
            PodRow.objects.filter(cluster=cluster).values_list("namespace", "name", "node_name")
        )
        node_of: dict[str, str] = {}
        for change in Change.objects.filter(cluster=cluster, kind="Pod").order_by("id"):
            key = f"{change.namespace}/{change.name}"
            node = (change.manifest.get("spec") or {}).get("nodeName") or ""
            if node and not node_of.get(key):
                seen.bind_changes[key] = seen.bind_changes.get(key, 0) + 1
            node_of[key] = node
        seen.cycles = list(
            Cycle.objects.filter(cluster=cluster).values_list("pod_namespace", "pod_name", "result")
        )
        seen.clients = run.clients
        return close_clients(run)

    monkeypatch.setattr(e2e._E2ERun, "close_clients", spy)
    return seen


def _basic(nodes: int = 5, init_pods: int = 3, measured: int = 8) -> Workload:
    return WORKLOADS["SchedulingBasic"].build(nodes, init_pods, measured, 0)


def test_every_measured_pod_is_bound_exactly_once_in_the_database(observed: _Observed) -> None:
    workload = _basic()
    result = run_e2e(workload)
    assert result.extra["ended"] == "all bound"
    measured = {pod.key for pod in workload.measured_pods}
    bound = {f"{ns}/{name}": node for ns, name, node in observed.pods if f"{ns}/{name}" in measured}
    assert set(bound) == measured and all(bound.values())
    # One bind each, never two.
    assert {key: observed.bind_changes.get(key, 0) for key in measured} == dict.fromkeys(
        measured, 1
    )
    assert (result.mode, result.scheduled, result.unschedulable) == ("e2e", 8, 0)


def test_cycle_rows_are_written_for_the_measured_pods(observed: _Observed) -> None:
    workload = _basic()
    result = run_e2e(workload)
    scheduled = {f"{ns}/{name}" for ns, name, outcome in observed.cycles if outcome == "Scheduled"}
    assert {pod.key for pod in workload.measured_pods} <= scheduled
    assert result.cycles >= 8
    assert result.p99_cycle_ms >= result.p50_cycle_ms > 0
    assert result.extra["traceJsonBytesPerCycle"] > result.trace_bytes_per_cycle > 0


def test_each_of_the_ten_clients_hears_every_cycle(observed: _Observed) -> None:
    result = run_e2e(_basic())
    assert len(observed.clients) == 10
    stored = {n for n in range(1, result.extra["wsCyclesStored"] + 1)}
    for client in observed.clients:
        assert client.kinds["cluster.cycles"] > 0 and client.kinds["cluster.status"] > 0
        assert client.cycles_missed(stored) == 0
    assert result.extra["wsClients"] == 10
    assert result.extra["wsCyclesLost"] == 0
    assert result.extra["wsCloseTimeouts"] == 0
    assert result.extra["wsMessagesPerClientMin"] > 0


def test_the_cluster_is_deleted_afterwards() -> None:
    run_e2e(_basic(2, 1, 2))
    assert not Cluster.objects.filter(name__startswith="bench-e2e-").exists()


def test_churn_pods_are_created_while_the_measured_pods_are_scheduled(observed: _Observed) -> None:
    workload = WORKLOADS["Unschedulable"].build(3, 1, 30, 0)
    result = run_e2e(workload)
    assert result.scheduled == 30
    assert any(ns == "namespace-2" for ns, _, _ in observed.pods) == (result.churn_pods > 0)


def test_measured_pods_that_fit_nowhere_end_the_phase_once_each_has_failed() -> None:
    workload = WORKLOADS["SchedulingPodAntiAffinity"].build(3, 1, 3, 0)
    result = run_e2e(workload)
    assert (result.scheduled, result.unschedulable) == (2, 1)
    assert result.extra["ended"] == "the rest unschedulable"


def test_the_time_limit_ends_a_phase_with_pods_still_pending() -> None:
    result = run_e2e(_basic(2, 0, 50), time_limit=0.0)
    assert result.extra["ended"] == "time limit"
    assert result.scheduled < 50


def test_without_runners_it_refuses_to_start(settings: Any) -> None:
    settings.SCHEDVIZ_START_RUNNERS = False
    with pytest.raises(E2EError, match="SCHEDVIZ_START_RUNNERS"):
        run_e2e(_basic(1, 0, 1))


def test_bench_command_e2e_prints_the_engine_keys_plus_its_own() -> None:
    out = StringIO()
    call_command(
        "bench", "SchedulingBasic", "--nodes", "5", "--pods", "6", "--mode", "e2e", stdout=out
    )
    report = json.loads(out.getvalue())
    assert set(report) == BENCH_JSON_KEYS | E2E_EXTRA_KEYS
    assert (report["mode"], report["measuredPods"], report["scheduled"]) == ("e2e", 6, 6)
    assert (report["threshold"], report["target"]) == (680, 340)
    assert report["meetsTarget"] == (report["podsPerSecond"] >= 340)
    assert report["wsClients"] == 10


def test_bench_command_e2e_table_says_the_mode_and_the_target() -> None:
    out = StringIO()
    call_command(
        "bench",
        "SchedulingBasic",
        "--nodes",
        "3",
        "--pods",
        "4",
        "--mode",
        "e2e",
        "--output",
        "table",
        stdout=out,
    )
    table = out.getvalue()
    assert "e2e" in table
    assert "e2e target 340" in table
    assert "websocket clients" in table
