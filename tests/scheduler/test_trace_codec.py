"""The stored trace: every trace the scheduler writes reads back as the same documented JSON."""

from __future__ import annotations

import copy
import hashlib
import pickle
import zlib
from pathlib import Path
from typing import Any

import msgpack
import pytest
import zstandard
from hypothesis import given, settings
from hypothesis import strategies as st
from trace_corpus import DEMO, FIDELITY_CASES, LESSONS, ROOT, corpus_manifests

from schedviz.kube.load import load_manifests
from schedviz.scheduler import trace_codec
from schedviz.scheduler.framework.interface import Code, Status
from schedviz.scheduler.trace import (
    RESULT_ERROR,
    RESULT_SCHEDULED,
    RESULT_UNSCHEDULABLE,
    RESULT_WAITING,
    CycleTrace,
    ExtenderCall,
    FilterColumns,
    PointRecord,
    QueueEntries,
)
from schedviz.simulation.simulator import new_simulation

BUILT_IN = [*LESSONS, DEMO]


def _round_trip(trace: CycleTrace) -> dict[str, Any]:
    return trace_codec.decode(trace_codec.encode(trace), trace.all_nodes).to_json()


def _packed(body: bytes) -> bytes:
    """The msgpack payload of a body (zstd after the marker and the node order's digest)."""
    return zstandard.ZstdDecompressor().decompress(body[1 + trace_codec.DIGEST_SIZE :])


@pytest.mark.parametrize(
    "path",
    FIDELITY_CASES + BUILT_IN,
    ids=[str(p.relative_to(ROOT)) for p in FIDELITY_CASES + BUILT_IN],
)
def test_every_trace_of_a_simulated_case_reads_back_as_the_same_json(path: Path) -> None:
    simulation = new_simulation(load_manifests(corpus_manifests(path), lenient_names=True), seed=1)
    simulation.run(max_cycles=200)
    assert simulation.traces
    for trace in simulation.traces:
        assert _round_trip(trace) == trace.to_json()


# --------------------------------------------------------------------------------- by hand

NODES = ("node-a", "node-b", "node-c", "node-d")
FIT = "NodeResourcesFit"
TAINTS = "TaintToleration"
EXTENDER = "http://127.0.0.1:8888/scheduler"


def _trace(**fields: Any) -> CycleTrace:
    base: dict[str, Any] = {
        "cycle": 7,
        "pod": "default/web-1",
        "profile": "default-scheduler",
        "attempt": 2,
        "time": 12.000000123,
        "wall_time": 1_764_000_000.1234567,
        "all_nodes": NODES,
        "filter_plugins": ("NodeUnschedulable", FIT, TAINTS),
    }
    return CycleTrace(**{**base, **fields})


def _insufficient_cpu() -> Status:
    # A status object per node, as Fit returns them.
    return Status(Code.Unschedulable, ("Insufficient cpu",), FIT)


SCHEDULED = _trace(
    result=RESULT_SCHEDULED,
    message="Successfully assigned default/web-1 to node-c",
    start_index=2,
    filter_results={"node-c": (3, None), "node-d": (1, _insufficient_cpu()), "node-a": (3, None)},
    score_nodes=["node-c", "node-a"],
    score_plugins=[(TAINTS, 3), (FIT, 1)],
    raw_scores=[[0, 0], [40, 70]],
    normalized_scores=[[100, 100], [40, 70]],
    totals=[340, 370],
    selected_node="node-a",
    tie_set=["node-a"],
    feasible_nodes=2,
    evaluated_nodes=3,
    points=[
        PointRecord("PreFilter", FIT, Code.Success, duration=1.25e-05),
        PointRecord("Filter", FIT, Code.Unschedulable, duration=0.0001, calls=3, rejected=1),
        PointRecord("Bind", "DefaultBinder", Code.Success, duration=0.002),
    ],
    events=[{"type": "Normal", "reason": "Scheduled", "object": "default/web-1", "message": "m"}],
    queue={
        "activeQ": [{"pod": "default/a", "attempts": 0}],
        "backoffQ": [{"pod": "default/b", "attempts": 2, "backoffExpiration": 3.0}],
        "unschedulablePods": [],
    },
    duration=0.0031,
)

CASES: dict[str, CycleTrace] = {
    "scheduled, with a node never evaluated": SCHEDULED,
    "a queue with the moves since the last pop": _trace(
        queue={
            **SCHEDULED.queue,
            "moves": [
                {
                    "event": "AssignedPodDelete",
                    "pod": "default/b",
                    "queue": "Backoff",
                    "plugin": FIT,
                    "object": "default/preemptor",
                },
                {"event": "BackoffComplete", "pod": "default/a", "queue": "Active"},
            ],
        }
    ),
    "unschedulable: every node rejected for one reason": _trace(
        result=RESULT_UNSCHEDULABLE,
        message="0/4 nodes are available: 4 Insufficient cpu.",
        filter_results={name: (1, _insufficient_cpu()) for name in NODES},
        evaluated_nodes=4,
    ),
    "PreFilter rejected the pod outright": _trace(
        result=RESULT_UNSCHEDULABLE,
        pre_filter_status=Status(
            Code.UnschedulableAndUnresolvable, ("node(s) didn't match",), "NodeAffinity"
        ),
    ),
    "PreFilter narrowed to nodes, one of them not in the cluster": _trace(
        result=RESULT_SCHEDULED,
        pre_filter_nodes=frozenset({"node-b", "ghost"}),
        pre_filter_status=Status(
            Code.UnschedulableAndUnresolvable,
            ("node(s) didn't satisfy plugin(s) [NodeAffinity]",),
        ),
        filter_results={"node-b": (3, None)},
        selected_node="node-b",
        feasible_nodes=1,
        evaluated_nodes=1,
    ),
    "PreFilter narrowed to no node": _trace(
        result=RESULT_UNSCHEDULABLE,
        pre_filter_nodes=frozenset(),
        pre_filter_status=Status(Code.UnschedulableAndUnresolvable, ("none",), "NodeAffinity"),
    ),
    "filters skipped, hypothetical results of unevaluated nodes": _trace(
        result=RESULT_SCHEDULED,
        skipped_filter_plugins=("NodePorts", "VolumeBinding"),
        filter_results={"node-a": (3, None)},
        unevaluated_filter_results={
            "node-b": (1, Status(Code.UnschedulableAndUnresolvable, ("Insufficient cpu",), FIT)),
            "node-c": (3, None),
        },
        selected_node="node-a",
        feasible_nodes=1,
        evaluated_nodes=1,
    ),
    "nominated node tried, extenders filtering, prioritizing and failing": _trace(
        result=RESULT_SCHEDULED,
        nominated_node_tried="node-b",
        filter_results={"node-a": (3, None), "node-b": (3, None)},
        extender_results={
            "node-b": Status(Code.Unschedulable, ("no GPU left",), EXTENDER),
        },
        extenders=[
            ExtenderCall(
                EXTENDER,
                "filter",
                {"pod": "default/web-1", "nodeNames": ["node-a", "node-b"], "sent": "Nodes"},
                {
                    "nodeNames": ["node-a"],
                    "failedNodes": {"node-b": "no GPU left"},
                    "failedAndUnresolvableNodes": {},
                    "error": None,
                },
                duration=0.0019,
            ),
            ExtenderCall(
                EXTENDER,
                "prioritize",
                {"pod": "default/web-1", "nodeNames": ["node-a"], "sent": "NodeNames"},
                None,
                error="connection refused",
                ignored=True,
                duration=0.0001,
            ),
            ExtenderCall(
                EXTENDER,
                "bind",
                {"PodName": "web-1", "PodNamespace": "default", "PodUID": "u", "Node": "node-a"},
                {"error": None},
            ),
        ],
        score_nodes=["node-a"],
        score_plugins=[(EXTENDER, 1)],
        raw_scores=[[7]],
        normalized_scores=[[70]],
        totals=[70],
        selected_node="node-a",
        tie_set=["node-a"],
    ),
    "preemption nominated a node": _trace(
        result=RESULT_UNSCHEDULABLE,
        filter_results={
            name: (2, Status(Code.Unschedulable, ("taint",), TAINTS)) for name in NODES
        },
        nominated_node="node-d",
        preemption={
            "nominatedNode": "node-d",
            "victims": ["default/low-1", "default/low-2"],
            "candidates": [{"node": "node-d", "victims": 2, "pdbViolations": 0}],
            "criterion": "lowest priority",
        },
        events=[
            {"type": "Normal", "reason": "Preempted", "object": "default/low-1", "message": "x"},
            {
                "type": "Warning",
                "reason": "FailedScheduling",
                "object": "default/web-1",
                "message": "y",
            },
        ],
    ),
    "error": _trace(
        result=RESULT_ERROR,
        message="running Reserve plugin: boom",
        points=[PointRecord("Reserve", "Broken", Code.Error, ("boom",), 1e-06)],
    ),
    "waiting at Permit, ties": _trace(
        result=RESULT_WAITING,
        filter_results={name: (3, None) for name in NODES},
        score_nodes=list(NODES),
        score_plugins=[(FIT, 1)],
        raw_scores=[[50, 50, 50, -1]],
        normalized_scores=[[50, 50, 50, 0]],
        totals=[50, 50, 50, 0],
        selected_node="node-b",
        tie_set=["node-a", "node-b", "node-c"],
        points=[PointRecord("Permit", "Coscheduling", Code.Wait, ("waiting",), 0.0)],
    ),
    "no nodes at all": _trace(all_nodes=(), result=RESULT_UNSCHEDULABLE),
}


@pytest.mark.parametrize("trace", CASES.values(), ids=list(CASES))
def test_a_hand_built_trace_reads_back_as_the_same_json(trace: CycleTrace) -> None:
    assert _round_trip(trace) == trace.to_json()


def test_floats_come_back_bit_for_bit() -> None:
    decoded = trace_codec.decode(trace_codec.encode(SCHEDULED), NODES)
    assert (decoded.time, decoded.wall_time, decoded.duration) == (
        SCHEDULED.time,
        SCHEDULED.wall_time,
        SCHEDULED.duration,
    )
    assert [p.duration for p in decoded.points] == [p.duration for p in SCHEDULED.points]


def test_rejections_sharing_a_status_are_stored_once() -> None:
    many = ("n" + str(i) for i in range(1000))
    nodes = tuple(many)
    trace = _trace(
        all_nodes=nodes, filter_results={name: (1, _insufficient_cpu()) for name in nodes}
    )
    payload = msgpack.unpackb(_packed(trace_codec.encode(trace)))
    assert payload[trace_codec._Field.STATUSES] == [
        [FIT, int(Code.Unschedulable), ["Insufficient cpu"]]
    ]
    assert set(payload[trace_codec._Field.FILTER_RESULTS][2]) == {1}


def test_the_body_names_its_node_order_but_does_not_hold_it() -> None:
    body = trace_codec.encode(SCHEDULED)
    assert body[0] == trace_codec.FORMAT_MSGPACK_ZSTD != 0x78
    assert trace_codec.body_node_order(body) == trace_codec.node_order_digest(NODES)
    assert b"node-b" not in _packed(body)


@pytest.mark.parametrize("trace", CASES.values(), ids=CASES.keys())
def test_a_body_written_with_zlib_before_zstd_still_reads(trace: CycleTrace) -> None:
    body = trace_codec.encode(trace)
    head = bytes((trace_codec.FORMAT_MSGPACK_ZLIB,)) + body[1 : 1 + trace_codec.DIGEST_SIZE]
    old = head + zlib.compress(_packed(body), 1)
    assert trace_codec.is_encoded(old)
    assert trace_codec.decode(old, trace.all_nodes).to_json() == trace.to_json()
    assert trace_codec.decode_points(old) == trace_codec.decode_points(body)


def test_a_damaged_zstd_body_is_refused_as_undecodable() -> None:
    body = trace_codec.encode(SCHEDULED)
    with pytest.raises(trace_codec.TraceCodecError, match="undecodable"):
        trace_codec.decode(body[:-4], NODES)


def test_a_node_order_round_trips_and_its_digest_depends_on_the_order() -> None:
    assert trace_codec.decode_node_order(trace_codec.encode_node_order(NODES)) == NODES
    assert trace_codec.decode_node_order(trace_codec.encode_node_order(())) == ()
    reversed_nodes = tuple(reversed(NODES))
    assert trace_codec.node_order_digest(reversed_nodes) != trace_codec.node_order_digest(NODES)


def test_decoding_against_another_node_order_is_refused() -> None:
    body = trace_codec.encode(SCHEDULED)
    with pytest.raises(trace_codec.TraceCodecError, match="another node order"):
        trace_codec.decode(body, (*NODES, "node-e"))


def test_a_zlib_json_body_is_not_taken_for_an_encoded_one() -> None:
    body = zlib.compress(b'{"cycle": 1}', 6)
    assert not trace_codec.is_encoded(body)
    with pytest.raises(trace_codec.TraceCodecError, match="not a trace codec body"):
        trace_codec.decode(body, NODES)


def test_the_points_are_read_without_the_node_order() -> None:
    points = trace_codec.decode_points(trace_codec.encode(SCHEDULED))
    assert [p.to_json() for p in points] == [p.to_json() for p in SCHEDULED.points]


# --------------------------------------------------------------------------------- property

_names = st.text(alphabet="abcxyz-0123456789", min_size=1, max_size=6)
_texts = st.text(max_size=12)
_ints = st.integers(min_value=-(2**63), max_value=2**63 - 1)
_floats = st.floats(allow_nan=False)


def _json_containers(inner: st.SearchStrategy[Any]) -> st.SearchStrategy[Any]:
    return st.lists(inner, max_size=3) | st.dictionaries(_texts, inner, max_size=3)


_json: st.SearchStrategy[Any] = st.recursive(
    st.none() | st.booleans() | _ints | _floats | _texts, _json_containers, max_leaves=8
)
_statuses = st.builds(
    Status,
    code=st.sampled_from(Code),
    reasons=st.lists(_texts, max_size=2).map(tuple),
    plugin=st.sampled_from(["", FIT, TAINTS, EXTENDER]),
)


@st.composite
def _traces(draw: st.DrawFn) -> CycleTrace:
    nodes = tuple(draw(st.lists(_names, unique=True, max_size=8)))
    node_names = st.sampled_from(nodes) | _names if nodes else _names
    filter_plugins = tuple(draw(st.lists(_names, unique=True, max_size=3)))
    outcomes = st.tuples(st.integers(0, len(filter_plugins)), st.none() | _statuses)
    score_nodes = draw(st.lists(node_names, unique=True, max_size=5))
    score_plugins = draw(st.lists(st.tuples(_names, st.integers(0, 100)), max_size=3))
    column = st.lists(_ints, min_size=len(score_nodes), max_size=len(score_nodes))
    return CycleTrace(
        cycle=draw(st.integers(0, 2**31)),
        pod=draw(_texts),
        profile=draw(_texts),
        attempt=draw(st.integers(0, 100)),
        time=draw(_floats),
        wall_time=draw(_floats),
        duration=draw(_floats),
        all_nodes=nodes,
        start_index=draw(st.integers(0, 8)),
        pre_filter_nodes=draw(st.none() | st.frozensets(node_names, max_size=4)),
        pre_filter_status=draw(st.none() | _statuses),
        nominated_node_tried=draw(st.just("") | node_names),
        filter_plugins=filter_plugins,
        skipped_filter_plugins=tuple(draw(st.lists(_names, max_size=2))),
        filter_results=draw(st.dictionaries(node_names, outcomes, max_size=8)),
        unevaluated_filter_results=draw(st.dictionaries(node_names, outcomes, max_size=4)),
        extender_results=draw(st.dictionaries(node_names, _statuses, max_size=3)),
        extenders=draw(
            st.lists(
                st.builds(
                    ExtenderCall,
                    extender=_texts,
                    verb=st.sampled_from(["filter", "prioritize", "preempt", "bind"]),
                    request=st.dictionaries(_texts, _json, max_size=3),
                    response=st.none() | st.dictionaries(_texts, _json, max_size=3),
                    error=_texts,
                    ignored=st.booleans(),
                    duration=_floats,
                ),
                max_size=2,
            )
        ),
        score_nodes=score_nodes,
        score_plugins=score_plugins,
        raw_scores=[draw(column) for _ in score_plugins],
        normalized_scores=[draw(column) for _ in score_plugins],
        totals=draw(column),
        selected_node=draw(st.just("") | node_names),
        tie_set=draw(st.lists(node_names, max_size=4)),
        feasible_nodes=draw(st.integers(0, 8)),
        evaluated_nodes=draw(st.integers(0, 8)),
        result=draw(
            st.sampled_from([RESULT_SCHEDULED, RESULT_UNSCHEDULABLE, RESULT_ERROR, RESULT_WAITING])
        ),
        message=draw(_texts),
        nominated_node=draw(st.just("") | node_names),
        preemption=draw(st.none() | st.dictionaries(_texts, _json, max_size=3)),
        events=draw(st.lists(st.dictionaries(_texts, _texts, max_size=3), max_size=2)),
        queue=draw(st.dictionaries(_texts, _json, max_size=3)),
        points=draw(
            st.lists(
                st.builds(
                    PointRecord,
                    point=st.sampled_from(["PreFilter", "Filter", "Score", "Permit"]),
                    plugin=_names,
                    code=st.sampled_from(Code),
                    reasons=st.lists(_texts, max_size=2).map(tuple),
                    duration=_floats,
                    calls=st.integers(0, 5000),
                    rejected=st.integers(0, 5000),
                ),
                max_size=4,
            )
        ),
    )


@settings(max_examples=300, deadline=None)
@given(_traces())
def test_any_trace_reads_back_as_the_same_json(trace: CycleTrace) -> None:
    assert _round_trip(trace) == trace.to_json()
    # The payload, packed in parts, is the payload packed whole.
    payload = _packed(trace_codec.encode(trace))
    assert msgpack.packb(msgpack.unpackb(payload)) == payload


def test_queue_entries_shared_between_traces_encode_as_plain_lists() -> None:
    entries = [{"pod": f"default/p{i}", "attempts": i} for i in range(20)]
    pool = [{"pod": "default/u", "attempts": 3, "unschedulablePlugins": [FIT], "since": 1.5}]

    def queue(active: list[dict[str, Any]], shared: bool) -> dict[str, Any]:
        wrap = QueueEntries if shared else list
        return {"activeQ": wrap(active), "backoffQ": [], "unschedulablePods": wrap(pool)}

    shared = [_trace(cycle=1, queue=queue(entries, True))]
    first = shared[0].queue["activeQ"]
    assert trace_codec.encode(shared[0]) == trace_codec.encode(
        _trace(cycle=1, queue=queue(entries, False))
    )
    # The next cycle keeps the entries after the head, the packed forms with them.
    following = QueueEntries(first[1:], first.packed[1:])
    following.append({"pod": "default/new", "attempts": 0})
    following.packed.append(None)
    trace = _trace(cycle=2, queue={**queue([], True), "activeQ": following})
    plain = _trace(
        cycle=2, queue=queue([*entries[1:], {"pod": "default/new", "attempts": 0}], False)
    )
    assert trace_codec.encode(trace) == trace_codec.encode(plain)
    assert _round_trip(trace) == trace.to_json()
    # Copied or pickled (a channel layer's message), the entries are a plain list.
    for copied in (copy.deepcopy(following), pickle.loads(pickle.dumps(following))):
        assert type(copied) is list
        assert copied == following


def test_a_writer_and_a_reader_alternating_between_orders_digest_each_once(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    digests: list[bytes] = []
    blake2b = hashlib.blake2b

    def counted(data: bytes, **options: Any) -> Any:
        digests.append(data)
        return blake2b(data, **options)

    monkeypatch.setattr(trace_codec.hashlib, "blake2b", counted)
    writer, reader = tuple(f"w-{i}" for i in range(50)), tuple(f"r-{i}" for i in range(50))
    for _ in range(3):
        body = trace_codec.encode(_trace(all_nodes=writer))
        assert trace_codec.decode(body, writer).all_nodes is writer
        trace_codec.decode(trace_codec.encode(_trace(all_nodes=reader)), reader)
    assert len(digests) == 2


def _pending_trace() -> tuple[CycleTrace, FilterColumns]:
    nodes = tuple(f"node-{i}" for i in range(6))
    columns = FilterColumns(nodes)
    trace = CycleTrace(
        cycle=1, pod="default/p", profile="default-scheduler", attempt=1, time=0.0, wall_time=0.0
    )
    trace.all_nodes = nodes
    trace.filter_plugins = ("NodeUnschedulable", "NodeResourcesFit", "TaintToleration")
    trace.set_filter_columns(columns)
    rejected = _insufficient_cpu()
    for row, passed, status in ((4, 3, None), (5, 1, rejected), (0, 1, rejected), (1, 3, None)):
        columns.rows.append(row)
        columns.passed.append(passed)
        columns.statuses.append(status)
    trace.score_nodes = ["node-4", "node-1"]
    trace.score_rows = [4, 1]
    trace.score_plugins = [("NodeResourcesFit", 1)]
    trace.raw_scores = [[10, 20]]
    trace.normalized_scores = [[10, 20]]
    trace.totals = [10, 20]
    trace.tie_set = ["node-1"]
    trace.tie_rows = [1]
    return trace, columns


def test_filter_outcomes_kept_as_row_columns_encode_as_the_same_bytes_as_the_dict() -> None:
    trace, _ = _pending_trace()
    pending_body = trace_codec.encode(trace)
    assert trace.filter_columns is not None  # the codec did not make the dict
    as_dict = trace.filter_results  # made now, in the walk's order
    assert list(as_dict) == ["node-4", "node-5", "node-0", "node-1"]
    assert as_dict["node-5"] == (1, _insufficient_cpu())
    assert trace.filter_columns is None
    trace.score_rows = trace.tie_rows = None
    assert trace_codec.encode(trace) == pending_body
    assert _round_trip(trace) == trace.to_json()


def test_a_walk_over_an_earlier_walks_outcomes_is_refused() -> None:
    trace, _ = _pending_trace()
    assert trace.filtered_count() == 4
    with pytest.raises(ValueError, match="already recorded"):
        trace.set_filter_columns(FilterColumns(trace.all_nodes))
