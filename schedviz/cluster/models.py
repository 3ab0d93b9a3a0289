"""The cluster as the API server holds it, plus the scheduler's records.

One row per Kubernetes object, keeping the manifest as submitted (after validation and
defaulting) and the fields the scheduler and the UI filter on. ``Change`` is the append-only
change log that plays the watch stream: its id is the resourceVersion, and every write to an
object appends one row in the same transaction. ``Cycle`` keeps one scheduling cycle's trace
(docs/trace-format.md) with indexed summary fields and a compact body (schedviz/scheduler/
trace_codec.py) that refers to a ``NodeOrder``, the node names stored once for every cycle that
walked them in that order. ``Lease`` plays leader
election: exactly one runner schedules a cluster, and ``PendingPods`` keeps the size of its queue.
No business logic lives here: writes go through ``schedviz.cluster.services``, reads through
``schedviz.cluster.selectors``.
"""

from __future__ import annotations

import json
import zlib
from functools import lru_cache
from typing import Any

from django.conf import settings
from django.db import models

from schedviz.scheduler import trace_codec, trace_json
from schedviz.scheduler.trace import CycleTrace


class Cluster(models.Model):
    """A workspace: its objects, scheduler profiles, clock and run state."""

    class ClockMode(models.TextChoices):
        LIVE = "live", "Live (wall clock)"
        VIRTUAL = "virtual", "Virtual (instant)"

    class RunState(models.TextChoices):
        RUNNING = "running", "Running"
        PAUSED = "paused", "Paused"

    name = models.CharField(max_length=100)
    owner = models.ForeignKey(
        settings.AUTH_USER_MODEL,
        null=True,
        blank=True,
        on_delete=models.CASCADE,
        related_name="clusters",
    )
    clock_mode = models.CharField(max_length=10, choices=ClockMode.choices, default=ClockMode.LIVE)
    run_state = models.CharField(max_length=10, choices=RunState.choices, default=RunState.RUNNING)
    # Live clock only: scheduler seconds per wall second.
    speed = models.FloatField(default=1.0)
    # Cycles asked for one at a time while paused (the step button).
    pending_steps = models.PositiveIntegerField(default=0)
    seed = models.BigIntegerField(default=1)
    # The KubeSchedulerConfiguration v1 fields other than profiles (percentageOfNodesToScore,
    # podInitialBackoffSeconds, podMaxBackoffSeconds, extenders...), as v1 YAML keys.
    scheduler_settings = models.JSONField(default=dict, blank=True)
    # The scheduler clock of the last runner (virtual mode continues from it).
    scheduler_time = models.FloatField(default=0.0)
    # Live mode: the clock read ``clock_anchor_time`` at wall time ``clock_anchor_wall`` (Unix
    # seconds) and runs at ``speed`` since (stands still while paused), runner or not
    # (schedviz/cluster/clock.py). Null: not started yet.
    clock_anchor_time = models.FloatField(default=0.0)
    clock_anchor_wall = models.FloatField(null=True, blank=True)
    created_at = models.DateTimeField(auto_now_add=True)
    # The built-in lesson (its slug) the cluster was loaded from; "" for any other cluster.
    lesson = models.CharField(max_length=100, blank=True, default="")

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["owner", "name"], name="cluster_unique_name_per_owner")
        ]
        ordering = ["name"]

    def __str__(self) -> str:
        return self.name


class Profile(models.Model):
    """One scheduler profile, kept as its v1 YAML form (schedulerName, plugins, pluginConfig)."""

    cluster = models.ForeignKey(Cluster, on_delete=models.CASCADE, related_name="profiles")
    scheduler_name = models.CharField(max_length=253)
    position = models.PositiveIntegerField(default=0)
    config = models.JSONField(default=dict)

    class Meta:
        constraints = [
            models.UniqueConstraint(
                fields=["cluster", "scheduler_name"], name="profile_unique_scheduler_name"
            )
        ]
        ordering = ["position", "id"]

    def __str__(self) -> str:
        return self.scheduler_name


class KubeResource(models.Model):
    """What every stored Kubernetes object has."""

    cluster = models.ForeignKey(Cluster, on_delete=models.CASCADE, related_name="+")
    name = models.CharField(max_length=253)
    manifest = models.JSONField()
    # The id of the Change row of the object's last write.
    resource_version = models.BigIntegerField(default=0)

    class Meta:
        abstract = True

    @property
    def key(self) -> str:
        return self.name


class NamespacedResource(KubeResource):
    namespace = models.CharField(max_length=253, default="default")

    class Meta:
        abstract = True

    @property
    def key(self) -> str:
        return f"{self.namespace}/{self.name}"


class Node(KubeResource):
    unschedulable = models.BooleanField(default=False)
    labels = models.JSONField(default=dict)
    taints = models.JSONField(default=list)
    # status.allocatable as integers (millicores, bytes, counts), kept beside the manifest so
    # that pages totalling a zone's capacity read no manifest.
    allocatable = models.JSONField(default=dict)

    class Meta:
        constraints = [models.UniqueConstraint(fields=["cluster", "name"], name="node_unique")]
        ordering = ["name"]


class Pod(NamespacedResource):
    node_name = models.CharField(max_length=253, blank=True, default="")
    phase = models.CharField(max_length=20, default="Pending")
    priority = models.IntegerField(default=0)
    scheduler_name = models.CharField(max_length=253, default="default-scheduler")
    nominated_node_name = models.CharField(max_length=253, blank=True, default="")
    conditions = models.JSONField(default=list)
    # The pod's effective requests (kube.resources.pod_requests) as integers, kept beside the
    # manifest for the same pages.
    requests = models.JSONField(default=dict)
    # What the admission plugins changed when the pod was created, one line each
    # (kube.objects.Pod.admitted_changes), for the pod page.
    admission = models.JSONField(default=list)

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["cluster", "namespace", "name"], name="pod_unique")
        ]
        indexes = [models.Index(fields=["cluster", "node_name"], name="pod_by_node")]
        ordering = ["namespace", "name"]


class Namespace(KubeResource):
    class Meta:
        constraints = [models.UniqueConstraint(fields=["cluster", "name"], name="namespace_unique")]


class PriorityClass(KubeResource):
    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["cluster", "name"], name="priorityclass_unique")
        ]


class PodDisruptionBudget(NamespacedResource):
    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["cluster", "namespace", "name"], name="pdb_unique")
        ]


class PersistentVolume(KubeResource):
    class Meta:
        constraints = [models.UniqueConstraint(fields=["cluster", "name"], name="pv_unique")]


class PersistentVolumeClaim(NamespacedResource):
    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["cluster", "namespace", "name"], name="pvc_unique")
        ]


class StorageClass(KubeResource):
    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["cluster", "name"], name="storageclass_unique")
        ]


class CSINode(KubeResource):
    class Meta:
        constraints = [models.UniqueConstraint(fields=["cluster", "name"], name="csinode_unique")]


class LimitRange(NamespacedResource):
    class Meta:
        constraints = [
            models.UniqueConstraint(
                fields=["cluster", "namespace", "name"], name="limitrange_unique"
            )
        ]


class ResourceQuota(NamespacedResource):
    class Meta:
        constraints = [
            models.UniqueConstraint(
                fields=["cluster", "namespace", "name"], name="resourcequota_unique"
            )
        ]


class RuntimeClass(KubeResource):
    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["cluster", "name"], name="runtimeclass_unique")
        ]


class Service(NamespacedResource):
    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["cluster", "namespace", "name"], name="service_unique")
        ]


class Deployment(NamespacedResource):
    class Meta:
        constraints = [
            models.UniqueConstraint(
                fields=["cluster", "namespace", "name"], name="deployment_unique"
            )
        ]


class ReplicaSet(NamespacedResource):
    class Meta:
        constraints = [
            models.UniqueConstraint(
                fields=["cluster", "namespace", "name"], name="replicaset_unique"
            )
        ]


class ReplicationController(NamespacedResource):
    class Meta:
        constraints = [
            models.UniqueConstraint(
                fields=["cluster", "namespace", "name"], name="replicationcontroller_unique"
            )
        ]


class StatefulSet(NamespacedResource):
    class Meta:
        constraints = [
            models.UniqueConstraint(
                fields=["cluster", "namespace", "name"], name="statefulset_unique"
            )
        ]


class DaemonSet(NamespacedResource):
    class Meta:
        constraints = [
            models.UniqueConstraint(
                fields=["cluster", "namespace", "name"], name="daemonset_unique"
            )
        ]


class Job(NamespacedResource):
    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["cluster", "namespace", "name"], name="job_unique")
        ]


# Kind name (as in kube.objects and manifests) -> model.
KIND_MODELS: dict[str, type[KubeResource]] = {
    "Node": Node,
    "Pod": Pod,
    "Namespace": Namespace,
    "PriorityClass": PriorityClass,
    "PodDisruptionBudget": PodDisruptionBudget,
    "PersistentVolume": PersistentVolume,
    "PersistentVolumeClaim": PersistentVolumeClaim,
    "StorageClass": StorageClass,
    "CSINode": CSINode,
    "LimitRange": LimitRange,
    "ResourceQuota": ResourceQuota,
    "RuntimeClass": RuntimeClass,
    "Service": Service,
    "Deployment": Deployment,
    "ReplicaSet": ReplicaSet,
    "ReplicationController": ReplicationController,
    "StatefulSet": StatefulSet,
    "DaemonSet": DaemonSet,
    "Job": Job,
}
# The kinds whose controllers create pods (schedviz.controllers.workloads).
WORKLOAD_KINDS = (
    "Deployment",
    "ReplicaSet",
    "ReplicationController",
    "StatefulSet",
    "DaemonSet",
    "Job",
)


class Change(models.Model):
    """One object change, in resourceVersion (id) order: the watch stream."""

    class Type(models.TextChoices):
        ADDED = "ADDED"
        MODIFIED = "MODIFIED"
        DELETED = "DELETED"

    id = models.BigAutoField(primary_key=True)
    cluster = models.ForeignKey(Cluster, on_delete=models.CASCADE, related_name="changes")
    kind = models.CharField(max_length=40)
    namespace = models.CharField(max_length=253, blank=True, default="")
    name = models.CharField(max_length=253)
    type = models.CharField(max_length=10, choices=Type.choices)
    # The object after the change; for DELETED, its last state.
    manifest = models.JSONField()
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        indexes = [models.Index(fields=["cluster", "id"], name="change_by_cluster")]
        ordering = ["id"]


class NodeOrder(models.Model):
    """The nodes of a snapshot in the order the scheduler walked them, stored once for every
    Cycle body that refers to it (trace_codec: bodies name nodes by their index in it)."""

    cluster = models.ForeignKey(Cluster, on_delete=models.CASCADE, related_name="node_orders")
    # trace_codec.node_order_digest, in hex.
    digest = models.CharField(max_length=32)
    # trace_codec.encode_node_order: the names, compressed.
    names = models.BinaryField()

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["cluster", "digest"], name="node_order_unique_digest")
        ]


class Cycle(models.Model):
    """One scheduling cycle's trace: summary columns for lists, the whole trace in ``body``.

    ``body`` is a trace_codec body referring to ``node_order``, or, for rows stored before it
    and for imported traces (which are JSON already), the trace's JSON compressed with zlib.
    """

    cluster = models.ForeignKey(Cluster, on_delete=models.CASCADE, related_name="cycles")
    number = models.PositiveIntegerField()
    pod_namespace = models.CharField(max_length=253)
    pod_name = models.CharField(max_length=253)
    profile = models.CharField(max_length=253)
    attempt = models.PositiveIntegerField()
    result = models.CharField(max_length=20)
    node = models.CharField(max_length=253, blank=True, default="")
    message = models.TextField(blank=True, default="")
    scheduler_time = models.FloatField()
    wall_time = models.FloatField()
    # Wall seconds the attempt took (CycleTrace.duration), for /metrics; null on older rows.
    duration_seconds = models.FloatField(null=True, blank=True)
    body = models.BinaryField()
    # The node order a trace_codec body refers to; null for a JSON body. A body cannot be read
    # without it, so it goes with it.
    node_order = models.ForeignKey(
        NodeOrder, null=True, blank=True, on_delete=models.CASCADE, related_name="cycles"
    )

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["cluster", "number"], name="cycle_unique_number")
        ]
        indexes = [
            models.Index(fields=["cluster", "pod_namespace", "pod_name"], name="cycle_by_pod")
        ]
        ordering = ["cluster", "number"]

    @staticmethod
    def encode_body(trace: dict[str, Any]) -> bytes:
        """A trace's JSON as a body: zlib, as every body was before trace_codec."""
        return zlib.compress(json.dumps(trace, separators=(",", ":")).encode(), 6)

    def trace(self) -> dict[str, Any]:
        """The documented JSON of the cycle (docs/trace-format.md), whichever way it is stored."""
        return decode_body(bytes(self.body), self.node_order_id)

    def trace_text(self) -> str:
        """``trace()`` as compact JSON text, written straight from the stored body."""
        return decode_body_text(bytes(self.body), self.node_order_id)


def decode_body_text(body: bytes, node_order_id: int | None) -> str:
    """A Cycle body's trace as the documented JSON's compact text (``json.dumps`` with
    ``separators=(",", ":")`` of ``decode_body``), written without building its dicts."""
    trace = decode_body_trace(body, node_order_id)
    if trace is None:
        return json.dumps(json.loads(zlib.decompress(body)), separators=(",", ":"))
    return trace_json.dumps(trace)


def decode_body(body: bytes, node_order_id: int | None) -> dict[str, Any]:
    """A Cycle body's trace as the documented JSON; a trace_codec body is decoded against its
    node order, read once for the few most recently used."""
    trace = decode_body_trace(body, node_order_id)
    if trace is None:
        data: dict[str, Any] = json.loads(zlib.decompress(body))
        return data
    return trace.to_json()


def decode_body_trace(body: bytes, node_order_id: int | None) -> CycleTrace | None:
    """A trace_codec body's ``CycleTrace``, decoded against its node order; None for a body
    stored as zlib JSON (an imported cluster's), which holds only the documented JSON."""
    if not trace_codec.is_encoded(body):
        return None
    digest = trace_codec.body_node_order(body)
    if node_order_id is None:
        raise trace_codec.TraceCodecError("a trace codec body without its node order")
    nodes = _node_order_names(node_order_id, digest.hex())
    return trace_codec.decode(body, nodes)


def decode_body_points(body: bytes) -> list[dict[str, Any]]:
    """Only the extension points of a Cycle body's trace (its ``points``), without reading the
    node order."""
    if not trace_codec.is_encoded(body):
        points: list[dict[str, Any]] = json.loads(zlib.decompress(body)).get("points") or []
        return points
    return [record.to_json() for record in trace_codec.decode_points(body)]


@lru_cache(maxsize=8)
def _node_order_names(node_order_id: int, digest: str) -> tuple[str, ...]:
    """The node order's names; a page of cycles shares one or two orders. Keyed by the digest
    as well, which names the content, so a row id reused after a rollback cannot mislead it."""
    names = (
        NodeOrder.objects.filter(pk=node_order_id, digest=digest)
        .values_list("names", flat=True)
        .first()
    )
    if names is None:
        raise trace_codec.TraceCodecError(f"node order {node_order_id} ({digest}) is missing")
    return trace_codec.decode_node_order(bytes(names))


class Prediction(models.Model):
    """A learner's guess of the node a pod lands on in its next scheduling cycle, and, once that
    cycle has run, the cycle it was revealed against and whether the guess was right."""

    cluster = models.ForeignKey(Cluster, on_delete=models.CASCADE, related_name="predictions")
    pod_namespace = models.CharField(max_length=253)
    pod_name = models.CharField(max_length=253)
    # The node guessed; "" for "unschedulable".
    node = models.CharField(max_length=253, blank=True, default="")
    created_at = models.DateTimeField(auto_now_add=True)
    # The cluster's newest cycle when the guess was made: the reveal is the pod's next one.
    after_cycle = models.PositiveIntegerField(default=0)
    revealed_cycle = models.PositiveIntegerField(null=True, blank=True)
    correct = models.BooleanField(null=True, blank=True)

    class Meta:
        indexes = [models.Index(fields=["cluster", "revealed_cycle"], name="prediction_by_reveal")]
        ordering = ["id"]


class Event(models.Model):
    """A v1 Event the scheduler recorded (Scheduled, FailedScheduling, Preempted)."""

    cluster = models.ForeignKey(Cluster, on_delete=models.CASCADE, related_name="events")
    type = models.CharField(max_length=10)
    reason = models.CharField(max_length=60)
    object_namespace = models.CharField(max_length=253, blank=True, default="")
    object_name = models.CharField(max_length=253)
    message = models.TextField()
    scheduler_time = models.FloatField(default=0.0)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        indexes = [
            models.Index(fields=["cluster", "object_namespace", "object_name"], name="event_by_obj")
        ]
        ordering = ["id"]


class Lease(models.Model):
    """Who schedules a cluster, until when (a coordination.k8s.io Lease)."""

    cluster = models.OneToOneField(
        Cluster, on_delete=models.CASCADE, primary_key=True, related_name="lease"
    )
    holder = models.CharField(max_length=200, blank=True, default="")
    renewed_at = models.DateTimeField(null=True, blank=True)
    duration_seconds = models.FloatField(default=15.0)


class PendingPods(models.Model):
    """How many pods the runner's scheduling queue held, by sub-queue, when it last wrote Cycle
    rows: upstream's scheduler_pending_pods gauge, for a /metrics served by another process;
    and the queue itself then (docs/trace-format.md ``queue``, lists cut short), so a page
    loaded after the run shows the queue as the last cycle left it."""

    cluster = models.OneToOneField(
        Cluster, on_delete=models.CASCADE, primary_key=True, related_name="pending_pods"
    )
    active = models.PositiveIntegerField(default=0)
    backoff = models.PositiveIntegerField(default=0)
    unschedulable = models.PositiveIntegerField(default=0)
    gated = models.PositiveIntegerField(default=0)
    queue = models.JSONField(null=True, blank=True)
    scheduler_time = models.FloatField(default=0.0)
    last_cycle = models.PositiveIntegerField(default=0)
    updated_at = models.DateTimeField(auto_now=True)
    # The whole scheduling queue as data (Scheduler.state_to_data), as it stood after the
    # runner had followed the change log up to ``change_id``, for a scheduler built from the
    # configuration whose digest is ``config_digest``: the next runner resumes it
    # (schedviz/cluster/queue_state.py).
    state = models.JSONField(null=True, blank=True)
    change_id = models.BigIntegerField(default=0)
    config_digest = models.CharField(max_length=64, blank=True, default="")
    # When (Unix seconds) the runner that saved the state asked to be woken up: the next
    # backoff expiry or queue flush of a live cluster; null when nothing is due.
    wake_at = models.FloatField(null=True, blank=True, db_index=True)


class ApiToken(models.Model):
    """A token for the JSON API (``Authorization: Token <key>``); the key is stored hashed."""

    user = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="api_tokens"
    )
    key_hash = models.CharField(max_length=64, unique=True)
    created_at = models.DateTimeField(auto_now_add=True)


class ShareLink(models.Model):
    """A read-only link to a cluster's pages (``/share/<key>/``); the key is stored hashed.

    Opening it grants the visitor's session reads of the cluster until the link is revoked."""

    cluster = models.ForeignKey(Cluster, on_delete=models.CASCADE, related_name="share_links")
    key_hash = models.CharField(max_length=64, unique=True)
    created_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="share_links"
    )
    created_at = models.DateTimeField(auto_now_add=True)
    revoked_at = models.DateTimeField(null=True, blank=True)


class DebugSession(models.Model):
    """The step debugger of a paused cluster: one cycle, held before an extension point.

    The browser (or a script) asks to step into the next cycle (``requested``); the runner takes
    the request (``running``), and before each point the cycle reaches writes what it sees here
    (``stopped``) and waits for ``command``; the cycle's end is ``finished``. ``abandoned``: the
    runner stopped mid-cycle (lease lost, reset, nobody answered), keeping nothing of the cycle.
    """

    class State(models.TextChoices):
        REQUESTED = "requested"
        RUNNING = "running"
        STOPPED = "stopped"
        FINISHED = "finished"
        ABANDONED = "abandoned"

    class Command(models.TextChoices):
        NONE = ""
        CONTINUE = "continue"
        FINISH = "finish"

    cluster = models.OneToOneField(
        Cluster, on_delete=models.CASCADE, primary_key=True, related_name="debug_session"
    )
    state = models.CharField(max_length=16, choices=State.choices, default=State.REQUESTED)
    command = models.CharField(max_length=16, choices=Command.choices, blank=True, default="")
    # Stops made in this session: a command answers the stop of this number.
    sequence = models.PositiveIntegerField(default=0)
    cycle = models.PositiveIntegerField(default=0)
    pod = models.CharField(max_length=320, blank=True, default="")
    # The point about to run ("End" once the cycle is over) and its plugins, in order.
    point = models.CharField(max_length=32, blank=True, default="")
    plugins = models.JSONField(default=list)
    # The points the cycle reached so far, in order.
    reached = models.JSONField(default=list)
    # StateEntry.to_json() of each CycleState entry, in writing order.
    state_entries = models.JSONField(default=list)
    # PointOutcome.to_json() of what ran since the previous stop.
    previous = models.JSONField(default=list)
    # At the end: {"result", "node", "message"} of the cycle; why, when abandoned.
    outcome = models.JSONField(default=dict)
    updated_at = models.DateTimeField(auto_now=True)

    @property
    def active(self) -> bool:
        return self.state in (self.State.REQUESTED, self.State.RUNNING, self.State.STOPPED)
