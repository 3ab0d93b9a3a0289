"""The lessons in the browser, and "Predict, then reveal" on a cluster's dashboard.

``/lessons/`` lists the built-in lessons (schedviz/lessons/); a lesson's page shows its
explanation and things to try, and loads it into a new cluster (``lessons.lesson_load``). The
prediction view takes a learner's guess (``predictions.prediction_create``) and answers with the
panel the dashboard shows (webui/prediction_panel.py). Views parse input, call one service or
selector, and render.
"""

from __future__ import annotations

from django import forms
from django.contrib import messages
from django.http import Http404, HttpRequest, HttpResponse
from django.shortcuts import redirect, render
from django.views.decorators.http import require_http_methods, require_POST
from django_htmx.http import HttpResponseClientRedirect

from schedviz.cluster import lessons, predictions
from schedviz.cluster.services import ObjectNotFound, ServiceError
from schedviz.compare import scenarios
from webui import access
from webui.limits import limit_page_writes
from webui.prediction_panel import PREDICT_TEMPLATE, UNSCHEDULABLE_CHOICE, predict_context
from webui.views import _cluster, _dashboard_url, _is_htmx, _owner

LESSONS = "webui/lessons/list.html"
LESSON = "webui/lessons/detail.html"


class LessonLoadForm(forms.Form):
    paused = forms.BooleanField(
        required=False, label="Start paused, to step one cycle at a time and predict each pod"
    )


class PredictionForm(forms.Form):
    pod = forms.CharField(max_length=507)
    node = forms.CharField(max_length=253)

    def clean_pod(self) -> tuple[str, str]:
        namespace, slash, name = self.cleaned_data["pod"].partition("/")
        if not slash or not namespace or not name:
            raise forms.ValidationError("pick a pod as namespace/name")
        return namespace, name

    def clean_node(self) -> str:
        node: str = self.cleaned_data["node"]
        return "" if node == UNSCHEDULABLE_CHOICE else node


@require_http_methods(["GET", "HEAD"])
def lesson_index(request: HttpRequest) -> HttpResponse:
    return render(request, LESSONS, {"lessons": lessons.lesson_list()})


def _lesson(slug: str) -> lessons.Lesson:
    try:
        return lessons.lesson_get(slug)
    except ObjectNotFound:
        raise Http404("no such lesson") from None


@require_http_methods(["GET", "HEAD"])
def lesson_detail(request: HttpRequest, slug: str) -> HttpResponse:
    lesson = _lesson(slug)
    context = {
        "lesson": lesson.info,
        "manifests": lesson.manifests,
        "scenario": lesson.scenario,
        "form": LessonLoadForm(initial={"paused": True}),
    }
    return render(request, LESSON, context)


@require_POST
@limit_page_writes
def lesson_load(request: HttpRequest, slug: str) -> HttpResponse:
    """A new cluster holding the lesson (the signed-in user's), then its dashboard."""
    lesson = _lesson(slug)
    form = LessonLoadForm(request.POST)
    paused = form.is_valid() and form.cleaned_data["paused"]
    try:
        cluster = lessons.lesson_load(slug=slug, owner=_owner(request), paused=paused)
    except ServiceError as error:
        for message in error.errors:
            messages.error(request, message)
        return redirect("webui:lesson", slug=slug)
    access.remember_made(request.session, cluster)
    messages.success(request, f"Lesson “{lesson.info.title}” loaded into cluster {cluster.name}.")
    return redirect(_dashboard_url(cluster))


@require_POST
@limit_page_writes
def lesson_scenario(request: HttpRequest, slug: str) -> HttpResponse:
    """The lesson over time: its cluster loaded (paused) and its scenario run from an empty
    cluster under that cluster's configuration; the scenario's page."""
    lesson = _lesson(slug)
    if not lesson.scenario:
        raise Http404("the lesson has no scenario")
    try:
        cluster = lessons.lesson_load(slug=slug, owner=_owner(request), paused=True)
        run = scenarios.scenario_run_create(
            cluster=cluster, scenario=lesson.scenario, created_by=_owner(request)
        )
    except ServiceError as error:
        for message in error.errors:
            messages.error(request, message)
        return redirect("webui:lesson", slug=slug)
    access.remember_made(request.session, cluster)
    return redirect("webui:scenario_run", run_id=run.id)


@require_POST
@limit_page_writes
def lesson_restart(request: HttpRequest, cluster_id: int) -> HttpResponse:
    """The lesson's cluster loaded again, paused at its first step; its dashboard."""
    cluster = _cluster(request, cluster_id)
    try:
        lessons.lesson_restart(cluster=cluster)
    except ServiceError as error:
        for message in error.errors:
            messages.error(request, message)
    else:
        messages.success(request, "Lesson restarted: its cluster is as it was loaded, at step 1.")
    if _is_htmx(request):
        return HttpResponseClientRedirect(_dashboard_url(cluster))
    return redirect(_dashboard_url(cluster))


@require_http_methods(["GET", "POST"])
@limit_page_writes
def predict(request: HttpRequest, cluster_id: int) -> HttpResponse:
    """GET: the prediction panel (the fragment for htmx, else a page holding it). POST: the
    learner's guess; the panel again, with the errors naming the field when refused (a plain
    form post that succeeds goes back to the dashboard)."""
    cluster = _cluster(request, cluster_id)
    errors: list[str] = []
    chosen: dict[str, str] = {}
    if request.method == "POST":
        form = PredictionForm(request.POST)
        chosen = {"pod": request.POST.get("pod", ""), "node": request.POST.get("node", "")}
        if form.is_valid():
            namespace, name = form.cleaned_data["pod"]
            try:
                predictions.prediction_create(
                    cluster=cluster, namespace=namespace, name=name, node=form.cleaned_data["node"]
                )
            except ServiceError as error:
                errors = list(error.errors)
            else:
                chosen = {}
        else:
            errors = [f"{field}: {' '.join(map(str, e))}" for field, e in form.errors.items()]
        if not _is_htmx(request) and not errors:
            messages.success(request, "Guess kept: step one cycle to see it revealed.")
            return redirect(_dashboard_url(cluster) + "#predict")
    cluster.refresh_from_db()
    context = predict_context(cluster=cluster, errors=errors, chosen=chosen)
    status = 400 if errors else 200
    if _is_htmx(request):
        return render(request, f"{PREDICT_TEMPLATE}#predict", context, status=status)
    return render(request, "webui/lessons/predict_page.html", context, status=status)
