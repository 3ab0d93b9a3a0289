"""Production settings: ``manage.py check --deploy`` passes with the production environment,
and a deployment that requires a secret key refuses to start without one."""

from __future__ import annotations

import os
import secrets
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def manage(*args: str, **env: str) -> subprocess.CompletedProcess[str]:
    environment = {
        k: v for k, v in os.environ.items() if not k.startswith(("SCHEDVIZ_", "DJANGO_"))
    }
    environment.update(env)
    return subprocess.run(
        [sys.executable, "manage.py", *args],
        cwd=ROOT,
        env=environment,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )


def test_check_deploy_passes_without_warnings_in_production() -> None:
    result = manage(
        "check",
        "--deploy",
        "--fail-level",
        "WARNING",
        DJANGO_DEBUG="false",
        DJANGO_SECRET_KEY=secrets.token_urlsafe(50),
        SCHEDVIZ_HTTPS="true",
        DJANGO_ALLOWED_HOSTS="schedviz.example.org",
    )
    assert result.returncode == 0, result.stdout + result.stderr
    assert "WARNINGS" not in result.stdout + result.stderr
    assert "System check identified no issues" in result.stdout


def test_the_generated_key_passes_too_when_no_key_is_set() -> None:
    result = manage("check", "--deploy", "--fail-level", "WARNING", SCHEDVIZ_HTTPS="true")
    assert result.returncode == 0, result.stdout + result.stderr


def test_without_https_check_deploy_names_what_is_missing() -> None:
    """The plain-http default is for a laptop; check --deploy says so rather than passing."""
    result = manage("check", "--deploy", "--fail-level", "WARNING")
    assert result.returncode != 0
    for check in ("security.W004", "security.W008", "security.W012", "security.W016"):
        assert check in result.stderr + result.stdout


def test_a_required_secret_key_that_is_missing_stops_the_start() -> None:
    result = manage("check", SCHEDVIZ_REQUIRE_SECRET_KEY="true")
    assert result.returncode != 0
    assert "SCHEDVIZ_REQUIRE_SECRET_KEY is on but DJANGO_SECRET_KEY is unset" in result.stderr
    assert (
        manage("check", SCHEDVIZ_REQUIRE_SECRET_KEY="true", DJANGO_SECRET_KEY="k" * 60).returncode
        == 0
    )


def test_debug_is_off_unless_asked() -> None:
    code = "from django.conf import settings; print(settings.DEBUG)"
    assert manage("shell", "-c", code).stdout.split()[-1] == "False"
    assert manage("shell", "-c", code, DJANGO_DEBUG="true").stdout.split()[-1] == "True"
