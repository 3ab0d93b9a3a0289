"""NodeVolumeLimits: a node may not attach more volumes of a CSI driver than its CSINode allows.

Mirrors pkg/scheduler/framework/plugins/nodevolumelimits/csi.go (v1.34). The pod's volumes and
those of the pods on the node are counted per driver, each volume once (``driver/volumeHandle``);
a claim not bound yet counts under its class's provisioner with a handle of its own. The limits
are the CSINode's ``allocatable.count`` per driver.

In-tree volumes of a plugin whose CSI migration is on (aws-ebs, gce-pd, azure-disk, cinder, and
portworx where the CSINode lists it) count under the CSI driver that replaced the plugin, with
csi-translation-lib's volume handle: an in-tree PV, an inline volume, or a claim of a class with
such a provisioner.

Deliberately left out:
- VolumeAttachment objects are not modelled, so attachments of pods no longer on the node are
  not counted, and the VolumeAttachment event is not registered;
- limits from the Node's allocatable (``attachable-volumes-csi-*``) are not read, only CSINode;
- a generic ephemeral volume's claim is not checked to be owned by the pod;
- the volume handle of a CSI PV is its manifest's ``spec.csi.volumeHandle``, else its name; the
  handle prefix of unbound claims is fixed (upstream draws a random one per process).
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from typing import Any
from urllib.parse import urlsplit

from schedviz.kube.objects import (
    CSINode,
    PersistentVolume,
    PersistentVolumeClaim,
    Pod,
    StorageClass,
    Volume,
)
from schedviz.scheduler.framework.cycle_state import CycleState
from schedviz.scheduler.framework.interface import (
    Code,
    EnqueueExtensions,
    FilterPlugin,
    Handle,
    PreFilterExtensions,
    PreFilterPlugin,
    PreFilterResult,
    Status,
    as_status,
    new_status,
)
from schedviz.scheduler.framework.plugins.names import NODE_VOLUME_LIMITS
from schedviz.scheduler.framework.plugins.volumebinding.binder import pod_uses_claim, volume_claim
from schedviz.scheduler.framework.plugins.volumebinding.storage import (
    MIGRATED_PLUGINS_ANNOTATION,
    claim_storage_class,
    manifest_annotations,
    not_found_message,
)
from schedviz.scheduler.framework.types import (
    ActionType,
    ClusterEvent,
    ClusterEventWithHint,
    EventResource,
    NodeInfo,
    QueueingHint,
)

NAME = NODE_VOLUME_LIMITS

ERR_REASON_MAX_VOLUME_COUNT_EXCEEDED = "node(s) exceed max volume count"

# Stands for upstream's per-process random prefix of unbound claims' volume handles.
UNBOUND_VOLUME_ID_PREFIX = "schedviz-unbound"

# In-tree plugins (provisioner names) whose CSI migration is on by default, and their drivers.
_MIGRATED_PROVISIONERS = {
    "kubernetes.io/aws-ebs": "ebs.csi.aws.com",
    "kubernetes.io/gce-pd": "pd.csi.storage.gke.io",
    "kubernetes.io/azure-disk": "disk.csi.azure.com",
    "kubernetes.io/cinder": "cinder.csi.openstack.org",
}
# The Portworx migration is on only where the node lists it in this CSINode annotation.
_PORTWORX_PROVISIONER = "kubernetes.io/portworx-volume"
_PORTWORX_DRIVER = "pxd.portworx.com"
# In-tree plugins that csi-translation-lib can translate (IsMigratableIntreePluginByName).
_MIGRATABLE_PROVISIONERS = frozenset(
    {
        *_MIGRATED_PROVISIONERS,
        _PORTWORX_PROVISIONER,
        "kubernetes.io/azure-file",
        "kubernetes.io/vsphere-volume",
    }
)
# Inline volume sources that csi-translation-lib can translate (IsInlineMigratable).
MIGRATABLE_INLINE_SOURCES = frozenset(
    {
        "awsElasticBlockStore",
        "gcePersistentDisk",
        "azureDisk",
        "azureFile",
        "cinder",
        "vsphereVolume",
        "portworxVolume",
    }
)


# csi-translation-lib: the in-tree plugin behind each migratable volume source.
_SOURCE_PLUGINS = {
    "awsElasticBlockStore": "kubernetes.io/aws-ebs",
    "gcePersistentDisk": "kubernetes.io/gce-pd",
    "azureDisk": "kubernetes.io/azure-disk",
    "azureFile": "kubernetes.io/azure-file",
    "cinder": "kubernetes.io/cinder",
    "vsphereVolume": "kubernetes.io/vsphere-volume",
    "portworxVolume": _PORTWORX_PROVISIONER,
}
_AWS_VOLUME_ID = re.compile(r"^vol-[^/]*$")
_GCE_UNSPECIFIED = "UNSPECIFIED"
_GCE_MULTI_ZONE_DELIMITER = "__"
_LABEL_ZONE = "topology.kubernetes.io/zone"
_LABEL_ZONE_BETA = "failure-domain.beta.kubernetes.io/zone"


class _TranslationError(Exception):
    """csi-translation-lib could not translate an in-tree volume."""


def _ebs_volume_id(kubernetes_id: str) -> str:
    """KubernetesVolumeIDToEBSVolumeID: aws://<zone>/<id>, aws:///<id> or a bare id."""
    if not kubernetes_id.startswith("aws://"):
        return kubernetes_id
    aws_id = urlsplit(kubernetes_id).path.strip("/")
    if not _AWS_VOLUME_ID.match(aws_id):
        raise _TranslationError(f"Invalid format for AWS volume ({kubernetes_id})")
    return aws_id


def _gce_region(zones: list[str]) -> str:
    """gceGetRegionFromZones: every zone must lie in the same region."""
    regions = set()
    for zone in zones:
        parts = zone.split("-")
        if len(parts) != 3:
            raise _TranslationError(
                f"zone in unexpected format, expected: <region>-<zone>, got: {zone}"
            )
        regions.add("-".join(parts[:2]))
    if len(regions) != 1:
        raise _TranslationError(f"multiple or no regions gotten from zones, got: {sorted(regions)}")
    return regions.pop()


def _source_string(source: Mapping[str, Any], key: str) -> str:
    value = source.get(key)
    return value if isinstance(value, str) else ""


def translate_in_tree_volume(
    kind: str, source: Mapping[str, Any], pv_labels: Mapping[str, str] | None
) -> str:
    """The CSI volume handle csi-translation-lib gives an in-tree volume source: of a PV when
    ``pv_labels`` is given (TranslateInTreePVToCSI), else of a pod's inline volume
    (TranslateInTreeInlineVolumeToCSI)."""
    if kind == "awsElasticBlockStore":
        return _ebs_volume_id(_source_string(source, "volumeID"))
    if kind == "gcePersistentDisk":
        pd_name = _source_string(source, "pdName")
        if pv_labels is None:
            return f"projects/{_GCE_UNSPECIFIED}/zones/{_GCE_UNSPECIFIED}/disks/{pd_name}"
        zones_label = pv_labels.get(_LABEL_ZONE_BETA) or pv_labels.get(_LABEL_ZONE) or ""
        zones = zones_label.split(_GCE_MULTI_ZONE_DELIMITER)
        if len(zones) == 1 and zones[0]:
            return f"projects/{_GCE_UNSPECIFIED}/zones/{zones[0]}/disks/{pd_name}"
        if len(zones) > 1:
            region = _gce_region(zones)
            return f"projects/{_GCE_UNSPECIFIED}/regions/{region}/disks/{pd_name}"
        return f"projects/{_GCE_UNSPECIFIED}/zones/{_GCE_UNSPECIFIED}/disks/{pd_name}"
    if kind == "azureDisk":
        return _source_string(source, "diskURI")
    if kind in ("cinder", "portworxVolume"):
        return _source_string(source, "volumeID")
    raise _TranslationError(f"volume source {kind} is not translated")


def _pv_source(pv: PersistentVolume) -> tuple[str, Mapping[str, Any]]:
    spec = pv.manifest.get("spec")
    if isinstance(spec, Mapping):
        for kind in _SOURCE_PLUGINS:
            source = spec.get(kind)
            if isinstance(source, Mapping):
                return kind, source
    return "", {}


class _LookupError(Exception):
    """A lookup that fails the pod; ``not_found`` makes it unresolvable."""

    def __init__(self, message: str, not_found: bool = False) -> None:
        super().__init__(message)
        self.not_found = not_found


def is_csi_migration_on(csi_node: CSINode | None, plugin_name: str) -> bool:
    if csi_node is None or not plugin_name:
        return False
    if plugin_name in _MIGRATED_PROVISIONERS:
        return True
    if plugin_name != _PORTWORX_PROVISIONER:
        return False
    migrated = manifest_annotations(csi_node.manifest).get(MIGRATED_PLUGINS_ANNOTATION, "")
    return isinstance(migrated, str) and plugin_name in migrated.split(",")


def csi_volume_handle(pv: PersistentVolume) -> str:
    spec = pv.manifest.get("spec")
    csi = spec.get("csi") if isinstance(spec, Mapping) else None
    handle = csi.get("volumeHandle") if isinstance(csi, Mapping) else None
    return handle if isinstance(handle, str) and handle else pv.name


def _csi_driver_name(plugin_name: str) -> str:
    """GetCSINameFromInTreeName for the plugins whose migration can be on."""
    return _MIGRATED_PROVISIONERS.get(plugin_name, _PORTWORX_DRIVER)


def get_volume_limits(csi_node: CSINode | None) -> dict[str, int]:
    """The attach limit of each driver that has one."""
    if csi_node is None:
        return {}
    return {
        driver.name: driver.allocatable_count
        for driver in csi_node.drivers
        if driver.allocatable_count is not None
    }


def _uses_claim_or_migratable(pod: Pod) -> bool:
    return any(
        volume_claim(pod, v) is not None or v.source_kind in MIGRATABLE_INLINE_SOURCES
        for v in pod.volumes
    )


class CSILimits(PreFilterPlugin, FilterPlugin, EnqueueExtensions):
    def __init__(self, handle: Handle) -> None:
        self._objects = handle.objects

    def name(self) -> str:
        return NAME

    def events_to_register(self) -> list[ClusterEventWithHint]:
        return [
            # No hint: any new CSINode may allow more volumes.
            ClusterEventWithHint(ClusterEvent(EventResource.CSINode, ActionType.Add)),
            ClusterEventWithHint(
                ClusterEvent(EventResource.CSINode, ActionType.Update),
                self.is_schedulable_after_csi_node_updated,
            ),
            ClusterEventWithHint(
                ClusterEvent(EventResource.Pod, ActionType.Delete),
                self.is_schedulable_after_pod_deleted,
            ),
            ClusterEventWithHint(
                ClusterEvent(EventResource.PersistentVolumeClaim, ActionType.Add),
                self.is_schedulable_after_pvc_added,
            ),
        ]

    def is_schedulable_after_pod_deleted(
        self, pod: Pod, old_obj: object, new_obj: object
    ) -> QueueingHint:
        deleted = old_obj
        if not isinstance(deleted, Pod):
            return QueueingHint.Queue
        if not deleted.volumes or not deleted.node_name:
            return QueueingHint.QueueSkip
        if _uses_claim_or_migratable(deleted):
            return QueueingHint.Queue
        return QueueingHint.QueueSkip

    def is_schedulable_after_pvc_added(
        self, pod: Pod, old_obj: object, new_obj: object
    ) -> QueueingHint:
        if not isinstance(new_obj, PersistentVolumeClaim):
            return QueueingHint.Queue
        return QueueingHint.Queue if pod_uses_claim(pod, new_obj) else QueueingHint.QueueSkip

    def is_schedulable_after_csi_node_updated(
        self, pod: Pod, old_obj: object, new_obj: object
    ) -> QueueingHint:
        if not isinstance(old_obj, CSINode) or not isinstance(new_obj, CSINode):
            return QueueingHint.Queue
        old_limits = {d.name: d.allocatable_count or 0 for d in old_obj.drivers}
        for driver in new_obj.drivers:
            if (driver.allocatable_count or 0) > old_limits.get(driver.name, 0):
                return QueueingHint.Queue
        return QueueingHint.QueueSkip

    def pre_filter(
        self, state: CycleState, pod: Pod, nodes: Sequence[NodeInfo]
    ) -> tuple[PreFilterResult | None, Status | None]:
        if _uses_claim_or_migratable(pod):
            return None, None
        return None, Status(Code.Skip)

    def pre_filter_extensions(self) -> PreFilterExtensions | None:
        return None

    def filter(self, state: CycleState, pod: Pod, node_info: NodeInfo) -> Status | None:
        if not pod.volumes:
            return None
        node = node_info.node
        if node is None:
            return as_status("node not found")
        csi_node = self._objects.get("CSINode", node.name)
        if not isinstance(csi_node, CSINode):
            csi_node = None

        new_volumes: dict[str, str] = {}
        try:
            self._filter_attachable_volumes(pod, csi_node, True, new_volumes)
        except _LookupError as error:
            if error.not_found:
                return new_status(Code.UnschedulableAndUnresolvable, str(error))
            return as_status(error)
        if not new_volumes:
            return None

        limits = get_volume_limits(csi_node)
        if not limits:
            return None

        attached_volumes: dict[str, str] = {}
        for existing in node_info.pods:
            try:
                self._filter_attachable_volumes(existing.pod, csi_node, False, attached_volumes)
            except _LookupError as error:
                return as_status(error)

        attached_count: dict[str, int] = {}
        for unique_name, driver in attached_volumes.items():
            # A volume several pods share is attached once.
            new_volumes.pop(unique_name, None)
            attached_count[driver] = attached_count.get(driver, 0) + 1
        new_count: dict[str, int] = {}
        for driver in new_volumes.values():
            new_count[driver] = new_count.get(driver, 0) + 1

        for driver, count in new_count.items():
            limit = limits.get(driver)
            if limit is not None and attached_count.get(driver, 0) + count > limit:
                return new_status(Code.Unschedulable, ERR_REASON_MAX_VOLUME_COUNT_EXCEEDED)
        return None

    def _filter_attachable_volumes(
        self, pod: Pod, csi_node: CSINode | None, new_pod: bool, result: dict[str, str]
    ) -> None:
        """Adds the pod's CSI volumes to ``result`` as unique name -> driver."""
        for volume in pod.volumes:
            claim = volume_claim(pod, volume)
            if claim is None:
                # An inline volume counts when it is migratable and its plugin migrated.
                self._check_attachable_inline_volume(volume, csi_node, result)
                continue
            if not claim.name:
                raise _LookupError("PersistentVolumeClaim had no name")
            pvc = self._objects.get("PersistentVolumeClaim", f"{pod.namespace}/{claim.name}")
            if not isinstance(pvc, PersistentVolumeClaim):
                if new_pod:
                    # The pod cannot run without its claim.
                    message = not_found_message("persistentvolumeclaim", claim.name)
                    raise _LookupError(
                        f"looking up PVC {pod.namespace}/{claim.name}: {message}", not_found=True
                    )
                # An existing pod's missing claim may not be attached to this node: skip it.
                continue
            driver, handle = self._csi_driver_info(csi_node, pvc)
            if not driver or not handle:
                continue
            result[f"{driver}/{handle}"] = driver

    def _check_attachable_inline_volume(
        self, volume: Volume, csi_node: CSINode | None, result: dict[str, str]
    ) -> None:
        plugin_name = _SOURCE_PLUGINS.get(volume.source_kind)
        if plugin_name is None or not is_csi_migration_on(csi_node, plugin_name):
            return
        try:
            handle = translate_in_tree_volume(volume.source_kind, volume.source, None)
        except _TranslationError as error:
            raise _LookupError(
                f"converting volume({volume.name}) from inline to csi: {error}"
            ) from error
        driver = _csi_driver_name(plugin_name)
        result[f"{driver}/{handle}"] = driver

    def _csi_driver_info(
        self, csi_node: CSINode | None, pvc: PersistentVolumeClaim
    ) -> tuple[str, str]:
        if not pvc.volume_name:
            return self._csi_driver_info_from_storage_class(csi_node, pvc)
        pv = self._objects.get("PersistentVolume", pvc.volume_name)
        if not isinstance(pv, PersistentVolume):
            # Deleted, or the claim is pre-bound to a PV not created yet: count by class.
            return self._csi_driver_info_from_storage_class(csi_node, pvc)
        if not pv.csi_driver:
            # An in-tree PV counts under its CSI driver when it is migratable and migrated.
            kind, source = _pv_source(pv)
            if not kind:
                return "", ""
            plugin_name = _SOURCE_PLUGINS[kind]
            if not is_csi_migration_on(csi_node, plugin_name):
                return "", ""
            try:
                handle = translate_in_tree_volume(kind, source, pv.labels)
            except _TranslationError:
                return "", ""
            return _csi_driver_name(plugin_name), handle
        return pv.csi_driver, csi_volume_handle(pv)

    def _csi_driver_info_from_storage_class(
        self, csi_node: CSINode | None, pvc: PersistentVolumeClaim
    ) -> tuple[str, str]:
        class_name = claim_storage_class(pvc)
        if not class_name:
            # Without a class the claim binds immediately, so it is bound already.
            return "", ""
        storage_class = self._objects.get("StorageClass", class_name)
        if not isinstance(storage_class, StorageClass):
            return "", ""
        handle = f"{UNBOUND_VOLUME_ID_PREFIX}-{pvc.namespace}/{pvc.name}"
        provisioner = storage_class.provisioner
        if provisioner in _MIGRATABLE_PROVISIONERS:
            if not is_csi_migration_on(csi_node, provisioner):
                return "", ""
            return _csi_driver_name(provisioner), handle
        return provisioner, handle


def new(args: object | None, handle: Handle) -> CSILimits:
    return CSILimits(handle)
