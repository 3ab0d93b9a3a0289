"""Patches as the API server applies them: strategic merge (apimachinery strategicpatch, its
patch_test.go cases on the core types' tags), merge (RFC 7386's appendix) and JSON patch
(RFC 6902's appendix)."""

from __future__ import annotations

from typing import Any

import pytest

from schedviz.scenario.patch import (
    JSON_PATCH,
    MERGE,
    STRATEGIC_MERGE,
    PatchError,
    apply_patch,
    json_patch,
    merge_patch,
)

POD = {
    "apiVersion": "v1",
    "kind": "Pod",
    "metadata": {
        "name": "web",
        "labels": {"app": "web", "tier": "front"},
        "ownerReferences": [{"uid": "u1", "kind": "ReplicaSet", "name": "rs"}],
        "finalizers": ["a", "b"],
    },
    "spec": {
        "containers": [
            {
                "name": "app",
                "image": "app:1",
                "env": [{"name": "A", "value": "1"}, {"name": "B", "value": "2"}],
                "ports": [{"containerPort": 80}, {"containerPort": 443}],
            },
            {"name": "sidecar", "image": "side:1"},
        ],
        "tolerations": [{"key": "k1", "operator": "Exists"}],
        "volumes": [{"name": "data", "emptyDir": {}}],
    },
}


@pytest.mark.parametrize(
    ("description", "patch", "path", "expected"),
    [
        (
            "containers merge by name: one image changes, the other container stays",
            {"spec": {"containers": [{"name": "sidecar", "image": "side:2"}]}},
            ("spec", "containers"),
            [POD["spec"]["containers"][0], {"name": "sidecar", "image": "side:2"}],
        ),
        (
            "a container with a new name is appended",
            {"spec": {"containers": [{"name": "new", "image": "n:1"}]}},
            ("spec", "containers"),
            [*POD["spec"]["containers"], {"name": "new", "image": "n:1"}],
        ),
        (
            "$patch: delete in a list element removes the element with that key",
            {"spec": {"containers": [{"name": "sidecar", "$patch": "delete"}]}},
            ("spec", "containers"),
            [POD["spec"]["containers"][0]],
        ),
        (
            "$patch: replace as a list element replaces the whole list",
            {"spec": {"containers": [{"$patch": "replace"}, {"name": "only", "image": "o"}]}},
            ("spec", "containers"),
            [{"name": "only", "image": "o"}],
        ),
        (
            "tolerations have no patch strategy: the list is replaced",
            {"spec": {"tolerations": [{"key": "k2", "operator": "Exists"}]}},
            ("spec", "tolerations"),
            [{"key": "k2", "operator": "Exists"}],
        ),
        (
            "env merges by name inside a container merged by name",
            {"spec": {"containers": [{"name": "app", "env": [{"name": "B", "value": "3"}]}]}},
            ("spec", "containers", 0, "env"),
            [{"name": "A", "value": "1"}, {"name": "B", "value": "3"}],
        ),
        (
            "ports merge by containerPort",
            {
                "spec": {
                    "containers": [
                        {"name": "app", "ports": [{"containerPort": 443, "name": "https"}]}
                    ]
                }
            },
            ("spec", "containers", 0, "ports"),
            [{"containerPort": 80}, {"containerPort": 443, "name": "https"}],
        ),
        (
            "ownerReferences merge by uid",
            {"metadata": {"ownerReferences": [{"uid": "u2", "kind": "Job", "name": "j"}]}},
            ("metadata", "ownerReferences"),
            [
                {"uid": "u1", "kind": "ReplicaSet", "name": "rs"},
                {"uid": "u2", "kind": "Job", "name": "j"},
            ],
        ),
        (
            "finalizers merge as a set of primitives",
            {"metadata": {"finalizers": ["b", "c"]}},
            ("metadata", "finalizers"),
            ["a", "b", "c"],
        ),
        (
            "$deleteFromPrimitiveList removes values from a primitive list",
            {"metadata": {"$deleteFromPrimitiveList/finalizers": ["a"]}},
            ("metadata", "finalizers"),
            ["b"],
        ),
        (
            "null deletes a map key",
            {"metadata": {"labels": {"tier": None}}},
            ("metadata", "labels"),
            {"app": "web"},
        ),
        (
            "$patch: replace in a map replaces the map",
            {"metadata": {"labels": {"$patch": "replace", "only": "x"}}},
            ("metadata", "labels"),
            {"only": "x"},
        ),
        (
            "$retainKeys clears the keys it does not list (volumes: merge,retainKeys)",
            {
                "spec": {
                    "volumes": [
                        {"name": "data", "$retainKeys": ["name", "hostPath"], "hostPath": {}}
                    ]
                }
            },
            ("spec", "volumes"),
            [{"name": "data", "hostPath": {}}],
        ),
        (
            "$setElementOrder is accepted",
            {"spec": {"$setElementOrder/containers": [{"name": "app"}, {"name": "sidecar"}]}},
            ("spec", "containers"),
            POD["spec"]["containers"],
        ),
    ],
)
def test_strategic_merge_patch_follows_the_types_tags(
    description: str, patch: dict[str, Any], path: tuple[Any, ...], expected: Any
) -> None:
    result = apply_patch(POD, patch, STRATEGIC_MERGE, "Pod")
    for step in path:
        result = result[step]
    assert result == expected, description


def test_strategic_merge_patch_leaves_the_original_alone() -> None:
    before = repr(POD)
    apply_patch(
        POD, {"spec": {"containers": [{"name": "app", "image": "x"}]}}, STRATEGIC_MERGE, "Pod"
    )
    assert repr(POD) == before


def test_strategic_merge_patch_refuses_an_element_without_its_merge_key() -> None:
    with pytest.raises(PatchError) as error:
        apply_patch(POD, {"spec": {"containers": [{"image": "httpd"}]}}, STRATEGIC_MERGE, "Pod")
    assert str(error.value) == "map: map[image:httpd] does not contain declared merge key: name"


def test_strategic_merge_patch_merges_a_deployments_template_containers_by_name() -> None:
    deployment = {
        "kind": "Deployment",
        "spec": {
            "replicas": 1,
            "template": {"spec": {"containers": [{"name": "a", "image": "1"}, {"name": "b"}]}},
        },
    }
    patch = {"spec": {"template": {"spec": {"containers": [{"name": "a", "image": "2"}]}}}}
    result = apply_patch(deployment, patch, STRATEGIC_MERGE, "Deployment")
    assert result["spec"]["template"]["spec"]["containers"] == [
        {"name": "a", "image": "2"},
        {"name": "b"},
    ]


def test_strategic_merge_patch_replaces_node_taints() -> None:
    node = {"kind": "Node", "spec": {"taints": [{"key": "a", "effect": "NoSchedule"}]}}
    patch = {"spec": {"taints": [{"key": "b", "effect": "NoExecute"}]}}
    result = apply_patch(node, patch, STRATEGIC_MERGE, "Node")
    assert result["spec"]["taints"] == [{"key": "b", "effect": "NoExecute"}]


# RFC 7386 Appendix A.
@pytest.mark.parametrize(
    ("target", "patch", "expected"),
    [
        ({"a": "b"}, {"a": "c"}, {"a": "c"}),
        ({"a": "b"}, {"b": "c"}, {"a": "b", "b": "c"}),
        ({"a": "b"}, {"a": None}, {}),
        ({"a": "b", "b": "c"}, {"a": None}, {"b": "c"}),
        ({"a": ["b"]}, {"a": "c"}, {"a": "c"}),
        ({"a": "c"}, {"a": ["b"]}, {"a": ["b"]}),
        ({"a": {"b": "c"}}, {"a": {"b": "d", "c": None}}, {"a": {"b": "d"}}),
        ({"a": [{"b": "c"}]}, {"a": [1]}, {"a": [1]}),
        (["a", "b"], ["c", "d"], ["c", "d"]),
        ({"a": "b"}, ["c"], ["c"]),
        ({"a": "foo"}, None, None),
        ({"a": "foo"}, "bar", "bar"),
        ({"e": None}, {"a": 1}, {"e": None, "a": 1}),
        ([1, 2], {"a": "b", "c": None}, {"a": "b"}),
        ({}, {"a": {"bb": {"ccc": None}}}, {"a": {"bb": {}}}),
    ],
)
def test_merge_patch_is_rfc_7386(target: Any, patch: Any, expected: Any) -> None:
    assert merge_patch(target, patch) == expected


def test_merge_patch_replaces_lists_whole() -> None:
    result = apply_patch(POD, {"spec": {"tolerations": []}}, MERGE, "Pod")
    assert result["spec"]["tolerations"] == []
    assert result["spec"]["containers"] == POD["spec"]["containers"]


# RFC 6902 Appendix A.
@pytest.mark.parametrize(
    ("document", "operations", "expected"),
    [
        (
            {"foo": "bar"},
            [{"op": "add", "path": "/baz", "value": "qux"}],
            {"foo": "bar", "baz": "qux"},
        ),
        (
            {"foo": ["bar", "baz"]},
            [{"op": "add", "path": "/foo/1", "value": "qux"}],
            {"foo": ["bar", "qux", "baz"]},
        ),
        ({"baz": "qux", "foo": "bar"}, [{"op": "remove", "path": "/baz"}], {"foo": "bar"}),
        (
            {"foo": ["bar", "qux", "baz"]},
            [{"op": "remove", "path": "/foo/1"}],
            {"foo": ["bar", "baz"]},
        ),
        (
            {"baz": "qux", "foo": "bar"},
            [{"op": "replace", "path": "/baz", "value": "boo"}],
            {"baz": "boo", "foo": "bar"},
        ),
        (
            {"foo": {"bar": "baz", "waldo": "fred"}, "qux": {"corge": "grault"}},
            [{"op": "move", "from": "/foo/waldo", "path": "/qux/thud"}],
            {"foo": {"bar": "baz"}, "qux": {"corge": "grault", "thud": "fred"}},
        ),
        (
            {"foo": ["all", "grass", "cows", "eat"]},
            [{"op": "move", "from": "/foo/1", "path": "/foo/3"}],
            {"foo": ["all", "cows", "eat", "grass"]},
        ),
        (
            {"foo": "bar"},
            [{"op": "add", "path": "/child", "value": {"grandchild": {}}}],
            {"foo": "bar", "child": {"grandchild": {}}},
        ),
        (
            {"foo": ["bar"]},
            [{"op": "add", "path": "/foo/-", "value": ["abc", "def"]}],
            {"foo": ["bar", ["abc", "def"]]},
        ),
        ({"/": 9, "~1": 10}, [{"op": "test", "path": "/~01", "value": 10}], {"/": 9, "~1": 10}),
        ({"a": 1}, [{"op": "copy", "from": "/a", "path": "/b"}], {"a": 1, "b": 1}),
    ],
)
def test_json_patch_is_rfc_6902(document: Any, operations: list[Any], expected: Any) -> None:
    assert json_patch(document, operations) == expected


@pytest.mark.parametrize(
    ("document", "operations", "message"),
    [
        ({"baz": "qux"}, [{"op": "test", "path": "/baz", "value": "bar"}], "test failed"),
        ({"foo": "bar"}, [{"op": "add", "path": "/baz/bat", "value": "qux"}], "missing path"),
        ({"foo": "bar"}, [{"op": "remove", "path": "/nope"}], "nonexistent key"),
        ({"foo": [1]}, [{"op": "add", "path": "/foo/5", "value": 2}], "out of bounds"),
        ({"foo": 1}, [{"op": "frobnicate", "path": "/foo"}], 'unexpected op "frobnicate"'),
    ],
)
def test_json_patch_refuses_what_rfc_6902_calls_an_error(
    document: Any, operations: list[Any], message: str
) -> None:
    with pytest.raises(PatchError, match=message):
        json_patch(document, operations)


def test_json_patch_replaces_a_container_image_by_index() -> None:
    operations = [{"op": "replace", "path": "/spec/containers/1/image", "value": "side:9"}]
    result = apply_patch(POD, operations, JSON_PATCH, "Pod")
    assert result["spec"]["containers"][1]["image"] == "side:9"
