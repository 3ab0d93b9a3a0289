"""Shared by the decode_object tests (tests/kube/test_decode_*.py): the API server's messages
and small manifest builders."""

import copy
from typing import Any

import pytest

from schedviz.kube.decode import decode_object
from schedviz.kube.errors import InvalidObjectError

SUBDOMAIN_MSG = (
    "a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or "
    "'.', and must start and end with an alphanumeric character (e.g. 'example.com', regex used "
    "for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')"
)
LABEL_MSG = (
    "a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', and "
    "must start and end with an alphanumeric character (e.g. 'my-name',  or '123-abc', regex "
    "used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?')"
)
LABEL_KEY_NAME_MSG = (
    "name part must consist of alphanumeric characters, '-', '_' or '.', and must start and end "
    "with an alphanumeric character (e.g. 'MyName',  or 'my.name',  or '123-abc', regex used for "
    "validation is '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]')"
)
LABEL_VALUE_MSG = (
    "a valid label must be an empty string or consist of alphanumeric characters, '-', '_' or "
    "'.', and must start and end with an alphanumeric character (e.g. 'MyValue',  or 'my_value',"
    "  or '12345', regex used for validation is '(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?')"
)
QUANTITY_MSG = (
    "quantities must match the regular expression '^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$'"
)


def pod(**spec: Any) -> dict[str, Any]:
    base: dict[str, Any] = {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": "web-1", "labels": {"app": "web"}},
        "spec": {"containers": [{"name": "c", "image": "nginx"}]},
    }
    base["spec"].update(spec)
    return base


def with_path(doc: dict[str, Any], path: str, value: Any) -> dict[str, Any]:
    """A copy of ``doc`` with ``value`` set at a dotted path (list indexes as numbers)."""
    doc = copy.deepcopy(doc)
    *parents, last = path.split(".")
    node: Any = doc
    for part in parents:
        node = node[int(part)] if part.isdigit() else node.setdefault(part, {})
    node[int(last) if last.isdigit() else last] = value
    return doc


def errors_of(doc: dict[str, Any]) -> list[str]:
    with pytest.raises(InvalidObjectError) as info:
        decode_object(doc)
    return [str(e) for e in info.value.errors]


def node(**status: Any) -> dict[str, Any]:
    return {"apiVersion": "v1", "kind": "Node", "metadata": {"name": "n1"}, "status": status}


def affinity_term(**extra: Any) -> dict[str, Any]:
    return {"topologyKey": "zone", "labelSelector": {"matchLabels": {"app": "web"}}, **extra}
