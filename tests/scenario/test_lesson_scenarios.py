"""Every lesson's scenario (schedviz/lessons/<slug>/scenario.yaml) reads and runs to its
doneOperation; the preemption lesson's timeline is the story its comments tell."""

from __future__ import annotations

from pathlib import Path

import pytest

from schedviz.scenario.runner import PHASE_SUCCEEDED, run_scenario
from schedviz.scenario.spec import load_scenario

LESSONS = Path(__file__).resolve().parents[2] / "schedviz" / "lessons"
SCENARIOS = sorted(LESSONS.glob("*/scenario.yaml"))


@pytest.mark.parametrize("path", SCENARIOS, ids=[p.parent.name for p in SCENARIOS])
def test_a_lessons_scenario_runs_to_its_done_operation(path: Path) -> None:
    run = run_scenario(load_scenario(path.read_text(), str(path)))
    assert run.phase == PHASE_SUCCEEDED, run.message


def test_the_preemption_lesson_over_time_binds_preempts_and_places_the_patient_pod() -> None:
    path = LESSONS / "priority-and-preemption" / "scenario.yaml"
    run = run_scenario(load_scenario(path.read_text(), str(path)))
    bindings = [
        (major, e["podScheduled"]["pod"]["name"], e["podScheduled"]["node"])
        for major, events in run.timeline.items()
        for e in events
        if "podScheduled" in e
    ]
    assert bindings == [
        ("1", "low-1", "node-a"),
        ("3", "web-2", "node-a"),
        ("4", "polite", "node-b"),
    ]
    preempted = [
        e["delete"]["operation"]["objectMeta"]["name"]
        for e in run.timeline["3"]
        if e.get("delete", {}).get("preemption")
    ]
    assert preempted == ["low-1"]
    assert [s["pending"] for s in run.steps] == [0, 0, 1, 1, 0, 0]
