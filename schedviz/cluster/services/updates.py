"""Updates of one object: a node edited, and the scheduler's own writes (bind by compare-and-set,
pod status, the objects its plugins changed), none of which starts a runner.
"""

from __future__ import annotations

import copy
import functools
from collections.abc import Collection, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, ClassVar

from django.db import connection, transaction
from django.db.models import Field, Model
from django.utils import timezone

from schedviz.cluster.models import (
    KIND_MODELS,
    Change,
    Cluster,
    KubeResource,
)
from schedviz.cluster.models import Node as NodeRow
from schedviz.cluster.models import Pod as PodRow
from schedviz.cluster.services.clusters import _start_runner_on_commit
from schedviz.cluster.services.errors import BindConflict, Conflict, ObjectNotFound, ServiceError
from schedviz.cluster.services.stored import (
    _QUALIFIED_RESOURCES,
    _append_changes,
    _decode,
    _lock,
    _manager,
    _namespace_of,
    _row_fields,
    _rows_by_key,
    _stored_manifest,
    kind_of,
)
from schedviz.kube.errors import (
    go_quote,
)
from schedviz.kube.objects import (
    KubeObject,
    PersistentVolume,
    PersistentVolumeClaim,
)


def _update_row(
    cluster: Cluster, row: KubeResource, manifest: dict[str, Any], fields: dict[str, Any]
) -> KubeResource:
    """Writes a changed row with its MODIFIED change."""
    (change,) = _append_changes(
        cluster,
        [
            (
                type(row).__name__,
                getattr(row, "namespace", ""),
                row.name,
                Change.Type.MODIFIED,
                manifest,
            )
        ],
    )
    for name, value in fields.items():
        setattr(row, name, value)
    row.manifest = manifest
    row.resource_version = change.id
    row.save(update_fields=[*fields, "manifest", "resource_version"])
    return row


def _create_row(cluster: Cluster, obj: KubeObject) -> KubeResource:
    """Writes a new object's row with its ADDED change."""
    manifest = _stored_manifest(obj)
    (change,) = _append_changes(
        cluster,
        [(kind_of(obj), _namespace_of(obj), obj.name, Change.Type.ADDED, manifest)],
    )
    row: KubeResource = _manager(KIND_MODELS[kind_of(obj)]).create(
        cluster=cluster, manifest=manifest, resource_version=change.id, **_row_fields(obj)
    )
    return row


def node_update(
    *,
    cluster: Cluster,
    name: str,
    labels: dict[str, str] | None = None,
    taints: list[dict[str, Any]] | None = None,
    unschedulable: bool | None = None,
) -> NodeRow:
    """Labels, taints and cordoning (``kubectl label/taint/cordon``); None leaves a field be."""
    with transaction.atomic():
        _lock(cluster)
        row = NodeRow.objects.filter(cluster=cluster, name=name).first()
        if row is None:
            raise ObjectNotFound([f"nodes {go_quote(name)} not found"])
        manifest = copy.deepcopy(row.manifest)
        if labels is not None:
            manifest.setdefault("metadata", {})["labels"] = dict(labels)
        spec = manifest.setdefault("spec", {})
        if taints is not None:
            if taints:
                spec["taints"] = [dict(t) for t in taints]
            else:
                spec.pop("taints", None)
        if unschedulable is not None:
            if unschedulable:
                spec["unschedulable"] = True
            else:
                spec.pop("unschedulable", None)
        if manifest == row.manifest:
            return row
        obj = _decode(manifest)
        _update_row(cluster, row, manifest, _row_fields(obj))
        _start_runner_on_commit(cluster.id)
    return row


def _set_condition(
    conditions: list[dict[str, Any]], condition: dict[str, Any]
) -> list[dict[str, Any]]:
    """The conditions with ``condition`` replacing the one of its type (or appended)."""
    out = [dict(c) for c in conditions]
    for i, existing in enumerate(out):
        if existing.get("type") == condition.get("type"):
            out[i] = dict(condition)
            return out
    out.append(dict(condition))
    return out


def _pod_for_update(cluster: Cluster, namespace: str, name: str) -> PodRow:
    row = PodRow.objects.filter(cluster=cluster, namespace=namespace, name=name).first()
    if row is None:
        raise ObjectNotFound([f"pods {go_quote(name)} not found"])
    return row


POD_SCHEDULED_CONDITION = {"type": "PodScheduled", "status": "True"}


def _bind_conflict(name: str, node_name: str) -> BindConflict:
    return BindConflict(
        [
            f"Operation cannot be fulfilled on pods/binding {go_quote(name)}: pod {name} is "
            f"already assigned to node {go_quote(node_name)}"
        ]
    )


@dataclass(frozen=True, slots=True)
class PodBinding:
    """What a bind wrote: its Change row's id (the pod's new resourceVersion), the
    resourceVersion of the pod it bound, and the manifest after the bind."""

    change_id: int
    bound_from: int
    manifest: dict[str, Any]


@dataclass(slots=True)
class BindRow:
    """What a bind reads of a pod's row (``pods_for_bind``: values, not a model instance)."""

    FIELDS: ClassVar[tuple[str, ...]] = (
        "id",
        "namespace",
        "name",
        "node_name",
        "resource_version",
        "manifest",
        "conditions",
    )

    id: int
    namespace: str
    name: str
    node_name: str
    resource_version: int
    manifest: dict[str, Any]
    conditions: list[dict[str, Any]]


def pods_for_bind(
    *,
    cluster: Cluster,
    keys: Collection[tuple[str, str]],
    known: Mapping[tuple[str, str], tuple[int, dict[str, Any]]] | None = None,
) -> dict[tuple[str, str], BindRow]:
    """The rows of pods about to be bound, by (namespace, name), read in one query: a group of
    binds reads them once, in its transaction, and gives each to ``pod_bind`` (``row``).

    ``known``: manifests the caller holds already, by key, with the resourceVersion they are
    the manifest of (a runner's informer cache: the Change row it followed stores the same
    manifest as the pod's row at that version). A row still at that version takes it rather
    than decoding its own; the others' manifests are read in a second query."""
    known = known or {}
    by_namespace: dict[str, list[str]] = {}
    for namespace, name in keys:
        by_namespace.setdefault(namespace, []).append(name)
    rows: dict[tuple[str, str], BindRow] = {}
    unknown: dict[int, BindRow] = {}
    fields = [name for name in BindRow.FIELDS if name != "manifest"]
    for namespace, names in by_namespace.items():
        for values in PodRow.objects.filter(
            cluster=cluster, namespace=namespace, name__in=names
        ).values_list(*fields):
            read = dict(zip(fields, values, strict=True))
            key = (read["namespace"], read["name"])
            hit = known.get(key)
            if hit is not None and hit[0] == read["resource_version"]:
                row = BindRow(**read, manifest=hit[1])
            else:
                row = unknown[read["id"]] = BindRow(**read, manifest={})
            rows[key] = row
    if unknown:
        for pk, manifest in PodRow.objects.filter(id__in=unknown).values_list("id", "manifest"):
            unknown[pk].manifest = manifest
    return rows


# How many times a bind reads the pod again when its row changed in between.
BIND_READS = 3


def pod_bind(
    *,
    cluster: Cluster,
    namespace: str,
    name: str,
    node_name: str,
    row: PodRow | BindRow | None = None,
) -> PodBinding:
    """The pods/binding subresource: a compare-and-set of the pod's node, once, never twice.

    ``row``: the pod's row as read earlier in the caller's transaction (``pods_for_bind``), not
    read again. The set is conditional on the resourceVersion read as well as on the pod being
    unbound: a pod changed in between (its labels, its status) is read again, its change kept.

    Raises BindConflict with the API server's message when the pod is bound already (also
    when another bind won between reading the pod and writing it), ObjectNotFound when the
    pod or the node does not exist.

    A bind that fails writes nothing and raises only once its block is left, so inside a
    caller's transaction it needs no savepoint of its own (a runner's group commit binds
    dozens of pods in one transaction: on PostgreSQL each savepoint was two more round trips
    per pod) and fails nothing else of the transaction.
    """
    for _ in range(BIND_READS):
        with transaction.atomic(savepoint=False):
            try:
                read = row if row is not None else _pod_for_update(cluster, namespace, name)
            except ObjectNotFound as missing:
                outcome: PodBinding | ServiceError | None = missing
            else:
                outcome = _bind(cluster, read, node_name)
        if isinstance(outcome, PodBinding):
            return outcome
        if outcome is not None:
            raise outcome
        row = None  # the row changed after it was read: read it again
    raise Conflict(
        [
            f"Operation cannot be fulfilled on pods {go_quote(name)}: the object has been "
            "modified; please apply your changes to the latest version and try again"
        ]
    )


def _bind(
    cluster: Cluster, row: PodRow | BindRow, node_name: str
) -> PodBinding | ServiceError | None:
    """The bind's writes: its binding, or the error to raise (nothing written), or None when
    the row changed after it was read (nothing written: read it again)."""
    namespace, name = row.namespace, row.name
    if row.node_name:
        return _bind_conflict(name, row.node_name)
    manifest = copy.deepcopy(row.manifest)
    manifest.setdefault("spec", {})["nodeName"] = node_name
    status = manifest.setdefault("status", {})
    status["conditions"] = _set_condition(status.get("conditions") or [], POD_SCHEDULED_CONDITION)
    conditions = _set_condition(row.conditions, POD_SCHEDULED_CONDITION)
    # The Change row and the pod's row store the same manifest: encoded once for both (the two
    # columns are the same JSONField).
    stored = _MANIFEST.get_db_prep_save(manifest, connection)
    with connection.cursor() as cursor:
        change_id = _insert_bind_change(cursor, cluster, namespace, name, stored)
        # One statement: the pod is still unbound and as read, and the node exists.
        cursor.execute(
            _bind_sql().update_pod,
            [
                node_name,
                stored,
                _CONDITIONS.get_db_prep_save(conditions, connection),
                change_id,
                row.id,
                row.resource_version,
                cluster.id,
                node_name,
            ],
        )
        won = cursor.rowcount
        if not won:
            # Taken back by hand rather than by a savepoint: the transaction stays usable.
            cursor.execute(_bind_sql().delete_change, [change_id])
    if won:
        return PodBinding(change_id, row.resource_version, manifest)
    current = PodRow.objects.filter(id=row.id).values_list("node_name", flat=True).first()
    if current is None:
        return ObjectNotFound([f"pods {go_quote(name)} not found"])
    if current:
        return _bind_conflict(name, current)
    if not NodeRow.objects.filter(cluster=cluster, name=node_name).exists():
        return ObjectNotFound([f"nodes {go_quote(node_name)} not found"])
    return None


# A bind's two statements are written once, as SQL of their own: built by the ORM for every bind
# of a live run, they were most of its cost (the statements are the ORM's, ``_append_changes``'s
# row and ``QuerySet.update`` with ``Exists``).
_MANIFEST = PodRow._meta.get_field("manifest")
_CONDITIONS = PodRow._meta.get_field("conditions")
_CHANGE_CREATED = Change._meta.get_field("created_at")


@dataclass(frozen=True, slots=True)
class _BindSql:
    insert_change: str
    update_pod: str
    delete_change: str


@functools.cache
def _bind_sql() -> _BindSql:
    q = connection.ops.quote_name

    def column(model: type[Model], name: str) -> str:
        field = model._meta.get_field(name)
        assert isinstance(field, Field) and field.column
        return q(field.column)

    insert_fields = ("cluster", "kind", "namespace", "name", "type", "manifest", "created_at")
    insert_change = (
        f"INSERT INTO {q(Change._meta.db_table)} "
        f"({', '.join(column(Change, f) for f in insert_fields)}) "
        f"VALUES ({', '.join(['%s'] * len(insert_fields))}) RETURNING {column(Change, 'id')}"
    )
    pod, node = q(PodRow._meta.db_table), q(NodeRow._meta.db_table)
    update_pod = (
        f"UPDATE {pod} SET {column(PodRow, 'node_name')} = %s, {column(PodRow, 'manifest')} = %s, "
        f"{column(PodRow, 'conditions')} = %s, {column(PodRow, 'resource_version')} = %s "
        f"WHERE {column(PodRow, 'id')} = %s AND {column(PodRow, 'node_name')} = '' "
        f"AND {column(PodRow, 'resource_version')} = %s AND EXISTS (SELECT 1 FROM {node} "
        f"WHERE {column(NodeRow, 'cluster')} = %s AND {column(NodeRow, 'name')} = %s)"
    )
    delete_change = f"DELETE FROM {q(Change._meta.db_table)} WHERE {column(Change, 'id')} = %s"
    return _BindSql(insert_change, update_pod, delete_change)


def _insert_bind_change(
    cursor: Any, cluster: Cluster, namespace: str, name: str, stored_manifest: Any
) -> int:
    """The bind's Change row (what ``_append_changes`` writes for it), its manifest as the
    database takes it (``get_db_prep_save``); its id."""
    cursor.execute(
        _bind_sql().insert_change,
        [
            cluster.id,
            "Pod",
            namespace,
            name,
            Change.Type.MODIFIED.value,
            stored_manifest,
            _CHANGE_CREATED.get_db_prep_save(timezone.now(), connection),
        ],
    )
    return int(cursor.fetchone()[0])


def pod_update_status(
    *,
    cluster: Cluster,
    namespace: str,
    name: str,
    condition: dict[str, Any] | None,
    nominated_node_name: str | None,
) -> PodRow | None:
    """The scheduler's status patch: a condition (replacing its type's) and nominatedNodeName.

    None leaves a field as it is, "" clears the nomination. Returns the pod, or None if it is
    gone (the scheduler ignores that, as upstream does for a deleted pod).
    """
    with transaction.atomic():
        row = PodRow.objects.filter(cluster=cluster, namespace=namespace, name=name).first()
        if row is None:
            return None
        manifest = copy.deepcopy(row.manifest)
        status = manifest.setdefault("status", {})
        fields: dict[str, Any] = {}
        if condition is not None:
            status["conditions"] = _set_condition(status.get("conditions") or [], condition)
            fields["conditions"] = _set_condition(row.conditions, condition)
        if nominated_node_name is not None:
            if nominated_node_name:
                status["nominatedNodeName"] = nominated_node_name
            else:
                status.pop("nominatedNodeName", None)
            fields["nominated_node_name"] = nominated_node_name
        if not status:
            manifest.pop("status")
        if manifest == row.manifest:
            return row
        updated = _update_row(cluster, row, manifest, fields)
        assert isinstance(updated, PodRow)
        return updated


def _scheduler_manifest(obj: KubeObject, stored: dict[str, Any]) -> dict[str, Any]:
    """The stored manifest with what the volume binder changes on a PV or PVC."""
    manifest = copy.deepcopy(stored)
    spec = manifest.setdefault("spec", {})
    status = manifest.setdefault("status", {})
    if isinstance(obj, PersistentVolume):
        if obj.claim_ref:
            claim_namespace, _, claim_name = obj.claim_ref.partition("/")
            claim = dict(spec.get("claimRef") or {})
            claim.update(namespace=claim_namespace, name=claim_name)
            spec["claimRef"] = claim
        else:
            spec.pop("claimRef", None)
        status["phase"] = obj.phase
    elif isinstance(obj, PersistentVolumeClaim):
        if obj.volume_name:
            spec["volumeName"] = obj.volume_name
        status["phase"] = obj.phase
        if obj.annotations:
            manifest.setdefault("metadata", {})["annotations"] = dict(obj.annotations)
    return manifest


def objects_apply_from_scheduler(*, cluster: Cluster, objects: Sequence[KubeObject]) -> None:
    """The PV and PVC updates the volume binder and the PV controller make (claimRef,
    volumeName, phase, annotations), and the volumes the controller provisions."""
    with transaction.atomic():
        for obj in objects:
            if not isinstance(obj, PersistentVolume | PersistentVolumeClaim):
                raise ServiceError([f"the scheduler does not write {kind_of(obj)} objects"])
            row = _rows_by_key(cluster, kind_of(obj), [obj.name]).get(obj.key)
            if row is None and isinstance(obj, PersistentVolume):
                _create_row(cluster, obj)
                continue
            if row is None:
                raise ObjectNotFound(
                    [f"{_QUALIFIED_RESOURCES[kind_of(obj)]} {go_quote(obj.name)} not found"]
                )
            manifest = _scheduler_manifest(obj, row.manifest)
            if manifest != row.manifest:
                _decode(manifest)
                _update_row(cluster, row, manifest, {})
