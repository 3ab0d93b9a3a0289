"""Ports component-helpers scheduling/corev1/nodeaffinity/nodeaffinity_test.go and the
MatchNodeSelectorTerms table of scheduling/corev1/helpers_test.go."""

from __future__ import annotations

import pytest

from schedviz.kube.nodeaffinity import (
    NodeSelectorMatcher,
    PreferredSchedulingTerms,
    RequiredNodeAffinity,
)
from schedviz.kube.objects import (
    Affinity,
    Node,
    NodeAffinity,
    NodeSelector,
    NodeSelectorRequirement,
    NodeSelectorTerm,
    Pod,
    PreferredSchedulingTerm,
)

NAME = "metadata.name"


def req(key: str, operator: str, *values: str) -> NodeSelectorRequirement:
    return NodeSelectorRequirement(key, operator, tuple(values))


def term(
    expressions: list[NodeSelectorRequirement] | None = None,
    fields: list[NodeSelectorRequirement] | None = None,
) -> NodeSelectorTerm:
    return NodeSelectorTerm(tuple(expressions or ()), tuple(fields or ()))


def selector(*terms: NodeSelectorTerm) -> NodeSelector:
    return NodeSelector(tuple(terms))


def node(name: str = "", labels: dict[str, str] | None = None) -> Node:
    return Node(name=name, labels=dict(labels or {}))


LABEL_1 = req("label_1", "In", "label_1_val")
HOST_1 = req(NAME, "In", "host_1")


def test_node_selector_reports_parse_errors_of_invalid_terms() -> None:
    matcher = NodeSelectorMatcher(
        selector(
            term(fields=[req(NAME, "In", "host_1", "host_2")]),
            term([LABEL_1], [HOST_1]),
            term([req("invalid key", "In", "label_value")]),
        )
    )
    assert matcher.errors == (
        "nodeSelectorTerms[0].matchFields[0].values: Invalid value: "
        '[]string{"host_1", "host_2"}: must have one element',
        'nodeSelectorTerms[2].matchExpressions[0].key: Invalid value: "invalid key": '
        "name part must consist of alphanumeric "
        "characters, '-', '_' or '.', and must start and end with an alphanumeric character "
        "(e.g. 'MyName',  or 'my.name',  or '123-abc', regex used for validation is "
        "'([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]')",
    )
    # Lazy: the valid term still matches.
    assert matcher.match(node("host_1", {"label_1": "label_1_val"}))
    assert not matcher.match(node("host_1"))


NODE_SELECTOR_MATCH_CASES = [
    ("nil node", selector(), None, False),
    (
        "node matches field selector, but not labels",
        selector(term([LABEL_1], [HOST_1])),
        node("host_1"),
        False,
    ),
    (
        "node matches field selector and label selector",
        selector(term([LABEL_1], [HOST_1])),
        node("host_1", {"label_1": "label_1_val"}),
        True,
    ),
    ("second term matches", selector(term([LABEL_1]), term(fields=[HOST_1])), node("host_1"), True),
    # helpers_test.go TestMatchNodeSelectorTerms
    (
        "node label matches matchExpressions terms",
        selector(term([LABEL_1])),
        node(labels={"label_1": "label_1_val"}),
        True,
    ),
    ("node field matches matchFields terms", selector(term(fields=[HOST_1])), node("host_1"), True),
    (
        "invalid node field requirement",
        selector(term(fields=[req(NAME, "In", "host_1", "h2")])),
        node("host_1"),
        False,
    ),
    (
        "fieldSelectorTerm with node labels",
        selector(term(fields=[HOST_1])),
        node("not_host_1", {NAME: "host_1"}),
        False,
    ),
    (
        "labelSelectorTerm with node fields",
        selector(term([req(NAME, "In", "host_1")])),
        node("host_1"),
        False,
    ),
    (
        "label and field terms, labels mismatched",
        selector(term([LABEL_1], [HOST_1])),
        node("host_1", {"label_1": "label_1_val-failed"}),
        False,
    ),
    (
        "multi-selector, one term matches",
        selector(term([LABEL_1]), term(fields=[HOST_1])),
        node("host_1", {"label_1": "label_1_val-failed"}),
        True,
    ),
    ("an empty term matches nothing", selector(term()), node("host_1"), False),
    ("no terms match nothing", selector(), node("host_1"), False),
    (
        "NotIn matchFields",
        selector(term(fields=[req(NAME, "NotIn", "host_1")])),
        node("host_2"),
        True,
    ),
    ("Gt on a label", selector(term([req("cores", "Gt", "4")])), node("n", {"cores": "8"}), True),
    ("Lt on a label", selector(term([req("cores", "Lt", "4")])), node("n", {"cores": "8"}), False),
    (
        "Gt with a label that is not a number",
        selector(term([req("cores", "Gt", "4")])),
        node("n", {"cores": "many"}),
        False,
    ),
    (
        "Gt with two values never matches",
        selector(term([req("cores", "Gt", "4", "5")])),
        node("n", {"cores": "8"}),
        False,
    ),
    (
        "an unknown operator never matches",
        selector(term([req("cores", "Near", "4")])),
        node("n", {"cores": "4"}),
        False,
    ),
    ("DoesNotExist", selector(term([req("gpu", "DoesNotExist")])), node("n"), True),
]


@pytest.mark.parametrize(
    ("node_selector", "target", "expected"),
    [case[1:] for case in NODE_SELECTOR_MATCH_CASES],
    ids=[case[0] for case in NODE_SELECTOR_MATCH_CASES],
)
def test_node_selector_match(
    node_selector: NodeSelector, target: Node | None, expected: bool
) -> None:
    assert NodeSelectorMatcher(node_selector).match(target) is expected


def test_preferred_terms_report_parse_errors() -> None:
    terms = PreferredSchedulingTerms(
        [
            PreferredSchedulingTerm(1, term(fields=[req(NAME, "In", "host_1", "host_2")])),
            PreferredSchedulingTerm(1, term([LABEL_1], [HOST_1])),
            PreferredSchedulingTerm(1, term([req("invalid key", "In", "label_value")])),
        ]
    )
    assert len(terms.errors) == 2
    assert terms.errors[0] == (
        '[0].matchFields[0].values: Invalid value: []string{"host_1", "host_2"}: '
        "must have one element"
    )
    assert terms.errors[1].startswith(
        '[2].matchExpressions[0].key: Invalid value: "invalid key": name part must consist'
    )


def test_preferred_terms_skip_terms_of_weight_zero() -> None:
    terms = PreferredSchedulingTerms(
        [PreferredSchedulingTerm(0, term(fields=[req(NAME, "In", "host_1", "host_2")]))]
    )
    assert terms.errors == ()
    assert terms.score(node("host_1")) == 0


def test_preferred_terms_score_sums_the_weights_of_matching_terms() -> None:
    terms = PreferredSchedulingTerms(
        [
            PreferredSchedulingTerm(5, term(fields=[HOST_1])),
            PreferredSchedulingTerm(7, term([req("unknown_label", "In", "unknown_label_val")])),
            PreferredSchedulingTerm(11, term([LABEL_1])),
        ]
    )
    assert terms.score(node("host_1", {"label_1": "label_1_val"})) == 16


@pytest.mark.parametrize(
    ("requirements", "errors"),
    [
        ([req("foo", "In", "bar", "baz")], ()),
        (
            [req("foo", "Exists", "bar", "baz")],
            (
                'root[0].values: Invalid value: []string{"bar", "baz"}: '
                "values set must be empty for exists and does not exist",
            ),
        ),
        ([req("foo", "Gt", "1")], ()),
        ([req("bar", "Lt", "7")], ()),
        (
            [req("bar", "Lt", "seven")],
            (
                'root[0].values[0]: Invalid value: "seven": '
                "for 'Gt', 'Lt' operators, the value must be an integer",
            ),
        ),
        (
            [req("foo", "In")],
            (
                "root[0].values: Invalid value: []string(nil): "
                "for 'in', 'notin' operators, values set can't be empty",
            ),
        ),
    ],
)
def test_node_selector_requirements_as_selector(
    requirements: list[NodeSelectorRequirement], errors: tuple[str, ...]
) -> None:
    matcher = NodeSelectorMatcher(selector(term(requirements)))
    expected = tuple(e.replace("root", "nodeSelectorTerms[0].matchExpressions") for e in errors)
    assert matcher.errors == expected


def pod_with(
    node_selector: dict[str, str] | None = None, required: NodeSelector | None = None
) -> Pod:
    affinity = Affinity(node_affinity=NodeAffinity(required=required)) if required else None
    return Pod(name="p", node_selector=dict(node_selector or {}), affinity=affinity)


def required(*terms: NodeSelectorTerm) -> NodeSelector:
    return selector(*terms)


REQUIRED_AFFINITY_CASES = [
    ("no selector", pod_with(), {}, "", True),
    ("missing labels", pod_with({"foo": "bar"}), {}, "", False),
    ("same labels", pod_with({"foo": "bar"}), {"foo": "bar"}, "", True),
    ("node labels are superset", pod_with({"foo": "bar"}), {"foo": "bar", "baz": "blah"}, "", True),
    ("node labels are subset", pod_with({"foo": "bar", "baz": "blah"}), {"foo": "bar"}, "", False),
    (
        "In matches",
        pod_with(required=required(term([req("foo", "In", "bar", "value2")]))),
        {"foo": "bar"},
        "",
        True,
    ),
    (
        "Gt matches",
        pod_with(required=required(term([req("kernel-version", "Gt", "0204")]))),
        {"kernel-version": "0206"},
        "",
        True,
    ),
    (
        "NotIn matches",
        pod_with(required=required(term([req("mem-type", "NotIn", "DDR", "DDR2")]))),
        {"mem-type": "DDR3"},
        "",
        True,
    ),
    (
        "Exists matches",
        pod_with(required=required(term([req("GPU", "Exists")]))),
        {"GPU": "NVIDIA-GRID-K1"},
        "",
        True,
    ),
    (
        "affinity not matching the labels",
        pod_with(required=required(term([req("foo", "In", "value1", "value2")]))),
        {"foo": "bar"},
        "",
        False,
    ),
    ("nil terms in affinity", pod_with(required=NodeSelector(())), {"foo": "bar"}, "", False),
    (
        "empty matchExpressions match nothing",
        pod_with(required=required(term([]))),
        {"foo": "bar"},
        "",
        False,
    ),
    ("no affinity", pod_with(), {"foo": "bar"}, "", True),
    (
        "affinity without a required selector",
        Pod(name="p", affinity=Affinity(node_affinity=NodeAffinity())),
        {"foo": "bar"},
        "",
        True,
    ),
    (
        "matchExpressions ANDed, matching",
        pod_with(
            required=required(term([req("GPU", "Exists"), req("GPU", "NotIn", "AMD", "INTER")]))
        ),
        {"GPU": "NVIDIA-GRID-K1"},
        "",
        True,
    ),
    (
        "matchExpressions ANDed, not matching",
        pod_with(required=required(term([req("GPU", "Exists"), req("GPU", "In", "AMD", "INTER")]))),
        {"GPU": "NVIDIA-GRID-K1"},
        "",
        False,
    ),
    (
        "terms ORed",
        pod_with(
            required=required(
                term([req("foo", "In", "bar", "value2")]),
                term([req("diffkey", "In", "wrong", "value2")]),
            )
        ),
        {"foo": "bar"},
        "",
        True,
    ),
    (
        "affinity and nodeSelector both satisfied",
        pod_with({"foo": "bar"}, required(term([req("foo", "Exists")]))),
        {"foo": "bar"},
        "",
        True,
    ),
    (
        "affinity satisfied, nodeSelector not",
        pod_with({"foo": "bar"}, required(term([req("foo", "Exists")]))),
        {"foo": "barrrrrr"},
        "",
        False,
    ),
    (
        "invalid value in the affinity term",
        pod_with(required=required(term([req("foo", "NotIn", "invalid value: ___@#$%^")]))),
        {"foo": "bar"},
        "",
        False,
    ),
    (
        "matchFields In matching",
        pod_with(required=required(term(fields=[req(NAME, "In", "node_1")]))),
        {},
        "node_1",
        True,
    ),
    (
        "matchFields In not matching",
        pod_with(required=required(term(fields=[req(NAME, "In", "node_1")]))),
        {},
        "node_2",
        False,
    ),
    (
        "two terms: fields do not match, expressions do",
        pod_with(
            required=required(
                term(fields=[req(NAME, "In", "node_1")]), term([req("foo", "In", "bar")])
            )
        ),
        {"foo": "bar"},
        "node_2",
        True,
    ),
    (
        "one term: fields do not match, expressions do",
        pod_with(required=required(term([req("foo", "In", "bar")], [req(NAME, "In", "node_1")]))),
        {"foo": "bar"},
        "node_2",
        False,
    ),
    (
        "one term: both match",
        pod_with(required=required(term([req("foo", "In", "bar")], [req(NAME, "In", "node_1")]))),
        {"foo": "bar"},
        "node_1",
        True,
    ),
    (
        "two terms: neither matches",
        pod_with(
            required=required(
                term(fields=[req(NAME, "In", "node_1")]),
                term([req("foo", "In", "not-match-to-bar")]),
            )
        ),
        {"foo": "bar"},
        "node_2",
        False,
    ),
]


@pytest.mark.parametrize(
    ("pod", "labels", "node_name", "expected"),
    [case[1:] for case in REQUIRED_AFFINITY_CASES],
    ids=[case[0] for case in REQUIRED_AFFINITY_CASES],
)
def test_pod_matches_node_selector_and_affinity_terms(
    pod: Pod, labels: dict[str, str], node_name: str, expected: bool
) -> None:
    assert RequiredNodeAffinity(pod).match(node(node_name, labels)) is expected
