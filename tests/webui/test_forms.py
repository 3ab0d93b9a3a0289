"""The UI's small syntaxes and how the services' messages find their fields."""

from __future__ import annotations

import pytest
from django import forms

from webui.forms import (
    POD_ROUTES,
    PodForm,
    add_service_errors,
    document_count,
    input_messages,
    parse_labels,
    parse_node_affinity,
    parse_taints,
    parse_tolerations,
    parse_topology_spread,
    split_service_message,
)


@pytest.mark.parametrize(
    ("text", "labels"),
    [
        ("", {}),
        ("a=b", {"a": "b"}),
        ("a=b, c=d\n e = f ", {"a": "b", "c": "d", "e": "f"}),
        ("empty=", {"empty": ""}),
    ],
)
def test_labels(text: str, labels: dict[str, str]) -> None:
    assert parse_labels(text) == labels


@pytest.mark.parametrize("text", ["novalue", "=b"])
def test_labels_without_key_or_equals_are_refused(text: str) -> None:
    with pytest.raises(forms.ValidationError):
        parse_labels(text)


def test_taints_follow_kubectl_taint() -> None:
    assert parse_taints("a=b:NoSchedule\nc:NoExecute") == [
        {"key": "a", "value": "b", "effect": "NoSchedule"},
        {"key": "c", "effect": "NoExecute"},
    ]
    with pytest.raises(forms.ValidationError, match="Effect one of"):
        parse_taints("a=b:Sometimes")
    with pytest.raises(forms.ValidationError):
        parse_taints("a=b")


@pytest.mark.parametrize(
    ("text", "toleration"),
    [
        ("a=b:NoSchedule", {"key": "a", "operator": "Equal", "value": "b", "effect": "NoSchedule"}),
        ("a:NoExecute", {"key": "a", "operator": "Exists", "effect": "NoExecute"}),
        ("a", {"key": "a", "operator": "Exists"}),
        ("a=b", {"key": "a", "operator": "Equal", "value": "b"}),
        ("*", {"operator": "Exists"}),
    ],
)
def test_tolerations(text: str, toleration: dict[str, str]) -> None:
    assert parse_tolerations(text) == [toleration]


def test_node_affinity_lines_are_match_expressions() -> None:
    assert parse_node_affinity("zone In a, b\ngpu Exists\ncores Gt 4") == [
        {"key": "zone", "operator": "In", "values": ["a", "b"]},
        {"key": "gpu", "operator": "Exists"},
        {"key": "cores", "operator": "Gt", "values": ["4"]},
    ]
    with pytest.raises(forms.ValidationError, match="Operator one of"):
        parse_node_affinity("zone Inside a")


def test_topology_spread_defaults_to_skew_one_do_not_schedule() -> None:
    (constraint,) = parse_topology_spread("zone", "web")
    assert constraint == {
        "maxSkew": 1,
        "topologyKey": "zone",
        "whenUnsatisfiable": "DoNotSchedule",
        "labelSelector": {"matchLabels": {"app": "web"}},
    }
    (constraint,) = parse_topology_spread("host ScheduleAnyway 3", "web")
    assert (constraint["maxSkew"], constraint["whenUnsatisfiable"]) == (3, "ScheduleAnyway")
    with pytest.raises(forms.ValidationError):
        parse_topology_spread("zone lots", "web")


def test_a_list_of_field_errors_splits_into_one_per_field() -> None:
    message = (
        'Pod "p" is invalid: [spec.containers[0].resources.requests[cpu]: Invalid value: "x": '
        'bad, spec.tolerations[0].operator: Unsupported value: "Foo": supported values: '
        '"Equal", "Exists"]'
    )
    assert split_service_message(message) == [
        (
            "spec.containers[0].resources.requests[cpu]",
            'Pod "p" is invalid: spec.containers[0].resources.requests[cpu]: Invalid value: '
            '"x": bad',
        ),
        (
            "spec.tolerations[0].operator",
            'Pod "p" is invalid: spec.tolerations[0].operator: Unsupported value: "Foo": '
            'supported values: "Equal", "Exists"',
        ),
    ]


def test_messages_without_a_field_keep_their_text() -> None:
    assert split_service_message('pods "p" already exists') == [("", 'pods "p" already exists')]
    assert split_service_message("name: Required value") == [("name", "name: Required value")]


def test_service_errors_land_on_their_fields_or_on_the_form() -> None:
    form = PodForm({"name": "p", "namespace": "default", "count": "1"})
    assert form.is_valid()
    add_service_errors(
        form,
        [
            'Pod "p" is invalid: spec.nodeSelector: Invalid value: "x"',
            'pods "p" already exists',
            "something else entirely",
        ],
        POD_ROUTES,
        None,
    )
    assert "nodeSelector" in form.errors["node_selector"][0]
    assert form.errors["name"] == ['pods "p" already exists']
    assert form.non_field_errors() == ["something else entirely"]


@pytest.mark.parametrize(
    ("text", "documents"),
    [
        ("kind: Pod", 1),
        ("---\nkind: Pod\n", 1),
        ("kind: Pod\n---\n# only a comment\n---\n", 1),
        ("kind: Pod\n---\nkind: Node\n---\nkind: Pod", 3),
        ('{"kind": "List", "items": []}', 1),
        ("", 0),
    ],
)
def test_documents_are_counted_as_the_person_typed_them(text: str, documents: int) -> None:
    assert document_count(text) == documents


def test_errors_of_typed_input_say_which_document_only_when_there_are_several() -> None:
    messages = [
        'document 1 of <input>: Pod "a" is invalid: spec.containers: Required value',
        "document 1 of <input>, items[2]: expected an object, got string",
    ]
    assert input_messages(messages, "kind: Pod") == [
        'Pod "a" is invalid: spec.containers: Required value',
        "items[2]: expected an object, got string",
    ]
    several = input_messages(messages, "kind: Pod\n---\nkind: Pod\n---\nkind: Pod")
    assert several == [
        'document 1: Pod "a" is invalid: spec.containers: Required value',
        "document 1, items[2]: expected an object, got string",
    ]
    # A file's name stays: it says where to look.
    named = ["document 3 of pods.yaml: expected an object, got string"]
    assert input_messages(named, "a: 1") == named
