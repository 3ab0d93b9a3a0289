"""The Workloads panel in a real Chromium against the live ASGI server (conftest): a Deployment
applied in the page shows up with its pods bound without a reload, a scale past the cluster's pod
limit answers its error in the panel, and a Deployment's ReplicaSet offers no scale of its own."""

from __future__ import annotations

import itertools
import os
import re
from typing import Any

import pytest
from conftest import apply_yaml, new_cluster

pytestmark = pytest.mark.browser

# Runners start on commit and stop after SCHEDVIZ_RUNNER_IDLE_SECONDS (5 s): generous waits.
LIVE_TIMEOUT_MS = 45_000
_names = itertools.count(1)

NODES = """
apiVersion: v1
kind: Node
metadata: {name: wl-node-1}
status: {allocatable: {cpu: "4", memory: 8Gi, pods: "110"}}
---
apiVersion: v1
kind: Node
metadata: {name: wl-node-2}
status: {allocatable: {cpu: "4", memory: 8Gi, pods: "110"}}
"""
DEPLOYMENT = """
apiVersion: apps/v1
kind: Deployment
metadata: {name: web, namespace: shop}
spec:
  replicas: 3
  selector: {matchLabels: {app: web}}
  template:
    metadata: {labels: {app: web}}
    spec: {containers: [{name: c, image: nginx, resources: {requests: {cpu: 100m}}}]}
"""


def test_a_deployment_applied_shows_in_the_panel_with_its_pods_bound_without_a_reload(
    dashboard_page: Any,
) -> None:
    from playwright.sync_api import expect

    page = dashboard_page
    new_cluster(page, f"workloads-{os.getpid()}-{next(_names)}")
    # Set once; a reload would lose it.
    page.evaluate("window.__sameDocument = true")
    expect(page.locator("#workloads-title")).to_have_text("Workloads 0")
    apply_yaml(page, NODES + "---\n" + DEPLOYMENT)
    panel = page.locator("#workloads")
    expect(page.locator("#workloads-title")).to_have_text("Workloads 2", timeout=LIVE_TIMEOUT_MS)
    deployment = panel.locator('[data-workload="Deployment/shop/web"]')
    expect(deployment).to_contain_text("3 desired · 3 created · 3 bound", timeout=LIVE_TIMEOUT_MS)
    # A replicas field being typed in survives the counts' updates.
    field = deployment.get_by_label("Replicas", exact=True)
    field.fill("4")
    deployment.get_by_role("button", name="Scale Deployment shop/web").click()
    expect(deployment).to_contain_text("4 desired · 4 created · 4 bound", timeout=LIVE_TIMEOUT_MS)
    assert page.evaluate("window.__sameDocument === true")


def test_scale_past_the_pod_limit_shows_its_error_in_the_panel_and_changes_nothing(
    dashboard_page: Any,
) -> None:
    from playwright.sync_api import expect

    page = dashboard_page
    new_cluster(page, f"workloads-{os.getpid()}-{next(_names)}")
    apply_yaml(page, NODES + "---\n" + DEPLOYMENT)
    deployment = page.locator('#workloads [data-workload="Deployment/shop/web"]')
    expect(deployment).to_contain_text("3 desired · 3 created", timeout=LIVE_TIMEOUT_MS)
    deployment.get_by_label("Replicas", exact=True).fill("100000")
    deployment.get_by_role("button", name="Scale Deployment shop/web").click()
    error = deployment.locator("#scale-error")
    expect(error).to_contain_text("more pods than a cluster may hold")
    expect(deployment).to_contain_text("3 desired · 3 created")
    # Nothing is kept for the next page.
    page.reload()
    expect(page.locator("#workloads")).to_contain_text("3 desired · 3 created")
    expect(page.locator("body")).not_to_contain_text("more pods than a cluster may hold")


def test_a_deployments_replica_set_refers_to_its_deployment_instead_of_scaling(
    dashboard_page: Any,
) -> None:
    from playwright.sync_api import expect

    page = dashboard_page
    new_cluster(page, f"workloads-{os.getpid()}-{next(_names)}")
    apply_yaml(page, NODES + "---\n" + DEPLOYMENT)
    replica_set = page.locator('#workloads [data-workload^="ReplicaSet/shop/web-"]')
    expect(replica_set).to_contain_text(
        re.compile(r"managed by Deployment/web"), timeout=LIVE_TIMEOUT_MS
    )
    expect(replica_set.get_by_label("Replicas", exact=True)).to_have_count(0)
