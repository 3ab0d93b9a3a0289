"""docker-compose.yml as shipped, under what people do to a live system: the web service's, the
worker's and the beat's own command lines on PostgreSQL and Redis (docs/live-system.md,
"Faults"): clusters stuck at the top speed beside a healthy one, clusters deleted while their
runners work, and Redis down under a websocket.

Run with REDIS_URL and DATABASE_URL (PostgreSQL) set; skipped without them.
"""

from __future__ import annotations

import asyncio
import json
import os
import signal
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.request
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import yaml
from django.conf import settings as django_settings
from test_docker_compose_web import COMPOSE, REPO, WebService

from schedviz.cluster import services
from schedviz.cluster.models import Cluster, Cycle, Lease, Pod

pytestmark = [
    pytest.mark.distributed,
    pytest.mark.skipif(
        not (os.environ.get("REDIS_URL") and os.environ.get("DATABASE_URL")),
        reason="needs REDIS_URL and DATABASE_URL (PostgreSQL) set",
    ),
    pytest.mark.django_db(transaction=True),
]

NODE = """
apiVersion: v1
kind: Node
metadata: {name: %(name)s}
status: {allocatable: {cpu: "%(cpu)s", memory: 64Gi, pods: "110"}}
"""
POD = """
apiVersion: v1
kind: Pod
metadata: {name: %(name)s}
spec: {containers: [{name: c, image: busybox, resources: {requests: {cpu: "%(cpu)s"}}}]}
"""


def _manifests(nodes: int, node_cpu: str, pods: int, pod_cpu: str) -> bytes:
    documents = [NODE % {"name": f"node-{i}", "cpu": node_cpu} for i in range(nodes)]
    documents += [POD % {"name": f"pod-{i}", "cpu": pod_cpu} for i in range(pods)]
    return "\n---\n".join(documents).encode()


class Compose:
    """The compose file's web, worker and beat services, each on its own command line."""

    def __init__(self, tmp_path: Path) -> None:
        self.tmp_path = tmp_path
        self.services = yaml.safe_load(COMPOSE.read_text())["services"]
        self.web = WebService(tmp_path)
        self.web.env["SCHEDVIZ_START_RUNNERS"] = "true"  # as shipped: writes start runners
        self.processes: list[subprocess.Popen[bytes]] = []
        self.token = ""

    def start(self, *, workers: int = 1) -> None:
        self.web.start()
        for _ in range(workers):
            self._start("worker")
        self._start("beat")
        self.token = services.api_token_create(username="operator").key

    def _start(self, name: str) -> None:
        service = self.services[name]
        command = service["command"].replace("/tmp/celerybeat-schedule", "")
        command = command.replace("--schedule=", f"--schedule={self.tmp_path / 'beat'}")
        env = {
            **self.web.env,
            **{key: str(value) for key, value in service["environment"].items()},
            "DATABASE_URL": self.web.env["DATABASE_URL"],
            "REDIS_URL": self.web.env["REDIS_URL"],
            "DJANGO_SECRET_KEY": self.web.env["DJANGO_SECRET_KEY"],
            "SCHEDVIZ_VAR_DIR": self.web.env["SCHEDVIZ_VAR_DIR"],
        }
        log = open(self.tmp_path / f"{name}-{len(self.processes)}.log", "wb")  # noqa: SIM115
        self.processes.append(
            subprocess.Popen(
                ["sh", "-c", command],
                cwd=REPO,
                env=env,
                stdout=log,
                stderr=subprocess.STDOUT,
                start_new_session=True,
            )
        )

    def stop(self) -> None:
        for process in self.processes:
            if process.poll() is None:
                os.killpg(process.pid, signal.SIGTERM)
        for process in self.processes:
            try:
                process.wait(timeout=20)
            except subprocess.TimeoutExpired:
                os.killpg(process.pid, signal.SIGKILL)
                process.wait()
        self.web.stop()

    def logs(self) -> str:
        return "".join(
            f"--- {path.name}\n{path.read_text(errors='replace')[-4000:]}\n"
            for path in sorted(self.tmp_path.glob("*.log"))
        )

    def request(self, method: str, path: str, body: Any = None) -> tuple[int, Any]:
        data = body if isinstance(body, bytes) else None
        if body is not None and not isinstance(body, bytes):
            data = json.dumps(body).encode()
        request = urllib.request.Request(
            f"{self.web.url}{path}",
            data=data,
            method=method,
            headers={"Authorization": f"Token {self.token}"},
        )
        try:
            with urllib.request.urlopen(request, timeout=60) as response:
                raw = response.read()
                status = response.status
        except urllib.error.HTTPError as error:
            raw, status = error.read(), error.code
        try:
            return status, json.loads(raw) if raw else None
        except ValueError:
            return status, raw.decode(errors="replace")[:2000]

    def cluster(self, name: str, manifests: bytes, speed: float) -> int:
        status, created = self.request("POST", "/api/clusters", {"name": name, "speed": speed})
        assert status == 201, created
        status, applied = self.request("POST", f"/api/clusters/{created['id']}/apply", manifests)
        assert status == 200, applied
        return int(created["id"])


@pytest.fixture
def compose(tmp_path: Path) -> Iterator[Compose]:
    import redis

    redis.Redis.from_url(django_settings.REDIS_URL).flushdb()  # no task left from an earlier run
    deployment = Compose(tmp_path)
    try:
        yield deployment
    finally:
        deployment.stop()
        sys.stdout.write(deployment.logs())


def _bound(cluster_id: int) -> int:
    return Pod.objects.filter(cluster_id=cluster_id).exclude(node_name="").count()


def _wait(condition: Any, timeout: float, what: str) -> None:
    deadline = time.monotonic() + timeout
    while not condition():
        assert time.monotonic() < deadline, what
        time.sleep(0.1)


@pytest.mark.slow
def test_a_healthy_cluster_is_placed_beside_four_clusters_stuck_at_the_top_speed(
    compose: Compose,
) -> None:
    # Four clusters whose pods fit no node, at speed 10000: the 5-minute flush retries them
    # every 30 ms of wall time. They held every worker process for minutes; a fifth cluster's
    # pods stayed unbound. Now each gives its worker up once all it has left is futile.
    compose.start()
    stuck = [
        compose.cluster(f"stuck-{i}", _manifests(2, "2", 30, "8"), speed=10000.0) for i in range(4)
    ]
    _wait(
        lambda: all(Cycle.objects.filter(cluster_id=c).count() >= 30 for c in stuck),
        120,
        "the stuck clusters' pods were never tried",
    )
    healthy = compose.cluster("healthy", _manifests(2, "4", 3, "1"), speed=10000.0)
    # A bound for starvation (6.5 minutes before), not a measure of speed.
    _wait(lambda: _bound(healthy) == 3, 30, "the healthy cluster starved beside the stuck ones")
    # The stuck ones are not abandoned either: each keeps being retried, now and then.
    tried = {c: Cycle.objects.filter(cluster_id=c).count() for c in stuck}
    _wait(
        lambda: all(Cycle.objects.filter(cluster_id=c).count() > tried[c] for c in stuck),
        60,
        "a stuck cluster was never retried again",
    )
    assert "Traceback" not in compose.logs()


@pytest.mark.slow
def test_clusters_deleted_while_their_runners_work_are_gone_with_a_2xx(compose: Compose) -> None:
    # A foreign-key violation at commit answered 500 in 3 of 7 tries, and the cluster ran on:
    # the runner wrote a cycle between the deletion's reads and its commit.
    compose.start(workers=2)
    busy = [
        compose.cluster(f"busy-{i}", _manifests(50, "64", 1500, "10m"), speed=10000.0)
        for i in range(5)
    ]
    for cluster_id in busy:
        # Deleted mid-run: its runner holds the lease and has written cycles, not bound all.
        _wait(
            lambda cluster_id=cluster_id: (
                Lease.objects.filter(cluster_id=cluster_id).exclude(holder="").exists()
                and Cycle.objects.filter(cluster_id=cluster_id).exists()
            ),
            120,
            f"cluster {cluster_id}'s runner never started",
        )
        assert _bound(cluster_id) < 1500, "the runner finished before the deletion"
        status, body = compose.request("DELETE", f"/api/clusters/{cluster_id}")
        assert 200 <= status < 300, body
        assert not Cluster.objects.filter(pk=cluster_id).exists()
        assert compose.request("GET", f"/api/clusters/{cluster_id}")[0] == 404
    # The runners stopped cleanly: nothing left behind, no error logged.
    time.sleep(3)
    assert not Cycle.objects.filter(cluster_id__in=busy).exists()
    assert not Pod.objects.filter(cluster_id__in=busy).exists()
    logs = compose.logs()
    assert "IntegrityError" not in logs and "Traceback" not in logs, logs[-6000:]


def _dead_redis_url() -> str:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = int(probe.getsockname()[1])
    return f"redis://127.0.0.1:{port}/0"  # nothing listens there once the probe is closed


async def test_with_redis_down_a_websocket_is_refused_cleanly(tmp_path: Path) -> None:
    # It answered a bare HTTP 500 and logged a traceback.
    from asgiref.sync import sync_to_async
    from websockets.asyncio.client import connect
    from websockets.exceptions import ConnectionClosed
    from websockets.typing import Origin

    web = WebService(tmp_path)
    web.env["REDIS_URL"] = _dead_redis_url()
    await sync_to_async(web.start)()
    try:
        cluster = await sync_to_async(Cluster.objects.create)(name="watched")
        # The pages still answer from the database.
        with urllib.request.urlopen(f"{web.url}/clusters/{cluster.pk}/", timeout=10) as page:
            assert page.status == 200
        ws_url = f"ws://127.0.0.1:{web.port}/ws/clusters/{cluster.pk}/?format=json"
        async with connect(ws_url, origin=Origin(web.url), open_timeout=30) as socket_:
            with pytest.raises(ConnectionClosed) as closed:
                await asyncio.wait_for(socket_.recv(), 30)
        assert closed.value.rcvd is not None and closed.value.rcvd.code == 4503
        await asyncio.sleep(0.5)
        log = web.log()
        assert "Traceback" not in log, log
        refusals = [line for line in log.splitlines() if "the channel layer is unreachable" in line]
        assert len(refusals) == 1, log
    finally:
        await sync_to_async(web.stop)()
        from django.db import connections

        await sync_to_async(connections.close_all)()
        sys.stdout.write(f"--- daphne\n{web.log()}\n")
