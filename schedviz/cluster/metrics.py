"""kube-scheduler's metrics, derived from the database, in the Prometheus text format.

Mirrors pkg/scheduler/metrics/metrics.go: the same names, label names, label values and bucket
layouts, plus a ``cluster`` label (the cluster's id: one site serves many clusters, and ids do not
reveal what their owners named them). Runners live in other processes, so nothing is counted in
memory as upstream does; every scrape reads what the runners wrote:

- ``scheduler_schedule_attempts_total`` and ``scheduler_scheduling_attempt_duration_seconds``:
  Cycle rows grouped by cluster, profile and result, buckets counted in SQL (one query).
- ``scheduler_plugin_execution_duration_seconds``: the extension points of the last
  ``PLUGIN_WINDOW`` cycles of each cluster (their trace bodies, decoded once per process and
  kept); upstream samples 10% of cycles instead.
- ``scheduler_pending_pods``: the PendingPods row the runner writes with each batch of Cycle
  rows (the size of its queue then; the last runner's, once none runs).
- ``schedviz_runner_up``: whether a runner holds the cluster's Lease and has renewed it in time.

A cycle still waiting at Permit has no result yet and is left out, as upstream counts an
attempt when it ends. The exposition format is written here rather than with prometheus_client:
the values are computed per scrape, not kept in a registry.
"""

from __future__ import annotations

import math
import threading
from collections import defaultdict
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from datetime import timedelta

from django.db.models import Count, Q, Sum
from django.utils import timezone

from schedviz.cluster.models import Cluster, Cycle, Lease, PendingPods, decode_body_points
from schedviz.scheduler.trace import (
    RESULT_ERROR,
    RESULT_SCHEDULED,
    RESULT_UNSCHEDULABLE,
)

CONTENT_TYPE = "text/plain; version=0.0.4; charset=utf-8"

# The cycles per cluster whose extension points make the plugin histogram.
PLUGIN_WINDOW = 1000

# schedviz's cycle results -> upstream's `result` label (metrics.PodScheduled & co).
RESULT_LABELS = {
    RESULT_SCHEDULED: "scheduled",
    RESULT_UNSCHEDULABLE: "unschedulable",
    RESULT_ERROR: "error",
}


def exponential_buckets(start: float, factor: float, count: int) -> list[float]:
    """component-base's ExponentialBuckets, multiplied the same way so the bounds are equal."""
    buckets = []
    for _ in range(count):
        buckets.append(start)
        start *= factor
    return buckets


ATTEMPT_BUCKETS = exponential_buckets(0.001, 2, 15)
PLUGIN_BUCKETS = exponential_buckets(0.00001, 1.5, 20)

Labels = tuple[tuple[str, str], ...]


@dataclass
class Histogram:
    buckets: Sequence[float]
    counts: list[int] = field(default_factory=list)
    total: float = 0.0
    count: int = 0

    def __post_init__(self) -> None:
        self.counts = self.counts or [0] * len(self.buckets)

    def observe(self, value: float, times: int = 1) -> None:
        for index, bound in enumerate(self.buckets):
            if value <= bound:
                self.counts[index] += times
        self.total += value * times
        self.count += times


# ---------------------------------------------------------------------------------------------
# The text format


def _escape_help(text: str) -> str:
    return text.replace("\\", "\\\\").replace("\n", "\\n")


def _escape(value: str) -> str:
    return _escape_help(value).replace('"', '\\"')


def _number(value: float) -> str:
    if math.isinf(value):
        return "+Inf" if value > 0 else "-Inf"
    return repr(float(value)) if not float(value).is_integer() else str(int(value))


def _sample(name: str, labels: Labels, value: float) -> str:
    if not labels:
        return f"{name} {_number(value)}"
    pairs = ",".join(f'{key}="{_escape(val)}"' for key, val in labels)
    return f"{name}{{{pairs}}} {_number(value)}"


def _header(name: str, kind: str, help_text: str) -> list[str]:
    return [f"# HELP {name} {_escape_help(help_text)}", f"# TYPE {name} {kind}"]


def _simple(name: str, kind: str, help_text: str, samples: Iterable[tuple[Labels, float]]) -> str:
    lines = _header(name, kind, help_text)
    lines += [_sample(name, labels, value) for labels, value in samples]
    return "\n".join(lines)


def _histograms(name: str, help_text: str, series: Iterable[tuple[Labels, Histogram]]) -> str:
    lines = _header(name, "histogram", help_text)
    for labels, histogram in series:
        for bound, count in zip(histogram.buckets, histogram.counts, strict=True):
            lines.append(_sample(f"{name}_bucket", (*labels, ("le", _number(bound))), count))
        lines.append(_sample(f"{name}_bucket", (*labels, ("le", "+Inf")), histogram.count))
        lines.append(_sample(f"{name}_sum", labels, histogram.total))
        lines.append(_sample(f"{name}_count", labels, histogram.count))
    return "\n".join(lines)


# ---------------------------------------------------------------------------------------------
# Cycle rows, aggregated in SQL


def _attempts() -> tuple[list[tuple[Labels, float]], list[tuple[Labels, Histogram]]]:
    buckets = {
        f"le{index}": Count("id", filter=Q(duration_seconds__lte=bound))
        for index, bound in enumerate(ATTEMPT_BUCKETS)
    }
    rows = (
        Cycle.objects.filter(result__in=list(RESULT_LABELS))
        .values("cluster_id", "profile", "result")
        .annotate(
            attempts=Count("id"),
            timed=Count("duration_seconds"),
            seconds=Sum("duration_seconds"),
            **buckets,
        )
        .order_by("cluster_id", "profile", "result")
    )
    counters: list[tuple[Labels, float]] = []
    histograms: list[tuple[Labels, Histogram]] = []
    for row in rows:
        labels = (
            ("cluster", str(row["cluster_id"])),
            ("profile", row["profile"]),
            ("result", RESULT_LABELS[row["result"]]),
        )
        counters.append((labels, row["attempts"]))
        # Rows written before durations were recorded are counted but not timed.
        histogram = Histogram(
            ATTEMPT_BUCKETS,
            counts=[row[bucket] for bucket in buckets],  # type: ignore[literal-required]
            total=row["seconds"] or 0.0,
            count=row["timed"],
        )
        histograms.append((labels, histogram))
    return counters, histograms


# ---------------------------------------------------------------------------------------------
# Trace bodies of the newest cycles, decoded once per process

# (extension point, plugin, code, seconds per call, calls, rejected calls)
PointSample = tuple[str, str, str, float, int, int]

# Cycle id -> its points: a cycle's trace does not change once it has a result.
_points_cache: dict[int, tuple[PointSample, ...]] = {}
_points_lock = threading.Lock()


def _points(body: bytes) -> tuple[PointSample, ...]:
    points = []
    for point in decode_body_points(body):
        calls = max(1, int(point.get("calls") or 1))
        seconds = float(point.get("durationMs") or 0.0) / 1000 / calls
        rejected = int(point.get("rejected") or 0)
        points.append((point["point"], point["plugin"], point["code"], seconds, calls, rejected))
    return tuple(points)


def _window(cluster_ids: Sequence[int]) -> dict[int, list[tuple[PointSample, ...]]]:
    """The newest PLUGIN_WINDOW finished cycles of each cluster, newest first; only the bodies
    an earlier scrape has not read are read (one query per cluster, at most PLUGIN_WINDOW)."""
    window: dict[int, list[tuple[PointSample, ...]]] = {}
    kept: set[int] = set()
    for cluster_id in cluster_ids:
        ids = list(
            Cycle.objects.filter(cluster_id=cluster_id, result__in=list(RESULT_LABELS))
            .order_by("-number")
            .values_list("id", flat=True)[:PLUGIN_WINDOW]
        )
        kept.update(ids)
        with _points_lock:
            missing = [cycle_id for cycle_id in ids if cycle_id not in _points_cache]
        bodies = Cycle.objects.filter(id__in=missing).values_list("id", "body")
        read = {cycle_id: _points(bytes(body)) for cycle_id, body in bodies.iterator()}
        with _points_lock:
            _points_cache.update(read)
            window[cluster_id] = [_points_cache[i] for i in ids if i in _points_cache]
    # Cycles that left every window (newer ones came, or they were deleted) are forgotten.
    with _points_lock:
        for cycle_id in _points_cache.keys() - kept:
            del _points_cache[cycle_id]
    return window


def _plugin_histograms(
    window: dict[int, list[tuple[PointSample, ...]]],
) -> list[tuple[Labels, Histogram]]:
    series: dict[Labels, Histogram] = defaultdict(lambda: Histogram(PLUGIN_BUCKETS))
    for cluster_id, cycles in sorted(window.items()):
        for cycle in cycles:
            for point, plugin, code, seconds, calls, rejected in cycle:
                base = (("cluster", str(cluster_id)), ("extension_point", point))
                # Filter and Score sum over nodes; upstream observes each node's call, with
                # Success for the nodes that passed.
                passed = calls - rejected
                if passed:
                    status = "Success" if rejected else code
                    series[(*base, ("plugin", plugin), ("status", status))].observe(seconds, passed)
                if rejected:
                    series[(*base, ("plugin", plugin), ("status", code))].observe(seconds, rejected)
    return sorted(series.items())


def _pending() -> list[tuple[Labels, float]]:
    samples: list[tuple[Labels, float]] = []
    for row in PendingPods.objects.order_by("cluster_id"):
        for queue in ("active", "backoff", "unschedulable", "gated"):
            samples.append(
                ((("cluster", str(row.cluster_id)), ("queue", queue)), getattr(row, queue))
            )
    return samples


def _runners_up(cluster_ids: Sequence[int]) -> list[tuple[Labels, float]]:
    now = timezone.now()
    held = {
        lease.cluster_id
        for lease in Lease.objects.exclude(holder="")
        if lease.renewed_at is not None
        and lease.renewed_at + timedelta(seconds=lease.duration_seconds) >= now
    }
    return [
        ((("cluster", str(cluster_id)),), 1 if cluster_id in held else 0)
        for cluster_id in cluster_ids
    ]


# ---------------------------------------------------------------------------------------------
# The page


def metrics_text() -> str:
    """Every metric, in the Prometheus text exposition format (version 0.0.4)."""
    counters, attempt_histograms = _attempts()
    cluster_ids = list(Cluster.objects.order_by("id").values_list("id", flat=True))
    window = _window(cluster_ids)
    families = [
        _simple(
            "scheduler_schedule_attempts_total",
            "counter",
            "Number of attempts to schedule pods, by the result. 'unschedulable' means a pod could "
            "not be scheduled, while 'error' means an internal scheduler problem.",
            counters,
        ),
        _histograms(
            "scheduler_scheduling_attempt_duration_seconds",
            "Scheduling attempt latency in seconds (scheduling algorithm + binding)",
            attempt_histograms,
        ),
        _simple(
            "scheduler_pending_pods",
            "gauge",
            "Number of pending pods, by the queue type. 'active' means number of pods in "
            "activeQ; 'backoff' means number of pods in backoffQ; 'unschedulable' means number "
            "of pods in unschedulablePods that the scheduler attempted to schedule and failed; "
            "'gated' is the number of unschedulable pods that the scheduler never attempted to "
            "schedule because they are gated. schedviz: as the cluster's runner last wrote it (it "
            "writes it with each batch of Cycle rows).",
            _pending(),
        ),
        _histograms(
            "scheduler_plugin_execution_duration_seconds",
            "Duration for running a plugin at a specific extension point. schedviz: over the "
            f"last {PLUGIN_WINDOW} cycles of each cluster; Filter and Score calls are the "
            "node-summed time shared evenly between the nodes.",
            _plugin_histograms(window),
        ),
        _simple(
            "schedviz_runner_up",
            "gauge",
            "Whether a runner holds the cluster's lease and has renewed it in time (1) or not (0).",
            _runners_up(cluster_ids),
        ),
    ]
    return "\n".join(families) + "\n"
