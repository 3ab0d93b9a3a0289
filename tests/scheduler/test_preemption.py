"""The preemption Evaluator with a stand-in policy, as upstream's preemption_test.go does it.

Ports TestDryRunPreemption (FakePostFilterPlugin) and covers pickOneNodeForPreemption's criteria
one by one, the start-time helpers of pkg/scheduler/util, utilerrors' aggregate message, and
prepareCandidate's API calls and events.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Mapping, Sequence
from typing import Any

import pytest

from schedviz.kube.objects import Node, Pod, PodCondition, PodDisruptionBudget
from schedviz.scheduler.backend.cache.snapshot import Snapshot, new_snapshot
from schedviz.scheduler.framework.cycle_state import CycleState
from schedviz.scheduler.framework.interface import Code, NominatingInfo, Status
from schedviz.scheduler.framework.types import NodeInfo, NodeToStatus, PodInfo
from schedviz.scheduler.gosort import sort_slice
from schedviz.scheduler.preemption import (
    CRITERION_FIRST_CANDIDATE,
    CRITERION_ONLY_CANDIDATE,
    Candidate,
    Evaluator,
    PreemptionDetails,
    PreemptionPostFilterResult,
    ScoreFunc,
    Victims,
    aggregate_errors,
    get_earliest_pod_start_time,
    get_lower_priority_nominated_pods,
    more_important_pod,
    pick_one_node_for_preemption,
    pod_start_time,
    sort_by_importance,
)
from schedviz.scheduler.store import ClusterStore
from schedviz.scheduler.testing.wrappers import make_node, make_pod

MID, HIGH = 100, 1000


def pod(name: str, priority: int = 0, node_name: str = "", start: int | None = None) -> Pod:
    wrapper = make_pod().name(name).uid(name).priority(priority)
    if node_name:
        wrapper = wrapper.node(node_name)
    p = wrapper.obj()
    if start is not None:
        p = dataclasses.replace(
            p, manifest={"status": {"startTime": f"1970-01-01T00:00:{start:02d}Z"}}
        )
    return p


class FakeHandle:
    """A snapshot, an in-memory API server and a nominator; filters always pass."""

    def __init__(
        self, pods: Sequence[Pod], nodes: Sequence[Node], nominated: Sequence[Pod] = ()
    ) -> None:
        self.snapshot = new_snapshot(pods, nodes)
        self.store = ClusterStore([*pods, *nodes, *nominated])
        self.nominated = list(nominated)
        self.calls: list[tuple[str, str]] = []
        self.goroutines: list[Callable[[], None]] = []

    def snapshot_shared_lister(self) -> Snapshot:
        return self.snapshot

    @property
    def objects(self) -> Any:  # ClusterStore, the lister plugins read through
        return self.store

    def nominated_pods_for_node(self, node_name: str) -> list[PodInfo]:
        return [PodInfo(p) for p in self.nominated if p.nominated_node_name == node_name]

    def get_waiting_pod(self, pod_key: str) -> None:
        return None

    def delete_pod(self, pod: Pod) -> None:
        self.calls.append(("delete", pod.name))
        self.store.delete("Pod", pod.key)

    def record_event(self, type_: str, reason: str, pod: Pod, message: str) -> object:
        return self.store.record_event(type_, reason, pod, message)

    def patch_pod_status(
        self, pod: Pod, condition: PodCondition | None, nominated_node_name: str | None
    ) -> Pod | None:
        self.calls.append(("patch", pod.name))
        return self.store.update_pod_status(pod, condition, nominated_node_name)

    def run_filter_plugins_with_nominated_pods(
        self, state: CycleState, pod: Pod, node_info: NodeInfo
    ) -> Status | None:
        return None

    def run_async(self, work: Callable[[], None]) -> None:
        self.calls.append(("goroutine", ""))
        self.goroutines.append(work)

    def run_goroutines(self) -> None:
        while self.goroutines:
            self.goroutines.pop(0)()

    def activate(self, pods: Mapping[str, Pod]) -> None:
        self.calls.extend(("activate", name) for name in pods)

    def run_pre_filter_extension_add_pod(
        self, state: CycleState, pod: Pod, pod_info_to_add: PodInfo, node_info: NodeInfo
    ) -> Status | None:
        return None

    def run_pre_filter_extension_remove_pod(
        self, state: CycleState, pod: Pod, pod_info_to_remove: PodInfo, node_info: NodeInfo
    ) -> Status | None:
        return None


class FakePostFilterPlugin:
    """Upstream's FakePostFilterPlugin: the node's first pod is the victim, offset 0, all nodes."""

    def __init__(self, num_violating_victim: int = 0) -> None:
        self.num_violating_victim = num_violating_victim

    def get_offset_and_num_candidates(self, num_nodes: int) -> tuple[int, int]:
        return 0, num_nodes

    def candidates_to_victims_map(self, candidates: Sequence[Candidate]) -> dict[str, Victims]:
        return {c.name: c.victims for c in candidates}

    def pod_eligible_to_preempt_others(
        self, pod: Pod, nominated_node_status: Status | None
    ) -> tuple[bool, str]:
        return True, ""

    def select_victims_on_node(
        self,
        state: CycleState,
        pod: Pod,
        node_info: NodeInfo,
        pdbs: Sequence[PodDisruptionBudget],
    ) -> tuple[list[Pod], int, Status | None]:
        if not node_info.pods:
            return [], 0, Status(Code.UnschedulableAndUnresolvable, ("no pods",))
        return [node_info.pods[0].pod], self.num_violating_victim, None

    def ordered_score_funcs(self, nodes_to_victims: dict[str, Victims]) -> list[ScoreFunc]:
        return []


VERY_LARGE: dict[str, str | int] = {"pods": 32, "cpu": "500m", "memory": "500"}


def two_nodes() -> list[Node]:
    return [make_node().name(n).capacity(VERY_LARGE).obj() for n in ("node1", "node2")]


@pytest.mark.parametrize(
    ("name", "num_violating", "expected"),
    [
        ("no pdb violation", 0, {"node1": (["p1"], 0), "node2": (["p2"], 0)}),
        ("pdb violation on each node", 1, {"node1": (["p1"], 1), "node2": (["p2"], 1)}),
    ],
)
def test_dry_run_preemption(
    name: str, num_violating: int, expected: dict[str, tuple[list[str], int]]
) -> None:
    init_pods = [pod("p1", MID, "node1"), pod("p2", MID, "node2")]
    handle = FakeHandle(init_pods, two_nodes())
    evaluator = Evaluator("FakePostFilter", handle, FakePostFilterPlugin(num_violating))
    node_infos = sorted(handle.snapshot.list(), key=lambda n: n.name)
    got, statuses, error = evaluator.dry_run_preemption(
        CycleState(), pod("p", HIGH), node_infos, [], 0, len(node_infos)
    )
    assert {
        c.name: ([p.name for p in c.victims.pods], c.victims.num_pdb_violations) for c in got
    } == expected
    assert len(statuses) == 0 and error is None


def test_dry_run_records_why_each_rejected_node_failed() -> None:
    handle = FakeHandle([], two_nodes())
    evaluator = Evaluator("FakePostFilter", handle, FakePostFilterPlugin())
    got, statuses, error = evaluator.dry_run_preemption(
        CycleState(), pod("p", HIGH), handle.snapshot.list(), [], 0, 2
    )
    assert got == [] and error is None
    assert {name: s.reasons for name, s in statuses.items()} == {
        "node1": ("no pods",),
        "node2": ("no pods",),
    }


def test_preempt_without_nodes_is_an_error() -> None:
    evaluator = Evaluator("FakePostFilter", FakeHandle([], []), FakePostFilterPlugin())
    result, status = evaluator.preempt(CycleState(), pod("p", HIGH), NodeToStatus())
    assert result is None
    assert status is not None and status.code == Code.Error
    assert status.reasons == ("no nodes available",)


def _preempt(
    handle: FakeHandle, preemptor: Pod, *, enable_async: bool = True
) -> tuple[Evaluator, PreemptionPostFilterResult | None]:
    evaluator = Evaluator(
        "FakePostFilter", handle, FakePostFilterPlugin(), enable_async_preemption=enable_async
    )
    result, status = evaluator.preempt(
        CycleState(), preemptor, NodeToStatus({"node1": Status(Code.Unschedulable)})
    )
    assert status is None
    assert result is not None and result.nominating_info == NominatingInfo("node1", True)
    return evaluator, result


def test_sync_preemption_evicts_before_it_returns() -> None:
    handle = FakeHandle([pod("p1", MID, "node1")], two_nodes()[:1])
    _, result = _preempt(handle, pod("p", HIGH), enable_async=False)
    assert result is not None and result.details is not None
    assert result.details.criterion == CRITERION_ONLY_CANDIDATE
    assert handle.calls == [("patch", "p1"), ("delete", "p1")]
    assert [(e.type, e.reason, e.object, e.message) for e in handle.store.events] == [
        ("Normal", "Preempted", "default/p1", "Preempted by pod p on node node1")
    ]


def test_async_preemption_evicts_in_a_goroutine_and_holds_the_preemptor_until_then() -> None:
    handle = FakeHandle([pod("p1", MID, "node1")], two_nodes()[:1])
    evaluator, result = _preempt(handle, pod("p", HIGH))
    assert handle.calls == [("goroutine", "")]
    assert evaluator.is_pod_running_preemption("default/p")
    assert result is not None and result.details is not None
    assert result.details.victims == ["default/p1"]

    handle.run_goroutines()
    assert handle.calls[1:] == [("patch", "p1"), ("delete", "p1")]
    assert not evaluator.is_pod_running_preemption("default/p")
    assert [(e.reason, e.object) for e in handle.store.events] == [("Preempted", "default/p1")]
    assert result.details.async_steps == [
        {"action": "PreemptionReleased", "pod": "default/p"},
        {"action": "PreemptVictim", "pod": "default/p1"},
    ]


def test_async_preemption_releases_the_preemptor_before_the_last_victim() -> None:
    node = make_node().name("node1").capacity({"pods": 10}).obj()
    handle = FakeHandle([pod("p1", MID, "node1"), pod("p2", MID, "node1")], [node])
    plugin = FakePostFilterPlugin()
    plugin_victims = plugin.select_victims_on_node

    def two_victims(*args: Any) -> tuple[list[Pod], int, Status | None]:
        _, _, node_info, _ = args
        _, violations, status = plugin_victims(*args)
        return [p.pod for p in node_info.pods], violations, status

    plugin.select_victims_on_node = two_victims  # type: ignore[method-assign]
    evaluator = Evaluator("FakePostFilter", handle, plugin)
    result, _ = evaluator.preempt(
        CycleState(), pod("p", HIGH), NodeToStatus({"node1": Status(Code.Unschedulable)})
    )
    handle.run_goroutines()
    assert result is not None and result.details is not None
    assert [step["action"] for step in result.details.async_steps] == [
        "PreemptVictim",
        "PreemptionReleased",
        "PreemptVictim",
    ]


def test_async_preemption_clears_lower_priority_nominations_in_the_goroutine() -> None:
    nominated = dataclasses.replace(pod("low", 10), nominated_node_name="node1")
    handle = FakeHandle([pod("p1", MID, "node1")], two_nodes()[:1], nominated=[nominated])
    _preempt(handle, pod("p", HIGH))
    assert handle.store.get("Pod", nominated.key).nominated_node_name == "node1"
    handle.run_goroutines()
    assert handle.calls[1:] == [("patch", "low"), ("patch", "p1"), ("delete", "p1")]
    assert handle.store.get("Pod", nominated.key).nominated_node_name == ""


def test_async_preemption_with_only_terminating_victims_returns_before_clearing_nominations() -> (
    None
):
    """Upstream's prepareCandidateAsync returns when no victim needs an API call: nothing
    is cleared, the preemptor is not held back (the livelock-1 finding)."""
    dying = dataclasses.replace(
        pod("dying", MID, "node1"), deletion_timestamp="2026-01-01T00:00:00Z"
    )
    nominated = dataclasses.replace(pod("low", 10), nominated_node_name="node1")
    handle = FakeHandle([dying], two_nodes()[:1], nominated=[nominated])
    evaluator, result = _preempt(handle, pod("p", HIGH))
    assert handle.calls == []
    assert not evaluator.is_pod_running_preemption("default/p")
    assert result is not None and result.details is not None
    assert result.details.victims == ["default/dying"]
    assert result.details.async_steps == [
        {"action": "VictimAlreadyTerminating", "pod": "default/dying"}
    ]


def test_async_preemption_activates_the_preemptor_when_an_api_call_fails() -> None:
    class RefusingHandle(FakeHandle):
        def delete_pod(self, pod: Pod) -> None:
            raise RuntimeError("admission webhook denied the request")

    handle = RefusingHandle([pod("p1", MID, "node1")], two_nodes()[:1])
    _, result = _preempt(handle, pod("p", HIGH))
    handle.run_goroutines()
    assert ("activate", "p") in handle.calls
    assert result is not None and result.details is not None
    assert result.details.async_steps[-1] == {"action": "Activate", "pod": "default/p"}


# ---------------------------------------------------------------------------------------------
# pickOneNodeForPreemption


def victims(*pods: Pod, violations: int = 0) -> Victims:
    return Victims(list(pods), violations)


PICK_CASES = [
    (
        "fewest PDB violations",
        {
            "node1": victims(pod("a", 0), violations=2),
            "node2": victims(pod("b", 500), violations=1),
        },
        "node2",
        "fewest PDB violations",
    ),
    (
        "lowest highest-priority victim",
        {"node1": victims(pod("a", 200)), "node2": victims(pod("b", 100), pod("c", 50))},
        "node2",
        "lowest highest-priority victim",
    ),
    (
        "smallest sum of victim priorities",
        {"node1": victims(pod("a", 100), pod("b", 90)), "node2": victims(pod("c", 100))},
        "node2",
        "smallest sum of victim priorities",
    ),
    (
        # Sums are of priorities plus 2**31, so two victims at -100 weigh more than one.
        "negative priorities still add up",
        {
            "node1": victims(pod("a", 0), pod("b", -100), pod("c", -100)),
            "node2": victims(pod("d", 0), pod("e", -100)),
        },
        "node2",
        "smallest sum of victim priorities",
    ),
    (
        "latest start time of highest-priority victims",
        {
            "node1": victims(pod("a", 100, start=1), pod("b", 50, start=9)),
            "node2": victims(pod("c", 100, start=3), pod("d", 50, start=0)),
        },
        "node2",
        "latest start time of highest-priority victims",
    ),
    (
        "all tied: the first candidate",
        {"node1": victims(pod("a", 100, start=1)), "node2": victims(pod("b", 100, start=1))},
        "node1",
        CRITERION_FIRST_CANDIDATE,
    ),
]


@pytest.mark.parametrize(
    ("name", "nodes_to_victims", "want_node", "want_criterion"),
    PICK_CASES,
    ids=[c[0] for c in PICK_CASES],
)
def test_pick_one_node_for_preemption(
    name: str, nodes_to_victims: dict[str, Victims], want_node: str, want_criterion: str
) -> None:
    assert pick_one_node_for_preemption(nodes_to_victims) == (want_node, want_criterion)


def test_pick_one_node_uses_custom_score_functions_in_order() -> None:
    nodes = {"node1": victims(pod("a")), "node2": victims(pod("b")), "node3": victims(pod("c"))}
    first: ScoreFunc = lambda node: 0 if node == "node1" else 1  # noqa: E731
    second: ScoreFunc = lambda node: 5 if node == "node3" else 1  # noqa: E731
    assert pick_one_node_for_preemption(nodes, [first, second]) == ("node3", "score function 2")
    assert pick_one_node_for_preemption({}) == ("", "")


def test_select_candidate() -> None:
    evaluator = Evaluator("FakePostFilter", FakeHandle([], []), FakePostFilterPlugin())
    only = Candidate("node1", victims(pod("a")))
    assert evaluator.select_candidate([]) == (None, "")
    assert evaluator.select_candidate([only]) == (only, CRITERION_ONLY_CANDIDATE)
    better = Candidate("node2", victims(pod("b", -1)))
    assert evaluator.select_candidate([only, better]) == (
        better,
        "lowest highest-priority victim",
    )


# ---------------------------------------------------------------------------------------------
# Start times and importance (pkg/scheduler/util)


def test_pod_start_time_reads_status_start_time() -> None:
    assert pod_start_time(pod("a", start=2)) == 2_000_000_000
    assert pod_start_time(pod("a")) == float("inf")
    fractional = dataclasses.replace(
        pod("a"), manifest={"status": {"startTime": "1970-01-01T00:00:01.5+00:00"}}
    )
    assert pod_start_time(fractional) == 1_500_000_000
    broken = dataclasses.replace(pod("a"), manifest={"status": {"startTime": "yesterday"}})
    assert pod_start_time(broken) == float("inf")


def test_more_important_pod() -> None:
    assert more_important_pod(pod("a", 10), pod("b", 5))
    assert not more_important_pod(pod("a", 5), pod("b", 10))
    assert more_important_pod(pod("a", 5, start=1), pod("b", 5, start=2))
    assert not more_important_pod(pod("a", 5, start=2), pod("b", 5, start=1))
    # Both started "now", the first argument's time.Now() before the second's: true both ways.
    assert more_important_pod(pod("a", 5), pod("b", 5))
    assert more_important_pod(pod("b", 5), pod("a", 5))
    assert more_important_pod(pod("a", 5, start=1), pod("b", 5))
    assert not more_important_pod(pod("b", 5), pod("a", 5, start=1))


def test_earliest_start_time_of_highest_priority_victims() -> None:
    assert get_earliest_pod_start_time(victims()) is None
    found = get_earliest_pod_start_time(
        victims(
            pod("a", 5, start=7), pod("b", 9, start=4), pod("c", 9, start=3), pod("d", 1, start=0)
        )
    )
    assert found == 3_000_000_000


@pytest.mark.parametrize(
    ("errors", "message"),
    [
        ([], None),
        (["boom"], "boom"),
        (["boom", "boom"], "boom"),
        (["a", "b", "a"], "[a, b]"),
    ],
)
def test_aggregate_errors(errors: list[str], message: str | None) -> None:
    assert aggregate_errors(errors) == message


# ---------------------------------------------------------------------------------------------
# prepareCandidate


def test_lower_priority_nominated_pods() -> None:
    nominated = [
        dataclasses.replace(pod("low", 1), nominated_node_name="node1"),
        dataclasses.replace(pod("same", 5), nominated_node_name="node1"),
        dataclasses.replace(pod("other", 1), nominated_node_name="node2"),
    ]
    handle = FakeHandle([], [], nominated)
    found = get_lower_priority_nominated_pods(handle, pod("p", 5), "node1")
    assert [p.name for p in found] == ["low"]


def test_prepare_candidate_clears_nominations_then_evicts() -> None:
    victim = pod("v", 0, "node1")
    gone = pod("gone", 0, "node1")
    nominated = dataclasses.replace(pod("low", 1), nominated_node_name="node1")
    handle = FakeHandle([victim], [], [nominated])
    evaluator = Evaluator("DefaultPreemption", handle, FakePostFilterPlugin())
    details = PreemptionDetails()
    candidate = Candidate("node1", victims(victim, gone))

    status = evaluator.prepare_candidate(candidate, pod("p", 5), "DefaultPreemption", details)

    assert status is None
    assert handle.calls == [("patch", "low"), ("patch", "v"), ("delete", "v"), ("patch", "gone")]
    assert handle.store.get("Pod", "default/low").nominated_node_name == ""
    assert details.victims == ["default/v", "default/gone"]
    # A victim already gone gets no event.
    assert [e.object for e in handle.store.events] == ["default/v"]


@pytest.mark.parametrize("length", [2, 5, 12, 13, 40, 90])
def test_sort_by_importance_swaps_as_sort_slice_with_more_important_pod(length: int) -> None:
    # Priorities and start times with many ties, and pods without a start time ("now"), for
    # which MoreImportantPod is true both ways.
    pods = [
        pod(f"p{i}", (i * 7) % 3 * MID, start=None if i % 4 == 0 else (i * 5) % 6)
        for i in range(length)
    ]
    want = [PodInfo(p) for p in pods]
    sort_slice(want, lambda a, b: more_important_pod(a.pod, b.pod))
    got = [PodInfo(p) for p in pods]

    sort_by_importance(got)

    assert [i.pod.name for i in got] == [i.pod.name for i in want]
    # Another comparison is used as given.
    by_name = [PodInfo(p) for p in pods]
    sort_by_importance(by_name, lambda a, b: a.name > b.name)
    assert [i.pod.name for i in by_name] == sorted((p.name for p in pods), reverse=True)
