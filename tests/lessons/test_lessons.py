"""Every built-in lesson is right by construction: its claims (lesson.yaml ``steps``) are
compared with the traces of a run, through the engine alone and through the app's runner, and
the checker is shown to refuse a lesson changed to a wrong node, a missed tie or a text that
tells another outcome than its claims."""

from __future__ import annotations

import dataclasses
from typing import Any

import pytest

from schedviz.cluster import lessons
from schedviz.cluster.lessons import LessonInfo, LessonStep, claims_problems, lesson_get
from schedviz.cluster.models import Cycle, Node, Pod
from schedviz.kube.load import load_manifests
from schedviz.simulation.simulator import Simulation, new_simulation
from worker.runner import run_cluster

SLUGS = [info.slug for info in lessons.lesson_list()]
# The seed a cluster gets when a lesson is loaded (Cluster.seed's default).
APP_SEED = 1


def simulate(slug: str, seed: int = APP_SEED) -> Simulation:
    lesson = lesson_get(slug)
    simulation = new_simulation(
        load_manifests(lesson.manifests, f"{slug}/manifests.yaml"), seed=seed
    )
    simulation.run()
    return simulation


def problems_of(info: LessonInfo, simulation: Simulation) -> list[str]:
    return claims_problems(
        info,
        [trace.to_json() for trace in simulation.traces],
        simulation.placements(),
        [node.name for node in simulation.store.list_objects("Node")],
    )


@pytest.mark.parametrize("slug", SLUGS)
@pytest.mark.parametrize("seed", [APP_SEED, 0, 7])
def test_every_claim_of_the_lesson_holds_in_the_engine(slug: str, seed: int) -> None:
    # Other seeds too: a claim must never depend on the coin that breaks a tie.
    info = lesson_get(slug).info
    assert info.steps, f"{slug} claims nothing"
    assert problems_of(info, simulate(slug, seed)) == []


@pytest.mark.django_db(transaction=True)
@pytest.mark.parametrize("slug", SLUGS)
def test_every_claim_of_the_lesson_holds_in_the_app(slug: str, settings: Any) -> None:
    """Loaded as the lesson page loads it and scheduled by the runner, cycle rows compared."""
    settings.SCHEDVIZ_START_RUNNERS = False
    settings.SCHEDVIZ_RUNNER_IDLE_SECONDS = 0
    cluster = lessons.lesson_load(slug=slug)
    run_cluster(cluster.pk)
    traces = [c.trace() for c in Cycle.objects.filter(cluster=cluster).order_by("number")]
    placements = {
        f"{ns}/{name}": node
        for ns, name, node in Pod.objects.filter(cluster=cluster).values_list(
            "namespace", "name", "node_name"
        )
    }
    nodes = Node.objects.filter(cluster=cluster).values_list("name", flat=True)
    assert claims_problems(lesson_get(slug).info, traces, placements, nodes) == []


def _with_step(info: LessonInfo, index: int, **changes: Any) -> LessonInfo:
    steps = list(info.steps)
    steps[index] = dataclasses.replace(steps[index], **changes)
    return dataclasses.replace(info, steps=tuple(steps))


def _expect(step: LessonStep, **claims: Any) -> dict[str, Any]:
    return {**step.expect, **claims}


def test_a_claim_changed_to_a_wrong_node_is_refused() -> None:
    info = lesson_get("topology-spread").info
    step = info.steps[0]
    wrong = _with_step(info, 0, expect=_expect(step, node="node-d"))
    problems = problems_of(wrong, simulate("topology-spread"))
    assert any("node: the lesson says 'node-d', the trace 'node-c'" in p for p in problems)


def test_a_text_changed_to_a_wrong_node_is_refused() -> None:
    info = lesson_get("topology-spread").info
    step = info.steps[0]
    wrong = _with_step(info, 0, reveal=step.reveal.replace("**node-c**", "**node-d**"))
    problems = problems_of(wrong, simulate("topology-spread"))
    assert any("shows **node-d** as the outcome" in p for p in problems)
    assert any("does not name node-c in bold" in p for p in problems)


def test_every_kind_of_claim_is_compared() -> None:
    info = lesson_get("priority-and-preemption").info
    run = simulate("priority-and-preemption")
    web = info.steps[1]
    for claims, said in [
        ({"nominated": "node-b"}, "nominated"),
        ({"victims": ["polite"]}, "victims"),
        ({"result": "Scheduled"}, "result"),
        ({"message": "0/2 nodes"}, "message"),
    ]:
        problems = problems_of(_with_step(info, 1, expect=_expect(web, **claims)), run)
        assert any(f"{said}: the lesson says" in p for p in problems), (claims, problems)
    fit = lesson_get("resource-fit").info
    spread = fit.steps[0]
    fit_run = simulate("resource-fit")
    for claims, said in [
        ({"raw": {"NodeResourcesFit": {"node-a": 75, "node-b": 25}}}, "raw NodeResourcesFit"),
        ({"totals": {"node-a": 475, "node-b": 425}}, "totals"),
        ({"rejected": {"node-small": "Too many pods"}}, "rejected[node-small]"),
        ({"rejected": {}}, "rejected nodes"),
        ({"profile": "bin-packing"}, "profile"),
    ]:
        problems = problems_of(_with_step(fit, 0, expect=_expect(spread, **claims)), fit_run)
        assert any(f"{said}: the lesson says" in p for p in problems), (claims, problems)


def test_a_node_claimed_where_the_run_tied_is_refused_unless_the_tie_is_claimed() -> None:
    # The lesson as it was before: no cache on node-d, so node-c and node-d score the same.
    text = lesson_get("topology-spread").manifests
    start = text.index("# A cache already runs")
    manifests = text[:start] + text[text.index("# maxSkew 1 across zones") :]
    run = new_simulation(load_manifests(manifests, "tied.yaml"), seed=APP_SEED)
    run.run()
    trace = run.traces[0].to_json()
    assert trace["selected"]["tieSet"] == ["node-c", "node-d"]
    info = lesson_get("topology-spread").info
    step = info.steps[0]
    claimed = dataclasses.replace(step, expect=_expect(step, node=trace["node"]))
    claimed.expect.pop("totals")
    problems = lessons.step_problems(claimed, trace)
    assert problems and "at random among the 2 nodes tied" in problems[0]
    tie = dataclasses.replace(claimed, expect={**claimed.expect, "tie": ["node-c", "node-d"]})
    assert lessons.step_problems(tie, trace) == []


def test_a_missing_or_extra_cycle_and_a_wrong_pending_list_are_refused() -> None:
    info = lesson_get("backoff-requeue-and-gates").info
    run = simulate("backoff-requeue-and-gates")
    shorter = dataclasses.replace(info, steps=info.steps[:1], pending=("default/big",))
    problems = problems_of(shorter, run)
    assert any("the lesson has 1 steps, the run 2 cycles" in p for p in problems)
    assert any("end.pending" in p for p in problems)


def test_a_lesson_file_without_claims_is_refused_naming_the_field() -> None:
    with pytest.raises(lessons.LessonFileError, match=r"steps\[0\]\.expect\.result"):
        lessons._steps("x", [{"pod": "a", "expect": {"node": "n"}, "reveal": "t"}])
    with pytest.raises(lessons.LessonFileError, match=r"unknown claim 'nod'"):
        lessons._steps("x", [{"pod": "a", "expect": {"result": "Scheduled", "nod": "n"}}])
    with pytest.raises(lessons.LessonFileError, match=r"steps\[0\]\.reveal: Required"):
        lessons._steps("x", [{"pod": "a", "expect": {"result": "Scheduled"}}])


def test_the_explanation_shown_before_a_step_names_no_outcome() -> None:
    """The text beside "Predict, then reveal" must not answer it: no outcome node in bold."""
    for info in lessons.lesson_list():
        run = simulate(info.slug)
        names = {node.name for node in run.store.list_objects("Node")}
        bold = {m.group(1) for m in lessons._BOLD.finditer(info.explanation)}
        assert not bold & names, (info.slug, bold & names)


def test_the_backoff_lesson_queue_is_as_its_text_says() -> None:
    run = simulate("backoff-requeue-and-gates")
    small = next(t.to_json() for t in run.traces if t.pod == "default/small")
    queue = small["queue"]
    assert [p["pod"] for p in queue["gated"]] == ["default/gated"]
    (parked,) = queue["unschedulablePods"]
    assert parked["pod"] == "default/big" and parked["unschedulablePlugins"] == ["NodeResourcesFit"]
