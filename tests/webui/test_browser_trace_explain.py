"""The cycle page explains, in a real Chromium: the sentence on top, a score cell opened to its
computation (the numbers checked), at desktop and phone widths with screenshots into the
git-ignored screenshot folder (tests/webui/conftest.py)."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest
from conftest import screenshot_widths
from django.urls import reverse
from test_browser_trace import (  # noqa: F401 (autouse fixtures, used by name)
    _no_background_runners,
    _off_the_event_loop,
    _orm_beside_playwright,
)

from schedviz.cluster import lessons
from schedviz.cluster.models import Cluster, Cycle
from webui.score_explain import M, X
from worker.runner import run_cluster

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]


@pytest.fixture
def page(chromium: Any) -> Iterator[Any]:
    """A desktop-wide page that fails the test on any page error (chromium: conftest)."""
    context = chromium.new_context(viewport={"width": 1440, "height": 900})
    context.set_default_timeout(15_000)
    opened = context.new_page()
    errors: list[str] = []
    opened.on("pageerror", lambda error: errors.append(str(error)))
    yield opened
    context.close()
    assert not errors, errors


def _lesson_run(slug: str) -> Cluster:
    cluster = lessons.lesson_load(slug=slug)
    run_cluster(cluster.pk)
    return cluster


def test_a_score_cell_opens_its_computation_with_the_numbers(page: Any, live_server: Any) -> None:
    from playwright.sync_api import expect

    cluster = _off_the_event_loop(lambda: _lesson_run("resource-fit"))
    number = Cycle.objects.get(cluster=cluster, pod_name="spread-me").number
    page.goto(live_server.url + reverse("webui:cycle", args=[cluster.pk, number]))
    expect(page.locator("#decision")).to_have_text(
        "node-b won with 475, 50 ahead of node-a (425), out of 2 nodes scored; decided by "
        "NodeResourcesFit (+50)."
    )
    cell = page.locator('#scores tbody a[href="scores/node-a/NodeResourcesFit/"]').first
    expect(cell).to_have_text("25")
    cell.click()
    computation = page.locator("#score-computation")
    expect(computation).to_contain_text("raw 25 → normalized 25 → weighted 25")
    expect(computation.locator(".computation-inputs")).to_contain_text(
        "requested 6 (this pod 2) of allocatable 8, weight 1"
    )
    expect(computation.locator(".raw-steps")).to_contain_text(f"(8 {M} 6) {X} 100 / 8 = 25")
    expect(computation.locator(".raw-steps")).to_contain_text(
        f"raw = (25 {X} 1 + 25 {X} 1) / (1 + 1) = 25"
    )
    expect(computation.locator(".weighted-step")).to_contain_text(f"25 {X} 1 = 25")
    # Opened in place: the page did not navigate.
    assert page.url.endswith(f"/cycles/{number}/")
    screenshot_widths(page, "trace-score-computation")

    # A normalized plugin, opened with the keyboard.
    taint = page.locator('#scores tbody a[href="scores/node-b/TaintToleration/"]').nth(1)
    expect(taint).to_have_text("100")
    taint.focus()
    page.keyboard.press("Enter")
    expect(computation).to_contain_text("TaintToleration on node-b")
    expect(computation.locator(".normalize-steps")).to_contain_text("every node gets 100")

    # The link works without htmx too: a page of its own.
    href = reverse("webui:score_cell", args=[cluster.pk, number, "node-a", "NodeResourcesFit"])
    page.goto(live_server.url + href)
    expect(page.locator("h1")).to_contain_text("How NodeResourcesFit scored node-a")
