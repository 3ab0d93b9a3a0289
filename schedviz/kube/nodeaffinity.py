"""Node selectors, preferred scheduling terms and a pod's required node affinity.

Mirrors staging/src/k8s.io/component-helpers/scheduling/corev1/nodeaffinity/nodeaffinity.go, with
the parts of k8s.io/apimachinery it relies on: ``labels.NewRequirement`` (validation and
matching, including ``Gt``/``Lt``), the ``fields`` one-term selectors and the qualified-name and
label-value checks of ``util/validation``.

``NodeSelectorMatcher`` is upstream's ``LazyErrorNodeSelector``: a term that fails to parse never
matches, the others still do; the parse errors are kept in ``errors``, worded as upstream's
``field.Error`` ("path: Invalid value: ...: detail"); ``aggregate_message`` joins them the way
``utilerrors.Aggregate`` does.
``PreferredSchedulingTerms`` skips terms of weight 0 and empty terms, as upstream; upstream refuses
the whole list when a term fails to parse, so callers check ``errors`` before scoring.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass

from schedviz.kube.labels import selector_from_set
from schedviz.kube.objects import (
    Node,
    NodeSelector,
    NodeSelectorRequirement,
    NodeSelectorTerm,
    Pod,
    PreferredSchedulingTerm,
)

OP_IN = "In"
OP_NOT_IN = "NotIn"
OP_EXISTS = "Exists"
OP_DOES_NOT_EXIST = "DoesNotExist"
OP_GT = "Gt"
OP_LT = "Lt"

OBJECT_NAME_FIELD = "metadata.name"

_VALID_SELECTOR_OPERATORS = (OP_IN, OP_NOT_IN, OP_EXISTS, OP_DOES_NOT_EXIST, OP_GT, OP_LT)
_VALID_FIELD_SELECTOR_OPERATORS = (OP_IN, OP_NOT_IN)

# k8s.io/apimachinery/pkg/util/validation.
_QUALIFIED_NAME_MAX_LENGTH = 63
_QUALIFIED_NAME_FMT = "([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]"
_QUALIFIED_NAME_RE = re.compile(_QUALIFIED_NAME_FMT)
_LABEL_VALUE_RE = re.compile(f"({_QUALIFIED_NAME_FMT})?")
_DNS1123_LABEL_FMT = "[a-z0-9]([-a-z0-9]*[a-z0-9])?"
_DNS1123_SUBDOMAIN_RE = re.compile(f"{_DNS1123_LABEL_FMT}(\\.{_DNS1123_LABEL_FMT})*")
_DNS1123_SUBDOMAIN_MAX_LENGTH = 253
_GO_INT_RE = re.compile(r"[+-]?[0-9]+")
_INT64_MIN = -(2**63)
_INT64_MAX = 2**63 - 1


def parse_go_int64(value: str) -> int | None:
    """strconv.ParseInt(value, 10, 64): an optional sign and digits, within int64."""
    if _GO_INT_RE.fullmatch(value) is None:
        return None
    number = int(value)
    return number if _INT64_MIN <= number <= _INT64_MAX else None


_NAME_EXAMPLES = ("MyName", "my.name", "123-abc")
_QUALIFIED_NAME_ERR_MSG = (
    "must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an "
    "alphanumeric character"
)
_DNS1123_SUBDOMAIN_ERR_MSG = (
    "a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or "
    "'.', and must start and end with an alphanumeric character"
)
_LABEL_VALUE_ERR_MSG = (
    "a valid label must be an empty string or consist of alphanumeric characters, '-', '_' or "
    "'.', and must start and end with an alphanumeric character"
)


def _regex_error(message: str, fmt: str, *examples: str) -> str:
    """validation.RegexError."""
    shown = " or ".join(f"'{example}', " for example in examples)
    return f"{message} (e.g. {shown}regex used for validation is '{fmt}')"


def _qualified_name_errors(value: str) -> list[str]:
    """validation.IsQualifiedName."""
    parts = value.split("/")
    if len(parts) == 1:
        name = parts[0]
    elif len(parts) == 2:
        prefix, name = parts
        if not prefix:
            return ["prefix part must be non-empty"]
        if len(prefix) > _DNS1123_SUBDOMAIN_MAX_LENGTH:
            return [f"prefix part must be no more than {_DNS1123_SUBDOMAIN_MAX_LENGTH} characters"]
        if _DNS1123_SUBDOMAIN_RE.fullmatch(prefix) is None:
            fmt = _DNS1123_SUBDOMAIN_RE.pattern
            return ["prefix part " + _regex_error(_DNS1123_SUBDOMAIN_ERR_MSG, fmt, "example.com")]
    else:
        return [
            "a qualified name "
            + _regex_error(_QUALIFIED_NAME_ERR_MSG, _QUALIFIED_NAME_FMT, *_NAME_EXAMPLES)
            + " with an optional DNS subdomain prefix and '/' (e.g. 'example.com/MyName')"
        ]
    if not name:
        return ["name part must be non-empty"]
    errors = []
    if len(name) > _QUALIFIED_NAME_MAX_LENGTH:
        errors.append(f"name part must be no more than {_QUALIFIED_NAME_MAX_LENGTH} characters")
    if _QUALIFIED_NAME_RE.fullmatch(name) is None:
        errors.append(
            "name part "
            + _regex_error(_QUALIFIED_NAME_ERR_MSG, _QUALIFIED_NAME_FMT, *_NAME_EXAMPLES)
        )
    return errors


def _label_value_errors(value: str) -> list[str]:
    """validation.IsValidLabelValue."""
    errors = []
    if len(value) > _QUALIFIED_NAME_MAX_LENGTH:
        errors.append(f"must be no more than {_QUALIFIED_NAME_MAX_LENGTH} characters")
    if _LABEL_VALUE_RE.fullmatch(value) is None:
        errors.append(
            _regex_error(
                _LABEL_VALUE_ERR_MSG,
                _LABEL_VALUE_RE.pattern,
                "MyValue",
                "my_value",
                "12345",
            )
        )
    return errors


def _go_value(value: str | Sequence[str]) -> str:
    """How field.Error prints a bad value: %q for a string, %#v for a []string."""
    if isinstance(value, str):
        return json.dumps(value, ensure_ascii=False)
    if not value:
        return "[]string(nil)"
    return "[]string{" + ", ".join(json.dumps(v, ensure_ascii=False) for v in value) + "}"


def _invalid(path: str, value: str | Sequence[str], detail: str) -> str:
    """field.Invalid(path, value, detail).Error()."""
    return f"{path}: Invalid value: {_go_value(value)}: {detail}"


def _not_supported(path: str, value: str, supported: Iterable[str]) -> str:
    """field.NotSupported(path, value, supported).Error()."""
    listed = ", ".join(json.dumps(v) for v in supported)
    return f"{path}: Unsupported value: {_go_value(value)}: supported values: {listed}"


def aggregate_message(errors: Sequence[str]) -> str:
    """utilerrors.Aggregate.Error(): one message as is, several in brackets."""
    if len(errors) == 1:
        return errors[0]
    return "[" + ", ".join(errors) + "]"


@dataclass(frozen=True, slots=True)
class _LabelRequirement:
    """labels.Requirement, for the operators a NodeSelectorRequirement can use."""

    key: str
    operator: str
    values: frozenset[str]
    bound: int = 0  # the parsed value of Gt/Lt

    def matches(self, labels: Mapping[str, str]) -> bool:
        operator = self.operator
        if operator == OP_IN:
            return self.key in labels and labels[self.key] in self.values
        if operator == OP_NOT_IN:
            return self.key not in labels or labels[self.key] not in self.values
        if operator == OP_EXISTS:
            return self.key in labels
        if operator == OP_DOES_NOT_EXIST:
            return self.key not in labels
        if self.key not in labels:
            return False
        actual = parse_go_int64(labels[self.key])
        if actual is None:
            return False
        return actual > self.bound if operator == OP_GT else actual < self.bound


def _new_label_requirement(
    requirement: NodeSelectorRequirement, path: str
) -> tuple[_LabelRequirement | None, list[str]]:
    """labels.NewRequirement: the requirement, or the reasons it is invalid."""
    key, operator, values = requirement.key, requirement.operator, requirement.values
    errors = []
    key_errors = _qualified_name_errors(key)
    if key_errors:
        errors.append(_invalid(f"{path}.key", key, "; ".join(key_errors)))
    values_path = f"{path}.values"
    bound = 0
    if operator in (OP_IN, OP_NOT_IN):
        if not values:
            detail = "for 'in', 'notin' operators, values set can't be empty"
            errors.append(_invalid(values_path, values, detail))
    elif operator in (OP_EXISTS, OP_DOES_NOT_EXIST):
        if values:
            detail = "values set must be empty for exists and does not exist"
            errors.append(_invalid(values_path, values, detail))
    else:  # Gt, Lt: the only other operators the caller lets through
        if len(values) != 1:
            detail = "for 'Gt', 'Lt' operators, exactly one value is required"
            errors.append(_invalid(values_path, values, detail))
        for index, value in enumerate(values):
            parsed = parse_go_int64(value)
            if parsed is None:
                detail = "for 'Gt', 'Lt' operators, the value must be an integer"
                errors.append(_invalid(f"{values_path}[{index}]", value, detail))
            else:
                bound = parsed
    for index, value in enumerate(values):
        value_errors = _label_value_errors(value)
        if value_errors:
            errors.append(_invalid(f"{values_path}[{index}]", value, "; ".join(value_errors)))
    if errors:
        return None, errors
    return _LabelRequirement(key, operator, frozenset(values), bound), []


@dataclass(frozen=True, slots=True)
class _FieldRequirement:
    """fields.OneTermEqualSelector / OneTermNotEqualSelector."""

    key: str
    value: str
    equal: bool

    def matches(self, fields: Mapping[str, str]) -> bool:
        return (fields.get(self.key, "") == self.value) == self.equal


@dataclass(frozen=True, slots=True)
class _ParsedTerm:
    """A NodeSelectorTerm ready to match; ``None`` selectors are absent from the term."""

    label_requirements: tuple[_LabelRequirement, ...] | None
    field_requirements: tuple[_FieldRequirement, ...] | None

    def matches(self, labels: Mapping[str, str], fields: Mapping[str, str]) -> bool:
        if self.label_requirements is not None and not all(
            r.matches(labels) for r in self.label_requirements
        ):
            return False
        # As upstream, a node without fields (no name) passes the field selector.
        return (
            self.field_requirements is None
            or not fields
            or all(r.matches(fields) for r in self.field_requirements)
        )


def _parse_match_expressions(
    requirements: Sequence[NodeSelectorRequirement], path: str
) -> tuple[tuple[_LabelRequirement, ...], list[str]]:
    parsed: list[_LabelRequirement] = []
    errors: list[str] = []
    for index, requirement in enumerate(requirements):
        item_path = f"{path}[{index}]"
        if requirement.operator not in _VALID_SELECTOR_OPERATORS:
            errors.append(
                _not_supported(
                    f"{item_path}.operator", requirement.operator, _VALID_SELECTOR_OPERATORS
                )
            )
            continue
        label_requirement, requirement_errors = _new_label_requirement(requirement, item_path)
        if label_requirement is None:
            errors.extend(requirement_errors)
        else:
            parsed.append(label_requirement)
    return tuple(parsed), errors


def _parse_match_fields(
    requirements: Sequence[NodeSelectorRequirement], path: str
) -> tuple[tuple[_FieldRequirement, ...], list[str]]:
    parsed: list[_FieldRequirement] = []
    errors: list[str] = []
    for index, requirement in enumerate(requirements):
        item_path = f"{path}[{index}]"
        if requirement.operator not in _VALID_FIELD_SELECTOR_OPERATORS:
            errors.append(
                _not_supported(
                    f"{item_path}.operator", requirement.operator, _VALID_FIELD_SELECTOR_OPERATORS
                )
            )
        elif len(requirement.values) != 1:
            errors.append(
                _invalid(f"{item_path}.values", requirement.values, "must have one element")
            )
        else:
            parsed.append(
                _FieldRequirement(
                    requirement.key, requirement.values[0], requirement.operator == OP_IN
                )
            )
    return tuple(parsed), errors


def is_empty_node_selector_term(term: NodeSelectorTerm) -> bool:
    return not term.match_expressions and not term.match_fields


def _parse_term(term: NodeSelectorTerm, path: str) -> tuple[_ParsedTerm | None, list[str]]:
    """newNodeSelectorTerm: the parsed term, or None and the parse errors."""
    errors: list[str] = []
    labels = fields = None
    if term.match_expressions:
        labels, label_errors = _parse_match_expressions(
            term.match_expressions, f"{path}.matchExpressions"
        )
        errors.extend(label_errors)
    if term.match_fields:
        fields, field_errors = _parse_match_fields(term.match_fields, f"{path}.matchFields")
        errors.extend(field_errors)
    if errors:
        return None, errors
    return _ParsedTerm(labels, fields), []


def _node_fields(node: Node) -> dict[str, str]:
    """extractNodeFields: only metadata.name, and only when the node has a name."""
    return {OBJECT_NAME_FIELD: node.name} if node.name else {}


class NodeSelectorMatcher:
    """A NodeSelector ready to match nodes: terms ORed, empty and invalid terms match nothing."""

    __slots__ = ("_terms", "errors")

    def __init__(self, node_selector: NodeSelector, path: str = "") -> None:
        terms: list[_ParsedTerm] = []
        errors: list[str] = []
        terms_path = f"{path}.nodeSelectorTerms" if path else "nodeSelectorTerms"
        for index, term in enumerate(node_selector.node_selector_terms):
            if is_empty_node_selector_term(term):
                continue
            parsed, term_errors = _parse_term(term, f"{terms_path}[{index}]")
            if parsed is None:
                errors.extend(term_errors)
            else:
                terms.append(parsed)
        self._terms = tuple(terms)
        self.errors: tuple[str, ...] = tuple(errors)

    def match(self, node: Node | None) -> bool:
        if node is None:
            return False
        fields = _node_fields(node)
        return any(term.matches(node.labels, fields) for term in self._terms)

    def label_keys(self) -> frozenset[str] | None:
        """The label keys ``match`` reads of a node; None when it also reads the node's
        fields (a ``matchFields`` term), so that labels alone do not decide."""
        keys: set[str] = set()
        for term in self._terms:
            if term.field_requirements is not None:
                return None
            keys.update(r.key for r in term.label_requirements or ())
        return frozenset(keys)


@dataclass(frozen=True, slots=True)
class _WeightedTerm:
    term: _ParsedTerm
    weight: int


class PreferredSchedulingTerms:
    """Preferred node affinity terms; a node scores the sum of the weights of those it matches."""

    __slots__ = ("_terms", "errors")

    def __init__(self, terms: Iterable[PreferredSchedulingTerm], path: str = "") -> None:
        parsed_terms: list[_WeightedTerm] = []
        errors: list[str] = []
        for index, term in enumerate(terms):
            if term.weight == 0 or is_empty_node_selector_term(term.preference):
                continue
            parsed, term_errors = _parse_term(term.preference, f"{path}[{index}]")
            if parsed is None:
                errors.extend(term_errors)
            else:
                parsed_terms.append(_WeightedTerm(parsed, term.weight))
        self._terms = tuple(parsed_terms)
        self.errors: tuple[str, ...] = tuple(errors)

    def score(self, node: Node) -> int:
        fields = _node_fields(node)
        return sum(t.weight for t in self._terms if t.term.matches(node.labels, fields))


class RequiredNodeAffinity:
    """GetRequiredNodeAffinity: the pod's nodeSelector AND its required node affinity."""

    __slots__ = ("_labels", "_node_selector", "_node_selector_keys")

    def __init__(self, pod: Pod) -> None:
        self._labels = selector_from_set(pod.node_selector) if pod.node_selector else None
        self._node_selector_keys = tuple(pod.node_selector or ())
        node_affinity = pod.affinity.node_affinity if pod.affinity is not None else None
        required = node_affinity.required if node_affinity is not None else None
        self._node_selector = NodeSelectorMatcher(required) if required is not None else None

    @property
    def matches_every_node(self) -> bool:
        """The pod has neither a nodeSelector nor required node affinity."""
        return self._labels is None and self._node_selector is None

    def match(self, node: Node) -> bool:
        if self._labels is not None and not self._labels.matches(node.labels):
            return False
        if self._node_selector is not None:
            return self._node_selector.match(node)
        return True

    def label_keys(self) -> frozenset[str] | None:
        """The label keys ``match`` reads of a node (the nodeSelector's and the required
        terms'); None when it also reads the node's fields."""
        keys = frozenset(self._node_selector_keys)
        if self._node_selector is None:
            return keys
        term_keys = self._node_selector.label_keys()
        return None if term_keys is None else keys | term_keys
