"""The scheduler's records: events, Cycle rows (with their node orders) and the pending pods."""

from __future__ import annotations

import functools
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from django.db import connection, transaction
from django.db.models import Field
from django.utils import timezone

from schedviz.cluster.models import (
    Cluster,
    Cycle,
    Event,
    NodeOrder,
    PendingPods,
)
from schedviz.cluster.retention import cycles_prune
from schedviz.scheduler import trace_codec
from schedviz.scheduler.store import Event as SchedulerEvent
from schedviz.scheduler.trace import CycleTrace


def events_create(*, cluster: Cluster, events: Sequence[SchedulerEvent]) -> list[Event]:
    """Stores the events the scheduler recorded, in one insert."""
    rows = []
    for event in events:
        namespace, _, name = event.object.rpartition("/")
        rows.append(
            Event(
                cluster=cluster,
                type=event.type,
                reason=event.reason,
                object_namespace=namespace,
                object_name=name,
                message=event.message,
                scheduler_time=event.time,
            )
        )
    with transaction.atomic():
        return Event.objects.bulk_create(rows)


def _points_duration(milliseconds: Iterable[float]) -> float | None:
    """A trace's attempt time when it has none of its own: its extension points' summed."""
    durations = list(milliseconds)
    return sum(durations) / 1000 if durations else None


def _json_cycle_row(cluster: Cluster, trace: dict[str, Any]) -> list[Any]:
    """A trace given as JSON (imported): stored as such (``_CYCLE_COLUMNS``' values)."""
    namespace, _, name = str(trace["pod"]).rpartition("/")
    points = trace.get("points") or []
    return [
        cluster.pk,
        trace["cycle"],
        namespace,
        name,
        trace.get("profile") or "",
        trace.get("attempt") or 0,
        trace.get("result") or "",
        trace.get("node") or "",
        trace.get("message") or "",
        trace.get("time") or 0.0,
        trace.get("wallTime") or 0.0,
        _points_duration(float(p.get("durationMs") or 0.0) for p in points),
        Cycle.encode_body(trace),
        None,
    ]


def _cycle_row(cluster: Cluster, trace: CycleTrace) -> list[Any]:
    """A trace from the scheduler (``_CYCLE_COLUMNS``' values): its summary columns as
    ``to_json`` gives them, its body encoded by trace_codec (the node order is set by
    ``cycles_create``)."""
    namespace, _, name = trace.pod.rpartition("/")
    return [
        cluster.pk,
        trace.cycle,
        namespace,
        name,
        trace.profile,
        trace.attempt,
        trace.result,
        trace.selected_node,
        trace.message,
        round(trace.time, 6),
        round(trace.wall_time, 6),
        trace.duration
        if trace.duration > 0
        else _points_duration(record.to_json()["durationMs"] for record in trace.points),
        trace_codec.encode(trace),
        None,
    ]


# A batch of Cycle rows is one INSERT of several rows, written once per process: built by the
# ORM (a model instance per row, ``bulk_create``'s per-field preparation) it cost a live runner
# about as much as encoding the bodies. The values are plain (str, int, float, bytes, None).
_CYCLE_COLUMNS = (
    "cluster",
    "number",
    "pod_namespace",
    "pod_name",
    "profile",
    "attempt",
    "result",
    "node",
    "message",
    "scheduler_time",
    "wall_time",
    "duration_seconds",
    "body",
    "node_order",
)
_BODY = _CYCLE_COLUMNS.index("body")
_NODE_ORDER = _CYCLE_COLUMNS.index("node_order")


@functools.cache
def _cycle_insert_sql(rows: int) -> str:
    q = connection.ops.quote_name
    columns = []
    for name in _CYCLE_COLUMNS:
        field = Cycle._meta.get_field(name)
        assert isinstance(field, Field) and field.column
        columns.append(q(field.column))
    row = f"({', '.join(['%s'] * len(columns))})"
    return (
        f"INSERT INTO {q(Cycle._meta.db_table)} ({', '.join(columns)}) "
        f"VALUES {', '.join([row] * rows)}"
    )


def _insert_cycles(rows: Sequence[list[Any]]) -> None:
    fields = [Cycle._meta.get_field(name) for name in _CYCLE_COLUMNS]
    size = max(1, connection.ops.bulk_batch_size(fields, rows))
    body = Cycle._meta.get_field("body")
    assert isinstance(body, Field)
    with connection.cursor() as cursor:
        for start in range(0, len(rows), size):
            chunk = rows[start : start + size]
            params: list[Any] = []
            for row in chunk:
                params.extend(row[:_BODY])
                params.append(body.get_db_prep_value(row[_BODY], connection))
                params.extend(row[_BODY + 1 :])
            cursor.execute(_cycle_insert_sql(len(chunk)), params)


def _node_order_ids(cluster: Cluster, orders: dict[str, tuple[str, ...]]) -> dict[str, int]:
    """The ids of node orders, by digest; those not stored yet are stored (in the caller's
    transaction, with the first cycles that refer to them)."""
    if not orders:
        return {}
    stored = dict(
        NodeOrder.objects.filter(cluster=cluster, digest__in=orders).values_list("digest", "id")
    )
    missing = [
        NodeOrder(cluster=cluster, digest=digest, names=trace_codec.encode_node_order(nodes))
        for digest, nodes in orders.items()
        if digest not in stored
    ]
    for order in NodeOrder.objects.bulk_create(missing):
        stored[order.digest] = order.pk
    return stored


def cycles_create(*, cluster: Cluster, traces: Sequence[CycleTrace | dict[str, Any]]) -> int:
    """Stores cycle traces, in one insert: a ``CycleTrace`` in trace_codec's encoding, with the
    node order it refers to stored once; its ``to_json()`` (an imported trace) as JSON. Returns
    how many rows were stored."""
    rows: list[list[Any]] = []
    orders: dict[str, tuple[str, ...]] = {}
    row_orders: list[tuple[list[Any], str]] = []
    for given in traces:
        if isinstance(given, CycleTrace):
            row = _cycle_row(cluster, given)
            digest = trace_codec.node_order_digest(given.all_nodes).hex()
            orders.setdefault(digest, given.all_nodes)
            row_orders.append((row, digest))
        else:
            row = _json_cycle_row(cluster, given)
        rows.append(row)
    with transaction.atomic():
        # Pruned first: it deletes the node orders the cycles it deletes leave unreferenced.
        cycles_prune(cluster=cluster, incoming=len(rows))
        order_ids = _node_order_ids(cluster, orders)
        for row, digest in row_orders:
            row[_NODE_ORDER] = order_ids[digest]
        if rows:
            _insert_cycles(rows)
    return len(rows)


def pending_pods_record(
    *,
    cluster: Cluster,
    counts: Mapping[str, int],
    queue: dict[str, Any] | None = None,
    scheduler_time: float = 0.0,
    last_cycle: int = 0,
) -> None:
    """Keeps how many pods the runner's queue holds by sub-queue (active, backoff,
    unschedulable, gated), for scheduler_pending_pods on /metrics, and the queue itself at
    ``scheduler_time``, after cycle ``last_cycle``."""
    fields: dict[str, Any] = {
        name: counts.get(name, 0) for name in ("active", "backoff", "unschedulable", "gated")
    }
    fields.update(queue=queue, scheduler_time=scheduler_time, last_cycle=last_cycle)
    # An update, not update_or_create: that reads the row first, the saved queue state with it
    # (the whole queue as JSON, decoded on every batch of cycles for nothing).
    with transaction.atomic():
        if not PendingPods.objects.filter(cluster=cluster).update(
            updated_at=timezone.now(), **fields
        ):
            PendingPods.objects.create(cluster=cluster, **fields)
