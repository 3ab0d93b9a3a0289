"""Objects as stored: the manifest kept, the indexed row fields, the kinds in the order they are
applied and exported, and reading stored rows by name.
"""

from __future__ import annotations

import copy
from collections.abc import Iterable, Sequence
from typing import Any

from django.db import connection, models

from schedviz.cluster.models import (
    KIND_MODELS,
    Change,
    Cluster,
    KubeResource,
)
from schedviz.cluster.services.errors import ServiceError
from schedviz.kube.decode import KINDS, decode_object
from schedviz.kube.errors import (
    DocumentError,
    InvalidObjectError,
    ManifestError,
)
from schedviz.kube.objects import (
    KubeObject,
    Pod,
)
from schedviz.kube.objects import Node as KubeNode
from schedviz.kube.resources import pod_requests, to_int

# Applied and exported in this order, so that what an object refers to comes first.
KIND_ORDER = (
    "Namespace",
    "PriorityClass",
    "RuntimeClass",
    "StorageClass",
    "CSINode",
    "PersistentVolume",
    "PersistentVolumeClaim",
    "Node",
    "PodDisruptionBudget",
    "Service",
    "Deployment",
    "ReplicaSet",
    "ReplicationController",
    "StatefulSet",
    "DaemonSet",
    "Job",
    "Pod",
    # After the pods: applied again, the stored pods are not defaulted again, and a quota
    # counts them as its controller would.
    "LimitRange",
    "ResourceQuota",
)
_API_VERSIONS = {kind: api_version for (api_version, kind) in KINDS}
_QUALIFIED_RESOURCES = {kind: info.qualified_resource for (_, kind), info in KINDS.items()}


def _manager(model: type[KubeResource]) -> models.Manager[Any]:
    """The model's manager (the abstract base's type does not name one)."""
    return model._default_manager


def kind_of(obj: KubeObject) -> str:
    return type(obj).__name__


def _namespace_of(obj: KubeObject) -> str:
    """The namespace of a namespaced object ("" for the cluster-scoped kinds, which have none)."""
    namespace: str = getattr(obj, "namespace", "")
    return namespace


def _type_name(kind: str) -> str:
    """How kubectl names a kind in its output: ``pod``, ``priorityclass.scheduling.k8s.io``."""
    group = KINDS[(_API_VERSIONS[kind], kind)].group
    return f"{kind.lower()}.{group}" if group else kind.lower()


def _stored_manifest(obj: KubeObject) -> dict[str, Any]:
    """The manifest as stored: as submitted, with the request's namespace and what admission set."""
    manifest = copy.deepcopy(obj.manifest)
    metadata = manifest.setdefault("metadata", {})
    metadata["name"] = obj.name
    namespace = _namespace_of(obj)
    if namespace:
        metadata["namespace"] = namespace
    if isinstance(obj, Pod):
        spec = manifest.setdefault("spec", {})
        if obj.priority_class_name:
            spec["priorityClassName"] = obj.priority_class_name
        if obj.priority is not None:
            spec["priority"] = obj.priority
        if obj.preemption_policy is not None:
            spec["preemptionPolicy"] = obj.preemption_policy
    return manifest


def _condition_dict(condition: Any) -> dict[str, Any]:
    out = {"type": condition.type, "status": condition.status}
    if condition.reason:
        out["reason"] = condition.reason
    if condition.message:
        out["message"] = condition.message
    return out


def pod_request_amounts(pod: Pod) -> dict[str, int]:
    """The pod's requests as the Pod row keeps them: integers per resource."""
    return {name: to_int(name, amount) for name, amount in pod_requests(pod).items()}


def node_allocatable_amounts(node: KubeNode) -> dict[str, int]:
    """The node's allocatable as the Node row keeps it: integers per resource."""
    return {name: to_int(name, quantity.amount) for name, quantity in node.allocatable.items()}


def _row_fields(obj: KubeObject) -> dict[str, Any]:
    """The indexed columns of the object's row."""
    fields: dict[str, Any] = {"name": obj.name}
    namespace = _namespace_of(obj)
    if namespace:
        fields["namespace"] = namespace
    if isinstance(obj, Pod):
        fields.update(
            node_name=obj.node_name,
            phase=obj.phase,
            priority=obj.effective_priority,
            scheduler_name=obj.scheduler_name,
            nominated_node_name=obj.nominated_node_name,
            conditions=[_condition_dict(c) for c in obj.conditions],
            requests=pod_request_amounts(obj),
        )
        fields["admission"] = list(obj.admitted_changes)
    elif isinstance(obj, KubeNode):
        fields.update(
            unschedulable=obj.unschedulable,
            labels=dict(obj.labels),
            taints=[
                {"key": t.key, **({"value": t.value} if t.value else {}), "effect": t.effect}
                for t in obj.taints
            ],
            allocatable=node_allocatable_amounts(obj),
        )
    return fields


def _decode(manifest: dict[str, Any]) -> KubeObject:
    """decode_object, its failure a ServiceError."""
    try:
        return decode_object(manifest)
    except (InvalidObjectError, DocumentError) as error:
        raise ServiceError([str(error)]) from None


def _carry_over(stored: dict[str, Any], incoming: dict[str, Any]) -> dict[str, Any]:
    """What an update without status (or a pod update without nodeName) keeps of the stored one."""
    merged = copy.deepcopy(incoming)
    if "status" not in merged and "status" in stored:
        merged["status"] = copy.deepcopy(stored["status"])
    bound_to = (stored.get("spec") or {}).get("nodeName")
    if stored.get("kind") == "Pod" and bound_to and not (merged.get("spec") or {}).get("nodeName"):
        merged.setdefault("spec", {})["nodeName"] = bound_to
    return merged


# Past this many names, every row of the kind is read rather than a long IN (...) list, which
# SQLite limits to 32766 parameters.
_MAX_NAMES_IN_QUERY = 1000


def _rows_by_key(cluster: Cluster, kind: str, names: Iterable[str]) -> dict[str, KubeResource]:
    """The stored rows of the kind among those names (and maybe more), by key."""
    wanted = set(names)
    rows = _manager(KIND_MODELS[kind]).filter(cluster=cluster)
    if len(wanted) <= _MAX_NAMES_IN_QUERY:
        rows = rows.filter(name__in=wanted)
    return {row.key: row for row in rows}


def _append_changes(
    cluster: Cluster, entries: Sequence[tuple[str, str, str, str, dict[str, Any]]]
) -> list[Change]:
    """One Change row per (kind, namespace, name, type, manifest), in order, ids assigned."""
    changes = Change.objects.bulk_create(
        [
            Change(
                cluster=cluster,
                kind=kind,
                namespace=namespace,
                name=name,
                type=change_type,
                manifest=manifest,
            )
            for kind, namespace, name, change_type, manifest in entries
        ]
    )
    # SQLite (3.35+) and PostgreSQL return the new ids, which become resourceVersions.
    assert all(change.id is not None for change in changes)
    return changes


def _manifest_errors(error: ManifestError) -> list[str]:
    return [str(e) for e in error.errors]


def _lock(cluster: Cluster) -> None:
    """Serializes writers of one cluster. Not on SQLite, which serializes all writers (its
    transactions begin IMMEDIATE, settings.DATABASES) and has no row locks: the query would
    only hold its write lock longer."""
    if not connection.features.has_select_for_update:
        return
    list(Cluster.objects.select_for_update().filter(id=cluster.id).values_list("id", flat=True))
