"""Whole flows in a real Chromium against the live ASGI server (``asgi_server``, conftest): invalid
YAML refused with the API server's message and nothing saved, pause and step one cycle with the
queue changing in place, a cycle's trace opened from the dashboard's feed with the score table
matching the trace JSON, and the screenshots a failing browser test leaves behind.

Set SCHEDVIZ_SCREENSHOT_DIR to keep the screenshots (a temporary directory otherwise).
"""

from __future__ import annotations

import os
import re
import textwrap
from pathlib import Path
from typing import Any

import pytest
from conftest import open_pages, save_page_screenshots
from test_browser_dashboard import _apply, _chips, _new_cluster, _still_the_same_document, _yaml

pytestmark = pytest.mark.browser
pytest_plugins = ["pytester"]

INVALID = """
apiVersion: v1
kind: Node
metadata: {name: should-not-exist}
status: {allocatable: {cpu: "4", memory: 8Gi, pods: "110"}}
---
apiVersion: v1
kind: Pod
metadata: {name: bad-cpu}
spec: {containers: [{name: c, image: i, resources: {requests: {cpu: "1.5.3"}}}]}
"""


def _cluster_id(page: Any) -> int:
    found = re.search(r"/clusters/(\d+)/", page.url)
    assert found, page.url
    return int(found.group(1))


def _api(page: Any, token: str, path: str) -> Any:
    response = page.request.get(path, headers={"Authorization": f"Token {token}"})
    assert response.ok, (path, response.status, response.text())
    return response.json()


def _shot(page: Any, tmp_path: Path, name: str) -> None:
    directory = Path(os.environ.get("SCHEDVIZ_SCREENSHOT_DIR") or tmp_path)
    directory.mkdir(parents=True, exist_ok=True)
    page.screenshot(path=str(directory / f"{name}.png"), full_page=True)


def _active_queue(page: Any) -> list[str]:
    return [text.strip() for text in page.locator("#active-q li a").all_inner_texts()]


def test_invalid_yaml_shows_the_api_servers_error_and_saves_nothing(
    dashboard_page: Any, asgi_api_token: str, tmp_path: Path
) -> None:
    page = dashboard_page
    _new_cluster(page)
    cluster = _cluster_id(page)
    page.locator("#add-yaml summary").click()
    page.locator("#manifests-form textarea").fill(INVALID)
    page.locator("#manifests-form").get_by_role("button", name="Apply").click()
    error = page.locator("#manifests-form .errorlist")
    error.wait_for()
    text = error.inner_text()
    assert 'spec.containers[0].resources.requests[cpu]: Invalid value: "1.5.3"' in text, text
    _shot(page, tmp_path, "flow-invalid-yaml")
    assert page.locator("#manifests-form .message.success").count() == 0
    # The text stays in the editor to be fixed.
    assert "1.5.3" in page.locator("#manifests-form textarea").input_value()
    assert _still_the_same_document(page)

    page.wait_for_timeout(500)
    assert page.locator("#node-should-not-exist").count() == 0
    page.reload()
    page.locator("#nodes").wait_for()
    assert page.locator(".node-card").count() == 0
    assert "should-not-exist" not in page.locator("#nodes").inner_text()
    assert "bad-cpu" not in page.locator("#pending").inner_text()

    pods = _api(page, asgi_api_token, f"/api/clusters/{cluster}/pods")
    assert pods == [], pods
    exported = page.request.get(
        f"/api/clusters/{cluster}/export",
        headers={"Authorization": f"Token {asgi_api_token}"},
    )
    assert exported.ok
    assert "should-not-exist" not in exported.text()


def test_pause_then_step_moves_exactly_one_pod_from_the_queue_to_a_node(
    dashboard_page: Any, tmp_path: Path
) -> None:
    page = dashboard_page
    _new_cluster(page)
    page.get_by_role("button", name="Pause").click()
    page.get_by_role("button", name="Step one cycle").wait_for()
    _apply(page, _yaml(1, {"first": "100m", "second": "100m"}))
    page.wait_for_function("() => document.querySelectorAll('#active-q li a').length == 2")
    page.wait_for_timeout(1500)
    assert sorted(_active_queue(page)) == ["default/first", "default/second"]
    assert _chips(page).count() == 0
    _shot(page, tmp_path, "flow-paused-queue")

    page.get_by_role("button", name="Step one cycle").click()
    page.locator(".node-card .chip[data-pod]").first.wait_for()
    # The step taken, the controls no longer say one is asked: with the cycle, not seconds
    # later when the runner goes idle.
    page.locator("#controls", has_text="step asked").wait_for(state="detached", timeout=2500)
    page.wait_for_function("() => document.querySelectorAll('#active-q li a').length == 1")
    page.wait_for_timeout(1500)
    placed = page.locator(".node-card .chip[data-pod]").get_attribute("data-pod")
    waiting = _active_queue(page)
    assert _chips(page).count() == 1
    assert len(waiting) == 1
    assert {placed, waiting[0]} == {"default/first", "default/second"}
    assert page.locator(f'.pending-pod[data-pod="{waiting[0]}"]').count() == 1
    assert page.locator(f'.pending-pod[data-pod="{placed}"]').count() == 0
    page.locator("#feed .result-scheduled", has_text=placed).wait_for()
    assert _still_the_same_document(page)
    _shot(page, tmp_path, "flow-after-step")


def test_a_scheduled_cycle_from_the_feed_shows_the_plugins_score_breakdown(
    dashboard_page: Any, asgi_api_token: str, tmp_path: Path
) -> None:
    page = dashboard_page
    _new_cluster(page)
    cluster = _cluster_id(page)
    # Three nodes, and a busy pod that makes their scores differ.
    _apply(page, _yaml(3, {"busy": "1500m", "web": "500m"}))
    scheduled = page.locator("#feed .result-scheduled", has_text="default/web")
    scheduled.wait_for()
    number = int(scheduled.get_attribute("data-cycle") or "0")
    scheduled.locator("a.cycle-number").click()
    page.wait_for_url(f"**/clusters/{cluster}/cycles/{number}/")
    page.locator("#scores table").wait_for()
    _shot(page, tmp_path, "flow-cycle-scores")

    traces = _api(page, asgi_api_token, f"/api/clusters/{cluster}/cycles?pod=default/web")
    trace = next(t for t in traces["cycles"] if t["cycle"] == number)
    chosen = trace["selected"]["node"]
    expected = trace["scores"][chosen]["NodeResourcesFit"]

    plugins = [
        re.sub(r"\s*\u00d7.*$", "", text.strip(), flags=re.S)
        for text in page.locator("#scores th.plugin-head").all_inner_texts()
    ]
    column = plugins.index("NodeResourcesFit")
    row = page.locator("#scores tbody tr.chosen")
    assert row.count() == 1
    assert row.locator("th").inner_text().split()[0] == chosen
    cells = row.locator("td.num:not(.total)").all_inner_texts()
    raw, normalized, weighted = (int(cell) for cell in cells[3 * column : 3 * column + 3])
    assert (raw, normalized, weighted) == (
        expected["raw"],
        expected["normalized"],
        expected["weighted"],
    )
    weight = page.locator("#scores th.plugin-head").nth(column).locator(".weight").inner_text()
    assert weight.strip() == f"\u00d7 {expected['weight']}"
    assert int(row.locator("td.total").inner_text()) == trace["totals"][chosen]
    assert trace["totals"][chosen] == sum(p["weighted"] for p in trace["scores"][chosen].values())


# ---------------------------------------------------------------------------------------------
# Screenshots of a failing browser test


def test_the_screenshot_helper_saves_a_png_of_each_open_page(chromium: Any, tmp_path: Path) -> None:
    context = chromium.new_context(viewport={"width": 640, "height": 400})
    try:
        first = context.new_page()
        first.set_content("<h1>first page</h1>")
        second = context.new_page()
        second.set_content("<h1>second page</h1>")
        closed = context.new_page()
        closed.close()
        pages = open_pages([chromium, first, "not a page", 3])
        assert pages == [first, second]
        saved = save_page_screenshots(pages, tmp_path / "shots", "tests/x.py::test_y[1]")
    finally:
        context.close()
    assert [path.name for path in saved] == [
        "tests-x.py-test_y-1-page1.png",
        "tests-x.py-test_y-1-page2.png",
    ]
    for path in saved:
        assert path.read_bytes().startswith(b"\x89PNG\r\n\x1a\n")


def test_a_failing_browser_test_leaves_screenshots_of_its_pages(
    pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    """The hook of conftest.py, run by an inner pytest in a process of its own (Playwright's sync
    API allows one instance per thread, and this module's is open)."""
    here = Path(__file__).parent
    pytester.makeconftest((here / "conftest.py").read_text())
    pytester.makepyfile(live_server=(here / "live_server.py").read_text())  # conftest imports it
    pytester.makeini("[pytest]\nmarkers =\n    browser: Chromium tests\n")
    pytester.makepyfile(
        test_inner=textwrap.dedent(
            """
            import pytest

            @pytest.mark.browser
            def test_fails(chromium):
                page = chromium.new_context(viewport={"width": 500, "height": 300}).new_page()
                page.set_content("<h1 style='color: red'>the failing page</h1>")
                assert page.locator("h1").inner_text() == "something else"

            @pytest.mark.browser
            def test_passes(chromium):
                chromium.new_context().new_page().set_content("<p>fine</p>")

            def test_fails_without_a_browser():
                assert False
            """
        )
    )
    shots = tmp_path / "shots"
    monkeypatch.setenv("SCHEDVIZ_SCREENSHOT_DIR", str(shots))
    result = pytester.runpytest_subprocess("-p", "no:django", "-p", "no:cacheprovider")
    result.assert_outcomes(passed=1, failed=2)
    saved = sorted(shots.glob("*.png"))
    assert [path.name for path in saved] == ["test_inner.py-test_fails-page1.png"]
    assert saved[0].read_bytes().startswith(b"\x89PNG\r\n\x1a\n")
    result.stdout.fnmatch_lines(["*screenshots of the open pages*", f"*{saved[0]}*"])
