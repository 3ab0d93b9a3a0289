"""The trace pages in a real Chromium: sorting the score table, the pod's attempt timeline, and
the layout at desktop and phone widths. The pages are served by pytest-django's live server over
the test database, which the tests fill by running the scheduler; Chromium comes from the
``chromium`` fixture of tests/webui/conftest.py (skipped without /usr/bin/chromium).

Set SCHEDVIZ_SCREENSHOT_DIR to keep the screenshots (a temporary directory otherwise).
"""

from __future__ import annotations

import os
import re
from collections.abc import Callable, Iterator
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import pytest
from django.urls import reverse
from test_trace_views import SCENARIO, cycle_number, scheduled_cluster

from schedviz.cluster import selectors
from schedviz.cluster.models import Cluster
from schedviz.demo import DEMO_CLUSTER

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]


@pytest.fixture(scope="module", autouse=True)
def _orm_beside_playwright() -> Iterator[None]:
    """Playwright's sync API keeps an event loop in the test's thread for the whole module; the
    ORM calls made meanwhile (the tests' data, the database's flush between tests) are plain
    synchronous ones."""
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("DJANGO_ALLOW_ASYNC_UNSAFE", "true")
        yield


@pytest.fixture
def page(chromium: Any) -> Iterator[Any]:
    """A browser page at 1280 px that fails the test on any page error (chromium: conftest)."""
    context = chromium.new_context(viewport={"width": 1280, "height": 900})
    context.set_default_timeout(15_000)
    opened = context.new_page()
    errors: list[str] = []
    opened.on("pageerror", lambda error: errors.append(str(error)))
    yield opened
    context.close()
    assert not errors, errors


@pytest.fixture(autouse=True)
def _no_background_runners(settings: Any) -> None:
    settings.SCHEDVIZ_START_RUNNERS = False
    settings.SCHEDVIZ_RUNNER_IDLE_SECONDS = 0


def _off_the_event_loop(build: Callable[[], Cluster]) -> Cluster:
    """Runs the scheduler in a thread of its own: the runner publishes to the channel layer,
    which wants no event loop running (Playwright keeps one in the test's thread)."""
    with ThreadPoolExecutor(max_workers=1) as pool:
        return pool.submit(build).result()


@pytest.fixture
def demo() -> Cluster:
    return _off_the_event_loop(lambda: scheduled_cluster(DEMO_CLUSTER.read_text(), name="demo"))


@pytest.fixture
def screenshot_dir(tmp_path: Path) -> Path:
    directory = Path(os.environ.get("SCHEDVIZ_SCREENSHOT_DIR") or tmp_path)
    directory.mkdir(parents=True, exist_ok=True)
    return directory


def _score_nodes(page: Any) -> list[str]:
    cells = page.locator("#scores tbody th[scope=row]").all_inner_texts()
    return [re.sub(r"\s+(chosen|tie)$", "", cell.strip()) for cell in cells]


def test_clicking_a_score_header_sorts_the_table(
    page: Any, live_server: Any, demo: Cluster
) -> None:
    number = cycle_number(demo, "default/web-1")
    trace = selectors.cycle_get(cluster=demo, number=number)
    url = live_server.url + reverse("webui:cycle", args=[demo.pk, number])
    page.goto(url)
    assert page.locator("h1").inner_text().startswith(f"Cycle {number}")
    by_total = _score_nodes(page)
    assert by_total[0] == trace["selected"]["node"]
    page.locator("#scores a[data-sort=node]").click()
    page.wait_for_url(re.compile(r"sort=node"))
    page.wait_for_function(
        "() => document.querySelector('#scores a[data-sort=node]').textContent.includes('▲')"
    )
    assert _score_nodes(page) == sorted(trace["scores"])
    # Keyboard: focus the header link, press Enter, the order flips.
    page.locator("#scores a[data-sort=node]").focus()
    page.keyboard.press("Enter")
    page.wait_for_url(re.compile(r"sort=-node"))
    page.wait_for_function(
        "() => document.querySelector('#scores a[data-sort=node]').textContent.includes('▼')"
    )
    assert _score_nodes(page) == sorted(trace["scores"], reverse=True)


def test_choosing_a_reason_narrows_the_filter_matrix(
    page: Any, live_server: Any, demo: Cluster
) -> None:
    number = cycle_number(demo, "default/too-big")
    page.goto(live_server.url + reverse("webui:cycle", args=[demo.pk, number]))
    rows = page.locator("#filter-matrix tbody tr")
    assert rows.count() == 5
    page.select_option("#reason-select", "Insufficient cpu")
    page.wait_for_url(re.compile(r"reason=Insufficient(%20|\+)cpu"))
    page.wait_for_function("() => document.querySelectorAll('#filter-matrix tbody tr').length == 3")
    assert all("Insufficient cpu" in text for text in rows.all_inner_texts())


def test_the_pod_timeline_opens_each_attempt(page: Any, live_server: Any) -> None:
    cluster = _off_the_event_loop(lambda: scheduled_cluster(SCENARIO, name="preempt"))
    page.goto(live_server.url + reverse("webui:pod", args=[cluster.pk, "default", "urgent"]))
    attempts = page.locator("#attempts .timeline li")
    assert attempts.count() == 2
    assert "Unschedulable" in attempts.nth(0).inner_text()
    assert "Scheduled" in attempts.nth(1).inner_text()
    attempts.nth(0).locator("a.attempt-link").click()
    page.wait_for_url(re.compile(r"/cycles/\d+/$"))
    assert "0/2 nodes are available" in page.locator(".cycle-header .cycle-message").inner_text()
    assert "only candidate" in page.locator("#preemption").inner_text()


def test_the_pages_fit_desktop_and_phone_widths(
    chromium: Any, live_server: Any, demo: Cluster, screenshot_dir: Path
) -> None:
    pages = {
        "cycle-failed": reverse(
            "webui:cycle", args=[demo.pk, cycle_number(demo, "default/too-big")]
        ),
        "cycle-scheduled": reverse(
            "webui:cycle", args=[demo.pk, cycle_number(demo, "default/web-1")]
        ),
        "pod": reverse("webui:pod", args=[demo.pk, "default", "web-2"]),
        "profiles": reverse("webui:profiles", args=[demo.pk]),
    }
    for label, path in pages.items():
        for width in (1280, 420):
            context = chromium.new_context(viewport={"width": width, "height": 900})
            page = context.new_page()
            page.goto(live_server.url + path)
            overflow = page.evaluate(
                "() => document.documentElement.scrollWidth - window.innerWidth"
            )
            shot = screenshot_dir / f"{label}-{width}"
            page.screenshot(path=f"{shot}.png", full_page=True)
            page.screenshot(path=f"{shot}-top.png")
            context.close()
            # Wide tables scroll inside their own box; the page itself never scrolls sideways.
            assert overflow <= 0, (label, width, overflow)
