"""Read-only share links: the owner makes and revokes them; a visitor opens one.

Opening ``/share/<key>/`` keeps the link's id in the visitor's session and goes to the cluster's
dashboard; from then on the cluster's pages read as for its owner, and every write is refused
(webui/access.py). The key is shown once, when the link is made; only its hash is stored.
"""

from __future__ import annotations

from django.contrib import messages
from django.http import Http404, HttpRequest, HttpResponse
from django.shortcuts import redirect, render
from django.urls import reverse
from django.views.decorators.http import require_http_methods, require_POST

from schedviz.cluster import selectors, services
from schedviz.cluster.models import ShareLink
from schedviz.cluster.services import ServiceError
from webui import access
from webui.limits import limit_page_writes
from webui.views import _cluster, _dashboard_url

CREATED = "webui/share/created.html"


@require_POST
@limit_page_writes
def share_create(request: HttpRequest, cluster_id: int) -> HttpResponse:
    """Makes a link and shows its URL, this once."""
    cluster = _cluster(request, cluster_id)
    try:
        _link, key = services.share_link_create(cluster=cluster, user=request.user)
    except ServiceError as error:
        messages.error(request, " ".join(error.errors))
        return redirect(_dashboard_url(cluster))
    url = request.build_absolute_uri(reverse("webui:share_open", kwargs={"key": key}))
    return render(request, CREATED, {"cluster": cluster, "url": url})


@require_POST
@limit_page_writes
def share_revoke(request: HttpRequest, cluster_id: int, link_id: int) -> HttpResponse:
    cluster = _cluster(request, cluster_id)
    link = ShareLink.objects.filter(cluster=cluster, pk=link_id).first()
    if link is None:
        raise Http404("no such share link")
    try:
        services.share_link_revoke(link=link, user=request.user)
    except ServiceError as error:
        messages.error(request, " ".join(error.errors))
    else:
        messages.success(request, "Share link revoked: it no longer opens the cluster.")
    return redirect(_dashboard_url(cluster) + "#share")


@require_http_methods(["GET", "HEAD"])
def share_open(request: HttpRequest, key: str) -> HttpResponse:
    link = selectors.share_link_active(key=key)
    if link is None:
        raise Http404("no such share link")
    access.grant(request.session, link)
    return redirect(_dashboard_url(link.cluster))
