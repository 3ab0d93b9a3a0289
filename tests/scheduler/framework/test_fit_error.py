"""FitError's message, ported from upstream's pkg/scheduler/framework/types_test.go
(TestFitError_Error): the sorted reason histogram, PreFilterMsg instead of the histogram, and
PostFilterMsg appended as it is."""

from __future__ import annotations

import pytest

from schedviz.scheduler.framework.interface import Code, Status
from schedviz.scheduler.framework.types import Diagnosis, FitError, NodeToStatus
from schedviz.scheduler.testing.wrappers import make_pod

PRE_FILTER = "Node(s) failed PreFilter plugin FalsePreFilter"
POST_FILTER = "Error running PostFilter plugin FailedPostFilter"
FILTER_1 = "Node(s) failed Filter plugin FalseFilter-1"
FILTER_2 = "Node(s) failed Filter plugin FalseFilter-2"


def _statuses(reasons: dict[str, str]) -> NodeToStatus:
    return NodeToStatus({n: Status(Code.Unschedulable, (r,)) for n, r in reasons.items()})


THREE_PRE_FILTER = {"node1": PRE_FILTER, "node2": PRE_FILTER, "node3": PRE_FILTER}
THREE_FILTER_1 = {"node1": FILTER_1, "node2": FILTER_1, "node3": FILTER_1}
TWO_FILTERS = {"node1": FILTER_1, "node2": FILTER_1, "node3": FILTER_2}


@pytest.mark.parametrize(
    ("num_all_nodes", "reasons", "pre_filter_msg", "post_filter_msg", "want"),
    [
        (3, THREE_PRE_FILTER, PRE_FILTER, "", f"0/3 nodes are available: {PRE_FILTER}."),
        (
            3,
            THREE_PRE_FILTER,
            PRE_FILTER,
            POST_FILTER,
            f"0/3 nodes are available: {PRE_FILTER}. {POST_FILTER}",
        ),
        (3, THREE_FILTER_1, "", "", f"0/3 nodes are available: 3 {FILTER_1}."),
        (
            3,
            THREE_FILTER_1,
            "",
            POST_FILTER,
            f"0/3 nodes are available: 3 {FILTER_1}. {POST_FILTER}",
        ),
        (3, TWO_FILTERS, "", "", f"0/3 nodes are available: 1 {FILTER_2}, 2 {FILTER_1}."),
        (
            3,
            TWO_FILTERS,
            "",
            POST_FILTER,
            f"0/3 nodes are available: 1 {FILTER_2}, 2 {FILTER_1}. {POST_FILTER}",
        ),
        (
            1,
            {"node1": "Node failed Permit plugin Permit-1"},
            "",
            "",
            "0/1 nodes are available: 1 Node failed Permit plugin Permit-1.",
        ),
        (
            1,
            {"node1": "Node failed Reserve plugin Reserve-1"},
            "",
            "",
            "0/1 nodes are available: 1 Node failed Reserve plugin Reserve-1.",
        ),
    ],
    ids=[
        "nodes failed Prefilter plugin",
        "nodes failed Prefilter plugin and the preemption also failed",
        "nodes failed one Filter plugin with an empty PostFilterMsg",
        "nodes failed one Filter plugin with a non-empty PostFilterMsg",
        "nodes failed two Filter plugins with an empty PostFilterMsg",
        "nodes failed two Filter plugins with a non-empty PostFilterMsg",
        "failed to Permit on node",
        "failed to Reserve on node",
    ],
)
def test_fit_error_message_matches_upstream(
    num_all_nodes: int,
    reasons: dict[str, str],
    pre_filter_msg: str,
    post_filter_msg: str,
    want: str,
) -> None:
    diagnosis = Diagnosis(
        node_to_status=_statuses(reasons),
        pre_filter_msg=pre_filter_msg,
        post_filter_msg=post_filter_msg,
    )
    assert str(FitError(make_pod().name("p").obj(), num_all_nodes, diagnosis)) == want


def test_fit_error_counts_absent_nodes_with_the_absent_status() -> None:
    statuses = _statuses({"node1": "Insufficient cpu"})
    statuses.absent_nodes_status = Status(
        Code.UnschedulableAndUnresolvable, ("node(s) didn't match Pod's node affinity/selector",)
    )
    fit_error = FitError(make_pod().obj(), 4, Diagnosis(node_to_status=statuses))
    assert str(fit_error) == (
        "0/4 nodes are available: 1 Insufficient cpu, "
        "3 node(s) didn't match Pod's node affinity/selector."
    )


def test_fit_error_sorts_the_histogram_as_strings() -> None:
    # Go's sort.Strings on "count reason": "10 b" sorts before "2 a".
    reasons = {f"n{i}": "b" for i in range(10)} | {"m1": "a", "m2": "a"}
    fit_error = FitError(make_pod().obj(), 12, Diagnosis(node_to_status=_statuses(reasons)))
    assert str(fit_error) == "0/12 nodes are available: 10 b, 2 a."


def test_fit_error_with_a_real_preemption_message_ends_with_one_period() -> None:
    diagnosis = Diagnosis(
        node_to_status=_statuses({"node1": "Insufficient cpu"}),
        post_filter_msg=(
            "preemption: 0/1 nodes are available: 1 No preemption victims found for incoming pod."
        ),
    )
    assert str(FitError(make_pod().obj(), 1, diagnosis)) == (
        "0/1 nodes are available: 1 Insufficient cpu. preemption: 0/1 nodes are available: "
        "1 No preemption victims found for incoming pod."
    )
