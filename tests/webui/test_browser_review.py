"""The review page in a real Chromium: the files uploaded through the form (htmx), the pods with
disagreements first with both verdicts side by side, and the link to a replayed cycle's page."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import pytest
from test_browser_pages import _violations

pytestmark = pytest.mark.browser

DATA = Path(__file__).resolve().parents[1] / "review" / "data"


def test_a_review_uploaded_in_the_browser_links_each_attempt_to_its_cycle(
    chromium: Any, asgi_server: str
) -> None:
    from playwright.sync_api import expect

    context = chromium.new_context(base_url=asgi_server)
    context.set_default_timeout(30_000)
    page = context.new_page()
    page.goto("/")
    page.click("#review-link")
    page.set_input_files("#review-log", str(DATA / "scheduler-v10.log"))
    page.set_input_files("#review-cluster", str(DATA / "cluster-after.yaml"))
    page.set_input_files("#review-events", str(DATA / "events.yaml"))
    page.click("#review-submit")
    expect(page.locator("#review-summary")).to_contain_text("6 attempts of 5 pods")
    first = page.locator(".review-pod").first
    expect(first).to_have_attribute("data-pod", "prod/urgent-1")
    expect(first.locator(".review-attempt").first).to_have_attribute("data-kind", "missing-object")
    expect(first.locator(".why").first).to_contain_text("the dump lacks default/batch-1")
    # Agreeing pods follow, their attempts marked as such (web-2 by a tie).
    web2 = page.locator('.review-pod[data-pod="default/web-2"]')
    expect(web2.locator(".verdict")).to_contain_text("agrees (tie)")
    for width in (1440, 390):
        page.set_viewport_size({"width": width, "height": 900})
        assert not _violations(page), width
        overflow = page.evaluate(
            "document.documentElement.scrollWidth - document.documentElement.clientWidth"
        )
        assert overflow <= 1, (width, overflow)
    first.locator(".cycle-link").first.click()
    expect(page).to_have_url(re.compile(r"/clusters/\d+/cycles/1/"))
    expect(page.locator("body")).to_contain_text("prod/urgent-1")
    context.close()
