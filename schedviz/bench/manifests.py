"""The benchmark's objects as the manifests a client would send the API server.

The workloads (schedviz.bench.workloads) build ``schedviz.kube.objects`` directly; the e2e mode
sends them through the live system's services, which store manifests and decode them again, as
the API server does with what a client posts. This writes the manifest of each kind the workloads
use, with the fields they set (``decode_object`` of it gives the same object back, which
tests/bench/test_manifests.py checks for every workload). A field the encoder does not know is
refused rather than silently dropped.
"""

from __future__ import annotations

from typing import Any

from schedviz.kube.objects import (
    Affinity,
    Container,
    KubeObject,
    LabelSelector,
    Namespace,
    Node,
    NodeSelectorRequirement,
    NodeSelectorTerm,
    Pod,
    PodAffinity,
    PodAffinityTerm,
    ResourceList,
    TopologySpreadConstraint,
)


class UnsupportedObjectError(ValueError):
    """An object (or a field of one) the benchmark's encoder does not write."""


def _resources(resources: ResourceList) -> dict[str, str]:
    return {name: str(quantity) for name, quantity in resources.items()}


def _label_selector(selector: LabelSelector) -> dict[str, Any]:
    if selector.match_expressions:
        raise UnsupportedObjectError("labelSelector.matchExpressions")
    return {"matchLabels": dict(selector.match_labels)}


def _requirements(requirements: tuple[NodeSelectorRequirement, ...]) -> list[dict[str, Any]]:
    return [
        {"key": r.key, "operator": r.operator, **({"values": list(r.values)} if r.values else {})}
        for r in requirements
    ]


def _node_selector_term(term: NodeSelectorTerm) -> dict[str, Any]:
    out: dict[str, Any] = {}
    if term.match_expressions:
        out["matchExpressions"] = _requirements(term.match_expressions)
    if term.match_fields:
        out["matchFields"] = _requirements(term.match_fields)
    return out


def _pod_affinity_term(term: PodAffinityTerm) -> dict[str, Any]:
    if term.namespace_selector or term.match_label_keys or term.mismatch_label_keys:
        raise UnsupportedObjectError("podAffinityTerm beyond labelSelector and namespaces")
    out: dict[str, Any] = {"topologyKey": term.topology_key}
    if term.label_selector is not None:
        out["labelSelector"] = _label_selector(term.label_selector)
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
    node_affinity = affinity.node_affinity
    if node_affinity is not None:
        if node_affinity.preferred:
            raise UnsupportedObjectError("preferred node affinity")
        if node_affinity.required is not None:
            terms = node_affinity.required.node_selector_terms
            out["nodeAffinity"] = {
                "requiredDuringSchedulingIgnoredDuringExecution": {
                    "nodeSelectorTerms": [_node_selector_term(term) for term in terms]
                }
            }
    if affinity.pod_affinity is not None:
        out["podAffinity"] = _pod_affinity(affinity.pod_affinity)
    if affinity.pod_anti_affinity is not None:
        out["podAntiAffinity"] = _pod_affinity(affinity.pod_anti_affinity)
    return out


def _spread_constraint(constraint: TopologySpreadConstraint) -> dict[str, Any]:
    if (
        constraint.min_domains is not None
        or constraint.node_affinity_policy is not None
        or constraint.node_taints_policy is not None
        or constraint.match_label_keys
    ):
        raise UnsupportedObjectError("topologySpreadConstraints beyond maxSkew and labelSelector")
    out: dict[str, Any] = {
        "maxSkew": constraint.max_skew,
        "topologyKey": constraint.topology_key,
        "whenUnsatisfiable": constraint.when_unsatisfiable,
    }
    if constraint.label_selector is not None:
        out["labelSelector"] = _label_selector(constraint.label_selector)
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
            _spread_constraint(c) for c in pod.topology_spread_constraints
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
