"""Every ``aria-describedby``, ``aria-labelledby`` and ``for`` on the pages names an id the same
page has, and headings never skip a level going down."""

from __future__ import annotations

import itertools
import re
from typing import Any

import pytest
from django.test import Client

from schedviz.cluster import lessons, services
from schedviz.cluster.models import Cluster
from schedviz.demo import DEMO_CLUSTER
from worker.runner import run_cluster

pytestmark = pytest.mark.django_db(transaction=True)


@pytest.fixture(autouse=True)
def _no_background_runners(settings: Any) -> None:
    settings.SCHEDVIZ_START_RUNNERS = False
    settings.SCHEDVIZ_RUNNER_IDLE_SECONDS = 0


def _pages(client: Client) -> dict[str, str]:
    cluster = services.cluster_create(name="demo", clock_mode=Cluster.ClockMode.VIRTUAL, seed=1)
    services.manifests_apply_files(cluster=cluster, paths=[str(DEMO_CLUSTER)])
    run_cluster(cluster.pk)
    lesson = lessons.lesson_load(slug="resource-fit", owner=None, paused=True)
    base = f"/clusters/{cluster.pk}/"
    urls = {
        "clusters": "/",
        "dashboard": base,
        "lesson dashboard": f"/clusters/{lesson.pk}/",
        "node": base + "nodes/node-a/",
        "pod": base + "pods/default/web-1/",
        "cycle": base + "cycles/1/",
        "profiles": base + "profiles/",
        "apply": base + "apply/",
        "node new": base + "nodes/new/",
        "pod new": base + "pods/new/",
        "import": "/clusters/import/",
        "lessons": "/lessons/",
        "lesson": "/lessons/resource-fit/",
        "login": "/accounts/login/",
    }
    pages = {name: client.get(url).content.decode() for name, url in urls.items()}
    # A form with errors: the error list's id is what the field's aria-describedby names.
    pages["pod new, refused"] = client.post(
        base + "pods/new/", {"name": "", "count": "0"}
    ).content.decode()
    return pages


def test_every_aria_reference_names_an_id_of_the_page(client: Client) -> None:
    for name, html in _pages(client).items():
        ids = set(re.findall(r'\sid="([^"]+)"', html))
        for attribute in ("aria-describedby", "aria-labelledby", "for"):
            for value in re.findall(rf'\s{attribute}="([^"]+)"', html):
                missing = [ref for ref in value.split() if ref not in ids]
                assert not missing, (name, attribute, missing)


def test_headings_never_skip_a_level(client: Client) -> None:
    for name, html in _pages(client).items():
        levels = [int(level) for level in re.findall(r"<h([1-6])[\s>]", html)]
        assert levels and levels[0] == 1, (name, levels)
        for before, after in itertools.pairwise(levels):
            assert after <= before + 1, (name, levels)
