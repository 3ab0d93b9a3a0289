"""Nodes by zone, ported from upstream's node_tree_test.go (pkg/scheduler/backend/cache)."""

from __future__ import annotations

import pytest

from schedviz.kube.objects import (
    LABEL_FAILURE_DOMAIN_REGION,
    LABEL_FAILURE_DOMAIN_ZONE,
    LABEL_TOPOLOGY_REGION,
    LABEL_TOPOLOGY_ZONE,
    Node,
)
from schedviz.scheduler.backend.cache.node_tree import NodeTree, zone_key
from schedviz.scheduler.testing.wrappers import make_node


def node(name: str, **labels: str) -> Node:
    keys = {
        "region": LABEL_TOPOLOGY_REGION,
        "zone": LABEL_TOPOLOGY_ZONE,
        "beta_region": LABEL_FAILURE_DOMAIN_REGION,
        "beta_zone": LABEL_FAILURE_DOMAIN_ZONE,
    }
    return make_node().name(name).labels({keys[k]: v for k, v in labels.items()}).obj()


ALL_NODES = [
    node("node-0"),  # no region-zone label
    node("node-1", region="region-1"),  # region only
    node("node-2", zone="zone-2"),  # zone only
    node("node-3", region="region-1", zone="zone-2"),
    node("node-4", region="region-1", zone="zone-2"),
    node("node-5", region="region-1", zone="zone-3"),  # same region, another zone
    node("node-6", region="region-2", zone="zone-2"),  # a new region
    node("node-7", region="region-2", zone="zone-2"),
    node("node-8", region="region-2", zone="zone-2"),
    node(
        "node-9",
        region="region-2",
        zone="zone-2",
        beta_region="region-2",
        beta_zone="zone-2",
    ),
    node("node-10", beta_region="region-2", beta_zone="zone-3"),  # deprecated labels only
]


def tree_of(*nodes: Node) -> NodeTree:
    tree = NodeTree()
    for item in nodes:
        tree.add_node(item)
    return tree


def assert_tree(tree: NodeTree, expected: dict[str, list[str]]) -> None:
    """Upstream's verifyNodeTree."""
    assert tree.num_nodes == sum(len(names) for names in expected.values())
    assert tree.tree == expected
    assert sorted(tree.zones) == sorted(expected)


@pytest.mark.parametrize(
    ("nodes", "expected"),
    [
        pytest.param(ALL_NODES[:1], {"": ["node-0"]}, id="single node no labels"),
        pytest.param(
            ALL_NODES[:4],
            {
                "": ["node-0"],
                "region-1:\x00:": ["node-1"],
                ":\x00:zone-2": ["node-2"],
                "region-1:\x00:zone-2": ["node-3"],
            },
            id="mix of nodes with and without proper labels",
        ),
        pytest.param(
            ALL_NODES[:7],
            {
                "": ["node-0"],
                "region-1:\x00:": ["node-1"],
                ":\x00:zone-2": ["node-2"],
                "region-1:\x00:zone-2": ["node-3", "node-4"],
                "region-1:\x00:zone-3": ["node-5"],
                "region-2:\x00:zone-2": ["node-6"],
            },
            id="some zones with multiple nodes",
        ),
        pytest.param(
            ALL_NODES[9:],
            {"region-2:\x00:zone-2": ["node-9"], "region-2:\x00:zone-3": ["node-10"]},
            id="nodes also using deprecated zone/region label",
        ),
    ],
)
def test_it_groups_added_nodes_by_region_and_zone(
    nodes: list[Node], expected: dict[str, list[str]]
) -> None:
    assert_tree(tree_of(*nodes), expected)


def test_it_adds_a_node_only_once() -> None:
    assert_tree(tree_of(ALL_NODES[3], ALL_NODES[3]), {"region-1:\x00:zone-2": ["node-3"]})


@pytest.mark.parametrize(
    ("existing", "to_remove", "expected", "fails"),
    [
        pytest.param(
            ALL_NODES[:7],
            ALL_NODES[:1],
            {
                "region-1:\x00:": ["node-1"],
                ":\x00:zone-2": ["node-2"],
                "region-1:\x00:zone-2": ["node-3", "node-4"],
                "region-1:\x00:zone-3": ["node-5"],
                "region-2:\x00:zone-2": ["node-6"],
            },
            False,
            id="remove a single node with no labels",
        ),
        pytest.param(
            ALL_NODES[:7],
            ALL_NODES[1:4],
            {
                "": ["node-0"],
                "region-1:\x00:zone-2": ["node-4"],
                "region-1:\x00:zone-3": ["node-5"],
                "region-2:\x00:zone-2": ["node-6"],
            },
            False,
            id="remove a few nodes including one from a zone with multiple nodes",
        ),
        pytest.param(ALL_NODES[:7], ALL_NODES[:7], {}, False, id="remove all nodes"),
        pytest.param([], ALL_NODES[:5], {}, True, id="remove non-existing node"),
    ],
)
def test_it_removes_nodes_and_empty_zones(
    existing: list[Node], to_remove: list[Node], expected: dict[str, list[str]], fails: bool
) -> None:
    tree = tree_of(*existing)
    for item in to_remove:
        if fails:
            with pytest.raises(KeyError, match="was not found"):
                tree.remove_node(item)
        else:
            tree.remove_node(item)
    assert_tree(tree, expected)


@pytest.mark.parametrize(
    ("existing", "updated", "expected"),
    [
        pytest.param(
            ALL_NODES[:7],
            node("node-0", region="region-1", zone="zone-2"),
            {
                "region-1:\x00:": ["node-1"],
                ":\x00:zone-2": ["node-2"],
                "region-1:\x00:zone-2": ["node-3", "node-4", "node-0"],
                "region-1:\x00:zone-3": ["node-5"],
                "region-2:\x00:zone-2": ["node-6"],
            },
            id="update a node without label",
        ),
        pytest.param(
            ALL_NODES[:1],
            node("node-0", region="region-1", zone="zone-2"),
            {"region-1:\x00:zone-2": ["node-0"]},
            id="update the only existing node",
        ),
        pytest.param(
            ALL_NODES[:1],
            node("node-new", region="region-1", zone="zone-2"),
            {"": ["node-0"], "region-1:\x00:zone-2": ["node-new"]},
            id="update non-existing node",
        ),
    ],
)
def test_it_moves_an_updated_node_to_its_new_zone(
    existing: list[Node], updated: Node, expected: dict[str, list[str]]
) -> None:
    tree = tree_of(*existing)
    old = next((n for n in ALL_NODES if n.name == updated.name), None)
    tree.update_node(old or make_node().name("nonexisting-node").obj(), updated)
    assert_tree(tree, expected)


@pytest.mark.parametrize(
    ("nodes", "expected"),
    [
        pytest.param([], [], id="empty tree"),
        pytest.param(ALL_NODES[:1], ["node-0"], id="one node"),
        pytest.param(ALL_NODES[:4], ["node-0", "node-1", "node-2", "node-3"], id="four nodes"),
        pytest.param(
            ALL_NODES[:9],
            [
                "node-0",
                "node-1",
                "node-2",
                "node-3",
                "node-5",
                "node-6",
                "node-4",
                "node-7",
                "node-8",
            ],
            id="all nodes",
        ),
    ],
)
def test_it_lists_nodes_taking_one_per_zone_in_turn(nodes: list[Node], expected: list[str]) -> None:
    assert tree_of(*nodes).list() == expected


@pytest.mark.parametrize(
    ("to_add", "to_remove", "operations", "expected"),
    [
        pytest.param(ALL_NODES[2:9], ALL_NODES[2:9], "aaarrr", [], id="add and remove all nodes"),
        pytest.param(
            ALL_NODES[2:9], ALL_NODES[2:9], "aaar", ["node-3", "node-4"],
            id="add and remove some nodes",
        ),
        pytest.param(
            ALL_NODES[2:9], ALL_NODES[2:9], "aaarrra", ["node-5"], id="remove three nodes"
        ),
        pytest.param(
            [*ALL_NODES[4:9], ALL_NODES[3]], [], "aaaaaa",
            ["node-4", "node-5", "node-6", "node-3", "node-7", "node-8"],
            id="add more nodes to an exhausted zone",
        ),
        pytest.param(
            [*ALL_NODES[3:5], *ALL_NODES[6:8]], ALL_NODES[3:5], "aaraar", ["node-6", "node-7"],
            id="remove zone and add new",
        ),
    ],
)  # fmt: skip
def test_it_lists_nodes_after_mixed_operations(
    to_add: list[Node], to_remove: list[Node], operations: str, expected: list[str]
) -> None:
    tree = NodeTree()
    added = iter(to_add)
    removed = iter(to_remove)
    for operation in operations:
        if operation == "a":
            tree.add_node(next(added))
        else:
            tree.remove_node(next(removed))
    assert tree.list() == expected


def test_it_prefers_the_deprecated_zone_labels_when_present() -> None:
    """utilnode.GetZoneKey reads failure-domain.beta.kubernetes.io/* first."""
    both = node("n", region="ga-region", zone="ga-zone", beta_region="old", beta_zone="")
    assert zone_key(both) == "old:\x00:"
    assert zone_key(node("n", region="r", zone="z")) == "r:\x00:z"
    assert zone_key(node("n")) == ""
