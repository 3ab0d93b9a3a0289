"""Node taints and pod tolerations.

Mirrors pkg/apis/core/validation/validation.go: validateNodeTaints and ValidateTolerations.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from schedviz.kube import errors as fe
from schedviz.kube.decode.meta import validate_label_name
from schedviz.kube.decode.reader import Reader, child, index
from schedviz.kube.decode.validation import is_valid_label_value
from schedviz.kube.errors import FieldError, Raw
from schedviz.kube.objects import (
    TAINT_EFFECT_NO_EXECUTE,
    TAINT_EFFECT_NO_SCHEDULE,
    TAINT_EFFECT_PREFER_NO_SCHEDULE,
    TOLERATION_OP_EQUAL,
    TOLERATION_OP_EXISTS,
    Taint,
    Toleration,
)

_TAINT_EFFECTS = (
    TAINT_EFFECT_NO_SCHEDULE,
    TAINT_EFFECT_PREFER_NO_SCHEDULE,
    TAINT_EFFECT_NO_EXECUTE,
)


def _validate_taint_effect(effect: str, allow_empty: bool, path: str) -> list[FieldError]:
    if not allow_empty and not effect:
        return [fe.required(path)]
    if effect not in _TAINT_EFFECTS:
        return [fe.not_supported(path, effect, _TAINT_EFFECTS)]
    return []


def read_taints(r: Reader, spec: Mapping[str, Any], path: str) -> tuple[Taint, ...]:
    taints = []
    for taint_path, raw in r.maps(spec, "taints", path):
        taints.append(
            Taint(
                key=r.string(raw, "key", taint_path),
                value=r.string(raw, "value", taint_path),
                effect=r.string(raw, "effect", taint_path),
            )
        )
    return tuple(taints)


def validate_node_taints(taints: tuple[Taint, ...], path: str) -> list[FieldError]:
    """validateNodeTaints. Upstream reports node taints under ``metadata.taints``, kept here."""
    errs: list[FieldError] = []
    seen: set[tuple[str, str]] = set()
    for i, taint in enumerate(taints):
        taint_path = index(path, i)
        errs.extend(validate_label_name(taint.key, child(taint_path, "key")))
        value_errs = is_valid_label_value(taint.value)
        if value_errs:
            errs.append(fe.invalid(child(taint_path, "value"), taint.value, ";".join(value_errs)))
        errs.extend(_validate_taint_effect(taint.effect, False, child(taint_path, "effect")))
        if (taint.key, taint.effect) in seen:
            shown = Raw(
                f"core.Taint{{Key:{fe.go_quote(taint.key)}, Value:{fe.go_quote(taint.value)}, "
                f"Effect:{fe.go_quote(taint.effect)}, TimeAdded:(*v1.Time)(nil)}}"
            )
            errs.append(
                FieldError(
                    fe.ErrorType.DUPLICATE,
                    taint_path,
                    shown,
                    "taints must be unique by key and effect pair",
                )
            )
            continue
        seen.add((taint.key, taint.effect))
    return errs


def read_tolerations(r: Reader, spec: Mapping[str, Any], path: str) -> tuple[Toleration, ...]:
    tolerations = []
    for tol_path, raw in r.maps(spec, "tolerations", path):
        toleration = Toleration(
            key=r.string(raw, "key", tol_path),
            operator=r.string(raw, "operator", tol_path),
            value=r.string(raw, "value", tol_path),
            effect=r.string(raw, "effect", tol_path),
            toleration_seconds=r.integer(raw, "tolerationSeconds", tol_path),
        )
        tolerations.append(toleration)
    return tuple(tolerations)


def validate_tolerations(tolerations: tuple[Toleration, ...], path: str) -> list[FieldError]:
    errs: list[FieldError] = []
    for i, toleration in enumerate(tolerations):
        errs.extend(_validate_toleration(toleration, index(path, i)))
    return errs


def _validate_toleration(toleration: Toleration, path: str) -> list[FieldError]:
    """One toleration of ValidateTolerations."""
    errs: list[FieldError] = []
    if toleration.key:
        errs.extend(validate_label_name(toleration.key, child(path, "key")))
    if not toleration.key and toleration.operator != TOLERATION_OP_EXISTS:
        errs.append(
            fe.invalid(
                child(path, "operator"),
                toleration.operator,
                "operator must be Exists when `key` is empty, "
                'which means "match all values and all keys"',
            )
        )
    if toleration.toleration_seconds is not None and toleration.effect != TAINT_EFFECT_NO_EXECUTE:
        errs.append(
            fe.invalid(
                child(path, "effect"),
                toleration.effect,
                "effect must be 'NoExecute' when `tolerationSeconds` is set",
            )
        )
    if toleration.operator in (TOLERATION_OP_EQUAL, ""):
        value_errs = is_valid_label_value(toleration.value)
        if value_errs:
            errs.append(fe.invalid(child(path, "operator"), toleration.value, ";".join(value_errs)))
    elif toleration.operator == TOLERATION_OP_EXISTS:
        if toleration.value:
            errs.append(
                fe.invalid(
                    child(path, "operator"),
                    toleration.value,
                    "value must be empty when `operator` is 'Exists'",
                )
            )
    else:
        errs.append(
            fe.not_supported(
                child(path, "operator"),
                toleration.operator,
                (TOLERATION_OP_EQUAL, TOLERATION_OP_EXISTS),
            )
        )
    if toleration.effect:
        errs.extend(_validate_taint_effect(toleration.effect, True, child(path, "effect")))
    return errs
