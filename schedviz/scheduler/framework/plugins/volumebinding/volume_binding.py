"""VolumeBinding: a pod's claims must be bound, or bindable, to volumes the node can use.

Mirrors pkg/scheduler/framework/plugins/volumebinding/volume_binding.go (v1.35), with queueing
hints enabled (the default since v1.34, so a Node registers Add and UpdateNodeLabel). PreFilter
sorts the pod's claims and rejects unbound immediate ones; Filter checks bound PVs' node affinity
and finds PVs (or provisioning) for WaitForFirstConsumer claims, per node; Reserve assumes the
node's choice, PreBind writes it through the API, Unreserve forgets it.

What differs (see binder.py for the binder's own list):
- PreBindPreFlight (v1.34) is not an extension point here;
- scoring is on when ``args.shape`` is set, which stands for the StorageCapacityScoring gate
  (alpha in v1.34, off): the config layer refuses a shape while the gate is off, so a profile
  built from a configuration file never scores, as upstream. Dynamic provisions carry no
  CSIStorageCapacity, so only static bindings are scored;
- the CSIDriver and CSIStorageCapacity events are registered without hints: those objects are
  not modelled, so they never arrive;
- a generic ephemeral volume's claim is not checked to be owned by the pod.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field, replace

from schedviz.kube.objects import CSINode, PersistentVolumeClaim, Pod, StorageClass
from schedviz.scheduler.apis.config.types import MAX_CUSTOM_PRIORITY_SCORE
from schedviz.scheduler.apis.config.types_pluginargs import VolumeBindingArgs
from schedviz.scheduler.apis.config.validation import ConfigError, validate_volume_binding_args
from schedviz.scheduler.framework.cycle_state import CycleState, StateNotFoundError
from schedviz.scheduler.framework.interface import (
    MAX_NODE_SCORE,
    Code,
    EnqueueExtensions,
    FilterPlugin,
    Handle,
    PreBindPlugin,
    PreFilterExtensions,
    PreFilterPlugin,
    PreFilterResult,
    PreScorePlugin,
    ReservePlugin,
    ScoreExtensions,
    ScorePlugin,
    Status,
    as_status,
    new_status,
)
from schedviz.scheduler.framework.plugins.helper.shape_score import FunctionShapePoint
from schedviz.scheduler.framework.plugins.names import VOLUME_BINDING
from schedviz.scheduler.framework.plugins.volumebinding.binder import (
    PodVolumeClaims,
    PodVolumes,
    VolumeBinder,
    VolumeBindingError,
    pod_claims,
    pod_uses_claim,
)
from schedviz.scheduler.framework.plugins.volumebinding.scorer import (
    StorageResource,
    VolumeCapacityScorer,
    build_scorer_function,
)
from schedviz.scheduler.framework.plugins.volumebinding.storage import (
    MIGRATED_PLUGINS_ANNOTATION,
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

NAME = VOLUME_BINDING
STATE_KEY = NAME

ERR_REASON_UNBOUND_IMMEDIATE = "pod has unbound immediate PersistentVolumeClaims"

PVC_PHASE_LOST = "Lost"


@dataclass(slots=True)
class _StateData:
    # None when the pod has no claim (PreFilter skipped).
    pod_volume_claims: PodVolumeClaims | None = None
    # What Filter found for each feasible node.
    pod_volumes_by_node: dict[str, PodVolumes] = field(default_factory=dict)
    all_bound: bool = False
    has_static_bindings: bool = False

    def clone(self) -> _StateData:
        # Shared on purpose, as upstream: Filter fills it in for every node.
        return self


def _get_state_data(state: CycleState) -> tuple[_StateData | None, Status | None]:
    try:
        return state.read_as(STATE_KEY, _StateData), None
    except StateNotFoundError:
        return None, as_status("not found")
    except TypeError:
        return None, as_status("unable to convert state into stateData")


class VolumeBinding(
    PreFilterPlugin,
    FilterPlugin,
    ReservePlugin,
    PreBindPlugin,
    PreScorePlugin,
    ScorePlugin,
    EnqueueExtensions,
):
    def __init__(self, handle: Handle, scorer: VolumeCapacityScorer | None) -> None:
        self._objects = handle.objects
        self.binder = VolumeBinder(handle.objects)
        self._scorer = scorer

    def name(self) -> str:
        return NAME

    # --- events

    def events_to_register(self) -> list[ClusterEventWithHint]:
        add_or_update = ActionType.Add | ActionType.Update
        return [
            # A missing or mis-configured class (allowedTopologies) may be fixed.
            ClusterEventWithHint(
                ClusterEvent(EventResource.StorageClass, add_or_update),
                self.is_schedulable_after_storage_class_change,
            ),
            ClusterEventWithHint(
                ClusterEvent(EventResource.PersistentVolumeClaim, add_or_update),
                self.is_schedulable_after_persistent_volume_claim_change,
            ),
            ClusterEventWithHint(ClusterEvent(EventResource.PersistentVolume, add_or_update)),
            # Node labels decide allowed topologies and PV node affinity.
            ClusterEventWithHint(
                ClusterEvent(EventResource.Node, ActionType.Add | ActionType.UpdateNodeLabel)
            ),
            ClusterEventWithHint(
                ClusterEvent(EventResource.CSINode, add_or_update),
                self.is_schedulable_after_csi_node_change,
            ),
            ClusterEventWithHint(ClusterEvent(EventResource.CSIDriver, ActionType.Update)),
            ClusterEventWithHint(ClusterEvent(EventResource.CSIStorageCapacity, add_or_update)),
        ]

    def is_schedulable_after_csi_node_change(
        self, pod: Pod, old_obj: object, new_obj: object
    ) -> QueueingHint:
        if old_obj is None:
            return QueueingHint.Queue
        if not isinstance(old_obj, CSINode) or not isinstance(new_obj, CSINode):
            return QueueingHint.Queue
        old = manifest_annotations(old_obj.manifest).get(MIGRATED_PLUGINS_ANNOTATION)
        new = manifest_annotations(new_obj.manifest).get(MIGRATED_PLUGINS_ANNOTATION)
        return QueueingHint.Queue if old != new else QueueingHint.QueueSkip

    def is_schedulable_after_persistent_volume_claim_change(
        self, pod: Pod, old_obj: object, new_obj: object
    ) -> QueueingHint:
        if not isinstance(new_obj, PersistentVolumeClaim):
            return QueueingHint.Queue
        return QueueingHint.Queue if pod_uses_claim(pod, new_obj) else QueueingHint.QueueSkip

    def is_schedulable_after_storage_class_change(
        self, pod: Pod, old_obj: object, new_obj: object
    ) -> QueueingHint:
        if not isinstance(new_obj, StorageClass):
            return QueueingHint.Queue
        if old_obj is None:
            return QueueingHint.Queue
        if not isinstance(old_obj, StorageClass):
            return QueueingHint.Queue
        # volumeBindingMode is immutable; only allowedTopologies can change the outcome.
        if old_obj.allowed_topologies != new_obj.allowed_topologies:
            return QueueingHint.Queue
        return QueueingHint.QueueSkip

    # --- PreFilter

    def _pod_has_pvcs(self, pod: Pod) -> tuple[bool, str | None]:
        """Whether the pod uses a claim, and why one of its claims is not usable."""
        has_pvc = False
        for claim in pod_claims(pod):
            has_pvc = True
            pvc = self._objects.get("PersistentVolumeClaim", f"{pod.namespace}/{claim.name}")
            if not isinstance(pvc, PersistentVolumeClaim):
                if claim.ephemeral:
                    return has_pvc, (
                        "waiting for ephemeral volume controller to create the "
                        f'persistentvolumeclaim "{claim.name}"'
                    )
                return has_pvc, not_found_message("persistentvolumeclaim", claim.name)
            if pvc.phase == PVC_PHASE_LOST:
                return has_pvc, (
                    f'persistentvolumeclaim "{pvc.name}" bound to non-existent '
                    f'persistentvolume "{pvc.volume_name}"'
                )
            if pvc.manifest.get("metadata", {}).get("deletionTimestamp"):
                return has_pvc, f'persistentvolumeclaim "{pvc.name}" is being deleted'
        return has_pvc, None

    def pre_filter(
        self, state: CycleState, pod: Pod, nodes: Sequence[NodeInfo]
    ) -> tuple[PreFilterResult | None, Status | None]:
        has_pvc, problem = self._pod_has_pvcs(pod)
        if problem is not None:
            return None, new_status(Code.UnschedulableAndUnresolvable, problem)
        if not has_pvc:
            state.write(STATE_KEY, _StateData())
            return None, Status(Code.Skip)
        try:
            claims = self.binder.get_pod_volume_claims(pod)
        except VolumeBindingError as error:
            return None, as_status(error)
        if claims.unbound_claims_immediate:
            # The PV controller binds them; the pod comes back when the claims change.
            return None, new_status(Code.UnschedulableAndUnresolvable, ERR_REASON_UNBOUND_IMMEDIATE)
        state.write(
            STATE_KEY,
            _StateData(replace(claims, unbound_claims_immediate=[])),
        )
        return None, None

    def pre_filter_extensions(self) -> PreFilterExtensions | None:
        return None

    # --- Filter

    def filter(self, state: CycleState, pod: Pod, node_info: NodeInfo) -> Status | None:
        data, status = _get_state_data(state)
        if data is None:
            return status
        node = node_info.node
        if node is None:
            return as_status("node not found")
        claims = data.pod_volume_claims or PodVolumeClaims()
        try:
            pod_volumes, reasons = self.binder.find_pod_volumes(pod, claims, node)
        except VolumeBindingError as error:
            return as_status(error)
        if reasons:
            return new_status(Code.UnschedulableAndUnresolvable, *reasons)
        data.pod_volumes_by_node[node.name] = pod_volumes
        data.has_static_bindings = data.has_static_bindings or bool(pod_volumes.static_bindings)
        return None

    # --- PreScore, Score

    def pre_score(self, state: CycleState, pod: Pod, nodes: Sequence[NodeInfo]) -> Status | None:
        if self._scorer is None:
            return Status(Code.Skip)
        data, status = _get_state_data(state)
        if data is None:
            return status
        # With the gate on, upstream always scores (dynamic provisions by storage capacity).
        return None

    def score(self, state: CycleState, pod: Pod, node_info: NodeInfo) -> tuple[int, Status | None]:
        if self._scorer is None:
            return 0, None
        data, status = _get_state_data(state)
        if data is None:
            return 0, status
        pod_volumes = data.pod_volumes_by_node.get(node_info.name)
        if pod_volumes is None:
            return 0, None
        class_resources: dict[str, StorageResource] = {}
        for binding in pod_volumes.static_bindings:
            resource = class_resources.setdefault(binding.storage_class_name(), StorageResource())
            requested, capacity = binding.storage_resource()
            resource.requested += requested
            resource.capacity += capacity
        # Without static bindings upstream scores dynamic provisions by their
        # CSIStorageCapacity, which is never known here: they add nothing.
        return self._scorer(class_resources), None

    def score_extensions(self) -> ScoreExtensions | None:
        return None

    # --- Reserve, Unreserve, PreBind

    def reserve(self, state: CycleState, pod: Pod, node_name: str) -> Status | None:
        data, status = _get_state_data(state)
        if data is None:
            return status
        pod_volumes = data.pod_volumes_by_node.get(node_name)
        if pod_volumes is None:
            # The pod has no claim.
            data.all_bound = True
            return None
        data.all_bound = self.binder.assume_pod_volumes(pod, node_name, pod_volumes)
        return None

    def unreserve(self, state: CycleState, pod: Pod, node_name: str) -> None:
        data, _ = _get_state_data(state)
        if data is None:
            return
        pod_volumes = data.pod_volumes_by_node.get(node_name)
        if pod_volumes is not None:
            self.binder.revert_assumed_pod_volumes(pod_volumes)

    def pre_bind(self, state: CycleState, pod: Pod, node_name: str) -> Status | None:
        data, status = _get_state_data(state)
        if data is None:
            return status
        if data.all_bound:
            return None
        pod_volumes = data.pod_volumes_by_node.get(node_name)
        if pod_volumes is None:
            return as_status(f'no pod volumes found for node "{node_name}"')
        self.binder.bind_pod_volumes(pod, pod_volumes)
        return None


def new(args: object | None, handle: Handle) -> VolumeBinding:
    if args is None:
        args = VolumeBindingArgs()
    if not isinstance(args, VolumeBindingArgs):
        raise TypeError(f"want args to be of type VolumeBindingArgs, got {type(args).__name__}")
    # The shape is this plugin's stand-in for the StorageCapacityScoring gate (see above).
    errors = validate_volume_binding_args("", replace(args, shape=[]))
    if errors:
        raise ConfigError(errors)
    scorer = None
    if args.shape:
        scale = MAX_NODE_SCORE // MAX_CUSTOM_PRIORITY_SCORE
        scorer = build_scorer_function(
            [FunctionShapePoint(p.utilization, p.score * scale) for p in args.shape]
        )
    return VolumeBinding(handle, scorer)
