"""/healthz, /readyz and /metrics: status codes, content types, and kube-scheduler's metrics
derived from the Cycle and Lease rows a runner writes."""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from datetime import timedelta
from typing import Any

import pytest
from django.db import OperationalError
from django.test import Client
from django.utils import timezone

from schedviz.cluster import health, metrics, services
from schedviz.cluster.models import Cluster, Cycle, Lease, PendingPods
from schedviz.kube.load import load_manifests
from schedviz.simulation.simulator import new_simulation
from worker.runner import run_cluster

NODE = """
apiVersion: v1
kind: Node
metadata: {name: node-%(i)d}
status: {allocatable: {cpu: "2", memory: 4Gi, pods: "110"}}
"""
POD = """
apiVersion: v1
kind: Pod
metadata: {name: %(name)s, namespace: default}
spec: {containers: [{name: c, image: busybox, resources: {requests: {cpu: "%(cpu)s"}}}]}
"""

# Three pods fit on two nodes; "huge" fits nowhere.
CLUSTER = "\n---\n".join(
    [NODE % {"i": i} for i in range(2)]
    + [POD % {"name": f"small-{i}", "cpu": "500m"} for i in range(3)]
    + [POD % {"name": "huge", "cpu": "10"}]
)


@pytest.fixture(autouse=True)
def _isolated(settings: Any) -> Iterator[None]:
    settings.SCHEDVIZ_START_RUNNERS = False
    settings.SCHEDVIZ_RUNNER_IDLE_SECONDS = 0
    settings.REDIS_URL = ""
    # Cycle ids come back after a rolled-back test: forget what an earlier test decoded.
    metrics._points_cache.clear()
    yield
    metrics._points_cache.clear()


# ---------------------------------------------------------------------------------------------
# A small parser of the text exposition format, strict about what it accepts

SAMPLE = re.compile(r"^([a-zA-Z_:][a-zA-Z0-9_:]*)(?:\{(.*)\})? (\S+)$")
LABEL = re.compile(r'([a-zA-Z_][a-zA-Z0-9_]*)="((?:[^"\\]|\\.)*)"(,|$)')

Samples = list[tuple[str, dict[str, str], float]]


def parse_exposition(text: str) -> tuple[dict[str, str], Samples]:
    """(metric family -> type, samples); AssertionError on a malformed line."""
    assert text.endswith("\n")
    types: dict[str, str] = {}
    samples: Samples = []
    for line in text.splitlines():
        if line.startswith("# HELP "):
            assert len(line.split(" ", 3)) == 4, line
            continue
        if line.startswith("# TYPE "):
            _, _, name, kind = line.split(" ")
            assert kind in {"counter", "gauge", "histogram"}, line
            assert name not in types, f"{name} declared twice"
            types[name] = kind
            continue
        match = SAMPLE.match(line)
        assert match, f"not a sample: {line!r}"
        name, label_text, value = match.groups()
        labels: dict[str, str] = {}
        rest = label_text or ""
        while rest:
            label = LABEL.match(rest)
            assert label, f"bad labels: {line!r}"
            labels[label.group(1)] = label.group(2)
            rest = rest[label.end() :]
        family = re.sub(r"_(bucket|sum|count)$", "", name)
        assert family in types or name in types, f"sample before its TYPE: {line!r}"
        samples.append((name, labels, float(value)))
    return types, samples


def scrape(client: Client) -> tuple[dict[str, str], Samples]:
    response = client.get("/metrics")
    assert response.status_code == 200
    assert response["Content-Type"] == "text/plain; version=0.0.4; charset=utf-8"
    return parse_exposition(response.content.decode())


def values(samples: Samples, name: str, **match: str) -> dict[tuple[tuple[str, str], ...], float]:
    return {
        tuple(sorted(labels.items())): value
        for sample, labels, value in samples
        if sample == name and all(labels.get(k) == v for k, v in match.items())
    }


@pytest.fixture
def cluster(transactional_db: None) -> Cluster:
    """A virtual-clock cluster after its runner scheduled it to idle."""
    cluster = services.cluster_create(name="c", clock_mode=Cluster.ClockMode.VIRTUAL, seed=7)
    services.manifests_apply(cluster=cluster, text=CLUSTER)
    run_cluster(cluster.pk)
    return cluster


# ---------------------------------------------------------------------------------------------
# Probes


def test_healthz_answers_ok_without_touching_the_database(client: Client) -> None:
    # No django_db mark: any query would fail the test.
    response = client.get("/healthz")
    assert response.status_code == 200
    assert response["Content-Type"].startswith("text/plain")
    assert response.content == b"ok"


def test_healthz_refuses_post(client: Client) -> None:
    assert client.post("/healthz").status_code == 405


@pytest.mark.django_db
def test_readyz_is_ready_when_the_database_answers(client: Client) -> None:
    response = client.get("/readyz")
    assert response.status_code == 200
    assert response["Content-Type"] == "application/json"
    assert json.loads(response.content) == {
        "status": "ok",
        "checks": {"database": "ok"},
        "failed": [],
    }


class _UnreachableDatabase:
    def cursor(self) -> Any:
        raise OperationalError("could not connect to server")


def test_readyz_answers_503_naming_the_database_when_it_is_unreachable(
    client: Client, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(health, "connection", _UnreachableDatabase())
    response = client.get("/readyz")
    assert response.status_code == 503
    body = json.loads(response.content)
    assert body["status"] == "unavailable"
    assert body["failed"] == ["database"]
    assert body["checks"] == {"database": "failed"}


@pytest.mark.django_db
def test_readyz_checks_redis_when_redis_url_is_set(
    client: Client, settings: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    settings.REDIS_URL = "redis://127.0.0.1:1/0"  # nothing listens on port 1
    monkeypatch.setattr(health, "REDIS_TIMEOUT", 0.5)
    response = client.get("/readyz")
    assert response.status_code == 503
    assert json.loads(response.content)["checks"] == {"database": "ok", "redis": "failed"}


@pytest.mark.django_db
def test_readyz_is_ready_when_redis_answers_its_ping(
    client: Client, settings: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    settings.REDIS_URL = "redis://redis.invalid:6379/0"
    pinged: list[str] = []

    class Answering:
        def ping(self) -> bool:
            pinged.append("ping")
            return True

        def close(self) -> None:
            pass

    monkeypatch.setattr(health.redis.Redis, "from_url", lambda *a, **k: Answering())
    response = client.get("/readyz")
    assert response.status_code == 200
    assert pinged == ["ping"]


# ---------------------------------------------------------------------------------------------
# Metrics


def test_bucket_layouts_are_upstreams() -> None:
    assert len(metrics.ATTEMPT_BUCKETS) == 15
    assert metrics.ATTEMPT_BUCKETS[0] == 0.001
    assert metrics.ATTEMPT_BUCKETS[-1] == pytest.approx(16.384)
    assert len(metrics.PLUGIN_BUCKETS) == 20
    assert metrics.PLUGIN_BUCKETS[0] == 0.00001
    assert metrics.PLUGIN_BUCKETS[-1] == pytest.approx(0.00001 * 1.5**19)


@pytest.mark.django_db
def test_metrics_of_a_site_without_clusters_parse_and_declare_every_family(
    client: Client,
) -> None:
    types, samples = scrape(client)
    assert types == {
        "scheduler_schedule_attempts_total": "counter",
        "scheduler_scheduling_attempt_duration_seconds": "histogram",
        "scheduler_pending_pods": "gauge",
        "scheduler_plugin_execution_duration_seconds": "histogram",
        "schedviz_runner_up": "gauge",
    }
    assert samples == []


def test_metrics_after_a_virtual_run_count_attempts_by_cluster_profile_and_result(
    client: Client, cluster: Cluster
) -> None:
    rows = Cycle.objects.filter(cluster=cluster)
    expected = {
        "scheduled": rows.filter(result="Scheduled").count(),
        "unschedulable": rows.filter(result="Unschedulable").count(),
    }
    assert expected["scheduled"] == 3 and expected["unschedulable"] >= 1

    _, samples = scrape(client)
    cid = str(cluster.pk)
    attempts = values(samples, "scheduler_schedule_attempts_total", cluster=cid)
    assert attempts == {
        (("cluster", cid), ("profile", "default-scheduler"), ("result", result)): count
        for result, count in expected.items()
    }
    for result, count in expected.items():
        labels = {"cluster": cid, "profile": "default-scheduler", "result": result}
        name = "scheduler_scheduling_attempt_duration_seconds"
        buckets = values(samples, f"{name}_bucket", **labels)
        by_bound = sorted((float(dict(k)["le"]), v) for k, v in buckets.items())
        assert [bound for bound, _ in by_bound[:-1]] == metrics.ATTEMPT_BUCKETS
        counts = [v for _, v in by_bound]
        assert counts == sorted(counts), "buckets are cumulative"
        assert by_bound[-1] == (float("inf"), count)
        (total,) = values(samples, f"{name}_sum", **labels).values()
        assert list(values(samples, f"{name}_count", **labels).values()) == [count]
        assert total > 0

    assert values(samples, "schedviz_runner_up") == {(("cluster", cid),): 0.0}


def test_plugin_histogram_splits_filter_calls_into_passed_and_rejected_nodes(
    client: Client, cluster: Cluster
) -> None:
    _, samples = scrape(client)
    name = "scheduler_plugin_execution_duration_seconds_count"
    fit = values(
        samples, name, cluster=str(cluster.pk), plugin="NodeResourcesFit", extension_point="Filter"
    )
    by_status = {dict(labels)["status"]: count for labels, count in fit.items()}
    # The huge pod is rejected by both nodes each time it is tried; small pods pass both.
    huge_attempts = Cycle.objects.filter(cluster=cluster, pod_name="huge").count()
    assert by_status["Unschedulable"] == 2 * huge_attempts
    assert by_status["Success"] >= 3 * 2
    pre_filter = values(
        samples,
        name,
        cluster=str(cluster.pk),
        plugin="NodeResourcesFit",
        extension_point="PreFilter",
    )
    assert sum(pre_filter.values()) == Cycle.objects.filter(cluster=cluster).count()


def test_pending_pods_are_the_queue_the_runner_left(client: Client, cluster: Cluster) -> None:
    row = PendingPods.objects.get(cluster=cluster)
    # The huge pod fits nowhere: it waits in unschedulablePods for a cluster event.
    assert (row.active, row.backoff, row.unschedulable, row.gated) == (0, 0, 1, 0)
    _, samples = scrape(client)
    pending = values(samples, "scheduler_pending_pods", cluster=str(cluster.pk))
    assert {dict(labels)["queue"]: value for labels, value in pending.items()} == {
        "active": 0,
        "backoff": 0,
        "unschedulable": 1,
        "gated": 0,
    }


@pytest.mark.django_db
def test_pending_pods_record_keeps_one_row_per_cluster() -> None:
    cluster = services.cluster_create(name="queue")
    services.pending_pods_record(cluster=cluster, counts={"active": 5, "gated": 2})
    services.pending_pods_record(cluster=cluster, counts={"active": 3, "backoff": 1})
    rows = PendingPods.objects.filter(cluster=cluster)
    assert [(r.active, r.backoff, r.unschedulable, r.gated) for r in rows] == [(3, 1, 0, 0)]


@pytest.mark.django_db
def test_runner_up_follows_the_lease(client: Client) -> None:
    held = services.cluster_create(name="held")
    expired = services.cluster_create(name="expired")
    free = services.cluster_create(name="free")
    now = timezone.now()
    Lease.objects.create(cluster=held, holder="host:1", renewed_at=now)
    Lease.objects.create(cluster=expired, holder="host:2", renewed_at=now - timedelta(minutes=5))
    _, samples = scrape(client)
    assert values(samples, "schedviz_runner_up") == {
        (("cluster", str(held.pk)),): 1.0,
        (("cluster", str(expired.pk)),): 0.0,
        (("cluster", str(free.pk)),): 0.0,
    }


@pytest.mark.django_db
def test_plugin_histogram_reads_only_the_newest_cycles(
    client: Client, monkeypatch: pytest.MonkeyPatch
) -> None:
    simulation = new_simulation(load_manifests(CLUSTER), seed=7)
    simulation.run()
    cluster = services.cluster_create(name="window")
    services.cycles_create(cluster=cluster, traces=simulation.traces)
    monkeypatch.setattr(metrics, "PLUGIN_WINDOW", 2)
    _, samples = scrape(client)
    pre_filter = values(
        samples,
        "scheduler_plugin_execution_duration_seconds_count",
        cluster=str(cluster.pk),
        plugin="NodeResourcesFit",
        extension_point="PreFilter",
    )
    assert sum(pre_filter.values()) == 2
    attempts = values(samples, "scheduler_schedule_attempts_total", cluster=str(cluster.pk))
    assert sum(attempts.values()) == len(simulation.traces)


@pytest.mark.django_db
def test_cycles_create_keeps_the_attempts_wall_time_or_sums_its_points() -> None:
    simulation = new_simulation(load_manifests(CLUSTER), seed=7)
    simulation.run()
    first, second = simulation.traces[:2]
    assert first.duration > 0
    cluster = services.cluster_create(name="durations")
    services.cycles_create(cluster=cluster, traces=[first, second.to_json()])
    rows = {row.number: row for row in Cycle.objects.filter(cluster=cluster)}
    assert rows[first.cycle].duration_seconds == first.duration
    summed = sum(point["durationMs"] for point in second.to_json()["points"]) / 1000
    assert rows[second.cycle].duration_seconds == pytest.approx(summed)


@pytest.mark.django_db
@pytest.mark.parametrize(
    ("address", "headers", "status"),
    [
        ("127.0.0.1", {}, 200),
        ("::1", {}, 200),
        ("10.0.0.7", {}, 403),
        ("203.0.113.9", {}, 403),
        # A proxy on the same machine makes every visitor look local.
        ("127.0.0.1", {"X-Forwarded-For": "203.0.113.9"}, 403),
        ("127.0.0.1", {"Forwarded": "for=203.0.113.9"}, 403),
    ],
)
def test_without_a_token_metrics_answer_local_callers_only(
    client: Client, address: str, headers: dict[str, str], status: int
) -> None:
    response = client.get("/metrics", REMOTE_ADDR=address, headers=headers)
    assert response.status_code == status
    if status == 403:
        assert b"SCHEDVIZ_METRICS_TOKEN" in response.content
        assert b"scheduler_" not in response.content


@pytest.mark.django_db
@pytest.mark.parametrize(
    ("authorization", "status"),
    [
        ("Bearer s3cret-token", 200),
        (None, 401),
        ("Bearer wrong", 401),
        ("Bearer s3cret-token-and-more", 401),
        ("Token s3cret-token", 401),
        ("s3cret-token", 401),
    ],
)
def test_with_a_token_metrics_need_it_as_a_bearer_from_anywhere(
    client: Client, settings: Any, authorization: str | None, status: int
) -> None:
    settings.SCHEDVIZ_METRICS_TOKEN = "s3cret-token"
    headers = {"Authorization": authorization} if authorization else {}
    response = client.get("/metrics", REMOTE_ADDR="10.0.0.7", headers=headers)
    assert response.status_code == status
    if status == 401:
        assert response["WWW-Authenticate"] == 'Bearer realm="metrics"'
    else:
        assert response["Content-Type"] == metrics.CONTENT_TYPE
