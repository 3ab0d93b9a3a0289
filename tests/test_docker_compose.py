"""docker-compose.yml: the distributed deployment the README describes."""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

import pytest
import yaml

COMPOSE = Path(__file__).resolve().parents[1] / "docker-compose.yml"


def test_it_runs_web_worker_redis_and_postgres_with_healthchecks_and_volumes() -> None:
    compose = yaml.safe_load(COMPOSE.read_text())
    services = compose["services"]
    assert set(services) == {"web", "worker", "redis", "postgres"}
    for name in ("web", "redis", "postgres"):
        assert "healthcheck" in services[name], name
    assert services["postgres"]["volumes"] and services["redis"]["volumes"]
    for name in ("web", "worker"):
        environment = services[name]["environment"]
        assert environment["DATABASE_URL"].startswith("postgres://")
        assert environment["REDIS_URL"].startswith("redis://")
        assert services[name]["depends_on"]["postgres"]["condition"] == "service_healthy"


@pytest.mark.skipif(
    shutil.which("docker-compose") is None, reason="docker-compose is not installed"
)
def test_docker_compose_accepts_the_file() -> None:
    result = subprocess.run(
        ["docker-compose", "-f", str(COMPOSE), "config", "-q"],
        env={**os.environ, "DJANGO_SECRET_KEY": "test-only"},
        capture_output=True,
        text=True,
    )
    assert result.returncode == 0, result.stderr
