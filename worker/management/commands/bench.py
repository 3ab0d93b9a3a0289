"""``manage.py bench WORKLOAD [--nodes N] [--init-pods N] [--pods N] [--mode engine|e2e]
[--output json|table] [--seed N] [--e2e-time-limit SECONDS]``: upstream's scheduler_perf
workloads, measured.

``engine`` runs the scheduler alone with full traces (schedviz.bench.runner); ``e2e`` is the
whole live loop (worker/bench_e2e.py: a cluster in the configured database, the runner, Cycle rows,
10 websocket clients), with the same JSON names plus its own (``target``, ``ws*``). Counts
default to upstream's variant for the node count (5000 nodes unless told). An unknown workload,
or an e2e run the live system cannot do (no runner starts, a refused apply), exits with status 2.
"""

from __future__ import annotations

import json
import sys
from typing import Any

from django.core.management.base import BaseCommand, CommandParser

from schedviz.bench.manifests import UnsupportedObjectError
from schedviz.bench.runner import BenchResult, run_engine
from schedviz.bench.workloads import DEFAULT_NODES, WORKLOADS
from schedviz.cluster.embedded import embedded_database_ready
from schedviz.cluster.services import ServiceError
from worker.bench_e2e import TIME_LIMIT_SECONDS, E2EError, run_e2e


def _throughput(result: BenchResult) -> str:
    verdict = "meets" if result.meets_threshold else "below"
    line = f"{result.pods_per_second:.1f} pods/s ({verdict} upstream's {result.threshold} pods/s"
    if "target" in result.extra:
        reached = "reached" if result.extra["meetsTarget"] else "NOT reached"
        line += f"; e2e target {result.extra['target']:g} pods/s {reached}"
    return line + ")"


def _mode_rows(result: BenchResult) -> list[tuple[str, str]]:
    if result.mode == "engine":
        return [
            (
                "traces",
                f"{result.trace_bytes_per_cycle / 1024:.1f} KiB per cycle encoded "
                f"({result.extra['traceJsonBytesPerCycle'] / 1024:.1f} KiB of JSON, sampled), "
                f"{result.trace_seconds:.2f} s of the phase encoding them",
            )
        ]
    extra = result.extra
    return [
        (
            "traces",
            f"{result.trace_bytes_per_cycle / 1024:.1f} KiB stored per cycle "
            f"({extra['traceJsonBytesPerCycle'] / 1024:.1f} KiB of JSON), "
            f"database {extra['database']}",
        ),
        (
            "websocket clients",
            f"{extra['wsClients']} clients, {extra['wsMessages']} messages "
            f"({extra['wsMessagesPerClientMin']}-{extra['wsMessagesPerClientMax']} each), "
            f"{extra['wsCyclesCoalesced']} cycle summaries coalesced, "
            f"{extra['wsCyclesLost']} lost",
        ),
    ]


def render_table(result: BenchResult) -> str:
    rows = [
        ("workload", result.workload),
        ("mode", result.mode),
        (
            "nodes / init pods / measured pods",
            f"{result.nodes} / {result.init_pods} / {result.measured_pods}",
        ),
        ("scheduled / unschedulable", f"{result.scheduled} / {result.unschedulable}"),
        *([("phase ended", str(result.extra["ended"]))] if "ended" in result.extra else []),
        (
            "measured phase",
            f"{result.seconds:.2f} s, {result.cycles} cycles, {result.churn_pods} churn pods",
        ),
        ("throughput", _throughput(result)),
        ("cycle latency", f"p50 {result.p50_cycle_ms:.2f} ms, p99 {result.p99_cycle_ms:.2f} ms"),
        *_mode_rows(result),
        ("peak RSS", f"{result.peak_rss_mb:.0f} MB"),
    ]
    width = max(len(label) for label, _ in rows)
    return "\n".join(f"{label.ljust(width)}  {value}" for label, value in rows)


class Command(BaseCommand):
    help = "Run one of upstream's scheduler_perf workloads and report pods/s, latency and memory."
    requires_system_checks: list[str] = []
    requires_migrations_checks = False

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("workload", metavar="WORKLOAD", help=", ".join(WORKLOADS))
        parser.add_argument("--nodes", type=int, default=DEFAULT_NODES, help="nodes (5000)")
        parser.add_argument(
            "--init-pods", type=int, default=None, help="pods placed before measuring"
        )
        parser.add_argument("--pods", type=int, default=None, help="measured pods")
        parser.add_argument("--mode", choices=("engine", "e2e"), default="engine")
        parser.add_argument("--output", choices=("json", "table"), default="json")
        parser.add_argument("--seed", type=int, default=0, help="seed of names and tie-breaks")
        parser.add_argument(
            "--e2e-time-limit",
            type=float,
            default=TIME_LIMIT_SECONDS,
            help="e2e: end the measured phase after this many seconds even if pods are pending",
        )

    def handle(self, *args: Any, **options: Any) -> None:
        spec = WORKLOADS.get(options["workload"])
        if spec is None:
            sys.stderr.write(
                f"unknown workload {options['workload']!r}; workloads: {', '.join(WORKLOADS)}\n"
            )
            sys.exit(2)
        nodes = options["nodes"]
        default_init, default_measured = spec.counts(nodes)
        init_pods = options["init_pods"] if options["init_pods"] is not None else default_init
        pods = options["pods"] if options["pods"] is not None else default_measured
        if nodes < 1 or init_pods < 0 or pods < 1:
            sys.stderr.write("--nodes and --pods must be at least 1, --init-pods at least 0\n")
            sys.exit(2)
        workload = spec.build(nodes, init_pods, pods, options["seed"])
        if options["mode"] == "engine":
            result = run_engine(workload, seed=options["seed"], threshold=spec.threshold)
        else:
            embedded_database_ready()  # a fresh clone: no serve has migrated it yet
            try:
                result = run_e2e(
                    workload,
                    seed=options["seed"],
                    threshold=spec.threshold,
                    time_limit=options["e2e_time_limit"],
                )
            except (E2EError, UnsupportedObjectError, ServiceError) as error:
                sys.stderr.write(f"e2e: {error}\n")
                sys.exit(2)
        if options["output"] == "json":
            self.stdout.write(json.dumps(result.to_json(), indent=1))
        else:
            self.stdout.write(render_table(result))
