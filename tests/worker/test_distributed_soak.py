"""Distributed soak: the deployment docker-compose.yml describes, on this machine. daphne, two
Celery workers and the beat started with the compose file's own command lines for its web,
worker and beat services (only the port and the beat's schedule file differ), on PostgreSQL and
Redis; 20 JSON websocket
clients watch one live cluster while pods come at a steady rate plus bursts. Mid-run one worker
is ``kill -9``ed (and started again, as compose restarts it) and, later, the lease holder's
process is SIGSTOPped until another has taken over; between the two the websockets sit idle for
30 s. At the end: every pod bound once, no node over-committed, every stored cycle delivered to
every client or counted as coalesced, no close (1011 or any other), takeover times reported.

``SCHEDVIZ_DISTRIBUTED_SOAK_SECONDS`` sets how long pods are created (default 60). Skipped
without REDIS_URL and DATABASE_URL (PostgreSQL), like the other distributed tests.
"""

from __future__ import annotations

import asyncio
import json
import os
import shlex
import signal
import socket
import subprocess
import sys
import time
import urllib.request
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest
import yaml
from django.db import connection, connections
from test_distributed import _test_database_url
from websockets.asyncio.client import connect
from websockets.exceptions import ConnectionClosed

from schedviz.cluster.models import Change, Cycle, Lease, Pod

REPO = Path(__file__).resolve().parents[2]

pytestmark = [
    pytest.mark.distributed,
    pytest.mark.slow,
    pytest.mark.skipif(
        not (os.environ.get("REDIS_URL") and os.environ.get("DATABASE_URL")),
        reason="distributed tests need REDIS_URL and DATABASE_URL (PostgreSQL) set",
    ),
    pytest.mark.django_db(transaction=True),
]

SOAK_SECONDS = float(os.environ.get("SCHEDVIZ_DISTRIBUTED_SOAK_SECONDS") or 60)
CLIENTS = 20
NODES = 10
PODS_PER_NODE = 110
PODS_PER_SECOND = 4.0
BURST, BURST_EVERY = 40, 15.0
IDLE_SECONDS = 30.0
LEASE_SECONDS = 5.0
START_SECONDS = 60.0
SETTLE_SECONDS = 120.0

NODE = """
apiVersion: v1
kind: Node
metadata: {name: node-%(i)d}
status: {allocatable: {cpu: "8", memory: 32Gi, pods: "%(pods)d"}}
"""
POD = """
apiVersion: v1
kind: Pod
metadata: {name: soak-%(i)05d}
spec: {containers: [{name: c, image: busybox, resources: {requests: {cpu: 50m, memory: 64Mi}}}]}
"""


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port: int = probe.getsockname()[1]
        return port


def compose_command(service: str) -> list[str]:
    """The service's command line in docker-compose.yml, as argv."""
    document = yaml.safe_load((REPO / "docker-compose.yml").read_text())
    command = document["services"][service]["command"]
    return shlex.split(command) if isinstance(command, str) else list(command)


@dataclass
class Deployment:
    logs: Path
    env: dict[str, str]
    port: int
    web: subprocess.Popen[bytes] | None = None
    beat: subprocess.Popen[bytes] | None = None
    workers: list[subprocess.Popen[bytes]] = field(default_factory=list)

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def _spawn(self, argv: list[str], name: str, cwd: Path) -> subprocess.Popen[bytes]:
        log = (self.logs / f"{name}.log").open("ab")
        return subprocess.Popen(
            argv,
            cwd=cwd,
            env=self.env,
            stdout=log,
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )

    def start_web(self) -> None:
        argv = compose_command("web")
        # sh -c "python manage.py migrate --noinput && daphne -b 0.0.0.0 -p 8000 ...": the same
        # line with this machine's free port.
        argv[-1] = argv[-1].replace("-p 8000", f"-p {self.port}")
        self.web = self._spawn(argv, "web", REPO)
        deadline = time.monotonic() + START_SECONDS
        while True:
            try:
                with urllib.request.urlopen(self.url + "/healthz", timeout=2):
                    return
            except OSError:
                assert self.web.poll() is None, (self.logs / "web.log").read_text()[-3000:]
                assert time.monotonic() < deadline, "daphne did not start"
                time.sleep(0.3)

    def start_worker(self) -> subprocess.Popen[bytes]:
        index = len(self.workers)
        home = self.logs / f"worker-{index}"
        home.mkdir(exist_ok=True)
        process = self._spawn(compose_command("worker"), f"worker-{index}", home)
        self.workers.append(process)
        return process

    def start_beat(self) -> None:
        """The compose file's one beat, its schedule file in this test's directory."""
        home = self.logs / "beat"
        home.mkdir(exist_ok=True)
        argv = [
            f"--schedule={home / 'celerybeat-schedule'}" if part.startswith("--schedule=") else part
            for part in compose_command("beat")
        ]
        self.beat = self._spawn(argv, "beat", home)

    def stop(self) -> None:
        others = [process for process in (self.web, self.beat) if process is not None]
        for process in [*self.workers, *others]:
            if process.poll() is None:
                os.killpg(process.pid, signal.SIGCONT)
                os.killpg(process.pid, signal.SIGTERM)
        for process in [*self.workers, *others]:
            try:
                process.wait(timeout=20)
            except subprocess.TimeoutExpired:
                os.killpg(process.pid, signal.SIGKILL)
                process.wait()


@pytest.fixture
def deployment(tmp_path: Path) -> Iterator[Deployment]:
    import redis

    redis.Redis.from_url(os.environ["REDIS_URL"]).flushdb()
    env = {
        **os.environ,
        "PYTHONPATH": str(REPO),
        "PATH": f"{Path(sys.executable).parent}:{os.environ.get('PATH', '')}",
        "DATABASE_URL": _test_database_url(),
        "REDIS_URL": os.environ["REDIS_URL"],
        "DJANGO_SECRET_KEY": "soak-" + "x" * 40,
        "DJANGO_ALLOWED_HOSTS": "localhost,127.0.0.1",
        "SCHEDVIZ_WRITE_RATE_PER_MINUTE": "0",
    }
    deployed = Deployment(tmp_path, env, free_port())
    try:
        yield deployed
    finally:
        deployed.stop()
        _until_no_other_sessions()
        for log in sorted(tmp_path.glob("*.log")):
            sys.stdout.write(f"--- {log.name}\n{log.read_text(errors='replace')[-2500:]}\n")


def _until_no_other_sessions(timeout: float = 20.0) -> None:
    """The processes stopped, their database sessions end a moment later: waited for, so the
    test database can be dropped."""
    deadline = time.monotonic() + timeout
    with connection.cursor() as cursor:
        while time.monotonic() < deadline:
            cursor.execute(
                "SELECT count(*) FROM pg_stat_activity "
                "WHERE datname = current_database() AND pid <> pg_backend_pid()"
            )
            if cursor.fetchone()[0] == 0:
                return
            time.sleep(0.2)


def api_token(env: dict[str, str]) -> str:
    done = subprocess.run(
        [sys.executable, str(REPO / "manage.py"), "apitoken", "soak"],
        cwd=REPO,
        env=env,
        check=True,
        capture_output=True,
        text=True,
    )
    return done.stdout.strip()


def request(url: str, token: str, method: str, body: str, content_type: str) -> Any:
    sent = urllib.request.Request(
        url,
        method=method,
        data=body.encode(),
        headers={"Authorization": f"Token {token}", "Content-Type": content_type},
    )
    with urllib.request.urlopen(sent, timeout=60) as response:
        return json.loads(response.read())


@dataclass
class Watcher:
    number: int
    messages: list[tuple[float, dict[str, Any]]] = field(default_factory=list)
    close_code: int | None = None
    error: str | None = None

    def covered(self) -> set[int]:
        """Cycle numbers received, or counted as coalesced (``dropped``: the cycles just
        before a message's first summary that it left out)."""
        numbers: set[int] = set()
        for _, message in self.messages:
            if message.get("type") != "cluster.cycles" or not message["cycles"]:
                continue
            first = message["cycles"][0]["cycle"]
            numbers.update(range(first - int(message.get("dropped") or 0), first))
            numbers.update(summary["cycle"] for summary in message["cycles"])
        return numbers


async def watch(url: str, token: str, watcher: Watcher, stop: asyncio.Event) -> None:
    try:
        async with connect(
            url, additional_headers={"Authorization": f"Token {token}"}, open_timeout=60
        ) as socket:
            while not stop.is_set():
                try:
                    frame = await asyncio.wait_for(socket.recv(), timeout=0.5)
                except TimeoutError:
                    continue
                watcher.messages.append((time.monotonic(), json.loads(frame)))
    except ConnectionClosed as closed:
        watcher.close_code = closed.rcvd.code if closed.rcvd else 1006
        watcher.error = repr(closed)
    except (OSError, TimeoutError) as error:
        watcher.error = repr(error)


def holder_pid(cluster_id: int) -> int | None:
    holder = Lease.objects.filter(cluster_id=cluster_id).values_list("holder", flat=True).first()
    return int(holder.split(":")[1]) if holder else None


def worker_of(deployed: Deployment, pid: int) -> subprocess.Popen[bytes] | None:
    """The worker whose process group holds ``pid`` (a prefork child, or the worker itself)."""
    for process in deployed.workers:
        if process.poll() is None and os.getpgid(pid) == process.pid:
            return process
    return None


def report(line: str) -> None:
    sys.stdout.write(f"\n[measured] {line}\n")


async def in_thread(function: Any, *args: Any) -> Any:
    """``function(*args)`` in a thread of the loop's executor, whose database connection is
    closed after it: left open, those threads' sessions outlive the test and keep its database
    from being dropped ("being accessed by 2 other sessions")."""

    def call() -> Any:
        try:
            return function(*args)
        finally:
            connections.close_all()

    return await asyncio.to_thread(call)


async def until(condition: Any, timeout: float) -> bool:
    deadline = time.monotonic() + timeout
    while not await in_thread(condition):
        if time.monotonic() > deadline:
            return False
        await asyncio.sleep(0.2)
    return True


async def test_the_compose_deployment_soaks_through_a_killed_and_a_frozen_worker(
    deployment: Deployment,
) -> None:
    deployed = deployment
    deployed.start_web()  # migrates first, as the compose command does
    for _ in range(2):
        deployed.start_worker()
    deployed.start_beat()
    token = await in_thread(api_token, deployed.env)
    cluster = (
        await in_thread(
            request,
            deployed.url + "/api/clusters",
            token,
            "POST",
            json.dumps({"name": "soak", "clockMode": "live"}),
            "application/json",
        )
    )["id"]
    await in_thread(
        lambda: Lease.objects.update_or_create(
            cluster_id=cluster, defaults={"duration_seconds": LEASE_SECONDS}
        )
    )
    apply_url = deployed.url + f"/api/clusters/{cluster}/apply"
    nodes = "\n---\n".join(NODE % {"i": i, "pods": PODS_PER_NODE} for i in range(NODES))
    await in_thread(request, apply_url, token, "POST", nodes, "application/yaml")

    ws_url = deployed.url.replace("http://", "ws://") + f"/ws/clusters/{cluster}/?format=json"
    watchers = [Watcher(n) for n in range(CLIENTS)]
    stop = asyncio.Event()
    tasks = [asyncio.create_task(watch(ws_url, token, w, stop)) for w in watchers]
    created = 0

    async def create(count: int) -> None:
        nonlocal created
        body = "\n---\n".join(POD % {"i": i} for i in range(created, created + count))
        created += count
        await in_thread(request, apply_url, token, "POST", body, "application/yaml")

    async def stream(seconds: float) -> None:
        started = time.monotonic()
        next_burst = started + BURST_EVERY / 2
        while time.monotonic() - started < seconds:
            await create(1)
            if time.monotonic() >= next_burst:
                await create(BURST)
                next_burst += BURST_EVERY
            await asyncio.sleep(1 / PODS_PER_SECOND)

    def bound() -> int:
        return Pod.objects.filter(cluster_id=cluster).exclude(node_name="").count()

    takeovers: dict[str, float] = {}

    async def take_over_after(fault: str, act: Any) -> None:
        """Does ``act`` to the holder's worker while it schedules, and measures until pods
        are bound again by another process."""
        await create(BURST)  # work for a runner, which holds the lease meanwhile
        assert await until(lambda: holder_pid(cluster) is not None, 60), "no runner"
        pid = await in_thread(holder_pid, cluster)
        assert pid is not None
        before = await in_thread(bound)
        at = time.monotonic()
        act(pid)
        await create(20)
        assert await until(
            lambda: holder_pid(cluster) not in (None, pid) and bound() > before, 120
        ), f"no takeover after {fault}"
        takeovers[fault] = time.monotonic() - at

    try:
        assert await until(lambda: all(w.messages or w.error for w in watchers), 60)
        third = SOAK_SECONDS / 3
        await stream(third)

        def kill(pid: int) -> None:
            process = worker_of(deployed, pid)
            assert process is not None
            os.killpg(process.pid, signal.SIGKILL)
            process.wait()
            deployed.start_worker()  # compose restarts it

        await take_over_after("kill -9", kill)
        await stream(third)
        # Everything bound, then nothing happens for a while: the websockets sit idle.
        assert await until(lambda: bound() == created, SETTLE_SECONDS)
        await asyncio.sleep(IDLE_SECONDS)
        frozen: list[int] = []

        def freeze(pid: int) -> None:
            frozen.append(pid)
            os.kill(pid, signal.SIGSTOP)

        try:
            await take_over_after("SIGSTOP", freeze)
        finally:
            for pid in frozen:
                os.kill(pid, signal.SIGCONT)
        await stream(third)
        assert await until(lambda: bound() == created, SETTLE_SECONDS), (
            f"{created - bound()} pods left unbound"
        )
        stored = await in_thread(
            lambda: set(Cycle.objects.filter(cluster_id=cluster).values_list("number", flat=True))
        )
        newest = max(stored)
        await until(lambda: all(newest in w.covered() or w.error for w in watchers), 60)
    finally:
        stop.set()
        await asyncio.gather(*tasks)

    # -- each pod bound once, no node over its pods or CPU
    def binds() -> dict[str, int]:
        counts: dict[str, int] = {}
        for name, manifest in Change.objects.filter(
            cluster_id=cluster, kind="Pod", type=Change.Type.MODIFIED
        ).values_list("name", "manifest"):
            if manifest.get("spec", {}).get("nodeName"):
                counts[name] = counts.get(name, 0) + 1
        return counts

    counted = await in_thread(binds)
    assert len(counted) == created and set(counted.values()) == {1}
    placed = await in_thread(
        lambda: list(Pod.objects.filter(cluster_id=cluster).values_list("node_name", flat=True))
    )
    per_node = {node: placed.count(node) for node in set(placed)}
    assert max(per_node.values()) <= min(PODS_PER_NODE, 8000 // 50)

    # -- every client: never closed, every stored cycle delivered or counted as coalesced
    messages = [len(w.messages) for w in watchers]
    closes = [w.close_code for w in watchers if w.close_code is not None]
    report(
        f"distributed soak: {SOAK_SECONDS:.0f} s of pods, {created} pods, {len(stored)} stored "
        f"cycles, {CLIENTS} clients ({min(messages)}..{max(messages)} messages each), "
        f"websockets idle {IDLE_SECONDS:.0f} s; takeover after kill -9 "
        f"{takeovers['kill -9']:.2f} s, after SIGSTOP {takeovers['SIGSTOP']:.2f} s "
        f"(lease {LEASE_SECONDS:.0f} s); websocket closes: {closes or 'none'}"
    )
    for watcher in watchers:
        if watcher.error is None:
            missing = stored - watcher.covered()
            assert not missing, f"client {watcher.number} missed cycles {sorted(missing)[:10]}"
    closed = [(w.number, w.error) for w in watchers if w.error is not None]
    assert not closed, f"clients closed: {closed}"
