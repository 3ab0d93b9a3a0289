"""Distributed mode: real Celery workers over Redis, PostgreSQL, runners as tasks.

Run with REDIS_URL=redis://127.0.0.1:6379/15 and DATABASE_URL=postgres://...; skipped without
them. Each test starts `celery worker --pool=solo` subprocesses on the test database.
"""

from __future__ import annotations

import asyncio
import os
import shutil
import signal
import socket
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from django.conf import settings as django_settings
from django.db import connection
from runner_fixtures import manifests, wait_until

from schedviz.cluster import services
from schedviz.cluster.models import Change, Cluster, Cycle, Lease, Pod
from worker import tasks

REPO = Path(__file__).resolve().parents[2]

pytestmark = [
    pytest.mark.distributed,
    pytest.mark.skipif(
        not (os.environ.get("REDIS_URL") and os.environ.get("DATABASE_URL")),
        reason="distributed tests need REDIS_URL (e.g. redis://127.0.0.1:6379/15) and "
        "DATABASE_URL (PostgreSQL) set",
    ),
    pytest.mark.django_db(transaction=True),
]


def _test_database_url() -> str:
    db = connection.settings_dict
    password = f":{db['PASSWORD']}" if db.get("PASSWORD") else ""
    return (
        f"postgres://{db['USER']}{password}@{db['HOST'] or '127.0.0.1'}:{db['PORT'] or 5432}"
        f"/{db['NAME']}"
    )


class Workers:
    def __init__(self, logs: Path) -> None:
        self.logs = logs
        self.processes: list[subprocess.Popen[bytes]] = []

    def start(
        self,
        *,
        redis_url: str | None = None,
        beat: bool = False,
        env: dict[str, str] | None = None,
    ) -> subprocess.Popen[bytes]:
        env = {
            **os.environ,
            "DATABASE_URL": _test_database_url(),
            "REDIS_URL": redis_url or django_settings.REDIS_URL,
            "SCHEDVIZ_RUNNER_IDLE_SECONDS": "1",
            "SCHEDVIZ_START_RUNNERS": "false",
            "SCHEDVIZ_RESUME_SECONDS": "2",
            **(env or {}),
        }
        log = open(self.logs / f"worker-{len(self.processes)}.log", "wb")  # noqa: SIM115
        process = subprocess.Popen(
            [
                str(Path(sys.executable).parent / "celery"),
                "-A",
                "schedviz.celery",
                "worker",
                "--pool=solo",
                "-c",
                "1",
                "--without-gossip",
                "--without-mingle",
                "--loglevel=INFO",
                *(["--beat", f"--schedule={self.logs / 'beat-schedule'}"] if beat else []),
            ],
            cwd=REPO,
            env=env,
            stdout=log,
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )
        self.processes.append(process)
        return process

    def stop_all(self) -> None:
        for process in self.processes:
            if process.poll() is None:
                process.send_signal(signal.SIGTERM)
        for process in self.processes:
            try:
                process.wait(timeout=15)
            except subprocess.TimeoutExpired:
                process.kill()
                process.wait()


@pytest.fixture
def workers(tmp_path: Path, settings: Any) -> Iterator[Workers]:
    yield from worker_pool(tmp_path, settings)


def worker_pool(tmp_path: Path, settings: Any) -> Iterator[Workers]:
    """Worker processes started by the test, stopped after it, their logs printed."""
    import redis

    redis.Redis.from_url(settings.REDIS_URL).flushdb()  # no task left from an earlier run
    settings.SCHEDVIZ_START_RUNNERS = False
    pool = Workers(tmp_path)
    try:
        yield pool
    finally:
        pool.stop_all()
        for log in sorted(tmp_path.glob("worker-*.log")):
            sys.stdout.write(f"--- {log.name}\n{log.read_text(errors='replace')[-3000:]}\n")


def bound_count(cluster: Cluster) -> int:
    return Pod.objects.filter(cluster=cluster).exclude(node_name="").count()


def test_a_committed_change_starts_a_runner_task_that_schedules_the_pods(
    workers: Workers, settings: Any
) -> None:
    workers.start()
    settings.SCHEDVIZ_START_RUNNERS = True
    cluster = services.cluster_create(name="d", clock_mode=Cluster.ClockMode.VIRTUAL)
    services.manifests_apply(cluster=cluster, text=manifests(3, 20))
    wait_until(lambda: bound_count(cluster) == 20, timeout=60)
    # Cycle rows follow the binds in batches.
    wait_until(lambda: Cycle.objects.filter(cluster=cluster).count() == 20, timeout=30)
    wait_until(lambda: Lease.objects.get(cluster=cluster).holder == "", timeout=30)


def test_a_worker_killed_mid_run_is_resumed_by_the_next_and_binds_each_pod_once(
    workers: Workers,
) -> None:
    pods = 800
    cluster = services.cluster_create(name="k", clock_mode=Cluster.ClockMode.VIRTUAL)
    services.manifests_apply(cluster=cluster, text=manifests(40, pods))
    # A short lease, so the dead worker's lease expires soon.
    Lease.objects.create(cluster=cluster, duration_seconds=2.0)
    first = workers.start()
    tasks.run_cluster.delay(cluster.pk)
    wait_until(lambda: bound_count(cluster) >= 20, timeout=60)
    os.killpg(first.pid, signal.SIGKILL)
    first.wait()
    killed_at = bound_count(cluster)
    assert killed_at < pods, "the run ended before the worker was killed"
    assert Lease.objects.get(cluster=cluster).holder != ""  # a dead holder keeps it
    workers.start()  # resumes orphaned clusters once their leases have expired
    wait_until(lambda: bound_count(cluster) == pods, timeout=120)
    binds: dict[str, int] = {}
    for name, manifest in Change.objects.filter(
        cluster=cluster, kind="Pod", type=Change.Type.MODIFIED
    ).values_list("name", "manifest"):
        if manifest.get("spec", {}).get("nodeName"):
            binds[name] = binds.get(name, 0) + 1
    assert len(binds) == pods
    assert set(binds.values()) == {1}
    numbers = list(Cycle.objects.filter(cluster=cluster).values_list("number", flat=True))
    assert len(numbers) == len(set(numbers))


def test_two_workers_asked_to_run_one_cluster_at_once_let_exactly_one_schedule(
    workers: Workers,
) -> None:
    pods = 300
    cluster = services.cluster_create(name="two", clock_mode=Cluster.ClockMode.VIRTUAL)
    services.manifests_apply(cluster=cluster, text=manifests(20, pods))
    workers.start()
    workers.start()
    # Results are not kept by default (CELERY_TASK_IGNORE_RESULT): asked for here.
    results = [tasks.run_cluster.apply_async((cluster.pk,), ignore_result=False) for _ in range(2)]
    outcomes = [result.get(timeout=120) for result in results]
    assert sorted(outcome["acquired"] for outcome in outcomes) == [False, True]
    (winner,) = [outcome for outcome in outcomes if outcome["acquired"]]
    assert winner["cycles"] == pods
    wait_until(lambda: Cycle.objects.filter(cluster=cluster).count() == pods, timeout=30)
    # The change log, the pods and the traces agree: each pod bound once, where its trace says.
    binds = {
        name: manifest["spec"]["nodeName"]
        for name, manifest in Change.objects.filter(
            cluster=cluster, kind="Pod", type=Change.Type.MODIFIED
        ).values_list("name", "manifest")
        if manifest.get("spec", {}).get("nodeName")
    }
    placed = dict(Pod.objects.filter(cluster=cluster).values_list("name", "node_name"))
    scheduled = dict(
        Cycle.objects.filter(cluster=cluster, result="Scheduled").values_list("pod_name", "node")
    )
    assert len(binds) == pods
    assert binds == placed == scheduled


def assert_each_pod_bound_once_and_traced_where_bound(cluster: Cluster, pods: int) -> None:
    binds: dict[str, int] = {}
    for name, manifest in Change.objects.filter(
        cluster=cluster, kind="Pod", type=Change.Type.MODIFIED
    ).values_list("name", "manifest"):
        if manifest.get("spec", {}).get("nodeName"):
            binds[name] = binds.get(name, 0) + 1
    assert len(binds) == pods and set(binds.values()) == {1}
    numbers = list(Cycle.objects.filter(cluster=cluster).values_list("number", flat=True))
    assert len(numbers) == len(set(numbers))
    assert not Cycle.objects.filter(cluster=cluster).exclude(result="Scheduled").exists()
    placed = dict(Pod.objects.filter(cluster=cluster).values_list("name", "node_name"))
    scheduled = Cycle.objects.filter(cluster=cluster, result="Scheduled")
    assert all(placed[pod] == node for pod, node in scheduled.values_list("pod_name", "node"))


def test_a_runner_whose_database_connection_is_terminated_reconnects_and_binds_each_pod_once(
    workers: Workers,
) -> None:
    pods = 600
    cluster = services.cluster_create(name="pg", clock_mode=Cluster.ClockMode.VIRTUAL)
    services.manifests_apply(cluster=cluster, text=manifests(30, pods))
    workers.start()
    tasks.run_cluster.delay(cluster.pk)
    for threshold in (20, 150):
        wait_until(lambda n=threshold: bound_count(cluster) >= n, timeout=60)
        with connection.cursor() as cursor:
            # Every other backend of the test database: the worker's, mid-run.
            cursor.execute(
                "SELECT pg_terminate_backend(pid) FROM pg_stat_activity "
                "WHERE datname = current_database() AND pid <> pg_backend_pid()"
            )
            assert any(terminated for (terminated,) in cursor.fetchall())
        assert bound_count(cluster) < pods, "the run ended before the connection was dropped"
    wait_until(lambda: bound_count(cluster) == pods, timeout=120)
    # The run went on to its end and gave the lease up (a crashed one keeps it).
    wait_until(lambda: Lease.objects.get(cluster=cluster).holder == "", timeout=30)
    log = (workers.logs / "worker-0.log").read_text(errors="replace")
    assert "the database connection failed" in log
    assert_each_pod_bound_once_and_traced_where_bound(cluster, pods)


class OwnRedis:
    """A redis-server of the test's own on a spare loopback port, to kill and start again (the
    machine's Redis is shared)."""

    def __init__(self, logs: Path) -> None:
        with socket.socket() as probe:
            probe.bind(("127.0.0.1", 0))
            self.port = probe.getsockname()[1]
        self.url = f"redis://127.0.0.1:{self.port}/0"
        self.logs = logs
        self.process: subprocess.Popen[bytes] | None = None

    def start(self) -> None:
        import redis

        log = open(self.logs / "redis.log", "ab")  # noqa: SIM115
        self.process = subprocess.Popen(
            [
                "redis-server",
                "--bind",
                "127.0.0.1",
                "--port",
                str(self.port),
                "--save",
                "",
                "--appendonly",
                "no",
                "--daemonize",
                "no",
            ],
            stdout=log,
            stderr=subprocess.STDOUT,
        )
        client = redis.Redis.from_url(self.url)
        wait_until(lambda: _answers(client), timeout=20)

    def kill(self) -> None:
        if self.process is not None and self.process.poll() is None:
            self.process.kill()
            self.process.wait()


def _answers(client: Any) -> bool:
    import redis

    try:
        return bool(client.ping())
    except redis.ConnectionError:
        return False


@pytest.fixture
def own_redis(tmp_path: Path) -> Iterator[OwnRedis]:
    if shutil.which("redis-server") is None:
        pytest.skip("needs redis-server")
    server = OwnRedis(tmp_path)
    server.start()
    try:
        yield server
    finally:
        server.kill()


def _send_run(redis_url: str, cluster_id: int) -> None:
    with tasks.run_cluster.app.connection_for_write(redis_url) as broker:
        tasks.run_cluster.apply_async((cluster_id,), connection=broker)


def test_a_redis_restart_mid_run_loses_no_scheduling_and_messages_flow_again(
    workers: Workers, own_redis: OwnRedis
) -> None:
    from channels_redis.core import RedisChannelLayer

    from schedviz.cluster.live import group_name

    first = services.cluster_create(name="during", clock_mode=Cluster.ClockMode.VIRTUAL)
    services.manifests_apply(cluster=first, text=manifests(20, 400))
    queued = services.cluster_create(name="queued", clock_mode=Cluster.ClockMode.VIRTUAL)
    services.manifests_apply(cluster=queued, text=manifests(2, 10))
    workers.start(redis_url=own_redis.url, beat=True)
    _send_run(own_redis.url, first.pk)
    wait_until(lambda: bound_count(first) >= 20, timeout=60)
    # The second cluster's task waits in Redis behind the running one, and is lost with it.
    _send_run(own_redis.url, queued.pk)
    own_redis.kill()
    down_at = bound_count(first)
    assert down_at < 400, "the run ended before Redis went away"
    # Scheduling goes on without Redis: publishing fails and is skipped.
    wait_until(lambda: bound_count(first) == 400, timeout=120)
    own_redis.start()
    layer = RedisChannelLayer(hosts=[own_redis.url])
    loop = asyncio.new_event_loop()
    try:
        channel = loop.run_until_complete(layer.new_channel())
        loop.run_until_complete(layer.group_add(group_name(queued.pk), channel))
        # The periodic resume finds the cluster whose task was lost and runs it; its cycles
        # reach the channel layer again.
        wait_until(lambda: bound_count(queued) == 10, timeout=90)
        message = loop.run_until_complete(asyncio.wait_for(layer.receive(channel), 30))
        assert message["type"] in {"cluster.status", "cluster.cycles", "cluster.queue"}
    finally:
        loop.run_until_complete(layer.flush())
        loop.close()
    log = (workers.logs / "worker-0.log").read_text(errors="replace")
    assert f"publishing to {group_name(first.pk)} failed" in log
    assert_each_pod_bound_once_and_traced_where_bound(queued, 10)
    binds = Change.objects.filter(cluster=first, kind="Pod", type=Change.Type.MODIFIED)
    bound_names = [
        name for name, m in binds.values_list("name", "manifest") if m["spec"].get("nodeName")
    ]
    assert len(bound_names) == len(set(bound_names)) == 400


async def test_a_websocket_receives_the_cycle_of_a_pod_applied_through_the_api(
    workers: Workers,
) -> None:
    import asyncio
    import json

    from asgiref.sync import sync_to_async
    from channels.routing import URLRouter
    from channels.testing import WebsocketCommunicator
    from django.contrib.auth.models import AnonymousUser
    from django.test import Client

    from webui.routing import websocket_urlpatterns

    workers.start()
    cluster = await sync_to_async(services.cluster_create)(name="ws")
    await sync_to_async(services.manifests_apply)(cluster=cluster, text=manifests(2, 0))
    token = (await sync_to_async(services.api_token_create)(username="ws-user")).key
    communicator = WebsocketCommunicator(
        URLRouter(websocket_urlpatterns), f"/ws/clusters/{cluster.pk}/?format=json"
    )
    communicator.scope["user"] = AnonymousUser()
    connected, _ = await communicator.connect()
    assert connected
    pod = (
        "apiVersion: v1\nkind: Pod\nmetadata: {name: watched, namespace: default}\n"
        "spec:\n  containers: [{name: c, image: nginx}]\n"
    )
    django_settings.SCHEDVIZ_START_RUNNERS = True
    try:
        response = await sync_to_async(Client().post)(
            f"/api/clusters/{cluster.pk}/apply",
            data=pod,
            content_type="application/yaml",
            HTTP_AUTHORIZATION=f"Token {token}",
        )
    finally:
        django_settings.SCHEDVIZ_START_RUNNERS = False
    assert response.status_code == 200
    deadline = asyncio.get_running_loop().time() + 60
    while True:
        remaining = deadline - asyncio.get_running_loop().time()
        assert remaining > 0, "no cycle message for the pod"
        message = json.loads(await communicator.receive_from(timeout=remaining))
        cycles = message.get("cycles", []) if message.get("type") == "cluster.cycles" else []
        if any(cycle["pod"] == "default/watched" for cycle in cycles):
            break
    await communicator.disconnect()
    # The thread sync_to_async ran in keeps its connection; the test database must drop it.
    from django.db import connections

    await sync_to_async(connections.close_all)()
