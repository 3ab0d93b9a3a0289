"""Ports pkg/scheduler/framework/plugins/queuesort/priority_sort_test.go."""

from __future__ import annotations

import pytest

from schedviz.scheduler.framework.interface import QueueSortPlugin
from schedviz.scheduler.framework.plugins.prioritysort import NAME, PrioritySort, new
from schedviz.scheduler.framework.types import PodInfo, QueuedPodInfo
from schedviz.scheduler.testing.framework_helpers import FakeHandle
from schedviz.scheduler.testing.wrappers import make_pod

LOW, HIGH = 10, 100
T1, T2 = 1000.0, 1001.0


def queued(name: str, priority: int, timestamp: float = 0.0) -> QueuedPodInfo:
    pod = make_pod().name(name).priority(priority).obj()
    return QueuedPodInfo(PodInfo(pod), timestamp=timestamp)


@pytest.mark.parametrize(
    ("p1", "p2", "expected"),
    [
        pytest.param(queued("p1", LOW), queued("p2", HIGH), False, id="p1 lower priority"),
        pytest.param(queued("p1", HIGH), queued("p2", LOW), True, id="p1 higher priority"),
        pytest.param(
            queued("p1", HIGH, T1), queued("p2", HIGH, T2), True, id="equal priority, p1 earlier"
        ),
        pytest.param(
            queued("p1", HIGH, T2), queued("p2", HIGH, T1), False, id="equal priority, p2 earlier"
        ),
    ],
)
def test_less(p1: QueuedPodInfo, p2: QueuedPodInfo, expected: bool) -> None:
    assert PrioritySort().less(p1, p2) is expected


def test_a_pod_without_priority_counts_as_priority_zero() -> None:
    unset = QueuedPodInfo(PodInfo(make_pod().name("unset").obj()), timestamp=T2)
    assert PrioritySort().less(unset, queued("negative", -1, T1))


def test_new_builds_a_queue_sort_plugin() -> None:
    plugin = new(None, FakeHandle())
    assert isinstance(plugin, QueueSortPlugin)
    assert plugin.name() == NAME == "PrioritySort"
