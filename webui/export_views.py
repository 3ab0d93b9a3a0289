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
from django.http import Http404, HttpRequest, HttpResponse, JsonResponse, StreamingHttpResponse
from django.http.response import HttpResponseBase
from django.shortcuts import redirect, render
from django.views.decorators.http import require_http_methods

from schedviz.cluster import exports, services
from schedviz.cluster.services import ServiceError
from webui import access
from webui.forms import TraceImportForm
from webui.limits import limit_page_writes

IMPORT = "webui/clusters/import.html"
EXPORT_FORMATS = ("yaml", "jsonl", "kss")


def _attachment(response: HttpResponseBase, filename: str) -> HttpResponseBase:
    response["Content-Disposition"] = f'attachment; filename="{filename}"'
    return response


@require_http_methods(["GET", "HEAD"])
def export(request: HttpRequest, cluster_id: int, export_format: str) -> HttpResponseBase:
    """``yaml``: every object and the scheduler configuration; ``jsonl``: the traces (streamed);
    ``kss``: a v1 List of the pods annotated as kube-scheduler-simulator does."""
    if export_format not in EXPORT_FORMATS:
        raise Http404(f"no export format {export_format!r}: {', '.join(EXPORT_FORMATS)}")
    cluster = access.cluster_for(request, cluster_id)
    stem = f"cluster-{cluster.pk}"
    if export_format == "jsonl":
        stream = StreamingHttpResponse(
            exports.trace_export_jsonl(cluster=cluster), content_type="application/x-ndjson"
        )
        return _attachment(stream, f"{stem}.jsonl")
    if export_format == "kss":
        return _attachment(JsonResponse(exports.trace_export_kss(cluster=cluster)), f"{stem}.json")
    text = services.cluster_export_yaml(cluster=cluster)
    return _attachment(HttpResponse(text, content_type="application/yaml"), f"{stem}.yaml")


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
