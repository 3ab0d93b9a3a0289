"""Errors in the API server's words.

Mirrors k8s.io/apimachinery/pkg/util/validation/field/errors.go (``FieldError`` and its
constructors, ``ErrorBody`` formatting, ``ToAggregate``) and the messages of
k8s.io/apimachinery/pkg/api/errors/errors.go (``NewInvalid``, ``NewForbidden``,
``NewAlreadyExists``). Go's ``%q`` quoting is reproduced by ``go_quote``.

Deliberately different: every error can carry where it came from (file, document, list item), a
prefix the API server has no need for; several documents' errors are gathered in one
``ManifestError`` so nothing is half-loaded.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from decimal import Decimal
from enum import Enum
from typing import Any


class ErrorType(Enum):
    """field.ErrorType: the machine-readable reason and its canonical text."""

    NOT_FOUND = ("FieldValueNotFound", "Not found")
    REQUIRED = ("FieldValueRequired", "Required value")
    DUPLICATE = ("FieldValueDuplicate", "Duplicate value")
    INVALID = ("FieldValueInvalid", "Invalid value")
    NOT_SUPPORTED = ("FieldValueNotSupported", "Unsupported value")
    FORBIDDEN = ("FieldValueForbidden", "Forbidden")
    TOO_LONG = ("FieldValueTooLong", "Too long")
    TOO_MANY = ("FieldValueTooMany", "Too many")
    INTERNAL = ("InternalError", "Internal error")
    TYPE_INVALID = ("FieldValueTypeInvalid", "Invalid value")

    @property
    def reason(self) -> str:
        return self.value[0]

    @property
    def text(self) -> str:
        return self.value[1]


class Raw(str):
    """A bad value printed as is, without quotes: what Go does for a ``fmt.Stringer``."""


class _Omit:
    """field's ``omitValue``: the error body names no value."""


OMIT_VALUE = _Omit()

_NO_VALUE_TYPES = {ErrorType.REQUIRED, ErrorType.FORBIDDEN, ErrorType.TOO_LONG, ErrorType.INTERNAL}

_GO_ESCAPES = {
    "\a": "\\a",
    "\b": "\\b",
    "\f": "\\f",
    "\n": "\\n",
    "\r": "\\r",
    "\t": "\\t",
    "\v": "\\v",
    "\\": "\\\\",
    '"': '\\"',
}


def go_quote(text: str) -> str:
    """strconv.Quote: a double-quoted Go string literal."""
    out = ['"']
    for char in text:
        if char in _GO_ESCAPES:
            out.append(_GO_ESCAPES[char])
        elif char.isprintable():
            out.append(char)
        elif ord(char) < 0x80:
            out.append(f"\\x{ord(char):02x}")
        elif ord(char) <= 0xFFFF:
            out.append(f"\\u{ord(char):04x}")
        else:
            out.append(f"\\U{ord(char):08x}")
    out.append('"')
    return "".join(out)


def _go_float(value: float) -> str:
    """strconv.FormatFloat(v, 'g', -1, 64), which fmt's %v uses: shortest digits, and an
    exponent when it is below -4 or at least 6 (1e+06, 1.5e-05, 123456, 0.0001)."""
    if math.isinf(value):
        return "+Inf" if value > 0 else "-Inf"
    if math.isnan(value):
        return "NaN"
    if value == 0:
        return "-0" if math.copysign(1, value) < 0 else "0"
    sign, digit_tuple, exponent = Decimal(repr(value)).as_tuple()
    digits = "".join(map(str, digit_tuple)).rstrip("0") or "0"
    point = len(digit_tuple) + int(exponent)  # digits before the decimal point
    prefix = "-" if sign else ""
    power = point - 1
    if power < -4 or power >= 6:
        mantissa = digits[0] + ("." + digits[1:] if len(digits) > 1 else "")
        return f"{prefix}{mantissa}e{'-' if power < 0 else '+'}{abs(power):02d}"
    if point <= 0:
        return f"{prefix}0.{'0' * -point}{digits}"
    if point >= len(digits):
        return prefix + digits + "0" * (point - len(digits))
    return f"{prefix}{digits[:point]}.{digits[point:]}"


def _go_literal(value: Any) -> str:
    """Roughly fmt's %#v for the composite values a manifest can hold."""
    if isinstance(value, str):
        return go_quote(value)
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int):
        return str(value)
    if isinstance(value, float):
        return _go_float(value)
    if value is None:
        return "interface {}(nil)"
    if isinstance(value, dict):
        items = ", ".join(f"{_go_literal(k)}:{_go_literal(v)}" for k, v in value.items())
        if all(isinstance(v, str) for v in value.values()):
            return f"map[string]string{{{items}}}"
        return f"map[string]interface {{}}{{{items}}}"
    if isinstance(value, list | tuple):
        items = ", ".join(_go_literal(v) for v in value)
        if all(isinstance(v, str) for v in value):
            return f"[]string{{{items}}}"
        return f"[]interface {{}}{{{items}}}"
    return str(value)


def format_value(value: Any) -> str:
    """How ErrorBody prints a bad value."""
    if value is None:
        return "null"
    if isinstance(value, Raw):
        return str(value)
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int):
        return str(value)
    if isinstance(value, float):
        return _go_float(value)
    if isinstance(value, str):
        return go_quote(value)
    return _go_literal(value)


@dataclass(frozen=True, slots=True)
class FieldError:
    """field.Error: one invalid field, e.g. ``spec.containers[0].name: Required value``."""

    type: ErrorType
    field: str
    bad_value: Any = ""
    detail: str = ""

    def body(self) -> str:
        """ErrorBody: the message without the field path."""
        if self.type in _NO_VALUE_TYPES or isinstance(self.bad_value, _Omit):
            text = self.type.text
        else:
            text = f"{self.type.text}: {format_value(self.bad_value)}"
        if self.detail:
            text += f": {self.detail}"
        return text

    def __str__(self) -> str:
        return f"{self.field}: {self.body()}"

    def with_prefix(self, prefix: str) -> FieldError:
        """The same error under a parent path (``prefix`` ends with a dot or is empty)."""
        if not prefix:
            return self
        return FieldError(self.type, prefix + self.field, self.bad_value, self.detail)


def invalid(field: str, value: Any, detail: str) -> FieldError:
    return FieldError(ErrorType.INVALID, field, value, detail)


def required(field: str, detail: str = "") -> FieldError:
    return FieldError(ErrorType.REQUIRED, field, "", detail)


def duplicate(field: str, value: Any) -> FieldError:
    return FieldError(ErrorType.DUPLICATE, field, value, "")


def not_found(field: str, value: Any) -> FieldError:
    return FieldError(ErrorType.NOT_FOUND, field, value, "")


def forbidden(field: str, detail: str) -> FieldError:
    return FieldError(ErrorType.FORBIDDEN, field, "", detail)


def type_invalid(field: str, value: Any, detail: str) -> FieldError:
    return FieldError(ErrorType.TYPE_INVALID, field, value, detail)


def not_supported(field: str, value: Any, valid_values: Sequence[str]) -> FieldError:
    detail = ""
    if valid_values:
        detail = "supported values: " + ", ".join(go_quote(v) for v in valid_values)
    return FieldError(ErrorType.NOT_SUPPORTED, field, value, detail)


def too_long(field: str, max_length: int) -> FieldError:
    return FieldError(ErrorType.TOO_LONG, field, "", f"must have at most {max_length} bytes")


def too_many(field: str, actual: int, maximum: int) -> FieldError:
    detail = f"must have at most {maximum} items" if maximum >= 0 else "has too many items"
    value: Any = actual if actual >= 0 else OMIT_VALUE
    return FieldError(ErrorType.TOO_MANY, field, value, detail)


def aggregate_message(messages: Iterable[str]) -> str:
    """utilerrors.NewAggregate(...).Error(): one message bare, several in brackets, no repeats."""
    unique = list(dict.fromkeys(messages))
    if len(unique) == 1:
        return unique[0]
    return "[" + ", ".join(unique) + "]"


def _location(source: str, document_index: int | None, item_path: str) -> str:
    parts = []
    if document_index is not None:
        parts.append(
            f"document {document_index} of {source}" if source else f"document {document_index}"
        )
    elif source:
        parts.append(source)
    if item_path:
        parts.append(item_path)
    return ", ".join(parts)


class LocatedError(Exception):
    """An error that can say where it came from: ``document 3 of pods.yaml: ...``."""

    def __init__(self, source: str = "", document_index: int | None = None, item_path: str = ""):
        super().__init__()
        self.source = source
        self.document_index = document_index
        self.item_path = item_path

    @property
    def message(self) -> str:
        raise NotImplementedError

    def locate(self, source: str, document_index: int | None, item_path: str = "") -> None:
        """Records where the error came from (done by the loader, once it knows)."""
        self.source = source
        self.document_index = document_index
        self.item_path = item_path

    def __str__(self) -> str:
        where = _location(self.source, self.document_index, self.item_path)
        return f"{where}: {self.message}" if where else self.message


class InvalidObjectError(LocatedError):
    """errors.NewInvalid: ``Pod "web-1" is invalid: [err1, err2]``.

    ``document_index`` counts documents from 1, as a person reading the file would.
    """

    def __init__(
        self,
        kind: str,
        name: str,
        errors: Sequence[FieldError],
        document_index: int | None = None,
        source: str = "",
        *,
        group: str = "",
        item_path: str = "",
    ):
        super().__init__(source, document_index, item_path)
        self.kind = kind
        self.name = name
        self.errors = list(errors)
        self.group = group

    @property
    def qualified_kind(self) -> str:
        """schema.GroupKind.String(): ``PriorityClass.scheduling.k8s.io``, ``Pod`` for core."""
        return f"{self.kind}.{self.group}" if self.group else self.kind

    @property
    def message(self) -> str:
        agg = aggregate_message(str(e) for e in self.errors)
        return f"{self.qualified_kind} {go_quote(self.name)} is invalid: {agg}"


class DocumentError(LocatedError):
    """A document that cannot be read as an object: syntax, unknown kind, wrong shape.

    ``line`` (from 1) is kept for syntax errors; the message already names it.
    """

    def __init__(
        self,
        message: str,
        document_index: int | None = None,
        source: str = "",
        *,
        line: int | None = None,
        item_path: str = "",
    ):
        super().__init__(source, document_index, item_path)
        self._message = message
        self.line = line

    @property
    def message(self) -> str:
        return self._message


class ForbiddenError(LocatedError):
    """errors.NewForbidden as admission plugins return it: ``pods "web-1" is forbidden: ...``."""

    def __init__(self, resource: str, name: str, reason: str, *, namespace: str = ""):
        super().__init__()
        self.resource = resource
        self.name = name
        self.namespace = namespace
        self.reason = reason

    @property
    def message(self) -> str:
        return f"{self.resource} {go_quote(self.name)} is forbidden: {self.reason}"


class AlreadyExistsError(LocatedError):
    """errors.NewAlreadyExists: ``pods "web-1" already exists``."""

    def __init__(self, resource: str, name: str):
        super().__init__()
        self.resource = resource
        self.name = name

    @property
    def message(self) -> str:
        return f"{self.resource} {go_quote(self.name)} already exists"


class ManifestError(Exception):
    """Every error of a rejected input, one per line; nothing of the input is kept."""

    def __init__(self, errors: Sequence[LocatedError]):
        self.errors = list(errors)
        super().__init__(str(self))

    def __str__(self) -> str:
        return "\n".join(str(e) for e in self.errors)
