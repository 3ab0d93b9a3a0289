"""PreScore, Score and NormalizeScore of PodTopologySpread.

Mirrors pkg/scheduler/framework/plugins/podtopologyspread/scoring.go (v1.35). Only ScheduleAnyway
constraints score. A node scores the weighted number of matching pods in its domains, each
constraint weighted by log(number of domains + 2) so that small topologies are not watered down
by big ones, plus ``maxSkew - 1``; fewer pods is better, so NormalizeScore reverses the scale. Score
rounds half away from zero and NormalizeScore divides in integers, as Go does.

Not upstream: given the snapshot's node columns, PreScore sums the matching pods per domain
from per-node counts kept between cycles, and ``score_rows`` scores many nodes at once in the
same float64 operations.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, field
from functools import partial

import numpy as np

from schedviz.kube.labels import Selector
from schedviz.kube.nodeaffinity import RequiredNodeAffinity
from schedviz.kube.objects import LABEL_HOSTNAME, Node, Pod
from schedviz.scheduler.backend.cache.columns import IntArray, NodeColumns
from schedviz.scheduler.framework.cycle_state import CycleState, StateNotFoundError
from schedviz.scheduler.framework.interface import MAX_NODE_SCORE, NodeScore
from schedviz.scheduler.framework.plugins.names import POD_TOPOLOGY_SPREAD
from schedviz.scheduler.framework.plugins.podtopologyspread.common import (
    NODE_INCLUSION_POLICY_HONOR,
    SpreadConstraint,
    count_pods_match_selector,
    node_labels_match_spread_constraints,
)
from schedviz.scheduler.framework.types import NodeInfo

PRE_SCORE_STATE_KEY = "PreScore" + POD_TOPOLOGY_SPREAD
INVALID_SCORE = -1


@dataclass(slots=True)
class PreScoreState:
    """What PreScore computed, indexed like ``constraints``.

    ``ignored_nodes`` miss a topology key and score 0. ``topology_value_to_pod_counts[i]`` holds
    the matching pods of each domain of constraint ``i`` that has a candidate node; hostname
    domains are counted in Score instead.
    """

    constraints: list[SpreadConstraint] = field(default_factory=list)
    ignored_nodes: set[str] = field(default_factory=set)
    topology_value_to_pod_counts: list[dict[str, int]] = field(default_factory=list)
    topology_normalizing_weight: list[float] = field(default_factory=list)

    def clone(self) -> PreScoreState:
        # Nothing changes the state after PreScore, so it is shared as upstream shares it.
        return self


def topology_normalizing_weight(size: int) -> float:
    """log(size + 2): with 1 to 5000 domains the weight lies in [1.09, 8.52]."""
    return math.log(size + 2)


def score_for_count(count: int, max_skew: int, tp_weight: float) -> float:
    """``maxSkew - 1`` is added so that differences between domains are watered down."""
    return count * tp_weight + (max_skew - 1)


def go_round(value: float) -> int:
    """math.Round: halves round away from zero."""
    truncated = math.trunc(value)
    if abs(value - truncated) >= 0.5:
        truncated += 1 if value > 0 else -1
    return int(truncated)


def init_pre_score_state(
    constraints: list[SpreadConstraint],
    filtered_nodes: Sequence[NodeInfo],
    require_all_topologies: bool,
) -> PreScoreState:
    """Registers the domains of the candidate nodes and the weight of every constraint."""
    state = PreScoreState(constraints=constraints)
    if not constraints:
        return state
    state.topology_value_to_pod_counts = [{} for _ in constraints]
    for node_info in filtered_nodes:
        node = _node_of(node_info)
        if require_all_topologies and not node_labels_match_spread_constraints(
            node.labels, constraints
        ):
            # Nodes missing a topology key are not scored.
            state.ignored_nodes.add(node.name)
            continue
        for index, constraint in enumerate(constraints):
            # Per-node counts are computed in Score.
            if constraint.topology_key == LABEL_HOSTNAME:
                continue
            value = node.labels.get(constraint.topology_key, "")
            state.topology_value_to_pod_counts[index].setdefault(value, 0)
    for index, constraint in enumerate(constraints):
        size = len(state.topology_value_to_pod_counts[index])
        if constraint.topology_key == LABEL_HOSTNAME:
            size = len(filtered_nodes) - len(state.ignored_nodes)
        state.topology_normalizing_weight.append(topology_normalizing_weight(size))
    return state


def count_existing_pods(
    state: PreScoreState,
    pod: Pod,
    all_nodes: Sequence[NodeInfo],
    require_all_topologies: bool,
    columns: NodeColumns | None = None,
) -> None:
    """Adds the matching pods of every node to the domains registered in ``state``."""
    required_node_affinity = RequiredNodeAffinity(pod)
    if (
        columns is not None
        and all_nodes is columns.infos
        and _count_by_columns(state, pod, required_node_affinity, columns, require_all_topologies)
    ):
        return
    for node_info in all_nodes:
        node = node_info.node
        if node is None:
            continue
        if require_all_topologies and not node_labels_match_spread_constraints(
            node.labels, state.constraints
        ):
            continue
        for index, constraint in enumerate(state.constraints):
            if not constraint.match_node_inclusion_policies(pod, node, required_node_affinity):
                continue
            value = node.labels.get(constraint.topology_key, "")
            counts = state.topology_value_to_pod_counts[index]
            # Skip domains without a candidate node (hostname ones included).
            if value not in counts:
                continue
            counts[value] += count_pods_match_selector(
                node_info.pods, constraint.selector, pod.namespace
            )


def _count_by_columns(
    state: PreScoreState,
    pod: Pod,
    required_node_affinity: RequiredNodeAffinity,
    columns: NodeColumns,
    require_all_topologies: bool,
) -> bool:
    """``count_existing_pods`` over node columns; False (nothing counted) when a node inclusion
    policy would need each node's own labels or taints."""
    for constraint in state.constraints:
        if (
            constraint.node_affinity_policy == NODE_INCLUSION_POLICY_HONOR
            and not required_node_affinity.matches_every_node
        ) or constraint.node_taints_policy == NODE_INCLUSION_POLICY_HONOR:
            return False
    numbers = [columns.label_values(c.topology_key)[0] for c in state.constraints]
    eligible = np.ones(len(columns.infos), dtype=np.bool_)
    if require_all_topologies:
        for values_of_rows in numbers:
            eligible &= values_of_rows >= 0
    for index, constraint in enumerate(state.constraints):
        counts = state.topology_value_to_pod_counts[index]
        if not counts:
            continue
        matching = columns.derived(
            (POD_TOPOLOGY_SPREAD, constraint.selector, pod.namespace),
            partial(_matching_pods, constraint.selector, pod.namespace),
        )
        values_of_rows = numbers[index]
        for value in counts:
            number = columns.label_number(constraint.topology_key, value)
            on_domain = values_of_rows == number
            if not value:
                # A node without the key counts towards the "" domain, as labels.get(key, "").
                on_domain |= values_of_rows == -1
            counts[value] += int(matching[eligible & on_domain].sum())
    return True


def _matching_pods(selector: Selector, namespace: str, node_info: NodeInfo) -> int:
    return count_pods_match_selector(node_info.pods, selector, namespace)


def score_rows(state: PreScoreState, pod: Pod, columns: NodeColumns, rows: IntArray) -> IntArray:
    """``score_node`` of the nodes at ``rows``, in the same float64 operations."""
    score = np.zeros(len(rows), dtype=np.float64)
    for index, constraint in enumerate(state.constraints):
        values_of_rows, values = columns.label_values(constraint.topology_key)
        numbers = values_of_rows[rows]
        if constraint.topology_key == LABEL_HOSTNAME:
            count = columns.derived(
                (POD_TOPOLOGY_SPREAD, constraint.selector, pod.namespace),
                partial(_matching_pods, constraint.selector, pod.namespace),
            )[rows]
        else:
            domain_counts = state.topology_value_to_pod_counts[index]
            by_number = np.array([domain_counts.get(v, 0) for v in values], dtype=np.int64)
            count = by_number[np.maximum(numbers, 0)] if len(values) else numbers * 0
        added = count * state.topology_normalizing_weight[index] + (constraint.max_skew - 1)
        # A node without the key adds nothing for this constraint.
        score = np.where(numbers >= 0, score + added, score)
    truncated = np.trunc(score)
    away = np.where(score > 0, 1.0, -1.0)
    rounded = np.where(np.abs(score - truncated) >= 0.5, truncated + away, truncated)
    result: IntArray = rounded.astype(np.int64)
    if state.ignored_nodes:
        ignored = state.ignored_nodes
        result[[k for k, name in enumerate(columns.names_at(rows)) if name in ignored]] = 0
    return result


def get_pre_score_state(cycle_state: CycleState) -> PreScoreState:
    """Reads the PreScore state; raises ValueError with upstream's message when absent."""
    try:
        value = cycle_state.read(PRE_SCORE_STATE_KEY)
    except StateNotFoundError:
        raise ValueError(
            f'error reading "{PRE_SCORE_STATE_KEY}" from cycleState: not found'
        ) from None
    if not isinstance(value, PreScoreState):
        raise ValueError(f"{value!r}  convert to podtopologyspread.preScoreState error")
    return value


def score_node(state: PreScoreState, pod: Pod, node_info: NodeInfo) -> int:
    """The weighted number of matching pods in the node's domains (lower is better)."""
    node = _node_of(node_info)
    if node.name in state.ignored_nodes:
        return 0
    score = 0.0
    for index, constraint in enumerate(state.constraints):
        tp_value = node.labels.get(constraint.topology_key)
        if tp_value is None:
            continue
        if constraint.topology_key == LABEL_HOSTNAME:
            count = count_pods_match_selector(node_info.pods, constraint.selector, pod.namespace)
        else:
            count = state.topology_value_to_pod_counts[index].get(tp_value, 0)
        score += score_for_count(
            count, constraint.max_skew, state.topology_normalizing_weight[index]
        )
    return go_round(score)


def normalize_scores(state: PreScoreState, scores: list[NodeScore]) -> None:
    """Maps [min, max] onto [100 * min / max, 0] reversed; ignored nodes get 0."""
    min_score: int | None = None
    max_score = 0
    for node_score in scores:
        if node_score.name in state.ignored_nodes:
            node_score.score = INVALID_SCORE
            continue
        if min_score is None or node_score.score < min_score:
            min_score = node_score.score
        max_score = max(max_score, node_score.score)
    for node_score in scores:
        if node_score.score == INVALID_SCORE:
            node_score.score = 0
            continue
        if max_score == 0:
            node_score.score = MAX_NODE_SCORE
            continue
        assert min_score is not None
        node_score.score = MAX_NODE_SCORE * (max_score + min_score - node_score.score) // max_score


def _node_of(node_info: NodeInfo) -> Node:
    node = node_info.node
    if node is None:
        raise ValueError("node not found")
    return node
