"""Deleting objects: by reference, by manifest, one pod; a Namespace takes its objects with it."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from django.db import transaction

from schedviz.cluster import validation
from schedviz.cluster.models import (
    KIND_MODELS,
    WORKLOAD_KINDS,
    Change,
    Cluster,
    KubeResource,
    NamespacedResource,
)
from schedviz.cluster.services.apply import AppliedObject
from schedviz.cluster.services.clusters import _start_runner_on_commit
from schedviz.cluster.services.errors import ObjectNotFound, ServiceError
from schedviz.cluster.services.stored import (
    _MAX_NAMES_IN_QUERY,
    _QUALIFIED_RESOURCES,
    _append_changes,
    _decode,
    _lock,
    _manager,
    _manifest_errors,
    _namespace_of,
    kind_of,
)
from schedviz.cluster.services.workloads import controller_uid
from schedviz.kube.errors import (
    ManifestError,
    go_quote,
)
from schedviz.kube.load import (
    load_manifests,
)
from schedviz.kube.objects import Workload


def _delete_rows(cluster: Cluster, rows: Sequence[KubeResource]) -> list[AppliedObject]:
    """Deletes the rows (and, for a Namespace, everything in it) with a DELETED change each."""
    doomed: list[KubeResource] = list(rows)
    seen = {(type(r).__name__, r.pk) for r in doomed}
    for row in rows:
        if type(row).__name__ == "Namespace":
            for model in KIND_MODELS.values():
                if issubclass(model, NamespacedResource):
                    for inner in _manager(model).filter(cluster=cluster, namespace=row.name):
                        if (type(inner).__name__, inner.pk) not in seen:
                            seen.add((type(inner).__name__, inner.pk))
                            doomed.append(inner)
    # The garbage collector's part: what a deleted workload controls goes with it (a
    # Deployment's ReplicaSet, and that one's pods).
    index = 0
    while index < len(doomed):
        row = doomed[index]
        index += 1
        if type(row).__name__ not in WORKLOAD_KINDS:
            continue
        owner = _decode(row.manifest)
        assert isinstance(owner, Workload)
        # A StatefulSet's claims stay (persistentVolumeClaimRetentionPolicy's default, Retain).
        owned_kinds = ("ReplicaSet", "Pod") if owner.kind == "Deployment" else ("Pod",)
        for kind in owned_kinds:
            for inner in _manager(KIND_MODELS[kind]).filter(
                cluster=cluster, namespace=owner.namespace
            ):
                if controller_uid(inner.manifest) == owner.uid and (kind, inner.pk) not in seen:
                    seen.add((kind, inner.pk))
                    doomed.append(inner)
    _append_changes(
        cluster,
        [
            (type(r).__name__, getattr(r, "namespace", ""), r.name, Change.Type.DELETED, r.manifest)
            for r in doomed
        ],
    )
    by_model: dict[type[KubeResource], list[int]] = {}
    for row in doomed:
        by_model.setdefault(type(row), []).append(row.pk)
    for model, ids in by_model.items():
        for start in range(0, len(ids), _MAX_NAMES_IN_QUERY):
            _manager(model).filter(id__in=ids[start : start + _MAX_NAMES_IN_QUERY]).delete()
    return [
        AppliedObject(type(r).__name__, getattr(r, "namespace", ""), r.name, "deleted")
        for r in doomed
    ]


@dataclass(frozen=True, slots=True)
class ObjectRef:
    kind: str
    name: str
    namespace: str = ""


def _find_rows(
    cluster: Cluster, refs: Sequence[ObjectRef], *, ignore_not_found: bool
) -> list[KubeResource]:
    rows: list[KubeResource] = []
    errors: list[str] = []
    for ref in refs:
        model = KIND_MODELS.get(ref.kind)
        if model is None:
            errors.append(f"the server doesn't have a resource type {go_quote(ref.kind)}")
            continue
        query = _manager(model).filter(cluster=cluster, name=ref.name)
        if issubclass(model, NamespacedResource):
            query = query.filter(namespace=ref.namespace or "default")
        row = query.first()
        if row is not None:
            rows.append(row)
        elif not ignore_not_found:
            errors.append(f"{_QUALIFIED_RESOURCES[ref.kind]} {go_quote(ref.name)} not found")
    if errors:
        raise ObjectNotFound(errors)
    return rows


def objects_delete(
    *, cluster: Cluster, refs: Sequence[ObjectRef], ignore_not_found: bool = False
) -> list[AppliedObject]:
    """Deletes the named objects, all or none (a missing one is an error unless ignored)."""
    with transaction.atomic():
        _lock(cluster)
        rows = _find_rows(cluster, refs, ignore_not_found=ignore_not_found)
        deleted = _delete_rows(cluster, rows)
        if deleted:
            _start_runner_on_commit(cluster.id)
    return deleted


def manifests_delete(
    *, cluster: Cluster, text: str, source: str = "<input>", ignore_not_found: bool = False
) -> list[AppliedObject]:
    """``kubectl delete -f``: deletes every object the text names."""
    try:
        manifests = load_manifests(text, source, limits=validation.manifest_limits())
    except ManifestError as error:
        raise ServiceError(_manifest_errors(error)) from None
    refs = [ObjectRef(kind_of(o), o.name, _namespace_of(o)) for o in manifests.objects]
    return objects_delete(cluster=cluster, refs=refs, ignore_not_found=ignore_not_found)


def pod_delete(*, cluster: Cluster, namespace: str, name: str) -> None:
    """Deletes a pod at once (no grace period); ObjectNotFound if there is none."""
    objects_delete(cluster=cluster, refs=[ObjectRef("Pod", name, namespace)])
