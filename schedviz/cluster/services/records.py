"""The scheduler's records: events, Cycle rows (with their node orders) and the pending pods."""

from __future__ import annotations

import functools
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from django.db import connection, transaction
from django.db.models import Field, Model
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


# Events and Cycle rows are written in batches of many rows, each batch one INSERT of several
# rows written once per process: built by the ORM (a model instance per row, ``bulk_create``'s
# per-field preparation) a batch of Cycle rows cost a live runner about as much as encoding
# their bodies. The rows' values are given as the database takes them.
@functools.cache
def _insert_sql(model: type[Model], columns: tuple[str, ...], rows: int) -> str:
    q = connection.ops.quote_name
    names = []
    for name in columns:
        field = model._meta.get_field(name)
        assert isinstance(field, Field) and field.column
        names.append(q(field.column))
    row = f"({', '.join(['%s'] * len(names))})"
    return (
        f"INSERT INTO {q(model._meta.db_table)} ({', '.join(names)}) "
        f"VALUES {', '.join([row] * rows)}"
    )


def _insert_rows(
    model: type[Model], columns: tuple[str, ...], rows: Sequence[Sequence[Any]]
) -> None:
    """Inserts ``rows`` (values of ``columns``, in order), as many per statement as the
    database takes."""
    fields = [model._meta.get_field(name) for name in columns]
    size = max(1, connection.ops.bulk_batch_size(fields, rows))
    with connection.cursor() as cursor:
        for start in range(0, len(rows), size):
            chunk = rows[start : start + size]
            cursor.execute(
                _insert_sql(model, columns, len(chunk)), [value for row in chunk for value in row]
            )


def _db_value(model: type[Model], name: str, value: Any) -> Any:
    field = model._meta.get_field(name)
    assert isinstance(field, Field)
    return field.get_db_prep_value(value, connection)


_EVENT_COLUMNS = (
    "cluster",
    "type",
    "reason",
    "object_namespace",
    "object_name",
    "message",
    "scheduler_time",
    "created_at",
)


def events_create(*, cluster: Cluster, events: Sequence[SchedulerEvent]) -> int:
    """Stores the events the scheduler recorded, in one insert; returns how many."""
    created = _db_value(Event, "created_at", timezone.now())
    rows = []
    for event in events:
        namespace, _, name = event.object.rpartition("/")
        rows.append(
            (
                cluster.pk,
                event.type,
                event.reason,
                namespace,
                name,
                event.message,
                event.time,
                created,
            )
        )
    if rows:
        with transaction.atomic():
            _insert_rows(Event, _EVENT_COLUMNS, rows)
    return len(rows)


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
        _db_value(Cycle, "body", Cycle.encode_body(trace)),
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
        _db_value(Cycle, "body", trace_codec.encode(trace)),
        None,
    ]


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
_NODE_ORDER = _CYCLE_COLUMNS.index("node_order")


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
            _insert_rows(Cycle, _CYCLE_COLUMNS, rows)
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
