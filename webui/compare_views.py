"""Compare profiles: the form that starts a comparison run, and the run's page (progress bars
polled by htmx every second, then the side-by-side results).

Views parse input, call ``schedviz.compare.services`` or the selectors, and render; the tables
are built here from ``schedviz.compare.results`` so the templates only print cells.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from django import forms
from django.contrib.auth.models import User
from django.http import Http404, HttpRequest, HttpResponse
from django.shortcuts import redirect, render
from django.urls import reverse
from django.views.decorators.http import require_http_methods

from schedviz.cluster.services import ObjectNotFound, ServiceError
from schedviz.compare import results, selectors, services
from schedviz.compare.models import CompareRun, CompareVariant
from webui.limits import limit_page_writes
from webui.views import _cluster

NEW = "webui/compare/new.html"
RUN = "webui/compare/run.html"
# Rows shown per table on the page (the API gives every row).
ROWS_SHOWN = 500
CONFIGURATION_SLOTS = 2
CONFIGURATION_EXAMPLE = """apiVersion: kubescheduler.config.k8s.io/v1
kind: KubeSchedulerConfiguration
profiles:
- schedulerName: default-scheduler
  pluginConfig:
  - name: NodeResourcesFit
    args: {scoringStrategy: {type: MostAllocated}}"""


class CompareForm(forms.Form):
    source = forms.ChoiceField(
        choices=[c for c in CompareRun.Source.choices if c[0] != CompareRun.Source.SCENARIO],
        initial=CompareRun.Source.CLUSTER,
        widget=forms.RadioSelect,
    )
    manifests = forms.CharField(required=False, widget=forms.Textarea(attrs={"rows": 8}))
    profiles = forms.MultipleChoiceField(
        required=False, choices=(), widget=forms.CheckboxSelectMultiple
    )
    other_profiles = forms.CharField(
        required=False,
        max_length=2000,
        label="Other profiles, by schedulerName (comma-separated; for pasted manifests)",
    )
    seed = forms.IntegerField(required=False)

    def __init__(self, *args: Any, profiles: list[str], **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        profile_field = self.fields["profiles"]
        assert isinstance(profile_field, forms.MultipleChoiceField)
        profile_field.choices = [(name, name) for name in profiles]
        for slot in range(1, CONFIGURATION_SLOTS + 1):
            self.fields[f"name_{slot}"] = forms.CharField(required=False, max_length=100)
            self.fields[f"configuration_{slot}"] = forms.CharField(
                required=False,
                widget=forms.Textarea(
                    attrs={"rows": 8, "spellcheck": "false", "placeholder": CONFIGURATION_EXAMPLE}
                ),
            )

    def configuration_slots(self) -> list[tuple[forms.BoundField, forms.BoundField]]:
        return [
            (self[f"name_{slot}"], self[f"configuration_{slot}"])
            for slot in range(1, CONFIGURATION_SLOTS + 1)
        ]

    def variant_specs(self) -> list[services.VariantSpec]:
        data = self.cleaned_data
        names = list(data["profiles"])
        names += [n.strip() for n in data["other_profiles"].split(",") if n.strip()]
        specs = [services.VariantSpec(name=name, profile=name) for name in dict.fromkeys(names)]
        for slot in range(1, CONFIGURATION_SLOTS + 1):
            text = data.get(f"configuration_{slot}") or ""
            if text.strip():
                name = (data.get(f"name_{slot}") or "").strip() or f"configuration {slot}"
                specs.append(services.VariantSpec(name=name, configuration=text))
        return specs


def _user(request: HttpRequest) -> User | None:
    user = request.user
    return user if isinstance(user, User) and user.is_authenticated else None


@require_http_methods(["GET", "POST"])
@limit_page_writes
def compare_new(request: HttpRequest, cluster_id: int) -> HttpResponse:
    cluster = _cluster(request, cluster_id)
    profiles = selectors.profile_choices(cluster=cluster)
    form = CompareForm(request.POST or None, profiles=profiles, initial={"profiles": profiles[:2]})
    errors: list[str] = []
    if request.method == "POST" and form.is_valid():
        try:
            run = services.compare_run_create(
                cluster=cluster,
                variants=form.variant_specs(),
                source=form.cleaned_data["source"],
                manifests=form.cleaned_data["manifests"],
                seed=form.cleaned_data["seed"],
                created_by=_user(request),
            )
        except ServiceError as error:
            errors = list(error.errors)
        else:
            return redirect(reverse("webui:compare_run", kwargs={"run_id": run.id}))
    context = {
        "cluster": cluster,
        "form": form,
        "errors": errors,
        "runs": selectors.compare_run_list(cluster=cluster)[:20],
    }
    status = 400 if errors or form.errors else 200
    return render(request, NEW, context, status=status)


def _run(request: HttpRequest, run_id: int) -> CompareRun:
    try:
        return selectors.compare_run_get(run_id=run_id, user=request.user)
    except ObjectNotFound:
        raise Http404("no such comparison") from None


@dataclass(frozen=True)
class _Bar:
    variant: CompareVariant

    @property
    def percent(self) -> int:
        v = self.variant
        if v.status == CompareVariant.Status.SUCCEEDED:
            return 100
        return v.pods_done * 100 // v.pods_total if v.pods_total else 0


def _percent(value: float | None) -> str:
    return "" if value is None else f"{value * 100:.1f}%"


def _number(value: float | None) -> str:
    return "—" if value is None else f"{value:.1f}"


def _balance_cells(balance: results.Balance | None) -> tuple[str, str, str]:
    if balance is None:
        return ("", "", "")
    return (_percent(balance.mean), _percent(balance.stdev), _percent(balance.spread))


def _tables(comparison: results.Comparison) -> dict[str, Any]:
    resources = comparison.resources
    moved = comparison.differing
    return {
        "names": [v.name for v in comparison.variants],
        "resources": resources,
        "summary": [
            {"variant": v, "balance": [_balance_cells(v.balance[r]) for r in resources]}
            for v in comparison.variants
        ],
        "differing": moved[:ROWS_SHOWN],
        "differing_count": len(moved),
        "placements": comparison.placements[:ROWS_SHOWN],
        "placement_count": len(comparison.placements),
        "nodes": [
            (n.node, [[_percent(f) for f in per_variant] for per_variant in n.fractions])
            for n in comparison.nodes[:ROWS_SHOWN]
        ],
        "node_count": len(comparison.nodes),
        "plugins": [
            (
                s.plugin,
                [_number(m) for m in s.means],
                [_number(m) for m in s.differing_means],
                _number(s.drive),
                s.drive > 0,
            )
            for s in comparison.plugins
        ],
        "drivers": comparison.drivers,
        "pod_scores": comparison.pod_scores[:ROWS_SHOWN],
        "pod_score_count": len(comparison.pod_scores),
        "rows_shown": ROWS_SHOWN,
    }


def _run_context(run: CompareRun) -> dict[str, Any]:
    state = selectors.compare_run_state(run=run)
    context: dict[str, Any] = {
        "run": run,
        "cluster": run.cluster,
        "state": state,
        "bars": [_Bar(v) for v in state.variants],
    }
    if state.comparison is not None:
        context.update(_tables(state.comparison))
    return context


@require_http_methods(["GET", "HEAD"])
def compare_run(request: HttpRequest, run_id: int) -> HttpResponse:
    run = _run(request, run_id)
    if run.source == CompareRun.Source.SCENARIO:
        return redirect(reverse("webui:scenario_run", kwargs={"run_id": run.id}))
    return render(request, RUN, _run_context(run))


@require_http_methods(["GET", "HEAD"])
def compare_state(request: HttpRequest, run_id: int) -> HttpResponse:
    """The progress and, once finished, the results: the fragment the page polls."""
    return render(request, f"{RUN}#state", _run_context(_run(request, run_id)))
