"""The review page: uploads in, pods with disagreements first, each attempt's real and replayed
verdict side by side with a link to its replayed cycle; refusals shown with the reason."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from django.test import Client
from django.urls import reverse

from schedviz.cluster.models import Cluster

pytestmark = pytest.mark.django_db

DATA = Path(__file__).resolve().parents[1] / "review" / "data"


@pytest.fixture(autouse=True)
def _no_runners(settings: Any) -> None:
    settings.SCHEDVIZ_START_RUNNERS = False


def _file(name: str) -> SimpleUploadedFile:
    return SimpleUploadedFile(name, (DATA / name).read_bytes())


def test_the_page_lists_pods_with_disagreements_first(client: Client) -> None:
    response = client.post(
        reverse("webui:review"),
        {"log": [_file("scheduler-v10.log")], "cluster": [_file("cluster-drifted.yaml")]},
    )
    assert response.status_code == 200
    html = response.content.decode()
    order = re.findall(r'data-pod="([^"]+)"', html)
    assert order[:2] == ["prod/urgent-1", "default/fast-1"]
    assert "the pod needs disk=ssd, the dump&#x27;s node-a has disk=hdd" in html
    cluster = Cluster.objects.get()
    assert reverse("webui:cycle", kwargs={"cluster_id": cluster.pk, "number": 1}) in html


def test_an_htmx_post_gets_the_results_fragment(client: Client) -> None:
    response = client.post(
        reverse("webui:review"),
        {"log": [_file("scheduler-v2.log")], "cluster": [_file("cluster.yaml")]},
        HTTP_HX_REQUEST="true",
    )
    html = response.content.decode()
    assert html.lstrip().startswith('<section id="review-results"')
    assert "6 attempts of 5 pods" in html


def test_a_refused_upload_shows_the_reason_and_stores_nothing(client: Client) -> None:
    response = client.post(reverse("webui:review"), {"cluster": [_file("cluster.yaml")]})
    assert response.status_code == 400
    assert "at least one kube-scheduler log is required" in response.content.decode()
    assert not Cluster.objects.exists()


def test_user_text_is_escaped(client: Client) -> None:
    log = (DATA / "scheduler-v2.log").read_text().replace("default/web-1", "default/<b>x</b>")
    response = client.post(
        reverse("webui:review"),
        {
            "log": [SimpleUploadedFile("l.log", log.encode())],
            "cluster": [_file("cluster.yaml")],
        },
    )
    html = response.content.decode()
    assert "<b>x</b>" not in html
    assert "&lt;b&gt;x&lt;/b&gt;" in html
