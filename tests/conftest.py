"""Shared fixtures. Scheduler tests build objects with schedviz.scheduler.testing.wrappers."""

from __future__ import annotations

import sqlite3
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
