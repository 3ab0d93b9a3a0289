"""VolumeRestrictions: in-tree disks that cannot be shared, and ReadWriteOncePod claims.

Mirrors pkg/scheduler/framework/plugins/volumerestrictions/volume_restrictions.go, with queueing
hints enabled (the default since v1.34, so a Node registers only Add). Inline GCE PD, AWS EBS,
iSCSI and Ceph RBD volumes conflict with the same disk on another pod of the node; a claim with
the ReadWriteOncePod access mode conflicts with any scheduled pod using it, anywhere.

The in-tree sources are read from ``Volume.source`` (the manifest's camelCase fields); an RBD
volume without ``pool`` counts as pool ``rbd``, the API server's default.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from schedviz.kube.objects import PersistentVolumeClaim, Pod, Volume
from schedviz.scheduler.framework.cycle_state import CycleState, StateNotFoundError
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
from schedviz.scheduler.framework.plugins.names import VOLUME_RESTRICTIONS
from schedviz.scheduler.framework.plugins.volumebinding.storage import (
    READ_WRITE_ONCE_POD,
    is_pvc_used_by_pods,
    not_found_message,
)
from schedviz.scheduler.framework.types import (
    ActionType,
    ClusterEvent,
    ClusterEventWithHint,
    EventResource,
    NodeInfo,
    PodInfo,
    QueueingHint,
)

NAME = VOLUME_RESTRICTIONS
PRE_FILTER_STATE_KEY = "PreFilter" + NAME

ERR_REASON_DISK_CONFLICT = "node(s) had no available disk"
ERR_REASON_READ_WRITE_ONCE_POD_CONFLICT = (
    "node(s) unavailable due to PersistentVolumeClaim with ReadWriteOncePod access mode already "
    "in-use by another pod"
)

_GCE_PD = "gcePersistentDisk"
_AWS_EBS = "awsElasticBlockStore"
_ISCSI = "iscsi"
_RBD = "rbd"
_RESTRICTED_SOURCES = frozenset({_GCE_PD, _AWS_EBS, _ISCSI, _RBD})


def _read_only(volume: Volume) -> bool:
    return bool(volume.source.get("readOnly", False))


def _str(volume: Volume, key: str) -> str:
    value = volume.source.get(key, "")
    return value if isinstance(value, str) else ""


def _monitors(volume: Volume) -> set[str]:
    monitors = volume.source.get("monitors", [])
    return {m for m in monitors if isinstance(m, str)} if isinstance(monitors, list) else set()


def _rbd_pool(volume: Volume) -> str:
    return _str(volume, "pool") or "rbd"


def _conflicts(volume: Volume, existing: Volume) -> bool:
    kind = volume.source_kind
    if kind != existing.source_kind:
        return False
    both_read_only = _read_only(volume) and _read_only(existing)
    if kind == _GCE_PD:
        # The same GCE disk may be mounted by several pods only if all mount it read-only.
        return _str(volume, "pdName") == _str(existing, "pdName") and not both_read_only
    if kind == _AWS_EBS:
        return _str(volume, "volumeID") == _str(existing, "volumeID")
    if kind == _ISCSI:
        return _str(volume, "iqn") == _str(existing, "iqn") and not both_read_only
    if kind == _RBD:
        # The same image: a shared monitor, the same pool and the same image name.
        return (
            bool(_monitors(volume) & _monitors(existing))
            and _rbd_pool(volume) == _rbd_pool(existing)
            and _str(volume, "image") == _str(existing, "image")
            and not both_read_only
        )
    return False


def is_volume_conflict(volume: Volume, pod: Pod) -> bool:
    """Whether ``volume`` conflicts with one of ``pod``'s volumes."""
    return any(_conflicts(volume, existing) for existing in pod.volumes)


def needs_restrictions_check(volume: Volume) -> bool:
    return volume.source_kind in _RESTRICTED_SOURCES


def satisfy_volume_conflicts(pod: Pod, node_info: NodeInfo) -> bool:
    """Whether no restricted volume of the pod conflicts with a pod on the node."""
    for volume in pod.volumes:
        if not needs_restrictions_check(volume):
            continue
        for existing in node_info.pods:
            if is_volume_conflict(volume, existing.pod):
                return False
    return True


@dataclass(slots=True)
class _PreFilterState:
    # Names of the pod's claims with the ReadWriteOncePod access mode.
    read_write_once_pod_pvcs: frozenset[str]
    # References to these claims by scheduled pods.
    conflicting_pvc_ref_count: int

    def update_with_pod(self, pod_info: PodInfo, multiplier: int) -> None:
        self.conflicting_pvc_ref_count += multiplier * self._conflicting_refs(pod_info.pod)

    def _conflicting_refs(self, pod: Pod) -> int:
        return sum(
            1
            for volume in pod.volumes
            if volume.pvc_claim_name is not None
            and volume.pvc_claim_name in self.read_write_once_pod_pvcs
        )

    def clone(self) -> _PreFilterState:
        return _PreFilterState(self.read_write_once_pod_pvcs, self.conflicting_pvc_ref_count)


class VolumeRestrictions(PreFilterPlugin, FilterPlugin, PreFilterExtensions, EnqueueExtensions):
    def __init__(self, handle: Handle) -> None:
        self._handle = handle

    def name(self) -> str:
        return NAME

    def pre_filter(
        self, state: CycleState, pod: Pod, nodes: Sequence[NodeInfo]
    ) -> tuple[PreFilterResult | None, Status | None]:
        needs_check = any(needs_restrictions_check(volume) for volume in pod.volumes)
        pvcs, missing = self._read_write_once_pod_pvcs(pod)
        if missing is not None:
            return None, new_status(
                Code.UnschedulableAndUnresolvable,
                not_found_message("persistentvolumeclaim", missing),
            )
        conflicting = sum(
            1 for pvc in pvcs if is_pvc_used_by_pods(self._handle, f"{pod.namespace}/{pvc}")
        )
        if not needs_check and conflicting == 0:
            return None, Status(Code.Skip)
        state.write(PRE_FILTER_STATE_KEY, _PreFilterState(frozenset(pvcs), conflicting))
        return None, None

    def _read_write_once_pod_pvcs(self, pod: Pod) -> tuple[set[str], str | None]:
        """The pod's ReadWriteOncePod claims, or the name of the first claim not found."""
        pvcs: set[str] = set()
        for volume in pod.volumes:
            if volume.pvc_claim_name is None:
                continue
            pvc = self._handle.objects.get(
                "PersistentVolumeClaim", f"{pod.namespace}/{volume.pvc_claim_name}"
            )
            if not isinstance(pvc, PersistentVolumeClaim):
                return set(), volume.pvc_claim_name
            if READ_WRITE_ONCE_POD in pvc.access_modes:
                pvcs.add(pvc.name)
        return pvcs, None

    def pre_filter_extensions(self) -> PreFilterExtensions | None:
        return self

    def add_pod(
        self, state: CycleState, pod_to_schedule: Pod, pod_info_to_add: PodInfo, node_info: NodeInfo
    ) -> Status | None:
        return self._update(state, pod_info_to_add, 1)

    def remove_pod(
        self,
        state: CycleState,
        pod_to_schedule: Pod,
        pod_info_to_remove: PodInfo,
        node_info: NodeInfo,
    ) -> Status | None:
        return self._update(state, pod_info_to_remove, -1)

    def _update(self, state: CycleState, pod_info: PodInfo, multiplier: int) -> Status | None:
        pre_filter_state, status = _get_pre_filter_state(state)
        if pre_filter_state is None:
            return status
        pre_filter_state.update_with_pod(pod_info, multiplier)
        return None

    def filter(self, state: CycleState, pod: Pod, node_info: NodeInfo) -> Status | None:
        if not satisfy_volume_conflicts(pod, node_info):
            return new_status(Code.Unschedulable, ERR_REASON_DISK_CONFLICT)
        pre_filter_state, status = _get_pre_filter_state(state)
        if pre_filter_state is None:
            return status
        if pre_filter_state.conflicting_pvc_ref_count > 0:
            return new_status(Code.Unschedulable, ERR_REASON_READ_WRITE_ONCE_POD_CONFLICT)
        return None

    def events_to_register(self) -> list[ClusterEventWithHint]:
        return [
            # Volumes are immutable: only a deletion releases a disk or a claim.
            ClusterEventWithHint(
                ClusterEvent(EventResource.Pod, ActionType.Delete),
                self.is_schedulable_after_pod_deleted,
            ),
            # No hint: any new node may have the disk free.
            ClusterEventWithHint(ClusterEvent(EventResource.Node, ActionType.Add)),
            # The claim must exist for its access modes to be checked.
            ClusterEventWithHint(
                ClusterEvent(EventResource.PersistentVolumeClaim, ActionType.Add),
                self.is_schedulable_after_persistent_volume_claim_added,
            ),
        ]

    def is_schedulable_after_persistent_volume_claim_added(
        self, pod: Pod, old_obj: object, new_obj: object
    ) -> QueueingHint:
        if not isinstance(new_obj, PersistentVolumeClaim):
            return QueueingHint.Queue
        if new_obj.namespace != pod.namespace:
            return QueueingHint.QueueSkip
        if any(volume.pvc_claim_name == new_obj.name for volume in pod.volumes):
            return QueueingHint.Queue
        return QueueingHint.QueueSkip

    def is_schedulable_after_pod_deleted(
        self, pod: Pod, old_obj: object, new_obj: object
    ) -> QueueingHint:
        deleted = old_obj
        if not isinstance(deleted, Pod):
            return QueueingHint.Queue
        if deleted.namespace != pod.namespace:
            return QueueingHint.QueueSkip
        if not satisfy_volume_conflicts(pod, NodeInfo(None, [deleted])):
            return QueueingHint.Queue
        # A deleted pod sharing a claim may free a ReadWriteOncePod claim; the claim's access
        # modes are not looked up, as upstream does not.
        claims = {v.pvc_claim_name for v in pod.volumes if v.pvc_claim_name is not None}
        if any(v.pvc_claim_name in claims for v in deleted.volumes if v.pvc_claim_name):
            return QueueingHint.Queue
        return QueueingHint.QueueSkip


def _get_pre_filter_state(state: CycleState) -> tuple[_PreFilterState | None, Status | None]:
    try:
        return state.read_as(PRE_FILTER_STATE_KEY, _PreFilterState), None
    except StateNotFoundError:
        return None, as_status(f'cannot read "{PRE_FILTER_STATE_KEY}" from cycleState')
    except TypeError:
        return None, as_status("convert to volumerestrictions.state error")


def new(args: object | None, handle: Handle) -> VolumeRestrictions:
    return VolumeRestrictions(handle)
