"""The three patch types a scenario's ``patchOperation`` may name, applied to a manifest.

- ``application/strategic-merge-patch+json``: k8s.io/apimachinery/pkg/util/strategicpatch
  (patch.go ``mergeMap``, ``mergeSlice``), driven by the ``patchStrategy`` and ``patchMergeKey``
  tags of the core and apps types the scheduler reads (``PATCH_META`` below, from
  k8s.io/api core/v1, apps/v1, batch/v1 types.go): containers, init and ephemeral containers,
  volumes, imagePullSecrets, schedulingGates and resourceClaims merge by ``name``, host aliases
  by ``ip``, ports by ``containerPort``, env by ``name``, volume mounts by ``mountPath``,
  topologySpreadConstraints by ``topologyKey``, ownerReferences by ``uid``, status conditions by
  ``type``, finalizers as a set; lists without a strategy (tolerations, taints,
  nodeSelectorTerms...) are replaced whole. The directives ``$patch: replace|delete|merge`` (in
  a map and as a list element), ``$retainKeys`` and ``$deleteFromPrimitiveList/<field>`` are
  applied; ``$setElementOrder/<field>`` is accepted and dropped (lists keep the order of the
  merge: the original's elements first, then the new ones, as ``mergeSlice`` leaves them
  before ordering).
- ``application/merge-patch+json``: RFC 7386 (what evanphx/json-patch ``MergePatch`` does).
- ``application/json-patch+json``: RFC 6902 with RFC 6901 pointers (evanphx/json-patch
  ``Patch.Apply``): add, remove, replace, move, copy, test.

Errors carry upstream's wording where it has one (``map: map[image:httpd] does not contain
declared merge key: name``) and raise ``PatchError``.
"""

from __future__ import annotations

import copy
import json
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

STRATEGIC_MERGE = "application/strategic-merge-patch+json"
MERGE = "application/merge-patch+json"
JSON_PATCH = "application/json-patch+json"
PATCH_TYPES = (STRATEGIC_MERGE, MERGE, JSON_PATCH)

DIRECTIVE = "$patch"
RETAIN_KEYS = "$retainKeys"
DELETE_FROM_PRIMITIVE_LIST = "$deleteFromPrimitiveList/"
SET_ELEMENT_ORDER = "$setElementOrder/"


class PatchError(ValueError):
    """The patch cannot be applied (the API server's 422 or 400)."""


@dataclass(frozen=True)
class ListMeta:
    """A list field's ``patchStrategy`` (merge, or replace when untagged) and merge key, and
    the type of its elements (a name in ``PATCH_META``, or "" for primitives)."""

    strategy: str = "merge"
    key: str = ""
    element: str = ""


# Map fields: the type of the field's value. List fields: ListMeta. Fields not named are
# replaced when they are lists and merged when they are maps (a map needs no tag).
FieldMeta = str | ListMeta
PATCH_META: dict[str, dict[str, FieldMeta]] = {
    "ObjectMeta": {
        "ownerReferences": ListMeta(key="uid"),
        "finalizers": ListMeta(),
    },
    "PodTemplateSpec": {"metadata": "ObjectMeta", "spec": "PodSpec"},
    "PodSpec": {
        "containers": ListMeta(key="name", element="Container"),
        "initContainers": ListMeta(key="name", element="Container"),
        "ephemeralContainers": ListMeta(key="name", element="Container"),
        "volumes": ListMeta(strategy="merge,retainKeys", key="name"),
        "imagePullSecrets": ListMeta(key="name"),
        "hostAliases": ListMeta(key="ip"),
        "topologySpreadConstraints": ListMeta(key="topologyKey"),
        "schedulingGates": ListMeta(key="name"),
        "resourceClaims": ListMeta(strategy="merge,retainKeys", key="name"),
    },
    "Container": {
        "ports": ListMeta(key="containerPort"),
        "env": ListMeta(key="name"),
        "volumeMounts": ListMeta(key="mountPath"),
        "volumeDevices": ListMeta(key="devicePath"),
    },
    "PodStatus": {
        "conditions": ListMeta(key="type"),
        "podIPs": ListMeta(key="ip"),
        "hostIPs": ListMeta(key="ip"),
    },
    "NodeSpec": {"podCIDRs": ListMeta()},
    "NodeStatus": {
        "conditions": ListMeta(key="type"),
        "addresses": ListMeta(key="type"),
    },
    "WorkloadSpec": {"template": "PodTemplateSpec"},
    "WorkloadStatus": {"conditions": ListMeta(key="type")},
    "Pod": {"metadata": "ObjectMeta", "spec": "PodSpec", "status": "PodStatus"},
    "Node": {"metadata": "ObjectMeta", "spec": "NodeSpec", "status": "NodeStatus"},
    "Workload": {"metadata": "ObjectMeta", "spec": "WorkloadSpec", "status": "WorkloadStatus"},
    "Object": {"metadata": "ObjectMeta"},
}

_WORKLOADS = {"Deployment", "ReplicaSet", "ReplicationController", "StatefulSet", "DaemonSet"}
_WORKLOADS |= {"Job"}


def root_type(kind: str) -> str:
    """The ``PATCH_META`` type of an object of ``kind``."""
    if kind in ("Pod", "Node"):
        return kind
    return "Workload" if kind in _WORKLOADS else "Object"


def apply_patch(original: Mapping[str, Any], patch: Any, patch_type: str, kind: str) -> Any:
    """The document ``original`` becomes under ``patch`` (neither is changed)."""
    if patch_type == STRATEGIC_MERGE:
        if not isinstance(patch, dict):
            raise PatchError("strategic merge patch must be a JSON object")
        return strategic_merge(dict(original), patch, root_type(kind))
    if patch_type == MERGE:
        return merge_patch(dict(original), patch)
    if patch_type == JSON_PATCH:
        return json_patch(dict(original), patch)
    raise PatchError(f"unsupported patch type: {patch_type}")


# ------------------------------------------------------------------------ strategic merge


def go_map(value: Any) -> str:
    """A value as Go's fmt ``%v`` prints it (maps sorted by key, as fmt does)."""
    if isinstance(value, dict):
        inner = " ".join(f"{key}:{go_map(value[key])}" for key in sorted(value))
        return f"map[{inner}]"
    if isinstance(value, list):
        return "[" + " ".join(go_map(item) for item in value) + "]"
    if value is None:
        return "<nil>"
    if isinstance(value, bool):
        return "true" if value else "false"
    return str(value)


def strategic_merge(original: dict[str, Any], patch: dict[str, Any], type_name: str) -> Any:
    return _merge_map(copy.deepcopy(original), copy.deepcopy(patch), type_name)


def _meta(type_name: str, field: str) -> FieldMeta | None:
    return PATCH_META.get(type_name, {}).get(field)


def _merge_map(original: dict[str, Any], patch: dict[str, Any], type_name: str) -> Any:
    directive = patch.pop(DIRECTIVE, None)
    if directive == "replace":
        return patch
    if directive == "delete":
        return {}
    if directive not in (None, "merge"):
        raise PatchError(f"unknown patch type: {directive} in map: {go_map(patch)}")
    retain = patch.pop(RETAIN_KEYS, None)
    if retain is not None:
        if not isinstance(retain, list):
            raise PatchError(f"invalid type for {RETAIN_KEYS}: got {go_map(retain)}, want list")
        for key in patch:
            if key not in retain and not key.startswith("$"):
                raise PatchError(f"{go_map(retain)} doesn't match patch key {key}")
        original = {key: value for key, value in original.items() if key in retain}
    for key in [k for k in patch if k.startswith(SET_ELEMENT_ORDER)]:
        del patch[key]
    for key in [k for k in patch if k.startswith(DELETE_FROM_PRIMITIVE_LIST)]:
        field = key[len(DELETE_FROM_PRIMITIVE_LIST) :]
        remove = patch.pop(key)
        if not isinstance(remove, list):
            raise PatchError(f"invalid type for {key}: expected a list")
        current = original.get(field)
        if isinstance(current, list):
            original[field] = [item for item in current if item not in remove]
    for key, value in patch.items():
        if key.startswith("$"):
            raise PatchError(f"unknown patch directive {key}")
        if value is None:
            original.pop(key, None)
            continue
        meta = _meta(type_name, key)
        current = original.get(key)
        if isinstance(value, dict):
            child = meta if isinstance(meta, str) else ""
            if isinstance(current, dict):
                original[key] = _merge_map(current, value, child)
            else:
                original[key] = _merge_map({}, value, child)
        elif isinstance(value, list) and isinstance(meta, ListMeta):
            merged = _merge_list(current if isinstance(current, list) else [], value, meta)
            if merged is None:
                original.pop(key, None)
            else:
                original[key] = merged
        else:
            original[key] = _without_directives(value)
    return original


def _without_directives(value: Any) -> Any:
    """A replaced value as it is stored: directives in its maps are applied to nothing."""
    if isinstance(value, dict):
        return _merge_map({}, value, "")
    if isinstance(value, list):
        return [_without_directives(item) for item in value]
    return value


def _merge_list(original: list[Any], patch: list[Any], meta: ListMeta) -> list[Any] | None:
    replace = [item for item in patch if isinstance(item, dict) and item.get(DIRECTIVE)]
    for item in replace:
        if item[DIRECTIVE] == "replace":
            return [_without_directives(i) for i in patch if i is not item]
    if not meta.key:
        merged = list(original)
        for item in patch:
            if isinstance(item, dict):
                raise PatchError(f"merging a list of maps needs a merge key: {go_map(item)}")
            if item not in merged:
                merged.append(item)
        return merged
    merged = list(original)
    for item in patch:
        if not isinstance(item, dict):
            raise PatchError(f"invalid type for list element: {go_map(item)}, expected a map")
        directive = item.get(DIRECTIVE)
        if meta.key not in item:
            raise PatchError(f"map: {go_map(item)} does not contain declared merge key: {meta.key}")
        key_value = item[meta.key]
        index = next(
            (
                i
                for i, element in enumerate(merged)
                if isinstance(element, dict) and element.get(meta.key) == key_value
            ),
            None,
        )
        if directive == "delete":
            merged = [
                e for e in merged if not (isinstance(e, dict) and e.get(meta.key) == key_value)
            ]
            continue
        if directive not in (None, "merge"):
            raise PatchError(f"unknown patch type: {directive} in map: {go_map(item)}")
        if index is None:
            merged.append(_merge_map({}, dict(item), meta.element))
        else:
            merged[index] = _merge_map(merged[index], dict(item), meta.element)
    return merged


# ------------------------------------------------------------------------------ RFC 7386


def merge_patch(target: Any, patch: Any) -> Any:
    """RFC 7386 MergePatch(Target, Patch)."""
    if not isinstance(patch, dict):
        return copy.deepcopy(patch)
    result = copy.deepcopy(target) if isinstance(target, dict) else {}
    for key, value in patch.items():
        if value is None:
            result.pop(key, None)
        else:
            result[key] = merge_patch(result.get(key), value)
    return result


# ------------------------------------------------------------------------------ RFC 6902

_MISSING = object()


def _pointer(path: Any, where: str) -> list[str]:
    if not isinstance(path, str):
        raise PatchError(f"{where}: path must be a string")
    if path == "":
        return []
    if not path.startswith("/"):
        raise PatchError(f'{where}: invalid JSON pointer "{path}": must start with "/"')
    return [part.replace("~1", "/").replace("~0", "~") for part in path[1:].split("/")]


def _index(container: list[Any], token: str, path: str, *, insert: bool) -> int:
    if insert and token == "-":
        return len(container)
    if not token.isdigit() or (len(token) > 1 and token.startswith("0")):
        raise PatchError(f'invalid array index "{token}" in path "{path}"')
    index = int(token)
    limit = len(container) if insert else len(container) - 1
    if index > limit:
        raise PatchError(f'array index {index} out of bounds in path "{path}"')
    return index


def _parent(document: Any, tokens: list[str], path: str) -> Any:
    current = document
    for token in tokens[:-1]:
        if isinstance(current, dict) and token in current:
            current = current[token]
        elif isinstance(current, list):
            current = current[_index(current, token, path, insert=False)]
        else:
            raise PatchError(f'doc is missing path: "{path}"')
    return current


def _get(document: Any, tokens: list[str], path: str) -> Any:
    if not tokens:
        return document
    parent = _parent(document, tokens, path)
    token = tokens[-1]
    if isinstance(parent, dict):
        if token not in parent:
            raise PatchError(f'doc is missing path: "{path}"')
        return parent[token]
    if isinstance(parent, list):
        return parent[_index(parent, token, path, insert=False)]
    raise PatchError(f'doc is missing path: "{path}"')


def _add(document: Any, tokens: list[str], value: Any, path: str) -> Any:
    if not tokens:
        return value
    parent = _parent(document, tokens, path)
    token = tokens[-1]
    if isinstance(parent, dict):
        parent[token] = value
    elif isinstance(parent, list):
        parent.insert(_index(parent, token, path, insert=True), value)
    else:
        raise PatchError(f'doc is missing path: "{path}"')
    return document


def _remove(document: Any, tokens: list[str], path: str) -> Any:
    if not tokens:
        raise PatchError("cannot remove the whole document")
    parent = _parent(document, tokens, path)
    token = tokens[-1]
    if isinstance(parent, dict):
        if token not in parent:
            raise PatchError(f'unable to remove nonexistent key: {token}: missing value: "{path}"')
        return parent.pop(token)
    if isinstance(parent, list):
        return parent.pop(_index(parent, token, path, insert=False))
    raise PatchError(f'doc is missing path: "{path}"')


def json_patch(document: Any, operations: Any) -> Any:
    """RFC 6902: the operations in order; the first that fails fails the patch."""
    if not isinstance(operations, list):
        raise PatchError("json patch must be a JSON array of operations")
    result = copy.deepcopy(document)
    for number, operation in enumerate(operations):
        where = f"operation {number}"
        if not isinstance(operation, dict):
            raise PatchError(f"{where}: must be a JSON object")
        op = operation.get("op")
        path = operation.get("path")
        tokens = _pointer(path, where)
        value = operation.get("value", _MISSING)
        if op in ("add", "replace", "test") and value is _MISSING:
            raise PatchError(f'{where}: "{op}" needs a value')
        if op == "add":
            result = _add(result, tokens, copy.deepcopy(value), str(path))
        elif op == "remove":
            _remove(result, tokens, str(path))
        elif op == "replace":
            _get(result, tokens, str(path))
            if tokens:
                _remove(result, tokens, str(path))
            result = _add(result, tokens, copy.deepcopy(value), str(path))
        elif op in ("move", "copy"):
            source = operation.get("from")
            from_tokens = _pointer(source, where)
            moved = copy.deepcopy(_get(result, from_tokens, str(source)))
            if op == "move":
                if tokens[: len(from_tokens)] == from_tokens and tokens != from_tokens:
                    raise PatchError(f'{where}: cannot move "{source}" into its own child')
                _remove(result, from_tokens, str(source))
            result = _add(result, tokens, moved, str(path))
        elif op == "test":
            if not _json_equal(_get(result, tokens, str(path)), value):
                raise PatchError(f"testing value {path} failed: test failed")
        else:
            raise PatchError(f'{where}: unexpected op "{op}"')
    return result


def _json_equal(left: Any, right: Any) -> bool:
    return json.dumps(left, sort_keys=True) == json.dumps(right, sort_keys=True)
