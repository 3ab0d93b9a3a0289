"""Cluster list, dashboard, forms and controls.

Views parse input, call a service (writes) or a presenter over the selectors (reads), and
render. An htmx request gets the named fragment it targets (the same partial the page renders
and the websocket pushes); a plain request gets the page, or a redirect after a write.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import yaml
from django import forms
from django.contrib import messages
from django.contrib.auth.models import User
from django.db import transaction
from django.http import Http404, HttpRequest, HttpResponse, HttpResponseRedirect
from django.shortcuts import redirect, render
from django.urls import reverse
from django.views.decorators.http import require_http_methods, require_POST

from schedviz.cluster import lessons, selectors, services
from schedviz.cluster.models import Cluster
from schedviz.cluster.services import ObjectNotFound, ObjectRef, ServiceError
from schedviz.demo import DEMO_CLUSTER
from schedviz.kube.errors import go_quote
from webui import access, presenters
from webui.debugger_panel import DEBUGGER_TEMPLATE, debugger_context
from webui.forms import (
    CLUSTER_ROUTES,
    NODE_EDIT_ROUTES,
    NODE_ROUTES,
    POD_ROUTES,
    ClockModeForm,
    ClusterCreateForm,
    ManifestsForm,
    NodeEditForm,
    NodeForm,
    PodForm,
    SpeedForm,
    add_service_errors,
    input_messages,
)
from webui.limits import limit_page_writes
from webui.prediction_panel import lesson_context, predict_context

DASHBOARD = "webui/dashboard/page.html"
CLUSTERS = "webui/clusters/list.html"
CONFIRM = "webui/clusters/confirm.html"
DOMAINS = "webui/dashboard/domains.html"


def _owner(request: HttpRequest) -> User | None:
    user = request.user
    return user if isinstance(user, User) and user.is_authenticated else None


def _cluster(request: HttpRequest, cluster_id: int) -> Cluster:
    """The page's cluster: read with a share link too, written by its owner alone."""
    return access.cluster_for(request, cluster_id)


def _is_htmx(request: HttpRequest) -> bool:
    return bool(getattr(request, "htmx", False))


def _dashboard_url(cluster: Cluster) -> str:
    return reverse("webui:dashboard", kwargs={"cluster_id": cluster.pk})


# ---------------------------------------------------------------------------------------------
# Clusters


def _create_cluster(form: ClusterCreateForm, owner: User | None) -> Cluster | None:
    """The new cluster with what it starts with, all in one transaction; None (and the form's
    errors) when anything is refused, and then nothing is created."""
    data = form.cleaned_data
    try:
        with transaction.atomic():
            cluster = services.cluster_create(
                name=data["name"], owner=owner, clock_mode=data["clock_mode"]
            )
            if data["source"] == "demo":
                services.manifests_apply_files(cluster=cluster, paths=[str(DEMO_CLUSTER)])
            elif data["source"] == "manifests":
                source = data["upload"].name if data.get("upload") else "<input>"
                try:
                    services.manifests_apply(cluster=cluster, text=data["manifests"], source=source)
                except ServiceError as error:
                    field = "upload" if data.get("upload") else "manifests"
                    for message in input_messages(error.errors, data["manifests"]):
                        form.add_error(field, message)
                    raise
    except ServiceError as error:
        if not form.errors:
            add_service_errors(form, error.errors, CLUSTER_ROUTES, None)
        return None
    return cluster


@require_http_methods(["GET", "POST"])
@limit_page_writes
def index(request: HttpRequest) -> HttpResponse:
    """Every cluster the user may see, and the form that creates one."""
    form = ClusterCreateForm(request.POST or None, request.FILES or None)
    if request.method == "POST" and form.is_valid():
        cluster = _create_cluster(form, _owner(request))
        if cluster is not None:
            access.remember_made(request.session, cluster)
            return redirect(_dashboard_url(cluster))
    status = 400 if form.errors else 200
    context = {"clusters": selectors.cluster_list(user=request.user), "form": form}
    if _is_htmx(request) and request.method == "POST":
        return render(request, f"{CLUSTERS}#create_form", context, status=status)
    return render(request, CLUSTERS, context, status=status)


# Reset and Delete wipe a cluster: each asks first, on a page of its own (no script needed), and
# acts only on a POST that carries the confirmation field that page's form sends.
CONFIRM_FIELD = "confirm"
WIPES = {
    "reset": (
        "Reset",
        "Every object and every cycle of the cluster is deleted; the cluster stays, empty.",
    ),
    "delete": ("Delete", "The cluster is deleted, with every object and every cycle it holds."),
}


def _wipe(request: HttpRequest, cluster_id: int, action: str) -> HttpResponse | None:
    """The confirmation page (GET, or a POST without the confirmation), a 403 page for a visitor
    who may not wipe the cluster, or None: go ahead."""
    cluster = _cluster(request, cluster_id)
    allowed = access.may_wipe(request, cluster)
    if request.method == "POST" and allowed and request.POST.get(CONFIRM_FIELD) == "yes":
        return None
    verb, consequence = WIPES[action]
    if action == "reset" and cluster.lesson:
        consequence = (
            "The lesson starts again: its objects as it loaded them, paused; every cycle and "
            "every change made since is deleted."
        )
    context = {
        "cluster": cluster,
        "verb": verb,
        "consequence": consequence,
        "action_url": reverse(f"webui:cluster_{action}", kwargs={"cluster_id": cluster.pk}),
        "allowed": allowed,
    }
    return render(request, CONFIRM, context, status=200 if allowed else 403)


@require_http_methods(["GET", "HEAD", "POST"])
@limit_page_writes
def cluster_delete(request: HttpRequest, cluster_id: int) -> HttpResponse:
    asked = _wipe(request, cluster_id, "delete")
    if asked is not None:
        return asked
    cluster = _cluster(request, cluster_id)
    name = cluster.name
    services.cluster_delete(cluster=cluster)
    messages.success(request, f"Cluster {name} deleted.")
    return redirect("webui:index")


@require_http_methods(["GET", "HEAD", "POST"])
@limit_page_writes
def cluster_reset(request: HttpRequest, cluster_id: int) -> HttpResponse:
    asked = _wipe(request, cluster_id, "reset")
    if asked is not None:
        return asked
    cluster = _cluster(request, cluster_id)
    if cluster.lesson:
        # A lesson's cluster is reset to the lesson, not emptied under its panel.
        lessons.lesson_restart(cluster=cluster)
        messages.success(request, f"Cluster {cluster.name} reset: the lesson starts again.")
        return redirect(_dashboard_url(cluster))
    services.cluster_reset(cluster=cluster)
    messages.success(request, f"Cluster {cluster.name} reset: every object and cycle deleted.")
    return redirect(_dashboard_url(cluster))


# ---------------------------------------------------------------------------------------------
# The dashboard

# Fragments an htmx request may ask for by its target's id.
DASHBOARD_FRAGMENTS = {"nodes", "pending", "queue", "feed", "controls"}


@require_http_methods(["GET", "HEAD"])
def dashboard(request: HttpRequest, cluster_id: int) -> HttpResponse:
    return dashboard_page(request, _cluster(request, cluster_id))


def dashboard_page(
    request: HttpRequest,
    cluster: Cluster,
    *,
    extra: dict[str, Any] | None = None,
    status: int = 200,
) -> HttpResponse:
    """The dashboard (or, for htmx, the fragment it targets); ``extra`` on top of its context,
    as when a form posted without JS is answered with the page and its errors."""
    query = presenters.NodeQuery.of(request.GET)
    context = presenters.dashboard_context(
        cluster=cluster,
        page=request.GET.get("page"),
        colour_by=request.GET.get("colour"),
        query=query,
    )
    context.update(_forms(cluster))
    target = request.htmx.target if _is_htmx(request) else None  # type: ignore[attr-defined]
    if target in DASHBOARD_FRAGMENTS and request.method in ("GET", "HEAD"):
        return render(request, f"{DASHBOARD}#{target}", context)
    if query.node and presenters.node_get(cluster=cluster, name=query.node) is None:
        messages.error(request, f"No node named {query.node} in this cluster.")
    context["label_keys"] = presenters.label_keys(cluster=cluster)
    context.update(lesson_context(cluster=cluster), **predict_context(cluster=cluster))
    context.update(debugger_context(cluster=cluster))
    context["workloads"] = selectors.workload_list(cluster=cluster)
    context.update(_share_context(request, cluster))
    context.update(extra or {})
    return render(request, DASHBOARD, context, status=status)


@require_http_methods(["GET", "HEAD"])
def domains(request: HttpRequest, cluster_id: int) -> HttpResponse:
    """The nodes grouped by the value of label ``?group=`` (the zone by default), with pod
    counts and free resources per domain: a page, or its table for htmx."""
    cluster = _cluster(request, cluster_id)
    group = presenters.NodeQuery.of(request.GET).group or presenters.ZONE_LABEL
    context = {
        "cluster": cluster,
        "group": group,
        "colour_by": presenters.colour_mode(request.GET.get("colour")),
        "domains": presenters.topology_domains(cluster=cluster, key=group),
    }
    if _is_htmx(request):
        return render(request, f"{DOMAINS}#domains", context)
    return render(request, DOMAINS, context)


def _share_context(request: HttpRequest, cluster: Cluster) -> dict[str, Any]:
    """The share panel, for the cluster's owner only (a share viewer sees the cluster too)."""
    owner = _owner(request)
    is_owner = owner is not None and owner.pk == cluster.owner_id
    links = list(selectors.share_link_list(cluster=cluster)) if is_owner else []
    return {"is_owner": is_owner, "share_links": links}


def _forms(cluster: Cluster, **forms_: forms.Form) -> dict[str, Any]:
    return {
        "pod_form": forms_.get("pod_form") or PodForm(),
        "node_form": forms_.get("node_form") or NodeForm(),
        "manifests_form": forms_.get("manifests_form") or ManifestsForm(),
        "speed_form": SpeedForm(initial={"speed": cluster.speed}),
    }


def _controls(request: HttpRequest, cluster: Cluster, error: str = "") -> HttpResponse:
    if _is_htmx(request):
        context = {"cluster": cluster, "control_error": error}
        return render(request, f"{DASHBOARD}#controls", context, status=400 if error else 200)
    if error:
        messages.error(request, error)
    return redirect(_dashboard_url(cluster))


@require_http_methods(["GET", "HEAD", "POST"])
@limit_page_writes
def debug(request: HttpRequest, cluster_id: int) -> HttpResponse:
    """The step debugger: POST ``action`` step-into, continue or finish (with the ``sequence``
    of the stop it answers); answered with the panel (htmx) or the dashboard."""
    cluster = _cluster(request, cluster_id)
    error = ""
    if request.method == "POST":
        action = request.POST.get("action", "")
        try:
            if action == "step-into":
                services.debug_step_into(cluster=cluster)
            else:
                services.debug_command(
                    cluster=cluster, command=action, sequence=_sequence(request.POST)
                )
        except ServiceError as failure:
            error = " ".join(failure.errors)
        if not _is_htmx(request):
            if error:
                messages.error(request, error)
            return redirect(_dashboard_url(cluster) + "#debugger")
    if not _is_htmx(request):
        return redirect(_dashboard_url(cluster) + "#debugger")
    context = debugger_context(cluster=cluster)
    context["debug_error"] = error
    return render(request, f"{DEBUGGER_TEMPLATE}#debugger", context, status=400 if error else 200)


def _sequence(data: Any) -> int | None:
    raw = data.get("sequence")
    return int(raw) if isinstance(raw, str) and raw.isdigit() else None


@require_POST
@limit_page_writes
def control(request: HttpRequest, cluster_id: int, action: str) -> HttpResponse:
    """Run, pause, step, speed, clock: one service each, answered with the controls."""
    cluster = _cluster(request, cluster_id)
    try:
        if action == "run":
            services.cluster_set_run_state(cluster=cluster, run_state=Cluster.RunState.RUNNING)
        elif action == "pause":
            services.cluster_set_run_state(cluster=cluster, run_state=Cluster.RunState.PAUSED)
        elif action == "step":
            services.cluster_step(cluster=cluster)
        elif action == "speed":
            speed_form = SpeedForm(request.POST)
            if not speed_form.is_valid():
                reasons = " ".join(map(str, speed_form.errors["speed"]))
                return _controls(request, cluster, f"speed: {reasons}")
            services.cluster_set_speed(cluster=cluster, speed=speed_form.cleaned_data["speed"])
        elif action == "clock":
            clock_form = ClockModeForm(request.POST)
            if not clock_form.is_valid():
                return _controls(request, cluster, "clock: unknown clock mode")
            services.cluster_set_clock_mode(
                cluster=cluster, clock_mode=clock_form.cleaned_data["clock_mode"]
            )
        else:
            raise Http404("no such control")
    except ServiceError as error:
        return _controls(request, cluster, " ".join(error.errors))
    return _controls(request, cluster)


# ---------------------------------------------------------------------------------------------
# Creating objects: the form's fragment for htmx, its page without


def _object_form(
    request: HttpRequest,
    cluster: Cluster,
    *,
    form: forms.Form,
    partial: str,
    template: str,
    save: Callable[[], str],
) -> HttpResponse:
    """Validates, saves through ``save`` (which returns a message, or raises ServiceError
    after adding its errors to the form), and answers."""
    created = ""
    if request.method == "POST" and form.is_valid():
        try:
            created = save()
        except ServiceError:
            pass
        else:
            if not _is_htmx(request):
                messages.success(request, created)
                return redirect(_dashboard_url(cluster))
            form = type(form)()
    status = 400 if form.errors else 200
    context = {"cluster": cluster, partial: form, "created": created}
    if _is_htmx(request):
        return render(request, f"webui/dashboard/forms.html#{partial}", context, status=status)
    return render(request, template, context, status=status)


def _listed(items: list[str], shown: int = 5) -> str:
    more = f" and {len(items) - shown} more" if len(items) > shown else ""
    return ", ".join(items[:shown]) + more


def _create_alike(
    cluster: Cluster,
    form: PodForm | NodeForm,
    *,
    kind: str,
    names: list[str],
    taken: list[str],
    routes: list[tuple[str, str]],
) -> str:
    """Creates the form's objects (alike but for their names) in one apply; refused whole if
    any exists already. Raises ServiceError once the form has the errors."""
    if taken:
        exists = [f"{kind}s {go_quote(name)} already exists" for name in taken]
        for message in exists[:5]:
            form.add_error("name", message)
        raise ServiceError(exists)
    try:
        services.manifests_apply(cluster=cluster, text=form.manifests_text())
    except ServiceError as error:
        # The objects are alike: the first one's errors are every one's, wherever it stood.
        first = [e for e in error.errors if go_quote(names[0]) in e] or error.errors
        add_service_errors(form, input_messages(first, ""), routes, None)
        raise
    return f"Created {kind} {_listed(names)}."


@require_http_methods(["GET", "POST"])
@limit_page_writes
def pod_new(request: HttpRequest, cluster_id: int) -> HttpResponse:
    cluster = _cluster(request, cluster_id)
    form = PodForm(request.POST or None)

    def save() -> str:
        names = form.names()
        taken = presenters.pod_names_taken(
            cluster=cluster, namespace=form.cleaned_data["namespace"], names=names
        )
        return _create_alike(cluster, form, kind="pod", names=names, taken=taken, routes=POD_ROUTES)

    return _object_form(
        request,
        cluster,
        form=form,
        partial="pod_form",
        template="webui/dashboard/pod_new.html",
        save=save,
    )


@require_http_methods(["GET", "POST"])
@limit_page_writes
def node_new(request: HttpRequest, cluster_id: int) -> HttpResponse:
    cluster = _cluster(request, cluster_id)
    form = NodeForm(request.POST or None)

    def save() -> str:
        names = form.names()
        taken = presenters.node_names_taken(cluster=cluster, names=names)
        return _create_alike(
            cluster, form, kind="node", names=names, taken=taken, routes=NODE_ROUTES
        )

    return _object_form(
        request,
        cluster,
        form=form,
        partial="node_form",
        template="webui/dashboard/node_new.html",
        save=save,
    )


@require_http_methods(["GET", "POST"])
@limit_page_writes
def manifests_apply(request: HttpRequest, cluster_id: int) -> HttpResponse:
    cluster = _cluster(request, cluster_id)
    form = ManifestsForm(request.POST or None)

    def save() -> str:
        try:
            result = services.manifests_apply(cluster=cluster, text=form.cleaned_data["manifests"])
        except ServiceError as error:
            for message in input_messages(error.errors, form.cleaned_data["manifests"]):
                form.add_error("manifests", message)
            raise
        listed = _listed(result.lines, 8) if result.lines else "Nothing to apply."
        return f"{listed}; {result.skipped_notice}" if result.skipped_notice else listed

    return _object_form(
        request,
        cluster,
        form=form,
        partial="manifests_form",
        template="webui/dashboard/apply.html",
        save=save,
    )


# ---------------------------------------------------------------------------------------------
# One node


@require_http_methods(["GET", "POST"])
@limit_page_writes
def node_detail(request: HttpRequest, cluster_id: int, name: str) -> HttpResponse:
    cluster = _cluster(request, cluster_id)
    node = presenters.node_get(cluster=cluster, name=name)
    if node is None:
        raise Http404("no such node")
    initial = NodeEditForm.initial_for(node.labels, node.taints, node.unschedulable)
    form = NodeEditForm(request.POST or None, initial=initial)
    if request.method == "POST" and form.is_valid():
        try:
            services.node_update(
                cluster=cluster,
                name=name,
                labels=form.cleaned_data["labels"],
                taints=form.cleaned_data["taints"],
                unschedulable=form.cleaned_data["cordoned"],
            )
        except ServiceError as error:
            add_service_errors(form, error.errors, NODE_EDIT_ROUTES, None)
        else:
            messages.success(request, f"Node {name} updated.")
            return redirect(reverse("webui:node", kwargs={"cluster_id": cluster.pk, "name": name}))
    pods = selectors.pod_list(cluster=cluster, node_name=name).only(
        "namespace", "name", "priority", "phase"
    )
    context = {
        "cluster": cluster,
        "node": node,
        "manifest": yaml.safe_dump(node.manifest, sort_keys=False),
        "form": form,
        "pods": [
            {
                "key": p.key,
                "priority": p.priority,
                "phase": p.phase,
                "url": presenters.pod_path(cluster.pk, p.key),
                "colour": presenters.chip_colour(p.namespace, p.priority, "namespace"),
            }
            for p in pods
        ],
    }
    return render(request, "webui/dashboard/node.html", context, status=400 if form.errors else 200)


@require_POST
@limit_page_writes
def node_cordon(request: HttpRequest, cluster_id: int, name: str) -> HttpResponse:
    cluster = _cluster(request, cluster_id)
    cordon = request.POST.get("cordon") == "1"
    try:
        services.node_update(cluster=cluster, name=name, unschedulable=cordon)
    except ObjectNotFound:
        raise Http404("no such node") from None
    if _is_htmx(request):
        return _back(request, cluster)
    return redirect(reverse("webui:node", kwargs={"cluster_id": cluster.pk, "name": name}))


@require_POST
@limit_page_writes
def node_delete(request: HttpRequest, cluster_id: int, name: str) -> HttpResponse:
    cluster = _cluster(request, cluster_id)
    try:
        services.objects_delete(cluster=cluster, refs=[ObjectRef("Node", name)])
    except ObjectNotFound:
        raise Http404("no such node") from None
    messages.success(request, f"Node {name} deleted.")
    return redirect(_dashboard_url(cluster))


@require_POST
@limit_page_writes
def pod_delete(request: HttpRequest, cluster_id: int, namespace: str, name: str) -> HttpResponse:
    cluster = _cluster(request, cluster_id)
    try:
        services.pod_delete(cluster=cluster, namespace=namespace, name=name)
    except ObjectNotFound:
        raise Http404("no such pod") from None
    return _back(request, cluster)


def _back(request: HttpRequest, cluster: Cluster) -> HttpResponse:
    """After a small write from the dashboard: htmx re-renders the node cards and the pending
    list; a plain request goes back to the dashboard."""
    if _is_htmx(request):
        context = presenters.live_context(
            cluster=cluster, page=request.GET.get("page"), colour_by=request.GET.get("colour")
        )
        response = render(request, f"{DASHBOARD}#nodes", context)
        response.content += render(
            request, f"{DASHBOARD}#pending", {**context, "oob": True}
        ).content
        return response
    return HttpResponseRedirect(_dashboard_url(cluster))
