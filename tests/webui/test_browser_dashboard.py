"""The dashboard in a real Chromium against a live ASGI server whose embedded runner schedules:
pods placed on node cards without a reload, a pod too big for any node shown pending with the
scheduler's reason, pause / step / resume, and the layout at 1280 and 420 px.

Set SCHEDVIZ_SCREENSHOT_DIR to keep the screenshots (a temporary directory otherwise).
"""

from __future__ import annotations

import itertools
import os
from pathlib import Path
from typing import Any

import pytest

pytestmark = pytest.mark.browser

_names = itertools.count(1)

POD = """
apiVersion: v1
kind: Pod
metadata: {name: %(name)s}
spec: {containers: [{name: c, image: i, resources: {requests: {cpu: "%(cpu)s"}}}]}
"""
NODE = """
apiVersion: v1
kind: Node
metadata: {name: small-%(i)d}
status: {allocatable: {cpu: "2", memory: 4Gi, pods: "110"}}
"""


def _yaml(nodes: int, pods: dict[str, str]) -> str:
    documents = [NODE % {"i": i} for i in range(1, nodes + 1)]
    documents += [POD % {"name": name, "cpu": cpu} for name, cpu in pods.items()]
    return "\n---\n".join(documents)


def _new_cluster(page: Any, source: str = "empty") -> None:
    page.goto("/")
    page.get_by_label("Name").fill(f"browser-{os.getpid()}-{next(_names)}")
    page.get_by_label("Empty" if source == "empty" else "The built-in demo cluster").check()
    page.get_by_role("button", name="Create cluster").click()
    page.wait_for_url("**/clusters/*/")
    # Set once; a reload would lose it.
    page.evaluate("window.__sameDocument = true")


def _still_the_same_document(page: Any) -> bool:
    return bool(page.evaluate("window.__sameDocument === true"))


def _apply(page: Any, text: str) -> None:
    page.locator("#add-yaml summary").click()
    page.locator("#manifests-form textarea").fill(text)
    page.locator("#manifests-form").get_by_role("button", name="Apply").click()
    page.locator("#manifests-form .message.success").wait_for()


def _chips(page: Any) -> Any:
    return page.locator(".node-card .chip[data-pod]")


def test_pods_created_in_the_ui_appear_on_node_cards_without_a_reload(
    dashboard_page: Any,
) -> None:
    page = dashboard_page
    _new_cluster(page)
    page.locator("#add-nodes summary").click()
    form = page.locator("#node-form")
    form.get_by_label("Name").fill("worker")
    form.get_by_label("Add this many nodes like this").fill("2")
    form.get_by_label("CPU").fill("4")
    form.get_by_role("button", name="Add nodes").click()
    page.get_by_text("Created node worker-1, worker-2.").wait_for()
    page.locator("#node-worker-2").wait_for()

    page.locator("#add-pods summary").click()
    form = page.locator("#pod-form")
    form.get_by_label("Name", exact=True).fill("web")
    form.get_by_label("CPU request").fill("500m")
    form.get_by_role("button", name="Create pods").click()
    page.get_by_text("Created pod web.").wait_for()

    page.locator('.node-card .chip[data-pod="default/web"]').wait_for()
    page.locator("#feed .result-scheduled", has_text="default/web").wait_for()
    assert page.locator("#pending").get_by_text("Every pod is placed.").is_visible()
    assert _still_the_same_document(page)


def test_a_form_error_shows_next_to_its_field(dashboard_page: Any) -> None:
    page = dashboard_page
    _new_cluster(page)
    page.locator("#add-pods summary").click()
    form = page.locator("#pod-form")
    form.get_by_label("Name", exact=True).fill("web")
    form.get_by_label("CPU request").fill("lots")
    form.get_by_role("button", name="Create pods").click()
    error = page.locator("#pod_cpu_error")
    error.wait_for()
    assert "requests[cpu]" in error.inner_text()
    assert _still_the_same_document(page)


def test_a_pod_too_big_for_any_node_is_pending_with_the_schedulers_reason(
    dashboard_page: Any,
) -> None:
    page = dashboard_page
    _new_cluster(page)
    _apply(page, _yaml(2, {"fits": "1", "huge": "64"}))
    page.locator('.node-card .chip[data-pod="default/fits"]').wait_for()
    reason = page.locator('.pending-pod[data-pod="default/huge"] .reason')
    reason.filter(has_text="0/2 nodes are available: 2 Insufficient cpu.").wait_for()
    page.locator("#unschedulable-q", has_text="default/huge").wait_for()
    assert "NodeResourcesFit" in page.locator("#unschedulable-q").inner_text()
    assert _still_the_same_document(page)


def test_pause_step_and_resume(dashboard_page: Any) -> None:
    page = dashboard_page
    _new_cluster(page)
    page.get_by_role("button", name="Pause").click()
    page.get_by_role("button", name="Step one cycle").wait_for()
    _apply(page, _yaml(1, {"a": "100m", "b": "100m", "c": "100m"}))
    page.locator(".pending-pod").nth(2).wait_for()
    page.wait_for_timeout(1500)
    assert _chips(page).count() == 0

    page.get_by_role("button", name="Step one cycle").click()
    page.locator(".node-card .chip[data-pod]").first.wait_for()
    page.wait_for_timeout(1000)
    assert _chips(page).count() == 1

    page.get_by_role("button", name="Step one cycle").click()
    page.locator(".node-card .chip[data-pod]").nth(1).wait_for()
    page.wait_for_timeout(1000)
    assert _chips(page).count() == 2

    page.get_by_role("button", name="Run").click()
    page.get_by_role("button", name="Pause").wait_for()
    page.locator(".node-card .chip[data-pod]").nth(2).wait_for()
    assert _still_the_same_document(page)


def test_the_dashboard_at_desktop_and_phone_widths(dashboard_page: Any, tmp_path: Path) -> None:
    page = dashboard_page
    _new_cluster(page, source="demo")
    page.locator("#feed .cycle").first.wait_for()
    page.wait_for_timeout(1500)
    directory = Path(os.environ.get("SCHEDVIZ_SCREENSHOT_DIR") or tmp_path)
    directory.mkdir(parents=True, exist_ok=True)
    page.screenshot(path=str(directory / "dashboard-1280.png"), full_page=True)
    assert page.evaluate("document.documentElement.scrollWidth") <= 1280
    page.set_viewport_size({"width": 420, "height": 900})
    page.wait_for_timeout(300)
    page.screenshot(path=str(directory / "dashboard-420.png"), full_page=True)
    assert page.evaluate("document.documentElement.scrollWidth") <= 420
    # Keyboard reachable: tabbing from the top reaches the controls.
    page.keyboard.press("Tab")
    focused = set()
    for _ in range(20):
        page.keyboard.press("Tab")
        focused.add(page.evaluate("document.activeElement.textContent.trim()"))
    assert "Pause" in focused


def test_the_step_debugger_stops_before_each_point_and_finishes_the_cycle(
    dashboard_page: Any,
) -> None:
    page = dashboard_page
    _new_cluster(page)
    page.get_by_role("button", name="Pause").click()
    page.get_by_role("button", name="Step into next cycle").wait_for()
    _apply(page, _yaml(2, {"web": "500m"}))
    page.locator(".pending-pod").first.wait_for()

    page.get_by_role("button", name="Step into next cycle").click()
    panel = page.locator("#debugger")
    panel.locator(".debug-point", has_text="PreFilter").wait_for()
    assert "default/web" in panel.locator(".debug-pod").inner_text()
    assert panel.locator('[aria-current="step"]').inner_text().startswith("PreFilter")
    assert "NodeResourcesFit" in panel.locator(".debug-plugins").inner_text()
    page.wait_for_timeout(500)
    assert _chips(page).count() == 0  # really stopped: nothing bound

    # Keyboard: the Continue button is a real, labelled button.
    page.get_by_role("button", name="Run PreFilter").focus()
    page.keyboard.press("Enter")
    panel.locator(".debug-point", has_text="Filter").wait_for()
    panel.get_by_text("PreFilter NodeResourcesFit computed requests cpu=500m").wait_for()
    assert "What the previous point decided" in panel.inner_text()

    page.get_by_role("button", name="Finish cycle").click()
    panel.locator(".debug-result", has_text="Scheduled").wait_for()
    page.locator(".node-card .chip[data-pod]").first.wait_for()
    assert _chips(page).count() == 1
    assert _still_the_same_document(page)
