"""Scenarios over time (docs/scenarios.md): the form that writes or uploads one and runs it,
and the run's page: progress polled by htmx, then the per-step charts (inline SVG drawn here,
``webui/scenario_charts.py``), a slider over the steps that swaps in the node cards as they were
at that step and that step's events (each binding linked to its cycle's page in the run's stored
cluster), and with several configurations where they part.

Views parse input, call ``schedviz.compare.scenarios`` or the selectors, and render.
"""

from __future__ import annotations

from typing import Any

from django import forms
from django.conf import settings
from django.contrib.auth.models import User
from django.http import Http404, HttpRequest, HttpResponse
from django.shortcuts import redirect, render
from django.urls import reverse
from django.views.decorators.http import require_http_methods

from schedviz.cluster import lessons
from schedviz.cluster.services import ObjectNotFound, ServiceError
from schedviz.compare import scenarios, selectors
from schedviz.compare.models import CompareRun, CompareVariant
from schedviz.compare.services import VariantSpec
from schedviz.scenario.table import describe_event
from webui.limits import limit_page_writes
from webui.scenario_charts import charts
from webui.views import _cluster

NEW = "webui/scenario/new.html"
RUN = "webui/scenario/run.html"
CONFIGURATION_SLOTS = 2
# Events listed for one step on the page (the API gives them all).
EVENTS_SHOWN = 500

# The example the form offers: a lesson's scenario.
EXAMPLE_LESSON = "priority-and-preemption"


class ScenarioForm(forms.Form):
    scenario = forms.CharField(
        required=False, widget=forms.Textarea(attrs={"rows": 18, "spellcheck": "false"})
    )
    upload = forms.FileField(required=False, label="or upload a file")
    seed = forms.IntegerField(required=False)

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        for slot in range(1, CONFIGURATION_SLOTS + 1):
            self.fields[f"name_{slot}"] = forms.CharField(required=False, max_length=100)
            self.fields[f"configuration_{slot}"] = forms.CharField(
                required=False, widget=forms.Textarea(attrs={"rows": 6, "spellcheck": "false"})
            )

    def configuration_slots(self) -> list[tuple[forms.BoundField, forms.BoundField]]:
        return [
            (self[f"name_{slot}"], self[f"configuration_{slot}"])
            for slot in range(1, CONFIGURATION_SLOTS + 1)
        ]

    def clean(self) -> dict[str, Any]:
        data = super().clean() or {}
        upload = data.get("upload")
        if upload is not None:
            if upload.size > settings.SCHEDVIZ_MAX_UPLOAD_BYTES:
                limit = settings.SCHEDVIZ_MAX_UPLOAD_BYTES
                raise forms.ValidationError(
                    f"The file is {upload.size} bytes: at most {limit} bytes "
                    "(SCHEDVIZ_MAX_UPLOAD_BYTES)."
                )
            try:
                data["scenario"] = upload.read().decode("utf-8")
            except UnicodeDecodeError:
                raise forms.ValidationError("The file is not UTF-8 text.") from None
        return data

    def variant_specs(self) -> list[VariantSpec]:
        specs = []
        for slot in range(1, CONFIGURATION_SLOTS + 1):
            text = self.cleaned_data.get(f"configuration_{slot}") or ""
            if text.strip():
                name = (self.cleaned_data.get(f"name_{slot}") or "").strip()
                specs.append(VariantSpec(name=name or f"configuration {slot}", configuration=text))
        return specs


def _user(request: HttpRequest) -> User | None:
    user = request.user
    return user if isinstance(user, User) and user.is_authenticated else None


@require_http_methods(["GET", "POST"])
@limit_page_writes
def scenario_new(request: HttpRequest, cluster_id: int) -> HttpResponse:
    cluster = _cluster(request, cluster_id)
    if request.method == "POST":
        form = ScenarioForm(request.POST, request.FILES)
    else:
        example = lessons.lesson_get(EXAMPLE_LESSON).scenario if request.GET.get("example") else ""
        form = ScenarioForm(initial={"scenario": example})
    errors: list[str] = []
    if request.method == "POST" and form.is_valid():
        try:
            run = scenarios.scenario_run_create(
                cluster=cluster,
                scenario=form.cleaned_data["scenario"],
                variants=form.variant_specs(),
                seed=form.cleaned_data["seed"],
                created_by=_user(request),
            )
        except ServiceError as error:
            errors = list(error.errors)
        else:
            return redirect(reverse("webui:scenario_run", kwargs={"run_id": run.id}))
    runs = [
        r
        for r in selectors.compare_run_list(cluster=cluster)
        if r.source == CompareRun.Source.SCENARIO
    ]
    context = {
        "cluster": cluster,
        "form": form,
        "errors": errors,
        "example_lesson": EXAMPLE_LESSON,
        "runs": runs[:20],
    }
    status = 400 if errors or form.errors else 200
    return render(request, NEW, context, status=status)


def _run(request: HttpRequest, run_id: int) -> CompareRun:
    try:
        run = selectors.compare_run_get(run_id=run_id, user=request.user)
    except ObjectNotFound:
        raise Http404("no such scenario run") from None
    if run.source != CompareRun.Source.SCENARIO:
        raise Http404("no such scenario run")
    return run


def _int(request: HttpRequest, name: str, default: int) -> int:
    try:
        return int(request.GET.get(name, default))
    except ValueError:
        return default


def _percent(variant: CompareVariant) -> int:
    if variant.status == CompareVariant.Status.SUCCEEDED:
        return 100
    return variant.pods_done * 100 // variant.pods_total if variant.pods_total else 0


def _step_context(document: dict[str, Any], index: int) -> dict[str, Any]:
    """The step the slider is on: its figures, node cards and events."""
    steps = document["schedviz"]["steps"]
    index = min(max(index, 0), len(steps) - 1)
    figures = steps[index]
    events = document["status"]["scenarioResult"]["timeline"].get(str(figures["step"]), [])
    cards = document["schedviz"].get("cards") or []
    return {
        "step_index": index,
        "step": figures,
        "cards": cards[index] if index < len(cards) else [],
        "events": [
            {
                "step": f"{e['step']['major']}.{e['step']['minor']}",
                "time": e["time"],
                "id": e["id"],
                "text": describe_event(e),
                "cycle": (e.get("podScheduled") or {}).get("cycle"),
                "preemption": bool((e.get("delete") or {}).get("preemption")),
            }
            for e in events[:EVENTS_SHOWN]
        ],
        "event_count": len(events),
        "events_shown": EVENTS_SHOWN,
    }


def _run_context(request: HttpRequest, run: CompareRun) -> dict[str, Any]:
    state = selectors.compare_run_state(run=run)
    context: dict[str, Any] = {
        "run": run,
        "cluster": run.cluster,
        "state": state,
        "bars": [(v, _percent(v)) for v in state.variants],
        "comparison": state.scenario_comparison,
        "name": (run.scenario.get("metadata") or {}).get("name") or f"scenario {run.id}",
    }
    done = [v for v in state.variants if v.status == CompareVariant.Status.SUCCEEDED and v.result]
    if not state.finished or not done:
        return context
    position = min(max(_int(request, "variant", done[0].position), 0), len(state.variants) - 1)
    variant = next((v for v in done if v.position == position), done[0])
    document = variant.result or {}
    steps = document["schedviz"]["steps"]
    context.update(
        {
            "variant": variant,
            "variants_done": done,
            "document": document,
            "phase": document["status"]["phase"],
            "message": document["status"].get("message", ""),
            "stored_cluster": document["schedviz"].get("cluster"),
            "charts": charts(steps),
            "step_count": len(steps),
            "last_step": len(steps) - 1,
            "step_links": list(range(len(steps))),
        }
    )
    if steps:
        context.update(_step_context(document, _int(request, "step", len(steps) - 1)))
    return context


@require_http_methods(["GET", "HEAD"])
def scenario_run(request: HttpRequest, run_id: int) -> HttpResponse:
    return render(request, RUN, _run_context(request, _run(request, run_id)))


@require_http_methods(["GET", "HEAD"])
def scenario_state(request: HttpRequest, run_id: int) -> HttpResponse:
    """The progress and, once finished, the results: the fragment the page polls."""
    return render(request, f"{RUN}#state", _run_context(request, _run(request, run_id)))


@require_http_methods(["GET", "HEAD"])
def scenario_step(request: HttpRequest, run_id: int) -> HttpResponse:
    """One step's node cards and events: what the slider swaps in."""
    context = _run_context(request, _run(request, run_id))
    if "step" not in context:
        raise Http404("the run has no finished variant")
    return render(request, f"{RUN}#step", context)
