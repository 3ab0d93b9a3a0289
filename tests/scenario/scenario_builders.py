"""Scenarios built from a few lines: nodes, pods, priority classes as operations."""

from __future__ import annotations

from typing import Any

from schedviz.scenario.spec import API_VERSION, KIND


def node(name: str, cpu: str = "2", zone: str = "") -> dict[str, Any]:
    labels = {"topology.kubernetes.io/zone": zone} if zone else {}
    return {
        "apiVersion": "v1",
        "kind": "Node",
        "metadata": {"name": name, "labels": labels},
        "status": {"allocatable": {"cpu": cpu, "memory": "4Gi", "pods": "110"}},
    }


def pod(name: str, cpu: str = "1", **spec: Any) -> dict[str, Any]:
    container = {"name": "c", "image": "pause", "resources": {"requests": {"cpu": cpu}}}
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": name, "namespace": "default"},
        "spec": {"containers": [container], **spec},
    }


def priority_class(name: str, value: int) -> dict[str, Any]:
    return {
        "apiVersion": "scheduling.k8s.io/v1",
        "kind": "PriorityClass",
        "metadata": {"name": name},
        "value": value,
    }


def create(op_id: str, step: int, obj: dict[str, Any]) -> dict[str, Any]:
    return {"id": op_id, "step": step, "createOperation": {"object": obj}}


def patch(
    op_id: str, step: int, kind: str, name: str, body: Any, patch_type: str, namespace: str = ""
) -> dict[str, Any]:
    object_meta = {"name": name, **({"namespace": namespace} if namespace else {})}
    return {
        "id": op_id,
        "step": step,
        "patchOperation": {
            "typeMeta": {"apiVersion": "v1", "kind": kind},
            "objectMeta": object_meta,
            "patch": body,
            "patchType": patch_type,
        },
    }


def delete(op_id: str, step: int, kind: str, name: str, namespace: str = "") -> dict[str, Any]:
    object_meta = {"name": name, **({"namespace": namespace} if namespace else {})}
    return {
        "id": op_id,
        "step": step,
        "deleteOperation": {
            "typeMeta": {"apiVersion": "v1", "kind": kind},
            "objectMeta": object_meta,
        },
    }


def done(op_id: str, step: int) -> dict[str, Any]:
    return {"id": op_id, "step": step, "doneOperation": {}}


def scenario(*operations: dict[str, Any], name: str = "test", **spec: Any) -> dict[str, Any]:
    return {
        "apiVersion": API_VERSION,
        "kind": KIND,
        "metadata": {"name": name},
        "spec": {"operations": list(operations), **spec},
    }
