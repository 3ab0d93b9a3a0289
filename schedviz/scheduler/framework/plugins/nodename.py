"""NodeName: a pod that names its node in ``spec.nodeName`` fits only that node.

Mirrors pkg/scheduler/framework/plugins/nodename/node_name.go, with queueing hints enabled (the
default since v1.34): only a node being added can make the pod schedulable again.
"""

from __future__ import annotations

import numpy as np

from schedviz.kube.objects import Node, Pod
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
from schedviz.scheduler.framework.plugins.names import NODE_NAME
from schedviz.scheduler.framework.types import (
    ActionType,
    ClusterEvent,
    ClusterEventWithHint,
    EventResource,
    NodeInfo,
    QueueingHint,
)

NAME = NODE_NAME

ERR_REASON = "node(s) didn't match the requested node name"


def fits(pod: Pod, node: Node) -> bool:
    return not pod.node_name or pod.node_name == node.name


class NodeName(NodeOnlyFilterPlugin, EnqueueExtensions):
    # Filter reads the node object and the cycle state only (interface.NodeOnlyFilterPlugin).
    filter_reads_node_only = True

    def name(self) -> str:
        return NAME

    def events_to_register(self) -> list[ClusterEventWithHint]:
        return [
            ClusterEventWithHint(
                ClusterEvent(EventResource.Node, ActionType.Add), self.is_schedulable_after_node_add
            )
        ]

    def is_schedulable_after_node_add(
        self, pod: Pod, old_obj: object, new_obj: object
    ) -> QueueingHint:
        if not isinstance(new_obj, Node) or (old_obj is not None and not isinstance(old_obj, Node)):
            return QueueingHint.Queue
        if not fits(pod, new_obj):
            return QueueingHint.QueueSkip
        return QueueingHint.Queue

    def filter_columns(
        self, state: CycleState, pod: Pod, columns: NodeColumns, rows: IntArray
    ) -> IntArray | None:
        """Every node passes for a pod naming none; otherwise the node it names passes and the
        others (class 1) fail alike."""
        if not pod.node_name:
            return np.zeros(len(rows), dtype=np.int64)
        row = columns.index.get(pod.node_name, -1)
        return np.not_equal(rows, row).astype(np.int64)

    def filter(self, state: CycleState, pod: Pod, node_info: NodeInfo) -> Status | None:
        assert node_info.node is not None
        if not fits(pod, node_info.node):
            return new_status(Code.UnschedulableAndUnresolvable, ERR_REASON)
        return None


def new(args: object | None, handle: Handle) -> NodeName:
    return NodeName()
