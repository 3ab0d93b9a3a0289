"""The dashboard's Workloads panel: each workload with its replicas, a scale form and a delete
that asks first on a page of its own (as the cluster's Reset and Delete do)."""

from __future__ import annotations

from django import forms
from django.contrib import messages
from django.http import Http404, HttpRequest, HttpResponse, HttpResponseRedirect
from django.shortcuts import render
from django.urls import reverse
from django.views.decorators.http import require_http_methods, require_POST

from schedviz.cluster import selectors, services
from schedviz.cluster.models import Cluster
from schedviz.cluster.services import Conflict, ObjectNotFound, ObjectRef, ServiceError
from webui import access
from webui.limits import limit_page_writes
from webui.views import dashboard_page

WORKLOADS = "webui/dashboard/workloads.html"
CONFIRM = "webui/dashboard/workload_confirm.html"
CONFIRM_FIELD = "confirm"
# Far above any cluster's pod limit; the service's limit check names the real one.
MAX_REPLICAS = 100_000


class ScaleForm(forms.Form):
    replicas = forms.IntegerField(min_value=0, max_value=MAX_REPLICAS)


def _answer(
    request: HttpRequest,
    cluster: Cluster,
    *,
    workload: str = "",
    errors: list[str] | None = None,
    status: int = 200,
) -> HttpResponse:
    """htmx: the panel again, with the refusal under its workload; a plain request: back to
    the dashboard at the panel, or (refused) the dashboard itself with the refusal in place."""
    asked = request.POST.get("replicas", "")
    scale_error = {"workload": workload, "errors": errors, "value": asked} if errors else None
    if getattr(request, "htmx", False):
        context = {
            "cluster": cluster,
            "workloads": selectors.workload_list(cluster=cluster),
            "scale_error": scale_error,
        }
        return render(request, f"{WORKLOADS}#workloads", context, status=status)
    if scale_error is not None:
        return dashboard_page(request, cluster, extra={"scale_error": scale_error}, status=status)
    url = reverse("webui:dashboard", kwargs={"cluster_id": cluster.pk})
    return HttpResponseRedirect(f"{url}#workloads")


@require_POST
@limit_page_writes
def workload_scale(
    request: HttpRequest, cluster_id: int, kind: str, namespace: str, name: str
) -> HttpResponse:
    cluster = access.cluster_for(request, cluster_id)
    workload = f"{kind}/{namespace}/{name}"
    form = ScaleForm(request.POST)
    if not form.is_valid():
        errors = [f"replicas: {error}" for error in form.errors.get("replicas", [])]
        return _answer(request, cluster, workload=workload, errors=errors, status=400)
    try:
        services.workload_scale(
            cluster=cluster,
            kind=kind,
            namespace=namespace,
            name=name,
            replicas=form.cleaned_data["replicas"],
        )
    except ObjectNotFound:
        raise Http404("no such workload") from None
    except ServiceError as error:
        status = 409 if isinstance(error, Conflict) else 400
        return _answer(request, cluster, workload=workload, errors=error.errors, status=status)
    return _answer(request, cluster)


@require_http_methods(["GET", "HEAD", "POST"])
@limit_page_writes
def workload_delete(
    request: HttpRequest, cluster_id: int, kind: str, namespace: str, name: str
) -> HttpResponse:
    """The confirmation page, or (a POST with the confirmation) the workload deleted."""
    cluster = access.cluster_for(request, cluster_id)
    if not any(
        (w.kind, w.namespace, w.name) == (kind, namespace, name)
        for w in selectors.workload_list(cluster=cluster)
    ):
        raise Http404("no such workload")
    if request.method == "POST" and request.POST.get(CONFIRM_FIELD) == "yes":
        try:
            deleted = services.objects_delete(
                cluster=cluster, refs=[ObjectRef(kind, name, namespace)]
            )
        except ObjectNotFound:
            raise Http404("no such workload") from None
        controlled = len(deleted) - 1
        messages.success(
            request,
            f"{kind} {namespace}/{name} deleted, with {controlled} object(s) it controlled.",
        )
        url = reverse("webui:dashboard", kwargs={"cluster_id": cluster.pk})
        return HttpResponseRedirect(f"{url}#workloads")
    context = {"cluster": cluster, "kind": kind, "namespace": namespace, "name": name}
    return render(request, CONFIRM, context)
