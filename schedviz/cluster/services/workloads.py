"""Workloads in the live cluster: what their controllers create when one is applied, scaled or
deleted, written in the same transaction as the request, each object with its Change row.

The pods come from ``schedviz.controllers.workloads``, as ``manage.py simulate`` makes
them. A workload's pods are those whose controller ownerReference carries its uid
(upstream's controllers adopt by selector too; here only what a controller made is its own).
Scaling down deletes pods in the order of pkg/controller/replicaset ``getPodsToDelete``
(``schedviz.controllers.controller_utils.pods_to_delete``, as ``simulate`` ranks them):
unscheduled before scheduled, then by phase, readiness, ``controller.kubernetes.io/
pod-deletion-cost``, pods doubled up on a node with their siblings (a Deployment's other
ReplicaSets' too) first, then the newest first on a logarithmic scale; a pod was created when
its manifest's ``metadata.creationTimestamp`` says, else when its Change row was written. A
StatefulSet drops its highest ordinals.

A finished Job (Complete or Failed) gets no pod, and the successes a Job's status counts are
taken off its completions (``job_active_count``); daemon and stateful pods carry the
controllers' revision labels, as in ``simulate``.

Deliberately different: no rollout (a Deployment applied again with another template keeps its
ReplicaSet), DaemonSets and Jobs create their pods once (no node added later gets a daemon pod,
no Job completes): the controllers that act over time (``schedviz.controllers.manager``) run in
``simulate`` only. An OrderedReady StatefulSet's next ordinal is created once the one before
is bound (the runner asks for it: ``workload_sync``), as ``simulate`` does.
"""

from __future__ import annotations

import copy
import dataclasses
import time
from collections.abc import Iterable, Sequence
from datetime import datetime

from schedviz.cluster.models import KIND_MODELS, WORKLOAD_KINDS, Change, Cluster, KubeResource
from schedviz.cluster.models import Node as NodeRow
from schedviz.cluster.models import Pod as PodRow
from schedviz.cluster.services.stored import _manager, kind_of
from schedviz.controllers.controller_utils import Times
from schedviz.controllers.controller_utils import pods_to_delete as ranked_pods_to_delete
from schedviz.controllers.workloads import (
    DESIRED_REPLICAS_ANNOTATION,
    daemon_set_pods,
    job_pods,
    replica_pods,
    replica_set_for,
    stateful_set_claims,
    stateful_set_pod,
)
from schedviz.kube.decode import decode_object
from schedviz.kube.names import NameGenerator
from schedviz.kube.objects import (
    DaemonSet,
    Deployment,
    Job,
    KubeObject,
    Node,
    Pod,
    ReplicaSet,
    ReplicationController,
    StatefulSet,
    Workload,
)


def controller_uid(manifest: dict[str, object]) -> str:
    """The uid of the controller ownerReference of a stored manifest ("" when none)."""
    metadata = manifest.get("metadata")
    owners = metadata.get("ownerReferences") if isinstance(metadata, dict) else None
    for owner in owners if isinstance(owners, list) else []:
        if isinstance(owner, dict) and owner.get("controller"):
            return str(owner.get("uid", ""))
    return ""


def controller_of(manifest: dict[str, object]) -> tuple[str, str] | None:
    """The kind and name of the controller ownerReference of a stored manifest (None: none)."""
    metadata = manifest.get("metadata")
    owners = metadata.get("ownerReferences") if isinstance(metadata, dict) else None
    for owner in owners if isinstance(owners, list) else []:
        if isinstance(owner, dict) and owner.get("controller"):
            return str(owner.get("kind", "")), str(owner.get("name", ""))
    return None


def _stored_owned(cluster: Cluster, kind: str, namespace: str) -> dict[str, list[KubeResource]]:
    """The stored rows of ``kind`` in the namespace, by their controller's uid."""
    owned: dict[str, list[KubeResource]] = {}
    for row in (
        _manager(KIND_MODELS[kind]).filter(cluster=cluster, namespace=namespace).order_by("id")
    ):
        uid = controller_uid(row.manifest)
        if uid:
            owned.setdefault(uid, []).append(row)
    return owned


def _given_owned(objects: Iterable[KubeObject], uid: str) -> list[KubeObject]:
    return [o for o in objects if controller_uid(getattr(o, "manifest", {})) == uid]


def _nodes(cluster: Cluster, objects: Sequence[KubeObject]) -> list[Node]:
    given = {o.name: o for o in objects if isinstance(o, Node)}
    stored = []
    for row in NodeRow.objects.filter(cluster=cluster).exclude(name__in=list(given)):
        node = decode_object(row.manifest)
        assert isinstance(node, Node)
        stored.append(node)
    return [*stored, *given.values()]


def created_for_workloads(
    cluster: Cluster, objects: Sequence[KubeObject], seed: int
) -> list[KubeObject]:
    """What the controllers create for the workloads among ``objects``: the objects they own
    that exist neither stored nor among ``objects`` (a Deployment's ReplicaSet, the missing
    replicas, a StatefulSet's missing ordinals and their claims, a new DaemonSet's or Job's
    pods)."""
    names = NameGenerator(seed)
    owned: dict[tuple[str, str], dict[str, list[KubeResource]]] = {}

    def stored_owned(kind: str, namespace: str) -> dict[str, list[KubeResource]]:
        # Read once per kind and namespace: nothing is written until the caller has them all.
        if (kind, namespace) not in owned:
            owned[kind, namespace] = _stored_owned(cluster, kind, namespace)
        return owned[kind, namespace]

    created: list[KubeObject] = []
    pending: list[KubeObject] = [o for o in objects if kind_of(o) in WORKLOAD_KINDS]
    nodes: list[Node] | None = None
    while pending:
        workload = pending.pop(0)
        assert isinstance(workload, Workload)
        everything = [*objects, *created]
        if isinstance(workload, Deployment):
            if _given_owned(everything, workload.uid):
                continue
            stored = stored_owned("ReplicaSet", workload.namespace).get(workload.uid)
            replica_set = _scaled(stored[-1], workload.replicas) if stored else None
            if replica_set is None and not stored:
                replica_set = replica_set_for(workload)
            if replica_set is not None:
                created.append(replica_set)
                pending.append(replica_set)
            continue
        stored_pods = stored_owned("Pod", workload.namespace).get(workload.uid, [])
        given_pods = _given_owned(everything, workload.uid)
        have = len(stored_pods) + len(given_pods)
        if isinstance(workload, ReplicaSet | ReplicationController):
            if have < workload.replicas:
                created.extend(replica_pods(workload, workload.replicas - have, names))
        elif isinstance(workload, StatefulSet):
            created.extend(_missing_ordinals(workload, stored_pods, given_pods))
        elif have == 0 and isinstance(workload, DaemonSet):
            nodes = nodes if nodes is not None else _nodes(cluster, objects)
            created.extend(daemon_set_pods(workload, nodes, names))
        elif have == 0 and isinstance(workload, Job):
            created.extend(job_pods(workload, names))
    return created


def _missing_ordinals(
    sts: StatefulSet, stored: Sequence[KubeResource], given: Sequence[KubeObject]
) -> list[KubeObject]:
    """The ordinals below ``replicas`` that have no pod, with their claims; OrderedReady
    creates only the lowest, and only once every ordinal before it runs (here: is bound), as
    the StatefulSet controller's monotonic update does."""
    bound = {r.name: bool(getattr(r, "node_name", "")) for r in stored}
    bound.update({o.name: bool(getattr(o, "node_name", "")) for o in given})
    ordered = sts.pod_management_policy == "OrderedReady"
    created: list[KubeObject] = []
    for ordinal in range(sts.replicas):
        name = f"{sts.name}-{ordinal}"
        if name in bound:
            if ordered and not bound[name]:
                break
            continue
        created.extend(stateful_set_claims(sts, ordinal))
        created.append(stateful_set_pod(sts, ordinal))
        if ordered:
            break
    return created


def _scaled(row: KubeResource, replicas: int) -> ReplicaSet | None:
    """The stored ReplicaSet of a Deployment with the Deployment's replicas, as its
    controller scales it; None when it has them already."""
    manifest = copy.deepcopy(row.manifest)
    if manifest.get("spec", {}).get("replicas") == replicas:
        return None
    manifest.setdefault("spec", {})["replicas"] = replicas
    annotations = manifest.setdefault("metadata", {}).setdefault("annotations", {})
    annotations[DESIRED_REPLICAS_ANNOTATION] = str(replicas)
    replica_set = decode_object(manifest)
    assert isinstance(replica_set, ReplicaSet)
    return replica_set


def pods_to_delete(cluster: Cluster, rows: Sequence[PodRow], workload: Workload) -> list[PodRow]:
    """The pods a scale-down to ``workload.replicas`` deletes: a StatefulSet's highest
    ordinals; otherwise the first of the pods ranked as getPodsToDelete ranks them (the
    module docstring)."""
    extra = len(rows) - workload.replicas
    if extra <= 0:
        return []
    if isinstance(workload, StatefulSet):
        prefix = f"{workload.name}-"

        def ordinal(row: PodRow) -> int:
            suffix = row.name[len(prefix) :]
            return int(suffix) if suffix.isdigit() else -1

        return sorted(rows, key=ordinal, reverse=True)[:extra]
    pods = {row.pk: _stored_pod(row) for row in rows}
    siblings = _sibling_uids(cluster, workload)
    related = (
        [pods.get(row.pk) or _stored_pod(row) for row in _pods_owned(cluster, workload, siblings)]
        if siblings
        else list(pods.values())
    )
    every = [*pods.values(), *related]
    times = Times(created=_creation_times(cluster, every))
    row_of = {id(pod): row for row, pod in zip(rows, pods.values(), strict=True)}
    ranked = ranked_pods_to_delete(list(pods.values()), related, extra, times, time.time())
    return [row_of[id(pod)] for pod in ranked]


def _stored_pod(row: PodRow) -> Pod:
    pod = decode_object(row.manifest)
    assert isinstance(pod, Pod)
    return dataclasses.replace(pod, node_name=row.node_name) if row.node_name else pod


def _sibling_uids(cluster: Cluster, workload: Workload) -> set[str]:
    """getIndirectlyRelatedPods' owners: a Deployment's ReplicaSets (the workload's among
    them); none for a ReplicaSet of its own, whose related pods are its own."""
    owner = controller_uid(workload.manifest)
    if not owner or not isinstance(workload, ReplicaSet):
        return set()
    replica_sets = _manager(KIND_MODELS["ReplicaSet"]).filter(
        cluster=cluster, namespace=workload.namespace
    )
    return {workload.uid} | {
        (row.manifest.get("metadata") or {}).get("uid", "")
        for row in replica_sets
        if controller_uid(row.manifest) == owner
    }


def _pods_owned(cluster: Cluster, workload: Workload, uids: set[str]) -> list[PodRow]:
    """The rows of the pods whose controller is one of ``uids``."""
    return [
        row
        for row in PodRow.objects.filter(cluster=cluster, namespace=workload.namespace)
        if controller_uid(row.manifest) in uids
    ]


def _creation_times(cluster: Cluster, pods: Iterable[Pod]) -> dict[str, float]:
    """Each pod's creationTimestamp (epoch seconds): its manifest's, else its last ADDED
    Change row's."""
    created: dict[str, float] = {}
    unstamped: dict[tuple[str, str], str] = {}
    for pod in pods:
        stamp = (pod.manifest.get("metadata") or {}).get("creationTimestamp")
        try:
            created[pod.uid] = datetime.fromisoformat(str(stamp)).timestamp()
        except ValueError:
            unstamped[(pod.namespace, pod.name)] = pod.uid
    if unstamped:
        rows = Change.objects.filter(
            cluster=cluster,
            kind="Pod",
            type=Change.Type.ADDED,
            name__in={name for _, name in unstamped},
        ).values_list("namespace", "name", "created_at")
        for namespace, name, at in rows:
            uid = unstamped.get((namespace, name))
            if uid is not None:
                created[uid] = max(created.get(uid, 0.0), at.timestamp())
    return created
