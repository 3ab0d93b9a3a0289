"""Compare profiles in a real Chromium against the live server: start a comparison of two
profiles on a small cluster, watch both progress bars reach 100 %, find a pod that lands
differently."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from test_browser_dashboard import _apply, _new_cluster

pytestmark = pytest.mark.browser

LESSON = Path(__file__).resolve().parents[2] / "schedviz/lessons/several-profiles/manifests.yaml"


def test_a_comparison_of_two_profiles_reaches_100_percent_and_shows_a_pod_that_moved(
    dashboard_page: Any,
) -> None:
    page = dashboard_page
    _new_cluster(page)
    _apply(page, LESSON.read_text())
    page.get_by_role("link", name="Compare profiles").click()
    page.wait_for_url("**/compare/")
    page.get_by_label("default-scheduler").check()
    page.get_by_label("packer").check()
    page.get_by_role("button", name="Start comparison").click()
    page.wait_for_url("**/compare/*/")
    state = page.locator("#compare-state")
    state.and_(page.locator("[data-status=succeeded]")).wait_for(timeout=60_000)
    percents = page.locator("tr.variant .percent").all_inner_texts()
    assert percents == ["100%", "100%"]
    moved = page.locator("#differing tbody tr")
    assert moved.count() >= 1
    cells = moved.first.locator("td").all_inner_texts()
    assert len(cells) == 2 and cells[0] != cells[1]
    assert page.locator("#summary tbody tr").count() == 2
