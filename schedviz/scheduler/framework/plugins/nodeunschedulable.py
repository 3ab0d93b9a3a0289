"""NodeUnschedulable: cordoned nodes (``spec.unschedulable``) only take pods that tolerate
``node.kubernetes.io/unschedulable:NoSchedule``.

Mirrors pkg/scheduler/framework/plugins/nodeunschedulable/node_unschedulable.go, with queueing
hints enabled (the default since v1.34). Pods are told apart by ``namespace/name`` where upstream
compares UIDs.
"""

from __future__ import annotations

import numpy as np

from schedviz.kube.objects import (
    TAINT_EFFECT_NO_SCHEDULE,
    TAINT_NODE_UNSCHEDULABLE,
    Node,
    Pod,
    Taint,
)
from schedviz.kube.taints import tolerations_tolerate_taint
from schedviz.scheduler.backend.cache.columns import IntArray, NodeColumns
from schedviz.scheduler.framework.cycle_state import CycleState
from schedviz.scheduler.framework.interface import (
    Code,
    EnqueueExtensions,
    Handle,
    NodeOnlyFilterPlugin,
    Status,
    new_status,
)
from schedviz.scheduler.framework.plugins.names import NODE_UNSCHEDULABLE
from schedviz.scheduler.framework.types import (
    ActionType,
    ClusterEvent,
    ClusterEventWithHint,
    EventResource,
    NodeInfo,
    QueueingHint,
)

NAME = NODE_UNSCHEDULABLE

ERR_REASON_UNKNOWN_CONDITION = "node(s) had unknown conditions"
ERR_REASON_UNSCHEDULABLE = "node(s) were unschedulable"

_UNSCHEDULABLE_TAINT = Taint(key=TAINT_NODE_UNSCHEDULABLE, effect=TAINT_EFFECT_NO_SCHEDULE)


def tolerates_unschedulable(pod: Pod) -> bool:
    """A pod tolerating the unschedulable taint also tolerates ``spec.unschedulable``."""
    return tolerations_tolerate_taint(pod.tolerations, _UNSCHEDULABLE_TAINT)


class NodeUnschedulable(NodeOnlyFilterPlugin, EnqueueExtensions):
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
                self.is_schedulable_after_pod_toleration_change,
            ),
        ]

    def is_schedulable_after_pod_toleration_change(
        self, pod: Pod, old_obj: object, new_obj: object
    ) -> QueueingHint:
        if not isinstance(new_obj, Pod) or (old_obj is not None and not isinstance(old_obj, Pod)):
            return QueueingHint.Queue
        # Tolerations can be added but not changed or removed, and the rejected pod did not
        # tolerate the taint before: only the new tolerations matter.
        if new_obj.key == pod.key and tolerates_unschedulable(new_obj):
            return QueueingHint.Queue
        return QueueingHint.QueueSkip

    def is_schedulable_after_node_change(
        self, pod: Pod, old_obj: object, new_obj: object
    ) -> QueueingHint:
        if not isinstance(new_obj, Node):
            return QueueingHint.Queue
        if old_obj is None:
            added_schedulable = not new_obj.unschedulable
            return QueueingHint.Queue if added_schedulable else QueueingHint.QueueSkip
        if not isinstance(old_obj, Node):
            return QueueingHint.Queue
        became_schedulable = old_obj.unschedulable and not new_obj.unschedulable
        return QueueingHint.Queue if became_schedulable else QueueingHint.QueueSkip

    def filter_columns(
        self, state: CycleState, pod: Pod, columns: NodeColumns, rows: IntArray
    ) -> IntArray | None:
        """Every node passes for a pod tolerating unschedulable ones; otherwise the schedulable
        ones pass and the others (class 1) fail alike."""
        if tolerates_unschedulable(pod):
            return np.zeros(len(rows), dtype=np.int64)
        return columns.unschedulable[rows].astype(np.int64)

    def filter(self, state: CycleState, pod: Pod, node_info: NodeInfo) -> Status | None:
        node = node_info.node
        assert node is not None
        if not node.unschedulable or tolerates_unschedulable(pod):
            return None
        return new_status(Code.UnschedulableAndUnresolvable, ERR_REASON_UNSCHEDULABLE)


def new(args: object | None, handle: Handle) -> NodeUnschedulable:
    return NodeUnschedulable()
