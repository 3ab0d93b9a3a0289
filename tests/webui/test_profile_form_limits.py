"""The profile form's limits hold on the server too: a weight outside the form's range, posted
without the browser's checks, is refused with the field named and nothing saved."""

from __future__ import annotations

from typing import Any

import pytest
from django.test import Client
from test_trace_views import _form_data, profiles_url

from schedviz.cluster import services
from schedviz.cluster.models import Profile

pytestmark = pytest.mark.django_db


@pytest.fixture(autouse=True)
def _no_background_runners(settings: Any) -> None:
    settings.SCHEDVIZ_START_RUNNERS = False


@pytest.mark.parametrize("weight", ["-5", "0", "101"])
def test_a_weight_outside_the_forms_range_is_refused_and_nothing_saved(
    client: Client, weight: str
) -> None:
    cluster = services.cluster_create(name="p")
    data = _form_data(client, cluster)
    data["weight-NodeAffinity"] = weight
    response = client.post(profiles_url(cluster), data)
    assert response.status_code == 400
    body = response.content.decode()
    assert f"weight of NodeAffinity: Invalid value: {weight}: must be between 1 and 100" in body
    assert not Profile.objects.filter(cluster=cluster).exists()


def test_a_weight_at_either_end_of_the_range_is_saved(client: Client) -> None:
    cluster = services.cluster_create(name="p")
    for weight in ("1", "100"):
        data = _form_data(client, cluster)
        data["weight-NodeAffinity"] = weight
        response = client.post(profiles_url(cluster), data)
        assert response.status_code in (200, 302), response.content.decode()[:500]
        assert Profile.objects.filter(cluster=cluster).exists()
