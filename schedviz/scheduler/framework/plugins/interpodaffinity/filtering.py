"""InterPodAffinity at PreFilter and Filter.

Mirrors pkg/scheduler/framework/plugins/interpodaffinity/filtering.go (v1.35). PreFilter counts,
per topology pair, the existing pods that match the incoming pod's required (anti-)affinity terms
and the existing pods whose required anti-affinity matches the incoming pod; Filter then looks a
node's labels up in those counts. Upstream fans the counting out over goroutines and merges lists
of pairs; the counts are sums, so one sequential pass gives the same maps.

Where upstream passes a nil ``labels.Set`` to ``AffinityTerm.Matches`` this module passes ``{}``:
a nil set is an empty set to a selector, so an empty namespaceSelector matches it.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from schedviz.kube.objects import Node, Pod
from schedviz.scheduler.framework.cycle_state import CycleState, StateNotFoundError
from schedviz.scheduler.framework.interface import Code, Status, as_status, new_status
from schedviz.scheduler.framework.plugins.names import INTER_POD_AFFINITY
from schedviz.scheduler.framework.types import AffinityTerm, NodeInfo, PodInfo

if TYPE_CHECKING:
    from schedviz.scheduler.backend.cache.columns import BoolArray

PRE_FILTER_STATE_KEY = "PreFilter" + INTER_POD_AFFINITY

# Reasons, upstream's exact strings.
ERR_REASON_EXISTING_ANTI_AFFINITY_RULES_NOT_MATCH = (
    "node(s) didn't satisfy existing pods anti-affinity rules"
)
ERR_REASON_AFFINITY_RULES_NOT_MATCH = "node(s) didn't match pod affinity rules"
ERR_REASON_ANTI_AFFINITY_RULES_NOT_MATCH = "node(s) didn't match pod anti-affinity rules"

# The incoming pod's terms have their namespaceSelector merged into namespaces, so they are
# matched without namespace labels (upstream passes nil).
NO_NAMESPACE_LABELS: dict[str, str] = {}

TopologyPair = tuple[str, str]
# How many existing pods match terms, per (topology key, topology value).
TopologyToMatchedTermCount = dict[TopologyPair, int]


def node_labels(node_info: NodeInfo) -> dict[str, str]:
    node = node_info.node
    return node.labels if node is not None else {}


def _update(counts: TopologyToMatchedTermCount, node: Node, key: str, value: int) -> None:
    """Adds ``value`` at the node's pair for ``key``; a count down to zero is dropped."""
    topology_value = node.labels.get(key)
    if topology_value is None:
        return
    pair = (key, topology_value)
    total = counts.get(pair, 0) + value
    if total == 0:
        counts.pop(pair, None)
    else:
        counts[pair] = total


def pod_matches_all_affinity_terms(terms: Sequence[AffinityTerm], pod: Pod) -> bool:
    """True if there are terms and the pod matches every one (affinity needs one pod for all)."""
    if not terms:
        return False
    return all(term.matches(pod, NO_NAMESPACE_LABELS) for term in terms)


def update_with_affinity_terms(
    counts: TopologyToMatchedTermCount,
    terms: Sequence[AffinityTerm],
    pod: Pod,
    node: Node,
    value: int,
) -> None:
    """Counts ``pod`` under every term's topology if it matches all the terms."""
    if pod_matches_all_affinity_terms(terms, pod):
        for term in terms:
            _update(counts, node, term.topology_key, value)


def update_with_anti_affinity_terms(
    counts: TopologyToMatchedTermCount,
    terms: Sequence[AffinityTerm],
    pod: Pod,
    namespace_labels: dict[str, str],
    node: Node,
    value: int,
) -> None:
    """Counts ``pod`` under the topology of each term it matches."""
    for term in terms:
        if term.matches(pod, namespace_labels):
            _update(counts, node, term.topology_key, value)


@dataclass(slots=True)
class PreFilterState:
    """Computed at PreFilter, read at Filter, updated by AddPod/RemovePod."""

    # Existing pods whose required anti-affinity terms match the incoming pod.
    existing_anti_affinity_counts: TopologyToMatchedTermCount
    # Existing pods that match all the incoming pod's required affinity terms.
    affinity_counts: TopologyToMatchedTermCount
    # Existing pods that match the incoming pod's required anti-affinity terms.
    anti_affinity_counts: TopologyToMatchedTermCount
    pod_info: PodInfo
    # A copy of the incoming pod's namespace labels.
    namespace_labels: dict[str, str]
    # Not in upstream: the counts by label value number for the column-wise Filter, per (map,
    # topology key), with the columns and the number of values they were made for; dropped
    # whenever the counts change.
    by_number: dict[tuple[str, str], tuple[object, int, BoolArray]] = field(default_factory=dict)

    def clone(self) -> PreFilterState:
        # The pod info does not change during a cycle, so it is shared, as upstream does.
        return PreFilterState(
            dict(self.existing_anti_affinity_counts),
            dict(self.affinity_counts),
            dict(self.anti_affinity_counts),
            self.pod_info,
            self.namespace_labels,
            dict(self.by_number),
        )

    def update_with_pod(self, pod_info: PodInfo, node: Node, multiplier: int) -> None:
        """Counts (or uncounts, with -1) a pod placed on ``node``."""
        self.by_number.clear()
        update_with_anti_affinity_terms(
            self.existing_anti_affinity_counts,
            pod_info.required_anti_affinity_terms,
            self.pod_info.pod,
            self.namespace_labels,
            node,
            multiplier,
        )
        update_with_affinity_terms(
            self.affinity_counts,
            self.pod_info.required_affinity_terms,
            pod_info.pod,
            node,
            multiplier,
        )
        update_with_anti_affinity_terms(
            self.anti_affinity_counts,
            self.pod_info.required_anti_affinity_terms,
            pod_info.pod,
            NO_NAMESPACE_LABELS,
            node,
            multiplier,
        )


def get_existing_anti_affinity_counts(
    pod: Pod, namespace_labels: dict[str, str], nodes: Sequence[NodeInfo]
) -> TopologyToMatchedTermCount:
    """Per topology pair, the existing pods' required anti-affinity terms matching ``pod``."""
    counts: TopologyToMatchedTermCount = {}
    for node_info in nodes:
        node = node_info.node
        if node is None:
            continue
        for existing in node_info.pods_with_required_anti_affinity:
            update_with_anti_affinity_terms(
                counts, existing.required_anti_affinity_terms, pod, namespace_labels, node, 1
            )
    return counts


def get_incoming_affinity_anti_affinity_counts(
    pod_info: PodInfo, all_nodes: Sequence[NodeInfo]
) -> tuple[TopologyToMatchedTermCount, TopologyToMatchedTermCount]:
    """Per topology pair, the existing pods matching the incoming pod's (anti-)affinity terms."""
    affinity_counts: TopologyToMatchedTermCount = {}
    anti_affinity_counts: TopologyToMatchedTermCount = {}
    affinity_terms = pod_info.required_affinity_terms
    anti_affinity_terms = pod_info.required_anti_affinity_terms
    if not affinity_terms and not anti_affinity_terms:
        return affinity_counts, anti_affinity_counts
    for node_info in all_nodes:
        node = node_info.node
        if node is None:
            continue
        for existing in node_info.pods:
            update_with_affinity_terms(affinity_counts, affinity_terms, existing.pod, node, 1)
            update_with_anti_affinity_terms(
                anti_affinity_counts,
                anti_affinity_terms,
                existing.pod,
                NO_NAMESPACE_LABELS,
                node,
                1,
            )
    return affinity_counts, anti_affinity_counts


def compute_pre_filter_state(
    pod_info: PodInfo,
    namespace_labels: dict[str, str],
    all_nodes: Sequence[NodeInfo],
    nodes_with_required_anti_affinity_pods: Sequence[NodeInfo],
) -> tuple[PreFilterState | None, Status | None]:
    """The PreFilter state, or a Skip status when nothing can reject a node.

    ``pod_info``'s required terms must already have their namespaceSelector merged.
    """
    existing = get_existing_anti_affinity_counts(
        pod_info.pod, namespace_labels, nodes_with_required_anti_affinity_pods
    )
    affinity, anti_affinity = get_incoming_affinity_anti_affinity_counts(pod_info, all_nodes)
    return pre_filter_state_from_counts(
        pod_info, namespace_labels, existing, affinity, anti_affinity
    )


def pre_filter_state_from_counts(
    pod_info: PodInfo,
    namespace_labels: dict[str, str],
    existing: TopologyToMatchedTermCount,
    affinity: TopologyToMatchedTermCount,
    anti_affinity: TopologyToMatchedTermCount,
    by_number: dict[tuple[str, str], tuple[object, int, BoolArray]] | None = None,
) -> tuple[PreFilterState | None, Status | None]:
    """``compute_pre_filter_state``'s answer from the counts, however they were made
    (``by_number``: see PreFilterState)."""
    if (
        not existing
        and not pod_info.required_affinity_terms
        and not pod_info.required_anti_affinity_terms
    ):
        return None, new_status(Code.Skip)
    return PreFilterState(
        existing, affinity, anti_affinity, pod_info, namespace_labels, by_number or {}
    ), None


def get_pre_filter_state(cycle_state: CycleState) -> PreFilterState:
    """Reads the PreFilter state; raises ValueError with upstream's message when absent."""
    try:
        value = cycle_state.read(PRE_FILTER_STATE_KEY)
    except StateNotFoundError:
        raise ValueError(
            f'error reading "{PRE_FILTER_STATE_KEY}" from cycleState: not found'
        ) from None
    if not isinstance(value, PreFilterState):
        raise ValueError(f"{value!r}  convert to interpodaffinity.state error")
    return value


def satisfy_existing_pods_anti_affinity(state: PreFilterState, node_info: NodeInfo) -> bool:
    """False if placing the pod here breaks an existing pod's required anti-affinity."""
    counts = state.existing_anti_affinity_counts
    if counts:
        for pair in node_labels(node_info).items():
            if counts.get(pair, 0) > 0:
                return False
    return True


def satisfy_pod_anti_affinity(state: PreFilterState, node_info: NodeInfo) -> bool:
    """False if the node's topology holds a pod the incoming pod's anti-affinity rejects."""
    counts = state.anti_affinity_counts
    if counts:
        labels = node_labels(node_info)
        for term in state.pod_info.required_anti_affinity_terms:
            value = labels.get(term.topology_key)
            if value is not None and counts.get((term.topology_key, value), 0) > 0:
                return False
    return True


def satisfy_pod_affinity(state: PreFilterState, node_info: NodeInfo) -> bool:
    """True if every term's topology of the node holds a pod matching all the terms."""
    labels = node_labels(node_info)
    terms = state.pod_info.required_affinity_terms
    pods_exist = True
    for term in terms:
        value = labels.get(term.topology_key)
        if value is None:
            # All topology labels must exist on the node.
            return False
        if state.affinity_counts.get((term.topology_key, value), 0) <= 0:
            pods_exist = False
    if pods_exist:
        return True
    # The first pod of a group with affinity to itself: no pod anywhere matches, but the pod
    # matches its own terms and the node has every topology key, so it may go here.
    return not state.affinity_counts and pod_matches_all_affinity_terms(terms, state.pod_info.pod)


def filter_node(cycle_state: CycleState, node_info: NodeInfo) -> Status | None:
    """Filter: whether the pod can go on this node as far as inter-pod affinity goes."""
    try:
        state = get_pre_filter_state(cycle_state)
    except ValueError as error:
        return as_status(str(error))
    if not satisfy_pod_affinity(state, node_info):
        return new_status(Code.UnschedulableAndUnresolvable, ERR_REASON_AFFINITY_RULES_NOT_MATCH)
    if not satisfy_pod_anti_affinity(state, node_info):
        return new_status(Code.Unschedulable, ERR_REASON_ANTI_AFFINITY_RULES_NOT_MATCH)
    if not satisfy_existing_pods_anti_affinity(state, node_info):
        return new_status(Code.Unschedulable, ERR_REASON_EXISTING_ANTI_AFFINITY_RULES_NOT_MATCH)
    return None
