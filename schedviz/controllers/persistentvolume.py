"""The PV controller's part: binding claims to volumes and provisioning new ones.

Mirrors what kube-controller-manager's PersistentVolume controller (pkg/controller/volume/
persistentvolume/pv_controller.go: ``syncUnboundClaim``, ``findBestMatchForClaim`` through
``FindMatchingVolume`` of k8s.io/component-helpers/storage/volume, ``bind``,
``provisionClaim``) and an external provisioner do for the scheduler to see:

- an unbound claim of an Immediate class (or of no class) is bound to the smallest available
  volume that matches its class, access modes, volume mode, selector and size, among the
  volumes with the fewest access modes that include the claim's (``findByClaim``); the volume gets
  the claim as ``claimRef``, the claim the volume as ``volumeName``, both phase Bound, and the
  claim the annotations ``pv.kubernetes.io/bind-completed`` and
  ``pv.kubernetes.io/bound-by-controller``;
- a volume still Pending (as the API server creates it) becomes Available, or Bound when its
  claim is bound to it (``syncVolume``);
- pre-binding (``syncUnboundClaim``'s second half, ``syncVolume``): a claim that names its
  volume (``spec.volumeName``) is bound to it when the volume is unclaimed and satisfies the
  claim (``checkVolumeSatisfyClaim``: size, class, volume mode, access modes) or already has
  the claim as ``claimRef``; a volume missing, unsatisfying or claimed by another claim leaves
  the claim Pending until something changes. A volume whose ``claimRef`` names a claim is
  that claim's only candidate, also for a WaitForFirstConsumer class; such a claim gets
  ``bind-completed`` without ``bound-by-controller`` when it named the volume itself;
- with no such volume and a class whose provisioner provisions, a volume is provisioned at
  once: ``pvc-<uid>``, the claim's size, access modes, volume mode and class, bound to it;
- a WaitForFirstConsumer claim is provisioned only once the scheduler's PreBind names its node
  (``volume.kubernetes.io/selected-node``), in that node's topology: the volume's node affinity
  requires the node's values of the class's ``allowedTopologies`` keys, or its hostname.

It watches the store as the controller watches its informers, and writes through the same API
the scheduler writes through, so the scheduler hears of every binding as an event.

Deliberately different: binding and provisioning are instant (no resync period, no
provisioner latency); the Warning events upstream records on the claim when a named volume
cannot be bound (VolumeMismatch, FailedBinding) are not recorded, nor the volume's own
``bound-by-controller`` annotation; a provisioner's topology comes from the class (CSINode
topology keys are not modelled); an Immediate class with allowedTopologies gives the volume
those terms as node affinity (a real provisioner picks one of them); no deletion or reclaim
policy.
"""

from __future__ import annotations

import dataclasses
import uuid
from collections.abc import Sequence
from typing import Any

from schedviz.kube.decode import decode_object
from schedviz.kube.objects import (
    LABEL_HOSTNAME,
    Node,
    PersistentVolume,
    PersistentVolumeClaim,
    StorageClass,
)
from schedviz.scheduler.framework.plugins.volumebinding.binder import (
    ANN_BIND_COMPLETED,
    ANN_BOUND_BY_CONTROLLER,
    ANN_SELECTED_NODE,
    RESOURCE_STORAGE,
    check_access_modes,
    find_matching_volume,
    is_volume_bound_to_claim,
    storage_capacity,
    storage_request,
    volume_mode,
)
from schedviz.scheduler.framework.plugins.volumebinding.storage import (
    PV_PHASE_AVAILABLE,
    PV_PHASE_BOUND,
    PV_PHASE_PENDING,
    PVC_PHASE_BOUND,
    PVC_PHASE_PENDING,
    READ_ONLY_MANY,
    READ_WRITE_MANY,
    READ_WRITE_ONCE,
    READ_WRITE_ONCE_POD,
    VOLUME_BINDING_WAIT_FOR_FIRST_CONSUMER,
    claim_storage_class,
    volume_storage_class,
)
from schedviz.scheduler.store import ADDED, DELETED, MODIFIED, ClusterAPI

ANN_PROVISIONED_BY = "pv.kubernetes.io/provisioned-by"
ANN_STORAGE_PROVISIONER = "volume.kubernetes.io/storage-provisioner"


class PersistentVolumeController:
    """Binds and provisions claims in ``api``; ``start`` syncs every claim, then follows."""

    def __init__(self, api: ClusterAPI) -> None:
        self._api = api
        self._syncing = False
        # What this controller wrote, until the informers show it: upstream's controller puts
        # each object it writes into its own cache at once (storeVolumeUpdate,
        # storeClaimUpdate), so a live store that hears of writes later never offers a
        # volume it just bound to another claim, nor binds a claim twice.
        self._written_volumes: dict[str, PersistentVolume] = {}
        self._written_claims: dict[str, PersistentVolumeClaim] = {}

    def start(self) -> None:
        self._api.watch(self._on_event)
        self.sync_all()

    def _on_event(self, event_type: str, old: Any, new: Any) -> None:
        if event_type == DELETED:
            if isinstance(old, PersistentVolumeClaim):
                self._written_claims.pop(old.key, None)
            elif isinstance(old, PersistentVolume):
                self._written_volumes.pop(old.name, None)
            return
        if self._syncing or event_type not in (ADDED, MODIFIED):
            return
        if isinstance(new, PersistentVolumeClaim):
            self._guarded(lambda: self.sync_claim(new))
        elif isinstance(new, PersistentVolume):
            # syncVolume: its phase; a claim it is pre-bound to, one that names it, or one
            # it may fit, is synced.
            self.sync_all()

    def _guarded(self, sync: Any) -> None:
        syncing, self._syncing = self._syncing, True
        try:
            sync()
        finally:
            self._syncing = syncing

    def sync_all(self) -> None:
        # Its own writes are not synced again while it runs (the store may call back at once).
        self._guarded(self._sync_claims)

    def _sync_claims(self) -> None:
        for claim in self._api.list_objects("PersistentVolumeClaim"):
            self.sync_claim(claim)
        self._sync_volume_phases()

    def _sync_volume_phases(self) -> None:
        """``syncVolume``'s phases for volumes still Pending (as the API server creates them):
        Available when unused or pre-bound to a claim not bound to it yet, Bound when its
        claim is bound to it."""
        for volume in self._volumes():
            if volume.phase != PV_PHASE_PENDING:
                continue
            claim = self._api.get("PersistentVolumeClaim", volume.claim_ref or "")
            bound = (
                isinstance(claim, PersistentVolumeClaim)
                and claim.volume_name == volume.name
                and ANN_BIND_COMPLETED in claim.annotations
            )
            phase = PV_PHASE_BOUND if bound else PV_PHASE_AVAILABLE
            self._write_volume(dataclasses.replace(volume, phase=phase))

    def sync_claim(self, claim: PersistentVolumeClaim) -> None:
        """syncClaim for a claim whose binding is not complete (``syncUnboundClaim``)."""
        current = self._api.get("PersistentVolumeClaim", claim.key)
        if not isinstance(current, PersistentVolumeClaim) or ANN_BIND_COMPLETED in (
            current.annotations
        ):
            # syncBoundClaim's part (a lost claim, a phase to correct) is not modelled.
            self._written_claims.pop(claim.key, None)
            return
        if claim.key in self._written_claims:
            return  # bound by this controller; the informers have not shown it yet
        if current.volume_name:
            self._sync_requested_volume(current)
            return
        storage_class = self._storage_class(current)
        delayed = (
            storage_class is not None
            and storage_class.volume_binding_mode == VOLUME_BINDING_WAIT_FOR_FIRST_CONSUMER
        )
        # With delayed binding only a volume pre-bound to the claim (its claimRef names it)
        # is the controller's; the scheduler binds the others.
        candidates = [
            v for v in self._volumes() if not delayed or is_volume_bound_to_claim(v, current)
        ]
        volume = find_best_match_for_claim(current, candidates)
        if volume is not None:
            self._bind(volume, current)
            return
        provisions = storage_class is not None and _provisions(storage_class)
        if storage_class is not None and provisions and not delayed:
            self._provision(current, storage_class, None)
            return
        if storage_class is not None and provisions and ANN_SELECTED_NODE in current.annotations:
            # Provisioned once the scheduler's PreBind names the node.
            node = self._api.get("Node", current.annotations[ANN_SELECTED_NODE])
            if isinstance(node, Node):
                self._provision(current, storage_class, node)
            return
        self._set_pending(current)

    def _sync_requested_volume(self, claim: PersistentVolumeClaim) -> None:
        """The claim names its volume (``spec.volumeName``): bound to it when the volume is
        unclaimed and satisfies the claim, or is pre-bound to this claim; otherwise the claim
        stays Pending (upstream records VolumeMismatch or FailedBinding and retries)."""
        volume = next((v for v in self._volumes() if v.name == claim.volume_name), None)
        if volume is not None and (
            is_volume_bound_to_claim(volume, claim)
            or (volume.claim_ref is None and check_volume_satisfy_claim(volume, claim) is None)
        ):
            self._bind(volume, claim)
        else:
            self._set_pending(claim)  # synced again when a volume changes

    def _set_pending(self, claim: PersistentVolumeClaim) -> None:
        """``updateClaimStatus(ClaimPending)``: a claim left unbound reads Pending."""
        if claim.phase != PVC_PHASE_PENDING:
            self._api.apply(dataclasses.replace(claim, phase=PVC_PHASE_PENDING))

    def _volumes(self) -> list[PersistentVolume]:
        """The informers' volumes with this controller's writes they do not show yet."""
        volumes = {v.name: v for v in self._api.list_objects("PersistentVolume")}
        for name, written in list(self._written_volumes.items()):
            cached = volumes.get(name)
            if cached is not None and (cached.claim_ref, cached.phase) == (
                written.claim_ref,
                written.phase,
            ):
                del self._written_volumes[name]
            else:
                volumes[name] = written
        return list(volumes.values())

    def _write_volume(self, volume: PersistentVolume) -> None:
        self._api.apply(volume)
        self._written_volumes[volume.name] = volume

    def _storage_class(self, claim: PersistentVolumeClaim) -> StorageClass | None:
        name = claim_storage_class(claim)
        found = self._api.get("StorageClass", name) if name else None
        return found if isinstance(found, StorageClass) else None

    def _bind(self, volume: PersistentVolume, claim: PersistentVolumeClaim) -> None:
        """``bind``: the volume's claimRef and phase, then the claim's volumeName (with
        ``bound-by-controller`` when this controller chose the volume), ``bind-completed``
        and phase."""
        self._write_volume(dataclasses.replace(volume, claim_ref=claim.key, phase=PV_PHASE_BOUND))
        annotations = {**claim.annotations, ANN_BIND_COMPLETED: "yes"}
        if claim.volume_name != volume.name:
            annotations.setdefault(ANN_BOUND_BY_CONTROLLER, "yes")
        bound = dataclasses.replace(
            claim, volume_name=volume.name, phase=PVC_PHASE_BOUND, annotations=annotations
        )
        self._api.apply(bound)
        self._written_claims[claim.key] = bound

    def _provision(
        self, claim: PersistentVolumeClaim, storage_class: StorageClass, node: Node | None
    ) -> None:
        name = f"pvc-{uuid.uuid5(uuid.NAMESPACE_URL, f'schedviz:pvc/{claim.key}')}"
        spec: dict[str, Any] = {
            "capacity": {RESOURCE_STORAGE: str(claim.requests.get(RESOURCE_STORAGE, "0"))},
            "accessModes": list(claim.access_modes),
            "storageClassName": storage_class.name,
            "persistentVolumeReclaimPolicy": "Delete",
            "claimRef": {"namespace": claim.namespace, "name": claim.name},
            "csi": {"driver": storage_class.provisioner, "volumeHandle": name},
        }
        mode = claim.manifest.get("spec", {}).get("volumeMode")
        if mode:
            spec["volumeMode"] = mode
        terms = _topology_terms(storage_class, node)
        if terms:
            spec["nodeAffinity"] = {"required": {"nodeSelectorTerms": terms}}
        volume = decode_object(
            {
                "apiVersion": "v1",
                "kind": "PersistentVolume",
                "metadata": {
                    "name": name,
                    "annotations": {ANN_PROVISIONED_BY: storage_class.provisioner},
                },
                "spec": spec,
                "status": {"phase": PV_PHASE_BOUND},
            }
        )
        assert isinstance(volume, PersistentVolume)
        self._write_volume(volume)
        claim = dataclasses.replace(
            claim,
            annotations={**claim.annotations, ANN_STORAGE_PROVISIONER: storage_class.provisioner},
        )
        self._bind(volume, claim)


# The prefix of the in-tree volume plugins' provisioners, gone from v1.34's controller manager.
IN_TREE_PROVISIONER_PREFIX = "kubernetes.io/"


# GetAccessModesAsString's order: the access-mode index's keys.
_ACCESS_MODE_ORDER = {
    READ_WRITE_ONCE: "RWO",
    READ_ONLY_MANY: "ROX",
    READ_WRITE_MANY: "RWX",
    READ_WRITE_ONCE_POD: "RWOP",
}


def _access_modes_key(volume: PersistentVolume) -> str:
    modes = volume.access_modes
    return ",".join(short for mode, short in _ACCESS_MODE_ORDER.items() if mode in modes)


def find_best_match_for_claim(
    claim: PersistentVolumeClaim, volumes: Sequence[PersistentVolume]
) -> PersistentVolume | None:
    """``persistentVolumeOrderedIndex.findByClaim``: the volumes are indexed by their set of
    access modes; the sets that hold all the claim's modes are searched fewest modes first
    (``FindMatchingVolume`` within each), and the first match wins, even when a later set holds
    a smaller volume or one pre-bound to the claim. Sets with as many modes are searched in
    their keys' order (upstream: Go's map order)."""
    groups: dict[str, list[PersistentVolume]] = {}
    for volume in volumes:
        if check_access_modes(claim, volume):
            groups.setdefault(_access_modes_key(volume), []).append(volume)
    for key in sorted(groups, key=lambda k: (len(k.split(",")), k)):
        match = find_matching_volume(claim, groups[key], None, {})
        if match is not None:
            return match
    return None


def check_volume_satisfy_claim(
    volume: PersistentVolume, claim: PersistentVolumeClaim
) -> str | None:
    """``checkVolumeSatisfyClaim``: why the volume a claim names cannot be bound to it (the
    text of upstream's error, which its VolumeMismatch event quotes), or None."""
    if volume.manifest.get("metadata", {}).get("deletionTimestamp"):
        return f'the volume is marked for deletion "{volume.name}"'
    if storage_capacity(volume) < storage_request(claim):
        return "requested PV is too small"
    if volume_storage_class(volume) != claim_storage_class(claim):
        return "storageClassName does not match"
    if volume_mode(volume.manifest) != volume_mode(claim.manifest):
        return "incompatible volumeMode"
    if not check_access_modes(claim, volume):
        return "incompatible accessMode"
    return None


def _provisions(storage_class: StorageClass) -> bool:
    """A CSI driver's provisioner provisions; an in-tree name (``kubernetes.io/aws-ebs``) has no
    provisioner in v1.34 unless its migrated CSI driver's is deployed, which nothing here
    says, and ``kubernetes.io/no-provisioner`` never provisions."""
    provisioner = storage_class.provisioner
    return bool(provisioner) and not provisioner.startswith(IN_TREE_PROVISIONER_PREFIX)


def _topology_terms(storage_class: StorageClass, node: Node | None) -> list[dict[str, Any]]:
    """The provisioned volume's node affinity terms: the selected node's values of the class's
    allowedTopologies keys (its hostname when there are none); without a node, the allowed
    topologies as given."""
    allowed = storage_class.allowed_topologies
    if node is None:
        return [
            {
                "matchExpressions": [
                    {"key": e.key, "operator": "In", "values": list(e.values)}
                    for e in term.match_expressions
                ]
            }
            for term in allowed
            if term.match_expressions
        ]
    keys: Sequence[str] = [e.key for term in allowed for e in term.match_expressions] or [
        LABEL_HOSTNAME
    ]
    expressions = []
    for key in dict.fromkeys(keys):
        value = node.labels.get(key, node.name) if key == LABEL_HOSTNAME else node.labels.get(key)
        if value is not None:
            expressions.append({"key": key, "operator": "In", "values": [value]})
    return [{"matchExpressions": expressions}] if expressions else []


def start_persistent_volume_controller(api: ClusterAPI) -> None:
    """A PV controller for ``api``, synced once and then following it (``new_simulation``'s
    ``controllers``)."""
    PersistentVolumeController(api).start()
