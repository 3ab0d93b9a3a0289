"""Shared fixtures. Scheduler tests build objects with schedviz.scheduler.testing.wrappers."""

from __future__ import annotations

from pathlib import Path

import pytest

TESTS_DIR = Path(__file__).resolve().parent


@pytest.fixture
def data_dir() -> Path:
    return TESTS_DIR / "data"
