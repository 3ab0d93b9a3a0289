"""A kube-scheduler-simulator List imported in a real Chromium against the live ASGI server
(conftest), then read as a reviewer reads it: a PreFilter plugin the simulator recorded as
skipped shows as Skip (not Unschedulable), the nodes' allocatable as the List gives it (not
"/ 0"), and two nodes with the top total as a tie (not "0 ahead")."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import pytest

pytestmark = pytest.mark.browser

PREFIX = "kube-scheduler-simulator.sigs.k8s.io/"


def _node(name: str) -> dict[str, Any]:
    return {
        "apiVersion": "v1",
        "kind": "Node",
        "metadata": {"name": name},
        "status": {"allocatable": {"cpu": "4", "memory": "8Gi", "pods": "110"}},
    }


def _listing() -> dict[str, Any]:
    tied = {"NodeResourcesFit": "50"}
    results = {
        "prefilter-result-status": {"NodeAffinity": "", "NodeResourcesFit": "success"},
        "filter-result": {
            "kss-a": {"NodeResourcesFit": "passed"},
            "kss-b": {"NodeResourcesFit": "passed"},
        },
        "prescore-result": {"NodeResourcesFit": "success"},
        "score-result": {"kss-a": tied, "kss-b": tied},
        "finalscore-result": {"kss-a": tied, "kss-b": tied},
        "bind-result": {"DefaultBinder": "success"},
    }
    annotations = {PREFIX + k: json.dumps(v) for k, v in results.items()}
    annotations[PREFIX + "selected-node"] = "kss-b"
    pod = {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": "web", "namespace": "default", "annotations": annotations},
        "spec": {
            "nodeName": "kss-b",
            "containers": [
                {"name": "c", "image": "i", "resources": {"requests": {"cpu": "1950m"}}}
            ],
        },
    }
    return {"apiVersion": "v1", "kind": "List", "items": [_node("kss-a"), _node("kss-b"), pod]}


def test_an_imported_simulator_cycle_reads_skips_ties_and_allocatable(
    dashboard_page: Any, tmp_path: Path
) -> None:
    from playwright.sync_api import expect

    page = dashboard_page
    upload = tmp_path / "kss.json"
    upload.write_text(json.dumps(_listing()))
    page.goto("/clusters/import/")
    page.locator("#import-form input[type=file]").set_input_files(str(upload))
    page.locator("#import-form").get_by_label("Name").fill(f"kss-{os.getpid()}")
    page.locator("#import-form").get_by_role("button", name="Import").click()
    page.wait_for_url("**/clusters/*/")
    card = page.locator("#node-kss-b")
    expect(card.locator(".bar").first).to_contain_text("1.95 / 4")
    page.locator("#feed a").first.click()
    expect(page.locator("#decision")).to_contain_text("kss-b won with 50, tied with kss-a")
    expect(page.locator("#decision")).not_to_contain_text("ahead")
    points = page.locator("table.points")
    skipped = points.locator("tr", has=page.get_by_role("link", name="NodeAffinity"))
    expect(skipped.first).to_contain_text("Skip")
    expect(points).not_to_contain_text("Unschedulable")
