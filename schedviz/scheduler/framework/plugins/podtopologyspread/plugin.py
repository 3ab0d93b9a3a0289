"""The PodTopologySpread plugin: spread pods evenly over topology domains.

Mirrors pkg/scheduler/framework/plugins/podtopologyspread/plugin.go (v1.35); the extension points
are computed in ``filtering.py`` and ``scoring.py`` as upstream splits them. A pod without
constraints of its own gets the default ones (``args.default_constraints``, or the system
defaults), with the selector of the Services, ReplicationControllers, ReplicaSets and
StatefulSets selecting it, read through ``handle.objects``.

Deliberately different or left out:
- pods are told apart by ``namespace/name`` where upstream compares UIDs;
- SchedulingQueueHint is on (as in v1.35), so the pod event also covers UpdatePodToleration;
- the SignPlugin of opportunistic batching is left out.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import numpy as np

from schedviz.kube.objects import (
    LABEL_HOSTNAME,
    LABEL_TOPOLOGY_ZONE,
    Node,
    Pod,
    TopologySpreadConstraint,
)
from schedviz.scheduler.apis.config.types_pluginargs import (
    SYSTEM_DEFAULTING,
    PodTopologySpreadArgs,
)
from schedviz.scheduler.apis.config.validation import (
    ConfigError,
    validate_pod_topology_spread_args,
)
from schedviz.scheduler.backend.cache.columns import IntArray, NodeColumns, columns_of
from schedviz.scheduler.framework.cycle_state import CycleState
from schedviz.scheduler.framework.interface import (
    Code,
    EnqueueExtensions,
    FilterPlugin,
    Handle,
    NodeScore,
    PreFilterExtensions,
    PreFilterPlugin,
    PreFilterResult,
    PreScorePlugin,
    ScoreExtensions,
    ScorePlugin,
    Status,
    as_status,
    new_status,
)
from schedviz.scheduler.framework.plugins.names import POD_TOPOLOGY_SPREAD
from schedviz.scheduler.framework.plugins.podtopologyspread.common import (
    DO_NOT_SCHEDULE,
    NODE_INCLUSION_POLICY_HONOR,
    SCHEDULE_ANYWAY,
    SpreadConstraint,
    build_default_constraints,
    filter_topology_spread_constraints,
    node_labels_match_spread_constraints,
    pod_labels_match_spread_constraints,
)
from schedviz.scheduler.framework.plugins.podtopologyspread.filtering import (
    PRE_FILTER_STATE_KEY,
    calculate_pre_filter_state,
    filter_node,
    filter_rows,
    get_pre_filter_state,
    update_with_pod,
)
from schedviz.scheduler.framework.plugins.podtopologyspread.scoring import (
    PRE_SCORE_STATE_KEY,
    count_existing_pods,
    get_pre_score_state,
    init_pre_score_state,
    normalize_scores,
    score_node,
    score_rows,
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
from schedviz.scheduler.util import as_objects

NAME = POD_TOPOLOGY_SPREAD

SYSTEM_DEFAULT_CONSTRAINTS = (
    TopologySpreadConstraint(
        max_skew=3, topology_key=LABEL_HOSTNAME, when_unsatisfiable=SCHEDULE_ANYWAY
    ),
    TopologySpreadConstraint(
        max_skew=5, topology_key=LABEL_TOPOLOGY_ZONE, when_unsatisfiable=SCHEDULE_ANYWAY
    ),
)


class PodTopologySpread(
    PreFilterPlugin,
    PreFilterExtensions,
    FilterPlugin,
    PreScorePlugin,
    ScorePlugin,
    ScoreExtensions,
    EnqueueExtensions,
):
    """Filters on DoNotSchedule constraints and scores on ScheduleAnyway ones."""

    def __init__(self, args: PodTopologySpreadArgs, handle: Handle) -> None:
        self._handle = handle
        self.system_defaulted = args.defaulting_type == SYSTEM_DEFAULTING
        self.default_constraints: tuple[TopologySpreadConstraint, ...] = (
            SYSTEM_DEFAULT_CONSTRAINTS if self.system_defaulted else tuple(args.default_constraints)
        )

    def name(self) -> str:
        return NAME

    def constraints_for(self, pod: Pod, action: str) -> list[SpreadConstraint]:
        """The pod's own constraints for ``action``, or the default ones when it has none."""
        if pod.topology_spread_constraints:
            return filter_topology_spread_constraints(
                pod.topology_spread_constraints, pod.labels, action
            )
        return build_default_constraints(
            pod, self.default_constraints, self._handle.objects, action
        )

    def get_constraints(self, pod: Pod) -> list[SpreadConstraint]:
        """The hard (DoNotSchedule) constraints, as upstream's ``getConstraints``."""
        return self.constraints_for(pod, DO_NOT_SCHEDULE)

    # -- PreFilter / Filter --------------------------------------------------------------------

    def pre_filter(
        self, state: CycleState, pod: Pod, nodes: Sequence[NodeInfo]
    ) -> tuple[PreFilterResult | None, Status | None]:
        constraints = self.get_constraints(pod)
        if not constraints:
            return None, new_status(Code.Skip)
        state.write(
            PRE_FILTER_STATE_KEY,
            calculate_pre_filter_state(pod, constraints, nodes, self._columns()),
        )
        return None, None

    def pre_filter_extensions(self) -> PreFilterExtensions:
        return self

    def add_pod(
        self, state: CycleState, pod_to_schedule: Pod, pod_info_to_add: PodInfo, node_info: NodeInfo
    ) -> Status | None:
        return self._update(state, pod_to_schedule, pod_info_to_add, node_info, 1)

    def remove_pod(
        self,
        state: CycleState,
        pod_to_schedule: Pod,
        pod_info_to_remove: PodInfo,
        node_info: NodeInfo,
    ) -> Status | None:
        return self._update(state, pod_to_schedule, pod_info_to_remove, node_info, -1)

    def _update(
        self, state: CycleState, pod: Pod, pod_info: PodInfo, node_info: NodeInfo, delta: int
    ) -> Status | None:
        try:
            pre_filter_state = get_pre_filter_state(state)
        except ValueError as error:
            return as_status(error)
        update_with_pod(pre_filter_state, pod_info.pod, pod, node_info.node, delta)
        return None

    def filter(self, state: CycleState, pod: Pod, node_info: NodeInfo) -> Status | None:
        node = node_info.node
        if node is None:
            return as_status("node not found")
        try:
            pre_filter_state = get_pre_filter_state(state)
        except ValueError as error:
            return as_status(error)
        # An empty state is legit: it lets every node pass.
        if not pre_filter_state.constraints:
            return None
        return filter_node(pre_filter_state, pod, node)

    def filter_columns(
        self, state: CycleState, pod: Pod, columns: NodeColumns, rows: IntArray
    ) -> IntArray | None:
        """Filter for many nodes at once, once per combination of topology values."""
        try:
            pre_filter_state = get_pre_filter_state(state)
        except ValueError:
            return None  # filter reports it
        if not pre_filter_state.constraints:
            return np.zeros(len(rows), dtype=np.int64)
        return filter_rows(pre_filter_state, pod, columns, rows)

    # -- PreScore / Score ----------------------------------------------------------------------

    def pre_score(self, state: CycleState, pod: Pod, nodes: Sequence[NodeInfo]) -> Status | None:
        all_nodes = self._handle.snapshot_shared_lister().list()
        if not all_nodes:
            # No need to score.
            return new_status(Code.Skip)
        # Only non-system-default rules require nodes to carry every topology key, so nodes
        # without a zone label still get hostname spreading.
        require_all_topologies = bool(pod.topology_spread_constraints) or not self.system_defaulted
        try:
            pre_score_state = init_pre_score_state(
                self.constraints_for(pod, SCHEDULE_ANYWAY), nodes, require_all_topologies
            )
        except ValueError as error:
            return as_status(f"calculating preScoreState: {error}")
        # Skip when the pod has no soft constraints.
        if not pre_score_state.constraints:
            return new_status(Code.Skip)
        count_existing_pods(
            pre_score_state, pod, all_nodes, require_all_topologies, self._columns()
        )
        state.write(PRE_SCORE_STATE_KEY, pre_score_state)
        return None

    def score(self, state: CycleState, pod: Pod, node_info: NodeInfo) -> tuple[int, Status | None]:
        try:
            return score_node(get_pre_score_state(state), pod, node_info), None
        except ValueError as error:
            return 0, as_status(error)

    def score_columns(
        self, state: CycleState, pod: Pod, columns: NodeColumns, rows: IntArray
    ) -> IntArray | None:
        try:
            pre_score_state = get_pre_score_state(state)
        except ValueError:
            return None  # score reports it
        return score_rows(pre_score_state, pod, columns, rows)

    def _columns(self) -> NodeColumns | None:
        """The snapshot's node columns, when the lister is a snapshot and they are on."""
        return columns_of(self._handle.snapshot_shared_lister())

    def score_extensions(self) -> ScoreExtensions:
        return self

    def normalize_score(
        self, state: CycleState, pod: Pod, scores: list[NodeScore]
    ) -> Status | None:
        try:
            pre_score_state = get_pre_score_state(state)
        except ValueError as error:
            return as_status(error)
        normalize_scores(pre_score_state, scores)
        return None

    # -- Queueing hints ------------------------------------------------------------------------

    def events_to_register(self) -> list[ClusterEventWithHint]:
        # Pod: an assigned pod added, relabelled or deleted may change a domain's count; the
        # pending pod itself getting a toleration matters to NodeTaintsPolicy Honor.
        pod_actions = (
            ActionType.Add | ActionType.UpdatePodLabel | ActionType.UpdatePodToleration
        ) | ActionType.Delete
        # Node: adding, deleting, relabelling or retainting one may change the domains.
        node_actions = (
            ActionType.Add | ActionType.Delete | ActionType.UpdateNodeLabel
        ) | ActionType.UpdateNodeTaint
        return [
            ClusterEventWithHint(
                ClusterEvent(EventResource.Pod, pod_actions), self.is_schedulable_after_pod_change
            ),
            ClusterEventWithHint(
                ClusterEvent(EventResource.Node, node_actions),
                self.is_schedulable_after_node_change,
            ),
        ]

    def is_schedulable_after_pod_change(
        self, pod: Pod, old_obj: object, new_obj: object
    ) -> QueueingHint:
        objects = as_objects(Pod, old_obj, new_obj)
        if objects is None:
            return QueueingHint.Queue
        original, modified = objects
        if (modified is not None and not _involved_in_topology_spreading(modified, pod)) or (
            original is not None and not _involved_in_topology_spreading(original, pod)
        ):
            # Unscheduled, or in another namespace: it cannot change the pod's domains.
            return QueueingHint.QueueSkip
        constraints = self.get_constraints(pod)
        if modified is not None and original is not None:
            if (
                pod.key == modified.key
                and modified.tolerations != original.tolerations
                and _has_constraint_with_node_taints_policy_honor(constraints)
            ):
                # The pending pod got a toleration a tainted node may now count with.
                return QueueingHint.Queue
            if modified.labels == original.labels:
                return QueueingHint.QueueSkip
            for constraint in constraints:
                if constraint.selector.matches(original.labels) != constraint.selector.matches(
                    modified.labels
                ):
                    # The pod now matches (or no longer matches) this constraint.
                    return QueueingHint.Queue
            return QueueingHint.QueueSkip
        added_or_deleted = modified if modified is not None else original
        if added_or_deleted is not None and pod_labels_match_spread_constraints(
            constraints, added_or_deleted.labels
        ):
            return QueueingHint.Queue
        return QueueingHint.QueueSkip

    def is_schedulable_after_node_change(
        self, pod: Pod, old_obj: object, new_obj: object
    ) -> QueueingHint:
        objects = as_objects(Node, old_obj, new_obj)
        if objects is None:
            return QueueingHint.Queue
        original, modified = objects
        constraints = self.get_constraints(pod)
        original_matching = original is not None and node_labels_match_spread_constraints(
            original.labels, constraints
        )
        modified_matching = modified is not None and node_labels_match_spread_constraints(
            modified.labels, constraints
        )
        if original is not None and modified is not None:
            # Update: the node joins or leaves the domains, moves to another domain, or its
            # taints change while it takes part.
            if original_matching != modified_matching:
                return QueueingHint.Queue
            if modified_matching and (
                _topology_key_labels_changed(original.labels, modified.labels, constraints)
                or original.taints != modified.taints
            ):
                return QueueingHint.Queue
            return QueueingHint.QueueSkip
        if modified is not None:
            # Add.
            return QueueingHint.Queue if modified_matching else QueueingHint.QueueSkip
        # Delete.
        return QueueingHint.Queue if original_matching else QueueingHint.QueueSkip


def _involved_in_topology_spreading(incoming_pod: Pod, pod_with_spreading: Pod) -> bool:
    """The pod itself, or an assigned pod of its namespace."""
    return incoming_pod.key == pod_with_spreading.key or (
        incoming_pod.node_name != "" and incoming_pod.namespace == pod_with_spreading.namespace
    )


def _has_constraint_with_node_taints_policy_honor(constraints: Sequence[SpreadConstraint]) -> bool:
    return any(c.node_taints_policy == NODE_INCLUSION_POLICY_HONOR for c in constraints)


def _topology_key_labels_changed(
    original: Mapping[str, str],
    modified: Mapping[str, str],
    constraints: Sequence[SpreadConstraint],
) -> bool:
    """Whether any constraint's topology key has another value (or appeared or vanished)."""
    return any(
        original.get(c.topology_key, "") != modified.get(c.topology_key, "") for c in constraints
    )


def new(args: object | None, handle: Handle) -> PodTopologySpread:
    if args is None:
        args = PodTopologySpreadArgs()
    if not isinstance(args, PodTopologySpreadArgs):
        raise TypeError(f"want args to be of type PodTopologySpreadArgs, got {type(args).__name__}")
    errors = validate_pod_topology_spread_args("", args)
    if errors:
        raise ConfigError(errors)
    return PodTopologySpread(args, handle)
