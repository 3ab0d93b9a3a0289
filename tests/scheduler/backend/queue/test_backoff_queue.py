"""Ports of pkg/scheduler/backend/queue/backoff_queue_test.go (counts as of v1.34)."""

from __future__ import annotations

import pytest

from schedviz.scheduler.backend.queue.backoff_queue import NO_BACKOFF, BackoffQueue
from schedviz.scheduler.clock import VirtualClock
from schedviz.scheduler.framework.plugins.prioritysort import PrioritySort
from schedviz.scheduler.framework.types import PodInfo, QueuedPodInfo
from schedviz.scheduler.testing.wrappers import make_pod

NOW = 1_000_000.0  # aligned with the 1-second ordering window


def new_backoff_queue(
    clock: VirtualClock,
    initial: float = 1.0,
    maximum: float = 10.0,
    pop_from_backoff_q: bool = True,
) -> BackoffQueue:
    return BackoffQueue(
        clock=clock,
        pod_initial_backoff=initial,
        pod_max_backoff=maximum,
        active_q_less=PrioritySort().less,
        pop_from_backoff_q=pop_from_backoff_q,
    )


def queued(
    name: str,
    timestamp: float,
    *,
    priority: int = 0,
    plugins: tuple[str, ...] = (),
    unschedulable_count: int = 0,
    consecutive_errors_count: int = 0,
) -> QueuedPodInfo:
    return QueuedPodInfo(
        pod_info=PodInfo(make_pod().name(name).priority(priority).obj()),
        timestamp=timestamp,
        attempts=1,
        unschedulable_count=unschedulable_count,
        consecutive_errors_count=consecutive_errors_count,
        unschedulable_plugins=set(plugins),
    )


@pytest.mark.parametrize(
    ("initial", "maximum", "count", "want"),
    [
        pytest.param(1e-9, 32e-9, 0, 0.0, id="no backoff"),
        pytest.param(1e-9, 32e-9, 16, 32e-9, id="normal"),
        pytest.param(1e-9, (2**31 - 1) * 1e-9, 32, (2**31 - 1) * 1e-9, id="overflow_32bit"),
        pytest.param(1e-9, (2**63 - 1) * 1e-9, 64, (2**63 - 1) * 1e-9, id="overflow_64bit"),
        pytest.param(1.0, 10.0, 3, 4.0, id="doubles"),
        pytest.param(1.0, 10.0, 1000, 10.0, id="huge count is capped"),
    ],
)
def test_calculate_backoff_duration(
    initial: float, maximum: float, count: int, want: float
) -> None:
    bq = new_backoff_queue(VirtualClock(NOW), initial, maximum)
    assert bq.calculate_backoff_duration(count) == want


@pytest.mark.parametrize(
    ("unschedulable", "errors", "cached", "maximum", "want"),
    [
        pytest.param(0, 0, None, 32.0, NO_BACKOFF, id="no backoff without a failed attempt"),
        pytest.param(1, 0, NOW + 0.5, 32.0, NOW + 0.5, id="returned from the cache"),
        pytest.param(3, 0, None, 32.0, NOW + 4, id="by unschedulable count"),
        pytest.param(5, 2, None, 32.0, NOW + 2, id="by consecutive errors count"),
        pytest.param(5, 0, None, 0.0, NO_BACKOFF, id="max 0 disables backoff"),
    ],
)
def test_get_backoff_time(
    unschedulable: int, errors: int, cached: float | None, maximum: float, want: float
) -> None:
    bq = new_backoff_queue(VirtualClock(NOW), 1.0, maximum)
    pinfo = queued("p", NOW, unschedulable_count=unschedulable, consecutive_errors_count=errors)
    pinfo.backoff_expiration = cached
    assert bq.get_backoff_time(pinfo) == want


def _pods(clock: VirtualClock) -> dict[str, QueuedPodInfo]:
    now = clock.now()
    return {
        "pod0": queued("pod0", now - 2, plugins=("plugin",), unschedulable_count=1),
        "pod1": queued("pod1", now + 1, plugins=("plugin",), unschedulable_count=1),
        "pod2": queued("pod2", now - 2, consecutive_errors_count=1),
        "pod3": queued("pod3", now + 1, consecutive_errors_count=1),
    }


@pytest.mark.parametrize("pop_from_backoff_q", [True, False])
@pytest.mark.parametrize(
    ("in_backoff", "want"),
    [
        pytest.param([], [], id="both queues empty"),
        pytest.param(["pod0", "pod1"], ["pod0"], id="only backoffQ"),
        pytest.param(["pod2", "pod3"], ["pod2"], id="only errorBackoffQ"),
        pytest.param(["pod0", "pod1", "pod2", "pod3"], ["pod0", "pod2"], id="both, some done"),
        pytest.param(["pod0", "pod2"], ["pod0", "pod2"], id="both, all done"),
        pytest.param(["pod1", "pod3"], [], id="both, none done"),
    ],
)
def test_pop_all_backoff_completed(
    in_backoff: list[str], want: list[str], pop_from_backoff_q: bool
) -> None:
    clock = VirtualClock(NOW + 0.4)
    bq = new_backoff_queue(clock, pop_from_backoff_q=pop_from_backoff_q)
    pods = _pods(clock)
    for name in in_backoff:
        bq.add(pods[name])
    got = [p.pod.name for p in bq.pop_all_backoff_completed()]
    assert got == want
    assert len(bq) == len(in_backoff) - len(want)


@pytest.mark.parametrize(
    ("pop_from_backoff_q", "want"),
    [
        pytest.param(True, ["pod5", "pod4", "pod2", "pod3"], id="same window ordered by priority"),
        pytest.param(
            False, ["pod5", "pod4", "pod3", "pod2"], id="priority ignored without windows"
        ),
    ],
)
def test_backoff_queue_ordering(pop_from_backoff_q: bool, want: list[str]) -> None:
    clock = VirtualClock(NOW)
    bq = new_backoff_queue(clock, pop_from_backoff_q=pop_from_backoff_q)
    for name, offset, priority in [
        ("pod0", 0.0, 1),
        ("pod1", -1.0, 1),
        ("pod2", -2.0 + 0.001, 2),
        ("pod3", -2.0, 1),
        ("pod4", -2.0, 2),
        ("pod5", -3.0, 1),
    ]:
        bq.add(
            queued(
                name, NOW + offset, priority=priority, plugins=("plugin",), unschedulable_count=1
            )
        )
    assert [p.pod.name for p in bq.pop_all_backoff_completed()] == want


def test_error_pods_and_rejected_pods_never_share_a_heap() -> None:
    bq = new_backoff_queue(VirtualClock(NOW))
    pinfo = queued("p", NOW, consecutive_errors_count=1)
    bq.add(pinfo)
    assert bq.len_backoff() == 0
    pinfo.unschedulable_plugins.add("plugin")
    bq.add(pinfo)
    assert bq.len_backoff() == 1
    assert len(bq) == 1


@pytest.mark.parametrize(
    ("added", "want"),
    [
        pytest.param(
            [("pod0", 3, 1), ("pod1", 1, 1), ("pod2", 2, 1)],
            ["pod1", "pod2", "pod0"],
            id="one priority: by the order the timestamps were taken, not arrival",
        ),
        pytest.param(
            [("pod0", 1, 1), ("pod1", 2, 5), ("pod2", 3, 1)],
            ["pod1", "pod0", "pod2"],
            id="priority first, then the order the timestamps were taken",
        ),
    ],
)
def test_ties_of_window_priority_and_timestamp_leave_in_stamp_order(
    added: list[tuple[str, int, int]], want: list[str]
) -> None:
    # Upstream's timestamps are nanoseconds, never equal: lessBackoffCompletedWithPriority ends
    # with PrioritySort's timestamp comparison. In virtual time the timestamps are equal and
    # the stamp (when the queue took each timestamp) stands for the nanoseconds.
    clock = VirtualClock(NOW)
    bq = new_backoff_queue(clock)
    for name, stamp, priority in added:
        pinfo = queued(
            name, NOW - 3.0, priority=priority, plugins=("plugin",), unschedulable_count=1
        )
        pinfo.stamp = stamp
        bq.add(pinfo)
    assert [p.pod.name for p, _ in bq.ordered()] == want
    assert [p.pod.name for p in bq.pop_all_backoff_completed()] == want
