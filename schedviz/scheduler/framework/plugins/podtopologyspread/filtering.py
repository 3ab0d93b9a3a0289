"""PreFilter, Filter and the PreFilter extensions of PodTopologySpread.

Mirrors pkg/scheduler/framework/plugins/podtopologyspread/filtering.go (v1.35). PreFilter counts,
per DoNotSchedule constraint, the matching pods of every topology domain and keeps the two
"critical paths" (the domains with the fewest matching pods); Filter rejects a node whose domain
would then exceed ``maxSkew`` over the global minimum, which counts as 0 while fewer than
``minDomains`` domains are eligible. AddPod/RemovePod keep the counts current while preemption
tries victims.

Not upstream: given the snapshot's node columns, PreFilter numbers each topology key's values
once and counts pods only on nodes that have some, and ``filter_rows`` answers for every node
of a domain at once (Filter reads nothing of a node but its topology values).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from functools import partial

import numpy as np

from schedviz.kube.labels import Selector
from schedviz.kube.nodeaffinity import RequiredNodeAffinity
from schedviz.kube.objects import Node, Pod
from schedviz.kube.taints import find_matching_untolerated_taint
from schedviz.scheduler.backend.cache.columns import IntArray, NodeColumns
from schedviz.scheduler.framework.cycle_state import CycleState, StateNotFoundError
from schedviz.scheduler.framework.interface import Code, Status, new_status
from schedviz.scheduler.framework.plugins.helper.taint import do_not_schedule_taints_filter
from schedviz.scheduler.framework.plugins.names import POD_TOPOLOGY_SPREAD
from schedviz.scheduler.framework.plugins.podtopologyspread.common import (
    NODE_INCLUSION_POLICY_HONOR,
    SpreadConstraint,
    count_pods_match_selector,
    node_labels_match_spread_constraints,
)
from schedviz.scheduler.framework.types import NodeInfo

PRE_FILTER_STATE_KEY = "PreFilter" + POD_TOPOLOGY_SPREAD

# ErrReasonConstraintsNotMatch is used for PodTopologySpread filter error.
ERR_REASON_CONSTRAINTS_NOT_MATCH = "node(s) didn't match pod topology spread constraints"
# ErrReasonNodeLabelNotMatch is used when the node doesn't hold the required label.
ERR_REASON_NODE_LABEL_NOT_MATCH = ERR_REASON_CONSTRAINTS_NOT_MATCH + " (missing required label)"

_MAX_INT32 = 2**31 - 1

CriticalPath = tuple[str, int]  # (topology value, number of matching pods)


class CriticalPaths:
    """The two domains with the fewest matching pods, as far as updates let us know.

    ``[0]`` always holds the minimum; ``[1]`` is at least that, but not always the second
    minimum. Two paths suffice because preemption removes pods from one node at a time, each on
    its own copy of the state.
    """

    __slots__ = ("paths",)

    def __init__(
        self, first: CriticalPath = ("", _MAX_INT32), second: CriticalPath = ("", _MAX_INT32)
    ):
        self.paths: list[CriticalPath] = [first, second]

    def __getitem__(self, index: int) -> CriticalPath:
        return self.paths[index]

    def update(self, tp_value: str, num: int) -> None:
        paths = self.paths
        if tp_value == paths[0][0]:
            index = 0
        elif tp_value == paths[1][0]:
            index = 1
        else:
            index = -1
        if index >= 0:
            paths[index] = (tp_value, num)
            if paths[0][1] > paths[1][1]:
                paths[0], paths[1] = paths[1], paths[0]
        elif num < paths[0][1]:
            paths[1] = paths[0]
            paths[0] = (tp_value, num)
        elif num < paths[1][1]:
            paths[1] = (tp_value, num)

    def clone(self) -> CriticalPaths:
        return CriticalPaths(self.paths[0], self.paths[1])

    def __repr__(self) -> str:
        return f"CriticalPaths({self.paths[0]!r}, {self.paths[1]!r})"


@dataclass(slots=True)
class PreFilterState:
    """What PreFilter computed, indexed like ``constraints``.

    ``tp_value_to_match_num[i]`` maps each eligible domain of constraint ``i`` to its number of
    matching pods. An empty state (no constraints) is legit and lets every node pass.
    """

    constraints: list[SpreadConstraint] = field(default_factory=list)
    critical_paths: list[CriticalPaths] = field(default_factory=list)
    tp_value_to_match_num: list[dict[str, int]] = field(default_factory=list)

    def min_match_num(self, constraint_id: int, min_domains: int) -> int:
        """The global minimum, 0 while fewer than ``min_domains`` domains are eligible."""
        if len(self.tp_value_to_match_num[constraint_id]) < min_domains:
            return 0
        return self.critical_paths[constraint_id][0][1]

    def clone(self) -> PreFilterState:
        # Constraints never change, so they are shared.
        return PreFilterState(
            constraints=self.constraints,
            critical_paths=[paths.clone() for paths in self.critical_paths],
            tp_value_to_match_num=[dict(counts) for counts in self.tp_value_to_match_num],
        )


def calculate_pre_filter_state(
    pod: Pod,
    constraints: list[SpreadConstraint],
    all_nodes: Sequence[NodeInfo],
    columns: NodeColumns | None = None,
) -> PreFilterState:
    """Counts the matching pods of every eligible domain of every constraint."""
    if not constraints:
        return PreFilterState()
    required_node_affinity = RequiredNodeAffinity(pod)
    if columns is not None and all_nodes is columns.infos:
        counted = _count_by_columns(pod, constraints, required_node_affinity, columns)
        if counted is not None:
            return _pre_filter_state(constraints, counted)
    counts: list[dict[str, int]] = [{} for _ in constraints]
    for node_info in all_nodes:
        node = node_info.node
        if node is None:
            continue
        # A node takes part only when it carries every constraint's topology key.
        if not node_labels_match_spread_constraints(node.labels, constraints):
            continue
        for index, constraint in enumerate(constraints):
            if not constraint.match_node_inclusion_policies(pod, node, required_node_affinity):
                continue
            value = node.labels[constraint.topology_key]
            matched = count_pods_match_selector(node_info.pods, constraint.selector, pod.namespace)
            counts[index][value] = counts[index].get(value, 0) + matched
    return _pre_filter_state(constraints, counts)


def _pre_filter_state(
    constraints: list[SpreadConstraint], counts: list[dict[str, int]]
) -> PreFilterState:
    critical_paths = []
    for domain_counts in counts:
        paths = CriticalPaths()
        for value, num in domain_counts.items():
            paths.update(value, num)
        critical_paths.append(paths)
    return PreFilterState(constraints, critical_paths, counts)


def _count_by_columns(
    pod: Pod,
    constraints: list[SpreadConstraint],
    required_node_affinity: RequiredNodeAffinity,
    columns: NodeColumns,
) -> list[dict[str, int]] | None:
    """``calculate_pre_filter_state``'s counts over node columns: each domain entered in the
    order the node walk first meets it, pods counted only where there are some. None when a
    node inclusion policy would need each node's own labels (a pod with node affinity)."""
    numbers = [columns.label_values(c.topology_key) for c in constraints]
    # A node takes part only when it carries every constraint's topology key.
    eligible = np.ones(len(columns.infos), dtype=np.bool_)
    for values_of_rows, _ in numbers:
        eligible &= values_of_rows >= 0
    counts: list[dict[str, int]] = []
    for constraint, (values_of_rows, values) in zip(constraints, numbers, strict=True):
        included = eligible
        if (
            constraint.node_affinity_policy == NODE_INCLUSION_POLICY_HONOR
            and not required_node_affinity.matches_every_node
        ):
            return None
        if constraint.node_taints_policy == NODE_INCLUSION_POLICY_HONOR:
            taints_of = columns.taints_of_group()
            tolerated = np.array(
                [
                    find_matching_untolerated_taint(
                        taints, pod.tolerations, do_not_schedule_taints_filter
                    )
                    is None
                    for taints in taints_of
                ],
                dtype=np.bool_,
            )
            included = included & tolerated[columns.taint_group]
        rows = np.flatnonzero(included)
        numbers_here, first = np.unique(values_of_rows[rows], return_index=True)
        matching = columns.derived(
            (POD_TOPOLOGY_SPREAD, constraint.selector, pod.namespace),
            partial(_matching_pods, constraint.selector, pod.namespace),
        )
        sums = np.zeros(len(values), dtype=np.int64)
        np.add.at(sums, values_of_rows[rows], matching[rows])
        counts.append(
            {
                values[number]: int(sums[number])
                for number in numbers_here[np.argsort(first)].tolist()
            }
        )
    return counts


def _matching_pods(selector: Selector, namespace: str, node_info: NodeInfo) -> int:
    return count_pods_match_selector(node_info.pods, selector, namespace)


# filter_rows' classes: the two statuses filter_node can give.
_MISSING_LABEL = 1
_SKEW_EXCEEDED = 2


def filter_rows(state: PreFilterState, pod: Pod, columns: NodeColumns, rows: IntArray) -> IntArray:
    """``filter_node`` of the nodes at ``rows``, column-wise: 0 where it passes, 1 where a
    constraint's topology key is missing (before any later constraint is looked at) and 2
    where a domain's skew would exceed maxSkew, for ``filter_columns``: filter_node gives the
    one same status for each."""
    classes = np.zeros(len(rows), dtype=np.int64)
    for index, constraint in enumerate(state.constraints):
        numbers_of_rows, values = columns.label_values(constraint.topology_key)
        numbers = numbers_of_rows[rows]
        open_ = classes == 0
        classes[open_ & (numbers < 0)] = _MISSING_LABEL
        # 'existing matching num' + 'if self-match (1 or 0)' - 'global minimum' <= 'maxSkew'
        min_match_num = state.min_match_num(index, constraint.min_domains)
        self_match_num = 1 if constraint.selector.matches(pod.labels) else 0
        counts = state.tp_value_to_match_num[index]
        match_of_number = np.array([counts.get(value, 0) for value in values], dtype=np.int64)
        match_num = match_of_number[np.maximum(numbers, 0)] if values else np.zeros_like(numbers)
        exceeded = match_num + self_match_num - min_match_num > constraint.max_skew
        classes[open_ & (numbers >= 0) & exceeded] = _SKEW_EXCEEDED
    return classes


def get_pre_filter_state(cycle_state: CycleState) -> PreFilterState:
    """Reads the PreFilter state; raises ValueError with upstream's message when absent."""
    try:
        value = cycle_state.read(PRE_FILTER_STATE_KEY)
    except StateNotFoundError:
        raise ValueError(f'reading "{PRE_FILTER_STATE_KEY}" from cycleState: not found') from None
    if not isinstance(value, PreFilterState):
        raise ValueError(f"{value!r} convert to podtopologyspread.preFilterState error")
    return value


def update_with_pod(
    state: PreFilterState, updated_pod: Pod, preemptor_pod: Pod, node: Node | None, delta: int
) -> None:
    """Adds (``delta`` 1) or removes (-1) ``updated_pod`` on ``node`` in the counts."""
    if updated_pod.namespace != preemptor_pod.namespace or node is None:
        return
    if not node_labels_match_spread_constraints(node.labels, state.constraints):
        return
    required_node_affinity = RequiredNodeAffinity(preemptor_pod)
    for index, constraint in enumerate(state.constraints):
        if not constraint.selector.matches(updated_pod.labels):
            continue
        if not constraint.match_node_inclusion_policies(
            preemptor_pod, node, required_node_affinity
        ):
            continue
        value = node.labels[constraint.topology_key]
        counts = state.tp_value_to_match_num[index]
        counts[value] = counts.get(value, 0) + delta
        state.critical_paths[index].update(value, counts[value])


def filter_node(state: PreFilterState, pod: Pod, node: Node) -> Status | None:
    """Rejects the node if placing the pod there breaks a constraint's maxSkew."""
    for index, constraint in enumerate(state.constraints):
        tp_value = node.labels.get(constraint.topology_key)
        if tp_value is None:
            return new_status(Code.UnschedulableAndUnresolvable, ERR_REASON_NODE_LABEL_NOT_MATCH)
        # 'existing matching num' + 'if self-match (1 or 0)' - 'global minimum' <= 'maxSkew'
        min_match_num = state.min_match_num(index, constraint.min_domains)
        self_match_num = 1 if constraint.selector.matches(pod.labels) else 0
        match_num = state.tp_value_to_match_num[index].get(tp_value, 0)
        if match_num + self_match_num - min_match_num > constraint.max_skew:
            return new_status(Code.Unschedulable, ERR_REASON_CONSTRAINTS_NOT_MATCH)
    return None
