"""Shared fixtures. Scheduler tests build objects with schedviz.scheduler.testing.wrappers."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

TESTS_DIR = Path(__file__).resolve().parent


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
    packer, two nodes, five pending pods."""
    from schedviz.cluster import services

    cluster = services.cluster_create(name="two profiles", owner=alice)
    services.manifests_apply_files(cluster=cluster, paths=[str(SEVERAL_PROFILES_LESSON)])
    return cluster
