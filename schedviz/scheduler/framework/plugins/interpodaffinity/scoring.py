"""InterPodAffinity at PreScore, Score and NormalizeScore.

Mirrors pkg/scheduler/framework/plugins/interpodaffinity/scoring.go (v1.35). PreScore sums, per
topology key and value, the weights of the preferred terms that existing pods and the incoming pod
satisfy for each other (and ``hardPodAffinityWeight`` for existing pods' required affinity terms
the incoming pod matches); Score adds up the sums of a node's topology values; NormalizeScore
scales them min..max to 0..100 in float64, truncated, as upstream does.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from schedviz.kube.objects import Node, Pod
from schedviz.scheduler.framework.cycle_state import CycleState, StateNotFoundError
from schedviz.scheduler.framework.interface import MAX_NODE_SCORE, NodeScore
from schedviz.scheduler.framework.plugins.interpodaffinity.filtering import (
    NO_NAMESPACE_LABELS,
    node_labels,
)
from schedviz.scheduler.framework.plugins.names import INTER_POD_AFFINITY
from schedviz.scheduler.framework.types import (
    AffinityTerm,
    NodeInfo,
    PodInfo,
    WeightedAffinityTerm,
)

PRE_SCORE_STATE_KEY = "PreScore" + INTER_POD_AFFINITY

# Per topology key, per topology value, the summed weights.
ScoreMap = dict[str, dict[str, int]]


@dataclass(slots=True)
class PreScoreState:
    """Computed at PreScore, read at Score and NormalizeScore."""

    topology_score: ScoreMap
    pod_info: PodInfo
    # A copy of the incoming pod's namespace labels.
    namespace_labels: dict[str, str]

    def clone(self) -> PreScoreState:
        # Upstream does not copy: nothing writes the state after PreScore.
        return self


def process_term(
    scores: ScoreMap,
    term: AffinityTerm,
    weight: int,
    pod: Pod,
    namespace_labels: dict[str, str],
    node: Node,
    multiplier: int,
) -> None:
    if term.matches(pod, namespace_labels):
        value = node.labels.get(term.topology_key)
        if value is not None:
            values = scores.setdefault(term.topology_key, {})
            values[value] = values.get(value, 0) + weight * multiplier


def process_terms(
    scores: ScoreMap,
    terms: Sequence[WeightedAffinityTerm],
    pod: Pod,
    namespace_labels: dict[str, str],
    node: Node,
    multiplier: int,
) -> None:
    for weighted in terms:
        process_term(
            scores, weighted.term, weighted.weight, pod, namespace_labels, node, multiplier
        )


def merge_scores(into: ScoreMap, other: ScoreMap) -> None:
    for key, other_values in other.items():
        values = into.get(key)
        if values is None:
            into[key] = other_values
            continue
        for value, score in other_values.items():
            values[value] = values.get(value, 0) + score


def process_existing_pod(
    state: PreScoreState,
    existing: PodInfo,
    node: Node,
    incoming_pod: Pod,
    hard_pod_affinity_weight: int,
    scores: ScoreMap,
) -> None:
    if not node.labels:
        return
    # The incoming pod's preferred terms (namespaceSelector merged): +weight for affinity,
    # -weight for anti-affinity, at the existing pod's topology.
    process_terms(
        scores, state.pod_info.preferred_affinity_terms, existing.pod, NO_NAMESPACE_LABELS, node, 1
    )
    process_terms(
        scores,
        state.pod_info.preferred_anti_affinity_terms,
        existing.pod,
        NO_NAMESPACE_LABELS,
        node,
        -1,
    )
    # Symmetry: the existing pod's required affinity terms the incoming pod matches count
    # hardPodAffinityWeight each; its preferred terms count their weight.
    if hard_pod_affinity_weight > 0:
        for term in existing.required_affinity_terms:
            process_term(
                scores,
                term,
                hard_pod_affinity_weight,
                incoming_pod,
                state.namespace_labels,
                node,
                1,
            )
    process_terms(
        scores, existing.preferred_affinity_terms, incoming_pod, state.namespace_labels, node, 1
    )
    process_terms(
        scores,
        existing.preferred_anti_affinity_terms,
        incoming_pod,
        state.namespace_labels,
        node,
        -1,
    )


def has_preferred_constraints(pod: Pod) -> bool:
    affinity = pod.affinity
    if affinity is None:
        return False
    return bool(
        (affinity.pod_affinity is not None and affinity.pod_affinity.preferred)
        or (affinity.pod_anti_affinity is not None and affinity.pod_anti_affinity.preferred)
    )


def compute_topology_score(
    state: PreScoreState,
    nodes: Sequence[NodeInfo],
    has_constraints: bool,
    hard_pod_affinity_weight: int,
) -> ScoreMap | None:
    """The summed weights over ``nodes``, or None when no node contributed any."""
    incoming_pod = state.pod_info.pod
    total: ScoreMap = {}
    contributed = False
    for node_info in nodes:
        node = node_info.node
        if node is None:
            continue
        # Unless the incoming pod has preferred terms, only pods with affinity can score.
        pods = node_info.pods if has_constraints else node_info.pods_with_affinity
        scores: ScoreMap = {}
        for existing in pods:
            process_existing_pod(
                state, existing, node, incoming_pod, hard_pod_affinity_weight, scores
            )
        if scores:
            contributed = True
            merge_scores(total, scores)
    return total if contributed else None


def get_pre_score_state(cycle_state: CycleState) -> PreScoreState:
    """Reads the PreScore state; raises ValueError with upstream's message when absent."""
    try:
        value = cycle_state.read(PRE_SCORE_STATE_KEY)
    except StateNotFoundError:
        raise ValueError(
            f'failed to read "{PRE_SCORE_STATE_KEY}" from cycleState: not found'
        ) from None
    if not isinstance(value, PreScoreState):
        raise ValueError(f"{value!r}  convert to interpodaffinity.preScoreState error")
    return value


def score_node(state: PreScoreState, node_info: NodeInfo) -> int:
    """Positive for affinity, negative for anti-affinity; normalized later."""
    labels = node_labels(node_info)
    score = 0
    for key, values in state.topology_score.items():
        value = labels.get(key)
        if value is not None:
            score += values.get(value, 0)
    return score


def normalize_scores(state: PreScoreState, scores: list[NodeScore]) -> None:
    """Scales scores from [min, max] to [0, MAX_NODE_SCORE]; all 0 when they are equal."""
    if not state.topology_score or not scores:
        return
    min_count = min(s.score for s in scores)
    max_count = max(s.score for s in scores)
    max_min_diff = max_count - min_count
    for node_score in scores:
        f_score = 0.0
        if max_min_diff > 0:
            f_score = float(MAX_NODE_SCORE) * (
                float(node_score.score - min_count) / float(max_min_diff)
            )
        node_score.score = int(f_score)
