"""The digest of a workload's encoded traces: repeatable, and moved by any change of a trace."""

from __future__ import annotations

import pytest

from schedviz.bench import trace_digest
from schedviz.scheduler.trace import CycleTrace


def test_two_runs_of_a_workload_give_the_same_digest() -> None:
    first = trace_digest.trace_digest("SchedulingBasic", nodes=5)
    assert first == trace_digest.trace_digest("SchedulingBasic", nodes=5)
    assert first[1] == 10


def test_a_churn_workload_is_repeatable_too() -> None:
    first = trace_digest.trace_digest("Unschedulable", nodes=5, pods=30)
    assert first == trace_digest.trace_digest("Unschedulable", nodes=5, pods=30)


def test_a_changed_trace_changes_the_digest(monkeypatch: pytest.MonkeyPatch) -> None:
    before, _ = trace_digest.trace_digest("SchedulingBasic", nodes=5)
    real = trace_digest._without_wall_time

    def with_another_message(trace: CycleTrace) -> CycleTrace:
        trace = real(trace)
        trace.message += "."
        return trace

    monkeypatch.setattr(trace_digest, "_without_wall_time", with_another_message)
    assert trace_digest.trace_digest("SchedulingBasic", nodes=5)[0] != before


def test_the_command_line_prints_one_line_per_workload(capsys: pytest.CaptureFixture[str]) -> None:
    assert trace_digest.main(["SchedulingBasic", "--nodes", "5"]) == 0
    line = capsys.readouterr().out.strip()
    assert line.startswith("SchedulingBasic nodes=5 cycles=10 sha256=")
