"""The stored form of a cycle trace: compact, columnar, binary.

A schedviz addition: upstream keeps no record of a scheduling cycle (see trace.py), so nothing
mirrors this. The documented JSON (docs/trace-format.md) repeats a node's name and a dict per
plugin for every node a filter ran on, every node never evaluated, every scored node: about
420 KB per cycle at 5000 nodes, whose building and serialising cost more than the cycle itself.
This encoding keeps the columns ``CycleTrace`` already holds, and the JSON is produced on read
by decoding into a ``CycleTrace`` and calling its ``to_json``, which stays the one definition of
the documented format.

A body is::

    marker (1 byte) | node order digest (16 bytes) | zstd (level 1) of the msgpack payload

- the marker: ``FORMAT_MSGPACK_ZSTD`` (0x02). Bodies written before it compressed the payload
  with zlib at level 1 (``FORMAT_MSGPACK_ZLIB``, 0x01) and still read. A zlib stream starts with
  0x78, so a reader tells these formats from the zlib JSON stored before them by the first
  byte;
- the node order: ``trace.all_nodes``, the snapshot's walking order, is not in the body. The
  body names it by a digest (BLAKE2b, 16 bytes, of the msgpack array of the names), and node
  names in the payload are their index in it, or the name itself when the order does not hold
  it (a PreFilter result may name a node that does not exist). The order is shared between
  cycles and replaced only when nodes come or go, so it is stored once per distinct order
  (``encode_node_order``: the msgpack array, zlib) and handed to ``decode``;
- the payload: one msgpack array, its fields by position (``_Field``). Statuses are in a table
  of ``[plugin, code, reasons]`` and referenced by position plus one (0: no status), so the
  thousands of nodes one plugin rejected for one reason share one row. Filter outcomes are
  three columns aligned with the nodes in the order they were filtered (node, plugins passed,
  status; the status column is a lone 0 when every node passed); scores are lists of ints per
  plugin aligned with the scored nodes, as ``CycleTrace`` holds them. Floats are msgpack
  doubles, so times and durations come back bit for bit. What ``to_json`` derives (the nodes
  never evaluated, weighted scores, the total node count) is not stored.

At 5000 nodes (SchedulingBasic) the payload is about 16 KB, 3 KB after zstd at level 1: about
20 us a cycle, where zlib at level 1 took 90 us for a slightly larger body (and zstd reads back
in less than half zlib's time). Worth it for rows kept by the hundred thousand.
"""

from __future__ import annotations

import hashlib
import threading
import zlib
from collections.abc import Callable, Iterable, Mapping, Sequence
from enum import IntEnum
from itertools import groupby, repeat
from operator import is_not
from typing import Any

import msgpack
import zstandard

from schedviz.scheduler.framework.interface import Code, Status
from schedviz.scheduler.trace import CycleTrace, ExtenderCall, PointRecord, QueueEntries

FORMAT_MSGPACK_ZLIB = 0x01
FORMAT_MSGPACK_ZSTD = 0x02
_FORMATS = (FORMAT_MSGPACK_ZLIB, FORMAT_MSGPACK_ZSTD)
ZSTD_LEVEL = 1
DIGEST_SIZE = 16
_HEADER = 1 + DIGEST_SIZE
_PAYLOAD_LENGTH = 35


class _Field(IntEnum):
    """The payload's fields, by position."""

    CYCLE = 0
    POD = 1
    PROFILE = 2
    ATTEMPT = 3
    TIME = 4
    WALL_TIME = 5
    DURATION = 6
    RESULT = 7
    MESSAGE = 8
    SELECTED_NODE = 9
    NOMINATED_NODE_TRIED = 10
    NOMINATED_NODE = 11
    START_INDEX = 12
    FEASIBLE_NODES = 13
    EVALUATED_NODES = 14
    STATUSES = 15
    PRE_FILTER_NODES = 16
    PRE_FILTER_STATUS = 17
    FILTER_PLUGINS = 18
    SKIPPED_FILTER_PLUGINS = 19
    FILTER_RESULTS = 20
    UNEVALUATED_FILTER_RESULTS = 21
    EXTENDER_RESULTS = 22
    SCORE_NODES = 23
    SCORE_PLUGINS = 24
    SCORE_WEIGHTS = 25
    RAW_SCORES = 26
    NORMALIZED_SCORES = 27
    TOTALS = 28
    TIE_SET = 29
    POINTS = 30
    QUEUE = 31
    PREEMPTION = 32
    EVENTS = 33
    EXTENDERS = 34


class TraceCodecError(ValueError):
    """A body this codec did not write, or decoded against the wrong node order."""


# ---------------------------------------------------------------------------------------------
# Node orders


# Node orders seen last, by identity: (the order, its digest, each node's index). The runner's
# snapshot is one tuple for many cycles, and a reader decodes against a few at most; more than
# one is kept so that a runner and readers in one process do not push each other out.
_ORDERS_KEPT = 4
_orders: dict[int, tuple[tuple[str, ...], bytes, dict[str, int]]] = {}


def _order(nodes: tuple[str, ...]) -> tuple[bytes, dict[str, int]]:
    """The order's digest and each node's index."""
    cached = _orders.get(id(nodes))
    if cached is None or cached[0] is not nodes:
        digest = hashlib.blake2b(msgpack.packb(nodes), digest_size=DIGEST_SIZE).digest()
        cached = (nodes, digest, {name: index for index, name in enumerate(nodes)})
        # The oldest go first (another thread may have removed them already).
        for stale in list(_orders)[: max(0, len(_orders) - _ORDERS_KEPT + 1)]:
            _orders.pop(stale, None)
        _orders[id(nodes)] = cached
    return cached[1], cached[2]


def node_order_digest(nodes: tuple[str, ...]) -> bytes:
    """The digest that names a node order in the bodies that refer to it."""
    return _order(nodes)[0]


def encode_node_order(nodes: tuple[str, ...]) -> bytes:
    """A node order as stored once for every body that refers to it: a msgpack array of the
    names, zlib-compressed."""
    return zlib.compress(msgpack.packb(nodes), 6)


def decode_node_order(data: bytes) -> tuple[str, ...]:
    try:
        names = msgpack.unpackb(zlib.decompress(data))
    except (zlib.error, ValueError) as error:
        raise TraceCodecError(f"an undecodable node order: {error}") from error
    if not isinstance(names, list) or not all(isinstance(name, str) for name in names):
        raise TraceCodecError("a node order that is not a list of names")
    return tuple(names)


def body_node_order(body: bytes) -> bytes:
    """The digest of the node order a body refers to."""
    _check_marker(body)
    return bytes(body[1:_HEADER])


def is_encoded(body: bytes) -> bool:
    """Whether the body is this codec's (rather than the zlib JSON stored before it)."""
    return len(body) > 0 and body[0] in _FORMATS


def _check_marker(body: bytes) -> None:
    if not is_encoded(body) or len(body) < _HEADER:
        first = body[0] if body else None
        raise TraceCodecError(f"not a trace codec body (first byte {first!r})")


# ---------------------------------------------------------------------------------------------
# Encoding


def encode(trace: CycleTrace) -> bytes:
    """The trace's body; ``decode(encode(t), t.all_nodes).to_json() == t.to_json()``."""
    digest, positions = _order(trace.all_nodes)
    statuses = _StatusTable()
    status_ref = statuses.ref
    ref = _node_ref(positions)
    filter_plugins = trace.filter_plugins
    payload = [
        trace.cycle,
        trace.pod,
        trace.profile,
        trace.attempt,
        trace.time,
        trace.wall_time,
        trace.duration,
        trace.result,
        trace.message,
        trace.selected_node,
        trace.nominated_node_tried,
        trace.nominated_node,
        trace.start_index,
        trace.feasible_nodes,
        trace.evaluated_nodes,
        statuses.rows,
        None if trace.pre_filter_nodes is None else ref(trace.pre_filter_nodes),
        status_ref(trace.pre_filter_status),
        filter_plugins,
        trace.skipped_filter_plugins,
        _pending_filter_columns(trace, statuses)
        or _filter_columns(trace.filter_results, ref, statuses),
        _filter_columns(trace.unevaluated_filter_results, ref, statuses),
        [ref(trace.extender_results), list(map(status_ref, trace.extender_results.values()))],
        _rows_or_refs(trace.score_rows, trace.score_nodes, ref),
        [plugin for plugin, _ in trace.score_plugins],
        [weight for _, weight in trace.score_plugins],
        trace.raw_scores,
        trace.normalized_scores,
        trace.totals,
        _rows_or_refs(trace.tie_rows, trace.tie_set, ref),
        [_point_row(record) for record in trace.points],
    ]
    # The queue is packed apart, from the packed entries it shares with earlier cycles, and
    # set in its place: a msgpack array is its header followed by its packed elements.
    tail = msgpack.packb(
        [trace.preemption, trace.events, list(map(_extender_row, trace.extenders))]
    )
    packed = b"".join(
        (
            _array_header(_PAYLOAD_LENGTH),
            memoryview(msgpack.packb(payload))[_HEAD_HEADER_SIZE:],
            _pack_queue(trace.queue),
            memoryview(tail)[_TAIL_HEADER_SIZE:],
        )
    )
    return bytes((FORMAT_MSGPACK_ZSTD,)) + digest + _compressor().compress(packed)


# A zstd context is not to be shared between threads (runners, requests): one per thread.
_contexts = threading.local()


def _compressor() -> zstandard.ZstdCompressor:
    compressor: zstandard.ZstdCompressor | None = getattr(_contexts, "compressor", None)
    if compressor is None:
        compressor = _contexts.compressor = zstandard.ZstdCompressor(level=ZSTD_LEVEL)
    return compressor


def _decompressor() -> zstandard.ZstdDecompressor:
    decompressor: zstandard.ZstdDecompressor | None = getattr(_contexts, "decompressor", None)
    if decompressor is None:
        decompressor = _contexts.decompressor = zstandard.ZstdDecompressor()
    return decompressor


# The payload packed in three parts: the fields before the queue, the queue, those after it.
_HEAD_HEADER_SIZE = len(msgpack.Packer().pack_array_header(_Field.QUEUE))
_TAIL_HEADER_SIZE = len(msgpack.Packer().pack_array_header(_PAYLOAD_LENGTH - _Field.QUEUE - 1))
_array_headers: dict[int, bytes] = {}
_map_headers: dict[int, bytes] = {}
_packed_names: dict[str, bytes] = {}


def _array_header(length: int) -> bytes:
    header = _array_headers.get(length)
    if header is None:
        header = _array_headers[length] = msgpack.Packer().pack_array_header(length)
    return header


def _pack_queue(queue: Mapping[str, Any]) -> bytes:
    """``msgpack.packb(queue)``, each entry of a ``QueueEntries`` packed once for all the
    traces that hold it."""
    header = _map_headers.get(len(queue))
    if header is None:
        header = _map_headers[len(queue)] = msgpack.Packer().pack_map_header(len(queue))
    parts = [header]
    for name, value in queue.items():
        packed_name = _packed_names.get(name)
        if packed_name is None:
            packed_name = _packed_names[name] = msgpack.packb(name)
        parts.append(packed_name)
        parts.append(
            _pack_entries(value) if isinstance(value, QueueEntries) else msgpack.packb(value)
        )
    return b"".join(parts)


def _pack_entries(entries: QueueEntries) -> bytes:
    packed = entries.packed
    if packed is None or len(packed) != len(entries):
        packed = entries.packed = [None] * len(entries)
    if None in packed:
        packb = msgpack.packb
        for i, entry in enumerate(entries):
            if packed[i] is None:
                packed[i] = packb(entry)
    return _array_header(len(entries)) + b"".join(packed)  # type: ignore[arg-type]


class _StatusTable:
    """Statuses as rows ``[plugin, code, reasons]``, each distinct one once."""

    def __init__(self) -> None:
        self.rows: list[list[Any]] = []
        self._refs: dict[tuple[str, int, tuple[str, ...]], int] = {}

    def ref(self, status: Status | None) -> int:
        if status is None:
            return 0
        key = (status.plugin, int(status.code), status.reasons)
        index = self._refs.get(key)
        if index is None:
            self.rows.append([status.plugin, int(status.code), status.reasons])
            index = self._refs[key] = len(self.rows)
        return index

    def refs(self, statuses: Sequence[Status | None]) -> list[int] | int:
        """The column of references; 0 alone when no node has a status (every filter passed).
        The nodes one plugin rejected alike come one after the other, sharing one status
        object: a run of the same object is looked up once."""
        if not any(map(is_not, statuses, repeat(None))):
            return 0
        column: list[int] = []
        extend = column.extend
        ref = self.ref
        for _, run in groupby(statuses, id):
            same = list(run)
            extend(repeat(ref(same[0]), len(same)))
        return column


def _node_ref(positions: dict[str, int]) -> Callable[[Iterable[str]], list[int | str]]:
    """Node names as their index in the order, or as themselves when it does not hold them."""
    index_of = positions.__getitem__
    get = positions.get

    def ref(names: Iterable[str]) -> list[int | str]:
        try:
            return list(map(index_of, names))
        except KeyError:
            return [get(name, name) for name in names]

    return ref


def _filter_columns(
    results: Mapping[str, tuple[int, Status | None]],
    ref: Callable[[Iterable[str]], list[int | str]],
    statuses: _StatusTable,
) -> list[Any]:
    """Node, plugins passed, status: three columns in the walk's order."""
    if not results:
        return [[], [], 0]
    passed, rejections = zip(*results.values(), strict=True)
    return [ref(results), passed, statuses.refs(rejections)]


def _pending_filter_columns(trace: CycleTrace, statuses: _StatusTable) -> list[Any] | None:
    """``_filter_columns`` of a walk's outcomes still held as columns (``FilterColumns``): its
    rows are the nodes' indices in ``all_nodes`` already. None when there are none."""
    pending = trace.filter_columns
    if pending is None or pending.names is not trace.all_nodes:
        return None
    if not pending.rows:
        return [[], [], 0]
    return [pending.rows, pending.passed, statuses.refs(pending.statuses)]


def _rows_or_refs(
    rows: list[int] | None,
    names: list[str],
    ref: Callable[[Iterable[str]], list[int | str]],
) -> list[int] | list[int | str]:
    """The nodes as their index in the order: ``rows`` when the scheduler kept them for these
    very names, else looked up."""
    if rows is not None and len(rows) == len(names):
        return rows
    return ref(names)


def _point_row(record: PointRecord) -> list[Any]:
    return [
        record.point,
        record.plugin,
        int(record.code),
        record.reasons,
        record.duration,
        record.calls,
        record.rejected,
    ]


def _extender_row(call: ExtenderCall) -> list[Any]:
    return [
        call.extender,
        call.verb,
        call.request,
        call.response,
        call.error,
        call.ignored,
        call.duration,
    ]


# ---------------------------------------------------------------------------------------------
# Decoding


def _payload(body: bytes) -> list[Any]:
    _check_marker(body)
    compressed = memoryview(body)[_HEADER:]
    try:
        packed = (
            _decompressor().decompress(compressed)
            if body[0] == FORMAT_MSGPACK_ZSTD
            else zlib.decompress(compressed)
        )
        payload = msgpack.unpackb(packed)
    except (zlib.error, zstandard.ZstdError, ValueError) as error:
        raise TraceCodecError(f"an undecodable trace codec body: {error}") from error
    if not isinstance(payload, list) or len(payload) != _PAYLOAD_LENGTH:
        raise TraceCodecError("a trace codec body of an unknown layout")
    return payload


def decode(body: bytes, nodes: tuple[str, ...]) -> CycleTrace:
    """The trace a body was encoded from, as far as ``to_json`` shows it (statuses keep their
    plugin, code and reasons). ``nodes`` is the node order the body refers to."""
    digest = body_node_order(body)
    if node_order_digest(nodes) != digest:
        raise TraceCodecError("the body refers to another node order")
    p = _payload(body)
    statuses: list[Status | None] = [None]
    statuses.extend(
        Status(Code(code), tuple(reasons), plugin) for plugin, code, reasons in p[_Field.STATUSES]
    )
    names = _node_names(nodes)
    pre_filter_nodes = p[_Field.PRE_FILTER_NODES]
    return CycleTrace(
        cycle=p[_Field.CYCLE],
        pod=p[_Field.POD],
        profile=p[_Field.PROFILE],
        attempt=p[_Field.ATTEMPT],
        time=p[_Field.TIME],
        wall_time=p[_Field.WALL_TIME],
        duration=p[_Field.DURATION],
        result=p[_Field.RESULT],
        message=p[_Field.MESSAGE],
        selected_node=p[_Field.SELECTED_NODE],
        nominated_node_tried=p[_Field.NOMINATED_NODE_TRIED],
        nominated_node=p[_Field.NOMINATED_NODE],
        start_index=p[_Field.START_INDEX],
        feasible_nodes=p[_Field.FEASIBLE_NODES],
        evaluated_nodes=p[_Field.EVALUATED_NODES],
        all_nodes=nodes,
        pre_filter_nodes=None if pre_filter_nodes is None else frozenset(names(pre_filter_nodes)),
        pre_filter_status=statuses[p[_Field.PRE_FILTER_STATUS]],
        filter_plugins=tuple(p[_Field.FILTER_PLUGINS]),
        skipped_filter_plugins=tuple(p[_Field.SKIPPED_FILTER_PLUGINS]),
        filter_results=_filter_results(p[_Field.FILTER_RESULTS], names, statuses),
        unevaluated_filter_results=_filter_results(
            p[_Field.UNEVALUATED_FILTER_RESULTS], names, statuses
        ),
        extender_results=_extender_results(p[_Field.EXTENDER_RESULTS], names, statuses),
        score_nodes=names(p[_Field.SCORE_NODES]),
        score_plugins=list(zip(p[_Field.SCORE_PLUGINS], p[_Field.SCORE_WEIGHTS], strict=True)),
        raw_scores=p[_Field.RAW_SCORES],
        normalized_scores=p[_Field.NORMALIZED_SCORES],
        totals=p[_Field.TOTALS],
        tie_set=names(p[_Field.TIE_SET]),
        points=[_point(row) for row in p[_Field.POINTS]],
        queue=p[_Field.QUEUE],
        preemption=p[_Field.PREEMPTION],
        events=p[_Field.EVENTS],
        extenders=[_extender_call(row) for row in p[_Field.EXTENDERS]],
    )


def decode_points(body: bytes) -> list[PointRecord]:
    """Only the extension points' records, which name no node (for /metrics)."""
    return [_point(row) for row in _payload(body)[_Field.POINTS]]


def _node_names(nodes: tuple[str, ...]) -> Callable[[list[int | str]], list[str]]:
    def names(refs: list[int | str]) -> list[str]:
        return [nodes[r] if r.__class__ is int else r for r in refs]  # type: ignore[misc]

    return names


def _filter_results(
    columns: list[Any],
    names: Callable[[list[int | str]], list[str]],
    statuses: list[Status | None],
) -> dict[str, tuple[int, Status | None]]:
    nodes, passed, refs = columns
    rejections = [None] * len(passed) if refs == 0 else [statuses[r] for r in refs]
    return dict(zip(names(nodes), zip(passed, rejections, strict=True), strict=True))


def _extender_results(
    columns: list[list[Any]],
    names: Callable[[list[int | str]], list[str]],
    statuses: list[Status | None],
) -> dict[str, Status]:
    nodes, refs = columns
    results: dict[str, Status] = {}
    for name, r in zip(names(nodes), refs, strict=True):
        status = statuses[r]
        if status is None:
            raise TraceCodecError("an extender result without a status")
        results[name] = status
    return results


def _point(row: list[Any]) -> PointRecord:
    point, plugin, code, reasons, duration, calls, rejected = row
    return PointRecord(point, plugin, Code(code), tuple(reasons), duration, calls, rejected)


def _extender_call(row: list[Any]) -> ExtenderCall:
    extender, verb, request, response, error, ignored, duration = row
    return ExtenderCall(extender, verb, request, response, error, ignored, duration)
