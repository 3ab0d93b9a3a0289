"""A digest of the traces a workload's run encodes, to show an engine change left them alone.

Engine optimisations must leave every stored trace byte-identical. ``run_engine`` follows the
wall clock, so its traces differ from run to run; this runs a workload in virtual time only
(the init pods, then the measured pods, then a churn pod every ``CHURN_EVERY`` cycles), zeroes
what measures wall time (``wall_time``, ``duration``, the points' and extender calls'
durations) and hashes every cycle's ``trace_codec.encode`` body and each distinct node order's
``encode_node_order``. Equal digests before and after a change: the same bytes were stored.

    .venv/bin/python -m schedviz.bench.trace_digest SchedulingBasic --nodes 5000 --pods 200
"""

from __future__ import annotations

import argparse
import hashlib
import sys
from collections.abc import Sequence

from schedviz.bench.runner import simulation_with_init_pods
from schedviz.bench.workloads import WORKLOADS
from schedviz.scheduler import trace_codec
from schedviz.scheduler.trace import CycleTrace

# A churn pod (workloads that have churn) is created after this many cycles.
CHURN_EVERY = 20


def _without_wall_time(trace: CycleTrace) -> CycleTrace:
    """The trace with every wall-clock measurement zeroed (in place)."""
    trace.wall_time = 0.0
    trace.duration = 0.0
    for record in trace.points:
        record.duration = 0.0
    for call in trace.extenders:
        call.duration = 0.0
    return trace


def trace_digest(
    workload_name: str,
    *,
    nodes: int,
    init_pods: int | None = None,
    pods: int | None = None,
    seed: int = 0,
) -> tuple[str, int]:
    """The SHA-256 of the run's encoded traces and node orders, and the number of cycles."""
    spec = WORKLOADS[workload_name]
    default_init, default_measured = spec.counts(nodes)
    workload = spec.build(
        nodes,
        default_init if init_pods is None else init_pods,
        default_measured if pods is None else pods,
        seed,
    )
    simulation = simulation_with_init_pods(workload, seed=seed)
    scheduler, store, clock = simulation.scheduler, simulation.store, simulation.clock
    for pod in workload.measured_pods:
        store.apply(pod)
    digest = hashlib.sha256()
    orders: set[bytes] = set()
    cycles = churn_pods = 0
    while True:
        if workload.churn is not None and cycles >= (churn_pods + 1) * CHURN_EVERY:
            store.apply(workload.churn(churn_pods))
            churn_pods += 1
        scheduler.run_due_work()
        trace = scheduler.schedule_one()
        for cycle in simulation.traces:
            cycles += 1
            digest.update(trace_codec.encode(_without_wall_time(cycle)))
            order = trace_codec.node_order_digest(cycle.all_nodes)
            if order not in orders:
                orders.add(order)
                digest.update(trace_codec.encode_node_order(cycle.all_nodes))
        simulation.traces.clear()
        if trace is not None or not scheduler.queue_was_empty:
            continue
        wake = scheduler.next_wakeup()
        if wake is None:
            break
        clock.set(max(wake, clock.now()))
    return digest.hexdigest(), cycles


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("workloads", nargs="*", default=list(WORKLOADS), metavar="WORKLOAD")
    parser.add_argument("--nodes", type=int, default=500)
    parser.add_argument("--init-pods", type=int, default=None)
    parser.add_argument("--pods", type=int, default=None)
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args(argv)
    for name in args.workloads:
        hexdigest, cycles = trace_digest(
            name, nodes=args.nodes, init_pods=args.init_pods, pods=args.pods, seed=args.seed
        )
        print(f"{name} nodes={args.nodes} cycles={cycles} sha256={hexdigest}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
