"""Scenario runs: one scenario (docs/scenarios.md) under one or more scheduler configurations,
each variant run from an empty cluster where comparison runs are executed (a thread embedded, a
Celery task per variant distributed: ``worker.compare``).

A scenario run is a ``CompareRun`` whose source is ``scenario``: the document is kept on the run,
each variant keeps its configuration. A variant's result is the Scenario with its status and
figures (``ScenarioRun.document`` with the node cards of every step), plus ``cluster``: the run
stored as a paused virtual cluster (its final objects and every cycle's trace, as a trace import
makes one), so each binding of the timeline links to its cycle's page. Workloads are left out of
the stored cluster: applied again, they would create their pods a second time.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping, Sequence
from typing import Any

from django.conf import settings
from django.contrib.auth.models import User
from django.core.exceptions import ImproperlyConfigured
from django.db import transaction

from schedviz.cluster.exports import TRACE_KIND, free_cluster_name, trace_import
from schedviz.cluster.models import Cluster
from schedviz.cluster.services import KIND_ORDER, ServiceError, scheduler_config_document
from schedviz.compare import engine, ports
from schedviz.compare.models import CompareRun, CompareVariant
from schedviz.compare.services import (
    MAX_VARIANTS,
    VariantSpec,
    _check_configuration,
    _configuration_document,
    _start_on_commit,
)
from schedviz.controllers.persistentvolume import start_persistent_volume_controller
from schedviz.kube.errors import go_quote
from schedviz.kube.objects import WORKLOAD_KINDS
from schedviz.outoftree.registry import new_registry
from schedviz.scenario.compare import Variant, compare_runs
from schedviz.scenario.manifests import current_manifest, kind_of
from schedviz.scenario.runner import ScenarioRun, run_scenario
from schedviz.scenario.spec import CREATE, Scenario, ScenarioError, load_scenario, parse_scenario
from schedviz.scheduler.trace import SCHEMA_VERSION

DEFAULT_VARIANT = "cluster configuration"
_WORKLOADS = {kind.__name__ for kind in WORKLOAD_KINDS}


def _scenario(value: str | Mapping[str, Any]) -> Scenario:
    try:
        if isinstance(value, Mapping):
            return parse_scenario(dict(value))
        if not value.strip():
            raise ServiceError(["scenario: Required value: the Scenario, YAML or JSON"])
        return load_scenario(value, "scenario")
    except ScenarioError as error:
        raise ServiceError([f"scenario: {e}" for e in error.errors]) from None


def _check_size(scenario: Scenario) -> None:
    """The live system's limits on one cluster hold for what a scenario creates."""
    creates = [op.object for op in scenario.operations if op.type == CREATE]
    errors = []
    for kind, plural, setting in (
        ("Node", "nodes", "SCHEDVIZ_MAX_NODES_PER_CLUSTER"),
        ("Pod", "pods", "SCHEDVIZ_MAX_PODS_PER_CLUSTER"),
    ):
        count = sum(1 for obj in creates if obj is not None and kind_of(obj) == kind)
        limit = getattr(settings, setting)
        if count > limit:
            errors.append(
                f"scenario: Too many: creates {count} {plural}; the limit is {limit} ({setting})"
            )
    if errors:
        raise ServiceError(errors)


def _variants(specs: Sequence[VariantSpec], cluster: Cluster) -> list[tuple[str, dict[str, Any]]]:
    if not specs:
        document = scheduler_config_document(cluster=cluster)
        _check_configuration(document, "cluster configuration")
        return [(DEFAULT_VARIANT, document)]
    if len(specs) > MAX_VARIANTS:
        raise ServiceError(
            [f"variants: Invalid value: {len(specs)}: at most {MAX_VARIANTS} configurations"]
        )
    variants: list[tuple[str, dict[str, Any]]] = []
    errors: list[str] = []
    for index, spec in enumerate(specs):
        where = f"variants[{index}]"
        name = spec.name.strip()
        if not name:
            errors.append(f"{where}.name: Required value")
            continue
        if spec.profile:
            errors.append(f"{where}.profile: Forbidden: a scenario's variants are configurations")
            continue
        try:
            document = _configuration_document(spec.configuration, f"{where}.configuration")
            _check_configuration(document, f"{where}.configuration")
        except ServiceError as error:
            errors += error.errors
            continue
        if any(existing == name for existing, _ in variants):
            errors.append(f"{where}.name: Duplicate value: {go_quote(name)}")
        variants.append((name, document))
    if errors:
        raise ServiceError(errors)
    return variants


def scenario_run_create(
    *,
    cluster: Cluster,
    scenario: str | Mapping[str, Any],
    variants: Sequence[VariantSpec] = (),
    seed: int | None = None,
    created_by: User | None = None,
) -> CompareRun:
    """A new scenario run, its variants started once committed: the cluster's own
    configuration when no variant is given, else each variant's configuration. Raises
    ServiceError naming the field of every problem; nothing is saved then."""
    if not ports.run_starter_registered():
        raise ImproperlyConfigured(
            "no run starter is registered (schedviz.compare.ports): scenario runs need the"
            " worker app in INSTALLED_APPS"
        )
    checked = _scenario(scenario)
    _check_size(checked)
    configurations = _variants(variants, cluster)
    with transaction.atomic():
        run = CompareRun.objects.create(
            cluster=cluster,
            created_by=created_by,
            source=CompareRun.Source.SCENARIO,
            seed=cluster.seed if seed is None else seed,
            scenario=checked.document,
        )
        CompareVariant.objects.bulk_create(
            CompareVariant(run=run, position=position, name=name, configuration=document)
            for position, (name, document) in enumerate(configurations)
        )
        _start_on_commit(run.id)
    return run


# ---------------------------------------------------------------------------------------------
# Execution


def _stored_text(name: str, run: ScenarioRun, configuration: Mapping[str, Any]) -> str:
    """The run as a JSON-lines trace file (docs/trace-format.md): its final objects but the
    workloads, its configuration, every cycle."""
    store = run.simulation.store
    objects = [
        current_manifest(obj)
        for kind in KIND_ORDER
        if kind not in _WORKLOADS
        for obj in sorted(store.list_objects(kind), key=lambda o: o.key)
    ]
    header = {
        "schemaVersion": SCHEMA_VERSION,
        "kind": TRACE_KIND,
        "cluster": name,
        "objects": objects,
        "schedulerConfiguration": dict(configuration),
    }
    lines = [json.dumps(header, separators=(",", ":"))]
    lines += [json.dumps(trace.to_json(), separators=(",", ":")) for trace in run.simulation.log]
    return "\n".join(lines) + "\n"


def run_scenario_variant(
    variant: CompareVariant, progress: Callable[[int, int], None] | None = None
) -> dict[str, Any]:
    """Runs the variant's configuration on its run's scenario; the result document, with the
    stored cluster's id."""
    scenario = parse_scenario(variant.run.scenario)
    registry = new_registry()
    run = run_scenario(
        scenario,
        seed=variant.run.seed,
        config=engine.decode(variant.configuration),
        registry=registry,
        controllers=[start_persistent_volume_controller],
        keep_cards=True,
        extender_allowed_hosts=settings.SCHEDVIZ_EXTENDER_ALLOWED_HOSTS,
        progress=progress,
    )
    owner = variant.run.created_by
    name = free_cluster_name(
        owner=owner, base=f"scenario {variant.run_id} {scenario.name or ''} {variant.name}"
    )
    cluster = trace_import(
        name=name, owner=owner, text=_stored_text(name, run, variant.configuration)
    )
    document = run.document()
    document["schedviz"]["cluster"] = cluster.id
    return document


def scenario_comparison(variants: Sequence[CompareVariant]) -> dict[str, Any] | None:
    """Where the succeeded variants part (``schedviz.scenario.compare``); None with fewer
    than two."""
    done = [v for v in variants if v.status == CompareVariant.Status.SUCCEEDED and v.result]
    if len(done) < 2:
        return None
    return compare_runs([Variant(v.name, v.result or {}) for v in done])
