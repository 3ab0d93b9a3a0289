"""docs/performance.md from a series of benchmark runs (``scripts/bench-all`` writes them).

A series is a folder of JSON results, one per run: ``<mode>-<workload>.json`` as ``manage.py
bench --output json`` prints it (mode ``engine`` or ``e2e``) and ``go-<workload>.json`` as the
real kube-scheduler's benchmark (gobench: upstream's ``scheduler.New`` and ``ScheduleOne`` loop
over a fake clientset, the same nodes and pods) prints it, each beside a ``.load`` file holding
the machine's 1-minute load average when the run started. The Go figure of a workload is the
ratio's denominator for both modes; a workload without one says "not measured".

    python -m schedviz.bench.report RESULTS OUT --nodes N --workloads "A B" --modes "engine e2e"
        --command "..." --runs "..." --commit SHA [--sizes "..."] [--append] [--note TEXT]
        [--go-maxprocs N]
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any

NOT_MEASURED = "not measured"

# What still holds a workload below the real scheduler (the ratio's "why"), per mode, from
# profiles of the engine (cProfile over the measured phase) and of the e2e loop. Shown for
# every row of a report whose ratio is below 1.0.
WHAT_LIMITS: dict[str, dict[str, str]] = {
    "SchedulingBasic": {
        "engine": (
            "one Python thread for what Go spreads over 16 goroutines (cProfile of the measured "
            "phase: PreScore and Score over a quarter, the trace's encoding (msgpack, zstd), "
            "PreFilter and the filter walk about a tenth each, the controllers watching each "
            "pod event and the reservoir draw a twentieth each: every node scores the same "
            "here, so the draw walks hundreds of tied nodes a cycle)"
        ),
        "e2e": (
            "the database side of every pod on the same interpreter as the scheduling (py-spy "
            "on the runner thread, SchedulingBasic's measured phase: the engine's cycles about "
            "two fifths of its wall time, writing Cycle rows a sixth (encoding them half of "
            "that), following the change log an eighth (decoding the pods the services wrote "
            "about half of that), the group commits of binds an eighth (a third of it waiting "
            "for SQLite's write lock while the services write a batch of pods); with --gil: the "
            "runner holds the GIL a little over half the time, the services, the server loop "
            "and the clients about a quarter, so the runner waits for it as much as it works "
            "without it)"
        ),
    },
    "SchedulingNodeAffinity": {
        "engine": (
            "as SchedulingBasic: NodeAffinity's Filter is column-wise (once per zone value), "
            "what remains is the per-cycle Python around it"
        ),
        "e2e": "as SchedulingBasic's e2e",
    },
    "TopologySpreading": {
        "engine": "as SchedulingBasic (PodTopologySpread's counts are columns)",
        "e2e": "as SchedulingBasic's e2e",
    },
    "PreferredTopologySpreading": {
        "engine": "as SchedulingBasic (PodTopologySpread's counts are columns)",
        "e2e": "as SchedulingBasic's e2e",
    },
    "SchedulingPodAntiAffinity": {
        "engine": "InterPodAffinity's PreFilter/PreScore over the existing pods' terms",
        "e2e": "as SchedulingBasic's e2e",
    },
    "PreemptionAsync": {
        "engine": (
            "the measured pods' cycles as SchedulingBasic's, plus every 200 ms (wall clock) a "
            "priority-10 churn pod that is popped first, fails Filter on all 5000 nodes and "
            "preempts (about 15-20 ms a cycle: the filter walk, the FitError message, PostFilter's "
            "dry run over some 500 nodes from a random offset and the choice among 500 "
            "candidates). The dry run keeps what it worked out on a node (lower-priority pods, "
            "requests without them, victims for a preemptor asking as much) until the node "
            "changes, so only nodes not seen unchanged by an earlier churn pod are worked out "
            "afresh; the filters that read the node alone still run on each"
        ),
        "e2e": (
            "as SchedulingBasic's e2e, plus the churn: every 200 ms a priority-10 pod fails "
            "Filter on all 5000 nodes and preempts (15-20 ms of engine a cycle, its status, "
            "its victim's and the deletion written through the database), and SQLite's one "
            "writer: while the services apply a batch of 500 measured pods (0.2-0.45 s each, "
            "its transaction holding the write lock) or a churn pod (25-30 ms, most of it "
            "waiting for the GIL between its 7 statements), the runner's writes wait (py-spy "
            "with --gil: the runner holds the GIL about 55 % of the measured phase, the other "
            "threads about 16 %, nobody the rest); a slower stretch of the machine also means "
            "more churn pods per measured pod, the churn being paced by the wall clock"
        ),
    },
    "Unschedulable": {
        "engine": (
            "every 200 ms a 9-cpu churn pod is rejected by all 5000 nodes (about 12 ms of "
            "CPU a cycle: Filter classes the nodes at once and the diagnosis, the FitError "
            "message and the trace's status column are worked out per distinct status, but "
            "the NodeToStatus map, the trace's per-node outcomes and PostFilter's pass over "
            "the rejected nodes still hold or walk an entry per node); the measured pods' "
            "cycles cost as SchedulingBasic's"
        ),
        "e2e": "as SchedulingBasic's e2e, plus the churn pods' Cycle rows (5000 nodes each)",
    },
}


@dataclass(frozen=True)
class Run:
    result: dict[str, Any]
    load: str


def read_run(results: Path, name: str) -> Run | None:
    """``name``'s result and load from a series folder; None when it did not run."""
    path = results / f"{name}.json"
    if not path.is_file() or not path.stat().st_size:
        return None
    load_path = results / f"{name}.load"
    load = load_path.read_text().strip() if load_path.is_file() else "-"
    return Run(json.loads(path.read_text()), load)


def ratio(schedviz: float, go: float | None) -> float | None:
    return schedviz / go if go else None


def e2e_target(result: dict[str, Any], go: Run | None) -> tuple[float, bool]:
    """The e2e target in pods/s and whether the run met it: half of the real scheduler's figure
    on the same workload, or half of upstream's threshold (the bench's own) without a Go run."""
    if go is None:
        return float(result["target"]), bool(result["meetsTarget"])
    target = round(float(go.result["podsPerSecond"]) / 2, 1)
    return target, float(result["podsPerSecond"]) >= target


def table_row(run: Run, mode: str, go: Run | None) -> str:
    r = run.result
    meets = "yes" if r["meetsThreshold"] else "no"
    trace = f"{r['traceBytesPerCycle'] / 1024:.1f} ({r['traceJsonBytesPerCycle'] / 1024:.0f})"
    if mode == "e2e":
        target_pods, met = e2e_target(r, go)
        target = f"{target_pods:g}"
        reached = "yes" if met else "**no**"
        clients = f"{r['wsClients']} x {r['wsMessagesPerClientMin']}, {r['wsCyclesLost']} lost"
        if r.get("wsCloseTimeouts"):
            clients += f", {r['wsCloseTimeouts']} slow to close"
    else:
        target = reached = clients = "-"
    if go is None:
        go_figure, go_load, ratio_text = NOT_MEASURED, "-", "-"
    else:
        go_pods = float(go.result["podsPerSecond"])
        go_figure, go_load = f"{go_pods:.1f}", go.load
        value = ratio(float(r["podsPerSecond"]), go_pods)
        ratio_text = f"**{value:.2f}**" if value is not None else "-"
    return (
        f"| {r['workload']} | {mode} | {r['nodes']} | {r['initPods']} | {r['measuredPods']} "
        f"| {r['scheduled']} | {r['seconds']:.1f} | **{r['podsPerSecond']:.1f}** "
        f"| {go_figure} | {ratio_text} | {r['threshold']} | {meets} | {target} | {reached} "
        f"| {r['p50CycleMs']:.1f} | {r['p99CycleMs']:.1f} | {trace} | {r['peakRssMb']:.0f} "
        f"| {clients} | {run.load} | {go_load} |"
    )


HEADER = """# Performance: the engine and the whole loop beside the real kube-scheduler

Generated by `scripts/bench-all` (`manage.py bench`, each workload in each mode in a process
of its own, and the real kube-scheduler on the same workload just before; the page is written by
`schedviz/bench/report.py`). **engine**: the scheduler alone, every cycle's trace encoded as
the live system stores it (`trace_codec.encode`, docs/trace-format.md "Storage") inside the
timed cycle (`schedviz/bench/runner.py`). **e2e**: the whole live loop
(`worker/bench_e2e.py`): a cluster in the database, objects sent through the services as
JSON, the runner binding through the database and writing Cycle rows, 10 websocket clients
connected to the cluster's group. The workloads, their templates and counts are described in
`schedviz/bench/workloads.py`.

**Go**: kube-scheduler v1.34.1 itself on the same machine (gobench: upstream's `scheduler.New`
with the v1 default configuration, parallelism 16, the 1.34 feature gates, its queue, cache,
framework and every default plugin, the `ScheduleOne` loop, over a client-go fake clientset that
plays the API server; the same nodes and pods, churn every 200 ms), run with `GOMAXPROCS` cores
(one, as schedviz's one thread, unless the section says otherwise). Its binary is not part of
the project: `GOBENCH` names it (see `scripts/bench-all`); without it the column says
"not measured". *ratio* is schedviz's pods/s over Go's, from runs back to back: the machine is
shared, so read ratios rather than absolute figures, with the load of each run beside them.
Upstream's thresholds are the 2026 CI figures of kubernetes/kubernetes
test/integration/scheduler_perf for the 5000-node variants (measured on other machines): the
target at 5000 nodes, only a reference at other sizes. The e2e target is half of the real
scheduler's pods/s on the same workload in the same series (half of upstream's threshold when Go
was not measured).

Columns: *meets* compares pods/s with upstream's threshold, *target met* an e2e row with its
target. *trace KiB/cycle*: the trace as stored, per cycle (engine: as encoded; e2e: the Cycle row's
body), the node orders the bodies refer to counted once over the cycles; in parentheses the
documented JSON it reads back as, sampled on every 100th cycle. *clients*: e2e, the 10
websocket clients times the messages each received, and the stored cycles a client got neither
a summary of nor a count as coalesced (lost). *load* and *Go load*: the machine's 1-minute load
average when the schedviz run and the Go run started (2 cores, shared).
"""

# Written under every report (the way the e2e mode runs; worker/bench_e2e.py says the same).
HOW_E2E_RUNS = """
### How e2e runs

`worker/bench_e2e.py`, in one process, the way the embedded server runs:

- **database**: the configured one; here SQLite (a fresh file per run, WAL, `synchronous=NORMAL`,
  the embedded default). `DATABASE_URL` (PostgreSQL) was not measured.
- **writes**: nodes and init pods in one apply, the measured pods in batches of 500 and each
  churn pod on its own, as JSON `kind: List` text to `services.manifests_apply` (the service of
  `POST /api/clusters/<id>/apply`: parsing, validation, admission, rows and Change rows), called
  from the server's event loop through `sync_to_async` as a request is. The creation of the
  measured pods is inside the timed phase, as upstream's `createPods` is.
- **runner**: started by `worker/dispatch.py` on the first commit, as a request starts it: a
  thread of the process publishing through the server's loop; live clock at speed 1. It binds
  through `services.pod_bind` (compare-and-set; several pods' binds group-committed in one
  lease-fenced transaction, docs/live-system.md "Binding"), writes Cycle rows in batches (every
  50 cycles or 200 ms: `trace_codec.encode`, and a `NodeOrder` row the first time a node order
  is seen) and publishes.
- **10 websocket clients**: real ASGI connections to `schedviz.asgi.application` (origin check,
  session auth, URL router, `webui.consumers.ClusterConsumer`) on the server's event loop, with
  `?format=json` as scripts connect; no TCP socket or websocket framing, and not the dashboard's
  HTML format (which re-renders node cards per browser and is not measured here). The in-memory
  channel layer carries the group messages. Each client counts what it receives; *lost* counts
  stored cycles a client got neither a summary of nor a count as coalesced by the publisher: 0 in
  every run (the publisher coalesced nothing either: fewer than 200 cycles per 250 ms).
- **timing**: from sending the first batch of measured pods until the database holds no unbound
  measured pod (polled every 50 ms). Cycle latency is `Cycle.duration_seconds` (pop to end of
  binding, the bind transaction included, the trace's encoding not); engine's includes the
  trace's encoding and no database.
- **peak RSS** is the whole process: server loop, consumers, runner, and the workload built in
  memory. In distributed mode (`REDIS_URL`) the runner would be a Celery worker's and its memory
  not counted; not measured here.
"""

COLUMNS = (
    "| workload | mode | nodes | init pods | measured pods | scheduled | seconds | pods/s "
    "| Go pods/s | ratio | upstream pods/s | meets | e2e target pods/s | target met "
    "| p50 cycle ms | p99 cycle ms | trace KiB/cycle | peak RSS MB | clients | load | Go load |"
)


def section(
    results: Path,
    *,
    nodes: int,
    sizes: str,
    workloads: list[str],
    modes: list[str],
    commit: str,
    runs: str,
    command: str,
    go_maxprocs: int,
    note: str,
) -> str:
    rows: list[str] = []
    limits: list[str] = []
    go_measured = False
    for workload in workloads:
        go = read_run(results, f"go-{workload}")
        go_measured = go_measured or go is not None
        for mode in modes:
            run = read_run(results, f"{mode}-{workload}")
            if run is None:
                continue
            rows.append(table_row(run, mode, go))
            value = (
                ratio(float(run.result["podsPerSecond"]), float(go.result["podsPerSecond"]))
                if go is not None
                else None
            )
            if value is not None and value < 1.0:
                why = WHAT_LIMITS.get(workload, {}).get(mode, "not profiled")
                limits.append(f"- **{workload}**, {mode} ({value:.2f} of Go): {why}.")
    go_line = (
        f"- Go: kube-scheduler v1.34.1 (gobench), GOMAXPROCS={go_maxprocs}"
        if go_measured
        else "- Go: not measured (no `GOBENCH`)"
    )
    text = (
        f"""
## {nodes} nodes: {sizes}

- commit {commit}, {runs}
- command: `{command}`
{go_line}

{COLUMNS}
|{"---|" * 21}
"""
        + "\n".join(rows)
        + "\n"
    )
    if limits:
        text += "\n### Below the real scheduler: what limits each\n\n" + "\n".join(limits) + "\n"
    if note.strip():
        text += "\n" + note.strip() + "\n"
    return text


def machine_line() -> str:
    cpu = "unknown CPU"
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                cpu = line.split(":", 1)[1].strip()
                break
    except OSError:
        pass
    return f"- machine: {os.cpu_count()} cores, {cpu}, Python {platform.python_version()}\n"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("results", type=Path)
    parser.add_argument("out", type=Path)
    parser.add_argument("--nodes", type=int, required=True)
    parser.add_argument("--sizes", default="upstream's counts")
    parser.add_argument("--workloads", required=True)
    parser.add_argument("--modes", required=True)
    parser.add_argument("--commit", required=True)
    parser.add_argument("--runs", required=True)
    parser.add_argument("--command", required=True)
    parser.add_argument("--go-maxprocs", type=int, default=1)
    parser.add_argument("--note", default="")
    parser.add_argument("--append", action="store_true")
    args = parser.parse_args(argv)
    text = section(
        args.results,
        nodes=args.nodes,
        sizes=args.sizes,
        workloads=args.workloads.split(),
        modes=args.modes.split(),
        commit=args.commit,
        runs=args.runs,
        command=args.command,
        go_maxprocs=args.go_maxprocs,
        note=args.note,
    )
    if args.append and args.out.exists():
        # The new section goes above "How e2e runs" (and whatever was written below it).
        kept, how, rest = args.out.read_text().partition(HOW_E2E_RUNS)
        args.out.write_text(kept + text + (how + rest if how else HOW_E2E_RUNS))
    else:
        args.out.write_text(HEADER + "\n" + machine_line() + text + HOW_E2E_RUNS)
    print(f"wrote {args.out}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
