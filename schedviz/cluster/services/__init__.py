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

The services are split by area, one module each: ``errors`` (ServiceError and its kinds),
``clusters`` (clusters, run state, speed, clock mode, and the runner a write asks for),
``debugger`` (the step debugger), ``stored`` (objects as stored, and the helpers every object
write shares), ``apply`` (manifests applied, the scheduler configuration), ``delete``,
``workloads`` (what the workload controllers create when one is applied) and ``scale``,
``updates`` (a node edited; the scheduler's bind, pod status, plugin and PV controller
writes), ``records`` (events, cycles, pending pods), ``export`` and ``access`` (API tokens,
share links). This package re-exports every public name, so callers write
``services.pod_bind(...)``.
"""

from __future__ import annotations

from schedviz.cluster.services.access import (
    NewApiToken,
    api_token_create,
    api_token_hash,
    share_link_create,
    share_link_revoke,
)
from schedviz.cluster.services.apply import (
    SCHEDULER_CONFIG_TYPE_NAME,
    AppliedObject,
    ApplyResult,
    manifests_apply,
    manifests_apply_files,
    pod_create,
)
from schedviz.cluster.services.clusters import (
    CLUSTER_NAME_MAX_LENGTH,
    cluster_create,
    cluster_delete,
    cluster_get_or_create,
    cluster_reset,
    cluster_set_clock_mode,
    cluster_set_run_state,
    cluster_set_speed,
    cluster_step,
)
from schedviz.cluster.services.debugger import (
    DEBUG_ACTIONS,
    debug_command,
    debug_session_claim,
    debug_session_end,
    debug_session_orphaned,
    debug_session_stop,
    debug_session_take_command,
    debug_step_into,
)
from schedviz.cluster.services.delete import ObjectRef, manifests_delete, objects_delete, pod_delete
from schedviz.cluster.services.errors import BindConflict, Conflict, ObjectNotFound, ServiceError
from schedviz.cluster.services.export import (
    cluster_export_yaml,
    cluster_export_yaml_stream,
    object_manifests,
    scheduler_config_document,
)
from schedviz.cluster.services.records import cycles_create, events_create, pending_pods_record
from schedviz.cluster.services.scale import SCALABLE_KINDS, workload_scale, workload_sync
from schedviz.cluster.services.stored import KIND_ORDER, kind_of
from schedviz.cluster.services.updates import (
    POD_SCHEDULED_CONDITION,
    BindRow,
    PodBinding,
    node_update,
    objects_apply_from_scheduler,
    pod_bind,
    pod_update_status,
    pods_for_bind,
)

__all__ = [
    "CLUSTER_NAME_MAX_LENGTH",
    "DEBUG_ACTIONS",
    "KIND_ORDER",
    "POD_SCHEDULED_CONDITION",
    "SCALABLE_KINDS",
    "SCHEDULER_CONFIG_TYPE_NAME",
    "AppliedObject",
    "ApplyResult",
    "BindConflict",
    "BindRow",
    "Conflict",
    "NewApiToken",
    "ObjectNotFound",
    "ObjectRef",
    "PodBinding",
    "ServiceError",
    "api_token_create",
    "api_token_hash",
    "cluster_create",
    "cluster_delete",
    "cluster_export_yaml",
    "cluster_export_yaml_stream",
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
    "kind_of",
    "manifests_apply",
    "manifests_apply_files",
    "manifests_delete",
    "node_update",
    "object_manifests",
    "objects_apply_from_scheduler",
    "objects_delete",
    "pending_pods_record",
    "pod_bind",
    "pod_create",
    "pod_delete",
    "pod_update_status",
    "pods_for_bind",
    "scheduler_config_document",
    "share_link_create",
    "share_link_revoke",
    "workload_scale",
    "workload_sync",
]
