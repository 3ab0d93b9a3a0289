"""The step debugger in words, in a real Chromium: after Filter it names the nodes each plugin
rejected, and every command reads "Run <point>"."""

from __future__ import annotations

import re
from typing import Any

import pytest
from conftest import screenshot_widths

pytestmark = pytest.mark.browser

LIVE_TIMEOUT_MS = 45_000


def test_the_debugger_names_the_nodes_a_filter_plugin_rejected(dashboard_page: Any) -> None:
    from playwright.sync_api import expect

    page = dashboard_page
    page.goto("/lessons/topology-spread/")
    page.locator("#load-lesson").click()
    page.wait_for_url(re.compile(r"/clusters/\d+/$"))
    expect(page.locator("#runner-status")).to_contain_text("idle", timeout=LIVE_TIMEOUT_MS)
    page.get_by_role("button", name="Step into next cycle").click()
    panel = page.locator("#debugger")
    expect(panel.locator('[aria-current="step"]')).to_contain_text(
        "PreFilter", timeout=LIVE_TIMEOUT_MS
    )
    page.get_by_role("button", name="Run PreFilter").click()
    expect(panel.locator('[aria-current="step"]')).to_contain_text(
        "Filter", timeout=LIVE_TIMEOUT_MS
    )
    expect(panel.locator(".debug-continue-hint")).to_contain_text("then stops before")
    page.get_by_role("button", name="Run Filter").click()
    expect(panel.locator('[aria-current="step"]')).to_contain_text(
        "PreScore", timeout=LIVE_TIMEOUT_MS
    )
    spread = panel.locator(".debug-previous li", has_text="PodTopologySpread")
    expect(spread).to_contain_text("ran on 4 nodes, rejected 2 (node-a, node-b)")
    expect(spread).to_contain_text("didn't match pod topology spread constraints")
    expect(panel.locator(".debug-previous li", has_text="NodeUnschedulable")).to_contain_text(
        "ran on 4 nodes, rejected none"
    )
    expect(panel).not_to_contain_text("Continue to")
    screenshot_widths(page, "debugger-after-filter")
    page.get_by_role("button", name="Finish cycle").click()
    expect(panel.locator(".debug-result")).to_contain_text("Scheduled", timeout=LIVE_TIMEOUT_MS)
