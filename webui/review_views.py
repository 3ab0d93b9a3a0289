"""The review page: a real scheduler's logs, events and dump uploaded, each attempt shown with
the real and the replayed verdict side by side, pods with disagreements first
(schedviz.cluster.reviews, docs/review.md). The replay is kept as a paused cluster, so each
attempt links to the full page of its replayed cycle. An htmx post gets the results fragment."""

from __future__ import annotations

from typing import Any

from django.contrib.auth.models import User
from django.http import HttpRequest, HttpResponse
from django.shortcuts import render
from django.urls import reverse
from django.views.decorators.http import require_http_methods

from schedviz.cluster import reviews
from schedviz.cluster.services import ServiceError
from webui import access
from webui.limits import limit_page_writes

REVIEW = "webui/review/review.html"


def _owner(request: HttpRequest) -> User | None:
    user = request.user
    return user if isinstance(user, User) and user.is_authenticated else None


@require_http_methods(["GET", "POST"])
@limit_page_writes
def review(request: HttpRequest) -> HttpResponse:
    context: dict[str, Any] = {"errors": [], "result": None}
    status = 200
    if request.method == "POST":
        try:
            stored = reviews.review_uploaded(
                owner=_owner(request), files=request.FILES, name=request.POST.get("name", "")
            )
        except ServiceError as error:
            context["errors"] = error.errors
            status = 400
        else:
            access.remember_made(request.session, stored.cluster)
            context["result"] = _result_context(stored)
    if getattr(request, "htmx", False) and request.method == "POST":
        return render(request, f"{REVIEW}#results", context, status=status)
    return render(request, REVIEW, context, status=status)


def _result_context(stored: reviews.StoredReview) -> dict[str, Any]:
    cluster = stored.cluster
    pods = []
    for pod, reviewed in stored.review.pods_disagreeing_first():
        attempts = []
        for item in reviewed:
            data = item.to_json()
            cycle = data["replay"]["cycle"] if data["replay"] else None
            data["cycle_url"] = (
                reverse("webui:cycle", kwargs={"cluster_id": cluster.pk, "number": cycle})
                if cycle is not None
                else ""
            )
            attempts.append(data)
        pods.append({"pod": pod, "attempts": attempts, "agree": all(a["agree"] for a in attempts)})
    return {
        "pods": pods,
        "summary": stored.review.summary(),
        "cluster": cluster,
        "dashboard_url": reverse("webui:dashboard", kwargs={"cluster_id": cluster.pk}),
    }
