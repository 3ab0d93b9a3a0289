"""The trace written as text (schedviz/scheduler/trace_json.py): byte for byte what encoding the
documented JSON gives, for the scheduler's own traces, hand-built ones and any trace at all."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from hypothesis import given, settings
from test_trace_codec import BUILT_IN, CASES, FIDELITY_CASES, ROOT, _traces
from trace_corpus import corpus_manifests

from schedviz.kube.load import load_manifests
from schedviz.scheduler import trace_codec, trace_json
from schedviz.scheduler.framework.interface import Code, Status
from schedviz.scheduler.trace import CycleTrace
from schedviz.simulation.simulator import new_simulation


def _expected(trace: CycleTrace) -> str:
    return json.dumps(trace.to_json(), separators=(",", ":"))


@pytest.mark.parametrize(
    "path",
    FIDELITY_CASES + BUILT_IN,
    ids=[str(p.relative_to(ROOT)) for p in FIDELITY_CASES + BUILT_IN],
)
def test_every_simulated_trace_is_written_as_its_json_and_so_is_its_stored_form(
    path: Path,
) -> None:
    simulation = new_simulation(load_manifests(corpus_manifests(path), lenient_names=True), seed=1)
    simulation.run(max_cycles=200)
    for trace in simulation.traces:
        assert trace_json.dumps(trace) == _expected(trace)
        stored = trace_codec.decode(trace_codec.encode(trace), trace.all_nodes)
        assert trace_json.dumps(stored) == _expected(stored)


@pytest.mark.parametrize("trace", CASES.values(), ids=list(CASES))
def test_a_hand_built_trace_is_written_as_its_json(trace: CycleTrace) -> None:
    assert trace_json.dumps(trace) == _expected(trace)


@settings(max_examples=200, deadline=None)
@given(_traces())
def test_any_trace_is_written_as_its_json(trace: CycleTrace) -> None:
    assert trace_json.dumps(trace) == _expected(trace)


def test_text_that_looks_like_a_marker_is_left_as_it_is() -> None:
    trace = CycleTrace(
        cycle=1,
        pod='default/"\\u0000filter\\u0000"',
        profile="default-scheduler",
        attempt=1,
        time=0.0,
        wall_time=0.0,
        all_nodes=("n1",),
        filter_plugins=("NodeName",),
        filter_results={"n1": (0, Status(Code.Unschedulable, ("\x00scores\x00",), "NodeName"))},
        message='\x00filter\x00 "\\u0000tieSet\\u0000"',
    )
    assert trace_json.dumps(trace) == _expected(trace)
