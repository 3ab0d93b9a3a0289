"""The JSON API of comparison runs (the conventions of ``schedviz.cluster.api``).

``POST /api/clusters/<id>/compare`` {"variants": [{"name", "profile"} | {"name",
"configuration"}, ...], "source"?: "cluster" | "manifests", "manifests"?: YAML text, "seed"?}
starts a run (201, its state); ``GET /api/compare/<run>`` gives its state: status, each
variant's progress and error, and the comparison once it has finished.

``POST /api/clusters/<id>/scenarios`` {"scenario": YAML or JSON text, or the object,
"variants"?: [{"name", "configuration"}, ...], "seed"?} starts a scenario run (docs/scenarios.md;
the cluster's configuration when no variant is given); ``GET /api/scenarios/<run>`` (the same as
``/api/compare/<run>``) gives its state with ``results``: each finished variant's Scenario with
its status, and ``scenarioComparison`` with two or more.
"""

from __future__ import annotations

from typing import Any

from django.contrib.auth.models import User
from django.http import HttpRequest, HttpResponse, JsonResponse
from django.urls import reverse

from schedviz.cluster.api import _BadRequest, _cluster, _json_body, api_view
from schedviz.cluster.ratelimit import limit_writes
from schedviz.compare import scenarios, selectors, services
from schedviz.compare.models import CompareRun


def _variant_spec(index: int, raw: Any) -> services.VariantSpec:
    where = f"variants[{index}]"
    if not isinstance(raw, dict):
        raise _BadRequest(f"{where}: Invalid value: must be an object")
    name, profile = raw.get("name", ""), raw.get("profile", "")
    configuration = raw.get("configuration", "")
    if not isinstance(name, str):
        raise _BadRequest(f"{where}.name: Invalid value: must be a string")
    if not isinstance(profile, str):
        raise _BadRequest(f"{where}.profile: Invalid value: must be a string")
    if not isinstance(configuration, str | dict):
        raise _BadRequest(f"{where}.configuration: Invalid value: must be YAML text or an object")
    return services.VariantSpec(name=name, profile=profile, configuration=configuration)


def _state(request: HttpRequest, run: CompareRun, status: int = 200) -> JsonResponse:
    body = selectors.compare_run_state(run=run).to_json()
    page = "webui:scenario_run" if run.source == CompareRun.Source.SCENARIO else "webui:compare_run"
    body["url"] = request.build_absolute_uri(reverse(page, kwargs={"run_id": run.id}))
    return JsonResponse(body, status=status)


def _seed(body: dict[str, Any]) -> int | None:
    seed = body.get("seed")
    if seed is not None and (not isinstance(seed, int) or isinstance(seed, bool)):
        raise _BadRequest("seed: Invalid value: must be an integer")
    return seed


@api_view("POST")
@limit_writes
def compare_create(request: HttpRequest, user: User, cluster_id: int) -> HttpResponse:
    cluster = _cluster(user, cluster_id)
    body = _json_body(request)
    variants = body.get("variants")
    if not isinstance(variants, list):
        raise _BadRequest("variants: Required value: a list of variants")
    source = body.get("source", CompareRun.Source.CLUSTER)
    manifests, seed = body.get("manifests", ""), _seed(body)
    if not isinstance(source, str):
        raise _BadRequest("source: Invalid value: must be a string")
    if not isinstance(manifests, str):
        raise _BadRequest("manifests: Invalid value: must be YAML text")
    run = services.compare_run_create(
        cluster=cluster,
        variants=[_variant_spec(i, raw) for i, raw in enumerate(variants)],
        source=source,
        manifests=manifests,
        seed=seed,
        created_by=user,
    )
    return _state(request, run, status=201)


@api_view("GET")
def compare_detail(request: HttpRequest, user: User, run_id: int) -> HttpResponse:
    return _state(request, selectors.compare_run_get(run_id=run_id, user=user))


@api_view("POST")
@limit_writes
def scenario_create(request: HttpRequest, user: User, cluster_id: int) -> HttpResponse:
    cluster = _cluster(user, cluster_id)
    body = _json_body(request)
    scenario = body.get("scenario")
    if not isinstance(scenario, str | dict):
        raise _BadRequest(
            "scenario: Required value: the Scenario, as YAML or JSON text or an object"
        )
    variants = body.get("variants", [])
    if not isinstance(variants, list):
        raise _BadRequest("variants: Invalid value: must be a list of variants")
    run = scenarios.scenario_run_create(
        cluster=cluster,
        scenario=scenario,
        variants=[_variant_spec(i, raw) for i, raw in enumerate(variants)],
        seed=_seed(body),
        created_by=user,
    )
    return _state(request, run, status=201)
