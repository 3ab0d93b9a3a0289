"""The benchmark's objects as the manifests a client would send the API server.

The workloads (schedviz.bench.workloads) build ``schedviz.kube.objects`` directly; the e2e mode
sends them through the live system's services, which store manifests and decode them again, as
the API server does with what a client posts. This writes the manifest of each kind the workloads
use, with the fields they set; node affinity, label selectors and spread constraints are written
by the KubeSchedulerConfiguration encoder, which has them in the same form. ``decode_object`` of
a manifest gives the object back (tests/bench/test_manifests.py checks it for every workload).
A field the encoder does not know is refused rather than silently dropped.
"""

from __future__ import annotations

from typing import Any

from schedviz.kube.objects import (
    Affinity,
    Container,
    KubeObject,
    Namespace,
    Node,
    Pod,
    PodAffinity,
    PodAffinityTerm,
    ResourceList,
)
from schedviz.scheduler.apis.config.v1 import (
    encode_label_selector,
    encode_node_affinity,
    encode_topology_spread_constraint,
)


class UnsupportedObjectError(ValueError):
    """An object (or a field of one) the benchmark's encoder does not write."""


def _resources(resources: ResourceList) -> dict[str, str]:
    return {name: str(quantity) for name, quantity in resources.items()}


def _pod_affinity_term(term: PodAffinityTerm) -> dict[str, Any]:
    if term.namespace_selector or term.match_label_keys or term.mismatch_label_keys:
        raise UnsupportedObjectError("podAffinityTerm beyond labelSelector and namespaces")
    out: dict[str, Any] = {"topologyKey": term.topology_key}
    if term.label_selector is not None:
        out["labelSelector"] = encode_label_selector(term.label_selector)
    if term.namespaces:
        out["namespaces"] = list(term.namespaces)
    return out


def _pod_affinity(affinity: PodAffinity) -> dict[str, Any]:
    if affinity.preferred:
        raise UnsupportedObjectError("preferred pod (anti-)affinity")
    return {
        "requiredDuringSchedulingIgnoredDuringExecution": [
            _pod_affinity_term(term) for term in affinity.required
        ]
    }


def _affinity(affinity: Affinity) -> dict[str, Any]:
    out: dict[str, Any] = {}
    if affinity.node_affinity is not None:
        out["nodeAffinity"] = encode_node_affinity(affinity.node_affinity)
    if affinity.pod_affinity is not None:
        out["podAffinity"] = _pod_affinity(affinity.pod_affinity)
    if affinity.pod_anti_affinity is not None:
        out["podAntiAffinity"] = _pod_affinity(affinity.pod_anti_affinity)
    return out


def _container(container: Container) -> dict[str, Any]:
    resources: dict[str, Any] = {}
    if container.requests:
        resources["requests"] = _resources(container.requests)
    if container.limits:
        resources["limits"] = _resources(container.limits)
    out: dict[str, Any] = {"name": container.name, "image": container.image}
    if resources:
        out["resources"] = resources
    if container.ports:
        out["ports"] = [
            {"containerPort": p.container_port, "protocol": p.protocol} for p in container.ports
        ]
    return out


def _metadata(name: str, namespace: str, uid: str, labels: dict[str, str]) -> dict[str, Any]:
    metadata: dict[str, Any] = {"name": name}
    if namespace:
        metadata["namespace"] = namespace
    if uid:
        metadata["uid"] = uid
    if labels:
        metadata["labels"] = dict(labels)
    return metadata


def _pod(pod: Pod) -> dict[str, Any]:
    if pod.node_name or pod.tolerations or pod.node_selector or pod.volumes:
        raise UnsupportedObjectError(f"pod {pod.key}: nodeName, tolerations, nodeSelector, volumes")
    spec: dict[str, Any] = {"containers": [_container(c) for c in pod.containers]}
    if pod.priority is not None:
        spec["priority"] = pod.priority
    if pod.affinity is not None:
        spec["affinity"] = _affinity(pod.affinity)
    if pod.topology_spread_constraints:
        spec["topologySpreadConstraints"] = [
            encode_topology_spread_constraint(c) for c in pod.topology_spread_constraints
        ]
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": _metadata(pod.name, pod.namespace, pod.uid, pod.labels),
        "spec": spec,
    }


def _node(node: Node) -> dict[str, Any]:
    if node.taints or node.unschedulable or node.images:
        raise UnsupportedObjectError(f"node {node.name}: taints, unschedulable, images")
    return {
        "apiVersion": "v1",
        "kind": "Node",
        "metadata": _metadata(node.name, "", node.uid, node.labels),
        "status": {
            "capacity": _resources(node.capacity),
            "allocatable": _resources(node.allocatable),
            "conditions": [{"type": c.type, "status": c.status} for c in node.conditions],
        },
    }


def to_manifest(obj: KubeObject) -> dict[str, Any]:
    """The manifest of a benchmark object (Node, Namespace or Pod)."""
    if isinstance(obj, Pod):
        return _pod(obj)
    if isinstance(obj, Node):
        return _node(obj)
    if isinstance(obj, Namespace):
        return {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": obj.name}}
    raise UnsupportedObjectError(f"{type(obj).__name__} objects")


def to_list_json(objects: list[KubeObject]) -> dict[str, Any]:
    """A ``kind: List`` of the objects, as ``kubectl get -o json`` prints several."""
    return {"apiVersion": "v1", "kind": "List", "items": [to_manifest(obj) for obj in objects]}
