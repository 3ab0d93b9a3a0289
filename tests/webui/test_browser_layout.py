"""The dashboard's layout in a real Chromium against the live ASGI server (conftest), at a
desktop (1440x900) and a phone (390x844): nothing wider than the page or its panel, the sticky
controls bar one row high, "Go to node" scrolled to the card, and the pod just placed shown on
its node's card however many pods it holds."""

from __future__ import annotations

import itertools
import os
import re
from typing import Any

import pytest
from conftest import apply_yaml, new_cluster, screenshot_widths

pytestmark = pytest.mark.browser

LIVE_TIMEOUT_MS = 45_000
VIEWPORTS = ((1440, 900), (390, 844))
_names = itertools.count(1)

LONG = "web-frontend-deployment-with-a-long-name"
DEPLOYMENT = f"""
apiVersion: apps/v1
kind: Deployment
metadata: {{name: {LONG}, namespace: shop-namespace-long}}
spec:
  replicas: 3
  selector: {{matchLabels: {{app: web}}}}
  template:
    metadata: {{labels: {{app: web}}}}
    spec: {{containers: [{{name: c, image: nginx, resources: {{requests: {{cpu: 10m}}}}}}]}}
"""


def _nodes(count: int, pods: int = 110) -> str:
    return "\n---\n".join(
        f"apiVersion: v1\nkind: Node\nmetadata: {{name: node-{i:02d}}}\n"
        f'status: {{allocatable: {{cpu: "64", memory: 256Gi, pods: "{pods}"}}}}'
        for i in range(1, count + 1)
    )


def _pods(names: list[str]) -> str:
    return "\n---\n".join(
        f"apiVersion: v1\nkind: Pod\nmetadata: {{name: {name}}}\n"
        "spec: {containers: [{name: c, image: i, resources: {requests: {cpu: 10m}}}]}"
        for name in names
    )


def _overflow(page: Any, selector: str) -> list[int]:
    """scrollWidth and clientWidth of the element (the page's root for "html")."""
    return list(
        page.evaluate(
            "(s) => { const e = document.querySelector(s);"
            " return [e.scrollWidth, e.clientWidth]; }",
            selector,
        )
    )


def test_nothing_overflows_at_desktop_and_phone_widths_and_the_bar_is_one_row(
    dashboard_page: Any,
) -> None:
    from playwright.sync_api import expect

    page = dashboard_page
    new_cluster(page, f"layout-{os.getpid()}-{next(_names)}")
    apply_yaml(page, _nodes(3) + "\n---\n" + DEPLOYMENT)
    deployment = page.locator(f'[data-workload="Deployment/shop-namespace-long/{LONG}"]')
    expect(deployment).to_contain_text("3 bound", timeout=LIVE_TIMEOUT_MS)
    expect(page.locator(".node-card .chip[data-pod]")).to_have_count(3, timeout=LIVE_TIMEOUT_MS)
    for width, height in VIEWPORTS:
        page.set_viewport_size({"width": width, "height": height})
        page.reload()
        expect(deployment).to_be_visible()
        for selector in ("html", "#workloads", ".node-grid"):
            scroll, client = _overflow(page, selector)
            assert scroll <= client, (width, selector, scroll, client)
        bar = page.locator("#controls").bounding_box()
        if width == 1440:
            # One row of controls, not the three (120 px) the clock's help once took.
            assert bar is not None and bar["height"] <= 72, bar
    screenshot_widths(page, "dashboard-workloads")


@pytest.mark.parametrize(("width", "height"), VIEWPORTS)
def test_go_to_node_scrolls_its_card_into_view_below_the_bar(
    dashboard_page: Any, width: int, height: int
) -> None:
    from playwright.sync_api import expect

    page = dashboard_page
    page.set_viewport_size({"width": width, "height": height})
    new_cluster(page, f"layout-{os.getpid()}-{next(_names)}")
    apply_yaml(page, _nodes(40))
    expect(page.locator(".node-card")).to_have_count(40)
    page.locator("#find-nodes summary").click()
    page.get_by_label("Go to node").fill("node-38")
    page.get_by_role("button", name="Go", exact=True).click()
    card = page.locator("#node-node-38")
    expect(card).to_have_class(re.compile(r"\bfocused\b"))
    page.wait_for_function(
        "() => { const r = document.querySelector('#node-node-38').getBoundingClientRect();"
        " return r.top >= 0 && r.top < window.innerHeight; }"
    )
    top = card.bounding_box()
    bar = page.locator("#controls").bounding_box()
    assert top is not None and bar is not None
    assert 0 <= top["y"] < height, top
    if width == 1440:
        # The sticky bar does not cover the card's top.
        assert top["y"] >= bar["y"] + bar["height"], (top, bar)


def test_the_pod_just_placed_is_shown_on_a_full_card(dashboard_page: Any) -> None:
    from playwright.sync_api import expect

    page = dashboard_page
    new_cluster(page, f"layout-{os.getpid()}-{next(_names)}")
    apply_yaml(page, _nodes(1) + "\n---\n" + _pods([f"pod-{i:02d}" for i in range(20)]))
    card = page.locator("#node-node-01")
    expect(card.locator(".chip.more")).to_have_text("+4 more", timeout=LIVE_TIMEOUT_MS)
    # Named to sort last: by name it would be one of the "+N more".
    apply_yaml(page, _pods(["zz-newest"]))
    expect(card.locator('.chip[data-pod="default/zz-newest"]')).to_be_visible(
        timeout=LIVE_TIMEOUT_MS
    )
    expect(card.locator(".chip.more")).to_have_text("+5 more")


def test_a_form_error_says_which_document_only_when_there_are_several(
    dashboard_page: Any,
) -> None:
    from playwright.sync_api import expect

    page = dashboard_page
    new_cluster(page, f"layout-{os.getpid()}-{next(_names)}")
    page.locator("#add-yaml summary").click()
    form = page.locator("#manifests-form")
    form.locator("textarea").fill("apiVersion: v1\nkind: Pod\nmetadata: {}")
    form.get_by_role("button", name="Apply").click()
    errors = form.locator(".errorlist")
    expect(errors).to_contain_text("metadata.name: Required value")
    expect(errors).not_to_contain_text("document 1")
    expect(errors).not_to_contain_text("<input>")
    form.locator("textarea").fill(
        "apiVersion: v1\nkind: Namespace\nmetadata: {name: ok}\n---\n"
        "apiVersion: v1\nkind: Pod\nmetadata: {}"
    )
    form.get_by_role("button", name="Apply").click()
    expect(errors).to_contain_text("document 2: ")
    expect(errors).not_to_contain_text("<input>")
