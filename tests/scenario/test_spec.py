"""Reading a Scenario: KEP-140's fields, the timed form, and every error naming its field."""

from __future__ import annotations

import json
from typing import Any

import pytest
from scenario_builders import create, delete, done, node, patch, pod, scenario

from schedviz.scenario.patch import STRATEGIC_MERGE
from schedviz.scenario.spec import (
    CREATE,
    DONE,
    PATCH,
    ScenarioError,
    load_scenario,
    parse_duration,
    parse_scenario,
)


def errors_of(document: Any) -> list[str]:
    with pytest.raises(ScenarioError) as error:
        parse_scenario(document)
    return error.value.errors


def test_it_reads_each_operation_with_its_step_and_type() -> None:
    read = parse_scenario(
        scenario(
            create("n", 0, node("a")),
            patch("p", 1, "Node", "a", '{"spec":{"unschedulable":true}}', STRATEGIC_MERGE),
            done("d", 1),
        )
    )
    assert [(op.id, op.step, op.type) for op in read.operations] == [
        ("n", 0, CREATE),
        ("p", 1, PATCH),
        ("d", 1, DONE),
    ]
    assert read.operations[1].patch == {"spec": {"unschedulable": True}}
    assert read.operations[1].target is not None and read.operations[1].target.key == "a"
    assert read.steps() == [0, 1]


def test_a_patch_or_delete_of_a_namespaced_kind_defaults_to_the_default_namespace() -> None:
    read = parse_scenario(scenario(delete("x", 0, "Pod", "web")))
    assert read.operations[0].target is not None
    assert read.operations[0].target.key == "default/web"


@pytest.mark.parametrize(
    ("operation", "expected"),
    [
        (
            patch("p", 0, "Node", "a", "{}", "application/yaml"),
            'spec.operations[0].patchOperation.patchType: Unsupported value: "application/yaml": '
            'supported values: "application/strategic-merge-patch+json", '
            '"application/merge-patch+json", "application/json-patch+json"',
        ),
        (
            {"id": "x", "step": 0},
            "spec.operations[0]: Required value: exactly one of `createOperation`, "
            "`patchOperation`, `deleteOperation`, `doneOperation` is needed",
        ),
        (
            {"id": "x", "step": 0, "doneOperation": {}, "deleteOperation": {}},
            "spec.operations[0].doneOperation: Forbidden: exactly one of `createOperation`, "
            "`patchOperation`, `deleteOperation`, `doneOperation` is needed",
        ),
        ({"id": "x", "doneOperation": {}}, "spec.operations[0].step: Required value"),
        (
            {"id": "x", "step": -1, "doneOperation": {}},
            "spec.operations[0].step: Invalid value: -1: must be a non-negative integer",
        ),
        (
            create("x", 0, {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p"}}),
            "spec.operations[0].createOperation.object.spec.containers: Required value",
        ),
        (
            delete("x", 0, "Gizmo", "g"),
            'spec.operations[0].deleteOperation.typeMeta.kind: Unsupported value: "Gizmo"',
        ),
        (
            {
                "id": "x",
                "step": 0,
                "deleteOperation": {"typeMeta": {"apiVersion": "v1", "kind": "Pod"}},
            },
            "spec.operations[0].deleteOperation.objectMeta: Required value",
        ),
        (
            patch("p", 0, "Node", "a", "[1]", STRATEGIC_MERGE),
            'spec.operations[0].patchOperation.patch: Invalid value: "[1]": must be an object',
        ),
        (
            {"id": "x", "at": "soon", "doneOperation": {}},
            'spec.operations[0].at: Invalid value: "soon": must be a duration',
        ),
    ],
)
def test_an_invalid_operation_is_refused_naming_its_field(
    operation: dict[str, Any], expected: str
) -> None:
    messages = errors_of(scenario(operation))
    assert any(m.startswith(expected) for m in messages), messages


def test_every_error_is_reported_at_once_in_one_message() -> None:
    with pytest.raises(ScenarioError) as error:
        parse_scenario(
            {
                "apiVersion": "v1",
                "kind": "Scenario",
                "metadata": {"name": "s"},
                "spec": {"operations": [done("a", 0), done("a", 0)]},
            }
        )
    assert str(error.value) == (
        'Scenario "s" is invalid: [apiVersion: Unsupported value: "v1": supported values: '
        '"simulation.kube-scheduler-simulator.x-k8s.io/v1alpha1", '
        'spec.operations[1].id: Duplicate value: "a"]'
    )


def test_operations_after_the_done_step_are_refused() -> None:
    messages = errors_of(scenario(done("d", 1), create("n", 2, node("a"))))
    assert messages == [
        "spec.operations[1].step: Invalid value: 2: after the step of the doneOperation, "
        "which ends the scenario"
    ]


def test_the_two_forms_cannot_be_mixed() -> None:
    messages = errors_of(scenario({"id": "a", "at": "1s", "doneOperation": {}}, done("b", 0)))
    assert messages == [
        "spec.operations[1].at: Required value: every operation has `at` when one has"
    ]


def test_the_timed_form_numbers_its_instants_as_major_steps_in_time_order() -> None:
    timed = parse_scenario(
        scenario(
            {"id": "late", "at": "1m30s", "createOperation": {"object": pod("b")}},
            {"id": "early", "at": 45, "createOperation": {"object": node("a")}},
            {"id": "also-early", "at": "45s", "createOperation": {"object": pod("a")}},
            until="10m",
        )
    )
    assert timed.timed and timed.until == 600.0
    assert [(op.id, op.step, op.at) for op in timed.operations] == [
        ("early", 0, 45.0),
        ("also-early", 0, 45.0),
        ("late", 1, 90.0),
    ]


def test_until_belongs_to_the_timed_form() -> None:
    assert errors_of(scenario(done("d", 0), until="1m")) == [
        "spec.until: Forbidden: only in the timed form (operations with `at`)"
    ]


@pytest.mark.parametrize(
    ("text", "seconds"),
    [("45s", 45.0), ("1m30s", 90.0), ("1.5h", 5400.0), ("300ms", 0.3), ("0", 0.0), (12, 12.0)],
)
def test_durations_read_as_go_parses_them(text: Any, seconds: float) -> None:
    assert parse_duration(text) == pytest.approx(seconds)


@pytest.mark.parametrize("text", ["", "-1s", "5", "1d", "s", True])
def test_what_go_does_not_parse_is_not_a_duration(text: Any) -> None:
    assert parse_duration(text) is None


def test_load_scenario_reads_yaml_and_json_alike() -> None:
    document = scenario(create("n", 0, node("a")), done("d", 0))
    from_json = load_scenario(json.dumps(document))
    assert [op.id for op in from_json.operations] == ["n", "d"]


def test_load_scenario_refuses_more_than_one_document() -> None:
    with pytest.raises(ScenarioError, match="expected one Scenario document, got 2"):
        load_scenario("a: 1\n---\nb: 2\n", "two.yaml")


def test_generate_name_gives_the_same_names_for_the_same_scenario() -> None:
    unnamed = pod("x")
    del unnamed["metadata"]["name"]
    unnamed["metadata"]["generateName"] = "web-"
    document = scenario(create("a", 0, unnamed), create("b", 0, unnamed))
    first = [op.object.name for op in parse_scenario(document).operations if op.object]
    again = [op.object.name for op in parse_scenario(document).operations if op.object]
    assert first == again
    assert all(name.startswith("web-") and len(name) == 9 for name in first)
    assert first[0] != first[1]
