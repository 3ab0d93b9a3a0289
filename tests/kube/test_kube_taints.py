"""Ports core/v1 toleration_test.go and component-helpers scheduling/corev1 helpers_test.go."""

from __future__ import annotations

from collections.abc import Callable

import pytest

from schedviz.kube.objects import Taint, Toleration
from schedviz.kube.taints import (
    compare_numeric_values,
    find_matching_untolerated_taint,
    toleration_tolerates_taint,
    tolerations_tolerate_taint,
)

NO_SCHEDULE = "NoSchedule"
NO_EXECUTE = "NoExecute"
SLA = "node.kubernetes.io/sla"

TOLERATES_TAINT_CASES = [
    # (description, toleration, taint, comparison operators enabled, tolerated)
    (
        "same key and effect, Exists, taint without value",
        Toleration("foo", "Exists", effect=NO_SCHEDULE),
        Taint("foo", NO_SCHEDULE),
        False,
        True,
    ),
    (
        "same key and effect, Exists, taint with a value",
        Toleration("foo", "Exists", effect=NO_SCHEDULE),
        Taint("foo", NO_SCHEDULE, "bar"),
        False,
        True,
    ),
    (
        "empty key with Exists matches every taint of the effect",
        Toleration("", "Exists", effect=NO_SCHEDULE),
        Taint("foo", NO_SCHEDULE, "bar"),
        False,
        True,
    ),
    (
        "same key, effect and value with Equal",
        Toleration("foo", "Equal", "bar", NO_SCHEDULE),
        Taint("foo", NO_SCHEDULE, "bar"),
        False,
        True,
    ),
    (
        "Equal with a different value",
        Toleration("foo", "Equal", "value1", NO_SCHEDULE),
        Taint("foo", NO_SCHEDULE, "value2"),
        False,
        False,
    ),
    (
        "Equal with a different effect",
        Toleration("foo", "Equal", "bar", NO_SCHEDULE),
        Taint("foo", NO_EXECUTE, "bar"),
        False,
        False,
    ),
    (
        "empty operator means Equal",
        Toleration("foo", "", "bar"),
        Taint("foo", NO_EXECUTE, "bar"),
        False,
        True,
    ),
    (
        "Gt with the taint value below the threshold",
        Toleration(SLA, "Gt", "950", NO_SCHEDULE),
        Taint(SLA, NO_SCHEDULE, "800"),
        True,
        False,
    ),
    (
        "Gt with the taint value above the threshold",
        Toleration(SLA, "Gt", "750", NO_SCHEDULE),
        Taint(SLA, NO_SCHEDULE, "950"),
        True,
        True,
    ),
    (
        "Gt tolerates nothing while the feature gate is off",
        Toleration(SLA, "Gt", "750", NO_SCHEDULE),
        Taint(SLA, NO_SCHEDULE, "950"),
        False,
        False,
    ),
    (
        "Lt with the taint value above the threshold",
        Toleration(SLA, "Lt", "800", NO_SCHEDULE),
        Taint(SLA, NO_SCHEDULE, "950"),
        True,
        False,
    ),
    (
        "Lt with the taint value below the threshold",
        Toleration(SLA, "Lt", "950", NO_SCHEDULE),
        Taint(SLA, NO_SCHEDULE, "800"),
        True,
        True,
    ),
    (
        "Gt with an equal value",
        Toleration(SLA, "Gt", "950", NO_SCHEDULE),
        Taint(SLA, NO_SCHEDULE, "950"),
        True,
        False,
    ),
    (
        "Gt with a non-numeric taint value",
        Toleration(SLA, "Gt", "950", NO_SCHEDULE),
        Taint(SLA, NO_SCHEDULE, "high"),
        True,
        False,
    ),
    (
        "Gt with negative values, taint below",
        Toleration("test-key", "Gt", "-100", NO_SCHEDULE),
        Taint("test-key", NO_SCHEDULE, "-200"),
        True,
        False,
    ),
    (
        "Gt with a large int64 threshold",
        Toleration("test-key", "Gt", "9223372036854775806", NO_SCHEDULE),
        Taint("test-key", NO_SCHEDULE, "100"),
        True,
        False,
    ),
]


@pytest.mark.parametrize(
    ("toleration", "taint", "comparison", "tolerated"),
    [case[1:] for case in TOLERATES_TAINT_CASES],
    ids=[case[0] for case in TOLERATES_TAINT_CASES],
)
def test_toleration_tolerates_taint(
    toleration: Toleration, taint: Taint, comparison: bool, tolerated: bool
) -> None:
    assert (
        toleration_tolerates_taint(toleration, taint, enable_comparison_operators=comparison)
        is tolerated
    )


@pytest.mark.parametrize(
    ("toleration_value", "taint_value", "operator", "expected"),
    [
        ("100", "200", "Gt", True),
        ("200", "100", "Gt", False),
        ("100", "100", "Gt", False),
        ("-100", "-50", "Gt", True),
        ("-50", "-100", "Gt", False),
        ("0", "1", "Gt", True),
        ("9223372036854775806", "9223372036854775807", "Gt", True),
        ("200", "100", "Lt", True),
        ("100", "200", "Lt", False),
        ("100", "100", "Lt", False),
        ("-50", "-100", "Lt", True),
        ("-100", "-50", "Lt", False),
        ("0", "-1", "Lt", True),
        ("abc", "100", "Gt", False),
        ("", "100", "Gt", False),
        ("0100", "200", "Gt", False),
        ("+100", "200", "Gt", False),
        ("100.5", "200", "Gt", False),
        ("-", "100", "Gt", False),
        ("100", "xyz", "Gt", False),
        ("100", "", "Gt", False),
        ("100", "0200", "Gt", False),
        ("100", "+200", "Lt", False),
        ("100", " 200 ", "Lt", False),
        ("100", "100", "Equal", False),
        ("100", "100", "Exists", False),
        ("0", "0", "Gt", False),
        ("0", "0", "Lt", False),
        ("0", "9223372036854775807", "Gt", True),
        ("0", "-9223372036854775808", "Lt", True),
    ],
)
def test_compare_numeric_values(
    toleration_value: str, taint_value: str, operator: str, expected: bool
) -> None:
    assert compare_numeric_values(toleration_value, taint_value, operator) is expected


def _everything(_: Taint) -> bool:
    return True


def _nothing(_: Taint) -> bool:
    return False


def _no_execute(taint: Taint) -> bool:
    return taint.effect == NO_EXECUTE


FOO_EXISTS = Toleration("foo", "Exists", effect=NO_SCHEDULE)

UNTOLERATED_CASES: list[
    tuple[str, list[Toleration], list[Taint], Callable[[Taint], bool] | None, bool, bool]
] = [
    ("empty tolerations tolerate empty taints", [], [], _everything, False, True),
    ("non-empty tolerations tolerate empty taints", [FOO_EXISTS], [], _everything, False, True),
    (
        "tolerations match all taints",
        [FOO_EXISTS],
        [Taint("foo", NO_SCHEDULE)],
        _everything,
        False,
        True,
    ),
    (
        "no taint passes the filter",
        [FOO_EXISTS],
        [Taint("bar", NO_SCHEDULE)],
        _nothing,
        False,
        True,
    ),
    (
        "no filter: every taint applies",
        [FOO_EXISTS],
        [Taint("bar", NO_SCHEDULE)],
        None,
        False,
        False,
    ),
    (
        "only the filtered taints must be tolerated",
        [Toleration("foo", "Exists", effect=NO_EXECUTE)],
        [Taint("foo", NO_EXECUTE), Taint("bar", NO_SCHEDULE)],
        _no_execute,
        False,
        True,
    ),
    (
        "Gt below the threshold",
        [Toleration(SLA, "Gt", "950", NO_SCHEDULE)],
        [Taint(SLA, NO_SCHEDULE, "800")],
        _everything,
        True,
        False,
    ),
    (
        "Gt above the threshold",
        [Toleration(SLA, "Gt", "750", NO_SCHEDULE)],
        [Taint(SLA, NO_SCHEDULE, "950")],
        _everything,
        True,
        True,
    ),
    (
        "Lt above the threshold",
        [Toleration(SLA, "Lt", "800", NO_SCHEDULE)],
        [Taint(SLA, NO_SCHEDULE, "950")],
        _everything,
        True,
        False,
    ),
    (
        "Gt with a non-numeric taint value",
        [Toleration(SLA, "Gt", "950", NO_SCHEDULE)],
        [Taint(SLA, NO_SCHEDULE, "high")],
        _everything,
        True,
        False,
    ),
    (
        "a later toleration tolerates what Gt cannot parse",
        [Toleration(SLA, "Gt", "950", NO_SCHEDULE), Toleration(SLA, "Exists", effect=NO_SCHEDULE)],
        [Taint(SLA, NO_SCHEDULE, "high")],
        _everything,
        True,
        True,
    ),
]


@pytest.mark.parametrize(
    ("tolerations", "taints", "inclusion_filter", "comparison", "tolerated"),
    [case[1:] for case in UNTOLERATED_CASES],
    ids=[case[0] for case in UNTOLERATED_CASES],
)
def test_find_matching_untolerated_taint(
    tolerations: list[Toleration],
    taints: list[Taint],
    inclusion_filter: Callable[[Taint], bool] | None,
    comparison: bool,
    tolerated: bool,
) -> None:
    untolerated = find_matching_untolerated_taint(
        taints, tolerations, inclusion_filter, enable_comparison_operators=comparison
    )
    assert (untolerated is None) is tolerated


def test_it_returns_the_first_untolerated_taint() -> None:
    taints = [Taint("a", NO_SCHEDULE), Taint("b", NO_SCHEDULE, "x"), Taint("c", NO_SCHEDULE)]
    tolerations = [Toleration("a", "Exists")]
    assert find_matching_untolerated_taint(taints, tolerations, None) == taints[1]


def test_tolerations_tolerate_taint_when_any_toleration_does() -> None:
    taint = Taint("foo", NO_SCHEDULE, "bar")
    assert tolerations_tolerate_taint(
        [Toleration("x", "Exists"), Toleration("foo", "Exists")], taint
    )
    assert not tolerations_tolerate_taint([], taint)
