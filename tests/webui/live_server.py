"""The site served over ASGI (HTTP and websockets) by a real server process with its embedded
runners: ``manage.py runserver`` (daphne's) in a subprocess with a SQLite file database of its
own in a var directory, so its runner threads and the requests share one database the way an
embedded deployment does. The browser tests (conftest.py) and the soak test (test_soak.py) use it.
"""

from __future__ import annotations

import contextlib
import os
import socket
import subprocess
import sys
import time
import urllib.request
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
SERVER_START_SECONDS = 30


@dataclass(frozen=True)
class LiveServer:
    url: str
    process: subprocess.Popen[bytes]
    log: Path


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port: int = probe.getsockname()[1]
        return port


def server_env(var_dir: Path, **extra: str) -> dict[str, str]:
    """The environment of a server process: embedded mode (no PostgreSQL, no Redis), its own
    var directory and database, runners on; ``extra`` variables on top."""
    env = {k: v for k, v in os.environ.items() if k not in ("DATABASE_URL", "REDIS_URL")}
    env.update(
        SCHEDVIZ_VAR_DIR=str(var_dir),
        SCHEDVIZ_START_RUNNERS="1",
        DJANGO_DEBUG="0",
        DJANGO_SETTINGS_MODULE="schedviz.settings",
        **extra,
    )
    return env


@contextlib.contextmanager
def serve(env: dict[str, str]) -> Iterator[LiveServer]:
    """Migrates the database of ``env`` and serves the site on a free loopback port until the
    block ends; its output goes to ``server.log`` in the var directory."""
    var_dir = Path(env["SCHEDVIZ_VAR_DIR"])
    manage = [sys.executable, str(ROOT / "manage.py")]
    subprocess.run([*manage, "migrate", "-v0"], cwd=ROOT, env=env, check=True)
    port = free_port()
    log_path = var_dir / "server.log"
    log = log_path.open("wb")
    server = subprocess.Popen(
        [*manage, "runserver", "--noreload", "--insecure", f"127.0.0.1:{port}"],
        cwd=ROOT,
        env=env,
        stdout=log,
        stderr=subprocess.STDOUT,
    )
    url = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + SERVER_START_SECONDS
        while True:
            try:
                with urllib.request.urlopen(url + "/", timeout=2):
                    break
            except OSError:
                if server.poll() is not None or time.monotonic() > deadline:
                    raise RuntimeError(f"the test server did not start; see {log_path}") from None
                time.sleep(0.2)
        yield LiveServer(url=url, process=server, log=log_path)
    finally:
        server.terminate()
        try:
            server.wait(timeout=10)
        except subprocess.TimeoutExpired:
            server.kill()
        log.close()


def api_token(env: dict[str, str], username: str) -> str:
    """A JSON API token (``Authorization: Token <key>``) of a user of the database of ``env``,
    created if need be."""
    done = subprocess.run(
        [sys.executable, str(ROOT / "manage.py"), "apitoken", username],
        cwd=ROOT,
        env=env,
        check=True,
        capture_output=True,
        text=True,
    )
    return done.stdout.strip()
