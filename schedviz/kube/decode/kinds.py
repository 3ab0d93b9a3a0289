"""The entry point: which decoder each apiVersion and kind has, and ``decode_object``.

A kind is added by writing its decoder (a module of this package) and one line in ``KINDS``.
Unknown kinds and versions are refused in the API server's words (the REST mapper's
``no matches for kind ...``).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from schedviz.kube import errors as fe
from schedviz.kube.crds import POD_GROUP_API_VERSION, POD_GROUP_KIND, SCHEDULING_GROUP
from schedviz.kube.decode.admission import (
    decode_limit_range,
    decode_resource_quota,
    decode_runtime_class,
)
from schedviz.kube.decode.nodes import decode_node
from schedviz.kube.decode.podgroup import decode_pod_group
from schedviz.kube.decode.pods import decode_pod
from schedviz.kube.decode.policy import (
    decode_namespace,
    decode_pod_disruption_budget,
    decode_priority_class,
)
from schedviz.kube.decode.reader import Reader
from schedviz.kube.decode.storage import (
    decode_csi_node,
    decode_persistent_volume,
    decode_persistent_volume_claim,
    decode_storage_class,
)
from schedviz.kube.decode.workloads import (
    decode_daemon_set,
    decode_deployment,
    decode_job,
    decode_replica_set,
    decode_replication_controller,
    decode_service,
    decode_stateful_set,
)
from schedviz.kube.errors import DocumentError, FieldError, InvalidObjectError
from schedviz.kube.objects import KubeObject


@dataclass(frozen=True, slots=True)
class KindInfo:
    """What the API server knows of a kind: its group (for messages) and REST resource name."""

    group: str
    resource: str
    decode: Callable[[Reader, Mapping[str, Any]], KubeObject]

    @property
    def qualified_resource(self) -> str:
        """schema.GroupResource.String(): ``pods``, ``priorityclasses.scheduling.k8s.io``."""
        return f"{self.resource}.{self.group}" if self.group else self.resource


KINDS: dict[tuple[str, str], KindInfo] = {
    ("v1", "Pod"): KindInfo("", "pods", decode_pod),
    ("v1", "Node"): KindInfo("", "nodes", decode_node),
    ("v1", "Namespace"): KindInfo("", "namespaces", decode_namespace),
    ("v1", "PersistentVolume"): KindInfo("", "persistentvolumes", decode_persistent_volume),
    ("v1", "PersistentVolumeClaim"): KindInfo(
        "", "persistentvolumeclaims", decode_persistent_volume_claim
    ),
    ("scheduling.k8s.io/v1", "PriorityClass"): KindInfo(
        "scheduling.k8s.io", "priorityclasses", decode_priority_class
    ),
    ("policy/v1", "PodDisruptionBudget"): KindInfo(
        "policy", "poddisruptionbudgets", decode_pod_disruption_budget
    ),
    ("storage.k8s.io/v1", "StorageClass"): KindInfo(
        "storage.k8s.io", "storageclasses", decode_storage_class
    ),
    ("storage.k8s.io/v1", "CSINode"): KindInfo("storage.k8s.io", "csinodes", decode_csi_node),
    ("v1", "Service"): KindInfo("", "services", decode_service),
    ("v1", "LimitRange"): KindInfo("", "limitranges", decode_limit_range),
    ("v1", "ResourceQuota"): KindInfo("", "resourcequotas", decode_resource_quota),
    ("node.k8s.io/v1", "RuntimeClass"): KindInfo(
        "node.k8s.io", "runtimeclasses", decode_runtime_class
    ),
    ("v1", "ReplicationController"): KindInfo(
        "", "replicationcontrollers", decode_replication_controller
    ),
    ("apps/v1", "Deployment"): KindInfo("apps", "deployments", decode_deployment),
    ("apps/v1", "ReplicaSet"): KindInfo("apps", "replicasets", decode_replica_set),
    ("apps/v1", "StatefulSet"): KindInfo("apps", "statefulsets", decode_stateful_set),
    ("apps/v1", "DaemonSet"): KindInfo("apps", "daemonsets", decode_daemon_set),
    ("batch/v1", "Job"): KindInfo("batch", "jobs", decode_job),
    # Custom resources.
    (POD_GROUP_API_VERSION, POD_GROUP_KIND): KindInfo(
        SCHEDULING_GROUP, "podgroups", decode_pod_group
    ),
}


def kind_info(api_version: str, kind: str) -> KindInfo:
    """The kind's description, or DocumentError in the API server's words."""
    if not kind:
        raise DocumentError("Object 'Kind' is missing")
    if not api_version:
        raise DocumentError("Object 'apiVersion' is missing")
    info = KINDS.get((api_version, kind))
    if info is None:
        raise DocumentError(
            f"no matches for kind {fe.go_quote(kind)} in version {fe.go_quote(api_version)}"
        )
    return info


def decode_object(
    doc: dict[str, Any], path_prefix: str = "", *, name_warnings: list[FieldError] | None = None
) -> KubeObject:
    """Decodes, defaults and validates one manifest.

    Raises DocumentError for an unknown kind or apiVersion and InvalidObjectError listing every
    invalid field otherwise; ``path_prefix`` (e.g. ``"items[2]."``) is put before each field path.
    With ``name_warnings`` given, names only the API server's rules refuse are appended there
    instead of refusing the object (``Reader.name``).
    """
    api_version, kind = doc.get("apiVersion"), doc.get("kind")
    info = kind_info(
        api_version if isinstance(api_version, str) else "", kind if isinstance(kind, str) else ""
    )
    reader = Reader(lenient_names=name_warnings is not None)
    obj = info.decode(reader, doc)
    if name_warnings is not None:
        name_warnings.extend(e.with_prefix(path_prefix) for e in reader.warnings)
    if reader.errors:
        errs = [e.with_prefix(path_prefix) for e in reader.errors]
        raise InvalidObjectError(str(kind), obj.name, errs, group=info.group)
    return obj
