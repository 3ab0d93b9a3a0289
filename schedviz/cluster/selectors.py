"""Reads of the cluster: what the API server lists and gets, and the scheduler's records.

Selectors never write. Those that take a user check ownership: a cluster is seen by its owner,
and a cluster without an owner by everyone (for now).
"""

from __future__ import annotations

from collections.abc import Collection
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from typing import Any

from django.contrib.auth.models import AnonymousUser, User
from django.db.models import Max, Q, QuerySet
from django.utils import timezone

from schedviz.cluster.models import (
    KIND_MODELS,
    WORKLOAD_KINDS,
    ApiToken,
    Change,
    Cluster,
    Cycle,
    DebugSession,
    Event,
    Lease,
    Node,
    Pod,
    Profile,
    ShareLink,
)
from schedviz.cluster.queue_state import clusters_due
from schedviz.cluster.services import (
    SCALABLE_KINDS,
    ObjectNotFound,
    api_token_hash,
    scheduler_config_document,
)
from schedviz.cluster.services.workloads import controller_of, controller_uid
from schedviz.controllers.workloads import job_active_count
from schedviz.kube.decode import decode_object
from schedviz.kube.errors import go_quote
from schedviz.kube.objects import POD_FAILED, POD_SUCCEEDED, RESOURCE_PODS, DaemonSet, Job, Workload
from schedviz.kube.objects import Node as KubeNode
from schedviz.kube.objects import Pod as KubePod
from schedviz.kube.resources import pod_requests, to_int
from schedviz.scheduler.apis.config.types import KubeSchedulerConfiguration
from schedviz.scheduler.apis.config.v1 import decode_configuration
from schedviz.scheduler.framework.plugins.registry import new_in_tree_registry

# ---------------------------------------------------------------------------------------------
# Clusters


def _visible(user: User | AnonymousUser | None) -> Q:
    if user is None or not user.is_authenticated:
        return Q(owner__isnull=True)
    return Q(owner__isnull=True) | Q(owner=user)


def cluster_list(*, user: User | AnonymousUser | None) -> QuerySet[Cluster]:
    """The clusters the user may see, by name."""
    return Cluster.objects.filter(_visible(user)).order_by("name", "id")


def cluster_get(
    *, cluster_id: int, user: User | AnonymousUser | None, share_link_ids: Collection[int] = ()
) -> Cluster:
    """The cluster, if the user may see it; ObjectNotFound otherwise (someone else's or none).

    ``share_link_ids``: the read-only links the visitor opened; one of them that is the
    cluster's and not revoked lets the visitor see it too. Only reads may pass them: every
    write takes the owner alone."""
    visible = _visible(user)
    if share_link_ids:
        visible |= Q(
            id__in=ShareLink.objects.filter(
                id__in=list(share_link_ids), revoked_at__isnull=True
            ).values("cluster_id")
        )
    found = Cluster.objects.filter(visible, id=cluster_id).first()
    if found is None:
        raise ObjectNotFound([f"clusters {go_quote(str(cluster_id))} not found"])
    return found


def api_token_user(*, key: str) -> User | None:
    """The active user a token key belongs to, or None."""
    token = ApiToken.objects.select_related("user").filter(key_hash=api_token_hash(key)).first()
    if token is None or not token.user.is_active:
        return None
    return token.user


def share_link_active(*, key: str) -> ShareLink | None:
    """The link a share key opens, if it is not revoked."""
    return (
        ShareLink.objects.select_related("cluster")
        .filter(key_hash=api_token_hash(key), revoked_at__isnull=True)
        .first()
    )


def share_link_cluster(*, key: str) -> Cluster | None:
    """The cluster a share key opens for reading, if the link is not revoked."""
    link = share_link_active(key=key)
    return link.cluster if link is not None else None


def share_link_list(*, cluster: Cluster) -> QuerySet[ShareLink]:
    """The cluster's links that still grant reads, newest first."""
    return ShareLink.objects.filter(cluster=cluster, revoked_at__isnull=True).order_by("-id")


def scheduler_configuration(*, cluster: Cluster) -> KubeSchedulerConfiguration:
    """The configuration the cluster's scheduler runs with (the v1 default without profiles)."""
    return decode_configuration(
        scheduler_config_document(cluster=cluster), known_plugins=set(new_in_tree_registry())
    )


def profile_list(*, cluster: Cluster) -> QuerySet[Profile]:
    return Profile.objects.filter(cluster=cluster)


# ---------------------------------------------------------------------------------------------
# Objects


def pod_list(
    *,
    cluster: Cluster,
    namespace: str | None = None,
    node_name: str | None = None,
    phase: str | None = None,
    bound: bool | None = None,
    scheduler_name: str | None = None,
) -> QuerySet[Pod]:
    """The cluster's pods by namespace and name; each filter given narrows the list."""
    pods = Pod.objects.filter(cluster=cluster)
    if namespace is not None:
        pods = pods.filter(namespace=namespace)
    if node_name is not None:
        pods = pods.filter(node_name=node_name)
    if phase is not None:
        pods = pods.filter(phase=phase)
    if bound is not None:
        pods = pods.exclude(node_name="") if bound else pods.filter(node_name="")
    if scheduler_name is not None:
        pods = pods.filter(scheduler_name=scheduler_name)
    return pods.order_by("namespace", "name")


def pod_get(*, cluster: Cluster, namespace: str, name: str) -> Pod:
    found = Pod.objects.filter(cluster=cluster, namespace=namespace, name=name).first()
    if found is None:
        raise ObjectNotFound([f"pods {go_quote(name)} not found"])
    return found


@dataclass(slots=True)
class NodeSummary:
    """A node with what its bound pods request against what it can allocate.

    Amounts are the integers the scheduler keeps: millicores for cpu, bytes for memory, a count
    for pods. Terminated pods (Succeeded, Failed) request nothing, as in the scheduler's cache.
    """

    row: Node
    allocatable: dict[str, int] = field(default_factory=dict)
    requested: dict[str, int] = field(default_factory=dict)
    pod_count: int = 0

    @property
    def name(self) -> str:
        return self.row.name


def _amounts(node: KubeNode) -> dict[str, int]:
    return {name: to_int(name, quantity.amount) for name, quantity in node.allocatable.items()}


def node_list(*, cluster: Cluster) -> list[NodeSummary]:
    """Every node by name, with requested and allocatable resource totals."""
    summaries: dict[str, NodeSummary] = {}
    for row in Node.objects.filter(cluster=cluster).order_by("name"):
        decoded = decode_object(row.manifest)
        assert isinstance(decoded, KubeNode)
        summaries[row.name] = NodeSummary(row=row, allocatable=_amounts(decoded))
    bound = (
        Pod.objects.filter(cluster=cluster)
        .exclude(node_name="")
        .exclude(phase__in=[POD_SUCCEEDED, POD_FAILED])
        .values_list("node_name", "manifest")
    )
    for node_name, manifest in bound:
        summary = summaries.get(node_name)
        if summary is None:
            continue
        pod = decode_object(manifest)
        assert isinstance(pod, KubePod)
        summary.pod_count += 1
        for name, amount in pod_requests(pod, use_status_resources=True).items():
            summary.requested[name] = summary.requested.get(name, 0) + to_int(name, amount)
    for summary in summaries.values():
        if summary.pod_count:
            summary.requested[RESOURCE_PODS] = summary.pod_count
    return list(summaries.values())


# ---------------------------------------------------------------------------------------------
# The scheduler's records


def cycles_for_pod(*, cluster: Cluster, namespace: str, name: str) -> list[dict[str, Any]]:
    """Every cycle that tried the pod, as traces (docs/trace-format.md), oldest first."""
    rows = Cycle.objects.filter(cluster=cluster, pod_namespace=namespace, pod_name=name)
    return [row.trace() for row in rows.order_by("number")]


def cycle_list(*, cluster: Cluster, after: int = 0, limit: int = 500) -> QuerySet[Cycle]:
    """Cycles numbered above ``after``, oldest first, at most ``limit`` (summary columns only)."""
    return (
        Cycle.objects.filter(cluster=cluster, number__gt=after)
        .defer("body")
        .order_by("number")[:limit]
    )


def cycle_traces_since(
    *, cluster: Cluster, after: int = 0, limit: int = 500
) -> list[dict[str, Any]]:
    """The traces of the cycles numbered above ``after``, oldest first, at most ``limit``."""
    rows = Cycle.objects.filter(cluster=cluster, number__gt=after).order_by("number")[:limit]
    return [row.trace() for row in rows]


def cycle_get(*, cluster: Cluster, number: int) -> dict[str, Any]:
    """One cycle's trace; ObjectNotFound if there is no such cycle."""
    row = Cycle.objects.filter(cluster=cluster, number=number).first()
    if row is None:
        raise ObjectNotFound([f"cycles {go_quote(str(number))} not found"])
    return row.trace()


def events_for_object(*, cluster: Cluster, namespace: str, name: str) -> QuerySet[Event]:
    """The events recorded about one object, oldest first."""
    return Event.objects.filter(
        cluster=cluster, object_namespace=namespace, object_name=name
    ).order_by("id")


def change_log_since(
    *, cluster: Cluster, resource_version: int, limit: int | None = None
) -> QuerySet[Change]:
    """The changes after ``resource_version``, in order: the watch stream from that point."""
    changes = Change.objects.filter(cluster=cluster, id__gt=resource_version).order_by("id")
    return changes[:limit] if limit is not None else changes


def latest_resource_version(*, cluster: Cluster) -> int:
    """The id of the cluster's latest change (0 without any): where a fresh list stands."""
    latest = Change.objects.filter(cluster=cluster).order_by("-id").values_list("id", flat=True)
    return latest.first() or 0


# ---------------------------------------------------------------------------------------------
# The step debugger


def debug_session_get(*, cluster: Cluster) -> DebugSession | None:
    """The cluster's debugger session (the last one, when none is active), if any."""
    return DebugSession.objects.filter(cluster=cluster).first()


# ---------------------------------------------------------------------------------------------
# The lease (leader election): who runs the cluster, read from its Lease row

# Clocks of the machines of one deployment agree within this many seconds.
CLOCK_SKEW_MARGIN = 1.0


def lease_expired(lease: Lease, now: datetime) -> bool:
    return (
        lease.renewed_at is None
        or lease.renewed_at + timedelta(seconds=lease.duration_seconds) < now
    )


def lease_held(*, cluster_id: int) -> bool:
    """Whether a runner holds the cluster's lease and has renewed it in time."""
    lease = Lease.objects.filter(cluster_id=cluster_id).first()
    return lease is not None and bool(lease.holder) and not lease_expired(lease, timezone.now())


def runner_work_waiting(*, cluster_id: int, after_change_id: int) -> bool:
    """Whether a runner that stops now leaves work behind: a change after the last it applied,
    a step of the paused cluster or a step into the debugger it has not taken. A runner reads
    steps and debug requests only every so often, so one asked for while it was stopping (its
    lease still held: no new runner was started for it) is found here or nowhere."""
    return (
        Change.objects.filter(cluster_id=cluster_id, id__gt=after_change_id).exists()
        or Cluster.objects.filter(pk=cluster_id, run_state=Cluster.RunState.PAUSED)
        .filter(Q(pending_steps__gt=0) | Q(debug_session__state=DebugSession.State.REQUESTED))
        .exists()
    )


RUNNER_RUNNING, RUNNER_IDLE, RUNNER_OFFLINE = "running", "idle", "offline"


def lease_state(*, cluster_id: int) -> str:
    """What the dashboard says of the cluster's runner, from the lease alone (a dead runner
    sends nothing): running (held, renewed in time), offline (held, but not renewed in time:
    its runner died or hangs, until another takes over) or idle (no holder)."""
    lease = Lease.objects.filter(cluster_id=cluster_id).first()
    if lease is None or not lease.holder:
        return RUNNER_IDLE
    return RUNNER_OFFLINE if lease_expired(lease, timezone.now()) else RUNNER_RUNNING


def ran_since(*, cluster_id: int, when: datetime) -> bool:
    """Whether a runner gave the lease up after ``when`` (with a margin for clock skew between
    machines). Having looked for new changes after giving it up, that runner saw every change
    committed before ``when``."""
    lease = Lease.objects.filter(cluster_id=cluster_id).first()
    return (
        lease is not None
        and not lease.holder
        and lease.renewed_at is not None
        and lease.renewed_at > when + timedelta(seconds=CLOCK_SKEW_MARGIN)
    )


def orphaned_clusters() -> list[int]:
    """Clusters whose runner died holding the lease: it has a holder but has expired."""
    now = timezone.now()
    return [
        lease.cluster_id for lease in Lease.objects.exclude(holder="") if lease_expired(lease, now)
    ]


def stranded_clusters(*, cluster_ids: list[int] | None = None) -> list[int]:
    """Clusters (among ``cluster_ids``; None: all) with a change committed after their last
    runner stopped (or never run): the task that would have run them was lost, sent while the
    broker was down or queued in a Redis that restarted."""
    clusters = (
        Cluster.objects.all() if cluster_ids is None else Cluster.objects.filter(pk__in=cluster_ids)
    )
    rows = (
        clusters.annotate(last_change=Max("changes__created_at"))
        .filter(last_change__isnull=False)
        .values_list("pk", "last_change", "lease__holder", "lease__renewed_at")
    )
    return [
        cluster_id
        for cluster_id, last_change, holder, released_at in rows
        if not holder and (released_at is None or last_change > released_at)
    ]


def clusters_changed_after(*, change_id: int) -> tuple[int, list[int]]:
    """The newest Change row's id, and the clusters with a change after ``change_id`` (a cheap
    look at the change log by its primary key, for a process that watches for changes others
    committed)."""
    newest = Change.objects.aggregate(newest=Max("id"))["newest"] or 0
    if newest <= change_id:
        return newest, []
    clusters = (
        Change.objects.filter(id__gt=change_id, id__lte=newest)
        .values_list("cluster_id", flat=True)
        .distinct()
    )
    return newest, sorted(clusters)


def cycle_newest_number(*, cluster_id: int) -> int:
    """The number of the cluster's newest stored cycle (0 before any)."""
    newest = Cycle.objects.filter(cluster_id=cluster_id).aggregate(newest=Max("number"))["newest"]
    return int(newest or 0)


def overdue_clusters(*, now: float, margin: float = 2.0) -> list[int]:
    """Clusters whose runner asked to be woken up more than ``margin`` seconds before ``now``
    (Unix seconds) with no runner holding them now: the wake-up task was lost (a broker that
    restarted) or is stuck behind others."""
    due = set(clusters_due(now=now - margin))
    if not due:
        return []
    held = set(
        Lease.objects.filter(cluster_id__in=due)
        .exclude(holder="")
        .values_list("cluster_id", flat=True)
    )
    return sorted(due - held)


def seconds_until_held_leases_expire(cluster_id: int | None = None) -> float:
    """How long until every lease held now (of one cluster, or all) has expired unless
    renewed."""
    now = timezone.now()
    leases = Lease.objects.exclude(holder="")
    if cluster_id is not None:
        leases = leases.filter(cluster_id=cluster_id)
    remaining = [
        lease.duration_seconds
        if lease.renewed_at is None
        else (lease.renewed_at - now).total_seconds() + lease.duration_seconds
        for lease in leases
    ]
    return max([0.0, *remaining])


@dataclass(frozen=True, slots=True)
class WorkloadSummary:
    """One workload: its replicas as asked for, the pods its controller made, those bound."""

    kind: str
    namespace: str
    name: str
    desired: int
    created: int
    bound: int
    scalable: bool
    # "Deployment/<name>" for a ReplicaSet a Deployment manages (scaled through it only).
    managed_by: str = ""

    @property
    def key(self) -> str:
        return f"{self.kind}/{self.namespace}/{self.name}"

    def to_json(self) -> dict[str, Any]:
        listed: dict[str, Any] = {
            "kind": self.kind,
            "namespace": self.namespace,
            "name": self.name,
            "replicas": self.desired,
            "created": self.created,
            "bound": self.bound,
            "scalable": self.scalable,
        }
        if self.managed_by:
            listed["managedBy"] = self.managed_by
        return listed


def workload_list(*, cluster: Cluster) -> list[WorkloadSummary]:
    """Every workload by kind, namespace and name, with its pods counted (a Deployment's are
    those of its ReplicaSets)."""
    pods_by_owner: dict[str, list[bool]] = {}
    for manifest, node_name in Pod.objects.filter(cluster=cluster).values_list(
        "manifest", "node_name"
    ):
        owner = controller_uid(manifest)
        if owner:
            pods_by_owner.setdefault(owner, []).append(bool(node_name))
    workloads = []
    for kind in WORKLOAD_KINDS:
        for row in (
            KIND_MODELS[kind]._default_manager.filter(cluster=cluster).order_by("namespace", "name")
        ):
            workload = decode_object(row.manifest)
            assert isinstance(workload, Workload)
            workloads.append(workload)
    replica_sets_of: dict[str, list[str]] = {}
    for workload in workloads:
        if workload.kind == "ReplicaSet":
            owner = controller_uid(workload.manifest)
            replica_sets_of.setdefault(owner, []).append(workload.uid)
    summaries = []
    for workload in workloads:
        uids = replica_sets_of.get(workload.uid, []) if workload.kind == "Deployment" else []
        bound = [b for uid in [workload.uid, *uids] for b in pods_by_owner.get(uid, [])]
        desired = workload.replicas
        if isinstance(workload, Job):
            desired = job_active_count(workload)
        elif isinstance(workload, DaemonSet):
            desired = len(bound)
        controller = controller_of(workload.manifest) if workload.kind == "ReplicaSet" else None
        managed_by = (
            f"Deployment/{controller[1]}" if controller and controller[0] == "Deployment" else ""
        )
        summaries.append(
            WorkloadSummary(
                kind=workload.kind,
                namespace=workload.namespace,
                name=workload.name,
                desired=desired,
                created=len(bound),
                bound=sum(bound),
                scalable=workload.kind in SCALABLE_KINDS and not managed_by,
                managed_by=managed_by,
            )
        )
    return summaries
