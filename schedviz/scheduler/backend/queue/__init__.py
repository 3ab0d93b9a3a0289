"""The scheduling queue (pkg/scheduler/backend/queue)."""

from schedviz.scheduler.backend.queue.nominator import Nominator, PodRef
from schedviz.scheduler.backend.queue.scheduling_queue import (
    PriorityQueue,
    QueueingHintFunction,
    QueueingStrategy,
)

__all__ = [
    "Nominator",
    "PodRef",
    "PriorityQueue",
    "QueueingHintFunction",
    "QueueingStrategy",
]
