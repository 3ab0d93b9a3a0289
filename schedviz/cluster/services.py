"""Writes to the cluster: what the API server does when it accepts (or refuses) a request.

Every service is one transaction that validates through ``schedviz.kube`` first and writes
nothing when anything is wrong (``ServiceError`` carries every message, in the API server's
words). Each object write appends exactly one ``Change`` row and sets the object's
``resource_version`` to that row's id: the change log is the watch stream the runner follows.

User-facing writes (objects, run state) start a runner once committed
(``settings.SCHEDVIZ_START_RUNNERS``); the scheduler's own writes (bind, status, volume binding,
events, cycles) do not, since a runner is what makes them.

Deliberately different from the API server: ``manifests_apply`` replaces an object's manifest
whole (no three-way merge), except that a manifest without ``status`` keeps the stored status and
a pod manifest without ``spec.nodeName`` keeps the node it is bound to, so re-applying the file a
pod was created from leaves it unchanged; deleting a Namespace deletes the objects in it at once
(no finalizers, no grace periods).
"""

from __future__ import annotations

import copy
import hashlib
import secrets
import time
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import yaml
from django.conf import settings
from django.contrib.auth import get_user_model
from django.contrib.auth.models import User
from django.db import models, transaction
from django.db.models import F
from django.utils import timezone

from schedviz.cluster import ports
from schedviz.cluster.clock import clock_reanchor
from schedviz.cluster.models import (
    KIND_MODELS,
    ApiToken,
    Change,
    Cluster,
    Cycle,
    DebugSession,
    Event,
    KubeResource,
    Lease,
    NamespacedResource,
    NodeOrder,
    PendingPods,
    Prediction,
    Profile,
    ShareLink,
)
from schedviz.cluster.models import Node as NodeRow
from schedviz.cluster.models import Pod as PodRow
from schedviz.cluster.retention import cycles_prune
from schedviz.kube.admission import admit_pods, admit_priority_classes
from schedviz.kube.decode import KINDS, decode_object
from schedviz.kube.errors import (
    DocumentError,
    InvalidObjectError,
    ManifestError,
    forbidden,
    go_quote,
)
from schedviz.kube.load import (
    SCHEDULER_CONFIG_API_VERSION,
    SCHEDULER_CONFIG_KIND,
    Manifests,
    load_files,
    load_manifests,
)
from schedviz.kube.objects import (
    KubeObject,
    PersistentVolume,
    PersistentVolumeClaim,
    Pod,
    PriorityClass,
)
from schedviz.kube.objects import Node as KubeNode
from schedviz.scheduler import trace_codec
from schedviz.scheduler.apis.config.v1 import ConfigError, decode_configuration
from schedviz.scheduler.framework.plugins.registry import new_in_tree_registry
from schedviz.scheduler.framework.runtime.framework import FrameworkError
from schedviz.scheduler.simulator import new_simulation
from schedviz.scheduler.store import Event as SchedulerEvent
from schedviz.scheduler.trace import CycleTrace

# ---------------------------------------------------------------------------------------------
# Errors


class ServiceError(Exception):
    """A refused request: every reason, each a full API-server style message."""

    def __init__(self, errors: Sequence[str]):
        self.errors = list(errors)
        super().__init__("\n".join(self.errors))


class ObjectNotFound(ServiceError):
    """``pods "web-1" not found`` (the API server's 404)."""


class Conflict(ServiceError):
    """A write that lost to another (the API server's 409)."""


class BindConflict(Conflict):
    """The pod is bound already: a pod is bound once, never twice."""


# ---------------------------------------------------------------------------------------------
# Runners


def _start_runner_on_commit(cluster_id: int) -> None:
    """Once committed, make sure a runner schedules the cluster (if runners are enabled here):
    through the port the worker app registers (schedviz/cluster/ports.py)."""
    if not settings.SCHEDVIZ_START_RUNNERS:
        return
    transaction.on_commit(lambda: ports.start_runner(cluster_id))


# ---------------------------------------------------------------------------------------------
# Clusters

CLUSTER_NAME_MAX_LENGTH = 100


def _validate_cluster_name(name: str) -> list[str]:
    if not name.strip():
        return ["name: Required value"]
    if len(name) > CLUSTER_NAME_MAX_LENGTH:
        return [f"name: Too long: must have at most {CLUSTER_NAME_MAX_LENGTH} characters"]
    if name != name.strip():
        return ["name: Invalid value: must not have leading or trailing whitespace"]
    return []


def _validate_speed(speed: float) -> list[str]:
    if not speed > 0 or speed == float("inf"):
        return [f"speed: Invalid value: {speed}: must be a positive number"]
    return []


def _validate_clock_mode(clock_mode: str) -> list[str]:
    if clock_mode not in Cluster.ClockMode.values:
        supported = ", ".join(go_quote(v) for v in Cluster.ClockMode.values)
        return [
            f"clockMode: Unsupported value: {go_quote(clock_mode)}: supported values: {supported}"
        ]
    return []


def cluster_create(
    *,
    name: str,
    owner: User | None = None,
    clock_mode: str = Cluster.ClockMode.LIVE,
    speed: float = 1.0,
    seed: int | None = None,
    run_state: str = Cluster.RunState.RUNNING,
) -> Cluster:
    """A new, empty cluster; its name is unique per owner (and among clusters without one)."""
    errors = _validate_cluster_name(name) + _validate_clock_mode(clock_mode)
    errors += _validate_speed(speed)
    if run_state not in Cluster.RunState.values:
        errors.append(f"runState: Unsupported value: {go_quote(run_state)}")
    if errors:
        raise ServiceError(errors)
    with transaction.atomic():
        # The unique constraint does not hold for a NULL owner, so ask first for every owner.
        if Cluster.objects.filter(owner=owner, name=name).exists():
            raise Conflict([f"clusters {go_quote(name)} already exists"])
        return Cluster.objects.create(
            name=name,
            owner=owner,
            clock_mode=clock_mode,
            speed=speed,
            seed=settings.SCHEDVIZ_DEFAULT_SEED if seed is None else seed,
            run_state=run_state,
            # The live clock starts now, at 0 (schedviz/cluster/clock.py).
            clock_anchor_wall=time.time(),
        )


def cluster_get_or_create(*, name: str, owner: User | None = None) -> tuple[Cluster, bool]:
    """The owner's cluster of that name, created (with defaults) if there is none."""
    with transaction.atomic():
        existing = Cluster.objects.filter(owner=owner, name=name).first()
        if existing is not None:
            return existing, False
        return cluster_create(name=name, owner=owner), True


def cluster_delete(*, cluster: Cluster) -> None:
    """The cluster and everything in it (objects, changes, cycles, events, profiles, lease)."""
    with transaction.atomic():
        cluster.delete()


def cluster_reset(*, cluster: Cluster) -> None:
    """Every object, cycle, event and change deleted; profiles and settings kept.

    The lease goes too, so a runner still scheduling the old objects loses it at its next
    renewal and stops; the runner started on commit lists the empty cluster.
    """
    with transaction.atomic():
        for model in KIND_MODELS.values():
            _manager(model).filter(cluster=cluster).delete()
        Change.objects.filter(cluster=cluster).delete()
        Cycle.objects.filter(cluster=cluster).delete()
        NodeOrder.objects.filter(cluster=cluster).delete()
        Event.objects.filter(cluster=cluster).delete()
        # Guesses about the deleted cycles' pods go with them (cycle numbers start again at 1).
        Prediction.objects.filter(cluster=cluster).delete()
        Lease.objects.filter(cluster=cluster).delete()
        PendingPods.objects.filter(cluster=cluster).delete()
        DebugSession.objects.filter(cluster=cluster).delete()
        Cluster.objects.filter(id=cluster.id).update(
            scheduler_time=0.0,
            pending_steps=0,
            clock_anchor_time=0.0,
            clock_anchor_wall=time.time(),
        )
        cluster.scheduler_time, cluster.pending_steps = 0.0, 0
        _start_runner_on_commit(cluster.id)


# Changing these moves the live clock's anchor to the moment of the change first.
_CLOCK_FIELDS = frozenset({"speed", "run_state", "clock_mode"})


def _cluster_update(cluster: Cluster, **fields: Any) -> Cluster:
    with transaction.atomic():
        if _CLOCK_FIELDS & set(fields):
            clock_reanchor(cluster_id=cluster.id)
        Cluster.objects.filter(id=cluster.id).update(**fields)
        cluster.refresh_from_db(fields=list(fields))
        _start_runner_on_commit(cluster.id)
    return cluster


def cluster_set_run_state(*, cluster: Cluster, run_state: str) -> Cluster:
    """Running, or paused (then only ``cluster_step`` makes cycles happen)."""
    if run_state not in Cluster.RunState.values:
        supported = ", ".join(go_quote(v) for v in Cluster.RunState.values)
        raise ServiceError(
            [f"runState: Unsupported value: {go_quote(run_state)}: supported values: {supported}"]
        )
    fields: dict[str, Any] = {"run_state": run_state}
    with transaction.atomic():
        if run_state == Cluster.RunState.RUNNING:
            fields["pending_steps"] = 0
            # A step into that no runner took yet is dropped; a stopped cycle runs to its end.
            DebugSession.objects.filter(
                cluster=cluster, state=DebugSession.State.REQUESTED
            ).delete()
        return _cluster_update(cluster, **fields)


def cluster_step(*, cluster: Cluster) -> Cluster:
    """One more scheduling cycle for a paused cluster (the step button)."""
    return _cluster_update(cluster, pending_steps=F("pending_steps") + 1)


# ---------------------------------------------------------------------------------------------
# The step debugger (docs/live-system.md, "The step debugger")

DEBUG_ACTIONS = ("step-into", "continue", "finish")


def debug_step_into(*, cluster: Cluster) -> DebugSession:
    """Asks the runner to run the next cycle of a paused cluster, stopping before each point."""
    with transaction.atomic():
        _lock(cluster)
        run_state = Cluster.objects.values_list("run_state", flat=True).get(id=cluster.id)
        if run_state != Cluster.RunState.PAUSED:
            raise Conflict(["runState: the cluster must be paused to step into a cycle"])
        session = DebugSession.objects.filter(cluster=cluster).first()
        if session is not None and session.active:
            raise Conflict([f"cycle {session.cycle or 'next'} is already being stepped through"])
        session = DebugSession(cluster=cluster, state=DebugSession.State.REQUESTED)
        session.save()
        _start_runner_on_commit(cluster.id)
    return session


def debug_command(*, cluster: Cluster, command: str, sequence: int | None = None) -> DebugSession:
    """``continue`` to the next point or ``finish`` the cycle, from the stop the runner holds.

    ``sequence`` names the stop the command answers (a command sent twice moves on once).
    """
    if command not in (DebugSession.Command.CONTINUE, DebugSession.Command.FINISH):
        raise ServiceError(
            [
                f'action: Unsupported value: {go_quote(command)}: supported values: "continue", '
                '"finish"'
            ]
        )
    with transaction.atomic():
        session = DebugSession.objects.select_for_update().filter(cluster=cluster).first()
        if session is None or session.state != DebugSession.State.STOPPED:
            raise Conflict(["no cycle is stopped in the debugger: step into a cycle first"])
        if sequence is not None and sequence != session.sequence:
            raise Conflict([f"stop {sequence} is over: the debugger is at stop {session.sequence}"])
        if session.command:
            raise Conflict([f"the stop has its command already ({session.command})"])
        session.command = command
        session.save(update_fields=["command", "updated_at"])
    return session


def debug_session_claim(*, cluster_id: int) -> bool:
    """The runner takes a step-into request; False when there is none (or another took it)."""
    return (
        DebugSession.objects.filter(
            cluster_id=cluster_id, state=DebugSession.State.REQUESTED
        ).update(state=DebugSession.State.RUNNING, sequence=0, command="")
        == 1
    )


def debug_session_stop(*, cluster_id: int, stop: Mapping[str, Any]) -> int:
    """The runner holds the cycle before a point: records what it sees; the stop's number."""
    with transaction.atomic():
        session = DebugSession.objects.select_for_update().get(cluster_id=cluster_id)
        session.sequence += 1
        session.state = DebugSession.State.STOPPED
        session.command = ""
        for name, value in stop.items():
            setattr(session, name, value)
        session.save()
    return session.sequence


def debug_session_take_command(*, cluster_id: int, sequence: int) -> str:
    """The command given for stop ``sequence``, taken once (the cycle then runs on)."""
    row = (
        DebugSession.objects.filter(cluster_id=cluster_id, sequence=sequence)
        .exclude(command="")
        .values_list("command", flat=True)
        .first()
    )
    if row is None:
        return ""
    taken = DebugSession.objects.filter(
        cluster_id=cluster_id, sequence=sequence, command=row
    ).update(command="", state=DebugSession.State.RUNNING)
    return row if taken == 1 else ""


def debug_session_orphaned(*, cluster_id: int) -> None:
    """A new runner found a cycle that a dead runner held in the debugger: given up."""
    message = "The runner holding this cycle stopped; the cycle was abandoned and its pod is "
    message += "still pending."
    DebugSession.objects.filter(
        cluster_id=cluster_id,
        state__in=(DebugSession.State.RUNNING, DebugSession.State.STOPPED),
    ).update(
        state=DebugSession.State.ABANDONED,
        command="",
        outcome={"result": "", "node": None, "message": message},
    )


def debug_session_end(*, cluster_id: int, state: str, fields: Mapping[str, Any]) -> None:
    """The cycle is over (``finished``) or was given up (``abandoned``)."""
    DebugSession.objects.filter(cluster_id=cluster_id).update(state=state, command="", **fields)


def cluster_set_speed(*, cluster: Cluster, speed: float) -> Cluster:
    """The live clock's pace: scheduler seconds per wall second."""
    errors = _validate_speed(speed)
    if errors:
        raise ServiceError(errors)
    return _cluster_update(cluster, speed=speed)


def cluster_set_clock_mode(*, cluster: Cluster, clock_mode: str) -> Cluster:
    errors = _validate_clock_mode(clock_mode)
    if errors:
        raise ServiceError(errors)
    return _cluster_update(cluster, clock_mode=clock_mode)


# ---------------------------------------------------------------------------------------------
# Objects: stored form and row fields

# Applied and exported in this order, so that what an object refers to comes first.
KIND_ORDER = (
    "Namespace",
    "PriorityClass",
    "StorageClass",
    "CSINode",
    "PersistentVolume",
    "PersistentVolumeClaim",
    "Node",
    "PodDisruptionBudget",
    "Pod",
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
        )
    elif isinstance(obj, KubeNode):
        fields.update(
            unschedulable=obj.unschedulable,
            labels=dict(obj.labels),
            taints=[
                {"key": t.key, **({"value": t.value} if t.value else {}), "effect": t.effect}
                for t in obj.taints
            ],
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


# ---------------------------------------------------------------------------------------------
# Objects: applying


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


def _admit(cluster: Cluster, objects: Sequence[KubeObject]) -> list[KubeObject]:
    """The objects with pods admitted against the stored and the given PriorityClasses."""
    given = [o for o in objects if isinstance(o, PriorityClass)]
    given_names = {pc.name for pc in given}
    stored: list[PriorityClass] = []
    for row in _manager(KIND_MODELS["PriorityClass"]).filter(cluster=cluster):
        if row.name not in given_names:
            pc = decode_object(row.manifest)
            assert isinstance(pc, PriorityClass)
            stored.append(pc)
    admit_priority_classes([*stored, *given])
    pods = [o for o in objects if isinstance(o, Pod)]
    admitted = iter(admit_pods(pods, [*stored, *given]))
    return [next(admitted) if isinstance(o, Pod) else o for o in objects]


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


def _manifest_errors(error: ManifestError) -> list[str]:
    return [str(e) for e in error.errors]


def _lock(cluster: Cluster) -> None:
    """Serializes writers of one cluster (a no-op on SQLite, which serializes all writers)."""
    list(Cluster.objects.select_for_update().filter(id=cluster.id).values_list("id", flat=True))


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


def _apply(cluster: Cluster, manifests: Manifests, *, create_only: bool = False) -> ApplyResult:
    config_document, errors = _scheduler_config_plan(manifests.scheduler_configs)
    errors = _unstored_kinds(manifests.objects) + errors
    if errors:
        raise ServiceError(errors)
    with transaction.atomic():
        _lock(cluster)
        try:
            objects = _admit(cluster, manifests.objects)
        except ManifestError as error:
            raise ServiceError(_manifest_errors(error)) from None
        writes, errors = _plan_writes(cluster, objects, create_only=create_only)
        errors += _limit_errors(cluster, writes)
        if errors:
            raise ServiceError(errors)
        result = ApplyResult(objects=_execute_writes(cluster, writes))
        if config_document is not None:
            result.scheduler_config = _scheduler_config_store(cluster, config_document)
        _start_runner_on_commit(cluster.id)
    return result


def manifests_apply(*, cluster: Cluster, text: str, source: str = "<input>") -> ApplyResult:
    """``kubectl apply -f``: creates or replaces every object of the YAML/JSON text, all or none.

    A KubeSchedulerConfiguration in the text replaces the cluster's profiles and settings.
    Raises ServiceError with every error of the input; nothing is written then.
    """
    try:
        manifests = load_manifests(text, source)
    except ManifestError as error:
        raise ServiceError(_manifest_errors(error)) from None
    return _apply(cluster, manifests)


def manifests_apply_files(*, cluster: Cluster, paths: Sequence[str]) -> ApplyResult:
    """``manifests_apply`` over files (and directories of them), judged together."""
    try:
        manifests = load_files(list(paths))
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


# ---------------------------------------------------------------------------------------------
# Objects: deleting


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
        manifests = load_manifests(text, source)
    except ManifestError as error:
        raise ServiceError(_manifest_errors(error)) from None
    refs = [ObjectRef(kind_of(o), o.name, _namespace_of(o)) for o in manifests.objects]
    return objects_delete(cluster=cluster, refs=refs, ignore_not_found=ignore_not_found)


def pod_delete(*, cluster: Cluster, namespace: str, name: str) -> None:
    """Deletes a pod at once (no grace period); ObjectNotFound if there is none."""
    objects_delete(cluster=cluster, refs=[ObjectRef("Pod", name, namespace)])


# ---------------------------------------------------------------------------------------------
# Objects: updates of one object


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


def pod_bind(*, cluster: Cluster, namespace: str, name: str, node_name: str) -> PodBinding:
    """The pods/binding subresource: a compare-and-set of the pod's node, once, never twice.

    Raises BindConflict with the API server's message when the pod is bound already (also
    when another bind won between reading the pod and writing it), ObjectNotFound when the
    pod or the node does not exist.
    """
    with transaction.atomic():
        row = _pod_for_update(cluster, namespace, name)
        if row.node_name:
            raise _bind_conflict(name, row.node_name)
        if not NodeRow.objects.filter(cluster=cluster, name=node_name).exists():
            raise ObjectNotFound([f"nodes {go_quote(node_name)} not found"])
        manifest = copy.deepcopy(row.manifest)
        manifest.setdefault("spec", {})["nodeName"] = node_name
        status = manifest.setdefault("status", {})
        status["conditions"] = _set_condition(
            status.get("conditions") or [], POD_SCHEDULED_CONDITION
        )
        conditions = _set_condition(row.conditions, POD_SCHEDULED_CONDITION)
        (change,) = _append_changes(
            cluster, [("Pod", namespace, name, Change.Type.MODIFIED, manifest)]
        )
        won = PodRow.objects.filter(id=row.id, node_name="").update(
            node_name=node_name,
            manifest=manifest,
            conditions=conditions,
            resource_version=change.id,
        )
        if not won:
            current = PodRow.objects.filter(id=row.id).values_list("node_name", flat=True).first()
            if current is None:
                raise ObjectNotFound([f"pods {go_quote(name)} not found"])
            raise _bind_conflict(name, current)
    return PodBinding(change.id, row.resource_version, manifest)


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
    """The PV and PVC updates the volume binder makes (claimRef, volumeName, phase, annotations)."""
    with transaction.atomic():
        for obj in objects:
            if not isinstance(obj, PersistentVolume | PersistentVolumeClaim):
                raise ServiceError([f"the scheduler does not write {kind_of(obj)} objects"])
            row = _rows_by_key(cluster, kind_of(obj), [obj.name]).get(obj.key)
            if row is None:
                raise ObjectNotFound(
                    [f"{_QUALIFIED_RESOURCES[kind_of(obj)]} {go_quote(obj.name)} not found"]
                )
            manifest = _scheduler_manifest(obj, row.manifest)
            if manifest != row.manifest:
                _decode(manifest)
                _update_row(cluster, row, manifest, {})


# ---------------------------------------------------------------------------------------------
# The scheduler's records


def events_create(*, cluster: Cluster, events: Sequence[SchedulerEvent]) -> list[Event]:
    """Stores the events the scheduler recorded, in one insert."""
    rows = []
    for event in events:
        namespace, _, name = event.object.rpartition("/")
        rows.append(
            Event(
                cluster=cluster,
                type=event.type,
                reason=event.reason,
                object_namespace=namespace,
                object_name=name,
                message=event.message,
                scheduler_time=event.time,
            )
        )
    with transaction.atomic():
        return Event.objects.bulk_create(rows)


def _points_duration(milliseconds: Iterable[float]) -> float | None:
    """A trace's attempt time when it has none of its own: its extension points' summed."""
    durations = list(milliseconds)
    return sum(durations) / 1000 if durations else None


def _json_cycle_row(cluster: Cluster, trace: dict[str, Any]) -> Cycle:
    """A trace given as JSON (imported): stored as such."""
    namespace, _, name = str(trace["pod"]).rpartition("/")
    points = trace.get("points") or []
    return Cycle(
        cluster=cluster,
        number=trace["cycle"],
        pod_namespace=namespace,
        pod_name=name,
        profile=trace.get("profile") or "",
        attempt=trace.get("attempt") or 0,
        result=trace.get("result") or "",
        node=trace.get("node") or "",
        message=trace.get("message") or "",
        scheduler_time=trace.get("time") or 0.0,
        wall_time=trace.get("wallTime") or 0.0,
        duration_seconds=_points_duration(float(p.get("durationMs") or 0.0) for p in points),
        body=Cycle.encode_body(trace),
    )


def _cycle_row(cluster: Cluster, trace: CycleTrace) -> Cycle:
    """A trace from the scheduler: its summary columns as ``to_json`` gives them, its body
    encoded by trace_codec (the node order is attached by ``cycles_create``)."""
    namespace, _, name = trace.pod.rpartition("/")
    return Cycle(
        cluster=cluster,
        number=trace.cycle,
        pod_namespace=namespace,
        pod_name=name,
        profile=trace.profile,
        attempt=trace.attempt,
        result=trace.result,
        node=trace.selected_node,
        message=trace.message,
        scheduler_time=round(trace.time, 6),
        wall_time=round(trace.wall_time, 6),
        duration_seconds=trace.duration
        if trace.duration > 0
        else _points_duration(record.to_json()["durationMs"] for record in trace.points),
        body=trace_codec.encode(trace),
    )


def _node_order_ids(cluster: Cluster, orders: dict[str, tuple[str, ...]]) -> dict[str, int]:
    """The ids of node orders, by digest; those not stored yet are stored (in the caller's
    transaction, with the first cycles that refer to them)."""
    if not orders:
        return {}
    stored = dict(
        NodeOrder.objects.filter(cluster=cluster, digest__in=orders).values_list("digest", "id")
    )
    missing = [
        NodeOrder(cluster=cluster, digest=digest, names=trace_codec.encode_node_order(nodes))
        for digest, nodes in orders.items()
        if digest not in stored
    ]
    for order in NodeOrder.objects.bulk_create(missing):
        stored[order.digest] = order.pk
    return stored


def cycles_create(
    *, cluster: Cluster, traces: Sequence[CycleTrace | dict[str, Any]]
) -> list[Cycle]:
    """Stores cycle traces, in one insert: a ``CycleTrace`` in trace_codec's encoding, with the
    node order it refers to stored once; its ``to_json()`` (an imported trace) as JSON."""
    rows: list[Cycle] = []
    orders: dict[str, tuple[str, ...]] = {}
    row_orders: list[tuple[Cycle, str]] = []
    for given in traces:
        if isinstance(given, CycleTrace):
            row = _cycle_row(cluster, given)
            digest = trace_codec.node_order_digest(given.all_nodes).hex()
            orders.setdefault(digest, given.all_nodes)
            row_orders.append((row, digest))
        else:
            row = _json_cycle_row(cluster, given)
        rows.append(row)
    with transaction.atomic():
        # Pruned first: it deletes the node orders the cycles it deletes leave unreferenced.
        cycles_prune(cluster=cluster, incoming=len(rows))
        order_ids = _node_order_ids(cluster, orders)
        for row, digest in row_orders:
            row.node_order_id = order_ids[digest]
        return Cycle.objects.bulk_create(rows)


def pending_pods_record(
    *,
    cluster: Cluster,
    counts: Mapping[str, int],
    queue: dict[str, Any] | None = None,
    scheduler_time: float = 0.0,
    last_cycle: int = 0,
) -> PendingPods:
    """Keeps how many pods the runner's queue holds by sub-queue (active, backoff,
    unschedulable, gated), for scheduler_pending_pods on /metrics, and the queue itself at
    ``scheduler_time``, after cycle ``last_cycle``."""
    fields: dict[str, Any] = {
        name: counts.get(name, 0) for name in ("active", "backoff", "unschedulable", "gated")
    }
    fields.update(queue=queue, scheduler_time=scheduler_time, last_cycle=last_cycle)
    row, _ = PendingPods.objects.update_or_create(cluster=cluster, defaults=fields)
    return row


# ---------------------------------------------------------------------------------------------
# Export


def scheduler_config_document(*, cluster: Cluster) -> dict[str, Any]:
    """The cluster's KubeSchedulerConfiguration v1 document, as it was applied."""
    document: dict[str, Any] = {
        "apiVersion": SCHEDULER_CONFIG_API_VERSION,
        "kind": SCHEDULER_CONFIG_KIND,
        **copy.deepcopy(cluster.scheduler_settings),
    }
    profiles = [copy.deepcopy(p.config) for p in Profile.objects.filter(cluster=cluster)]
    if profiles:
        document["profiles"] = profiles
    return document


def cluster_export_yaml(*, cluster: Cluster) -> str:
    """A ``kind: List`` of every object (manifests as stored), then the scheduler configuration.

    Applying it to an empty cluster reproduces this one.
    """
    items: list[dict[str, Any]] = []
    for kind in KIND_ORDER:
        model = KIND_MODELS[kind]
        order = ["namespace", "name"] if issubclass(model, NamespacedResource) else ["name"]
        for manifest in (
            _manager(model)
            .filter(cluster=cluster)
            .order_by(*order)
            .values_list("manifest", flat=True)
        ):
            items.append(manifest)
    documents = [
        {"apiVersion": "v1", "kind": "List", "items": items},
        scheduler_config_document(cluster=cluster),
    ]
    dumper = getattr(yaml, "CSafeDumper", yaml.SafeDumper)  # libyaml when built with it
    text: str = yaml.dump_all(documents, Dumper=dumper, sort_keys=False, default_flow_style=False)
    return text


# ---------------------------------------------------------------------------------------------
# API tokens


def api_token_hash(key: str) -> str:
    return hashlib.sha256(key.encode()).hexdigest()


@dataclass(frozen=True, slots=True)
class NewApiToken:
    key: str  # shown once; only its hash is stored
    user: Any
    user_created: bool


def api_token_create(*, username: str) -> NewApiToken:
    """A new API token for the user, who is created (without a password) if there is none."""
    if not username.strip():
        raise ServiceError(["username: Required value"])
    user_model = get_user_model()
    with transaction.atomic():
        user = user_model._default_manager.filter(**{user_model.USERNAME_FIELD: username}).first()
        created = user is None
        if user is None:
            user = user_model(**{user_model.USERNAME_FIELD: username})
            user.set_unusable_password()
            user.save()
        key = secrets.token_urlsafe(32)
        ApiToken.objects.create(user=user, key_hash=api_token_hash(key))
    return NewApiToken(key=key, user=user, user_created=created)


# ---------------------------------------------------------------------------------------------
# Read-only share links


def _require_owner(cluster: Cluster, user: Any) -> None:
    if cluster.owner_id is None:
        raise ServiceError(["this cluster has no owner: everyone can see it already"])
    if user is None or not user.is_authenticated or user.pk != cluster.owner_id:
        raise ServiceError(["only the cluster's owner may share it"])


def share_link_create(*, cluster: Cluster, user: Any) -> tuple[ShareLink, str]:
    """A new read-only link to the cluster, and its key (shown once; only its hash is kept)."""
    _require_owner(cluster, user)
    key = secrets.token_urlsafe(32)
    link = ShareLink.objects.create(cluster=cluster, key_hash=api_token_hash(key), created_by=user)
    return link, key


def share_link_revoke(*, link: ShareLink, user: Any) -> None:
    """Stops the link granting reads, from the next request of anyone who opened it."""
    _require_owner(link.cluster, user)
    if link.revoked_at is None:
        link.revoked_at = timezone.now()
        link.save(update_fields=["revoked_at"])


__all__ = [
    "AppliedObject",
    "ApplyResult",
    "BindConflict",
    "Conflict",
    "NewApiToken",
    "ObjectNotFound",
    "ObjectRef",
    "ServiceError",
    "api_token_create",
    "api_token_hash",
    "cluster_create",
    "cluster_delete",
    "cluster_export_yaml",
    "cluster_get_or_create",
    "cluster_reset",
    "cluster_set_clock_mode",
    "cluster_set_run_state",
    "cluster_set_speed",
    "cluster_step",
    "cycles_create",
    "debug_command",
    "debug_session_claim",
    "debug_session_end",
    "debug_session_orphaned",
    "debug_session_stop",
    "debug_session_take_command",
    "debug_step_into",
    "events_create",
    "manifests_apply",
    "manifests_apply_files",
    "manifests_delete",
    "node_update",
    "objects_apply_from_scheduler",
    "objects_delete",
    "pod_bind",
    "pod_create",
    "pod_delete",
    "pod_update_status",
    "share_link_create",
    "share_link_revoke",
]
