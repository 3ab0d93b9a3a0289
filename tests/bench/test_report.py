"""docs/performance.md's rendering: the Go column, the ratio and what limits a slower row."""

from __future__ import annotations

import json
from pathlib import Path

from schedviz.bench.report import NOT_MEASURED, WHAT_LIMITS, main
from schedviz.bench.workloads import WORKLOADS


def _engine_result(workload: str, pods_per_second: float) -> dict[str, object]:
    return {
        "workload": workload,
        "mode": "engine",
        "nodes": 5000,
        "initPods": 100,
        "measuredPods": 1000,
        "scheduled": 1000,
        "seconds": 1000 / pods_per_second,
        "podsPerSecond": pods_per_second,
        "threshold": 590,
        "meetsThreshold": False,
        "p50CycleMs": 2.0,
        "p99CycleMs": 9.0,
        "traceBytesPerCycle": 4096,
        "traceJsonBytesPerCycle": 409600,
        "peakRssMb": 150.0,
    }


def _write(results: Path, name: str, data: dict[str, object], load: str) -> None:
    (results / f"{name}.json").write_text(json.dumps(data))
    (results / f"{name}.load").write_text(load + "\n")


def _report(results: Path, out: Path, workloads: str, modes: str = "engine") -> str:
    main(
        [
            str(results),
            str(out),
            "--nodes=5000",
            f"--workloads={workloads}",
            f"--modes={modes}",
            "--commit=abc1234",
            "--runs=run started now",
            "--command=scripts/bench-all",
        ]
    )
    return out.read_text()


def test_it_gives_the_ratio_to_go_and_says_what_limits_a_slower_workload(tmp_path: Path) -> None:
    _write(tmp_path, "engine-Unschedulable", _engine_result("Unschedulable", 200.0), "1.50")
    _write(tmp_path, "go-Unschedulable", {"podsPerSecond": 400.0}, "1.20")
    _write(tmp_path, "engine-TopologySpreading", _engine_result("TopologySpreading", 300.0), "1.1")
    _write(tmp_path, "go-TopologySpreading", {"podsPerSecond": 150.0}, "1.0")
    text = _report(tmp_path, tmp_path / "out.md", "Unschedulable TopologySpreading")
    assert "| Unschedulable | engine |" in text
    assert "| **200.0** | 400.0 | **0.50** |" in text
    assert "| 1.50 | 1.20 |" in text
    assert "| **300.0** | 150.0 | **2.00** |" in text
    why = WHAT_LIMITS["Unschedulable"]["engine"]
    assert f"- **Unschedulable**, engine (0.50 of Go): {why}." in text
    assert "**TopologySpreading**, engine (" not in text


def test_without_a_go_run_the_go_column_says_not_measured(tmp_path: Path) -> None:
    _write(tmp_path, "engine-Unschedulable", _engine_result("Unschedulable", 200.0), "1.5")
    text = _report(tmp_path, tmp_path / "out.md", "Unschedulable")
    assert f"| **200.0** | {NOT_MEASURED} | - |" in text
    assert "- Go: not measured" in text
    assert "what limits each" not in text


def _e2e_result(workload: str, pods_per_second: float) -> dict[str, object]:
    return {
        **_engine_result(workload, pods_per_second),
        "mode": "e2e",
        "target": 295,
        "meetsTarget": pods_per_second >= 295,
        "wsClients": 10,
        "wsMessagesPerClientMin": 100,
        "wsCyclesLost": 0,
    }


def test_the_e2e_target_is_half_of_go_when_go_ran_else_half_of_upstreams_threshold(
    tmp_path: Path,
) -> None:
    _write(tmp_path, "e2e-Unschedulable", _e2e_result("Unschedulable", 210.0), "1.0")
    _write(tmp_path, "go-Unschedulable", {"podsPerSecond": 400.0}, "1.0")
    _write(tmp_path, "e2e-TopologySpreading", _e2e_result("TopologySpreading", 210.0), "1.0")
    text = _report(tmp_path, tmp_path / "out.md", "Unschedulable TopologySpreading", "e2e")
    assert "| Unschedulable | e2e |" in text
    assert "| 590 | no | 200 | yes |" in text  # half of Go's 400, met
    assert "| 590 | no | 295 | **no** |" in text  # no Go run: half of upstream's 590


def test_every_workload_says_what_limits_it_in_each_mode() -> None:
    assert set(WHAT_LIMITS) == set(WORKLOADS)
    assert all(set(modes) == {"engine", "e2e"} for modes in WHAT_LIMITS.values())


def test_an_appended_section_goes_above_how_e2e_runs_and_keeps_what_follows(
    tmp_path: Path,
) -> None:
    _write(tmp_path, "engine-Unschedulable", _engine_result("Unschedulable", 200.0), "1.5")
    out = tmp_path / "out.md"
    _report(tmp_path, out, "Unschedulable")
    out.write_text(out.read_text() + "\n### Written by hand\n")
    main(
        [
            str(tmp_path),
            str(out),
            "--nodes=500",
            "--workloads=Unschedulable",
            "--modes=engine",
            "--commit=def5678",
            "--runs=run started later",
            "--command=scripts/bench-all",
            "--append",
        ]
    )
    text = out.read_text()
    assert text.index("## 5000 nodes") < text.index("## 500 nodes") < text.index("### How e2e")
    assert text.count("### How e2e runs") == 1
    assert text.endswith("### Written by hand\n")
