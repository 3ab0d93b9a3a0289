"""Writes of comparison runs: creating one (validated whole, one transaction), and the
executions' progress, result and failure.

A run's workload is frozen when it is created: the cluster's objects, with every pod the
scheduler placed made pending again (``spec.nodeName``, its PodScheduled condition and any
nomination removed; pods created already bound stay where they are), or the pasted manifests.
Each variant's tasks are sent once the transaction commits (``worker.compare``).

An execution claims its variant with a fresh ``attempt`` token; progress, result and failure
are written only while the token is still the variant's, and progress is an absolute count, so
a retried or duplicated task never counts anything twice and a finished variant is not run
again.
"""

from __future__ import annotations

import copy
import uuid
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from django.conf import settings
from django.contrib.auth.models import User
from django.core.exceptions import ImproperlyConfigured
from django.db import transaction
from django.db.models import F, QuerySet
from django.utils import timezone

from schedviz.cluster.models import KIND_MODELS, Cluster, NamespacedResource
from schedviz.cluster.services import KIND_ORDER, ServiceError, scheduler_config_document
from schedviz.compare import engine, ports
from schedviz.compare.models import CompareRun, CompareVariant
from schedviz.kube.errors import LocatedError, ManifestError, go_quote
from schedviz.kube.load import Manifests, load_manifests
from schedviz.kube.objects import Node, Pod
from schedviz.outoftree.registry import new_registry
from schedviz.scheduler.apis.config.v1 import ConfigError
from schedviz.scheduler.framework.runtime.framework import FrameworkError
from schedviz.simulation.simulator import new_simulation

MIN_VARIANTS = 2
MAX_VARIANTS = 8
VARIANT_NAME_MAX_LENGTH = 100
ERROR_MAX_LENGTH = 4000


@dataclass(frozen=True)
class VariantSpec:
    """One variant as asked for: a profile of the workload's configuration, or a whole
    KubeSchedulerConfiguration (YAML or JSON text, or the decoded document)."""

    name: str
    profile: str = ""
    configuration: str | Mapping[str, Any] = ""


# ---------------------------------------------------------------------------------------------
# The workload


_SCHEDULER_STATUS = ("PodScheduled",)


def _rescheduled(manifest: dict[str, Any]) -> dict[str, Any]:
    """A pod the scheduler placed, pending again; any other pod as it is."""
    status = manifest.get("status") or {}
    conditions = status.get("conditions") or []
    placed = any(c.get("type") == "PodScheduled" and c.get("status") == "True" for c in conditions)
    if not placed and not status.get("nominatedNodeName"):
        return manifest
    pod = copy.deepcopy(manifest)
    if placed:
        pod.get("spec", {}).pop("nodeName", None)
    status = pod.get("status") or {}
    status.pop("nominatedNodeName", None)
    kept = [c for c in status.get("conditions") or [] if c.get("type") not in _SCHEDULER_STATUS]
    if kept:
        status["conditions"] = kept
    else:
        status.pop("conditions", None)
    if not status:
        pod.pop("status", None)
    return pod


def cluster_workload(*, cluster: Cluster) -> list[dict[str, Any]]:
    """The cluster's objects as manifests, in apply order, pods placed by the scheduler pending."""
    manifests: list[dict[str, Any]] = []
    for kind in KIND_ORDER:
        model = KIND_MODELS[kind]
        order = ["namespace", "name"] if issubclass(model, NamespacedResource) else ["name"]
        rows = model._default_manager.filter(cluster=cluster).order_by(*order)
        for manifest in rows.values_list("manifest", flat=True):
            manifests.append(_rescheduled(manifest) if kind == "Pod" else manifest)
    return manifests


def _load(text: str, source: str) -> Manifests:
    try:
        return load_manifests(text, source)
    except ManifestError as error:
        raise ServiceError([str(e) for e in error.errors]) from None


def _pasted_workload(text: str) -> tuple[list[dict[str, Any]], dict[str, Any]]:
    if not text.strip():
        raise ServiceError(["manifests: Required value: the workload's manifests"])
    loaded = _load(text, "manifests")
    if len(loaded.scheduler_configs) > 1:
        raise ServiceError(
            [
                "manifests: Invalid value: at most one KubeSchedulerConfiguration may be given, "
                f"got {len(loaded.scheduler_configs)}"
            ]
        )
    errors = []
    for kind, plural, setting in (
        (Node, "nodes", "SCHEDVIZ_MAX_NODES_PER_CLUSTER"),
        (Pod, "pods", "SCHEDVIZ_MAX_PODS_PER_CLUSTER"),
    ):
        count = sum(1 for obj in loaded.objects if isinstance(obj, kind))
        limit = getattr(settings, setting)
        if count > limit:
            errors.append(
                f"manifests: Too many: {count} {plural}; the limit is {limit} ({setting})"
            )
    if errors:
        raise ServiceError(errors)
    base = (
        loaded.scheduler_configs[0]
        if loaded.scheduler_configs
        else engine.default_configuration_document()
    )
    _check_configuration(base, "manifests")
    return [obj.manifest for obj in loaded.objects], base


# ---------------------------------------------------------------------------------------------
# Variants


def _check_configuration(document: Mapping[str, Any], where: str) -> None:
    try:
        config = engine.decode(document)
        new_simulation(Manifests(), registry=new_registry(), config=config)
    except ConfigError as error:
        raise ServiceError([f"{where}: {message}" for message in error.errors]) from None
    except FrameworkError as error:
        raise ServiceError([f"{where}: {error}"]) from None


def _configuration_document(value: str | Mapping[str, Any], where: str) -> dict[str, Any]:
    if isinstance(value, Mapping):
        return copy.deepcopy(dict(value))
    loaded = _load(value, where)
    if loaded.objects or len(loaded.scheduler_configs) != 1:
        raise ServiceError(
            [
                f"{where}: Invalid value: expected exactly one "
                "kubescheduler.config.k8s.io/v1 KubeSchedulerConfiguration and nothing else"
            ]
        )
    return loaded.scheduler_configs[0]


@dataclass(frozen=True)
class _Variant:
    name: str
    profile: str
    configuration: dict[str, Any]


def _variant(
    index: int, spec: VariantSpec, base: dict[str, Any], profiles: list[str], objects: list[Any]
) -> _Variant:
    where = f"variants[{index}]"
    name = spec.name.strip()
    if not name:
        raise ServiceError([f"{where}.name: Required value"])
    if len(name) > VARIANT_NAME_MAX_LENGTH:
        raise ServiceError(
            [f"{where}.name: Too long: may not be more than {VARIANT_NAME_MAX_LENGTH} bytes"]
        )
    has_configuration = bool(spec.configuration) and (
        not isinstance(spec.configuration, str) or bool(spec.configuration.strip())
    )
    if bool(spec.profile) == has_configuration:
        raise ServiceError(
            [f"{where}: Invalid value: give exactly one of profile and configuration"]
        )
    if spec.profile:
        if spec.profile not in profiles:
            choices = ", ".join(go_quote(p) for p in profiles)
            raise ServiceError(
                [
                    f"{where}.profile: Not found: {go_quote(spec.profile)}: "
                    f"the workload's profiles are {choices}"
                ]
            )
        return _Variant(name, spec.profile, engine.profile_configuration(base, spec.profile))
    document = _configuration_document(spec.configuration, f"{where}.configuration")
    _check_configuration(document, f"{where}.configuration")
    served = engine.profile_names(document)
    pending = sum(1 for obj in objects if isinstance(obj, Pod) and engine.pending_pod(obj))
    unserved = engine.unserved_pods(objects, served)
    if pending and sum(unserved.values()) == pending:
        names = ", ".join(f"{go_quote(n)} ({count} pods)" for n, count in sorted(unserved.items()))
        raise ServiceError(
            [
                f"{where}.configuration.profiles: Invalid value: no profile serves any pending "
                f"pod: they name {names}"
            ]
        )
    return _Variant(name, "", document)


def _variants(
    specs: Sequence[VariantSpec], base: dict[str, Any], manifests: list[dict[str, Any]]
) -> list[_Variant]:
    if not MIN_VARIANTS <= len(specs) <= MAX_VARIANTS:
        raise ServiceError(
            [
                f"variants: Invalid value: {len(specs)}: between {MIN_VARIANTS} and "
                f"{MAX_VARIANTS} variants are compared"
            ]
        )
    profiles = engine.profile_names(base)
    objects = engine.workload_objects(manifests)
    variants: list[_Variant] = []
    errors: list[str] = []
    for index, spec in enumerate(specs):
        try:
            variant = _variant(index, spec, base, profiles, objects)
        except ServiceError as error:
            errors += error.errors
            continue
        if any(v.name == variant.name for v in variants):
            errors.append(f"variants[{index}].name: Duplicate value: {go_quote(variant.name)}")
        variants.append(variant)
    if errors:
        raise ServiceError(errors)
    return variants


# ---------------------------------------------------------------------------------------------
# Creating a run


def _start_on_commit(run_id: int) -> None:
    transaction.on_commit(lambda: ports.start_run(run_id))


def compare_run_create(
    *,
    cluster: Cluster,
    variants: Sequence[VariantSpec],
    source: str = CompareRun.Source.CLUSTER,
    manifests: str = "",
    seed: int | None = None,
    created_by: User | None = None,
) -> CompareRun:
    """A new run of the variants over the workload, its tasks sent once committed.

    Raises ServiceError naming the field of every problem; nothing is saved then. Raises
    ImproperlyConfigured when nothing here can execute a run (no worker app registered a run
    starter, schedviz/compare/ports.py).
    """
    if not ports.run_starter_registered():
        raise ImproperlyConfigured(
            "no run starter is registered (schedviz.compare.ports): comparison runs need the"
            " worker app in INSTALLED_APPS"
        )
    if source == CompareRun.Source.CLUSTER:
        workload = cluster_workload(cluster=cluster)
        base = scheduler_config_document(cluster=cluster)
    elif source == CompareRun.Source.MANIFESTS:
        workload, base = _pasted_workload(manifests)
    else:  # a scenario run is made by schedviz.compare.scenarios.scenario_run_create
        sources = (CompareRun.Source.CLUSTER, CompareRun.Source.MANIFESTS)
        supported = ", ".join(go_quote(s) for s in sources)
        raise ServiceError(
            [f"source: Unsupported value: {go_quote(source)}: supported values: {supported}"]
        )
    try:
        checked = _variants(variants, base, workload)
    except LocatedError as error:  # a stored object that no longer decodes
        raise ServiceError([f"{source}: {error}"]) from None
    with transaction.atomic():
        run = CompareRun.objects.create(
            cluster=cluster,
            created_by=created_by,
            source=source,
            seed=cluster.seed if seed is None else seed,
            manifests=workload,
        )
        CompareVariant.objects.bulk_create(
            CompareVariant(
                run=run,
                position=position,
                name=variant.name,
                profile=variant.profile,
                configuration=variant.configuration,
            )
            for position, variant in enumerate(checked)
        )
        _start_on_commit(run.id)
    return run


# ---------------------------------------------------------------------------------------------
# Executions


def variant_claim(*, variant_id: int, worker: str = "") -> str | None:
    """Makes the calling execution the variant's owner (a fresh token, progress from 0); None
    when the variant is finished (or gone) and must not run again."""
    token = uuid.uuid4().hex
    claimed = (
        CompareVariant.objects.filter(id=variant_id)
        .exclude(status__in=[CompareVariant.Status.SUCCEEDED, CompareVariant.Status.FAILED])
        .update(
            status=CompareVariant.Status.RUNNING,
            attempt=token,
            worker=worker,
            pods_done=0,
            error="",
            started_at=timezone.now(),
        )
    )
    return token if claimed else None


def _owned(variant_id: int, attempt: str) -> QuerySet[CompareVariant]:
    return CompareVariant.objects.filter(
        id=variant_id, attempt=attempt, status=CompareVariant.Status.RUNNING
    )


def variant_progress(*, variant_id: int, attempt: str, done: int, total: int) -> bool:
    """Records pods done / total; False when the execution no longer owns the variant."""
    return bool(_owned(variant_id, attempt).update(pods_done=done, pods_total=total))


def variant_finish(*, variant_id: int, attempt: str, result: dict[str, Any]) -> bool:
    return bool(
        _owned(variant_id, attempt).update(
            status=CompareVariant.Status.SUCCEEDED,
            result=result,
            pods_done=F("pods_total"),
            finished_at=timezone.now(),
        )
    )


def variant_fail(*, variant_id: int, attempt: str, error: str) -> bool:
    return bool(
        _owned(variant_id, attempt).update(
            status=CompareVariant.Status.FAILED,
            error=error[:ERROR_MAX_LENGTH],
            finished_at=timezone.now(),
        )
    )
