"""Applying manifests (``kubectl apply``): objects and the scheduler configuration, admitted,
validated and written whole or not at all, each with its Change row.
"""

from __future__ import annotations

import copy
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from django.conf import settings
from django.db import transaction

from schedviz.cluster import validation
from schedviz.cluster.models import (
    KIND_MODELS,
    WORKLOAD_KINDS,
    Change,
    Cluster,
    Event,
    KubeResource,
    Profile,
)
from schedviz.cluster.models import Node as NodeRow
from schedviz.cluster.models import Pod as PodRow
from schedviz.cluster.services.clusters import _start_runner_on_commit
from schedviz.cluster.services.errors import ServiceError
from schedviz.cluster.services.stored import (
    _QUALIFIED_RESOURCES,
    _append_changes,
    _carry_over,
    _decode,
    _lock,
    _manager,
    _manifest_errors,
    _namespace_of,
    _row_fields,
    _rows_by_key,
    _stored_manifest,
    _type_name,
    kind_of,
)
from schedviz.cluster.services.workloads import (
    controller_uid,
    created_for_workloads,
    pods_to_delete,
)
from schedviz.controllers.workloads import job_active_count
from schedviz.kube.admission import PodAdmission, admit_priority_classes
from schedviz.kube.decode import decode_object
from schedviz.kube.errors import (
    DocumentError,
    ForbiddenError,
    InvalidObjectError,
    LocatedError,
    ManifestError,
    forbidden,
    go_quote,
)
from schedviz.kube.load import (
    SCHEDULER_CONFIG_KIND,
    Manifests,
    load_files,
    load_manifests,
)
from schedviz.kube.names import GENERATE_NAME_ATTEMPTS
from schedviz.kube.objects import (
    Job,
    KubeObject,
    Pod,
    PriorityClass,
    ReplicaSet,
    ReplicationController,
    ResourceQuota,
    StatefulSet,
    Workload,
)
from schedviz.scheduler.apis.config.v1 import ConfigError, decode_configuration
from schedviz.scheduler.framework.plugins.registry import new_in_tree_registry
from schedviz.scheduler.framework.runtime.framework import FrameworkError
from schedviz.simulation.simulator import new_simulation


@dataclass(frozen=True, slots=True)
class AppliedObject:
    """What happened to one object, as ``kubectl apply`` reports it."""

    kind: str
    namespace: str
    name: str
    action: str  # created | configured | unchanged | deleted

    @property
    def line(self) -> str:
        if self.action == "deleted":
            return f"{_type_name(self.kind)} {go_quote(self.name)} deleted"
        return f"{_type_name(self.kind)}/{self.name} {self.action}"

    def to_json(self) -> dict[str, str]:
        return {
            "kind": self.kind,
            "namespace": self.namespace,
            "name": self.name,
            "action": self.action,
            "line": self.line,
        }


SCHEDULER_CONFIG_TYPE_NAME = "kubeschedulerconfiguration.kubescheduler.config.k8s.io"


@dataclass(slots=True)
class ApplyResult:
    """Every object of the input with what was done to it, in input order."""

    objects: list[AppliedObject] = field(default_factory=list)
    # "configured" or "unchanged" when the input held a KubeSchedulerConfiguration.
    scheduler_config: str = ""
    # The objects of kinds the scheduler does not read, skipped (Manifests.skipped_notice).
    skipped_notice: str = ""

    @property
    def lines(self) -> list[str]:
        lines = [obj.line for obj in self.objects]
        if self.scheduler_config:
            lines.append(f"{SCHEDULER_CONFIG_TYPE_NAME} {self.scheduler_config}")
        return lines


@dataclass(slots=True)
class _Write:
    obj: KubeObject
    manifest: dict[str, Any]
    row: KubeResource | None  # the stored row, for an update


def _stored_objects(cluster: Cluster, kind: str, given: set[str]) -> list[KubeObject]:
    """The stored objects of the kind, but those the input replaces."""
    return [
        decode_object(row.manifest)
        for row in _manager(KIND_MODELS[kind]).filter(cluster=cluster)
        if row.key not in given
    ]


def _admit(
    cluster: Cluster, objects: Sequence[KubeObject], manifests: Manifests
) -> tuple[list[KubeObject], list[Event]]:
    """The objects with their pods admitted as the API server admits each create (the
    admission plugins read the stored objects and the input's, a LimitRange or quota of the
    input from where it is in the input on); a pod already stored goes through the mutating
    plugins only. A refused pod of the input (``manifests``) refuses the input
    (ManifestError, each refusal at its document); a controller's refused pod is left out,
    its FailedCreate event returned."""
    policies: list[KubeObject] = []
    for kind in ("PriorityClass", "RuntimeClass", "LimitRange", "ResourceQuota"):
        of_kind = [o for o in objects if kind_of(o) == kind]
        policies += _stored_objects(cluster, kind, {o.key for o in of_kind})
        if kind in ("PriorityClass", "RuntimeClass"):
            policies += of_kind  # the input's LimitRanges and quotas act from where they are
    admit_priority_classes([o for o in policies if isinstance(o, PriorityClass)])
    pods = [o for o in objects if isinstance(o, Pod)]
    stored_keys = set(_rows_by_key(cluster, "Pod", (p.name for p in pods)))
    existing: list[Pod] = []
    quota_namespaces = {o.namespace for o in objects if isinstance(o, ResourceQuota)}
    quota_namespaces |= {o.namespace for o in policies if isinstance(o, ResourceQuota)}
    if quota_namespaces:
        rows = PodRow.objects.filter(cluster=cluster, namespace__in=quota_namespaces)
        existing = [pod for row in rows if isinstance(pod := decode_object(row.manifest), Pod)]
    admission = PodAdmission(policies, existing)
    given_ids = {id(o) for o in manifests.objects}
    admitted: list[KubeObject] = []
    errors: list[LocatedError] = []
    events: list[Event] = []
    for obj in objects:
        if not isinstance(obj, Pod):
            admission.add(obj)
            admitted.append(obj)
            continue
        try:
            admitted.append(admission.admit(obj, create=obj.key not in stored_keys))
        except (ForbiddenError, InvalidObjectError) as error:
            if id(obj) in given_ids:
                errors.append(manifests.locate(error, "pods", obj.key))
            else:
                events.append(_failed_create(cluster, obj, error))
    if errors:
        raise ManifestError(errors)
    return admitted, events


def _failed_create(cluster: Cluster, pod: Pod, error: Exception) -> Event:
    """The FailedCreate event of a controller whose pod admission refused (controller_utils'
    ``CreatePods``: "Error creating: ...", on the controller)."""
    owner = next((ref for ref in pod.owner_references if ref.controller), None)
    return Event(
        cluster=cluster,
        type="Warning",
        reason="FailedCreate",
        object_namespace=pod.namespace,
        object_name=owner.name if owner is not None else pod.name,
        message=f"Error creating: {error}",
    )


def _node_name_forbidden(name: str, bound_to: str) -> str:
    detail = f"pod updates may not change the node of a bound pod (bound to {go_quote(bound_to)})"
    return str(InvalidObjectError("Pod", name, [forbidden("spec.nodeName", detail)]))


def _plan_writes(
    cluster: Cluster, objects: Sequence[KubeObject], *, create_only: bool
) -> tuple[list[_Write], list[str]]:
    """The write each object asks for (its stored form, and its row if it exists), and every
    refusal."""
    existing: dict[str, dict[str, KubeResource]] = {}
    for kind in {kind_of(o) for o in objects}:
        existing[kind] = _rows_by_key(
            cluster, kind, (o.name for o in objects if kind_of(o) == kind)
        )
    writes: list[_Write] = []
    errors: list[str] = []
    for obj in objects:
        kind = kind_of(obj)
        row = existing[kind].get(obj.key)
        manifest = _stored_manifest(obj)
        if row is not None:
            resource = _QUALIFIED_RESOURCES[kind]
            if create_only:
                errors.append(f"{resource} {go_quote(obj.name)} already exists")
                continue
            merged = _carry_over(row.manifest, manifest)
            if merged != manifest:
                manifest = merged
                try:
                    obj = decode_object(manifest)
                except (InvalidObjectError, DocumentError) as error:
                    errors.append(str(error))
                    continue
            bound_to = row.node_name if isinstance(row, PodRow) else ""
            if bound_to and isinstance(obj, Pod) and obj.node_name != bound_to:
                errors.append(_node_name_forbidden(obj.name, bound_to))
                continue
        writes.append(_Write(obj, manifest, row))
    return writes, errors


def _execute_writes(cluster: Cluster, writes: Sequence[_Write]) -> list[AppliedObject]:
    """Writes the changed objects and their Change rows; reports every object."""
    applied: list[AppliedObject] = []
    changed: list[tuple[_Write, str]] = []
    for write in writes:
        kind = kind_of(write.obj)
        namespace = _namespace_of(write.obj)
        if write.row is None:
            action = "created"
        elif write.row.manifest == write.manifest:
            action = "unchanged"
        else:
            action = "configured"
        applied.append(AppliedObject(kind, namespace, write.obj.name, action))
        if action != "unchanged":
            changed.append(
                (write, Change.Type.ADDED if write.row is None else Change.Type.MODIFIED)
            )
    changes = _append_changes(
        cluster,
        [
            (kind_of(w.obj), _namespace_of(w.obj), w.obj.name, change_type, w.manifest)
            for w, change_type in changed
        ],
    )
    created: dict[str, list[KubeResource]] = {}
    updated: dict[str, list[KubeResource]] = {}
    updated_fields: dict[str, list[str]] = {}
    for (write, _), change in zip(changed, changes, strict=True):
        kind = kind_of(write.obj)
        fields = _row_fields(write.obj)
        if write.row is None:
            row = KIND_MODELS[kind](
                cluster=cluster, manifest=write.manifest, resource_version=change.id, **fields
            )
            created.setdefault(kind, []).append(row)
        else:
            row = write.row
            for name, value in fields.items():
                setattr(row, name, value)
            row.manifest = write.manifest
            row.resource_version = change.id
            updated.setdefault(kind, []).append(row)
            updated_fields[kind] = [*fields, "manifest", "resource_version"]
    for kind, rows in created.items():
        _manager(KIND_MODELS[kind]).bulk_create(rows)
    for kind, rows in updated.items():
        _manager(KIND_MODELS[kind]).bulk_update(rows, updated_fields[kind])
    return applied


def _scheduler_config_plan(
    configs: Sequence[dict[str, Any]],
) -> tuple[dict[str, Any] | None, list[str]]:
    """The single KubeSchedulerConfiguration of an input, validated, or the reasons it is not."""
    if not configs:
        return None, []
    if len(configs) > 1:
        return None, [f"at most one KubeSchedulerConfiguration may be given, got {len(configs)}"]
    try:
        config = decode_configuration(configs[0], known_plugins=set(new_in_tree_registry()))
    except ConfigError as error:
        return None, [f"{SCHEDULER_CONFIG_KIND}: {message}" for message in error.errors]
    try:
        # A valid document can still name a plugin at a point it does not implement, or an
        # extender host that is not allowed: build the scheduler once to find out now, not
        # when a runner starts.
        new_simulation(
            Manifests(),
            config=config,
            capture_queue=False,
            extender_allowed_hosts=settings.SCHEDVIZ_EXTENDER_ALLOWED_HOSTS,
        )
    except (FrameworkError, ValueError) as error:
        return None, [f"{SCHEDULER_CONFIG_KIND}: {error}"]
    return configs[0], []


def _scheduler_config_store(cluster: Cluster, document: dict[str, Any]) -> str:
    """Replaces the profiles and settings; "configured" or "unchanged"."""
    config = decode_configuration(document, known_plugins=set(new_in_tree_registry()))
    settings_fields = {
        k: copy.deepcopy(v)
        for k, v in document.items()
        if k not in ("apiVersion", "kind", "profiles")
    }
    profiles = []
    raw_profiles = document.get("profiles") or []
    for position, (raw, decoded) in enumerate(zip(raw_profiles, config.profiles, strict=False)):
        profile = copy.deepcopy(raw)
        profile["schedulerName"] = decoded.scheduler_name
        profiles.append(
            Profile(
                cluster=cluster,
                scheduler_name=decoded.scheduler_name,
                position=position,
                config=profile,
            )
        )
    current = [p.config for p in Profile.objects.filter(cluster=cluster)]
    if current == [p.config for p in profiles] and cluster.scheduler_settings == settings_fields:
        return "unchanged"
    Profile.objects.filter(cluster=cluster).delete()
    Profile.objects.bulk_create(profiles)
    Cluster.objects.filter(id=cluster.id).update(scheduler_settings=settings_fields)
    cluster.scheduler_settings = settings_fields
    return "configured"


_LIMITS = (
    (NodeRow, "nodes", "SCHEDVIZ_MAX_NODES_PER_CLUSTER"),
    (PodRow, "pods", "SCHEDVIZ_MAX_PODS_PER_CLUSTER"),
)


def _limit_errors(cluster: Cluster, writes: Sequence[_Write]) -> list[str]:
    """The per-cluster limits the new objects would pass (updates add nothing)."""
    errors = []
    for model, plural, setting in _LIMITS:
        new = sum(1 for w in writes if w.row is None and kind_of(w.obj) == model.__name__)
        limit = getattr(settings, setting)
        if new and (total := model.objects.filter(cluster=cluster).count() + new) > limit:
            errors.append(
                f"cluster {cluster.name} would have {total} {plural}; "
                f"the limit is {limit} ({setting})"
            )
    return errors


def _unstored_kinds(objects: Sequence[KubeObject]) -> list[str]:
    kinds = dict.fromkeys(kind_of(o) for o in objects if kind_of(o) not in KIND_MODELS)
    return [f"{kind} objects cannot be stored in a cluster (yet)" for kind in kinds]


def _with_controlled(cluster: Cluster, objects: Sequence[KubeObject]) -> list[KubeObject]:
    """The objects and, after them, what the workload controllers create for the workloads
    among them; a generated pod name that is taken is drawn again, as the API server retries
    (``GENERATE_NAME_ATTEMPTS``)."""
    if not any(kind_of(o) in WORKLOAD_KINDS for o in objects):
        return list(objects)  # no controller creates anything: nothing to read
    limit = settings.SCHEDVIZ_MAX_PODS_PER_CLUSTER
    too_many = [
        f"{kind_of(o)} {go_quote(o.name)}: {field}: Invalid value: {count}: more pods than "
        f"a cluster may hold ({limit}, SCHEDVIZ_MAX_PODS_PER_CLUSTER)"
        for o in objects
        if isinstance(o, Workload)
        for field, count in [_pods_asked(o)]
        if count > limit
    ]
    if too_many:
        # Refused before the controllers make that many pods in memory.
        raise ServiceError(too_many)
    given = {o.key for o in objects if isinstance(o, Pod)}
    seed = _name_seed(cluster)
    for attempt in range(GENERATE_NAME_ATTEMPTS + 1):
        created = created_for_workloads(cluster, objects, seed + attempt)
        pods = [o for o in created if isinstance(o, Pod)]
        keys = [pod.key for pod in pods]
        taken = given | set(_rows_by_key(cluster, "Pod", (pod.name for pod in pods)))
        generated = set(keys) - _stateful_keys(created)
        if not generated & taken and len(set(keys)) == len(keys):
            return [*objects, *created]
    raise ServiceError(["the names generated for the workloads' pods are taken; apply again"])


def _pods_asked(workload: Workload) -> tuple[str, int]:
    """The field that says how many pods the workload's controller makes at once, and that
    number."""
    if isinstance(workload, Job):
        return "spec.parallelism", job_active_count(workload)
    return "spec.replicas", workload.replicas


def _stateful_keys(created: Sequence[KubeObject]) -> set[str]:
    """Pods with fixed names (a StatefulSet's ordinals), which an existing pod keeps."""
    return {
        o.key
        for o in created
        if isinstance(o, Pod) and any(r.kind == "StatefulSet" for r in o.owner_references)
    }


def _scale_down(cluster: Cluster, objects: Sequence[KubeObject]) -> list[AppliedObject]:
    """Deletes the pods past the replicas of the ReplicaSets, ReplicationControllers and
    StatefulSets among ``objects`` (services.workloads.pods_to_delete)."""
    # Deleting is delete.py's, which imports this module.
    from schedviz.cluster.services.delete import _delete_rows

    doomed: list[KubeResource] = []
    for obj in objects:
        if isinstance(obj, ReplicaSet | ReplicationController | StatefulSet):
            rows = [
                row
                for row in PodRow.objects.filter(cluster=cluster, namespace=obj.namespace)
                if controller_uid(row.manifest) == obj.uid
            ]
            doomed.extend(pods_to_delete(cluster, rows, obj))
    return _delete_rows(cluster, doomed) if doomed else []


def _apply(
    cluster: Cluster,
    manifests: Manifests,
    *,
    create_only: bool = False,
    start_runner: bool = True,
) -> ApplyResult:
    config_document, errors = _scheduler_config_plan(manifests.scheduler_configs)
    errors = _unstored_kinds(manifests.objects) + errors
    if errors:
        raise ServiceError(errors)
    with transaction.atomic():
        _lock(cluster)
        try:
            objects, events = _admit(
                cluster, _with_controlled(cluster, manifests.objects), manifests
            )
        except ManifestError as error:
            raise ServiceError(_manifest_errors(error)) from None
        writes, errors = _plan_writes(cluster, objects, create_only=create_only)
        errors += _limit_errors(cluster, writes)
        if errors:
            raise ServiceError(errors)
        result = ApplyResult(
            objects=_execute_writes(cluster, writes), skipped_notice=manifests.skipped_notice
        )
        result.objects += _scale_down(cluster, objects)
        Event.objects.bulk_create(events)
        if config_document is not None:
            result.scheduler_config = _scheduler_config_store(cluster, config_document)
        if start_runner:
            _start_runner_on_commit(cluster.id)
    return result


def _name_seed(cluster: Cluster) -> int:
    """The seed of the names generated for ``generateName``: the cluster's last change, so the
    same history gives the same names and every apply draws new ones."""
    last = Change.objects.filter(cluster=cluster).order_by("-id").values_list("id", flat=True)
    return last.first() or 0


def manifests_apply(*, cluster: Cluster, text: str, source: str = "<input>") -> ApplyResult:
    """``kubectl apply -f``: creates or replaces every object of the YAML/JSON text, all or none.

    A KubeSchedulerConfiguration in the text replaces the cluster's profiles and settings.
    Raises ServiceError with every error of the input; nothing is written then.
    """
    try:
        manifests = load_manifests(
            text, source, limits=validation.manifest_limits(), seed=_name_seed(cluster)
        )
    except ManifestError as error:
        raise ServiceError(_manifest_errors(error)) from None
    return _apply(cluster, manifests)


def manifests_apply_files(*, cluster: Cluster, paths: Sequence[str]) -> ApplyResult:
    """``manifests_apply`` over files (and directories of them), judged together."""
    try:
        manifests = load_files(list(paths), seed=_name_seed(cluster))
    except ManifestError as error:
        raise ServiceError(_manifest_errors(error)) from None
    return _apply(cluster, manifests)


def pod_create(*, cluster: Cluster, manifest: dict[str, Any]) -> PodRow:
    """Creates one pod (``kubectl create``): refused if it exists already."""
    obj = _decode(manifest)
    if not isinstance(obj, Pod):
        raise ServiceError([f"expected a Pod, got {kind_of(obj)}"])
    _apply(cluster, Manifests(objects=[obj]), create_only=True)
    return PodRow.objects.get(cluster=cluster, namespace=obj.namespace, name=obj.name)
