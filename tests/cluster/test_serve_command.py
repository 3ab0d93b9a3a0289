"""``manage.py serve`` on a new database: the demo cluster, a pod placed through the API and one
applied by ``manage.py apply`` beside it; the commands that migrate a fresh embedded database."""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
import time
import urllib.request
from collections.abc import Iterator
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
POD = b"""
apiVersion: v1
kind: Pod
metadata: {name: quick, namespace: default}
spec:
  containers: [{name: c, image: nginx, resources: {requests: {cpu: 100m}}}]
"""


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port: int = probe.getsockname()[1]
        return port


def _request(url: str, token: str, data: bytes | None = None) -> tuple[int, bytes]:
    request = urllib.request.Request(url, data=data, headers={"Authorization": f"Token {token}"})
    with urllib.request.urlopen(request, timeout=5) as response:
        return response.status, response.read()


@pytest.fixture
def server(tmp_path: Path) -> Iterator[tuple[str, dict[str, str]]]:
    env = {**os.environ, "SCHEDVIZ_VAR_DIR": str(tmp_path), "SCHEDVIZ_START_RUNNERS": "true"}
    env.pop("DATABASE_URL", None)
    env.pop("REDIS_URL", None)
    port = _free_port()
    process = subprocess.Popen(
        [sys.executable, "manage.py", "serve", "--port", str(port)],
        cwd=ROOT,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
    )
    base = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + 30
        while True:
            try:
                socket.create_connection(("127.0.0.1", port), timeout=1).close()
                break
            except OSError:
                if time.monotonic() > deadline or process.poll() is not None:
                    output = process.stdout.read().decode() if process.stdout else ""
                    pytest.fail(f"serve did not come up:\n{output}")
                time.sleep(0.2)
        yield base, env
    finally:
        process.terminate()
        process.wait(timeout=10)


def test_serve_loads_the_demo_and_places_a_pod_created_through_the_api(
    server: tuple[str, dict[str, str]],
) -> None:
    base, env = server
    token = subprocess.run(
        [sys.executable, "manage.py", "apitoken", "alice"],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        check=True,
    ).stdout.strip()
    status, body = _request(f"{base}/api/clusters/1/pods", token)
    assert status == 200
    assert {pod["name"] for pod in json.loads(body)} >= {"web-1", "web-2", "db-0"}
    status, _ = _request(f"{base}/api/clusters/1/apply", token, POD)
    assert status == 200
    deadline = time.monotonic() + 30  # a bound for a stuck run, not a measure of speed
    while not _pod_node(base, token, "quick") and time.monotonic() < deadline:
        time.sleep(0.05)
    assert _pod_node(base, token, "quick"), "the pod was never placed"


def _pod_node(base: str, token: str, name: str) -> str:
    _, body = _request(f"{base}/api/clusters/1/pods", token)
    pods = {pod["name"]: pod for pod in json.loads(body)}
    return str(pods[name]["nodeName"]) if name in pods else ""


def test_a_cli_apply_beside_a_running_server_is_scheduled_by_the_server(
    server: tuple[str, dict[str, str]], tmp_path: Path
) -> None:
    # The command commits and exits; a runner thread of its own would die with it (holding the
    # cluster's lease: "runner: offline"). The server sees the change in the change log.
    base, env = server
    token = subprocess.run(
        [sys.executable, "manage.py", "apitoken", "alice"],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        check=True,
    ).stdout.strip()
    assert _request(f"{base}/api/clusters/1/pods", token)[0] == 200  # the demo, idle by now
    time.sleep(2.0)  # the demo's runner has gone idle and given its lease up
    manifest = tmp_path / "pod.yaml"
    manifest.write_bytes(POD.replace(b"quick", b"from-cli"))
    applied = subprocess.run(
        [sys.executable, "manage.py", "apply", "-f", str(manifest), "--cluster", "demo"],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
    )
    assert applied.returncode == 0, applied.stderr
    assert applied.stdout.strip() == "pod/from-cli created"
    deadline = time.monotonic() + 30  # a bound for a stuck run, not a measure of speed
    while not _pod_node(base, token, "from-cli") and time.monotonic() < deadline:
        time.sleep(0.1)
    assert _pod_node(base, token, "from-cli"), "the server never scheduled the CLI's pod"


@pytest.mark.parametrize(
    "command",
    [
        ["apply", "-f", "{manifest}", "--cluster", "fresh"],
        [
            "bench",
            "SchedulingBasic",
            "--mode",
            "e2e",
            "--nodes",
            "2",
            "--init-pods",
            "0",
            "--pods",
            "2",
            "--output",
            "json",
        ],
    ],
    ids=["apply", "bench-e2e"],
)
def test_a_command_on_a_fresh_clone_migrates_the_embedded_database_itself(
    command: list[str], tmp_path: Path
) -> None:
    var = tmp_path / "var"  # no serve ran here: no database yet
    manifest = tmp_path / "pod.yaml"
    manifest.write_bytes(POD)
    env = {**os.environ, "SCHEDVIZ_VAR_DIR": str(var), "SCHEDVIZ_START_RUNNERS": "true"}
    env.pop("DATABASE_URL", None)
    env.pop("REDIS_URL", None)
    ran = subprocess.run(
        [sys.executable, "manage.py", *(part.format(manifest=manifest) for part in command)],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert ran.returncode == 0, ran.stderr
    assert "no such table" not in ran.stderr
    assert (var / "db.sqlite3").exists()
