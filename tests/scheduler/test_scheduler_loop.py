"""The scheduler in virtual time: the loop, the queue's flushes, Permit timeouts, the nominator
around assume, the in-memory API's compare-and-set bind, and the queueing hint map.

Mirrors behaviour pinned by upstream's pkg/scheduler/scheduler_test.go (buildQueueingHintMap),
schedule_one.go (assume drops the nomination; Permit's timeout message) and the API server's
pods/binding subresource (409 Conflict on a second bind).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence
from typing import Any

from schedviz.kube.objects import Namespace, Node, Pod
from schedviz.scheduler.apis.config.v1 import decode_configuration
from schedviz.scheduler.clock import VirtualClock
from schedviz.scheduler.framework.cycle_state import (
    PODS_TO_ACTIVATE_KEY,
    CycleState,
    PodsToActivate,
)
from schedviz.scheduler.framework.interface import Code, NominatingInfo, Status
from schedviz.scheduler.framework.plugins.registry import new_in_tree_registry
from schedviz.scheduler.framework.runtime.registry import PluginFactory, Registry
from schedviz.scheduler.framework.types import (
    EVENT_NODE_ADD,
    ActionType,
    ClusterEvent,
    ClusterEventWithHint,
    EventResource,
    NodeInfo,
    PodInfo,
)
from schedviz.scheduler.scheduler import Scheduler, build_queueing_hint_map
from schedviz.scheduler.store import ClusterStore
from schedviz.scheduler.testing.wrappers import make_node, make_pod
from schedviz.scheduler.trace import RESULT_ERROR, RESULT_SCHEDULED, RESULT_WAITING

NODE_TAINT = ClusterEvent(EventResource.Node, ActionType.UpdateNodeTaint)


@dataclasses.dataclass
class FlakyFilter:
    """Fails with an Error the first ``errors`` times it runs, then passes."""

    errors: int = 1

    def name(self) -> str:
        return "FlakyFilter"

    def filter(self, state: CycleState, pod: Pod, node_info: NodeInfo) -> Status | None:
        if self.errors:
            self.errors -= 1
            return Status(Code.Error, error="flaky")
        return None


@dataclasses.dataclass
class WaitingPermit:
    timeout: float = 10.0

    def name(self) -> str:
        return "WaitingPermit"

    def permit(self, state: CycleState, pod: Pod, node_name: str) -> tuple[Status | None, float]:
        return Status(Code.Wait), self.timeout

    def events_to_register(self) -> list[ClusterEventWithHint]:
        return [ClusterEventWithHint(EVENT_NODE_ADD)]


class NodeAddFilter:
    """Rejects every node and waits for new ones."""

    def name(self) -> str:
        return "NodeAddFilter"

    def filter(self, state: CycleState, pod: Pod, node_info: NodeInfo) -> Status | None:
        return Status(Code.Unschedulable, ("no",))

    def events_to_register(self) -> list[ClusterEventWithHint]:
        return [ClusterEventWithHint(EVENT_NODE_ADD)]


@dataclasses.dataclass
class ActivatingPermit:
    """Asks the scheduler to activate ``others`` from Permit, through PodsToActivate."""

    others: list[Pod]

    def name(self) -> str:
        return "ActivatingPermit"

    def permit(self, state: CycleState, pod: Pod, node_name: str) -> tuple[Status | None, float]:
        pods_to_activate = state.read_as(PODS_TO_ACTIVATE_KEY, PodsToActivate)
        for other in self.others:
            if other.key != pod.key:
                pods_to_activate.map[other.key] = other
        return None, 0.0


def _fixed(plugin: object) -> PluginFactory:
    return lambda args, handle: plugin


def new_scheduler(
    points: dict[str, Sequence[str]],
    plugins: dict[str, object],
    nodes: Sequence[Node],
    pods: Sequence[Pod],
) -> tuple[Scheduler, VirtualClock]:
    registry = new_in_tree_registry().merge(
        Registry({name: _fixed(plugin) for name, plugin in plugins.items()})
    )
    plugin_sets: dict[str, Any] = {
        "multiPoint": {"disabled": [{"name": "*"}]},
        "queueSort": {"enabled": [{"name": "PrioritySort"}]},
        "bind": {"enabled": [{"name": "DefaultBinder"}]},
    }
    for point, names in points.items():
        plugin_sets[point] = {"enabled": [{"name": n} for n in names]}
    config = decode_configuration(
        {
            "apiVersion": "kubescheduler.config.k8s.io/v1",
            "kind": "KubeSchedulerConfiguration",
            "profiles": [{"schedulerName": "default-scheduler", "plugins": plugin_sets}],
        },
        known_plugins=set(registry),
    )
    clock = VirtualClock()
    store = ClusterStore([*nodes, *pods], now=clock.now)
    traces: list[Any] = []
    sched = Scheduler(config, registry, store, clock, emit=traces.append)
    sched.test_traces = traces  # type: ignore[attr-defined]
    return sched, clock


def node(name: str) -> Node:
    return make_node().name(name).obj()


def test_an_error_is_retried_when_its_backoff_ends_at_the_next_flush() -> None:
    sched, clock = new_scheduler(
        {"filter": ["FlakyFilter"]},
        {"FlakyFilter": FlakyFilter()},
        [node("n1")],
        [make_pod().name("p").obj()],
    )
    cycles = sched.run_until_idle(clock.set)
    traces = sched.test_traces  # type: ignore[attr-defined]
    assert cycles == 2
    assert [(t.result, t.time, t.attempt) for t in traces] == [
        (RESULT_ERROR, 0.0, 1),
        # podInitialBackoffSeconds 1, aligned to the backoffQ's 1 s ordering window
        # (alignToWindow: truncate(0 + 1 s) + 1 s), so the pod leaves backoffQ at the 2 s flush.
        (RESULT_SCHEDULED, 2.0, 2),
    ]
    assert sched.store.get("Pod", "default/p").node_name == "n1"
    assert sched.queue.in_flight_pods() == []


def test_an_unschedulable_pod_leaves_the_loop_idle_until_an_event() -> None:
    sched, clock = new_scheduler(
        {"filter": ["NodeAddFilter"]},
        {"NodeAddFilter": NodeAddFilter()},
        [node("n1")],
        [make_pod().name("p").obj()],
    )
    assert sched.run_until_idle(clock.set) == 1
    assert clock.now() == 0.0
    assert sched.next_wakeup() is None
    assert [p.name for p in sched.queue.unschedulable_pod_list()] == ["p"]
    # A new node is the event the plugin waits for: the pod is tried again.
    sched.store.apply(node("n2"))
    assert sched.run_until_idle(clock.set) == 1
    assert [p.name for p in sched.queue.unschedulable_pod_list()] == ["p"]


def test_a_pod_with_no_node_to_go_to_is_tried_once_and_the_loop_stops() -> None:
    # "no nodes available" names no plugin, so upstream sends the pod through backoffQ again
    # and again; a retry on the same cluster decides the same, so the loop stops.
    sched, clock = new_scheduler(
        {"filter": ["NodeAddFilter"]},
        {"NodeAddFilter": NodeAddFilter()},
        [],
        [make_pod().name("p").obj()],
    )
    assert sched.run_until_idle(clock.set, max_cycles=50) == 1
    assert not sched.stopped_at_cap
    assert [p.name for p in sched.queue.pods_in_backoff_q()] == ["p"]


def test_a_pod_in_backoff_is_tried_again_once_after_any_cluster_change() -> None:
    sched, clock = new_scheduler(
        {"filter": ["NodeAddFilter"]},
        {"NodeAddFilter": NodeAddFilter()},
        [],
        [make_pod().name("p").obj()],
    )
    assert sched.run_until_idle(clock.set, max_cycles=50) == 1
    sched.store.apply(Namespace(name="other"))
    assert sched.run_until_idle(clock.set, max_cycles=50) == 1
    assert [t.attempt for t in sched.test_traces] == [1, 2]  # type: ignore[attr-defined]


def test_a_pods_own_unschedulable_condition_is_not_a_cluster_change() -> None:
    sched, clock = new_scheduler(
        {"filter": ["NodeAddFilter"]},
        {"NodeAddFilter": NodeAddFilter()},
        [],
        [make_pod().name("p").obj()],
    )
    before = sched.cluster_generation
    sched.run_until_idle(clock.set, max_cycles=50)
    pod = sched.store.get("Pod", "default/p")
    assert pod.conditions[0].reason == "Unschedulable"
    assert sched.cluster_generation == before


def test_the_cycle_cap_is_reported() -> None:
    sched, clock = new_scheduler(
        {"filter": ["FlakyFilter"]},
        {"FlakyFilter": FlakyFilter(errors=5)},
        [node("n1")],
        [make_pod().name("p").obj()],
    )
    assert sched.run_until_idle(clock.set, max_cycles=2) == 2
    assert sched.stopped_at_cap


def test_a_pod_waiting_at_permit_times_out_at_the_plugin_deadline() -> None:
    sched, clock = new_scheduler(
        {"permit": ["WaitingPermit"]},
        {"WaitingPermit": WaitingPermit(timeout=10.0)},
        [node("n1")],
        [make_pod().name("p").obj()],
    )
    sched.run_until_idle(clock.set)
    traces = sched.test_traces  # type: ignore[attr-defined]
    # The waiting cycle is emitted again with its outcome.
    assert len(traces) == 2
    assert traces[0] is traces[1]
    assert traces[0].result == "Unschedulable"
    assert clock.now() == 10.0
    message = (
        "0/1 nodes are available: 1 rejected due to timeout after waiting 10s at plugin "
        "WaitingPermit."
    )
    assert traces[-1].message == message
    pod = sched.store.get("Pod", "default/p")
    assert pod.node_name == ""
    assert [p.name for p in sched.queue.unschedulable_pod_list()] == ["p"]
    # The assumed pod was forgotten: n1 is empty again.
    sched.cache.update_snapshot(sched.snapshot)
    assert sched.snapshot.get("n1").pods == []  # type: ignore[union-attr]


def test_assuming_a_pod_drops_its_nomination() -> None:
    pod = make_pod().name("p").nominated_node_name("n1").obj()
    sched, _ = new_scheduler(
        {"permit": ["WaitingPermit"]}, {"WaitingPermit": WaitingPermit()}, [node("n1")], [pod]
    )
    sched.queue.add_nominated_pod(PodInfo(pod), NominatingInfo("n1"))
    assert [p.pod.name for p in sched.queue.nominated_pods_for_node("n1")] == ["p"]
    trace = sched.schedule_one()
    assert trace is not None
    assert trace.result == RESULT_WAITING
    # The pod is counted once, as assumed in the cache, not again as nominated.
    assert sched.queue.nominated_pods_for_node("n1") == []


def test_bind_is_a_compare_and_set() -> None:
    store = ClusterStore([node("n1"), node("n2"), make_pod().name("p").obj()])
    pod = store.get("Pod", "default/p")
    assert store.bind(pod, "n1") is None
    status = store.bind(pod, "n2")
    assert status is not None
    assert status.code == Code.Error
    assert status.as_error() == (
        'Operation cannot be fulfilled on pods/binding "p": pod p is already assigned to node "n1"'
    )
    assert store.get("Pod", "default/p").node_name == "n1"


def test_binding_lost_to_another_binder_is_an_error_and_the_pod_is_not_requeued() -> None:
    sched, clock = new_scheduler({}, {}, [node("n1"), node("n2")], [make_pod().name("p").obj()])
    store = sched.store
    real_bind = store.bind

    def bound_elsewhere_first(pod: Pod, node_name: str) -> Status | None:
        real_bind(pod, "n2")  # someone else wins the race
        return real_bind(pod, node_name)

    store.bind = bound_elsewhere_first  # type: ignore[method-assign]
    sched.run_until_idle(clock.set)
    traces = sched.test_traces  # type: ignore[attr-defined]
    assert [t.result for t in traces] == [RESULT_ERROR]
    assert store.get("Pod", "default/p").node_name == "n2"
    # handleSchedulingFailure sees the pod assigned in the informer cache and drops it.
    assert sched.queue.pending_pods()[0] == []
    assert sched.queue.in_flight_pods() == []


def test_a_plugin_waiting_for_new_nodes_also_hears_taint_changes() -> None:
    sched, _ = new_scheduler(
        {"filter": ["NodeAddFilter"]}, {"NodeAddFilter": NodeAddFilter()}, [node("n1")], []
    )
    hints = build_queueing_hint_map(sched.profiles["default-scheduler"])
    assert [h.plugin_name for h in hints[EVENT_NODE_ADD]] == ["NodeAddFilter"]
    assert [h.plugin_name for h in hints[NODE_TAINT]] == ["NodeAddFilter"]


class FakeNodeSelector:
    """Upstream's fakeNodeSelector: only the node named in its args fits."""

    def __init__(self, args: dict[str, Any]) -> None:
        self.node_name = args["nodeName"]

    def name(self) -> str:
        return "FakeNodeSelector"

    def filter(self, state: CycleState, pod: Pod, node_info: NodeInfo) -> Status | None:
        if node_info.name != self.node_name:
            return Status(Code.UnschedulableAndUnresolvable)
        return None


def test_multiple_profiles_schedule_their_own_pods() -> None:
    """TestSchedulerMultipleProfilesScheduling."""
    registry = new_in_tree_registry().merge(
        Registry({"FakeNodeSelector": lambda args, handle: FakeNodeSelector(args)})
    )

    def profile(name: str, node_name: str) -> dict[str, Any]:
        return {
            "schedulerName": name,
            "plugins": {
                "multiPoint": {"disabled": [{"name": "*"}]},
                "queueSort": {"enabled": [{"name": "PrioritySort"}]},
                "filter": {"enabled": [{"name": "FakeNodeSelector"}]},
                "bind": {"enabled": [{"name": "DefaultBinder"}]},
            },
            "pluginConfig": [{"name": "FakeNodeSelector", "args": {"nodeName": node_name}}],
        }

    config = decode_configuration(
        {
            "apiVersion": "kubescheduler.config.k8s.io/v1",
            "kind": "KubeSchedulerConfiguration",
            "profiles": [profile("match-node2", "node2"), profile("match-node3", "node3")],
        },
        known_plugins=set(registry),
    )
    pods = [
        make_pod().name("pod1").scheduler_name("match-node3").obj(),
        make_pod().name("pod2").scheduler_name("match-node2").obj(),
        make_pod().name("pod3").scheduler_name("match-node2").obj(),
        make_pod().name("pod4").scheduler_name("match-node3").obj(),
    ]
    clock = VirtualClock()
    store = ClusterStore([node("node1"), node("node2"), node("node3"), *pods], now=clock.now)
    traces: list[Any] = []
    sched = Scheduler(config, registry, store, clock, emit=traces.append)
    assert sched.run_until_idle(clock.set) == 4
    assert {p.name: p.node_name for p in store.pods()} == {
        "pod1": "node3",
        "pod2": "node2",
        "pod3": "node2",
        "pod4": "node3",
    }
    assert {t.pod: t.profile for t in traces} == {
        "default/pod1": "match-node3",
        "default/pod2": "match-node2",
        "default/pod3": "match-node2",
        "default/pod4": "match-node3",
    }


def test_pods_a_plugin_names_in_pods_to_activate_move_to_active_q_after_the_cycle() -> None:
    """scheduleOne: after a successful scheduling cycle the PodsToActivate entries are moved to
    activeQ, so a pod resting in the unschedulable pool is retried without a cluster event."""
    parked = make_pod().name("parked").obj()
    mover = make_pod().name("mover").obj()
    sched, _ = new_scheduler(
        {"permit": ["ActivatingPermit"], "filter": ["NodeAddFilter"]},
        {"ActivatingPermit": ActivatingPermit([parked]), "NodeAddFilter": NodeAddFilter()},
        [node("n1")],
        [parked],
    )
    first = sched.schedule_one()
    assert first is not None and first.pod == "default/parked"
    assert [p.name for p in sched.queue.unschedulable_pod_list()] == ["parked"]
    # From now on no filter runs: the mover fits, and its Permit activates the parked pod.
    sched.profiles["default-scheduler"].points["filter"].clear()
    sched.store.apply(mover)
    second = sched.schedule_one()
    assert second is not None and second.pod == "default/mover"
    assert second.result == RESULT_SCHEDULED
    assert [p.name for p in sched.queue.pods_in_active_q()] == ["parked"]


def test_a_clock_far_ahead_of_the_flush_ticks_is_caught_up_in_one_flush() -> None:
    sched, clock = new_scheduler(
        {"filter": ["FlakyFilter"]},
        {"FlakyFilter": FlakyFilter()},
        [node("n1")],
        [make_pod().name("p").obj()],
    )
    sched.step()  # an error: the pod waits out its backoff
    assert [p.name for p in sched.queue.pods_in_backoff_q()] == ["p"]
    # A clock at speed 1e9 is a billion ticks ahead after a wall second.
    clock.set(1e9 + 0.5)
    sched.run_due_work()
    assert sched.queue.pods_in_backoff_q() == []
    assert [p.name for p in sched.queue.pods_in_active_q()] == ["p"]
    assert sched._next_backoff_flush == 1e9 + 1
    assert sched._next_unschedulable_flush == 1_000_000_020.0  # 30 s ticks from 30 s


def test_the_unschedulable_flush_that_retries_a_pod_is_the_first_tick_after_five_minutes() -> None:
    sched, clock = new_scheduler(
        {"filter": ["NodeAddFilter"]},
        {"NodeAddFilter": NodeAddFilter()},
        [node("n1")],
        [make_pod().name("p").obj()],
    )
    clock.set(7.0)
    assert sched.run_until_idle(clock.set) == 1
    # In the pool since 7 s: older than 300 s after 307 s, moved at the 30 s tick after that.
    assert sched.next_unschedulable_flush() == 330.0
    clock.set(330.0)
    sched.run_due_work()
    assert [p.name for p in sched.queue.pods_in_active_q()] == ["p"]


def test_a_scheduler_resumed_from_saved_state_does_not_retry_a_pod_nothing_helped() -> None:
    plugins = {"NodeAddFilter": NodeAddFilter()}
    sched, clock = new_scheduler(
        {"filter": ["NodeAddFilter"]}, plugins, [node("n1")], [make_pod().name("p").obj()]
    )
    assert sched.run_until_idle(clock.set) == 1
    saved = sched.state_to_data()
    # A new scheduler over the same cluster, resumed: the pod is still waiting for a node.
    resumed = Scheduler(
        sched.config, sched_registry(plugins), sched.store, clock, saved_state=saved
    )
    assert resumed.run_until_idle(clock.set) == 0
    (pinfo,) = list(resumed.queue.unschedulable_pods)
    assert (pinfo.key, pinfo.attempts, pinfo.unschedulable_plugins) == (
        "default/p",
        1,
        {"NodeAddFilter"},
    )
    # A fresh one lists the pod into activeQ and tries it again at once.
    fresh = Scheduler(
        sched.config,
        sched_registry(plugins),
        ClusterStore([node("n1"), make_pod().name("p").obj()], now=clock.now),
        clock,
    )
    assert fresh.run_until_idle(clock.set) == 1
    # The event the plugin waits for moves the resumed pod, its attempts counted on.
    traces: list[Any] = []
    resumed._emit = traces.append
    sched.store.apply(node("n2"))
    assert resumed.run_until_idle(clock.set) == 1
    assert [t.attempt for t in traces] == [2]


def sched_registry(plugins: dict[str, object]) -> Registry:
    return new_in_tree_registry().merge(
        Registry({name: _fixed(plugin) for name, plugin in plugins.items()})
    )
