"""Storage helpers the volume plugins share.

Mirrors what they take from k8s.io/component-helpers/storage/volume (``GetPersistentVolumeClass``,
``GetPersistentVolumeClaimClass``, ``CheckNodeAffinity``), pkg/apis/core/v1/helper
(``ContainsAccessMode``), the listers' NotFound errors, and the snapshot's ``StorageInfos()``.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Protocol, runtime_checkable

from schedviz.kube.nodeaffinity import NodeSelectorMatcher, aggregate_message
from schedviz.kube.objects import Node, PersistentVolume, PersistentVolumeClaim
from schedviz.scheduler.framework.interface import Handle

VOLUME_BINDING_IMMEDIATE = "Immediate"
VOLUME_BINDING_WAIT_FOR_FIRST_CONSUMER = "WaitForFirstConsumer"

READ_WRITE_ONCE = "ReadWriteOnce"
READ_ONLY_MANY = "ReadOnlyMany"
READ_WRITE_MANY = "ReadWriteMany"
READ_WRITE_ONCE_POD = "ReadWriteOncePod"

# The beta annotation still wins over spec.storageClassName.
BETA_STORAGE_CLASS_ANNOTATION = "volume.beta.kubernetes.io/storage-class"

# CSINode annotation listing the in-tree plugins migrated to CSI on the node.
MIGRATED_PLUGINS_ANNOTATION = "storage.alpha.kubernetes.io/migrated-plugins"

PV_PHASE_PENDING = "Pending"
PV_PHASE_AVAILABLE = "Available"
PV_PHASE_BOUND = "Bound"
PV_PHASE_RELEASED = "Released"
PV_PHASE_FAILED = "Failed"
PVC_PHASE_PENDING = "Pending"
PVC_PHASE_BOUND = "Bound"


def manifest_annotations(manifest: Mapping[str, Any]) -> Mapping[str, Any]:
    """``metadata.annotations`` of an object's manifest, for the kinds that keep no field."""
    metadata = manifest.get("metadata")
    annotations = metadata.get("annotations") if isinstance(metadata, Mapping) else None
    return annotations if isinstance(annotations, Mapping) else {}


def claim_storage_class(pvc: PersistentVolumeClaim) -> str:
    """``GetPersistentVolumeClaimClass``: the annotation, else spec.storageClassName, else ""."""
    annotated = pvc.annotations.get(BETA_STORAGE_CLASS_ANNOTATION)
    if annotated is not None:
        return annotated
    return pvc.storage_class_name or ""


def volume_storage_class(pv: PersistentVolume) -> str:
    """``GetPersistentVolumeClass``: the annotation, else spec.storageClassName."""
    annotated = manifest_annotations(pv.manifest).get(BETA_STORAGE_CLASS_ANNOTATION)
    if isinstance(annotated, str):
        return annotated
    return pv.storage_class_name


def check_node_affinity(pv: PersistentVolume, node: Node) -> str | None:
    """``CheckNodeAffinity``: None when the PV may be used on the node, else why not."""
    if pv.node_affinity is None:
        return None
    # A PV with nodeAffinity but no required terms has nothing to match (upstream: nil Required).
    if not pv.node_affinity.node_selector_terms:
        return None
    matcher = NodeSelectorMatcher(pv.node_affinity)
    # Only the node's labels are matched: a matchFields term never matches.
    if matcher.match(Node(name="", labels=node.labels)):
        return None
    if matcher.errors:
        return aggregate_message(matcher.errors)
    return "no matching NodeSelectorTerms"


def not_found_message(resource: str, name: str) -> str:
    """The lister's NotFound error text, e.g. ``persistentvolumeclaim "x" not found``."""
    return f'{resource} "{name}" not found'


@runtime_checkable
class StorageInfoLister(Protocol):
    """Upstream ``StorageInfoLister``: whether a claim ("ns/name") is used by a scheduled pod."""

    def is_pvc_used_by_pods(self, key: str) -> bool: ...


def is_pvc_used_by_pods(handle: Handle, key: str) -> bool:
    """``SnapshotSharedLister().StorageInfos().IsPVCUsedByPods(key)``."""
    lister = handle.snapshot_shared_lister()
    if isinstance(lister, StorageInfoLister):
        return lister.is_pvc_used_by_pods(key)
    return any(key in node_info.pvc_ref_counts for node_info in lister.list())
