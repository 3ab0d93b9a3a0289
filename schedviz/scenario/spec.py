"""A Scenario document read and checked: KEP-140's form, and schedviz's timed form.

KEP-140 (kubernetes-sigs/kube-scheduler-simulator keps/140-scenario-based-simulation, its
``ScenarioSpec`` and ``ScenarioOperation`` types): ``apiVersion:
simulation.kube-scheduler-simulator.x-k8s.io/v1alpha1``, ``kind: Scenario``, ``spec.operations``
each with an ``id``, a major ``step`` and exactly one of ``createOperation`` (``object``),
``patchOperation`` (``typeMeta``, ``objectMeta``, ``patch``, ``patchType``), ``deleteOperation``
(``typeMeta``, ``objectMeta``) and ``doneOperation``. The KEP leaves ``PatchType`` without a
JSON tag; it is read here as ``patchType``, as the KEP's prose and the other fields spell it.
``spec.controllers`` (which controllers run) is accepted and not used: schedviz always runs its
controllers beside the scheduler.

The timed form (schedviz's own, docs/scenarios.md): each operation has ``at`` (a Go duration,
``45s``, ``1m30s``, or a number of seconds) instead of ``step``; the scenario may end at
``spec.until``. The operations at one instant form one major step, numbered from 0 in time
order.

Everything wrong is reported at once, each error naming its field as the API server would
(``spec.operations[3].patchOperation.patchType: Unsupported value: "x": supported values:
...``); objects to create are decoded and validated here, so a scenario never fails half-run
on an object it could have refused.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field, replace
from typing import Any

import yaml

from schedviz.kube.decode import KINDS, decode_object
from schedviz.kube.errors import (
    DocumentError,
    FieldError,
    InvalidObjectError,
    aggregate_message,
    duplicate,
    forbidden,
    invalid,
    not_supported,
    required,
    type_invalid,
)
from schedviz.kube.load import read_documents
from schedviz.kube.names import NameGenerator
from schedviz.kube.objects import KubeObject
from schedviz.scenario.patch import PATCH_TYPES

API_VERSION = "simulation.kube-scheduler-simulator.x-k8s.io/v1alpha1"
KIND = "Scenario"

CREATE = "createOperation"
PATCH = "patchOperation"
DELETE = "deleteOperation"
DONE = "doneOperation"
OPERATION_FIELDS = (CREATE, PATCH, DELETE, DONE)

CLUSTER_SCOPED = frozenset(
    {"Node", "Namespace", "PersistentVolume", "PriorityClass", "StorageClass", "CSINode"}
)

# At most this many operations in one scenario: a bound on what one request may ask.
MAX_OPERATIONS = 100_000


class ScenarioError(ValueError):
    """The scenario is invalid: every error, each naming its field."""

    def __init__(self, name: str, errors: list[FieldError] | list[str]):
        self.name = name
        self.errors = [str(e) for e in errors]
        super().__init__(f'Scenario "{name}" is invalid: {aggregate_message(self.errors)}')


@dataclass(frozen=True)
class Target:
    """What a patch or delete names: ``typeMeta`` and ``objectMeta``."""

    api_version: str
    kind: str
    name: str
    namespace: str

    @property
    def key(self) -> str:
        return f"{self.namespace}/{self.name}" if self.namespace else self.name

    def type_meta(self) -> dict[str, str]:
        return {"apiVersion": self.api_version, "kind": self.kind}

    def object_meta(self) -> dict[str, str]:
        meta = {"name": self.name}
        if self.namespace:
            meta["namespace"] = self.namespace
        return meta


@dataclass(frozen=True)
class Operation:
    index: int
    id: str
    step: int  # the major step (the timed form: its instant's rank)
    at: float | None  # the timed form's virtual time, in seconds
    type: str  # one of OPERATION_FIELDS
    raw: dict[str, Any]  # the operation's body as written (createOperation's value...)
    object: KubeObject | None = None  # createOperation: the decoded object
    target: Target | None = None  # patchOperation, deleteOperation
    patch: Any = None  # patchOperation: the patch, parsed
    patch_type: str = ""


@dataclass
class Scenario:
    name: str
    document: dict[str, Any]
    operations: list[Operation] = field(default_factory=list)
    timed: bool = False
    until: float | None = None

    def steps(self) -> list[int]:
        return sorted({op.step for op in self.operations})

    def at_step(self, step: int) -> list[Operation]:
        return [op for op in self.operations if op.step == step]

    def time_of(self, step: int) -> float | None:
        return next((op.at for op in self.operations if op.step == step), None)


_DURATION_PART = re.compile(r"(\d+(?:\.\d*)?|\.\d+)(ns|us|µs|ms|s|m|h)")
_UNIT_SECONDS = {"ns": 1e-9, "us": 1e-6, "µs": 1e-6, "ms": 1e-3, "s": 1.0, "m": 60.0, "h": 3600.0}


def parse_duration(value: Any) -> float | None:
    """time.ParseDuration for non-negative durations, or a number of seconds; None if neither."""
    if isinstance(value, bool):
        return None
    if isinstance(value, int | float):
        return float(value) if value >= 0 else None
    if not isinstance(value, str) or not value:
        return None
    if value == "0":
        return 0.0
    position, total = 0, 0.0
    while position < len(value):
        match = _DURATION_PART.match(value, position)
        if match is None:
            return None
        total += float(match.group(1)) * _UNIT_SECONDS[match.group(2)]
        position = match.end()
    return total


def load_scenario(text: str, source: str = "<scenario>") -> Scenario:
    """The one Scenario document of ``text`` (YAML or JSON), checked."""
    try:
        documents = [doc for _, doc in read_documents(text, source) if doc is not None]
    except DocumentError as error:
        raise ScenarioError("", [str(error)]) from None
    if len(documents) != 1:
        raise ScenarioError("", [f"{source}: expected one Scenario document, got {len(documents)}"])
    return parse_scenario(documents[0])


def _name_of(document: Any) -> str:
    metadata = document.get("metadata") if isinstance(document, dict) else None
    name = metadata.get("name") if isinstance(metadata, dict) else None
    return name if isinstance(name, str) else ""


def parse_scenario(document: Any) -> Scenario:
    name = _name_of(document)
    if not isinstance(document, dict):
        raise ScenarioError(name, [type_invalid("<root>", document, "must be of type object")])
    errors: list[FieldError] = []
    if document.get("apiVersion") != API_VERSION:
        errors.append(not_supported("apiVersion", document.get("apiVersion"), [API_VERSION]))
    if document.get("kind") != KIND:
        errors.append(not_supported("kind", document.get("kind"), [KIND]))
    spec = document.get("spec")
    if not isinstance(spec, dict):
        errors.append(required("spec") if spec is None else _not_object("spec", spec))
        raise ScenarioError(name, errors)
    raw_operations = spec.get("operations")
    if not isinstance(raw_operations, list) or not raw_operations:
        if raw_operations is None or raw_operations == []:
            errors.append(required("spec.operations", "at least one operation is needed"))
        else:
            errors.append(type_invalid("spec.operations", raw_operations, "must be of type array"))
        raise ScenarioError(name, errors)
    if len(raw_operations) > MAX_OPERATIONS:
        errors.append(invalid("spec.operations", len(raw_operations), f"at most {MAX_OPERATIONS}"))
        raise ScenarioError(name, errors)
    until = None
    if "until" in spec:
        until = parse_duration(spec["until"])
        if until is None:
            errors.append(invalid("spec.until", spec["until"], _DURATION_DETAIL))
    names = NameGenerator(0)
    operations = [
        op
        for index, raw in enumerate(raw_operations)
        if (op := _operation(index, raw, errors, names)) is not None
    ]
    timed = _check_form(raw_operations, errors)
    if until is not None and not timed:
        errors.append(forbidden("spec.until", "only in the timed form (operations with `at`)"))
    if timed:
        operations = _number_instants(operations)
        if until is not None and operations and until < max(op.at or 0.0 for op in operations):
            errors.append(invalid("spec.until", spec["until"], "before the last operation"))
    _check_ids(operations, errors)
    _check_done(operations, errors)
    if errors:
        raise ScenarioError(name, errors)
    return Scenario(name, document, operations, timed, until)


_DURATION_DETAIL = 'must be a duration such as "45s" or "1m30s", or a number of seconds'


def _not_object(path: str, value: Any) -> FieldError:
    return type_invalid(path, value, "must be of type object")


def _missing_or_not_object(path: str, value: Any) -> FieldError:
    return required(path) if value is None else _not_object(path, value)


def _check_form(raw_operations: list[Any], errors: list[FieldError]) -> bool:
    """Whether the operations use the timed form; mixing the two is refused."""
    with_at = [i for i, raw in enumerate(raw_operations) if isinstance(raw, dict) and "at" in raw]
    if with_at and len(with_at) != len(raw_operations):
        first = next(i for i in range(len(raw_operations)) if i not in set(with_at))
        errors.append(
            required(f"spec.operations[{first}].at", "every operation has `at` when one has")
        )
    return bool(with_at)


def _number_instants(operations: list[Operation]) -> list[Operation]:
    instants = sorted({op.at for op in operations if op.at is not None})
    rank = {at: step for step, at in enumerate(instants)}
    numbered = [_with_step(op, rank[op.at]) for op in operations if op.at is not None]
    return sorted(numbered, key=lambda op: (op.step, op.index))


def _with_step(op: Operation, step: int) -> Operation:
    return replace(op, step=step)


def _check_ids(operations: list[Operation], errors: list[FieldError]) -> None:
    seen: set[str] = set()
    for op in operations:
        if op.id in seen:
            errors.append(duplicate(f"spec.operations[{op.index}].id", op.id))
        seen.add(op.id)


def _check_done(operations: list[Operation], errors: list[FieldError]) -> None:
    done = [op.step for op in operations if op.type == DONE]
    if not done:
        return
    last = min(done)
    for op in operations:
        if op.step > last:
            where = "at" if op.at is not None else "step"
            value = op.at if op.at is not None else op.step
            errors.append(
                invalid(
                    f"spec.operations[{op.index}].{where}",
                    value,
                    "after the step of the doneOperation, which ends the scenario",
                )
            )


def _operation(
    index: int, raw: Any, errors: list[FieldError], names: NameGenerator
) -> Operation | None:
    path = f"spec.operations[{index}]"
    if not isinstance(raw, dict):
        errors.append(_not_object(path, raw))
        return None
    before = len(errors)
    op_id = raw.get("id", str(index))
    if not isinstance(op_id, str) or not op_id:
        errors.append(invalid(f"{path}.id", op_id, "must be a non-empty string"))
    step, at = 0, None
    if "at" in raw:
        at = parse_duration(raw["at"])
        if at is None:
            errors.append(invalid(f"{path}.at", raw["at"], _DURATION_DETAIL))
        if "step" in raw:
            errors.append(forbidden(f"{path}.step", "may not be given with `at`"))
    else:
        value = raw.get("step")
        if value is None:
            errors.append(required(f"{path}.step"))
        elif isinstance(value, bool) or not isinstance(value, int) or value < 0:
            errors.append(invalid(f"{path}.step", value, "must be a non-negative integer"))
        else:
            step = value
    given = [name for name in OPERATION_FIELDS if raw.get(name) is not None]
    if len(given) != 1:
        detail = "exactly one of " + ", ".join(f"`{f}`" for f in OPERATION_FIELDS) + " is needed"
        if given:
            errors.append(forbidden(f"{path}.{given[1]}", detail))
        else:
            errors.append(required(path, detail))
        return None
    kind = given[0]
    body = raw[kind]
    if not isinstance(body, dict):
        errors.append(_not_object(f"{path}.{kind}", body))
        return None
    op = Operation(index, str(op_id), step, at, kind, body)
    if kind == CREATE:
        op = _create(op, f"{path}.{kind}", errors, names)
    elif kind in (PATCH, DELETE):
        op = _targeted(op, f"{path}.{kind}", errors)
    return op if len(errors) == before else None


def _named(obj: dict[str, Any], names: NameGenerator) -> dict[str, Any]:
    """The object with a name from ``metadata.generateName`` when it has none, as the API
    server names it on create (from a seeded source: the same scenario, the same names)."""
    meta = obj.get("metadata")
    if not isinstance(meta, dict) or meta.get("name"):
        return obj
    base = meta.get("generateName")
    if not isinstance(base, str) or not base:
        return obj
    return {**obj, "metadata": {**meta, "name": names.generate(base)}}


def _create(op: Operation, path: str, errors: list[FieldError], names: NameGenerator) -> Operation:
    obj = op.raw.get("object")
    if not isinstance(obj, dict):
        errors.append(_missing_or_not_object(f"{path}.object", obj))
        return op
    obj = _named(obj, names)
    try:
        decoded = decode_object(obj, f"{path}.object.")
    except InvalidObjectError as error:
        errors.extend(error.errors)
        return op
    except DocumentError as error:  # an unknown kind or apiVersion
        errors.append(invalid(f"{path}.object", _kind_of(obj), str(error)))
        return op
    return replace(op, object=decoded)


def _kind_of(obj: dict[str, Any]) -> str:
    return f"{obj.get('apiVersion')}/{obj.get('kind')}"


_KINDS_READ = sorted({kind for _, kind in KINDS})


def _targeted(op: Operation, path: str, errors: list[FieldError]) -> Operation:
    type_meta = op.raw.get("typeMeta")
    object_meta = op.raw.get("objectMeta")
    if not isinstance(type_meta, dict):
        errors.append(_missing_or_not_object(f"{path}.typeMeta", type_meta))
        return op
    if not isinstance(object_meta, dict):
        errors.append(_missing_or_not_object(f"{path}.objectMeta", object_meta))
        return op
    api_version, kind = type_meta.get("apiVersion"), type_meta.get("kind")
    if not isinstance(kind, str) or not kind:
        errors.append(required(f"{path}.typeMeta.kind"))
        return op
    if (api_version, kind) not in KINDS:
        versions = sorted(v for v, k in KINDS if k == kind)
        if versions:
            errors.append(not_supported(f"{path}.typeMeta.apiVersion", api_version, versions))
        else:
            errors.append(not_supported(f"{path}.typeMeta.kind", kind, _KINDS_READ))
        return op
    name = object_meta.get("name")
    if not isinstance(name, str) or not name:
        errors.append(required(f"{path}.objectMeta.name"))
        return op
    namespace = object_meta.get("namespace")
    if namespace is not None and not isinstance(namespace, str):
        errors.append(invalid(f"{path}.objectMeta.namespace", namespace, "must be a string"))
        return op
    namespaced = kind not in CLUSTER_SCOPED
    target = Target(str(api_version), kind, name, (namespace or "default") if namespaced else "")
    op = replace(op, target=target)
    if op.type == PATCH:
        op = _patch(op, path, errors)
    return op


def _patch(op: Operation, path: str, errors: list[FieldError]) -> Operation:
    patch_type = op.raw.get("patchType")
    if patch_type is None:
        errors.append(required(f"{path}.patchType"))
    elif patch_type not in PATCH_TYPES:
        errors.append(not_supported(f"{path}.patchType", patch_type, list(PATCH_TYPES)))
    patch = op.raw.get("patch")
    if patch is None:
        errors.append(required(f"{path}.patch"))
        return op
    if isinstance(patch, str):
        try:
            patch = json.loads(patch)
        except ValueError:
            try:
                patch = yaml.safe_load(patch)
            except yaml.YAMLError as error:
                errors.append(
                    invalid(f"{path}.patch", op.raw["patch"], f"not JSON or YAML: {error}")
                )
                return op
    expected = list if patch_type == "application/json-patch+json" else dict
    if not isinstance(patch, expected):
        shape = "an array of operations" if expected is list else "an object"
        errors.append(invalid(f"{path}.patch", op.raw["patch"], f"must be {shape}"))
        return op
    return replace(op, patch=patch, patch_type=str(patch_type))
