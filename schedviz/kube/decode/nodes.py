"""Node (v1).

Mirrors pkg/apis/core/v1/defaults.go (SetDefaults_NodeStatus: allocatable defaults to capacity)
and pkg/apis/core/validation/validation.go (ValidateNode).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from schedviz.kube.decode.meta import deterministic_uid, read_meta
from schedviz.kube.decode.reader import Reader, child
from schedviz.kube.decode.resources import validate_resource_quantity
from schedviz.kube.decode.taints import read_taints, validate_node_taints
from schedviz.kube.decode.validation import name_is_dns_subdomain
from schedviz.kube.objects import ContainerImage, Node, NodeCondition


def decode_node(r: Reader, doc: Mapping[str, Any]) -> Node:
    """SetDefaults_NodeStatus and ValidateNode."""
    meta = read_meta(r, doc, namespaced=False, name_fn=name_is_dns_subdomain)
    spec = r.obj(doc, "spec", "")
    status = r.obj(doc, "status", "")
    taints = read_taints(r, spec, "spec")
    capacity = r.resources(status, "capacity", "status", dotted=True)
    raw_allocatable = r.optional_map(status, "allocatable", "status")
    allocatable = r.resources(status, "allocatable", "status", dotted=True)
    images = tuple(
        ContainerImage(
            names=tuple(r.str_list(img, "names", p)), size_bytes=r.integer(img, "sizeBytes", p) or 0
        )
        for p, img in r.maps(status, "images", "status")
    )
    conditions = tuple(
        NodeCondition(type=r.string(c, "type", p), status=r.string(c, "status", p))
        for p, c in r.maps(status, "conditions", "status")
    )
    if taints:
        r.extend(validate_node_taints(taints, "metadata.taints"))
    for name, quantity in capacity.items():
        r.extend(validate_resource_quantity(name, quantity, child("status", "capacity", name)))
    for name, quantity in allocatable.items():
        r.extend(validate_resource_quantity(name, quantity, child("status", "allocatable", name)))
    if raw_allocatable is None:
        allocatable = dict(capacity)  # SetDefaults_NodeStatus
    return Node(
        name=meta.name,
        uid=meta.uid or deterministic_uid("Node", "", meta.name),
        labels=meta.labels,
        annotations=meta.annotations,
        unschedulable=r.boolean(spec, "unschedulable", "spec"),
        taints=taints,
        capacity=capacity,
        allocatable=allocatable,
        images=images,
        conditions=conditions,
        creation_timestamp=meta.creation_timestamp,
        manifest=dict(doc),
    )
