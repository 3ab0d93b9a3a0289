"""docker-compose.yml: the distributed deployment the README describes."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
from pathlib import Path

import pytest
import yaml
from django.conf import settings
from django.templatetags.static import static

COMPOSE = Path(__file__).resolve().parents[1] / "docker-compose.yml"
DOCKERFILE = COMPOSE.parent / "Dockerfile"


def test_it_runs_web_worker_beat_redis_and_postgres_with_healthchecks_and_volumes() -> None:
    compose = yaml.safe_load(COMPOSE.read_text())
    services = compose["services"]
    assert set(services) == {"web", "worker", "beat", "redis", "postgres"}
    for name in ("web", "redis", "postgres"):
        assert "healthcheck" in services[name], name
    assert services["postgres"]["volumes"] and services["redis"]["volumes"]
    for name in ("web", "worker", "beat"):
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


def test_every_service_restarts_when_it_dies() -> None:
    # A killed worker left down stalls every cluster it held until someone notices.
    services = yaml.safe_load(COMPOSE.read_text())["services"]
    for name, service in services.items():
        assert service.get("restart") in ("always", "unless-stopped"), name


def test_one_beat_runs_however_many_workers_are_scaled() -> None:
    # `worker -B` on every worker ran one beat per worker, each sending the periodic tasks.
    services = yaml.safe_load(COMPOSE.read_text())["services"]
    beats = [
        name
        for name, service in services.items()
        if re.search(r"(^|\s)(-B|--beat|beat)(\s|$)", str(service.get("command", "")))
    ]
    assert beats == ["beat"]
    assert services["beat"]["command"].split()[:4] == ["celery", "-A", "schedviz.celery", "beat"]
    assert services["worker"]["command"].split()[:4] == [
        "celery",
        "-A",
        "schedviz.celery",
        "worker",
    ]


def test_celery_keeps_no_result_keys_in_redis_by_default() -> None:
    # 1,123 result keys after 15 minutes: nothing reads them.
    assert settings.CELERY_TASK_IGNORE_RESULT is True
    assert 0 < settings.CELERY_RESULT_EXPIRES <= 3600


def test_the_image_collects_static_files_under_hashed_names() -> None:
    (line,) = [line for line in DOCKERFILE.read_text().splitlines() if "collectstatic" in line]
    assert "SCHEDVIZ_STATIC_MANIFEST=true" in line


def test_static_files_keep_their_names_without_collected_files() -> None:
    # The embedded server and the tests run no collectstatic: plain names, read from the apps.
    assert not settings.STATIC_MANIFEST
    assert static("django_htmx/htmx-2.min.js").endswith("/django_htmx/htmx-2.min.js")
