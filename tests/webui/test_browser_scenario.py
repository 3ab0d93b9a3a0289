"""A scenario in a real Chromium against the live server: start from the lesson's example, run
it, watch it succeed, scrub the steps with the slider to the preemption, and follow the
preemptor's binding to its cycle's page."""

from __future__ import annotations

from typing import Any

import pytest
from conftest import screenshot_widths
from test_browser_dashboard import _new_cluster, _still_the_same_document

pytestmark = pytest.mark.browser


def test_a_scenario_runs_and_its_steps_are_scrubbed_with_the_slider(dashboard_page: Any) -> None:
    page = dashboard_page
    _new_cluster(page)
    page.get_by_role("link", name="Scenario", exact=True).click()
    page.wait_for_url("**/scenario/")
    page.locator("#load-example").click()
    page.wait_for_url("**/scenario/?example=1")
    page.get_by_role("button", name="Run the scenario").click()
    page.wait_for_url("**/scenarios/*/")
    page.locator("#scenario-state[data-status=succeeded]").wait_for(timeout=60_000)
    assert page.locator("#scenario-phase").inner_text() == "Succeeded"
    assert page.locator(".chart svg").count() == 4
    assert page.locator("#scenario-step").get_attribute("data-step") == "5"
    page.evaluate("window.__sameDocument = true")
    page.locator("#step-slider").fill("3")
    page.locator('#scenario-step[data-step="3"]').wait_for()
    assert _still_the_same_document(page)
    assert page.locator('.step-links a[aria-current="step"]').inner_text() == "3"
    preempted = page.locator("#scenario-step tr.preemption")
    assert "delete Pod default/low-1" in preempted.inner_text()
    cards = page.locator("#scenario-step .node-card")
    assert cards.count() == 1 and "default/web-2" in cards.first.inner_text()
    screenshot_widths(page, "scenario-run")
    page.get_by_role("link", name="cycle 5").click()
    page.wait_for_url("**/cycles/5/")
    assert "web-2" in page.locator("main").inner_text()
