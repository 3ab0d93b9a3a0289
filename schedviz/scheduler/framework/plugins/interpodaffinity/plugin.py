"""The InterPodAffinity plugin: required and preferred pod (anti-)affinity.

Mirrors pkg/scheduler/framework/plugins/interpodaffinity/plugin.go (v1.35); the extension points
are computed in ``filtering.py`` and ``scoring.py`` as upstream splits them. Namespaces are read
through ``handle.objects`` (upstream's namespace lister). Deliberate differences:
- pods are told apart by ``namespace/name`` where upstream compares UIDs;
- the pod queueing hint carries two upstream fixes from after the v1.35 branch point (#135394:
  the pending pod's own label change requeues it; #135325: deleting a pod whose required
  anti-affinity matches the pending pod requeues it).
"""

from __future__ import annotations

from collections.abc import Sequence

from schedviz.kube.labels import NOTHING
from schedviz.kube.objects import Namespace, Node, Pod
from schedviz.scheduler.apis.config.types_pluginargs import InterPodAffinityArgs
from schedviz.scheduler.backend.cache.columns import IntArray, NodeColumns, columns_of
from schedviz.scheduler.framework.cycle_state import CycleState
from schedviz.scheduler.framework.interface import (
    Code,
    EnqueueExtensions,
    FilterPlugin,
    Handle,
    NodeScore,
    ObjectLister,
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
from schedviz.scheduler.framework.plugins.interpodaffinity.columnwise import (
    filter_rows,
    pre_filter_counts,
    score_rows,
)
from schedviz.scheduler.framework.plugins.interpodaffinity.columnwise import (
    topology_score as column_topology_score,
)
from schedviz.scheduler.framework.plugins.interpodaffinity.filtering import (
    PRE_FILTER_STATE_KEY,
    compute_pre_filter_state,
    filter_node,
    get_pre_filter_state,
    pod_matches_all_affinity_terms,
    pre_filter_state_from_counts,
)
from schedviz.scheduler.framework.plugins.interpodaffinity.scoring import (
    PRE_SCORE_STATE_KEY,
    PreScoreState,
    compute_topology_score,
    get_pre_score_state,
    has_preferred_constraints,
    normalize_scores,
    score_node,
)
from schedviz.scheduler.framework.plugins.names import INTER_POD_AFFINITY
from schedviz.scheduler.framework.types import (
    ActionType,
    AffinityTerm,
    ClusterEvent,
    ClusterEventWithHint,
    EventResource,
    NodeInfo,
    PodInfo,
    QueueingHint,
    new_affinity_term,
)

NAME = INTER_POD_AFFINITY

# Upstream's apis/config/validation bounds for hardPodAffinityWeight.
MIN_HARD_POD_AFFINITY_WEIGHT = 0
MAX_HARD_POD_AFFINITY_WEIGHT = 100


def merge_affinity_term_namespaces_if_not_empty(term: AffinityTerm, objects: ObjectLister) -> None:
    """Unrolls an incoming pod's namespaceSelector into its namespaces.

    Afterwards the selector selects nothing, unless it was empty (all namespaces), so the term can
    be matched against existing pods without looking their namespaces' labels up.
    """
    if term.namespace_selector.empty:
        return
    selector = term.namespace_selector
    selected = {
        ns.name
        for ns in objects.list_objects("Namespace")
        if isinstance(ns, Namespace) and selector.matches(ns.labels)
    }
    term.namespaces = term.namespaces | selected
    term.namespace_selector = NOTHING


def namespace_labels_snapshot(namespace: str, objects: ObjectLister) -> dict[str, str]:
    """A copy of the namespace's labels; empty when the namespace is unknown (as upstream)."""
    return dict(objects.namespace_labels(namespace) or {})


def validate_args(args: InterPodAffinityArgs) -> None:
    weight = args.hard_pod_affinity_weight
    if not MIN_HARD_POD_AFFINITY_WEIGHT <= weight <= MAX_HARD_POD_AFFINITY_WEIGHT:
        raise ValueError(
            f"hardPodAffinityWeight: Invalid value: {weight}: not in valid range "
            f"[{MIN_HARD_POD_AFFINITY_WEIGHT}-{MAX_HARD_POD_AFFINITY_WEIGHT}]"
        )


def _node_of(node_info: NodeInfo) -> Node:
    node = node_info.node
    if node is None:
        raise ValueError("node not found")
    return node


class InterPodAffinity(
    PreFilterPlugin,
    PreFilterExtensions,
    FilterPlugin,
    PreScorePlugin,
    ScorePlugin,
    ScoreExtensions,
    EnqueueExtensions,
):
    """Checks and scores nodes by the pods already in their topology domains."""

    def __init__(self, args: InterPodAffinityArgs, handle: Handle) -> None:
        self.args = args
        self._handle = handle

    def name(self) -> str:
        return NAME

    # -- PreFilter / Filter --------------------------------------------------------------------

    def pre_filter(
        self, state: CycleState, pod: Pod, nodes: Sequence[NodeInfo]
    ) -> tuple[PreFilterResult | None, Status | None]:
        lister = self._handle.snapshot_shared_lister()
        objects = self._handle.objects
        pod_info = PodInfo(pod)
        for term in (*pod_info.required_affinity_terms, *pod_info.required_anti_affinity_terms):
            merge_affinity_term_namespaces_if_not_empty(term, objects)
        namespace_labels = namespace_labels_snapshot(pod.namespace, objects)
        columns = self._columns()
        if columns is not None and nodes is columns.infos:
            pre_filter_state, status = pre_filter_state_from_counts(
                pod_info, namespace_labels, *pre_filter_counts(pod_info, namespace_labels, columns)
            )
        else:
            pre_filter_state, status = compute_pre_filter_state(
                pod_info,
                namespace_labels,
                nodes,
                lister.have_pods_with_required_anti_affinity_list(),
            )
        if pre_filter_state is not None:
            state.write(PRE_FILTER_STATE_KEY, pre_filter_state)
        return None, status

    def pre_filter_extensions(self) -> PreFilterExtensions | None:
        return self

    def add_pod(
        self, state: CycleState, pod_to_schedule: Pod, pod_info_to_add: PodInfo, node_info: NodeInfo
    ) -> Status | None:
        return self._update_pre_filter_state(state, pod_info_to_add, node_info, 1)

    def remove_pod(
        self,
        state: CycleState,
        pod_to_schedule: Pod,
        pod_info_to_remove: PodInfo,
        node_info: NodeInfo,
    ) -> Status | None:
        return self._update_pre_filter_state(state, pod_info_to_remove, node_info, -1)

    def _update_pre_filter_state(
        self, state: CycleState, pod_info: PodInfo, node_info: NodeInfo, multiplier: int
    ) -> Status | None:
        try:
            get_pre_filter_state(state).update_with_pod(pod_info, _node_of(node_info), multiplier)
        except ValueError as error:
            return as_status(str(error))
        return None

    def filter(self, state: CycleState, pod: Pod, node_info: NodeInfo) -> Status | None:
        return filter_node(state, node_info)

    def filter_columns(
        self, state: CycleState, pod: Pod, columns: NodeColumns, rows: IntArray
    ) -> IntArray | None:
        if not columns.exact:
            return None
        try:
            pre_filter_state = get_pre_filter_state(state)
        except ValueError:
            return None  # filter reports it, node by node
        return filter_rows(pre_filter_state, columns, rows)

    def _columns(self) -> NodeColumns | None:
        """The snapshot's node columns, when the lister is a snapshot and they are on."""
        return columns_of(self._handle.snapshot_shared_lister())

    # -- PreScore / Score -----------------------------------------------------------------------

    def pre_score(self, state: CycleState, pod: Pod, nodes: Sequence[NodeInfo]) -> Status | None:
        has_constraints = has_preferred_constraints(pod)
        # Optionally ignore existing pods' preferences when the incoming pod has none itself.
        if self.args.ignore_preferred_terms_of_existing_pods and not has_constraints:
            return new_status(Code.Skip)
        lister = self._handle.snapshot_shared_lister()
        # Unless the incoming pod has preferred terms, only nodes with pods with affinity count.
        all_nodes = lister.list() if has_constraints else lister.have_pods_with_affinity_list()
        objects = self._handle.objects
        pod_info = PodInfo(pod)
        for weighted in (
            *pod_info.preferred_affinity_terms,
            *pod_info.preferred_anti_affinity_terms,
        ):
            merge_affinity_term_namespaces_if_not_empty(weighted.term, objects)
        pre_score_state = PreScoreState(
            {}, pod_info, namespace_labels_snapshot(pod.namespace, objects)
        )
        columns = self._columns()
        if columns is not None and lister.list() is columns.infos:
            topology_score = column_topology_score(
                pre_score_state, columns, has_constraints, self.args.hard_pod_affinity_weight
            )
        else:
            topology_score = compute_topology_score(
                pre_score_state, all_nodes, has_constraints, self.args.hard_pod_affinity_weight
            )
        if topology_score is None:
            return new_status(Code.Skip)
        pre_score_state.topology_score = topology_score
        state.write(PRE_SCORE_STATE_KEY, pre_score_state)
        return None

    def score(self, state: CycleState, pod: Pod, node_info: NodeInfo) -> tuple[int, Status | None]:
        try:
            pre_score_state = get_pre_score_state(state)
        except ValueError as error:
            return 0, as_status(str(error))
        return score_node(pre_score_state, node_info), None

    def score_columns(
        self, state: CycleState, pod: Pod, columns: NodeColumns, rows: IntArray
    ) -> IntArray | None:
        try:
            pre_score_state = get_pre_score_state(state)
        except ValueError:
            return None  # score reports it, node by node
        return score_rows(pre_score_state, columns, rows)

    def score_extensions(self) -> ScoreExtensions | None:
        return self

    def normalize_score(
        self, state: CycleState, pod: Pod, scores: list[NodeScore]
    ) -> Status | None:
        try:
            pre_score_state = get_pre_score_state(state)
        except ValueError as error:
            return as_status(str(error))
        normalize_scores(pre_score_state, scores)
        return None

    # -- Queueing hints --------------------------------------------------------------------------

    def events_to_register(self) -> list[ClusterEventWithHint]:
        # Pod Add: an assigned pod may satisfy the pod's affinity; UpdatePodLabel: a label change
        # may satisfy affinity or stop violating anti-affinity; Delete: the deleted pod may have
        # violated anti-affinity. Node events only matter through topology labels; UpdateNodeTaint
        # is not registered because queueing hints are on (no preCheck to work around).
        return [
            ClusterEventWithHint(
                ClusterEvent(
                    EventResource.Pod,
                    ActionType.Add | ActionType.UpdatePodLabel | ActionType.Delete,
                ),
                self.is_schedulable_after_pod_change,
            ),
            ClusterEventWithHint(
                ClusterEvent(EventResource.Node, ActionType.Add | ActionType.UpdateNodeLabel),
                self.is_schedulable_after_node_change,
            ),
        ]

    def is_schedulable_after_pod_change(
        self, pod: Pod, old_obj: object, new_obj: object
    ) -> QueueingHint:
        original = old_obj if isinstance(old_obj, Pod) else None
        modified = new_obj if isinstance(new_obj, Pod) else None
        if (old_obj is not None and original is None) or (new_obj is not None and modified is None):
            return QueueingHint.Queue
        if (
            original is not None
            and modified is not None
            and modified.key == pod.key
            and original.labels != modified.labels
        ):
            # The pending pod's own labels changed: its self-affinity may now match.
            return QueueingHint.Queue
        if (modified is not None and not modified.node_name) or (
            original is not None and not original.node_name
        ):
            # An unscheduled pod does not make the target pod schedulable.
            return QueueingHint.QueueSkip
        terms = required_terms(pod, anti=False)
        anti_terms = required_terms(pod, anti=True)
        if original is not None and modified is not None:
            # One existing pod must match all the affinity terms, so the terms are checked as one.
            if not pod_matches_all_affinity_terms(
                terms, original
            ) and pod_matches_all_affinity_terms(terms, modified):
                return QueueingHint.Queue
            if pod_matches_all_affinity_terms(
                anti_terms, original
            ) and not pod_matches_all_affinity_terms(anti_terms, modified):
                return QueueingHint.Queue
            return QueueingHint.QueueSkip
        if modified is not None:
            # Added: it may satisfy the target pod's affinity.
            if pod_matches_all_affinity_terms(terms, modified):
                return QueueingHint.Queue
            return QueueingHint.QueueSkip
        if original is None:
            return QueueingHint.Queue
        # Deleted: it may have been what the target pod's anti-affinity rejected, or its own
        # anti-affinity may have rejected the target pod.
        if pod_matches_all_affinity_terms(anti_terms, original):
            return QueueingHint.Queue
        if pod_matches_all_affinity_terms(required_terms(original, anti=True), pod):
            return QueueingHint.Queue
        return QueueingHint.QueueSkip

    def is_schedulable_after_node_change(
        self, pod: Pod, old_obj: object, new_obj: object
    ) -> QueueingHint:
        original = old_obj if isinstance(old_obj, Node) else None
        modified = new_obj if isinstance(new_obj, Node) else None
        if modified is None or (old_obj is not None and original is None):
            return QueueingHint.Queue
        for term in required_terms(pod, anti=False):
            key = term.topology_key
            if original is None:
                # A node added with the topology key may host the pod.
                if key in modified.labels:
                    return QueueingHint.Queue
                continue
            # The node gained the topology key, or moved to another domain.
            if key in modified.labels and original.labels.get(key) != modified.labels[key]:
                return QueueingHint.Queue
        for term in required_terms(pod, anti=True):
            if original is None:
                # Any added node may do: without the key it never violates anti-affinity, and
                # with it, whether its domain is free is beyond a hint.
                return QueueingHint.Queue
            key = term.topology_key
            if key in original.labels and original.labels[key] != modified.labels.get(key):
                # The node lost the topology key, or moved to another domain.
                return QueueingHint.Queue
        return QueueingHint.QueueSkip


def required_terms(pod: Pod, *, anti: bool) -> list[AffinityTerm]:
    """The pod's required (anti-)affinity terms (upstream ``GetAffinityTerms``)."""
    affinity = pod.affinity
    if affinity is None:
        return []
    terms = affinity.pod_anti_affinity if anti else affinity.pod_affinity
    if terms is None:
        return []
    return [new_affinity_term(pod, term) for term in terms.required]


def new(args: object | None, handle: Handle) -> InterPodAffinity:
    """Builds the plugin; ``args`` are InterPodAffinityArgs, or None for the defaults."""
    if args is None:
        args = InterPodAffinityArgs()
    if not isinstance(args, InterPodAffinityArgs):
        raise TypeError(f"want args to be of type InterPodAffinityArgs, got {type(args).__name__}")
    validate_args(args)
    return InterPodAffinity(args, handle)
