"""Export and review from the pages: a cluster's YAML, its traces as JSON lines, and the
kube-scheduler-simulator format (schedviz/cluster/exports.py), for whoever may read the cluster
(webui/access.py: its owner, anyone for an ownerless one, a share link's visitor); and a trace
file imported into a new paused cluster for review.

The JSON API (``/api/clusters/<id>/export``) answers the same documents to token holders; these
are the pages' own links, under the pages' access rules.
"""

from __future__ import annotations

from django.contrib import messages
from django.contrib.auth.models import User
from django.http import Http404, HttpRequest, HttpResponse, HttpResponseBadRequest
from django.http.response import HttpResponseBase
from django.shortcuts import redirect, render
from django.views.decorators.http import require_http_methods

from schedviz.cluster import exports, streaming
from schedviz.cluster.services import ServiceError
from webui import access
from webui.forms import TraceImportForm
from webui.limits import limit_page_writes

IMPORT = "webui/clusters/import.html"
EXPORT_FORMATS = tuple(streaming.EXPORTS)


@require_http_methods(["GET", "HEAD"])
def export(request: HttpRequest, cluster_id: int, export_format: str) -> HttpResponseBase:
    """``yaml``: every object and the scheduler configuration; ``jsonl``: the traces;
    ``kss``: a v1 List of the pods annotated as kube-scheduler-simulator does. Streamed;
    ``?gzip=1`` gzips."""
    if export_format not in EXPORT_FORMATS:
        raise Http404(f"no export format {export_format!r}: {', '.join(EXPORT_FORMATS)}")
    cluster = access.cluster_for(request, cluster_id)
    try:
        gzip = streaming.wants_gzip(request.GET.get("gzip"))
    except ValueError as error:
        return HttpResponseBadRequest(str(error), content_type="text/plain; charset=utf-8")
    return streaming.export_response(cluster=cluster, export_format=export_format, gzip=gzip)


@require_http_methods(["GET", "POST"])
@limit_page_writes
def trace_import(request: HttpRequest) -> HttpResponse:
    """GET: the form. POST: the file as a new paused cluster (the signed-in user's, or
    ownerless), then its dashboard; the form again with the reasons when it is refused."""
    form = TraceImportForm(request.POST or None, request.FILES or None)
    if request.method == "POST" and form.is_valid():
        user = request.user if isinstance(request.user, User) else None
        owner = user if user is not None and user.is_authenticated else None
        text = form.cleaned_data["trace"]
        name = form.cleaned_data["name"] or exports.import_name(owner=owner, text=text)
        try:
            cluster = exports.trace_import(name=name, owner=owner, text=text)
        except ServiceError as error:
            for message in error.errors:
                form.add_error("trace", message)
        else:
            access.remember_made(request.session, cluster)
            messages.success(request, f"Imported into cluster {cluster.name}, paused, for review.")
            return redirect("webui:dashboard", cluster_id=cluster.pk)
    status = 400 if form.errors else 200
    return render(request, IMPORT, {"form": form}, status=status)
