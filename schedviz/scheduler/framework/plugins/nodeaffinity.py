"""NodeAffinity: the pod's nodeSelector and required node affinity filter nodes, its preferred
terms score them; the plugin's ``addedAffinity`` applies to every pod of the profile.

Mirrors pkg/scheduler/framework/plugins/nodeaffinity/node_affinity.go, with queueing hints enabled
(the default since v1.34). Not in upstream: ``filter_columns``, the column-wise Filter
(backend/cache/columns.py). Where Go tells a nil list from an empty one (``nodeSelector``,
``preferredDuringScheduling...``), both mean "not set" here, as the decoded objects cannot tell
them apart.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from schedviz.kube.nodeaffinity import (
    OBJECT_NAME_FIELD,
    OP_IN,
    NodeSelectorMatcher,
    PreferredSchedulingTerms,
    RequiredNodeAffinity,
    aggregate_message,
)
from schedviz.kube.objects import Node, NodeSelector, Pod
from schedviz.scheduler.apis.config.types_pluginargs import NodeAffinityArgs
from schedviz.scheduler.backend.cache.columns import IntArray, NodeColumns
from schedviz.scheduler.framework.cycle_state import CycleState, StateNotFoundError
from schedviz.scheduler.framework.interface import (
    MAX_NODE_SCORE,
    Code,
    EnqueueExtensions,
    Handle,
    NodeOnlyFilterPlugin,
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
from schedviz.scheduler.framework.plugins.helper.normalize_score import default_normalize_score
from schedviz.scheduler.framework.plugins.names import NODE_AFFINITY
from schedviz.scheduler.framework.types import (
    ActionType,
    ClusterEvent,
    ClusterEventWithHint,
    EventResource,
    NodeInfo,
    QueueingHint,
)

NAME = NODE_AFFINITY
PRE_FILTER_STATE_KEY = "PreFilter" + NAME
PRE_SCORE_STATE_KEY = "PreScore" + NAME

ERR_REASON_POD = "node(s) didn't match Pod's node affinity/selector"
ERR_REASON_ENFORCED = "node(s) didn't match scheduler-enforced node affinity"
ERR_REASON_CONFLICT = "pod affinity terms conflict"


@dataclass(frozen=True, slots=True)
class _PreFilterState:
    required_node_selector_and_affinity: RequiredNodeAffinity

    def clone(self) -> _PreFilterState:
        # Adding or removing pods does not change the pod's own affinity.
        return self


@dataclass(frozen=True, slots=True)
class _PreScoreState:
    preferred_node_affinity: PreferredSchedulingTerms | None

    def clone(self) -> _PreScoreState:
        return self


def _required_node_selector(pod: Pod) -> NodeSelector | None:
    affinity = pod.affinity
    if affinity is None or affinity.node_affinity is None:
        return None
    return affinity.node_affinity.required


def _pod_preferred_node_affinity(pod: Pod) -> PreferredSchedulingTerms | None:
    """The pod's preferred terms, None when it has none; raises ValueError when one is invalid."""
    affinity = pod.affinity
    if affinity is None or affinity.node_affinity is None or not affinity.node_affinity.preferred:
        return None
    terms = PreferredSchedulingTerms(affinity.node_affinity.preferred)
    if terms.errors:
        raise ValueError(aggregate_message(terms.errors))
    return terms


def _node_names_of(required: NodeSelector) -> frozenset[str] | None:
    """The node names the required terms are limited to by ``metadata.name In``, None if any."""
    node_names: set[str] = set()
    for term in required.node_selector_terms:
        term_node_names: set[str] | None = None
        for requirement in term.match_fields:
            if requirement.key == OBJECT_NAME_FIELD and requirement.operator == OP_IN:
                # Requirements of a term are ANDed.
                values = set(requirement.values)
                term_node_names = values if term_node_names is None else term_node_names & values
        if term_node_names is None:
            # Terms are ORed: a term without a name requirement lets every node through.
            return None
        node_names |= term_node_names
    return frozenset(node_names)


class NodeAffinity(
    PreFilterPlugin,
    NodeOnlyFilterPlugin,
    PreScorePlugin,
    ScorePlugin,
    ScoreExtensions,
    EnqueueExtensions,
):
    # Filter reads the node object and the cycle state only (interface.NodeOnlyFilterPlugin).
    filter_reads_node_only = True

    def __init__(
        self,
        added_node_selector: NodeSelectorMatcher | None = None,
        added_pref_sched_terms: PreferredSchedulingTerms | None = None,
    ) -> None:
        self._added_node_selector = added_node_selector
        self._added_pref_sched_terms = added_pref_sched_terms

    def name(self) -> str:
        return NAME

    def events_to_register(self) -> list[ClusterEventWithHint]:
        return [
            ClusterEventWithHint(
                ClusterEvent(EventResource.Node, ActionType.Add | ActionType.UpdateNodeLabel),
                self.is_schedulable_after_node_change,
            )
        ]

    def is_schedulable_after_node_change(
        self, pod: Pod, old_obj: object, new_obj: object
    ) -> QueueingHint:
        if not isinstance(new_obj, Node) or (old_obj is not None and not isinstance(old_obj, Node)):
            return QueueingHint.Queue
        if self._added_node_selector is not None and not self._added_node_selector.match(new_obj):
            return QueueingHint.QueueSkip
        required = RequiredNodeAffinity(pod)
        if not required.match(new_obj):
            return QueueingHint.QueueSkip
        if old_obj is None:
            return QueueingHint.Queue
        # An update matters only when the node did not match before.
        return QueueingHint.QueueSkip if required.match(old_obj) else QueueingHint.Queue

    def pre_filter(
        self, state: CycleState, pod: Pod, nodes: Sequence[NodeInfo]
    ) -> tuple[PreFilterResult | None, Status | None]:
        required = _required_node_selector(pod)
        if required is None and self._added_node_selector is None and not pod.node_selector:
            return None, Status(Code.Skip)
        state.write(PRE_FILTER_STATE_KEY, _PreFilterState(RequiredNodeAffinity(pod)))
        if required is None or not required.node_selector_terms:
            return None, None
        node_names = _node_names_of(required)
        if node_names is None:
            return None, None
        if not node_names:
            # Every term names nodes, but no node satisfies all of a term's names.
            return None, new_status(Code.UnschedulableAndUnresolvable, ERR_REASON_CONFLICT)
        return PreFilterResult(node_names), None

    def pre_filter_extensions(self) -> PreFilterExtensions | None:
        return None

    def filter(self, state: CycleState, pod: Pod, node_info: NodeInfo) -> Status | None:
        node = node_info.node
        assert node is not None
        if self._added_node_selector is not None and not self._added_node_selector.match(node):
            return new_status(Code.UnschedulableAndUnresolvable, ERR_REASON_ENFORCED)
        try:
            required = state.read_as(
                PRE_FILTER_STATE_KEY, _PreFilterState
            ).required_node_selector_and_affinity
        except (StateNotFoundError, TypeError):
            # PreFilter is disabled: compute it here.
            required = RequiredNodeAffinity(pod)
        if not required.match(node):
            return new_status(Code.UnschedulableAndUnresolvable, ERR_REASON_POD)
        return None

    def filter_columns(
        self, state: CycleState, pod: Pod, columns: NodeColumns, rows: IntArray
    ) -> IntArray | None:
        """Nodes pass or fail by the values of the label keys the required terms, the
        nodeSelector and the scheduler-enforced affinity read: ``filter`` is asked about one
        node of each distinct combination of those values, and a failing combination is a
        class of its own (nodes alike there get the same status). None when a term reads
        the node's fields (``matchFields``), which labels alone do not decide."""
        try:
            required = state.read_as(
                PRE_FILTER_STATE_KEY, _PreFilterState
            ).required_node_selector_and_affinity
        except (StateNotFoundError, TypeError):
            return None
        keys = required.label_keys()
        if keys is not None and self._added_node_selector is not None:
            added_keys = self._added_node_selector.label_keys()
            keys = None if added_keys is None else keys | added_keys
        if keys is None:
            return None
        combinations: IntArray
        if not keys:
            combinations = np.zeros(len(rows), dtype=np.int64)
        elif len(keys) == 1:
            (key,) = keys
            _, combinations = np.unique(columns.label_values(key)[0][rows], return_inverse=True)
        else:
            values = np.stack([columns.label_values(key)[0][rows] for key in sorted(keys)])
            _, combinations = np.unique(values, axis=1, return_inverse=True)
            combinations = combinations.reshape(-1)
        _, firsts = np.unique(combinations, return_index=True)
        infos = columns.infos
        classes = np.zeros(len(firsts), dtype=np.int64)  # FILTER_PASSES
        for combination, first in enumerate(firsts.tolist()):
            if self.filter(state, pod, infos[int(rows[first])]) is not None:
                classes[combination] = combination + 1
        result: IntArray = classes[combinations]
        return result

    def pre_score(self, state: CycleState, pod: Pod, nodes: Sequence[NodeInfo]) -> Status | None:
        try:
            preferred = _pod_preferred_node_affinity(pod)
        except ValueError as error:
            return as_status(error)
        if preferred is None and self._added_pref_sched_terms is None:
            return Status(Code.Skip)
        state.write(PRE_SCORE_STATE_KEY, _PreScoreState(preferred))
        return None

    def score(self, state: CycleState, pod: Pod, node_info: NodeInfo) -> tuple[int, Status | None]:
        node = node_info.node
        assert node is not None
        count = 0
        if self._added_pref_sched_terms is not None:
            count += self._added_pref_sched_terms.score(node)
        try:
            preferred = state.read_as(PRE_SCORE_STATE_KEY, _PreScoreState).preferred_node_affinity
        except (StateNotFoundError, TypeError):
            # PreScore is disabled: compute it here.
            try:
                preferred = _pod_preferred_node_affinity(pod)
            except ValueError as error:
                return 0, as_status(error)
        if preferred is not None:
            count += preferred.score(node)
        return count, None

    def score_extensions(self) -> ScoreExtensions | None:
        return self

    def normalize_score(
        self, state: CycleState, pod: Pod, scores: list[NodeScore]
    ) -> Status | None:
        return default_normalize_score(MAX_NODE_SCORE, False, scores)


def new(args: object | None, handle: Handle) -> NodeAffinity:
    """Raises TypeError for arguments of another type, ValueError for an invalid addedAffinity."""
    if args is None:
        args = NodeAffinityArgs()
    if not isinstance(args, NodeAffinityArgs):
        raise TypeError(f"args are not of type NodeAffinityArgs, got {type(args).__name__}")
    added = args.added_affinity
    if added is None:
        return NodeAffinity()
    added_node_selector = None
    if added.required is not None:
        added_node_selector = NodeSelectorMatcher(added.required)
        if added_node_selector.errors:
            raise ValueError(
                "parsing addedAffinity.requiredDuringSchedulingIgnoredDuringExecution: "
                + aggregate_message(added_node_selector.errors)
            )
    added_pref_sched_terms = None
    if added.preferred:
        added_pref_sched_terms = PreferredSchedulingTerms(added.preferred)
        if added_pref_sched_terms.errors:
            raise ValueError(
                "parsing addedAffinity.preferredDuringSchedulingIgnoredDuringExecution: "
                + aggregate_message(added_pref_sched_terms.errors)
            )
    return NodeAffinity(added_node_selector, added_pref_sched_terms)
