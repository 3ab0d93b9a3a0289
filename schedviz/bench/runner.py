"""Running a benchmark workload through the engine and measuring it.

Like scheduler_perf: the nodes and the init pods come first and the scheduler places the init
pods (not measured); then the measured pods are created and the clock runs until every one of
them is bound. Only that phase is timed. Every cycle's trace is encoded as the live system stores
it (``trace_codec.encode``, and each distinct node order once with ``encode_node_order``) inside
the timed cycle, so what the trace costs is counted; the encoded trace is then dropped (the live
system writes it out and moves on). Trace bytes per cycle are the encoded bodies plus each
distinct node order's encoded size counted once, over the cycles. The documented JSON is built
only on read; its size (``traceJsonBytesPerCycle``) is sampled on every ``JSON_SAMPLE_EVERY``th
trace, converted with ``to_json`` and ``json.dumps`` after the measured phase.

Throughput is upstream's SchedulingThroughput in spirit: measured pods bound per wall second of
the measured phase (upstream averages one-second samples; here it is the total over the
duration). During the measured phase the scheduler's clock follows the wall clock, so backoffs
and the queue's flushes take real time as they do upstream, except that when the scheduler has
nothing to do the clock jumps to its next wake-up instead of sleeping. Churn pods
(PreemptionAsync, Unschedulable) are created every 200 ms of wall time, as upstream's churn op.
The engine runs with the garbage collector tuned as every scheduling process of schedviz runs
it (schedviz/scheduler/collector.py: the youngest generation collected less often).
"""

from __future__ import annotations

import json
import math
import resource
import statistics
import time
from dataclasses import dataclass, field
from typing import Any

from schedviz.bench.workloads import WORKLOADS, Workload
from schedviz.kube.load import Manifests
from schedviz.kube.objects import Pod
from schedviz.scheduler import trace_codec
from schedviz.scheduler.collector import scheduling_collector
from schedviz.scheduler.store import ADDED, DELETED, MODIFIED
from schedviz.scheduler.trace import CycleTrace
from schedviz.simulation.simulator import Simulation, new_simulation

# One trace in this many is converted to the documented JSON, after the phase, for its size.
JSON_SAMPLE_EVERY = 100


@dataclass
class BenchResult:
    workload: str
    mode: str
    nodes: int
    init_pods: int
    measured_pods: int
    scheduled: int
    unschedulable: int
    seconds: float
    pods_per_second: float
    p50_cycle_ms: float
    p99_cycle_ms: float
    peak_rss_mb: float
    trace_bytes_per_cycle: float
    cycles: int
    churn_pods: int
    threshold: int
    # Of ``seconds``, the time spent encoding traces (engine mode).
    trace_seconds: float = 0.0
    # Further fields of a mode's JSON report (e2e: the websocket clients, the target).
    extra: dict[str, Any] = field(default_factory=dict)

    @property
    def meets_threshold(self) -> bool:
        return self.pods_per_second >= self.threshold

    def to_json(self) -> dict[str, Any]:
        return {
            "workload": self.workload,
            "mode": self.mode,
            "nodes": self.nodes,
            "initPods": self.init_pods,
            "measuredPods": self.measured_pods,
            "scheduled": self.scheduled,
            "unschedulable": self.unschedulable,
            "seconds": round(self.seconds, 3),
            "podsPerSecond": round(self.pods_per_second, 1),
            "p50CycleMs": round(self.p50_cycle_ms, 3),
            "p99CycleMs": round(self.p99_cycle_ms, 3),
            "peakRssMb": round(self.peak_rss_mb, 1),
            "traceBytesPerCycle": round(self.trace_bytes_per_cycle),
            "threshold": self.threshold,
            "meetsThreshold": self.meets_threshold,
            **self.extra,
        }


def peak_rss_mb() -> float:
    """The process's peak resident set (ru_maxrss is in KiB on Linux)."""
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def percentile(values: list[float], fraction: float) -> float:
    """Nearest-rank percentile; 0 for no values."""
    if not values:
        return 0.0
    ordered = sorted(values)
    rank = min(len(ordered), max(1, math.ceil(fraction * len(ordered))))
    return ordered[rank - 1]


class _MeasuredPods:
    """Watches the store: which measured pods got bound, and which were deleted unbound."""

    def __init__(self, keys: set[str]) -> None:
        self.keys = keys
        self.bound: set[str] = set()
        self.gone_unbound: set[str] = set()

    def __call__(self, event_type: str, old: Any, new: Any) -> None:
        if event_type in (MODIFIED, ADDED):
            if isinstance(new, Pod) and new.node_name and new.key in self.keys:
                self.bound.add(new.key)
        elif (
            event_type == DELETED
            and isinstance(old, Pod)
            and old.key in self.keys
            and old.key not in self.bound
        ):
            self.gone_unbound.add(old.key)

    def settled(self) -> bool:
        return len(self.bound) + len(self.gone_unbound) >= len(self.keys)


def place_init_pods(simulation: Simulation) -> None:
    """The init pods, scheduled in virtual time; their traces are not kept."""
    scheduler = simulation.scheduler
    while True:
        scheduler.run_due_work()
        trace = scheduler.schedule_one()
        simulation.traces.clear()
        if trace is not None or not scheduler.queue_was_empty:
            continue
        wake = scheduler.next_wakeup()
        if wake is None:
            return
        simulation.clock.set(max(wake, simulation.clock.now()))


def simulation_with_init_pods(workload: Workload, *, seed: int = 0) -> Simulation:
    """A simulation of the workload's nodes with its init pods placed: the measured phase's
    starting point."""
    simulation = new_simulation(
        Manifests(objects=list(workload.init_objects)),
        seed=seed,
        config=workload.config,
        capture_queue=True,
    )
    place_init_pods(simulation)
    return simulation


def run_engine(workload: Workload, *, seed: int = 0, threshold: int | None = None) -> BenchResult:
    with scheduling_collector():
        return _run_engine(workload, seed=seed, threshold=threshold)


def _run_engine(workload: Workload, *, seed: int, threshold: int | None) -> BenchResult:
    simulation = simulation_with_init_pods(workload, seed=seed)
    scheduler, store, clock = simulation.scheduler, simulation.store, simulation.clock
    measured = _MeasuredPods({pod.key for pod in workload.measured_pods})
    store.watch(measured)

    cycle_seconds: list[float] = []
    trace_bytes: list[int] = []
    # Each distinct node order's encoded size, by digest: stored once for the cycles that walk it.
    node_order_bytes: dict[bytes, int] = {}
    json_samples: list[CycleTrace] = []
    trace_seconds = 0.0
    churn_pods = 0
    perf_counter = time.perf_counter
    started = perf_counter()
    clock_base = clock.now() - started
    for pod in workload.measured_pods:
        store.apply(pod)
    next_churn = started + workload.churn_interval
    while not measured.settled():
        now = perf_counter()
        if workload.churn is not None and now >= next_churn:
            store.apply(workload.churn(churn_pods))
            churn_pods += 1
            next_churn += workload.churn_interval
        if clock_base + now > clock.now():
            clock.set(clock_base + now)
        cycle_started = perf_counter()
        scheduler.run_due_work()
        trace = scheduler.schedule_one()
        traced = perf_counter()
        for cycle in simulation.traces:
            trace_bytes.append(len(trace_codec.encode(cycle)))
            digest = trace_codec.node_order_digest(cycle.all_nodes)
            if digest not in node_order_bytes:
                node_order_bytes[digest] = len(trace_codec.encode_node_order(cycle.all_nodes))
            if len(trace_bytes) % JSON_SAMPLE_EVERY == 1:
                json_samples.append(cycle)
        simulation.traces.clear()
        finished = perf_counter()
        trace_seconds += finished - traced
        if trace is not None:
            cycle_seconds.append(finished - cycle_started)
            continue
        if not scheduler.queue_was_empty:
            continue
        wake = scheduler.next_wakeup()
        if wake is None:
            break  # the measured pods left pending cannot progress
        clock.set(max(wake, clock.now()))
    seconds = perf_counter() - started
    result = measured_result(
        workload,
        mode="engine",
        scheduled=len(measured.bound),
        seconds=seconds,
        cycle_seconds=cycle_seconds,
        trace_bytes=trace_bytes,
        shared_trace_bytes=sum(node_order_bytes.values()),
        churn_pods=churn_pods,
        threshold=threshold,
        trace_seconds=trace_seconds,
    )
    json_bytes = [len(json.dumps(cycle.to_json())) for cycle in json_samples]
    result.extra["traceJsonBytesPerCycle"] = (
        round(statistics.fmean(json_bytes)) if json_bytes else 0
    )
    return result


def measured_result(
    workload: Workload,
    *,
    mode: str,
    scheduled: int,
    seconds: float,
    cycle_seconds: list[float],
    trace_bytes: list[int],
    churn_pods: int,
    threshold: int | None,
    trace_seconds: float = 0.0,
    shared_trace_bytes: int = 0,
) -> BenchResult:
    """The report of a measured phase: throughput, cycle latency percentiles, trace size and the
    process's peak RSS; ``threshold`` defaults to the workload's upstream figure. Trace bytes
    per cycle are ``trace_bytes``' mean plus ``shared_trace_bytes`` (what the cycles' bodies
    refer to, stored once: their node orders) spread over them."""
    spec = WORKLOADS.get(workload.name)
    return BenchResult(
        workload=workload.name,
        mode=mode,
        nodes=workload.node_count,
        init_pods=workload.init_pod_count,
        measured_pods=len(workload.measured_pods),
        scheduled=scheduled,
        unschedulable=len(workload.measured_pods) - scheduled,
        seconds=seconds,
        pods_per_second=scheduled / seconds if seconds > 0 else 0.0,
        p50_cycle_ms=statistics.median(cycle_seconds) * 1000 if cycle_seconds else 0.0,
        p99_cycle_ms=percentile(cycle_seconds, 0.99) * 1000,
        peak_rss_mb=peak_rss_mb(),
        trace_bytes_per_cycle=(sum(trace_bytes) + shared_trace_bytes) / len(trace_bytes)
        if trace_bytes
        else 0.0,
        cycles=len(cycle_seconds),
        churn_pods=churn_pods,
        threshold=threshold if threshold is not None else (spec.threshold if spec else 0),
        trace_seconds=trace_seconds,
    )
