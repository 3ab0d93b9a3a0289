"""Internal identifiers said for people on the pages."""

from __future__ import annotations

import pytest

from webui.templatetags.ui_tags import worker_label


@pytest.mark.parametrize(
    ("worker", "shown"),
    [
        ("vm:15407", "worker process 15407 on vm"),
        ("web-1.example:42", "worker process 42 on web-1.example"),
        ("thread", "thread"),
        ("host:", "host:"),
        ("", ""),
    ],
)
def test_a_worker_is_named_by_process_and_host(worker: str, shown: str) -> None:
    assert worker_label(worker) == shown
