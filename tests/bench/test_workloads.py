"""The benchmark workloads are built like upstream's scheduler_perf, and ``manage.py bench``
reports the documented keys. Speed is never asserted here."""

from __future__ import annotations

import json
from io import StringIO

import pytest
from django.core.management import call_command

from schedviz.bench.runner import (
    measured_result,
    percentile,
    run_engine,
)
from schedviz.bench.workloads import WORKLOADS, Workload
from schedviz.kube.objects import LABEL_HOSTNAME, LABEL_TOPOLOGY_ZONE, Node, Pod

BENCH_JSON_KEYS = {
    "workload",
    "mode",
    "nodes",
    "initPods",
    "measuredPods",
    "scheduled",
    "unschedulable",
    "seconds",
    "podsPerSecond",
    "p50CycleMs",
    "p99CycleMs",
    "peakRssMb",
    "traceBytesPerCycle",
    "traceJsonBytesPerCycle",
    "threshold",
    "meetsThreshold",
}


def _build(name: str, nodes: int = 6, init_pods: int = 7, measured: int = 8) -> Workload:
    return WORKLOADS[name].build(nodes, init_pods, measured, 0)


def _nodes(workload: Workload) -> list[Node]:
    return [o for o in workload.init_objects if isinstance(o, Node)]


def _init_pods(workload: Workload) -> list[Pod]:
    return [o for o in workload.init_objects if isinstance(o, Pod)]


def _milli_cpu(pod: Pod) -> int:
    return sum(c.requests["cpu"].milli_value() for c in pod.containers)


@pytest.mark.parametrize("name", list(WORKLOADS))
def test_each_workload_builds_the_counts_it_is_given(name: str) -> None:
    workload = _build(name)
    assert workload.name == name
    assert workload.node_count == len(_nodes(workload)) == 6
    assert workload.init_pod_count == len(_init_pods(workload)) == 7
    assert len(workload.measured_pods) == 8
    keys = [p.key for p in _init_pods(workload) + workload.measured_pods]
    assert len(set(keys)) == len(keys)
    assert all(not p.node_name for p in workload.measured_pods)


@pytest.mark.parametrize("name", list(WORKLOADS))
def test_nodes_are_node_default_yaml_with_hostname_labels(name: str) -> None:
    for node in _nodes(_build(name)):
        assert node.name.startswith("scheduler-perf-")
        assert node.labels[LABEL_HOSTNAME] == node.name
        assert {k: str(v) for k, v in node.allocatable.items()} == {
            "pods": "110",
            "cpu": "4",
            "memory": "32Gi",
        }
        assert node.capacity == node.allocatable


def test_upstream_sizes_are_the_default_counts() -> None:
    assert WORKLOADS["SchedulingBasic"].counts(5000) == (1000, 10000)
    assert WORKLOADS["SchedulingNodeAffinity"].counts(5000) == (5000, 10000)
    assert WORKLOADS["TopologySpreading"].counts(5000) == (5000, 5000)
    assert WORKLOADS["PreferredTopologySpreading"].counts(5000) == (5000, 5000)
    assert WORKLOADS["SchedulingPodAntiAffinity"].counts(5000) == (1000, 2000)
    assert WORKLOADS["PreemptionAsync"].counts(5000) == (20000, 5000)
    assert WORKLOADS["Unschedulable"].counts(5000) == (100, 10000)
    assert WORKLOADS["SchedulingBasic"].counts(500) == (500, 1000)
    assert WORKLOADS["SchedulingBasic"].counts(50) == (10, 100)  # 5000-node counts, scaled


def test_thresholds_are_upstreams_ci_figures() -> None:
    assert {name: spec.threshold for name, spec in WORKLOADS.items()} == {
        "SchedulingBasic": 680,
        "SchedulingNodeAffinity": 220,
        "TopologySpreading": 460,
        "PreferredTopologySpreading": 340,
        "SchedulingPodAntiAffinity": 60,
        "PreemptionAsync": 570,
        "Unschedulable": 590,
    }


def test_scheduling_basic_uses_pod_default_in_op_namespaces() -> None:
    workload = _build("SchedulingBasic")
    assert {p.namespace for p in _init_pods(workload)} == {"namespace-1"}
    assert {p.namespace for p in workload.measured_pods} == {"namespace-2"}
    pod = workload.measured_pods[0]
    assert pod.name.startswith("pod-")
    assert _milli_cpu(pod) == 100
    assert str(pod.containers[0].requests["memory"]) == "500Mi"
    assert pod.priority is None and pod.affinity is None
    assert workload.churn is None


def test_node_affinity_puts_every_node_in_zone1_and_pods_require_zone1_or_zone2() -> None:
    workload = _build("SchedulingNodeAffinity")
    assert {n.labels[LABEL_TOPOLOGY_ZONE] for n in _nodes(workload)} == {"zone1"}
    for pod in _init_pods(workload) + workload.measured_pods:
        assert pod.affinity is not None and pod.affinity.node_affinity is not None
        required = pod.affinity.node_affinity.required
        assert required is not None
        (term,) = required.node_selector_terms
        (requirement,) = term.match_expressions
        assert (requirement.key, requirement.operator, requirement.values) == (
            LABEL_TOPOLOGY_ZONE,
            "In",
            ("zone1", "zone2"),
        )


@pytest.mark.parametrize(
    ("name", "when_unsatisfiable"),
    [("TopologySpreading", "DoNotSchedule"), ("PreferredTopologySpreading", "ScheduleAnyway")],
)
def test_spreading_workloads_label_zones_round_robin_by_node_name(
    name: str, when_unsatisfiable: str
) -> None:
    workload = _build(name)
    nodes = sorted(_nodes(workload), key=lambda n: n.name)
    assert [n.labels[LABEL_TOPOLOGY_ZONE] for n in nodes] == ["moon-1", "moon-2", "moon-3"] * 2
    assert all(not p.topology_spread_constraints for p in _init_pods(workload))
    for pod in workload.measured_pods:
        (constraint,) = pod.topology_spread_constraints
        assert constraint.max_skew == 5
        assert constraint.topology_key == LABEL_TOPOLOGY_ZONE
        assert constraint.when_unsatisfiable == when_unsatisfiable
        assert constraint.label_selector is not None
        assert constraint.label_selector.match_labels == {"color": "blue"}
        assert pod.labels == {"color": "blue"}


def test_pod_anti_affinity_spans_both_sched_namespaces() -> None:
    workload = _build("SchedulingPodAntiAffinity")
    assert {p.namespace for p in _init_pods(workload)} == {"sched-0"}
    assert {p.namespace for p in workload.measured_pods} == {"sched-1"}
    for pod in _init_pods(workload) + workload.measured_pods:
        assert pod.labels == {"color": "green"}
        assert pod.affinity is not None and pod.affinity.pod_anti_affinity is not None
        (term,) = pod.affinity.pod_anti_affinity.required
        assert term.topology_key == LABEL_HOSTNAME
        assert term.namespaces == ("sched-1", "sched-0")


def test_preemption_async_fills_nodes_with_low_priority_pods_and_churns_preemptors() -> None:
    workload = _build("PreemptionAsync")
    assert {(_milli_cpu(p), p.priority) for p in _init_pods(workload)} == {(900, None)}
    assert {(_milli_cpu(p), p.priority) for p in workload.measured_pods} == {(100, None)}
    assert {p.namespace for p in workload.measured_pods} == {"namespace-3"}
    assert workload.churn is not None and workload.churn_interval == 0.2
    first, second = workload.churn(0), workload.churn(1)
    assert (_milli_cpu(first), first.priority, first.namespace) == (3000, 10, "namespace-2")
    assert first.key != second.key


def test_unschedulable_churns_high_priority_pods_too_large_for_any_node() -> None:
    workload = _build("Unschedulable")
    assert workload.churn is not None
    churn = workload.churn(0)
    assert (_milli_cpu(churn), churn.priority) == (9000, 10)
    assert churn.containers[0].limits == {}
    assert {_milli_cpu(p) for p in workload.measured_pods} == {100}


def test_the_same_seed_builds_the_same_workload() -> None:
    first, second = _build("SchedulingBasic"), _build("SchedulingBasic")
    assert [p.key for p in first.measured_pods] == [p.key for p in second.measured_pods]
    assert [n.name for n in _nodes(first)] == [n.name for n in _nodes(second)]


def test_engine_run_schedules_every_measured_pod_and_counts_traces() -> None:
    result = run_engine(_build("SchedulingBasic", 5, 5, 10))
    assert (result.scheduled, result.unschedulable, result.cycles) == (10, 0, 10)
    # Encoded as stored, far smaller than the documented JSON each trace reads back as.
    assert result.extra["traceJsonBytesPerCycle"] > 2 * result.trace_bytes_per_cycle > 0
    assert result.p99_cycle_ms >= result.p50_cycle_ms > 0


def test_anti_affinity_leaves_measured_pods_pending_when_hosts_run_out() -> None:
    result = run_engine(_build("SchedulingPodAntiAffinity", 5, 2, 4))
    assert (result.scheduled, result.unschedulable) == (3, 1)


def test_trace_bytes_per_cycle_count_what_the_cycles_share_once() -> None:
    result = measured_result(
        _build("SchedulingBasic"),
        mode="engine",
        scheduled=2,
        seconds=1.0,
        cycle_seconds=[0.1, 0.1],
        trace_bytes=[100, 200],
        shared_trace_bytes=1000,
        churn_pods=0,
        threshold=None,
    )
    assert result.trace_bytes_per_cycle == 650


def test_percentile_is_nearest_rank() -> None:
    values = [float(v) for v in range(1, 101)]
    assert percentile(values, 0.5) == 50.0
    assert percentile(values, 0.99) == 99.0
    assert percentile([], 0.99) == 0.0


def test_bench_command_prints_the_documented_json_keys() -> None:
    out = StringIO()
    call_command("bench", "SchedulingBasic", "--nodes", "5", "--output", "json", stdout=out)
    report = json.loads(out.getvalue())
    assert set(report) == BENCH_JSON_KEYS
    assert report["workload"] == "SchedulingBasic"
    assert (report["nodes"], report["initPods"], report["measuredPods"]) == (5, 5, 10)
    assert report["mode"] == "engine"
    assert report["threshold"] == 680
    assert report["meetsThreshold"] == (report["podsPerSecond"] >= 680)


def test_bench_command_counts_can_be_overridden() -> None:
    out = StringIO()
    call_command(
        "bench", "Unschedulable", "--nodes", "3", "--init-pods", "2", "--pods", "4", stdout=out
    )
    report = json.loads(out.getvalue())
    assert (report["nodes"], report["initPods"], report["measuredPods"]) == (3, 2, 4)


def test_bench_command_table_output_names_the_threshold() -> None:
    out = StringIO()
    call_command("bench", "TopologySpreading", "--nodes", "5", "--output", "table", stdout=out)
    assert "pods/s" in out.getvalue()
    assert "460" in out.getvalue()


def test_bench_command_refuses_an_unknown_workload_and_lists_the_workloads(
    capsys: pytest.CaptureFixture[str],
) -> None:
    with pytest.raises(SystemExit) as exit_info:
        call_command("bench", "SchedulingEverything", stdout=StringIO())
    assert exit_info.value.code == 2
    err = capsys.readouterr().err
    assert "SchedulingEverything" in err
    for name in WORKLOADS:
        assert name in err
