"""docker-compose.yml's web service as shipped: the Dockerfile's collectstatic, then the service's
own command line (migrate, daphne) with DEBUG off, on PostgreSQL and Redis.

Run with REDIS_URL and DATABASE_URL (PostgreSQL) set; skipped without them. The command is the
file's, with only the port changed to a free one.
"""

from __future__ import annotations

import asyncio
import json
import os
import re
import signal
import socket
import subprocess
import sys
import time
import urllib.request
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import yaml
from django.conf import settings as django_settings
from django.db import connection

from schedviz.cluster.live import group_name
from schedviz.cluster.models import Cluster

REPO = Path(__file__).resolve().parents[1]
COMPOSE = REPO / "docker-compose.yml"
DOCKERFILE = REPO / "Dockerfile"
# How long the idle websocket waits: longer than the Redis read timeouts that used to close it
# (5 s) with room for several of channels_redis' blocking pops.
IDLE_SECONDS = float(os.environ.get("SCHEDVIZ_IDLE_WEBSOCKET_SECONDS", "35"))

pytestmark = [
    pytest.mark.distributed,
    pytest.mark.skipif(
        not (os.environ.get("REDIS_URL") and os.environ.get("DATABASE_URL")),
        reason="needs REDIS_URL and DATABASE_URL (PostgreSQL) set",
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


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def _collectstatic_command() -> str:
    """The Dockerfile's RUN line that collects the static files."""
    (line,) = [line for line in DOCKERFILE.read_text().splitlines() if "collectstatic" in line]
    assert line.startswith("RUN ")
    return line.removeprefix("RUN ")


class WebService:
    def __init__(self, tmp_path: Path) -> None:
        service = yaml.safe_load(COMPOSE.read_text())["services"]["web"]
        self.port = _free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        command = service["command"]
        assert "-p 8000" in command
        self.command = command.replace("-p 8000", f"-p {self.port}")
        self.env = {
            **os.environ,
            **{key: str(value) for key, value in service["environment"].items()},
            "DATABASE_URL": _test_database_url(),
            "REDIS_URL": django_settings.REDIS_URL,
            "DJANGO_SECRET_KEY": "test-only-secret-key",
            "DJANGO_DEBUG": "false",
            # The image's /app/var: where the Dockerfile collected the static files.
            "SCHEDVIZ_VAR_DIR": str(tmp_path / "var"),
            "SCHEDVIZ_START_RUNNERS": "false",
            "PATH": f"{Path(sys.executable).parent}{os.pathsep}{os.environ.get('PATH', '')}",
        }
        self.log_path = tmp_path / "web.log"
        self.process: subprocess.Popen[bytes] | None = None

    def start(self) -> None:
        collect = subprocess.run(
            ["sh", "-c", _collectstatic_command()], cwd=REPO, env=self.env, capture_output=True
        )
        assert collect.returncode == 0, collect.stderr.decode(errors="replace")
        log = open(self.log_path, "wb")  # noqa: SIM115
        self.process = subprocess.Popen(
            ["sh", "-c", self.command],
            cwd=REPO,
            env=self.env,
            stdout=log,
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )
        deadline = time.monotonic() + 90
        while True:
            assert self.process.poll() is None, self.log()
            try:
                with urllib.request.urlopen(f"{self.url}/healthz", timeout=2) as response:
                    if response.status == 200:
                        return
            except OSError:
                pass
            assert time.monotonic() < deadline, f"daphne did not answer\n{self.log()}"
            time.sleep(0.2)

    def stop(self) -> None:
        if self.process is not None and self.process.poll() is None:
            os.killpg(self.process.pid, signal.SIGTERM)
            try:
                self.process.wait(timeout=15)
            except subprocess.TimeoutExpired:
                os.killpg(self.process.pid, signal.SIGKILL)
                self.process.wait()

    def log(self) -> str:
        return self.log_path.read_text(errors="replace")[-5000:]


@pytest.fixture
def web(tmp_path: Path) -> Iterator[WebService]:
    service = WebService(tmp_path)
    try:
        service.start()
        yield service
    finally:
        service.stop()
        sys.stdout.write(f"--- daphne\n{service.log()}\n")


def _get(url: str) -> tuple[int, dict[str, str], bytes]:
    with urllib.request.urlopen(url, timeout=10) as response:
        return response.status, dict(response.headers), response.read()


def test_the_web_service_serves_htmx_the_css_and_pages_with_debug_off(web: WebService) -> None:
    cluster = Cluster.objects.create(name="shown")
    status, page_headers, page = _get(f"{web.url}/clusters/{cluster.pk}/")
    assert status == 200 and page_headers["Content-Type"].startswith("text/html")
    # Every stylesheet and script the page links is served, under a name hashed by content
    # (the Dockerfile collects them with the manifest), cached for a year.
    text = page.decode()
    linked = {
        part.split('"', 1)[0]
        for part in text.split('="/static/')[1:]
        if part.split('"', 1)[0].endswith((".css", ".js"))
    }
    (htmx,) = [path for path in linked if path.startswith("django_htmx/htmx-2.min.")]
    assert re.fullmatch(r"django_htmx/htmx-2\.min\.[0-9a-f]{12}\.js", htmx), htmx
    status, headers, body = _get(f"{web.url}/static/{htmx}")
    assert status == 200 and b"htmx" in body
    assert headers["Content-Type"].startswith("text/javascript")
    assert any(path.endswith(".css") for path in linked), linked
    for path in linked:
        status, headers, _ = _get(f"{web.url}/static/{path}")
        assert status == 200, path
        assert re.search(r"\.[0-9a-f]{12}\.(css|js)$", path), path
        max_age = re.search(r"max-age=(\d+)", headers.get("Cache-Control", ""))
        assert max_age and int(max_age.group(1)) >= 365 * 24 * 3600, (path, headers)


@pytest.mark.slow
async def test_an_idle_websocket_stays_open_and_receives_the_next_message(
    web: WebService,
) -> None:
    from asgiref.sync import sync_to_async
    from channels.layers import get_channel_layer
    from websockets.asyncio.client import connect
    from websockets.protocol import State
    from websockets.typing import Origin

    cluster = await sync_to_async(Cluster.objects.create)(name="idle")
    ws_url = f"ws://127.0.0.1:{web.port}/ws/clusters/{cluster.pk}/?format=json"
    async with connect(ws_url, origin=Origin(web.url)) as socket_:
        types = [json.loads(await socket_.recv())["type"] for _ in range(4)]
        assert types == ["hello", "cluster.status", "cluster.queue", "cluster.cycles"]
        started = time.monotonic()
        with pytest.raises(TimeoutError):
            message: Any = await asyncio.wait_for(socket_.recv(), IDLE_SECONDS)
        assert socket_.state is State.OPEN, socket_.close_code
        assert time.monotonic() - started >= IDLE_SECONDS
        sent = {"type": "cluster.status", "runner": "running"}
        await get_channel_layer().group_send(group_name(cluster.pk), sent)
        message = json.loads(await asyncio.wait_for(socket_.recv(), 10))
        assert message == sent
    assert "TimeoutError" not in web.log()
    # The thread sync_to_async ran in keeps its connection; the test database must drop it.
    from django.db import connections

    await sync_to_async(connections.close_all)()
