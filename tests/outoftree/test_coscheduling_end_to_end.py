"""Coscheduling end to end: gangs through the simulator, as a cluster with the plugin
schedules them."""

from __future__ import annotations

from collections import Counter

from schedviz.kube.crds import POD_GROUP_LABEL
from schedviz.kube.load import load_manifests
from schedviz.outoftree.registry import new_registry
from schedviz.scheduler.framework.interface import Code
from schedviz.scheduler.scheduler import RETRIES_AT_ONE_INSTANT
from schedviz.scheduler.trace import RESULT_SCHEDULED, RESULT_UNSCHEDULABLE, CycleTrace
from schedviz.simulation.simulator import Simulation, new_simulation

SCHEDULE_TIMEOUT = 10.0
NOW = 1_700_000_000.0


# ------------------------------------------------------------------ end to end

CONFIG = """
apiVersion: kubescheduler.config.k8s.io/v1
kind: KubeSchedulerConfiguration
profiles:
- schedulerName: default-scheduler
  plugins:
    multiPoint:
      enabled:
      - name: Coscheduling
    queueSort:
      enabled:
      - name: Coscheduling
      disabled:
      - name: "*"
  pluginConfig:
  - name: Coscheduling
    args:
      permitWaitingTimeSeconds: 10
"""


# A gang that cannot fit retries for ever: its first member to wait activates the others
# (ActivateSiblings), at one virtual instant (PopFromBackoffQ), as upstream does in real time.
MAX_CYCLES = 30


def _gang(
    cpus: int, members: int, min_member: int = 3, extra: str = "", gated: int = 0
) -> Simulation:
    """A PodGroup ``gang`` of ``members`` 1-cpu pods, the last ``gated`` of them held back by a
    scheduling gate, on one node of ``cpus`` cpus; run until nothing can progress."""
    manifests = _gang_manifests(cpus, members, min_member, extra, gated)
    simulation = new_simulation(load_manifests(manifests), registry=new_registry())
    simulation.run(max_cycles=MAX_CYCLES)
    return simulation


def _gang_manifests(
    cpus: int, members: int, min_member: int = 3, extra: str = "", gated: int = 0
) -> str:
    documents = [
        CONFIG,
        f"""
apiVersion: scheduling.x-k8s.io/v1alpha1
kind: PodGroup
metadata: {{name: gang}}
spec: {{minMember: {min_member}{extra}}}
""",
        f"""
apiVersion: v1
kind: Node
metadata: {{name: node-a}}
status: {{capacity: {{cpu: "{cpus}", memory: 4Gi, pods: "110"}}}}
""",
    ]
    for i in range(1, members + 1):
        gates = "[{name: hold}]" if i > members - gated else "[]"
        documents.append(
            f"""
apiVersion: v1
kind: Pod
metadata: {{name: worker-{i}, labels: {{{POD_GROUP_LABEL}: gang}}}}
spec:
  schedulingGates: {gates}
  containers: [{{name: c, image: busybox, resources: {{requests: {{cpu: "1"}}}}}}]
"""
        )
    return "---".join(documents)


def _cycles(simulation: Simulation) -> list[CycleTrace]:
    """Each cycle once: a cycle held at Permit is emitted again when its binding cycle ends."""
    return list({id(trace): trace for trace in simulation.traces}.values())


def _permit_codes(simulation: Simulation, pod: str) -> list[Code]:
    return [
        point.code
        for trace in _cycles(simulation)
        if trace.pod == pod
        for point in trace.points
        if point.point == "Permit" and point.plugin == "Coscheduling"
    ]


def _last_message(simulation: Simulation, pod: str) -> str:
    return [e.message for e in simulation.store.events if e.object == pod][-1]


def test_a_gang_that_does_not_fit_is_not_bound_at_all() -> None:
    simulation = _gang(cpus=2, members=3)

    assert simulation.placements() == {
        "default/worker-1": "",
        "default/worker-2": "",
        "default/worker-3": "",
    }
    # The first two were assumed and held at Permit until the third failed Filter.
    assert Code.Wait in _permit_codes(simulation, "default/worker-1")
    assert Code.Wait in _permit_codes(simulation, "default/worker-2")
    third = next(t for t in simulation.traces if t.pod == "default/worker-3")
    assert third.result == RESULT_UNSCHEDULABLE
    assert third.message.endswith(
        "PodGroup default/gang gets rejected due to Pod worker-3 is unschedulable even after "
        "PostFilter"
    )
    assert _last_message(simulation, "default/worker-1") == (
        "0/1 nodes are available: 1 optimistic rejection in PostFilter."
    )


def test_a_run_ends_a_gang_retrying_at_one_instant_and_says_so() -> None:
    simulation = new_simulation(
        load_manifests(_gang_manifests(cpus=2, members=3)), registry=new_registry()
    )
    simulation.run()  # no cycle cap but the default
    tries = Counter(trace.pod for trace in _cycles(simulation))
    assert max(tries.values()) == RETRIES_AT_ONE_INSTANT + 1
    assert simulation.scheduler.stopped_looping
    assert simulation.clock.now() == 0
    assert simulation.outcome() == (
        "stopped: 3 pods pending, retried at one instant on an unchanged cluster without "
        "progress (a loop upstream paces only by real time)"
    )


def test_the_first_member_to_wait_brings_its_rejected_siblings_back_at_once() -> None:
    """After the third member's PostFilter rejected the waiting two, the next member to wait
    activates its siblings from the unschedulable pool (PodsToActivate): the gang retries
    without a new cluster event and without waiting out a backoff."""
    simulation = _gang(cpus=2, members=3)

    cycles = _cycles(simulation)
    assert len(cycles) == MAX_CYCLES
    assert {trace.time for trace in cycles} == {0.0}
    assert _permit_codes(simulation, "default/worker-1").count(Code.Wait) > 1


def test_a_gang_that_fits_is_bound_once_the_last_member_arrives() -> None:
    simulation = _gang(cpus=3, members=3)

    assert set(simulation.placements().values()) == {"node-a"}
    assert _permit_codes(simulation, "default/worker-1") == [Code.Wait]
    assert _permit_codes(simulation, "default/worker-2") == [Code.Wait]
    assert _permit_codes(simulation, "default/worker-3") == [Code.Success]
    assert {t.result for t in simulation.traces} == {RESULT_SCHEDULED}
    assert simulation.clock.now() == 0.0  # nobody waited for a timeout


def test_waiting_members_time_out_after_schedule_timeout_seconds() -> None:
    # The gated third member never reaches a cycle: the first two wait out the group's 5 s.
    simulation = _gang(cpus=3, members=3, extra=", scheduleTimeoutSeconds: 5", gated=1)

    assert simulation.placements() == {
        "default/worker-1": "",
        "default/worker-2": "",
        "default/worker-3": "",
    }
    assert simulation.clock.now() == 5.0
    # The first to time out leaves Reserve, and its Unreserve rejects the other.
    assert _last_message(simulation, "default/worker-1") == (
        "0/1 nodes are available: 1 rejected due to timeout after waiting 5s at plugin "
        "Coscheduling."
    )
    assert _last_message(simulation, "default/worker-2") == (
        "0/1 nodes are available: 1 rejection in Unreserve."
    )


def test_pre_filter_rejects_a_gang_missing_members() -> None:
    simulation = _gang(cpus=3, members=2)

    assert simulation.placements() == {"default/worker-1": "", "default/worker-2": ""}
    assert _permit_codes(simulation, "default/worker-1") == []
    message = _last_message(simulation, "default/worker-1")
    # PostFilter still runs after a PreFilter rejection, and Coscheduling's rejects the group.
    assert message.startswith(
        "0/1 nodes are available: pre-filter pod worker-1 cannot find enough sibling pods, "
        "current pods number: 2, minMember of group: 3. "
    )
    assert message.endswith(
        "PodGroup default/gang gets rejected due to Pod worker-1 is unschedulable even after "
        "PostFilter"
    )
