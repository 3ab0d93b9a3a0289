"""The step debugger panel and its controls: real forms, the panel for htmx, the stop shown."""

from __future__ import annotations

from typing import Any

import pytest
from django.template.loader import render_to_string
from django.test import Client
from django.urls import reverse

from schedviz.cluster import services
from schedviz.cluster.models import Cluster, DebugSession
from webui.debugger_panel import DEBUGGER_TEMPLATE, debugger_context

pytestmark = pytest.mark.django_db

HTMX = {"HX-Request": "true"}


@pytest.fixture(autouse=True)
def _no_runners(settings: Any) -> None:
    settings.SCHEDVIZ_START_RUNNERS = False
    settings.SCHEDVIZ_WRITE_RATE_PER_MINUTE = 0


def paused() -> Cluster:
    return services.cluster_create(name="c", run_state=Cluster.RunState.PAUSED)


def stop_at(cluster: Cluster, point: str, **fields: Any) -> int:
    services.debug_step_into(cluster=cluster)
    services.debug_session_claim(cluster_id=cluster.pk)
    stop = {
        "cycle": 3,
        "pod": "default/web",
        "point": point,
        "plugins": ["NodeResourcesFit", "NodePorts"],
        "reached": ["PreFilter", point],
        "state_entries": [
            {
                "key": "PreFilterNodeResourcesFit",
                "point": "PreFilter",
                "plugin": "NodeResourcesFit",
                "text": "PreFilter NodeResourcesFit computed requests cpu=500m memory=1Gi",
            }
        ],
        "previous": [
            {
                "point": "PreFilter",
                "plugins": [
                    {
                        "plugin": "NodeResourcesFit",
                        "code": "Success",
                        "reasons": [],
                        "calls": 1,
                        "rejected": 0,
                    }
                ],
            }
        ],
        **fields,
    }
    return services.debug_session_stop(cluster_id=cluster.pk, stop=stop)


def test_a_paused_dashboard_offers_to_step_into_the_next_cycle(client: Client) -> None:
    cluster = paused()
    html = client.get(reverse("webui:dashboard", args=[cluster.pk])).content.decode()
    assert "Step one cycle" in html and "Step into next cycle" in html
    assert f'action="{reverse("webui:debug", args=[cluster.pk])}"' in html
    assert 'name="action" value="step-into"' in html
    assert 'id="debugger"' in html


def test_a_running_dashboard_hides_the_debugger(client: Client) -> None:
    cluster = services.cluster_create(name="c")
    html = client.get(reverse("webui:dashboard", args=[cluster.pk])).content.decode()
    assert "Step into next cycle" not in html and "Step debugger" not in html
    # No empty box: the panel is there for the websocket to swap, hidden, naming no title.
    assert '<section id="debugger" class="debugger" hidden>' in html
    assert 'aria-labelledby="debugger-title"' not in html


def test_the_previous_filter_names_the_nodes_each_plugin_rejected(client: Client) -> None:
    cluster = paused()
    filter_outcome = {
        "point": "Filter",
        "plugins": [
            {"plugin": "NodeResourcesFit", "code": "Success", "calls": 4, "rejected": 0},
            {
                "plugin": "PodTopologySpread",
                "code": "Unschedulable",
                "reasons": ["node(s) didn't match pod topology spread constraints"],
                "calls": 4,
                "rejected": 2,
                "rejectedNodes": ["node-a", "node-b"],
            },
        ],
    }
    stop_at(cluster, "PreScore", previous=[filter_outcome])
    html = client.get(reverse("webui:debug", args=[cluster.pk]), headers=HTMX).content.decode()
    text = " ".join(html.split())
    assert (
        'ran on 4 nodes, rejected 2 (<span class="debug-rejected">'
        "<bdi>node-a</bdi>, <bdi>node-b</bdi></span>)" in text
    )
    assert "ran on 4 nodes, rejected none" in text
    assert "Unschedulable on 4 nodes" not in text
    assert "Run PreScore" in text and "then stops before Score" in text


def test_stepping_into_with_nothing_pending_says_there_is_nothing_to_schedule() -> None:
    cluster = paused()
    services.debug_step_into(cluster=cluster)
    services.debug_session_claim(cluster_id=cluster.pk)
    services.debug_session_end(
        cluster_id=cluster.pk,
        state=DebugSession.State.FINISHED,
        fields={
            "point": "End",
            "plugins": [],
            "outcome": {"result": "", "node": None, "message": "No pod was waiting."},
        },
    )
    context = debugger_context(cluster=cluster)
    html = render_to_string(f"{DEBUGGER_TEMPLATE}#debugger", context)
    assert "Nothing to schedule" in html
    assert "Cycle #0" not in html and "pod <bdi" not in html and "the cycle is over" not in html


def test_step_into_without_htmx_redirects_to_the_panel(client: Client) -> None:
    cluster = paused()
    response = client.post(reverse("webui:debug", args=[cluster.pk]), {"action": "step-into"})
    assert response.status_code == 302 and response["Location"].endswith("#debugger")
    assert DebugSession.objects.get(cluster=cluster).state == DebugSession.State.REQUESTED


def test_step_into_with_htmx_answers_the_waiting_panel(client: Client) -> None:
    cluster = paused()
    response = client.post(
        reverse("webui:debug", args=[cluster.pk]), {"action": "step-into"}, headers=HTMX
    )
    assert response.status_code == 200
    assert "Waiting for the scheduler to start the next cycle" in response.content.decode()


def test_the_panel_shows_the_points_in_order_the_current_one_and_the_state(
    client: Client,
) -> None:
    cluster = paused()
    stop_at(cluster, "Filter")
    html = client.get(reverse("webui:debug", args=[cluster.pk]), headers=HTMX).content.decode()
    order = [html.index(f">{point}</a>") for point in ("PreFilter", "Filter", "PostFilter", "Bind")]
    assert order == sorted(order)
    assert 'aria-current="step"' in html and "stopped before <strong" in html
    assert "PreFilter NodeResourcesFit computed requests cpu=500m memory=1Gi" in html
    assert "What the previous point decided" in html
    assert "Run Filter" in html and "Finish cycle" in html
    assert "noderesources/fit.go" in html  # plugins link to their upstream source
    assert "framework/runtime/framework.go" in html


def test_continue_answers_the_stop_it_names(client: Client) -> None:
    cluster = paused()
    sequence = stop_at(cluster, "PreFilter")
    url = reverse("webui:debug", args=[cluster.pk])
    response = client.post(url, {"action": "continue", "sequence": sequence}, headers=HTMX)
    assert response.status_code == 200
    assert DebugSession.objects.get(cluster=cluster).command == "continue"
    again = client.post(url, {"action": "continue", "sequence": sequence}, headers=HTMX)
    assert again.status_code == 400 and "has its command already" in again.content.decode()


def test_a_finished_cycle_says_what_happened() -> None:
    cluster = paused()
    stop_at(cluster, "PostBind")
    services.debug_session_end(
        cluster_id=cluster.pk,
        state=DebugSession.State.FINISHED,
        fields={
            "point": "End",
            "reached": [
                "PreFilter",
                "Filter",
                "Reserve",
                "Permit",
                "PreBind",
                "Bind",
                "PostBind",
                "End",
            ],
            "outcome": {"result": "Scheduled", "node": "node-1", "message": "assigned"},
        },
    )
    view = debugger_context(cluster=cluster)["debugger"]
    statuses = {p["name"]: p["status"] for p in view["points"]}
    assert statuses["PreScore"] == "skipped" and statuses["Bind"] == "done"
    assert statuses["End"] == "current" and not view["stopped"]
