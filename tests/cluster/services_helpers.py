"""Manifest builders and a stored trace shared by the services tests
(tests/cluster/test_services*.py)."""

from __future__ import annotations

from typing import Any

import yaml


def node(name: str, cpu: str = "4", **labels: str) -> str:
    return yaml.safe_dump(
        {
            "apiVersion": "v1",
            "kind": "Node",
            "metadata": {"name": name, "labels": labels or {"kubernetes.io/hostname": name}},
            "status": {"allocatable": {"cpu": cpu, "memory": "8Gi", "pods": "110"}},
        }
    )


def pod_manifest(name: str, cpu: str = "1", **spec: Any) -> dict[str, Any]:
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": name},
        "spec": {
            "containers": [
                {"name": "c", "image": "nginx", "resources": {"requests": {"cpu": cpu}}}
            ],
            **spec,
        },
    }


def pod(name: str, cpu: str = "1", **spec: Any) -> str:
    return yaml.safe_dump(pod_manifest(name, cpu, **spec))


def docs(*documents: str) -> str:
    return "---\n".join(documents)


def a_trace(number: int, pod_key: str, node_name: str | None = None) -> dict[str, Any]:
    return {
        "cycle": number,
        "pod": pod_key,
        "profile": "default-scheduler",
        "attempt": 1,
        "time": 1.5,
        "wallTime": 0.01,
        "result": "Scheduled" if node_name else "Unschedulable",
        "node": node_name,
        "message": "",
        "points": [],
    }
