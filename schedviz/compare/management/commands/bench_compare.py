"""``manage.py bench_compare [--variants N] [--nodes N] [--pods N] [--timeout S] [--output
json|table] [--keep]``: a batch of comparison variants fanned out, and the wall seconds it took.

It makes a throwaway cluster, starts one comparison run of N variants (the scoring strategies
LeastAllocated, MostAllocated, RequestedToCapacityRatio and a BalancedAllocation-heavy profile,
in turn) over a generated workload of nodes of two sizes and pods of three, and waits until
every variant has finished. In distributed mode (REDIS_URL, DATABASE_URL) the variants go to
the Celery workers as one task each; embedded, to threads of this process. It reports the wall
seconds from the start to the last result, each variant's own engine seconds (wall time inside
its task), and their sum over the wall seconds (with threads of one process these overlap under
the GIL, so only in distributed mode is it how many variants ran at once). Then the cluster and
the run are deleted, unless ``--keep``. See docs/performance.md, "Scale out".
"""

from __future__ import annotations

import json
import sys
import time
from typing import Any

from django.conf import settings
from django.core.management.base import BaseCommand, CommandParser

from schedviz.cluster import services as cluster_services
from schedviz.cluster.models import Cluster
from schedviz.compare import services
from schedviz.compare.models import CompareVariant
from schedviz.compare.services import VariantSpec

CONFIG_HEADER = "apiVersion: kubescheduler.config.k8s.io/v1\nkind: KubeSchedulerConfiguration\n"
STRATEGIES: list[tuple[str, str]] = [
    ("least-allocated", "profiles:\n- schedulerName: default-scheduler\n"),
    (
        "most-allocated",
        "profiles:\n- schedulerName: default-scheduler\n  pluginConfig:\n"
        "  - name: NodeResourcesFit\n    args: {scoringStrategy: {type: MostAllocated}}\n",
    ),
    (
        "requested-to-capacity",
        "profiles:\n- schedulerName: default-scheduler\n  pluginConfig:\n"
        "  - name: NodeResourcesFit\n    args:\n      scoringStrategy:\n"
        "        type: RequestedToCapacityRatio\n        requestedToCapacityRatio:\n"
        "          shape: [{utilization: 0, score: 0}, {utilization: 100, score: 10}]\n",
    ),
    (
        "balanced-heavy",
        "profiles:\n- schedulerName: default-scheduler\n  plugins:\n    score:\n"
        "      enabled: [{name: NodeResourcesBalancedAllocation, weight: 10}]\n",
    ),
]
POD_SIZES = [("100m", "200Mi"), ("500m", "1Gi"), ("1", "2Gi")]
POLL_SECONDS = 0.2


def workload_yaml(nodes: int, pods: int) -> str:
    documents = []
    for i in range(nodes):
        cpu, memory = ("8", "32Gi") if i % 2 else ("4", "16Gi")
        documents.append(
            f"apiVersion: v1\nkind: Node\nmetadata: {{name: node-{i:05d}, labels: "
            f"{{kubernetes.io/hostname: node-{i:05d}}}}}\n"
            f'status: {{allocatable: {{cpu: "{cpu}", memory: {memory}, pods: "110"}}}}\n'
        )
    for i in range(pods):
        cpu, memory = POD_SIZES[i % len(POD_SIZES)]
        documents.append(
            f"apiVersion: v1\nkind: Pod\nmetadata: {{name: pod-{i:05d}}}\n"
            f"spec: {{containers: [{{name: c, image: pause, resources: "
            f'{{requests: {{cpu: "{cpu}", memory: {memory}}}}}}}]}}\n'
        )
    return "---\n".join(documents)


def variant_specs(count: int) -> list[VariantSpec]:
    specs = []
    for index in range(count):
        name, body = STRATEGIES[index % len(STRATEGIES)]
        round_ = index // len(STRATEGIES)
        specs.append(
            VariantSpec(
                name=f"{name}-{round_ + 1}" if round_ else name,
                configuration=CONFIG_HEADER + body,
            )
        )
    return specs


class Command(BaseCommand):
    help = "Fan a batch of comparison variants out over the workers; report the wall seconds."
    requires_system_checks: list[str] = []

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--variants", type=int, default=4, help="variants (4)")
        parser.add_argument("--nodes", type=int, default=100, help="nodes (100)")
        parser.add_argument("--pods", type=int, default=500, help="pods to schedule (500)")
        parser.add_argument("--seed", type=int, default=0)
        parser.add_argument("--timeout", type=float, default=1800.0, help="seconds (1800)")
        parser.add_argument("--output", choices=("json", "table"), default="table")
        parser.add_argument("--keep", action="store_true", help="keep the cluster and the run")

    def handle(self, *args: Any, **options: Any) -> None:
        count, nodes, pods = options["variants"], options["nodes"], options["pods"]
        if not 2 <= count <= services.MAX_VARIANTS or nodes < 1 or pods < 1:
            sys.stderr.write(
                f"--variants must be 2 to {services.MAX_VARIANTS}, --nodes and --pods at least 1\n"
            )
            sys.exit(2)
        cluster = cluster_services.cluster_create(
            name=f"bench-compare-{time.time_ns()}", clock_mode=Cluster.ClockMode.VIRTUAL
        )
        try:
            report = self._measure(cluster, options)
        finally:
            if not options["keep"]:
                cluster_services.cluster_delete(cluster=cluster)
        if options["output"] == "json":
            self.stdout.write(json.dumps(report, indent=1))
        else:
            self.stdout.write(render_table(report))
        if report["failed"]:
            sys.exit(1)

    def _measure(self, cluster: Cluster, options: dict[str, Any]) -> dict[str, Any]:
        text = workload_yaml(options["nodes"], options["pods"])
        started = time.monotonic()
        run = services.compare_run_create(
            cluster=cluster,
            source="manifests",
            manifests=text,
            variants=variant_specs(options["variants"]),
            seed=options["seed"],
        )
        deadline = started + options["timeout"]
        variants = CompareVariant.objects.filter(run=run).order_by("position")
        open_states = [CompareVariant.Status.PENDING, CompareVariant.Status.RUNNING]
        while variants.filter(status__in=open_states).exists():
            if time.monotonic() > deadline:
                raise SystemExit(f"timed out after {options['timeout']} s")
            time.sleep(POLL_SECONDS)
        wall = time.monotonic() - started
        rows: list[dict[str, Any]] = [
            {
                "name": v.name,
                "status": v.status,
                "engineSeconds": (v.result or {}).get("wallSeconds"),
                "cycles": (v.result or {}).get("cycles"),
                "error": v.error or None,
                "worker": v.worker,
            }
            for v in variants
        ]
        engine_seconds = sum(float(r["engineSeconds"] or 0.0) for r in rows)
        return {
            "mode": "embedded threads" if settings.CELERY_TASK_ALWAYS_EAGER else "celery",
            "run": run.id,
            "variants": len(rows),
            "nodes": options["nodes"],
            "pods": options["pods"],
            "wallSeconds": round(wall, 2),
            "engineSecondsSum": round(engine_seconds, 2),
            "concurrency": round(engine_seconds / wall, 2) if wall else None,
            "workers": len({r["worker"] for r in rows}),
            "failed": [r["name"] for r in rows if r["status"] != CompareVariant.Status.SUCCEEDED],
            "perVariant": rows,
        }


def render_table(report: dict[str, Any]) -> str:
    lines = [
        f"mode {report['mode']}: {report['variants']} variants, {report['nodes']} nodes, "
        f"{report['pods']} pods, run by {report['workers']} worker process(es)",
        f"wall {report['wallSeconds']} s; engine seconds summed over the variants "
        f"{report['engineSecondsSum']} s (sum / wall: {report['concurrency']})",
    ]
    for row in report["perVariant"]:
        error = f" {row['error']}" if row["error"] else ""
        lines.append(
            f"  {row['name']:<28} {row['status']:<10} {row['engineSeconds']} s, "
            f"{row['cycles']} cycles, {row['worker']}{error}"
        )
    return "\n".join(lines)
