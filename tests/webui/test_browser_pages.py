"""Every page type in a real Chromium at 1440x900 and 390x844: an axe-core scan (the copy
axe-playwright-python ships; nothing is downloaded) that fails on serious or critical
violations, no sideways scroll of the page at 390 px, and a full-page screenshot of each into
``var/screenshots/`` (git-ignored with the rest of ``var/``), or $SCHEDVIZ_PAGE_SCREENSHOT_DIR,
for people to look at.
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from live_server import ROOT
from test_browser_dashboard import _apply, _new_cluster

pytestmark = pytest.mark.browser

VIEWPORTS = {"1440": {"width": 1440, "height": 900}, "390": {"width": 390, "height": 844}}
BLOCKING = ("serious", "critical")
LIVE_TIMEOUT_MS = 45_000
LATE_POD = (
    "apiVersion: v1\nkind: Pod\nmetadata: {name: late-comer}\n"
    "spec: {containers: [{name: c, image: i}]}"
)


def screenshot_dir() -> Path:
    return Path(os.environ.get("SCHEDVIZ_PAGE_SCREENSHOT_DIR") or ROOT / "var" / "screenshots")


@pytest.fixture(scope="module")
def page_urls(chromium: Any, asgi_server: str) -> Iterator[tuple[Any, dict[str, str]]]:
    """A demo cluster made and scheduled through the pages, and a URL of every page type; the
    browser context that made it (its session made the cluster)."""
    from playwright.sync_api import expect

    context = chromium.new_context(viewport=VIEWPORTS["1440"], base_url=asgi_server)
    context.set_default_timeout(15_000)
    page = context.new_page()
    _new_cluster(page, source="demo")
    cluster = re.search(r"/clusters/(\d+)/", page.url)
    assert cluster is not None
    base = f"/clusters/{cluster.group(1)}/"
    expect(page.locator("#feed .cycle-number").first).to_be_visible(timeout=LIVE_TIMEOUT_MS)
    cycle = page.locator("#feed .cycle-number").last.get_attribute("href")
    pod = page.locator(".node-card .chip[data-pod]").first.get_attribute("href")
    node = page.locator(".node-card .node-name").first.get_attribute("href")
    urls = {
        "clusters": "/",
        "dashboard": base,
        "dashboard-by-zone": base + "?group=topology.kubernetes.io/zone",
        "domains": base + "domains/?group=topology.kubernetes.io/zone",
        "node": str(node),
        "pod": str(pod),
        "cycle": str(cycle),
        "profiles": base + "profiles/",
        "compare-new": base + "compare/",
        "apply": base + "apply/",
        "node-new": base + "nodes/new/",
        "pod-new": base + "pods/new/",
        "confirm-reset": base + "reset/",
        "import": "/clusters/import/",
        "lessons": "/lessons/",
        "lesson": "/lessons/resource-fit/",
        "login": "/accounts/login/",
        "not-found": "/clusters/999999/",
    }
    page.goto("/lessons/resource-fit/")
    page.locator("#load-lesson").click()
    page.wait_for_url(re.compile(r"/clusters/\d+/$"))
    urls["lesson-dashboard"] = page.url.removeprefix(asgi_server)
    page.close()
    yield context, urls
    context.close()


def _violations(page: Any) -> list[str]:
    from axe_playwright_python.sync_playwright import Axe

    results = Axe().run(page)
    found = []
    for violation in results.response["violations"]:
        if violation.get("impact") in BLOCKING:
            targets = [" ".join(map(str, node["target"])) for node in violation["nodes"]][:5]
            found.append(f"{violation['id']} ({violation['impact']}): {targets}")
    return found


@pytest.mark.parametrize("width", list(VIEWPORTS))
def test_every_page_type_passes_axe_and_fits_the_screen(
    page_urls: tuple[Any, dict[str, str]], width: str
) -> None:
    context, urls = page_urls
    page = context.new_page()
    page.set_viewport_size(VIEWPORTS[width])
    errors: list[str] = []
    page.on("pageerror", lambda error: errors.append(str(error)))
    directory = screenshot_dir()
    directory.mkdir(parents=True, exist_ok=True)
    problems: dict[str, list[str]] = {}
    for name, url in urls.items():
        response = page.goto(url)
        assert response is not None
        expected = 404 if name == "not-found" else 200
        assert response.status == expected, (name, url, response.status)
        page.wait_for_load_state("load")
        page.wait_for_timeout(300)  # the websocket's first frame, where there is one
        page.screenshot(path=str(directory / f"{name}-{width}.png"), full_page=True)
        found = _violations(page)
        overflow = page.evaluate(
            "document.documentElement.scrollWidth - document.documentElement.clientWidth"
        )
        if overflow > 1:
            found.append(f"the page scrolls sideways by {overflow} px")
        if found:
            problems[name] = found
    page.close()
    assert not problems, problems
    assert not errors, errors


def test_a_new_cycle_is_prepended_to_the_feed_without_the_whole_list(
    page_urls: tuple[Any, dict[str, str]],
) -> None:
    from playwright.sync_api import expect

    context, urls = page_urls
    page = context.new_page()
    page.goto(urls["dashboard"])
    page.evaluate("window.__sameDocument = true")
    expect(page.locator("#feed-list > li").first).to_be_visible()
    before = page.locator("#feed-list > li").count()
    _apply(page, LATE_POD)
    late = page.locator("#feed-list > li", has_text="default/late-comer")
    expect(late).to_have_count(1, timeout=LIVE_TIMEOUT_MS)
    numbers = [
        int(n or 0)
        for n in page.locator("#feed-list > li").evaluate_all(
            "items => items.map(item => item.dataset.cycle)"
        )
    ]
    # Newest first, each cycle once, the ones from before still there: prepended, not replaced.
    assert numbers == sorted(set(numbers), reverse=True) and len(numbers) > before
    assert page.locator("#feed-list").count() == 1
    assert page.evaluate("window.__sameDocument === true")
    page.close()
