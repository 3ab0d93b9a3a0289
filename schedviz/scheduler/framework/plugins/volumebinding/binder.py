"""The volume binder: sorts a pod's claims, finds PVs for the unbound ones, assumes and binds.

Mirrors pkg/scheduler/framework/plugins/volumebinding/binder.go and assume_cache.go, with
``FindMatchingVolume`` and ``CheckAccessModes`` of k8s.io/component-helpers/storage/volume.

Deliberately left out, and why:
- CSIStorageCapacity and CSIDriver are not modelled: every provisioner has enough capacity
  (upstream's answer for a driver that does not opt into capacity tracking), so the reason
  "node(s) did not have enough free storage" never comes up;
- of CSI migration's translation of in-tree PVs, only the topology of bound claims' PVs is
  translated (``csi_translation``), as ``checkBoundClaims`` does; PreBind's ``checkBindings``
  does not run (bindings complete at once, below);
- volumeAttributesClassName is not modelled; volumeMode and the claim's selector are read from
  the manifests;
- ``bind_pod_volumes`` makes upstream's API updates (the PV's claimRef, the claim's
  selected-node annotation) and completes each static binding at once (claim bound to the
  volume, both phases Bound, ``pv.kubernetes.io/bind-completed``), which upstream's PV
  controller does a moment later. Provisioning is the PV controller's
  (``schedviz.controllers.persistentvolume``, which ``manage.py simulate`` and the live runner
  run): it hears the selected-node annotation and provisions at once, so PreBind does not
  wait; with no controller the claim keeps its selected node and the pod binds;
- a PV in phase Pending without a claimRef (a new volume, as the API server creates it) counts
  as Available, which the PV controller's first sync would make it;
- a claim counts as fully bound when it names a volume and carries
  ``pv.kubernetes.io/bind-completed`` (upstream) or is in phase Bound (what the PV controller
  sets in the same sync), so hand-written bound claims work without a controller.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Any

from schedviz.kube.labels import as_selector
from schedviz.kube.objects import (
    CSINode,
    LabelSelector,
    LabelSelectorRequirement,
    Node,
    NodeSelectorTerm,
    PersistentVolume,
    PersistentVolumeClaim,
    Pod,
    StorageClass,
    Volume,
)
from schedviz.kube.quantity import Quantity
from schedviz.scheduler.framework.interface import ObjectLister
from schedviz.scheduler.framework.plugins.volumebinding.csi_translation import (
    try_translate_pv_to_csi,
)
from schedviz.scheduler.framework.plugins.volumebinding.storage import (
    PV_PHASE_AVAILABLE,
    PV_PHASE_BOUND,
    PV_PHASE_PENDING,
    PVC_PHASE_BOUND,
    VOLUME_BINDING_WAIT_FOR_FIRST_CONSUMER,
    check_node_affinity,
    claim_storage_class,
    volume_storage_class,
)

# Why a node cannot host the pod's volumes (upstream ConflictReason).
ERR_REASON_BIND_CONFLICT = "node(s) didn't find available persistent volumes to bind"
ERR_REASON_NODE_CONFLICT = "node(s) didn't match PersistentVolume's node affinity"
ERR_REASON_NOT_ENOUGH_SPACE = "node(s) did not have enough free storage"
ERR_REASON_PV_NOT_EXIST = (
    "node(s) unavailable due to one or more pvc(s) bound to non-existent pv(s)"
)

ANN_SELECTED_NODE = "volume.kubernetes.io/selected-node"
ANN_BIND_COMPLETED = "pv.kubernetes.io/bind-completed"
ANN_BOUND_BY_CONTROLLER = "pv.kubernetes.io/bound-by-controller"
# A class with this provisioner never provisions (component-helpers NotSupportedProvisioner).
NOT_SUPPORTED_PROVISIONER = "kubernetes.io/no-provisioner"

RESOURCE_STORAGE = "storage"
VOLUME_MODE_FILESYSTEM = "Filesystem"
EPHEMERAL = "ephemeral"


class VolumeBindingError(Exception):
    """An error the binder returns (an Error status, not a rejection)."""


@dataclass(frozen=True, slots=True)
class PodClaim:
    """A volume of the pod that uses a claim: its claim name and whether it is ephemeral."""

    name: str
    ephemeral: bool


def pod_claims(pod: Pod) -> list[PodClaim]:
    """The claims of the pod's volumes; a generic ephemeral volume's claim is ``<pod>-<vol>``."""
    claims = []
    for volume in pod.volumes:
        claim = volume_claim(pod, volume)
        if claim is not None:
            claims.append(claim)
    return claims


def pod_uses_claim(pod: Pod, pvc: PersistentVolumeClaim) -> bool:
    """Whether one of the pod's volumes, generic ephemeral ones included, uses the claim."""
    return pvc.namespace == pod.namespace and any(c.name == pvc.name for c in pod_claims(pod))


def volume_claim(pod: Pod, volume: Volume) -> PodClaim | None:
    if volume.pvc_claim_name is not None:
        return PodClaim(volume.pvc_claim_name, False)
    if volume.source_kind == EPHEMERAL:
        return PodClaim(f"{pod.name}-{volume.name}", True)
    return None


def storage_request(pvc: PersistentVolumeClaim) -> Quantity:
    return pvc.requests.get(RESOURCE_STORAGE, Quantity(0))


def storage_capacity(pv: PersistentVolume) -> Quantity:
    return pv.capacity.get(RESOURCE_STORAGE, Quantity(0))


def _spec(manifest: Mapping[str, Any]) -> Mapping[str, Any]:
    spec = manifest.get("spec")
    return spec if isinstance(spec, Mapping) else {}


def volume_mode(manifest: Mapping[str, Any]) -> str:
    mode = _spec(manifest).get("volumeMode")
    return mode if isinstance(mode, str) and mode else VOLUME_MODE_FILESYSTEM


def claim_selector(pvc: PersistentVolumeClaim) -> LabelSelector | None:
    """The claim's ``spec.selector``, read from its manifest."""
    selector = _spec(pvc.manifest).get("selector")
    if not isinstance(selector, Mapping):
        return None
    match_labels = selector.get("matchLabels") or {}
    expressions = [
        LabelSelectorRequirement(
            str(e.get("key", "")), str(e.get("operator", "")), tuple(e.get("values") or ())
        )
        for e in selector.get("matchExpressions") or ()
        if isinstance(e, Mapping)
    ]
    return LabelSelector(dict(match_labels), tuple(expressions))


def effective_phase(pv: PersistentVolume) -> str:
    """The PV's phase, with a new unclaimed volume (Pending, as the API server creates it)
    Available, as the PV controller's first sync would make it."""
    if pv.phase == PV_PHASE_PENDING and pv.claim_ref is None:
        return PV_PHASE_AVAILABLE
    return pv.phase


def is_volume_bound_to_claim(pv: PersistentVolume, pvc: PersistentVolumeClaim) -> bool:
    return pv.claim_ref == pvc.key


def check_access_modes(pvc: PersistentVolumeClaim, pv: PersistentVolume) -> bool:
    """Every access mode the claim asks for is one the volume offers."""
    return all(mode in pv.access_modes for mode in pvc.access_modes)


def find_matching_volume(
    pvc: PersistentVolumeClaim,
    volumes: Iterable[PersistentVolume],
    node: Node | None,
    excluded: Mapping[str, PersistentVolume],
) -> PersistentVolume | None:
    """``FindMatchingVolume``: on the scheduler's path with a node (delayed binding), on the PV
    controller's with none (node affinity not checked).

    A volume pre-bound to the claim wins if it fits the node; otherwise the smallest available
    volume of the claim's class that is large enough, matches its selector, volume mode and
    access modes, and whose node affinity admits the node.
    """
    smallest: PersistentVolume | None = None
    requested = storage_request(pvc)
    requested_class = claim_storage_class(pvc)
    label_selector = claim_selector(pvc)
    selector = as_selector(label_selector) if label_selector is not None else None
    claim_mode = volume_mode(pvc.manifest)
    for pv in volumes:
        if pv.name in excluded:
            continue
        if pv.claim_ref is not None and not is_volume_bound_to_claim(pv, pvc):
            continue
        capacity = storage_capacity(pv)
        if capacity < requested:
            continue
        if volume_mode(pv.manifest) != claim_mode:
            continue
        if pv.manifest.get("metadata", {}).get("deletionTimestamp"):
            continue
        node_affinity_valid = node is None or check_node_affinity(pv, node) is None
        if is_volume_bound_to_claim(pv, pvc):
            # A volume pre-bound to the claim is the only candidate.
            return pv if node_affinity_valid else None
        if effective_phase(pv) != PV_PHASE_AVAILABLE:
            continue
        if selector is not None and not selector.matches(pv.labels):
            continue
        if volume_storage_class(pv) != requested_class:
            continue
        if not node_affinity_valid:
            continue
        if not check_access_modes(pvc, pv):
            continue
        if smallest is None or capacity < storage_capacity(smallest):
            smallest = pv
    return smallest


def match_topology_selector_terms(
    terms: Sequence[NodeSelectorTerm], labels: Mapping[str, str]
) -> bool:
    """``MatchTopologySelectorTerms``: no terms match everything; terms are ORed."""
    if not terms:
        return True
    for term in terms:
        if not term.match_expressions:
            continue
        if any(not req.values for req in term.match_expressions):
            # An empty value list does not make a selector.
            continue
        if all(labels.get(req.key) in req.values for req in term.match_expressions):
            return True
    return False


@dataclass(slots=True)
class BindingInfo:
    """A claim and the PV proposed for it."""

    pvc: PersistentVolumeClaim
    pv: PersistentVolume

    def storage_class_name(self) -> str:
        return self.pv.storage_class_name

    def storage_resource(self) -> tuple[int, int]:
        """(requested, capacity) in bytes."""
        return storage_request(self.pvc).value(), storage_capacity(self.pv).value()


@dataclass(slots=True)
class PodVolumes:
    """What a node needs for the pod's volumes: PVs to bind, claims to provision."""

    static_bindings: list[BindingInfo] = field(default_factory=list)
    dynamic_provisions: list[PersistentVolumeClaim] = field(default_factory=list)


@dataclass(slots=True)
class PodVolumeClaims:
    bound_claims: list[PersistentVolumeClaim] = field(default_factory=list)
    # Unbound claims of a WaitForFirstConsumer class: the scheduler binds them.
    unbound_claims_delay_binding: list[PersistentVolumeClaim] = field(default_factory=list)
    # Unbound claims of an Immediate class, or pre-bound ones: the PV controller binds them.
    unbound_claims_immediate: list[PersistentVolumeClaim] = field(default_factory=list)
    # The PVs of each class of the delayed claims.
    unbound_volumes_delay_binding: dict[str, list[PersistentVolume]] = field(default_factory=dict)


class VolumeBinder:
    """Finds, assumes and binds a pod's volumes, over an assume cache of PVs and claims."""

    def __init__(self, objects: ObjectLister) -> None:
        self._objects = objects
        # Assumed versions shadow the API objects until bound or reverted (assume_cache.go).
        self._assumed_pvs: dict[str, PersistentVolume] = {}
        self._assumed_pvcs: dict[str, PersistentVolumeClaim] = {}

    # --- the assume caches

    def get_pv(self, name: str) -> PersistentVolume | None:
        assumed = self._assumed_pvs.get(name)
        if assumed is not None:
            return assumed
        pv = self._objects.get("PersistentVolume", name)
        return pv if isinstance(pv, PersistentVolume) else None

    def get_pvc(self, key: str) -> PersistentVolumeClaim | None:
        assumed = self._assumed_pvcs.get(key)
        if assumed is not None:
            return assumed
        pvc = self._objects.get("PersistentVolumeClaim", key)
        return pvc if isinstance(pvc, PersistentVolumeClaim) else None

    def list_pvs(self, storage_class_name: str) -> list[PersistentVolume]:
        pvs = []
        for obj in self._objects.list_objects("PersistentVolume"):
            if not isinstance(obj, PersistentVolume):
                continue
            pv = self._assumed_pvs.get(obj.name, obj)
            if volume_storage_class(pv) == storage_class_name:
                pvs.append(pv)
        return pvs

    def _storage_class(self, name: str) -> StorageClass | None:
        storage_class = self._objects.get("StorageClass", name)
        return storage_class if isinstance(storage_class, StorageClass) else None

    # --- PreFilter

    @staticmethod
    def is_pvc_fully_bound(pvc: PersistentVolumeClaim) -> bool:
        return bool(pvc.volume_name) and (
            ANN_BIND_COMPLETED in pvc.annotations or pvc.phase == PVC_PHASE_BOUND
        )

    def _is_delay_binding_mode(self, pvc: PersistentVolumeClaim) -> bool:
        class_name = claim_storage_class(pvc)
        if not class_name:
            return False
        storage_class = self._storage_class(class_name)
        if storage_class is None:
            return False
        if not storage_class.volume_binding_mode:
            raise VolumeBindingError(f'VolumeBindingMode not set for StorageClass "{class_name}"')
        return storage_class.volume_binding_mode == VOLUME_BINDING_WAIT_FOR_FIRST_CONSUMER

    def get_pod_volume_claims(self, pod: Pod) -> PodVolumeClaims:
        """The pod's claims sorted into bound, delayed and immediate (upstream
        ``GetPodVolumeClaims``)."""
        claims = PodVolumeClaims()
        for claim in pod_claims(pod):
            key = f"{pod.namespace}/{claim.name}"
            pvc = self.get_pvc(key)
            if pvc is None:
                raise VolumeBindingError(f'error getting PVC "{key}": not found')
            if self.is_pvc_fully_bound(pvc):
                claims.bound_claims.append(pvc)
            elif self._is_delay_binding_mode(pvc) and not pvc.volume_name:
                claims.unbound_claims_delay_binding.append(pvc)
            else:
                # Pre-bound claims wait for the PV controller, as immediate ones do.
                claims.unbound_claims_immediate.append(pvc)
        for pvc in claims.unbound_claims_delay_binding:
            class_name = claim_storage_class(pvc)
            claims.unbound_volumes_delay_binding[class_name] = self.list_pvs(class_name)
        return claims

    # --- Filter

    def find_pod_volumes(
        self, pod: Pod, claims: PodVolumeClaims, node: Node
    ) -> tuple[PodVolumes, list[str]]:
        """The volumes the pod would use on the node, or why the node cannot host them."""
        pod_volumes = PodVolumes()
        bound_satisfied = True
        bound_pvs_found = True
        unbound_satisfied = True
        sufficient_storage = True

        if claims.bound_claims:
            bound_satisfied, bound_pvs_found = self._check_bound_claims(claims.bound_claims, node)

        if claims.unbound_claims_delay_binding:
            unbound_satisfied, sufficient_storage = self._find_unbound(
                pod, claims, node, pod_volumes
            )

        reasons = []
        if not bound_satisfied:
            reasons.append(ERR_REASON_NODE_CONFLICT)
        if not unbound_satisfied:
            reasons.append(ERR_REASON_BIND_CONFLICT)
        if not sufficient_storage:
            reasons.append(ERR_REASON_NOT_ENOUGH_SPACE)
        if not bound_pvs_found:
            reasons.append(ERR_REASON_PV_NOT_EXIST)
        return pod_volumes, reasons

    def _check_bound_claims(
        self, claims: Sequence[PersistentVolumeClaim], node: Node
    ) -> tuple[bool, bool]:
        """(node affinity satisfied, every PV found); an in-tree PV whose plugin the node's
        CSINode lists as migrated is checked as its CSI translation (``csi_translation``)."""
        found = self._objects.get("CSINode", node.name)
        csi_node = found if isinstance(found, CSINode) else None
        for pvc in claims:
            pv = self.get_pv(pvc.volume_name)
            if pv is None:
                return True, False
            pv = try_translate_pv_to_csi(pv, csi_node)
            if check_node_affinity(pv, node) is not None:
                return False, True
        return True, True

    def _find_unbound(
        self, pod: Pod, claims: PodVolumeClaims, node: Node, pod_volumes: PodVolumes
    ) -> tuple[bool, bool]:
        """(unbound claims satisfied, storage sufficient), filling ``pod_volumes``."""
        to_find_matching: list[PersistentVolumeClaim] = []
        to_provision: list[PersistentVolumeClaim] = []
        for pvc in claims.unbound_claims_delay_binding:
            selected_node = pvc.annotations.get(ANN_SELECTED_NODE)
            if selected_node is not None:
                if selected_node != node.name:
                    # Already being provisioned for another node.
                    return False, True
                to_provision.append(pvc)
            else:
                to_find_matching.append(pvc)

        satisfied = True
        if to_find_matching:
            satisfied, bindings, unmatched = self._find_matching_volumes(
                to_find_matching, claims.unbound_volumes_delay_binding, node
            )
            pod_volumes.static_bindings = bindings
            to_provision.extend(unmatched)

        if to_provision:
            satisfied, sufficient, provisions = self._check_volume_provisions(to_provision, node)
            pod_volumes.dynamic_provisions = provisions
            return satisfied, sufficient
        return satisfied, True

    def _find_matching_volumes(
        self,
        claims: list[PersistentVolumeClaim],
        volumes_by_class: Mapping[str, list[PersistentVolume]],
        node: Node,
    ) -> tuple[bool, list[BindingInfo], list[PersistentVolumeClaim]]:
        """Smallest claims first, each gets the smallest fitting PV not chosen yet."""
        chosen: dict[str, PersistentVolume] = {}
        bindings: list[BindingInfo] = []
        unmatched: list[PersistentVolumeClaim] = []
        found_matches = True
        for pvc in sorted(claims, key=lambda c: storage_request(c).amount):
            pvs = volumes_by_class.get(claim_storage_class(pvc), [])
            pv = find_matching_volume(pvc, pvs, node, chosen)
            if pv is None:
                unmatched.append(pvc)
                found_matches = False
                continue
            chosen[pv.name] = pv
            bindings.append(BindingInfo(pvc, pv))
        return found_matches, bindings, unmatched

    def _check_volume_provisions(
        self, claims: Sequence[PersistentVolumeClaim], node: Node
    ) -> tuple[bool, bool, list[PersistentVolumeClaim]]:
        """(provisioning possible, storage sufficient, claims to provision)."""
        provisions: list[PersistentVolumeClaim] = []
        for pvc in claims:
            class_name = claim_storage_class(pvc)
            if not class_name:
                raise VolumeBindingError(f'no class for claim "{pvc.key}"')
            storage_class = self._storage_class(class_name)
            if storage_class is None:
                raise VolumeBindingError(f'failed to find storage class "{class_name}"')
            provisioner = storage_class.provisioner
            if not provisioner or provisioner == NOT_SUPPORTED_PROVISIONER:
                return False, True, []
            if not match_topology_selector_terms(storage_class.allowed_topologies, node.labels):
                return False, True, []
            # Capacity: CSIStorageCapacity is not modelled, so there is always enough.
            provisions.append(pvc)
        return True, True, provisions

    # --- Reserve, Unreserve

    def are_pod_volumes_bound(self, pod: Pod) -> bool:
        for claim in pod_claims(pod):
            pvc = self.get_pvc(f"{pod.namespace}/{claim.name}")
            if pvc is None or not self.is_pvc_fully_bound(pvc):
                return False
        return True

    def assume_pod_volumes(self, pod: Pod, node_name: str, pod_volumes: PodVolumes) -> bool:
        """Assumes the PVs pre-bound and the claims' selected node; True if all are bound."""
        if self.are_pod_volumes_bound(pod):
            return True
        new_bindings = []
        for binding in pod_volumes.static_bindings:
            pv = binding.pv
            if pv.claim_ref != binding.pvc.key:
                pv = replace(pv, claim_ref=binding.pvc.key)
                self._assumed_pvs[pv.name] = pv
            new_bindings.append(BindingInfo(binding.pvc, pv))
        new_provisions = []
        for pvc in pod_volumes.dynamic_provisions:
            assumed = replace(pvc, annotations={**pvc.annotations, ANN_SELECTED_NODE: node_name})
            self._assumed_pvcs[assumed.key] = assumed
            new_provisions.append(assumed)
        pod_volumes.static_bindings = new_bindings
        pod_volumes.dynamic_provisions = new_provisions
        return False

    def revert_assumed_pod_volumes(self, pod_volumes: PodVolumes) -> None:
        for binding in pod_volumes.static_bindings:
            self._assumed_pvs.pop(binding.pv.name, None)
        for pvc in pod_volumes.dynamic_provisions:
            self._assumed_pvcs.pop(pvc.key, None)

    # --- PreBind

    def bind_pod_volumes(self, pod: Pod, pod_volumes: PodVolumes) -> None:
        """Writes the bindings and provisioning requests through the API."""
        for binding in pod_volumes.static_bindings:
            # Upstream's PV update, and the PV controller's completion of the binding.
            pv = replace(binding.pv, claim_ref=binding.pvc.key, phase=PV_PHASE_BOUND)
            self._objects.apply(pv)
            self._assumed_pvs.pop(pv.name, None)
            pvc = self.get_pvc(binding.pvc.key) or binding.pvc
            bound = replace(
                pvc,
                volume_name=pv.name,
                phase=PVC_PHASE_BOUND,
                annotations={
                    **pvc.annotations,
                    ANN_BIND_COMPLETED: "yes",
                    ANN_BOUND_BY_CONTROLLER: "yes",
                },
            )
            self._objects.apply(bound)
        for pvc in pod_volumes.dynamic_provisions:
            # Triggers provisioning; there is no provisioner to wait for.
            self._objects.apply(pvc)
            self._assumed_pvcs.pop(pvc.key, None)
