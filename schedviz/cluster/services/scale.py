"""Scaling a workload (``kubectl scale``): its replicas set, and its pods created or deleted by
its controller's rules (services.workloads) in the same transaction."""

from __future__ import annotations

import copy

from schedviz.cluster.models import KIND_MODELS, WORKLOAD_KINDS, Cluster, KubeResource
from schedviz.cluster.services.apply import ApplyResult, _apply
from schedviz.cluster.services.errors import Conflict, ObjectNotFound, ServiceError
from schedviz.cluster.services.stored import _QUALIFIED_RESOURCES, _decode, _manager
from schedviz.cluster.services.workloads import controller_of
from schedviz.kube.errors import go_quote
from schedviz.kube.load import Manifests

# The kinds with a scale subresource (DaemonSets have none; Jobs scale through parallelism).
SCALABLE_KINDS = ("Deployment", "ReplicaSet", "ReplicationController", "StatefulSet")


def _workload_row(cluster: Cluster, kind: str, namespace: str, name: str) -> KubeResource:
    row: KubeResource | None = (
        _manager(KIND_MODELS[kind])
        .filter(cluster=cluster, namespace=namespace or "default", name=name)
        .first()
    )
    if row is None:
        raise ObjectNotFound([f"{_QUALIFIED_RESOURCES[kind]} {go_quote(name)} not found"])
    return row


def workload_sync(*, cluster: Cluster, kind: str, namespace: str, name: str) -> ApplyResult:
    """The workload's controller once more over the stored state: what it creates now (an
    OrderedReady StatefulSet's next ordinal, once the one before is bound). The runner's write,
    so it starts no runner."""
    if kind not in WORKLOAD_KINDS:
        raise ServiceError([f"{kind} is not a workload kind"])
    row = _workload_row(cluster, kind, namespace, name)
    return _apply(cluster, Manifests(objects=[_decode(row.manifest)]), start_runner=False)


def workload_scale(
    *, cluster: Cluster, kind: str, namespace: str, name: str, replicas: int
) -> ApplyResult:
    """Sets the workload's ``spec.replicas``; its pods follow. ServiceError names the field;
    Conflict for a ReplicaSet a Deployment manages (its replicas are the Deployment's)."""
    if kind not in SCALABLE_KINDS:
        raise ServiceError(
            [f"{kind or 'the kind'} cannot be scaled: one of {', '.join(SCALABLE_KINDS)}"]
        )
    if isinstance(replicas, bool) or not isinstance(replicas, int) or replicas < 0:
        raise ServiceError(["spec.replicas: Invalid value: must be greater than or equal to 0"])
    row = _workload_row(cluster, kind, namespace, name)
    owner = controller_of(row.manifest)
    if owner is not None and owner[0] == "Deployment":
        # The Deployment controller would scale it back to the Deployment's replicas at once:
        # a count of its own is a state Kubernetes never keeps.
        raise Conflict(
            [
                f"ReplicaSet {namespace or 'default'}/{name} is managed by Deployment "
                f"{namespace or 'default'}/{owner[1]}: scale the Deployment"
            ]
        )
    manifest = copy.deepcopy(row.manifest)
    manifest.setdefault("spec", {})["replicas"] = replicas
    return _apply(cluster, Manifests(objects=[_decode(manifest)]))
