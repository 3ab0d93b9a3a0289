"""PersistentVolume, PersistentVolumeClaim (v1), StorageClass and CSINode (storage.k8s.io/v1).

Mirrors pkg/apis/core/v1/defaults.go and pkg/apis/storage/v1/defaults.go (SetDefaults_
PersistentVolume, SetDefaults_PersistentVolumeClaim, SetDefaults_StorageClass),
pkg/apis/core/validation/validation.go (ValidatePersistentVolume, ValidatePersistentVolumeClaim)
and pkg/apis/storage/validation/validation.go (ValidateStorageClass, ValidateCSINode, in part).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from schedviz.kube import errors as fe
from schedviz.kube.decode.meta import (
    read_label_selector,
    read_meta,
    read_node_selector,
    validate_label_name,
    validate_label_selector,
    validate_node_selector,
)
from schedviz.kube.decode.quantities import canonical_quantity
from schedviz.kube.decode.reader import Reader, child, key
from schedviz.kube.decode.validation import (
    IS_NEGATIVE_ERROR,
    IS_NOT_POSITIVE_ERROR,
    is_qualified_name,
    name_is_dns_subdomain,
)
from schedviz.kube.errors import FieldError, Raw
from schedviz.kube.objects import (
    CSINode,
    CSINodeDriver,
    NodeSelectorRequirement,
    NodeSelectorTerm,
    PersistentVolume,
    PersistentVolumeClaim,
    StorageClass,
)

_ACCESS_MODES = ("ReadOnlyMany", "ReadWriteMany", "ReadWriteOnce", "ReadWriteOncePod")
_PV_SOURCES = (
    "gcePersistentDisk",
    "awsElasticBlockStore",
    "hostPath",
    "glusterfs",
    "nfs",
    "rbd",
    "quobyte",
    "cinder",
    "cephfs",
    "fc",
    "flocker",
    "flexVolume",
    "azureFile",
    "vsphereVolume",
    "azureDisk",
    "photonPersistentDisk",
    "portworxVolume",
    "scaleIO",
    "local",
    "storageos",
    "csi",
    "iscsi",
)


def _validate_access_modes(modes: list[str], path: str, required_detail: str) -> list[FieldError]:
    errs: list[FieldError] = []
    if not modes:
        errs.append(fe.required(path, required_detail))
    for mode in modes:
        if mode not in _ACCESS_MODES:
            errs.append(fe.not_supported(path, mode, _ACCESS_MODES))
    if "ReadWriteOncePod" in modes and any(
        m != "ReadWriteOncePod" and m in _ACCESS_MODES for m in modes
    ):
        errs.append(fe.forbidden(path, "may not use ReadWriteOncePod with other access modes"))
    return errs


def _validate_storage_class_name(name: str | None, path: str) -> list[FieldError]:
    if not name:
        return []
    return [fe.invalid(path, name, msg) for msg in name_is_dns_subdomain(name, False)]


def decode_persistent_volume(r: Reader, doc: Mapping[str, Any]) -> PersistentVolume:
    """SetDefaults_PersistentVolume and ValidatePersistentVolume."""
    meta = read_meta(r, doc, namespaced=False, name_fn=name_is_dns_subdomain)
    spec = r.obj(doc, "spec", "")
    modes = r.str_list(spec, "accessModes", "spec")
    capacity = r.resources(spec, "capacity", "spec")
    storage_class = r.string(spec, "storageClassName", "spec")
    node_affinity = None
    affinity_raw = r.optional_map(spec, "nodeAffinity", "spec")
    if affinity_raw is not None:
        required_raw = r.optional_map(affinity_raw, "required", "spec.nodeAffinity")
        if required_raw is None:
            r.add(
                fe.required("spec.nodeAffinity.required", "must specify required node constraints")
            )
        else:
            node_affinity = read_node_selector(r, required_raw, "spec.nodeAffinity.required")
            r.extend(validate_node_selector(node_affinity, "spec.nodeAffinity.required"))
    claim = r.optional_map(spec, "claimRef", "spec")
    claim_ref = None
    if claim is not None:
        claim_namespace = r.string(claim, "namespace", "spec.claimRef")
        claim_ref = f"{claim_namespace}/{r.string(claim, 'name', 'spec.claimRef')}"
    csi = r.obj(spec, "csi", "spec")

    r.extend(_validate_access_modes(modes, "spec.accessModes", ""))
    if not capacity and not spec.get("capacity"):
        r.add(fe.required("spec.capacity"))
    if set(capacity) != {"storage"}:
        r.add(
            fe.not_supported(
                "spec.capacity",
                Raw(f"core.ResourceList{{{', '.join(map(fe.go_quote, capacity))}}}"),
                ("storage",),
            )
        )
    for name, quantity in capacity.items():
        if quantity.amount <= 0:
            r.add(
                fe.invalid(
                    key("spec.capacity", name), canonical_quantity(quantity), IS_NOT_POSITIVE_ERROR
                )
            )
    r.extend(_validate_storage_class_name(storage_class, "spec.storageClassName"))
    sources = [s for s in _PV_SOURCES if spec.get(s) is not None]
    for extra in sources[1:]:
        r.add(fe.forbidden(child("spec", extra), "may not specify more than 1 volume type"))
    if not sources:
        r.add(fe.required("spec", "must specify a volume type"))
    status = r.obj(doc, "status", "")
    return PersistentVolume(
        name=meta.name,
        capacity=capacity,
        access_modes=tuple(modes),
        storage_class_name=storage_class,
        node_affinity=node_affinity,
        claim_ref=claim_ref,
        phase=r.string(status, "phase", "status") or "Pending",
        csi_driver=r.string(csi, "driver", "spec.csi"),
        labels=meta.labels,
        manifest=dict(doc),
    )


def decode_persistent_volume_claim(r: Reader, doc: Mapping[str, Any]) -> PersistentVolumeClaim:
    """SetDefaults_PersistentVolumeClaim and ValidatePersistentVolumeClaim."""
    meta = read_meta(r, doc, namespaced=True, name_fn=name_is_dns_subdomain)
    spec = r.obj(doc, "spec", "")
    modes = r.str_list(spec, "accessModes", "spec")
    resources = r.obj(spec, "resources", "spec")
    requests = r.resources(resources, "requests", "spec.resources")
    storage_class = r.optional_str(spec, "storageClassName", "spec")
    r.extend(
        _validate_access_modes(modes, "spec.accessModes", "at least 1 access mode is required")
    )
    r.extend(
        validate_label_selector(read_label_selector(r, spec, "selector", "spec"), "spec.selector")
    )
    storage = requests.get("storage")
    storage_path = key("spec.resources", "storage")
    if storage is None:
        r.add(fe.required(storage_path))
    elif storage.amount <= 0:
        r.add(fe.invalid(storage_path, canonical_quantity(storage), IS_NOT_POSITIVE_ERROR))
    r.extend(_validate_storage_class_name(storage_class, "spec.storageClassName"))
    status = r.obj(doc, "status", "")
    return PersistentVolumeClaim(
        name=meta.name,
        namespace=meta.namespace,
        storage_class_name=storage_class,
        access_modes=tuple(modes),
        requests=requests,
        volume_name=r.string(spec, "volumeName", "spec"),
        phase=r.string(status, "phase", "status") or "Pending",
        annotations=meta.annotations,
        manifest=dict(doc),
    )


_BINDING_MODES = ("Immediate", "WaitForFirstConsumer")
_RECLAIM_POLICIES = ("Delete", "Retain")


def decode_storage_class(r: Reader, doc: Mapping[str, Any]) -> StorageClass:
    """SetDefaults_StorageClass and ValidateStorageClass (storage.k8s.io/v1)."""
    meta = read_meta(r, doc, namespaced=False, name_fn=name_is_dns_subdomain)
    provisioner = r.string(doc, "provisioner", "")
    if not provisioner:
        r.add(fe.required("provisioner", provisioner))
    else:
        r.extend(
            fe.invalid("provisioner", provisioner.lower(), msg)
            for msg in is_qualified_name(provisioner.lower())
        )
    reclaim = r.string(doc, "reclaimPolicy", "") or "Delete"
    if reclaim not in _RECLAIM_POLICIES:
        r.add(fe.not_supported("reclaimPolicy", reclaim, _RECLAIM_POLICIES))
    mode = r.string(doc, "volumeBindingMode", "") or "Immediate"
    if mode not in _BINDING_MODES:
        r.add(fe.not_supported("volumeBindingMode", mode, _BINDING_MODES))
    terms = []
    for term_path, term in r.maps(doc, "allowedTopologies", ""):
        requirements = []
        seen_keys: set[str] = set()
        for expr_path, expr in r.maps(term, "matchLabelExpressions", term_path):
            label_key = r.string(expr, "key", expr_path)
            values = r.str_list(expr, "values", expr_path)
            if not values:
                r.add(fe.required(child(expr_path, "values")))
            r.extend(validate_label_name(label_key, child(expr_path, "key")))
            if label_key in seen_keys:
                r.add(fe.duplicate(child(expr_path, "key"), label_key))
            seen_keys.add(label_key)
            requirements.append(NodeSelectorRequirement(label_key, "In", tuple(values)))
        terms.append(NodeSelectorTerm(match_expressions=tuple(requirements)))
    return StorageClass(
        name=meta.name,
        provisioner=provisioner,
        volume_binding_mode=mode,
        allowed_topologies=tuple(terms),
        manifest=dict(doc),
    )


def decode_csi_node(r: Reader, doc: Mapping[str, Any]) -> CSINode:
    """ValidateCSINode, in part: driver names, node ids, allocatable counts."""
    meta = read_meta(r, doc, namespaced=False, name_fn=name_is_dns_subdomain)
    spec = r.obj(doc, "spec", "")
    drivers = []
    names: set[str] = set()
    for driver_path, raw in r.maps(spec, "drivers", "spec"):
        name = r.string(raw, "name", driver_path)
        node_id = r.string(raw, "nodeID", driver_path)
        allocatable = r.optional_map(raw, "allocatable", driver_path)
        count = (
            r.int32(allocatable, "count", child(driver_path, "allocatable"))
            if allocatable
            else None
        )
        if not name:
            r.add(fe.required(child(driver_path, "name")))
        elif name in names:
            r.add(fe.duplicate(child(driver_path, "name"), name))
        names.add(name)
        if not node_id:
            r.add(fe.required(child(driver_path, "nodeID")))
        if count is not None and count < 0:
            r.add(fe.invalid(child(driver_path, "allocatable", "count"), count, IS_NEGATIVE_ERROR))
        drivers.append(CSINodeDriver(name=name, node_id=node_id, allocatable_count=count))
    return CSINode(name=meta.name, drivers=tuple(drivers), manifest=dict(doc))
