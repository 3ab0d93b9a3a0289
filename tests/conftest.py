"""Shared fixtures. Scheduler tests build objects with schedviz.scheduler.testing.wrappers."""

from __future__ import annotations

import sqlite3
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

TESTS_DIR = Path(__file__).resolve().parent


@pytest.fixture(autouse=True)
def _forget_kept_amounts() -> Iterator[None]:
    """The dashboard keeps decoded amounts per (pk, version): rolled-back test rows give their
    pks out again, so each test starts with none kept."""
    from webui.presenters import forget_amounts

    forget_amounts()
    yield
    forget_amounts()


@pytest.fixture
def data_dir() -> Path:
    return TESTS_DIR / "data"


# ---------------------------------------------------------------------------------------------
# Comparison runs (tests/compare, tests/webui/test_compare_views.py, tests/worker/test_compare_*)

SEVERAL_PROFILES_LESSON = TESTS_DIR.parent / "schedviz/lessons/several-profiles/manifests.yaml"


@pytest.fixture
def alice(db: None) -> Any:
    from django.contrib.auth.models import User

    return User.objects.create_user("alice")


@pytest.fixture
def two_profile_cluster(alice: Any) -> Any:
    """Alice's cluster holding the several-profiles lesson: profiles default-scheduler and
    packer, two nodes, a running agent and five pending pods."""
    from schedviz.cluster import services

    cluster = services.cluster_create(name="two profiles", owner=alice)
    services.manifests_apply_files(cluster=cluster, paths=[str(SEVERAL_PROFILES_LESSON)])
    return cluster


# ---------------------------------------------------------------------------------------------
# Threads writing the database (tests/worker runners, tests/bench e2e runs)


@pytest.fixture
def file_database(tmp_path: Path) -> Iterator[None]:
    """The test database copied to a file for the test, when it is SQLite in memory.

    Threads sharing SQLite's in-memory database use its shared cache, whose table locks fail
    at once instead of waiting; a file database waits (busy timeout), as the embedded server's
    does. PostgreSQL needs nothing.
    """
    from django.db import connection

    if connection.vendor != "sqlite" or not connection.is_in_memory_db():
        yield
        return
    connection.ensure_connection()
    memory, original = connection.connection, connection.settings_dict["NAME"]
    target = sqlite3.connect(tmp_path / "db.sqlite3")
    memory.backup(target)
    target.close()
    # Kept open, aside: closing the last connection to an in-memory database drops it.
    connection.connection = None
    connection.settings_dict["NAME"] = str(tmp_path / "db.sqlite3")
    try:
        yield
    finally:
        connection.close()
        connection.settings_dict["NAME"] = original
        connection.connection = memory


@pytest.fixture
def markup_in_names(monkeypatch: pytest.MonkeyPatch) -> None:
    """Names as loose as storage allows: the API server's validation now refuses markup in pod
    and node names (DNS-1123 subdomains), but pages must stay safe whatever a stored name holds
    (older data, another writer), so these tests let it through the decoders."""
    from schedviz.kube.decode import nodes, pods

    def storable(name: str, prefix: bool) -> list[str]:
        return [f"may not contain '{c}'" for c in ("/", "%") if c in name]

    monkeypatch.setattr(pods, "name_is_dns_subdomain", storable)
    monkeypatch.setattr(nodes, "name_is_dns_subdomain", storable)


# ---------------------------------------------------------------------------------------------
# The distributed tests (PostgreSQL): no backend of a stopped process is left to block the flush


@pytest.fixture(autouse=True)
def _no_backend_left_behind(request: pytest.FixtureRequest) -> Iterator[None]:
    """After a distributed test, end every other session on the test database before
    pytest-django flushes it.

    A worker killed mid-transaction (SIGKILL after the warm shutdown's grace) leaves its
    PostgreSQL backend running its last statement for a moment; the flush's TRUNCATE then waits
    on that backend's locks, or deadlocks with it, and the flush fails ("couldn't be flushed"),
    leaving rows that the next test's workers resume. Autouse, so set up after pytest-django's
    own database fixture and torn down before its flush, and after the test's own fixtures have
    stopped their processes.
    """
    yield
    if request.node.get_closest_marker("distributed") is None:
        return
    from django.db import connection

    if connection.vendor != "postgresql":
        return
    others = "FROM pg_stat_activity WHERE datname = current_database() AND pid <> pg_backend_pid()"
    with connection.cursor() as cursor:
        for _ in range(100):
            cursor.execute(f"SELECT pg_terminate_backend(pid) {others}")
            cursor.execute(f"SELECT count(*) {others}")
            if cursor.fetchone() == (0,):
                return
            time.sleep(0.1)
