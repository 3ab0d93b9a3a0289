"""VolumeZone: the zone and region labels of a pod's bound volumes must match the node's.

Mirrors pkg/scheduler/framework/plugins/volumezone/volume_zone.go (v1.34), with queueing hints
enabled (the default since v1.34, so a Node registers Add and UpdateNodeLabel). Only the labels of
bound PersistentVolumes count; a PV's ``nodeAffinity`` is VolumeBinding's business. Unbound claims
of a WaitForFirstConsumer class are left to VolumeBinding too.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from schedviz.kube.objects import PersistentVolume, PersistentVolumeClaim, Pod, StorageClass
from schedviz.scheduler.framework.cycle_state import CycleState, StateNotFoundError
from schedviz.scheduler.framework.interface import (
    Code,
    EnqueueExtensions,
    Handle,
    NodeOnlyFilterPlugin,
    PreFilterExtensions,
    PreFilterPlugin,
    PreFilterResult,
    Status,
    new_status,
)
from schedviz.scheduler.framework.plugins.names import VOLUME_ZONE
from schedviz.scheduler.framework.plugins.volumebinding.storage import (
    VOLUME_BINDING_WAIT_FOR_FIRST_CONSUMER,
    claim_storage_class,
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

NAME = VOLUME_ZONE
PRE_FILTER_STATE_KEY = "PreFilter" + NAME

ERR_REASON_CONFLICT = "node(s) had no available volume zone"

LABEL_FAILURE_DOMAIN_BETA_ZONE = "failure-domain.beta.kubernetes.io/zone"
LABEL_FAILURE_DOMAIN_BETA_REGION = "failure-domain.beta.kubernetes.io/region"
LABEL_TOPOLOGY_ZONE = "topology.kubernetes.io/zone"
LABEL_TOPOLOGY_REGION = "topology.kubernetes.io/region"

TOPOLOGY_LABELS = (
    LABEL_FAILURE_DOMAIN_BETA_ZONE,
    LABEL_FAILURE_DOMAIN_BETA_REGION,
    LABEL_TOPOLOGY_ZONE,
    LABEL_TOPOLOGY_REGION,
)

# A PV may list several zones in one label value (cloud-provider volume helpers).
LABEL_MULTI_ZONE_DELIMITER = "__"


def translate_to_ga_label(label: str) -> str:
    if label == LABEL_FAILURE_DOMAIN_BETA_REGION:
        return LABEL_TOPOLOGY_REGION
    if label == LABEL_FAILURE_DOMAIN_BETA_ZONE:
        return LABEL_TOPOLOGY_ZONE
    return label


def label_zones_to_set(value: str) -> frozenset[str] | None:
    """``LabelZonesToSet``: the zones of a label value, or None when one of them is empty."""
    zones = [zone.strip() for zone in value.split(LABEL_MULTI_ZONE_DELIMITER)]
    if any(not zone for zone in zones):
        return None
    return frozenset(zones)


@dataclass(frozen=True, slots=True)
class PVTopology:
    pv_name: str
    key: str
    values: frozenset[str]


def get_pv_topologies(pv: PersistentVolume) -> list[PVTopology]:
    """The PV's topology labels; a label that does not parse is ignored."""
    topologies = []
    for key in TOPOLOGY_LABELS:
        value = pv.labels.get(key)
        if value is None:
            continue
        zones = label_zones_to_set(value)
        if zones is not None:
            topologies.append(PVTopology(pv.name, key, zones))
    return topologies


@dataclass(frozen=True, slots=True)
class _StateData:
    pod_pv_topologies: tuple[PVTopology, ...]

    def clone(self) -> _StateData:
        return self


def _claim_names(pod: Pod) -> list[str]:
    return [v.pvc_claim_name for v in pod.volumes if v.pvc_claim_name is not None]


class VolumeZone(PreFilterPlugin, NodeOnlyFilterPlugin, EnqueueExtensions):
    # Filter reads the node object and the cycle state only (interface.NodeOnlyFilterPlugin).
    filter_reads_node_only = True

    def __init__(self, handle: Handle) -> None:
        self._objects = handle.objects

    def name(self) -> str:
        return NAME

    def pre_filter(
        self, state: CycleState, pod: Pod, nodes: Sequence[NodeInfo]
    ) -> tuple[PreFilterResult | None, Status | None]:
        topologies, status = self._get_pv_by_pod(pod)
        if status is not None:
            return None, status
        if not topologies:
            return None, Status(Code.Skip)
        state.write(PRE_FILTER_STATE_KEY, _StateData(tuple(topologies)))
        return None, None

    def _get_pv_by_pod(self, pod: Pod) -> tuple[list[PVTopology], Status | None]:
        topologies: list[PVTopology] = []
        for pvc_name in _claim_names(pod):
            if not pvc_name:
                return [], _unresolvable("PersistentVolumeClaim had no name")
            pvc = self._objects.get("PersistentVolumeClaim", f"{pod.namespace}/{pvc_name}")
            if not isinstance(pvc, PersistentVolumeClaim):
                return [], _unresolvable(not_found_message("persistentvolumeclaim", pvc_name))
            pv_name = pvc.volume_name
            if not pv_name:
                class_name = claim_storage_class(pvc)
                if not class_name:
                    return [], _unresolvable(
                        "PersistentVolumeClaim had no pv name and storageClass name"
                    )
                storage_class = self._objects.get("StorageClass", class_name)
                if not isinstance(storage_class, StorageClass):
                    return [], _unresolvable(
                        not_found_message("storageclass.storage.k8s.io", class_name)
                    )
                if not storage_class.volume_binding_mode:
                    return [], _unresolvable(
                        f'VolumeBindingMode not set for StorageClass "{class_name}"'
                    )
                if storage_class.volume_binding_mode == VOLUME_BINDING_WAIT_FOR_FIRST_CONSUMER:
                    # VolumeBinding picks the volume, and so its zone.
                    continue
                return [], _unresolvable("PersistentVolume had no name")
            pv = self._objects.get("PersistentVolume", pv_name)
            if not isinstance(pv, PersistentVolume):
                return [], _unresolvable(not_found_message("persistentvolume", pv_name))
            topologies.extend(get_pv_topologies(pv))
        return topologies, None

    def pre_filter_extensions(self) -> PreFilterExtensions | None:
        return None

    def filter(self, state: CycleState, pod: Pod, node_info: NodeInfo) -> Status | None:
        if not pod.volumes:
            return None
        try:
            topologies: Sequence[PVTopology] = state.read_as(
                PRE_FILTER_STATE_KEY, _StateData
            ).pod_pv_topologies
        except (StateNotFoundError, TypeError):
            # Without PreFilter's state, compute it here, as upstream falls back to.
            topologies, status = self._get_pv_by_pod(pod)
            if status is not None:
                return status
        node = node_info.node
        labels = node.labels if node is not None else {}
        if not any(label in labels for label in TOPOLOGY_LABELS):
            # A node without topology labels (a single-zone cluster) takes any volume.
            return None
        for topology in topologies:
            value = labels.get(topology.key)
            if value is None:
                # A PV's beta label also matches the node's GA label.
                value = labels.get(translate_to_ga_label(topology.key))
            if value is None or value not in topology.values:
                return new_status(Code.UnschedulableAndUnresolvable, ERR_REASON_CONFLICT)
        return None

    def events_to_register(self) -> list[ClusterEventWithHint]:
        return [
            # volumeBindingMode is immutable: only a new WaitForFirstConsumer class helps.
            ClusterEventWithHint(
                ClusterEvent(EventResource.StorageClass, ActionType.Add),
                self.is_schedulable_after_storage_class_added,
            ),
            ClusterEventWithHint(
                ClusterEvent(EventResource.Node, ActionType.Add | ActionType.UpdateNodeLabel)
            ),
            # A new claim, or a claim whose volumeName is filled in.
            ClusterEventWithHint(
                ClusterEvent(
                    EventResource.PersistentVolumeClaim, ActionType.Add | ActionType.Update
                ),
                self.is_schedulable_after_persistent_volume_claim_change,
            ),
            ClusterEventWithHint(
                ClusterEvent(EventResource.PersistentVolume, ActionType.Add | ActionType.Update),
                self.is_schedulable_after_persistent_volume_change,
            ),
        ]

    def is_schedulable_after_persistent_volume_claim_change(
        self, pod: Pod, old_obj: object, new_obj: object
    ) -> QueueingHint:
        if not isinstance(new_obj, PersistentVolumeClaim):
            return QueueingHint.Queue
        if new_obj.namespace == pod.namespace and new_obj.name in _claim_names(pod):
            return QueueingHint.Queue
        return QueueingHint.QueueSkip

    def is_schedulable_after_storage_class_added(
        self, pod: Pod, old_obj: object, new_obj: object
    ) -> QueueingHint:
        if not isinstance(new_obj, StorageClass):
            return QueueingHint.Queue
        if new_obj.volume_binding_mode != VOLUME_BINDING_WAIT_FOR_FIRST_CONSUMER:
            return QueueingHint.QueueSkip
        return QueueingHint.Queue

    def is_schedulable_after_persistent_volume_change(
        self, pod: Pod, old_obj: object, new_obj: object
    ) -> QueueingHint:
        if not isinstance(new_obj, PersistentVolume) or (
            old_obj is not None and not isinstance(old_obj, PersistentVolume)
        ):
            return QueueingHint.Queue
        if old_obj is None:
            return QueueingHint.Queue
        if get_pv_topologies(old_obj) != get_pv_topologies(new_obj):
            return QueueingHint.Queue
        return QueueingHint.QueueSkip


def _unresolvable(reason: str) -> Status:
    return new_status(Code.UnschedulableAndUnresolvable, reason)


def new(args: object | None, handle: Handle) -> VolumeZone:
    return VolumeZone(handle)
