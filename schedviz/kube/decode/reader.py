"""Field paths and typed reading of a manifest, collecting an error for every wrong type.

Paths follow k8s.io/apimachinery/pkg/util/validation/field/path.go (Child ``a.b``, Index
``a[0]``, Key ``a[key]``). A value of the wrong type is reported in the wording the API server
uses for custom resources (apiextensions-apiserver's structural schema validation:
``... in body must be of type object: "string"``); upstream rejects it when decoding.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from schedviz.kube import errors as fe
from schedviz.kube.decode.quantities import round_up_to_milli
from schedviz.kube.decode.validation import INT32_MAX, INT32_MIN, inclusive_range_error
from schedviz.kube.errors import FieldError
from schedviz.kube.objects import ResourceList
from schedviz.kube.quantity import Quantity, QuantityError

# ---------------------------------------------------------------------------------------------
# Paths: field.Path's Child (``a.b``), Index (``a[0]``) and Key (``a[key]``).


def child(path: str, *names: str) -> str:
    for name in names:
        path = f"{path}.{name}" if path else name
    return path


def index(path: str, i: int) -> str:
    return f"{path}[{i}]"


def key(path: str, k: str) -> str:
    return f"{path}[{k}]"


_GO_TYPES = {dict: "object", list: "array", str: "string", bool: "boolean", int: "integer"}

# Resource quantities by their text, parsed and rounded: the pods of a cluster repeat a few
# values ("100m", "512Mi"), and the runner decodes every pod it is sent. A Quantity is never
# changed once made, so one is shared by every list holding that text.
_RESOURCE_QUANTITIES: dict[str, Quantity] = {}
_RESOURCE_QUANTITIES_KEPT = 4096


def _resource_quantity(text: str) -> Quantity:
    """``text`` parsed as a resource list's value (rounded up to milli), or QuantityError."""
    quantity = _RESOURCE_QUANTITIES.get(text)
    if quantity is None:
        quantity = round_up_to_milli(Quantity.parse(text, in_range=True))
        if len(_RESOURCE_QUANTITIES) >= _RESOURCE_QUANTITIES_KEPT:
            _RESOURCE_QUANTITIES.clear()
        _RESOURCE_QUANTITIES[text] = quantity
    return quantity


def _type_name(value: Any) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "boolean"
    if isinstance(value, float):
        return "number"
    return _GO_TYPES.get(type(value), type(value).__name__)


class Reader:
    """Typed access to a manifest that records a FieldError for every value of the wrong type."""

    def __init__(self, *, lenient_names: bool = False) -> None:
        self.errors: list[FieldError] = []
        # Lenient: names the API server refuses but storage can hold are warnings, not errors.
        self.lenient_names = lenient_names
        self.warnings: list[FieldError] = []

    def add(self, error: FieldError) -> None:
        self.errors.append(error)

    def extend(self, errors: Iterable[FieldError]) -> None:
        self.errors.extend(errors)

    def name(self, path: str, value: str, problems: Iterable[str]) -> None:
        """An object's name, or a reference to one, judged as the API server judges it.

        With ``lenient_names`` a name that only the API server's rules refuse (upstream's test
        fixtures name nodes ``nodeA``) is a warning; one that cannot be stored or looked up
        (a path separator, ``.``, ``..``) stays an error."""
        errors = [fe.invalid(path, value, msg) for msg in problems]
        if not errors:
            return
        if self.lenient_names and _storable(value):
            self.warnings.extend(errors)
        else:
            self.errors.extend(errors)

    def _wrong(self, path: str, value: Any, expected: str) -> None:
        # The structural-schema wording the API server uses for custom resources, e.g.
        # spec.replicas: Invalid value: "string": spec.replicas in body must be of type
        # integer: "string"
        actual = _type_name(value)
        detail = f"{path} in body must be of type {expected}: {fe.go_quote(actual)}"
        self.add(fe.type_invalid(path, actual, detail))

    def obj(self, obj: Mapping[str, Any], name: str, path: str) -> dict[str, Any]:
        value = obj.get(name)
        if value is None:
            return {}
        if not isinstance(value, dict):
            self._wrong(child(path, name), value, "object")
            return {}
        return value

    def optional_map(self, obj: Mapping[str, Any], name: str, path: str) -> dict[str, Any] | None:
        value = obj.get(name)
        if value is None:
            return None
        if not isinstance(value, dict):
            self._wrong(child(path, name), value, "object")
            return None
        return value

    def array(self, obj: Mapping[str, Any], name: str, path: str) -> list[Any]:
        value = obj.get(name)
        if value is None:
            return []
        if not isinstance(value, list):
            self._wrong(child(path, name), value, "array")
            return []
        return value

    def maps(
        self, obj: Mapping[str, Any], name: str, path: str
    ) -> list[tuple[str, dict[str, Any]]]:
        """A list of objects, each with its path; items of the wrong type are reported."""
        items = []
        for i, item in enumerate(self.array(obj, name, path)):
            item_path = index(child(path, name), i)
            if not isinstance(item, dict):
                self._wrong(item_path, item, "object")
                continue
            items.append((item_path, item))
        return items

    def string(self, obj: Mapping[str, Any], name: str, path: str, default: str = "") -> str:
        value = obj.get(name)
        if value is None:
            return default
        if not isinstance(value, str):
            self._wrong(child(path, name), value, "string")
            return default
        return value

    def optional_str(self, obj: Mapping[str, Any], name: str, path: str) -> str | None:
        if obj.get(name) is None:
            return None
        return self.string(obj, name, path)

    def integer(self, obj: Mapping[str, Any], name: str, path: str) -> int | None:
        value = obj.get(name)
        if value is None:
            return None
        if isinstance(value, bool) or not isinstance(value, int):
            self._wrong(child(path, name), value, "integer")
            return None
        return value

    def int32(self, obj: Mapping[str, Any], name: str, path: str) -> int | None:
        value = self.integer(obj, name, path)
        if value is not None and not INT32_MIN <= value <= INT32_MAX:
            self.add(
                fe.invalid(child(path, name), value, inclusive_range_error(INT32_MIN, INT32_MAX))
            )
            return None
        return value

    def boolean(self, obj: Mapping[str, Any], name: str, path: str) -> bool:
        value = obj.get(name)
        if value is None:
            return False
        if not isinstance(value, bool):
            self._wrong(child(path, name), value, "boolean")
            return False
        return value

    def str_map(self, obj: Mapping[str, Any], name: str, path: str) -> dict[str, str]:
        result = {}
        for k, v in self.obj(obj, name, path).items():
            if not isinstance(v, str):
                self._wrong(key(child(path, name), str(k)), v, "string")
                continue
            result[str(k)] = v
        return result

    def str_list(self, obj: Mapping[str, Any], name: str, path: str) -> list[str]:
        result = []
        for i, item in enumerate(self.array(obj, name, path)):
            if not isinstance(item, str):
                self._wrong(index(child(path, name), i), item, "string")
                continue
            result.append(item)
        return result

    def resources(
        self, obj: Mapping[str, Any], name: str, path: str, *, dotted: bool = False
    ) -> ResourceList:
        """A ResourceList; ``dotted`` names entries ``status.capacity.cpu`` as ValidateNode does."""
        result: ResourceList = {}
        list_path = child(path, name)
        for resource, raw in self.obj(obj, name, path).items():
            entry_path = (
                child(list_path, str(resource)) if dotted else key(list_path, str(resource))
            )
            if isinstance(raw, bool) or not isinstance(raw, str | int | float):
                self._wrong(entry_path, raw, "string")
                continue
            text = raw if isinstance(raw, str) else repr(raw)
            try:
                result[str(resource)] = _resource_quantity(text)
            except QuantityError as error:
                self.add(fe.invalid(entry_path, text, str(error)))
        return result


def _storable(name: str) -> bool:
    """What a name needs to be a key of the store and a path segment of a URL
    (ValidatePathSegmentName), whatever the API server's stricter rules say."""
    return name not in ("", ".", "..") and "/" not in name and "%" not in name
