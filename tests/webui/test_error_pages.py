"""404 and 500 pages wear the site's header, and the favicon is found where browsers look."""

from __future__ import annotations

import pytest
from django.test import Client, RequestFactory
from django.views.defaults import server_error

pytestmark = pytest.mark.django_db


def test_a_missing_page_has_the_sites_header_and_a_way_back(client: Client) -> None:
    response = client.get("/clusters/999999/")
    assert response.status_code == 404
    body = response.content.decode()
    assert '<header class="site-header">' in body and "<h1>Not found</h1>" in body
    assert 'href="/"' in body and 'href="/accounts/login/' in body


def test_a_server_error_has_the_sites_header() -> None:
    response = server_error(RequestFactory().get("/"))
    assert response.status_code == 500
    body = response.content.decode()
    assert '<header class="site-header">' in body and "<h1>Server error</h1>" in body


def test_the_favicon_is_linked_and_served_at_the_usual_path(client: Client) -> None:
    assert 'rel="icon" href="/static/webui/favicon.svg"' in client.get("/").content.decode()
    response = client.get("/favicon.ico")
    assert response.status_code == 301 and response["Location"].endswith("webui/favicon.svg")
