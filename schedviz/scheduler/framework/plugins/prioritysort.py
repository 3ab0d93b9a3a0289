"""PrioritySort: the default order of the active queue.

Mirrors pkg/scheduler/framework/plugins/queuesort/priority_sort.go: higher priority first, then the
pod that entered the queue earlier.
"""

from __future__ import annotations

from schedviz.scheduler.framework.interface import Handle, QueueSortPlugin
from schedviz.scheduler.framework.plugins.names import PRIORITY_SORT
from schedviz.scheduler.framework.types import QueuedPodInfo

NAME = PRIORITY_SORT


class PrioritySort(QueueSortPlugin):
    def name(self) -> str:
        return NAME

    def less(self, a: QueuedPodInfo, b: QueuedPodInfo) -> bool:
        """Whether ``a`` goes before ``b``."""
        # Pod.effective_priority (an unset priority is 0), read without the two properties: the
        # queue's heap compares pods here dozens of times a cycle.
        priority_a = a.pod_info.pod.priority or 0
        priority_b = b.pod_info.pod.priority or 0
        return priority_a > priority_b or (priority_a == priority_b and a.timestamp < b.timestamp)


def new(args: object | None, handle: Handle) -> PrioritySort:
    return PrioritySort()
