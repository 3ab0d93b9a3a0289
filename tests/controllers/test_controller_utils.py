"""controller_utils: the ranking of pods to delete (replica_set_test.go TestGetPodsToDelete and
controller_utils_test.go's ActivePodsWithRanks cases), intstr scaling, readiness."""

from __future__ import annotations

import pytest

from schedviz.controllers.controller_utils import (
    POD_DELETION_COST_ANNOTATION,
    Times,
    is_pod_ready,
    pod_phase,
    pods_to_delete,
    scaled_value,
)
from schedviz.kube.objects import POD_PENDING, POD_RUNNING, Pod, PodCondition


def pod(
    name: str,
    node: str = "",
    phase: str = POD_PENDING,
    ready: bool | None = None,
    annotations: dict[str, str] | None = None,
) -> Pod:
    """A pod as a dump gives it: on its node, with its phase and Ready condition."""
    conditions = () if ready is None else (PodCondition("Ready", "True" if ready else "False"),)
    status: dict[str, object] = {"phase": phase}
    if conditions:
        status["conditions"] = [{"type": "Ready", "status": conditions[0].status}]
    return Pod(
        name=name,
        uid=name,
        node_name=node,
        phase=phase,
        conditions=conditions,
        annotations=annotations or {},
        manifest={"spec": {"nodeName": node} if node else {}, "status": status},
    )


UNSCHEDULED_PENDING = pod("unscheduled-pending-pod")
SCHEDULED_PENDING = pod("scheduled-pending-pod", "fake-node")
SCHEDULED_RUNNING_NOT_READY = pod(
    "scheduled-running-not-ready-pod", "fake-node", POD_RUNNING, False
)
READY_ON_NODE_1 = pod("scheduled-running-ready-pod-on-node-1", "fake-node-1", POD_RUNNING, True)
READY_ON_NODE_2 = pod("scheduled-running-ready-pod-on-node-2", "fake-node-2", POD_RUNNING, True)
VARIOUS = [
    SCHEDULED_RUNNING_NOT_READY,
    SCHEDULED_PENDING,
    UNSCHEDULED_PENDING,
    READY_ON_NODE_1,
    READY_ON_NODE_2,
]


@pytest.mark.parametrize(
    ("pods", "related", "diff", "expected"),
    [
        pytest.param([], None, 0, [], id="len(pods) = 0 (i.e., diff = 0 too)"),
        pytest.param(
            [SCHEDULED_RUNNING_NOT_READY, READY_ON_NODE_1],
            None,
            2,
            [SCHEDULED_RUNNING_NOT_READY, READY_ON_NODE_1],
            id="diff = len(pods)",
        ),
        pytest.param(
            [READY_ON_NODE_1, SCHEDULED_RUNNING_NOT_READY],
            None,
            1,
            [SCHEDULED_RUNNING_NOT_READY],
            id="diff < len(pods)",
        ),
        pytest.param(VARIOUS, None, 5, VARIOUS, id="various pod phases and conditions, diff = len"),
        pytest.param(VARIOUS, [], 5, VARIOUS, id="diff = len(pods), relatedPods empty"),
        pytest.param(
            [SCHEDULED_PENDING, UNSCHEDULED_PENDING],
            None,
            1,
            [UNSCHEDULED_PENDING],
            id="scheduled vs unscheduled, diff < len(pods)",
        ),
        pytest.param(
            [READY_ON_NODE_1, SCHEDULED_RUNNING_NOT_READY, SCHEDULED_RUNNING_NOT_READY],
            None,
            2,
            [SCHEDULED_RUNNING_NOT_READY, SCHEDULED_RUNNING_NOT_READY],
            id="ready vs not-ready, diff < len(pods)",
        ),
        pytest.param(
            [READY_ON_NODE_1, READY_ON_NODE_2],
            [READY_ON_NODE_1, READY_ON_NODE_2, READY_ON_NODE_2],
            1,
            [READY_ON_NODE_2],
            id="ready and colocated with another ready pod vs not colocated",
        ),
        pytest.param(
            [SCHEDULED_PENDING, SCHEDULED_RUNNING_NOT_READY],
            None,
            1,
            [SCHEDULED_PENDING],
            id="pending vs running, diff < len(pods)",
        ),
        pytest.param(
            [
                READY_ON_NODE_1,
                READY_ON_NODE_2,
                SCHEDULED_RUNNING_NOT_READY,
                SCHEDULED_PENDING,
                UNSCHEDULED_PENDING,
            ],
            None,
            3,
            [UNSCHEDULED_PENDING, SCHEDULED_PENDING, SCHEDULED_RUNNING_NOT_READY],
            id="various pod phases and conditions, diff < len(pods)",
        ),
    ],
)
def test_get_pods_to_delete_ranks_as_upstream(
    pods: list[Pod], related: list[Pod] | None, diff: int, expected: list[Pod]
) -> None:
    chosen = pods_to_delete(pods, pods if related is None else related, diff, Times(), 0.0)
    assert [p.name for p in chosen] == [p.name for p in expected]


def test_a_lower_pod_deletion_cost_goes_first() -> None:
    cheap = pod("cheap", "n", POD_RUNNING, True, {POD_DELETION_COST_ANNOTATION: "-5"})
    dear = pod("dear", "m", POD_RUNNING, True, {POD_DELETION_COST_ANNOTATION: "100"})
    assert pods_to_delete([dear, cheap], [dear, cheap], 1, Times(), 0.0) == [cheap]


def test_the_pod_ready_for_less_time_goes_first_on_a_logarithmic_scale() -> None:
    old, new, newer = (pod(n, "n", POD_RUNNING, True) for n in ("old", "new", "newer"))
    times = Times(ready={"old": 0.0, "new": 994.0, "newer": 1006.0})
    # new (ready 30 s before now) and newer (18 s) share the bucket of 2^34 ns: uid decides;
    # old (1024 s) is in a higher bucket and stays.
    assert [p.name for p in pods_to_delete([old, newer, new], [], 2, times, 1024.0)] == [
        "new",
        "newer",
    ]


@pytest.mark.parametrize(
    ("value", "total", "round_up", "expected"),
    [
        (None, 10, True, 3),
        (None, 10, False, 2),
        (2, 10, True, 2),
        ("0%", 10, True, 0),
        ("50%", 3, False, 1),
    ],
)
def test_scaled_value_rounds_percentages_as_intstr_does(
    value: int | str | None, total: int, round_up: bool, expected: int
) -> None:
    assert scaled_value(value, total, round_up, "25%") == expected


def test_a_pod_the_scheduler_bound_runs_and_is_ready() -> None:
    given = Pod(name="p", node_name="n1", manifest={"spec": {}, "status": {"phase": "Pending"}})
    assert pod_phase(given) == POD_RUNNING
    assert is_pod_ready(given)
    assert not is_pod_ready(Pod(name="q"))
