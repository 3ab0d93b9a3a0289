"""Whether tolerations tolerate taints.

Mirrors staging/src/k8s.io/api/core/v1/toleration.go (``Toleration.ToleratesTaint`` and
``compareNumericValues``) and staging/src/k8s.io/component-helpers/scheduling/corev1/helpers.go
(``TolerationsTolerateTaint``, ``FindMatchingUntoleratedTaint``). The numeric ``Lt``/``Gt``
operators belong to the alpha TaintTolerationComparisonOperators feature gate, off by default as
upstream: without it those operators tolerate nothing.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable

from schedviz.kube.objects import (
    TOLERATION_OP_EQUAL,
    TOLERATION_OP_EXISTS,
    Taint,
    Toleration,
)

TOLERATION_OP_LT = "Lt"
TOLERATION_OP_GT = "Gt"

TaintFilter = Callable[[Taint], bool]

# A canonical decimal integer: no sign but "-", no leading zero, no "-0".
_CANONICAL_INT = re.compile(r"(0|-?[1-9][0-9]*)")
_INT64_MIN = -(2**63)
_INT64_MAX = 2**63 - 1


def _parse_canonical_int64(value: str) -> int | None:
    if _CANONICAL_INT.fullmatch(value) is None:
        return None
    number = int(value)
    return number if _INT64_MIN <= number <= _INT64_MAX else None


def compare_numeric_values(toleration_value: str, taint_value: str, operator: str) -> bool:
    """The ``Lt``/``Gt`` comparison; values that are not canonical int64 integers never match."""
    wanted = _parse_canonical_int64(toleration_value)
    actual = _parse_canonical_int64(taint_value)
    if wanted is None or actual is None:
        return False
    if operator == TOLERATION_OP_LT:
        return actual < wanted
    if operator == TOLERATION_OP_GT:
        return actual > wanted
    return False


def toleration_tolerates_taint(
    toleration: Toleration, taint: Taint, *, enable_comparison_operators: bool = False
) -> bool:
    """An empty effect matches every effect, an empty key with Exists matches every taint."""
    if toleration.effect and toleration.effect != taint.effect:
        return False
    if toleration.key and toleration.key != taint.key:
        return False
    operator = toleration.operator
    if operator in ("", TOLERATION_OP_EQUAL):
        return toleration.value == taint.value
    if operator == TOLERATION_OP_EXISTS:
        return True
    if enable_comparison_operators and operator in (TOLERATION_OP_LT, TOLERATION_OP_GT):
        return compare_numeric_values(toleration.value, taint.value, operator)
    return False


def tolerations_tolerate_taint(
    tolerations: Iterable[Toleration], taint: Taint, *, enable_comparison_operators: bool = False
) -> bool:
    return any(
        toleration_tolerates_taint(
            toleration, taint, enable_comparison_operators=enable_comparison_operators
        )
        for toleration in tolerations
    )


def find_matching_untolerated_taint(
    taints: Iterable[Taint],
    tolerations: Iterable[Toleration],
    inclusion_filter: TaintFilter | None,
    *,
    enable_comparison_operators: bool = False,
) -> Taint | None:
    """The first taint passing ``inclusion_filter`` that no toleration tolerates, else None."""
    tolerations = tuple(tolerations)
    for taint in taints:
        if inclusion_filter is not None and not inclusion_filter(taint):
            continue
        if not tolerations_tolerate_taint(
            tolerations, taint, enable_comparison_operators=enable_comparison_operators
        ):
            return taint
    return None
