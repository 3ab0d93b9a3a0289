"""decode_object: wrong types anywhere are field errors, never crashes; names as the API server
checks them."""

import copy
from typing import Any

import pytest
from decode_helpers import (
    affinity_term,
    pod,
    with_path,
)

from schedviz.kube.decode import decode_object
from schedviz.kube.errors import InvalidObjectError

# --- Wrong types anywhere are field errors, never crashes. -------------------------------------

GARBAGE: list[Any] = [
    None,
    "x",
    1,
    -1,
    1.5,
    True,
    [],
    {},
    [1],
    {"a": 1},
    ["x"],
    [None],
    [{}],
    2**40,
]


def _paths(obj: Any, prefix: tuple[Any, ...] = ()) -> list[tuple[Any, ...]]:
    found = [prefix] if prefix else []
    items = (
        obj.items() if isinstance(obj, dict) else enumerate(obj) if isinstance(obj, list) else []
    )
    for k, v in items:
        found += _paths(v, (*prefix, k))
    return found


RICH_POD = pod(
    volumes=[{"name": "d", "persistentVolumeClaim": {"claimName": "c"}}],
    tolerations=[{"key": "k", "operator": "Exists"}],
    affinity={
        "nodeAffinity": {
            "requiredDuringSchedulingIgnoredDuringExecution": {
                "nodeSelectorTerms": [
                    {"matchExpressions": [{"key": "a", "operator": "In", "values": ["b"]}]}
                ]
            }
        },
        "podAntiAffinity": {
            "preferredDuringSchedulingIgnoredDuringExecution": [
                {"weight": 1, "podAffinityTerm": affinity_term(matchLabelKeys=["app"])}
            ]
        },
    },
    topologySpreadConstraints=[
        {
            "maxSkew": 1,
            "topologyKey": "z",
            "whenUnsatisfiable": "DoNotSchedule",
            "labelSelector": {},
        }
    ],
    schedulingGates=[{"name": "g"}],
    initContainers=[{"name": "i", "image": "x", "ports": [{"containerPort": 1}]}],
)


@pytest.mark.parametrize("path", _paths(RICH_POD)[2:], ids=lambda p: ".".join(map(str, p)))
def test_a_value_of_the_wrong_type_is_a_field_error(path: tuple[Any, ...]) -> None:
    for garbage in GARBAGE:
        doc = copy.deepcopy(RICH_POD)
        parent: Any = doc
        for part in path[:-1]:
            parent = parent[part]
        parent[path[-1]] = garbage
        try:
            decode_object(doc)
        except InvalidObjectError as error:
            assert error.errors


# IsDNS1123Subdomain's table (k8s.io/apimachinery/pkg/util/validation/validation_test.go): what
# ValidateNodeName and ValidatePodName accept and refuse.
@pytest.mark.parametrize(
    "name",
    ["a", "ab", "abc", "a1", "a-1", "a--1--2--b", "0", "01", "a.a", "1.a", "a.b.c.d.e", "a" * 253],
)
def test_node_and_pod_names_that_are_dns_1123_subdomains_are_accepted(name: str) -> None:
    node = decode_object({"apiVersion": "v1", "kind": "Node", "metadata": {"name": name}})
    assert node.name == name
    assert decode_object(with_path(pod(), "metadata.name", name)).name == name


@pytest.mark.parametrize(
    "name",
    [
        "A",
        "ABC",
        "aBc",
        "A1",
        "A-1",
        "1-A",
        "-",
        "a-",
        "-a",
        "1-",
        "-1",
        "_",
        "a_",
        "_a",
        "a_b",
        "1_",
        "_1",
        "1_2",
        ".",
        "a.",
        ".a",
        "a..b",
        "1.",
        ".1",
        "1..2",
        " ",
        "a ",
        " a",
        "a b",
        "1 ",
        " 1",
        "1 2",
        "A.a",
        "aB.a",
        "ab.A",
        "A1.a",
        "a1.A",
        "A.1",
        "aB.1",
        "A1.1",
        "1A.1",
        "0.A",
        "01.A",
        "012.A",
        "1A.a",
        "1a.A",
        "A.B.C.D.E",
        "AA.BB.CC.DD.EE",
        "a.B.c.d.e",
        "aa.bB.cc.dd.ee",
        "a@b",
        "a,b",
        "a_b",
        "a;b",
        "a:b",
        "a%b",
        "a?b",
        "a$b",
        'a<>"!',
        "a" * 254,
        "nodeA",
        "Machine_1",
    ],
)
def test_node_and_pod_names_that_are_not_dns_1123_subdomains_are_refused(name: str) -> None:
    with pytest.raises(InvalidObjectError) as node_error:
        decode_object({"apiVersion": "v1", "kind": "Node", "metadata": {"name": name}})
    with pytest.raises(InvalidObjectError) as pod_error:
        decode_object(with_path(pod(), "metadata.name", name))
    for error in (node_error.value, pod_error.value):
        assert [e.field for e in error.errors] == ["metadata.name"] * len(error.errors)
