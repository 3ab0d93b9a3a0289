"""Running a scenario: KEP-140's steps, the timeline of every write, the status, the figures."""

from __future__ import annotations

import dataclasses
import json
from typing import Any

from scenario_builders import create, delete, done, node, patch, pod, priority_class, scenario

from schedviz.kube.objects import Pod
from schedviz.scenario.patch import JSON_PATCH, MERGE, STRATEGIC_MERGE
from schedviz.scenario.runner import (
    PHASE_FAILED,
    PHASE_PAUSED,
    PHASE_SUCCEEDED,
    ScenarioRun,
    run_scenario,
)
from schedviz.scenario.spec import parse_scenario
from schedviz.scheduler.store import DELETED, ClusterStore

PREEMPTION = scenario(
    create("node-a", 0, node("node-a")),
    create("node-b", 0, node("node-b")),
    create("high", 0, priority_class("high", 1000)),
    create("low-1", 1, pod("low-1", "1500m")),
    create("low-2", 1, pod("low-2", "1500m")),
    patch("cordon", 2, "Node", "node-a", '{"spec":{"unschedulable":true}}', STRATEGIC_MERGE),
    create("vip", 3, pod("vip", "1", priorityClassName="high")),
    delete("gone", 4, "Pod", "low-1", "default"),
    done("done", 4),
)


def summary(event: dict[str, Any]) -> str:
    if "podScheduled" in event:
        bound = event["podScheduled"]
        return f"bind {bound['pod']['name']} {bound['node']}"
    if "done" in event:
        return "done"
    verb = next(v for v in ("create", "patch", "delete") if v in event)
    body = event[verb]
    if "result" in body and body["result"] is not None:
        name = body["result"]["metadata"]["name"]
    else:
        name = body["operation"]["objectMeta"]["name"]
    suffix = " (preemption)" if body.get("preemption") else ""
    return f"{verb} {name}{suffix}"


def timeline(run: ScenarioRun) -> list[tuple[str, str, str]]:
    return [
        (f"{e['step']['major']}.{e['step']['minor']}", e["id"], summary(e))
        for events in run.timeline.values()
        for e in events
    ]


def test_each_write_is_a_minor_step_and_a_preemption_is_a_delete() -> None:
    run = run_scenario(parse_scenario(PREEMPTION))
    assert timeline(run) == [
        ("0.0", "node-a", "create node-a"),
        ("0.1", "node-b", "create node-b"),
        ("0.2", "high", "create high"),
        ("1.0", "low-1", "create low-1"),
        ("1.1", "low-2", "create low-2"),
        ("1.2", "1.2", "bind low-1 node-a"),
        ("1.3", "1.3", "bind low-2 node-b"),
        ("2.0", "cordon", "patch node-a"),
        ("3.0", "vip", "create vip"),
        # The preemptor's status: Unschedulable, nominated to node-b.
        ("3.1", "3.1", "patch vip"),
        # The victim marked DisruptionTarget, then deleted.
        ("3.2", "3.2", "patch low-2"),
        ("3.3", "3.3", "delete low-2 (preemption)"),
        ("3.4", "3.4", "bind vip node-b"),
        ("4.0", "gone", "delete low-1"),
        ("4.1", "done", "done"),
    ]
    status = run.document()["status"]
    assert status["phase"] == PHASE_SUCCEEDED
    assert status["stepStatus"] == {
        "step": {"major": 4, "minor": 1},
        "phase": "Finished",
        "runningSimulationController": "kube-scheduler",
    }
    nominated = json.loads(run.timeline["3"][1]["patch"]["operation"]["patch"])
    assert nominated["status"]["nominatedNodeName"] == "node-b"
    assert run.timeline["3"][3]["delete"]["preemption"]["reason"] == "PreemptionByScheduler"


def test_the_step_figures_count_pending_preemptions_and_requests() -> None:
    run = run_scenario(parse_scenario(PREEMPTION))
    step3 = run.steps[3]
    assert (step3["pending"], step3["bindings"], step3["preemptions"]) == (0, 1, 1)
    assert step3["attempts"] == {"default/vip": 2}
    cpu = step3["resources"]["cpu"]
    assert (cpu["requested"], cpu["allocatable"], cpu["utilisation"]) == (2500, 4000, 0.625)
    assert cpu["spread"] == {"min": 0.5, "max": 0.75, "mean": 0.625, "stddev": 0.125}
    assert [s["preemptions"] for s in run.steps] == [0, 0, 0, 1, 0]


def test_the_same_scenario_and_seed_give_the_same_bytes() -> None:
    first = run_scenario(parse_scenario(PREEMPTION), seed=7).to_json()
    second = run_scenario(parse_scenario(PREEMPTION), seed=7).to_json()
    assert first == second


def test_each_binding_names_the_cycle_whose_trace_bound_it() -> None:
    run = run_scenario(parse_scenario(PREEMPTION), encoded_traces=False)
    traces = {t.cycle: t for t in run.simulation.traces}
    bindings = [
        e["podScheduled"] for es in run.timeline.values() for e in es if "podScheduled" in e
    ]
    assert len(bindings) == 3
    for bound in bindings:
        trace = traces[bound["cycle"]]
        assert trace.pod == f"default/{bound['pod']['name']}"
        assert trace.selected_node == bound["node"]


def test_a_scenario_without_a_done_operation_is_paused_with_the_pending_pods_named() -> None:
    run = run_scenario(
        parse_scenario(
            scenario(create("n", 0, node("a", cpu="1")), create("p", 1, pod("big", "2")))
        )
    )
    assert run.phase == PHASE_PAUSED
    assert run.message == "stopped: 1 pod unschedulable, no event can change that"
    assert run.steps[-1]["unschedulable"] == 1


def test_an_operation_the_api_refuses_fails_the_scenario_at_its_step() -> None:
    run = run_scenario(
        parse_scenario(
            scenario(create("n", 0, node("a")), delete("x", 1, "Pod", "ghost"), done("d", 2))
        )
    )
    document = run.document()
    assert document["status"]["phase"] == PHASE_FAILED
    assert document["status"]["message"] == 'pods "ghost" not found'
    assert document["status"]["stepStatus"]["phase"] == "Operating"
    assert list(run.timeline) == ["0", "1"]


def test_creating_what_exists_fails_as_the_api_server_answers() -> None:
    run = run_scenario(
        parse_scenario(scenario(create("a", 0, node("a")), create("b", 1, node("a"))))
    )
    assert (run.phase, run.message) == (PHASE_FAILED, 'nodes "a" already exists')


def test_a_pod_spec_patch_beyond_what_pod_updates_allow_is_refused() -> None:
    run = run_scenario(
        parse_scenario(
            scenario(
                create("p", 0, pod("web")),
                patch("x", 1, "Pod", "web", {"spec": {"nodeName": "a"}}, MERGE, "default"),
            )
        )
    )
    assert run.phase == PHASE_FAILED
    assert run.message.startswith(
        'Pod "web" is invalid: spec: Forbidden: pod updates may not change fields other than '
        "`spec.containers[*].image`"
    )


def test_a_patch_to_a_pods_labels_is_allowed_and_recorded_with_its_result() -> None:
    run = run_scenario(
        parse_scenario(
            scenario(
                create("p", 0, pod("web")),
                patch("l", 1, "Pod", "web", {"metadata": {"labels": {"x": "y"}}}, MERGE, "default"),
            )
        )
    )
    event = run.timeline["1"][0]
    assert event["id"] == "l"
    assert event["patch"]["result"]["metadata"]["labels"] == {"x": "y"}


def test_a_tainted_node_holds_a_pod_until_a_json_patch_removes_the_taint() -> None:
    tainted = node("a")
    tainted["spec"] = {"taints": [{"key": "maintenance", "effect": "NoSchedule"}]}
    run = run_scenario(
        parse_scenario(
            scenario(
                create("n", 0, tainted),
                create("p", 1, pod("web")),
                patch("t", 2, "Node", "a", [{"op": "remove", "path": "/spec/taints"}], JSON_PATCH),
            )
        )
    )
    assert [s["pending"] for s in run.steps] == [0, 1, 0]
    assert summary(run.timeline["2"][-1]) == "bind web a"


def test_a_controllers_reaction_is_recorded_after_the_write_that_woke_it() -> None:
    """A ReplicaSet-like controller replacing a deleted pod inside the delete's notification:
    the recorder, watching first, still puts the delete before the replacement."""

    def start(store: ClusterStore) -> None:
        def on_event(event_type: str, old: Any, new: Any) -> None:
            if event_type == DELETED and isinstance(old, Pod) and old.owner_references:
                replacement = dataclasses.replace(
                    old, name=old.name + "-r", node_name="", conditions=()
                )
                store.apply(replacement)

        store.watch(on_event)

    owned = pod("web")
    owned["metadata"]["ownerReferences"] = [
        {
            "apiVersion": "apps/v1",
            "kind": "ReplicaSet",
            "name": "rs",
            "uid": "u",
            "controller": True,
        }
    ]
    run = run_scenario(
        parse_scenario(
            scenario(
                create("n", 0, node("a")),
                create("p", 0, owned),
                delete("d", 1, "Pod", "web", "default"),
            )
        ),
        controllers=[start],
    )
    assert [summary(e) for e in run.timeline["1"]] == [
        "delete web",
        "create web-r",
        "bind web-r a",
    ]


def test_the_timed_form_runs_the_clock_to_each_operation_and_retries_on_the_flushes() -> None:
    timed = scenario(
        {"id": "n", "at": "0s", "createOperation": {"object": node("a", cpu="1")}},
        {"id": "big", "at": "10s", "createOperation": {"object": pod("big", "2")}},
        {"id": "more", "at": "1m", "createOperation": {"object": node("b", cpu="4")}},
        until="12m",
    )
    run = run_scenario(parse_scenario(timed))
    assert [e["time"] for e in run.timeline["1"][:1]] == [10.0]
    assert run.timeline["2"][0]["time"] == 60.0
    assert summary(run.timeline["2"][-1]) == "bind big b"
    assert run.steps[-1]["time"] == 720.0


def test_the_timed_form_shows_the_unschedulable_pods_flush_after_five_minutes() -> None:
    """A pod no event can help is retried when podMaxInUnschedulablePodsDuration (5 minutes)
    has passed, at the 30-second flush that finds it: twice more in 12 minutes."""
    timed = scenario(
        {"id": "n", "at": "0s", "createOperation": {"object": node("a", cpu="1")}},
        {"id": "big", "at": "10s", "createOperation": {"object": pod("big", "2")}},
        until="12m",
    )
    run = run_scenario(parse_scenario(timed), encoded_traces=False)
    assert [t.time for t in run.simulation.traces] == [10.0, 330.0, 660.0]
    assert run.steps[-1]["attempts"] == {"default/big": 3}
