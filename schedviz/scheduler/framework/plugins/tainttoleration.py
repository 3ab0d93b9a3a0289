"""TaintToleration: NoSchedule and NoExecute taints keep pods without a toleration off a node;
PreferNoSchedule taints lower its score.

Mirrors pkg/scheduler/framework/plugins/tainttoleration/taint_toleration.go, with queueing hints
enabled (the default since v1.34) and the alpha TaintTolerationComparisonOperators gate off. Pods
are told apart by ``namespace/name`` where upstream compares UIDs.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass

import numpy as np

from schedviz.kube.objects import TAINT_EFFECT_PREFER_NO_SCHEDULE, Node, Pod, Taint, Toleration
from schedviz.kube.taints import find_matching_untolerated_taint, tolerations_tolerate_taint
from schedviz.scheduler.backend.cache.columns import IntArray, NodeColumns, distinct
from schedviz.scheduler.framework.cycle_state import CycleState, StateNotFoundError
from schedviz.scheduler.framework.interface import (
    MAX_NODE_SCORE,
    Code,
    EnqueueExtensions,
    Handle,
    NodeOnlyFilterPlugin,
    NodeScore,
    NodeScorer,
    NodeScorerPlugin,
    PreScorePlugin,
    ScoreExtensions,
    Status,
    as_status,
    new_status,
)
from schedviz.scheduler.framework.plugins.helper.normalize_score import (
    default_normalize_score,
    default_normalize_score_column,
)
from schedviz.scheduler.framework.plugins.helper.taint import do_not_schedule_taints_filter
from schedviz.scheduler.framework.plugins.names import TAINT_TOLERATION
from schedviz.scheduler.framework.types import (
    ActionType,
    ClusterEvent,
    ClusterEventWithHint,
    EventResource,
    NodeInfo,
    QueueingHint,
)

NAME = TAINT_TOLERATION
PRE_SCORE_STATE_KEY = "PreScore" + NAME

ERR_REASON_NOT_MATCH = "node(s) had taints that the pod didn't tolerate"


def untolerated_taint_reason(taint: Taint) -> str:
    """The Filter reason naming the first untolerated taint."""
    return f"node(s) had untolerated taint {{{taint.key}: {taint.value}}}"


def _untolerated_taint(node: Node, pod: Pod) -> Taint | None:
    return find_matching_untolerated_taint(
        node.taints, pod.tolerations, do_not_schedule_taints_filter
    )


@dataclass(frozen=True, slots=True)
class _PreScoreState:
    tolerations_prefer_no_schedule: tuple[Toleration, ...]

    def clone(self) -> _PreScoreState:
        return self


def _tolerations_prefer_no_schedule(tolerations: Iterable[Toleration]) -> tuple[Toleration, ...]:
    """Tolerations of PreferNoSchedule, or of every effect (an empty effect)."""
    return tuple(
        t for t in tolerations if not t.effect or t.effect == TAINT_EFFECT_PREFER_NO_SCHEDULE
    )


def _count_intolerable_taints_prefer_no_schedule(
    taints: Iterable[Taint], tolerations: Sequence[Toleration]
) -> int:
    return sum(
        1
        for taint in taints
        if taint.effect == TAINT_EFFECT_PREFER_NO_SCHEDULE
        and not tolerations_tolerate_taint(tolerations, taint)
    )


class TaintToleration(
    NodeOnlyFilterPlugin, PreScorePlugin, NodeScorerPlugin, ScoreExtensions, EnqueueExtensions
):
    # Filter reads the node object and the cycle state only (interface.NodeOnlyFilterPlugin).
    filter_reads_node_only = True

    def name(self) -> str:
        return NAME

    def events_to_register(self) -> list[ClusterEventWithHint]:
        return [
            ClusterEventWithHint(
                ClusterEvent(EventResource.Node, ActionType.Add | ActionType.UpdateNodeTaint),
                self.is_schedulable_after_node_change,
            ),
            ClusterEventWithHint(
                ClusterEvent(EventResource.Pod, ActionType.UpdatePodToleration),
                self.is_schedulable_after_pod_change,
            ),
        ]

    def is_schedulable_after_node_change(
        self, pod: Pod, old_obj: object, new_obj: object
    ) -> QueueingHint:
        if not isinstance(new_obj, Node):
            return QueueingHint.Queue
        was_untolerated = True
        if old_obj is not None:
            if not isinstance(old_obj, Node):
                return QueueingHint.Queue
            was_untolerated = _untolerated_taint(old_obj, pod) is not None
        is_untolerated = _untolerated_taint(new_obj, pod) is not None
        if was_untolerated and not is_untolerated:
            return QueueingHint.Queue
        return QueueingHint.QueueSkip

    def is_schedulable_after_pod_change(
        self, pod: Pod, old_obj: object, new_obj: object
    ) -> QueueingHint:
        if not isinstance(new_obj, Pod) or not isinstance(old_obj, Pod):
            return QueueingHint.Queue
        # Tolerations can be added but not changed or removed: a longer list is a new toleration.
        if new_obj.key == pod.key and len(old_obj.tolerations) != len(new_obj.tolerations):
            return QueueingHint.Queue
        return QueueingHint.QueueSkip

    def filter(self, state: CycleState, pod: Pod, node_info: NodeInfo) -> Status | None:
        assert node_info.node is not None
        taint = _untolerated_taint(node_info.node, pod)
        if taint is None:
            return None
        return new_status(Code.UnschedulableAndUnresolvable, untolerated_taint_reason(taint))

    def filter_columns(
        self, state: CycleState, pod: Pod, columns: NodeColumns, rows: IntArray
    ) -> IntArray | None:
        """Nodes pass or fail by their taint list (worked out once per distinct list): a
        failing node's class is its taint list's group (the status names the list's first
        untolerated taint)."""
        groups = columns.taint_group[rows]
        taints_of = columns.taints_of_group()
        classes = np.zeros(len(taints_of), dtype=np.int64)  # FILTER_PASSES
        for group in distinct(groups):
            untolerated = find_matching_untolerated_taint(
                taints_of[group], pod.tolerations, do_not_schedule_taints_filter
            )
            if untolerated is not None:
                classes[group] = group  # group 0 has no taints: it never fails
        result: IntArray = classes[groups]
        return result

    def pre_score(self, state: CycleState, pod: Pod, nodes: Sequence[NodeInfo]) -> Status | None:
        state.write(
            PRE_SCORE_STATE_KEY,
            _PreScoreState(_tolerations_prefer_no_schedule(pod.tolerations)),
        )
        return None

    def score(self, state: CycleState, pod: Pod, node_info: NodeInfo) -> tuple[int, Status | None]:
        score_node = self.node_scorer(state, pod)
        if isinstance(score_node, Status):
            return 0, score_node
        return score_node(node_info), None

    def node_scorer(self, state: CycleState, pod: Pod) -> NodeScorer | Status:
        try:
            prescored = state.read_as(PRE_SCORE_STATE_KEY, _PreScoreState)
        except StateNotFoundError:
            return as_status(f'failed to read "{PRE_SCORE_STATE_KEY}" from cycleState: not found')
        except TypeError as error:
            return as_status(error)
        tolerations = prescored.tolerations_prefer_no_schedule

        def score_node(node_info: NodeInfo) -> int:
            assert node_info.node is not None
            taints = node_info.node.taints
            if not taints:
                return 0
            return _count_intolerable_taints_prefer_no_schedule(taints, tolerations)

        return score_node

    def score_columns(
        self, state: CycleState, pod: Pod, columns: NodeColumns, rows: IntArray
    ) -> IntArray | None:
        """``score`` of many nodes, counted once per distinct taint list."""
        try:
            prescored = state.read_as(PRE_SCORE_STATE_KEY, _PreScoreState)
        except (KeyError, TypeError):
            return None  # score reports it
        groups = columns.taint_group[rows]
        taints_of = columns.taints_of_group()
        counts = np.zeros(len(taints_of), dtype=np.int64)
        for group in distinct(groups):
            counts[group] = _count_intolerable_taints_prefer_no_schedule(
                taints_of[group], prescored.tolerations_prefer_no_schedule
            )
        return counts[groups]

    def score_extensions(self) -> ScoreExtensions | None:
        return self

    def normalize_score(
        self, state: CycleState, pod: Pod, scores: list[NodeScore]
    ) -> Status | None:
        return default_normalize_score(MAX_NODE_SCORE, True, scores)

    def normalize_score_column(self, state: CycleState, pod: Pod, scores: list[int]) -> list[int]:
        return default_normalize_score_column(MAX_NODE_SCORE, True, scores)


def new(args: object | None, handle: Handle) -> TaintToleration:
    return TaintToleration()
