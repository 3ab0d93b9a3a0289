"""Finding one's way on the cycle page of a large cluster: the tie set summarised with a count,
node rows that lead to the node on the dashboard, and the score table's links keeping the
filter matrix's ``?reason=`` when the reason was chosen by htmx."""

from __future__ import annotations

import re
from typing import Any

import pytest
from django.test import Client
from test_trace_views import cycle_number, cycle_url, wide_cluster

pytestmark = pytest.mark.django_db(transaction=True)

HTMX_MATRIX = {"HTTP_HX_REQUEST": "true", "HTTP_HX_TARGET": "filter-matrix"}


@pytest.fixture(autouse=True)
def _no_background_runners(settings: Any) -> None:
    settings.SCHEDVIZ_START_RUNNERS = False
    settings.SCHEDVIZ_RUNNER_IDLE_SECONDS = 0


def test_the_tie_set_is_a_count_that_opens_to_its_nodes(client: Client) -> None:
    cluster = wide_cluster(30, small=5)
    html = client.get(cycle_url(cluster, cycle_number(cluster, "default/web"))).content.decode()
    found = re.search(r"<summary>Tie set: (\d+) nodes</summary>", html)
    assert found is not None
    ties = re.findall(r'<li class="tie-mark"><a href="([^"]+)"><bdi>(n-\d+)</bdi>', html)
    assert len(ties) == int(found.group(1)) == 25
    href, node = ties[0]
    assert href == f"/clusters/{cluster.pk}/?node={node}#node-{node}"
    dashboard = client.get(href).content.decode()
    assert f'class="node-card focused" id="node-{node}"' in dashboard


def test_a_reason_chosen_by_htmx_is_kept_by_the_score_tables_sort_links(client: Client) -> None:
    cluster = wide_cluster(30, small=5)
    url = cycle_url(cluster, cycle_number(cluster, "default/web"))
    html = client.get(url + "?reason=Insufficient+cpu", **HTMX_MATRIX).content.decode()
    assert html.count('id="filter-matrix"') == 1
    scores = html[html.index('<section id="scores"') :]
    assert 'hx-swap-oob="true"' in scores[:200]
    sorts = re.findall(r'data-sort="total"', scores)
    assert sorts
    links = re.findall(r'href="(\?[^"#]*sort=[^"#]*)#scores"', scores)
    assert links and all("reason=Insufficient+cpu" in link for link in links)
