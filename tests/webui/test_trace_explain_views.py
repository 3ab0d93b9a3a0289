"""The cycle page explains: the sentence on top, score cells that open their computation, Filter
rows that say how many nodes they rejected and why (and are not red on a cycle that scheduled
the pod), numbers rounded for people."""

from __future__ import annotations

import re
from typing import Any

import pytest
from django.test import Client
from django.urls import reverse

from schedviz.cluster import lessons, services
from schedviz.cluster.models import Cycle
from webui.templatetags.explain_tags import for_people
from worker.runner import run_cluster

pytestmark = pytest.mark.django_db(transaction=True)


@pytest.fixture(autouse=True)
def _no_background_runners(settings: Any) -> None:
    settings.SCHEDVIZ_START_RUNNERS = False
    settings.SCHEDVIZ_RUNNER_IDLE_SECONDS = 0


def text_of(html: str) -> str:
    return re.sub(r"\s+", " ", re.sub(r"<[^>]+>", " ", html))


@pytest.fixture
def spread() -> Any:
    cluster = lessons.lesson_load(slug="topology-spread")
    run_cluster(cluster.pk)
    return cluster


def _page(client: Client, cluster: Any, pod: str) -> str:
    number = Cycle.objects.get(cluster=cluster, pod_name=pod).number
    return client.get(reverse("webui:cycle", args=[cluster.pk, number])).content.decode()


def test_the_sentence_on_top_names_winner_margin_and_the_deciding_plugins(
    client: Client, spread: Any
) -> None:
    html = _page(client, spread, "web-3")
    sentence = re.search(r'<p class="decision" id="decision">(.*?)</p>', html, re.S)
    assert sentence is not None
    assert sentence.group(1) == (
        "node-c won with 492, 24 ahead of node-d (468), out of 2 nodes scored; decided by "
        "NodeResourcesFit (+18) and NodeResourcesBalancedAllocation (+6)."
    )
    # The decisive plugins' weighted cells of the winner are marked.
    assert html.count('class="num weighted decisive"') == 2


def test_every_score_cell_links_to_its_computation(client: Client, spread: Any) -> None:
    html = _page(client, spread, "web-3")
    number = Cycle.objects.get(cluster=spread, pod_name="web-3").number
    page_url = reverse("webui:cycle", args=[spread.pk, number])
    url = reverse("webui:score_cell", args=[spread.pk, number, "node-c", "NodeResourcesFit"])
    # Links relative to the cycle's page, boosted into the slot below the table.
    assert url == page_url + "scores/node-c/NodeResourcesFit/"
    assert '<a href="scores/node-c/NodeResourcesFit/">94</a>' in html
    assert 'hx-boost="true" hx-target="#score-computation-slot"' in html
    links = re.findall('<a href="scores/', html)
    # 2 nodes x (4 plugins scored) x raw, normalized, weighted.
    assert len(links) == 2 * 4 * 3
    response = client.get(url, headers={"HX-Request": "true"})
    assert response["HX-Push-Url"] == "false"
    assert "raw 94 → normalized 94 → weighted 94" in response.content.decode()


def test_filter_rows_count_their_rejections_with_reasons_and_are_not_red_on_success(
    client: Client, spread: Any
) -> None:
    html = _page(client, spread, "web-3")
    rows: dict[str, tuple[str, str]] = {}
    point = ""
    for m in re.finditer(
        r'<tr class="([^"]*)">\s*<td>(?:<a[^>]*>(\w+)</a>)?</td>\s*<td><a[^>]*>(\w+)</a></td>'
        r"(.*?)</tr>",
        html,
        re.S,
    ):
        point = m.group(2) or point
        if point == "Filter":
            rows[m.group(3)] = (m.group(1), text_of(m.group(4)))
    css, spread_row = rows["PodTopologySpread"]
    assert css == "filter-rejected"
    assert "rejected 2" in spread_row
    assert "node(s) didn&#x27;t match pod topology spread constraints (2 nodes)" in spread_row
    css, unschedulable_row = rows["NodeUnschedulable"]
    assert css == "code-Success" and "passed" in unschedulable_row
    assert "Unschedulable" not in unschedulable_row


def test_an_unschedulable_cycle_says_why_in_words(client: Client) -> None:
    cluster = lessons.lesson_load(slug="node-affinity")
    run_cluster(cluster.pk)
    html = _page(client, cluster, "lost")
    assert (
        "No node fit: of 4 nodes, rejected 4 by NodeAffinity (node(s) didn&#x27;t match "
        "Pod&#x27;s node affinity/selector). Preemption found no node where evicting pods "
        "would help."
    ) in html


def test_queue_details_and_times_are_rounded_for_people(client: Client) -> None:
    cluster = services.cluster_create(name="live")
    trace = {
        "cycle": 1,
        "pod": "default/p",
        "profile": "default-scheduler",
        "attempt": 1,
        "time": 12.345678912,
        "wallTime": 0.0,
        "result": "Scheduled",
        "node": "a",
        "message": "",
        "feasibleNodes": 1,
        "evaluatedNodes": 1,
        "totalNodes": 1,
        "filter": {},
        "scores": {},
        "totals": {},
        "selected": {"node": "a", "tieSet": ["a"]},
        "points": [],
        "queue": {"unschedulablePods": [{"pod": "default/q", "since": 0.352087435000044}]},
        "events": [],
    }
    services.cycles_create(cluster=cluster, traces=[trace])
    html = client.get(reverse("webui:cycle", args=[cluster.pk, 1])).content.decode()
    assert "0.352087435000044" not in html and "since: <bdi>0.352</bdi>" in html
    assert "12.3 s" in html


def test_for_people_leaves_short_numbers_and_text_alone() -> None:
    assert for_people("0.352087435000044") == "0.352"
    assert for_people("node-1.5") == "node-1.5"
    assert for_people("1.5") == "1.5"
    assert for_people(3) == 3
