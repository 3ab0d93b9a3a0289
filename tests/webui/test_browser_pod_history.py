"""Why is this pod Pending, in a real Chromium against the live server: a pod too big for the
cluster, created in the browser, is explained (the Insufficient cpu aggregation, the per-node
drill-down, the suggestion); a node big enough is added, the pod is bound, and its two attempts
are compared over htmx."""

from __future__ import annotations

from typing import Any

import pytest
from test_browser_dashboard import _new_cluster, _still_the_same_document

pytestmark = pytest.mark.browser


def _add_node(page: Any, name: str, cpu: str) -> None:
    details = page.locator("#add-nodes")
    if details.get_attribute("open") is None:
        page.locator("#add-nodes summary").click()
    form = page.locator("#node-form")
    form.get_by_label("Name").fill(name)
    form.get_by_label("CPU").fill(cpu)
    form.get_by_role("button", name="Add nodes").click()
    page.get_by_text(f"Created node {name}.").wait_for()
    page.locator(f"#node-{name}").wait_for()


def test_why_pending_explains_a_too_big_pod_and_the_diff_shows_what_a_new_node_changed(
    dashboard_page: Any,
) -> None:
    page = dashboard_page
    _new_cluster(page)
    dashboard = page.url
    _add_node(page, "small", "1")

    page.locator("#add-pods summary").click()
    form = page.locator("#pod-form")
    form.get_by_label("Name", exact=True).fill("huge")
    form.get_by_label("CPU request").fill("2")
    form.get_by_role("button", name="Create pods").click()
    pending = page.locator('.pending-pod[data-pod="default/huge"]')
    pending.locator(".reason", has_text="0/1 nodes are available: 1 Insufficient cpu.").wait_for()
    assert _still_the_same_document(page)

    pending.get_by_role("link", name="Why is default/huge Pending?").click()
    page.wait_for_url("**/pods/default/huge/#why-pending")
    why = page.locator("#why-pending")
    assert "0/1 nodes are available: 1 Insufficient cpu." in why.locator(".fit-error").inner_text()
    group = why.locator(".reason-groups tbody tr")
    assert group.count() == 1
    assert group.first.inner_text().split("\t")[:3] == ["1", "Insufficient cpu", "NodeResourcesFit"]
    suggestion = why.locator('.advice[data-plugin="NodeResourcesFit"] .suggestions li').first
    assert "add a node with at least 2 cpu allocatable" in suggestion.inner_text()
    # The drill-down opens on a click and lists each filter plugin's verdict.
    node = why.locator('details.node-verdict[data-node="small"]')
    verdicts = node.locator(".plugin-verdicts")
    assert not verdicts.is_visible()
    node.locator("summary").click()
    verdicts.wait_for()
    rejected = verdicts.locator("tr.rejected")
    assert "NodeResourcesFit" in rejected.inner_text()
    assert "Insufficient cpu" in rejected.inner_text()
    assert "TaintToleration" in verdicts.locator("tr.passed").all_inner_texts()[2]

    page.goto(dashboard)
    page.evaluate("window.__sameDocument = true")
    _add_node(page, "big", "4")
    page.locator('#node-big .chip[data-pod="default/huge"]').wait_for()

    page.goto(dashboard.rstrip("/") + "/pods/default/huge/")
    assert page.locator("#why-pending").count() == 0
    attempts = page.locator("#attempts li[data-cycle]")
    assert attempts.count() == 2
    first, second = (attempts.nth(i).get_attribute("data-cycle") for i in range(2))
    # Compare them the other way round, to see the htmx swap happen.
    attempts.nth(1).get_by_label("compare as A").check()
    attempts.nth(0).get_by_label("as B").check()
    page.evaluate("window.__sameDocument = true")
    page.get_by_role("button", name="Compare A and B").click()
    diff = page.locator("#attempt-diff")
    diff.get_by_text(f"From cycle {second} to cycle {first}").wait_for()
    assert _still_the_same_document(page)
    changes = diff.locator(".verdict-changes tbody tr")
    assert changes.count() == 1
    assert changes.first.inner_text().split("\t") == ["big", "passed", "(not in that attempt)"]
    assert "ADDED Node big" in diff.locator(".cluster-changes").inner_text()
