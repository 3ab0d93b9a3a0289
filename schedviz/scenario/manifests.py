"""Objects as the API server would return them now: the manifest they were made from, with
what has happened to them since (a pod's node, priority and status; a node's cordon; a
workload's replicas), and the pod update rules a patch must keep.

Mirrors what a GET answers after the writes of kube-apiserver's registry (pkg/registry/core/pod
``podStrategy``, pkg/apis/core/validation ``ValidatePodUpdate``): a pod's spec may change only in
its images, activeDeadlineSeconds, tolerations (additions) and terminationGracePeriodSeconds.
"""

from __future__ import annotations

import copy
from typing import Any

from schedviz.kube.objects import KubeObject, Node, Pod, PodCondition, Workload

API_VERSIONS = {
    "Pod": "v1",
    "Node": "v1",
    "Namespace": "v1",
    "PersistentVolume": "v1",
    "PersistentVolumeClaim": "v1",
    "Service": "v1",
    "ReplicationController": "v1",
    "PriorityClass": "scheduling.k8s.io/v1",
    "PodDisruptionBudget": "policy/v1",
    "StorageClass": "storage.k8s.io/v1",
    "CSINode": "storage.k8s.io/v1",
    "Deployment": "apps/v1",
    "ReplicaSet": "apps/v1",
    "StatefulSet": "apps/v1",
    "DaemonSet": "apps/v1",
    "Job": "batch/v1",
}

POD_UPDATE_FORBIDDEN = (
    "pod updates may not change fields other than `spec.containers[*].image`,"
    "`spec.initContainers[*].image`,`spec.activeDeadlineSeconds`,`spec.tolerations` (only "
    "additions to existing tolerations),`spec.terminationGracePeriodSeconds` (allow it to be "
    "set to 1 if it was previously negative)"
)


def kind_of(obj: KubeObject) -> str:
    return type(obj).__name__


def _condition(condition: PodCondition) -> dict[str, str]:
    out = {"type": condition.type, "status": condition.status}
    if condition.reason:
        out["reason"] = condition.reason
    if condition.message:
        out["message"] = condition.message
    return out


def current_manifest(obj: KubeObject) -> dict[str, Any]:
    """The object as a GET would return it now."""
    manifest = copy.deepcopy(obj.manifest) if obj.manifest else {}
    kind = kind_of(obj)
    manifest.setdefault("apiVersion", API_VERSIONS.get(kind, "v1"))
    manifest.setdefault("kind", kind)
    metadata = manifest.setdefault("metadata", {})
    metadata["name"] = obj.name
    namespace = getattr(obj, "namespace", "")
    if namespace and kind not in ("Node",):
        metadata["namespace"] = namespace
    uid = getattr(obj, "uid", "")
    if uid:
        metadata["uid"] = uid
    labels = getattr(obj, "labels", None)
    if labels:
        metadata["labels"] = dict(labels)
    if isinstance(obj, Pod):
        _pod_state(obj, manifest)
    elif isinstance(obj, Node):
        spec = manifest.setdefault("spec", {})
        if obj.unschedulable:
            spec["unschedulable"] = True
        else:
            spec.pop("unschedulable", None)
    elif isinstance(obj, Workload) and "replicas" in manifest.get("spec", {}):
        manifest["spec"]["replicas"] = obj.replicas
    return manifest


def _pod_state(pod: Pod, manifest: dict[str, Any]) -> None:
    spec = manifest.setdefault("spec", {})
    if pod.node_name:
        spec["nodeName"] = pod.node_name
    if pod.priority is not None:
        spec["priority"] = pod.priority
    if pod.priority_class_name:
        spec["priorityClassName"] = pod.priority_class_name
    if pod.preemption_policy is not None:
        spec["preemptionPolicy"] = pod.preemption_policy
    status: dict[str, Any] = dict(manifest.get("status") or {})
    status["phase"] = pod.phase
    if pod.nominated_node_name:
        status["nominatedNodeName"] = pod.nominated_node_name
    else:
        status.pop("nominatedNodeName", None)
    if pod.conditions:
        status["conditions"] = [_condition(c) for c in pod.conditions]
    manifest["status"] = status


def _images_cleared(containers: Any) -> Any:
    if not isinstance(containers, list):
        return containers
    return [
        {k: v for k, v in c.items() if k != "image"} if isinstance(c, dict) else c
        for c in containers
    ]


def _comparable_spec(spec: dict[str, Any]) -> dict[str, Any]:
    out = dict(spec)
    for field in ("containers", "initContainers"):
        if field in out:
            out[field] = _images_cleared(out[field])
    for field in ("activeDeadlineSeconds", "terminationGracePeriodSeconds", "tolerations"):
        out.pop(field, None)
    return out


def pod_update_error(before: dict[str, Any], after: dict[str, Any]) -> str:
    """ValidatePodUpdate's spec rule: the error's text, or "" when the update is allowed."""
    old_spec = before.get("spec") or {}
    new_spec = after.get("spec") or {}
    if not isinstance(old_spec, dict) or not isinstance(new_spec, dict):
        return ""
    old_tolerations = old_spec.get("tolerations") or []
    new_tolerations = new_spec.get("tolerations") or []
    removed = [t for t in old_tolerations if t not in new_tolerations]
    if _comparable_spec(old_spec) != _comparable_spec(new_spec) or removed:
        return f"spec: Forbidden: {POD_UPDATE_FORBIDDEN}"
    return ""
