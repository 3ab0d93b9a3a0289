"""Snapshots built from pods and nodes, ported from upstream's snapshot_test.go
(pkg/scheduler/backend/cache)."""

from __future__ import annotations

import pytest

from schedviz.kube.objects import ContainerImage, Node, Pod
from schedviz.scheduler.backend.cache.snapshot import image_states_for, new_snapshot
from schedviz.scheduler.testing.wrappers import make_node, make_pod

MB = 1024 * 1024


def node_with_images(name: str, images: dict[str, int]) -> Node:
    return make_node().name(name).images(images).obj()


def summaries(node: Node, nodes: list[Node]) -> dict[str, tuple[int, int]]:
    return {name: (s.size, s.num_nodes) for name, s in image_states_for(nodes)[node.name].items()}


@pytest.mark.parametrize(
    ("nodes", "want"),
    [
        pytest.param(
            [
                node_with_images("node-0", {"gcr.io/10:v1": 10 * MB, "gcr.io/200:v1": 200 * MB}),
                node_with_images("node-1", {"gcr.io/10:v1": 10 * MB}),
            ],
            {"gcr.io/10:v1": (10 * MB, 2), "gcr.io/200:v1": (200 * MB, 1)},
            id="images counted over the nodes holding them",
        ),
        pytest.param(
            [
                node_with_images("node-0", {}),
                node_with_images("node-1", {"gcr.io/10:v1": 10 * MB, "gcr.io/200:v1": 200 * MB}),
            ],
            {},
            id="a node without images has no image states",
        ),
    ],
)
def test_it_gives_each_node_its_image_sizes_and_how_many_nodes_hold_them(
    nodes: list[Node], want: dict[str, tuple[int, int]]
) -> None:
    assert summaries(nodes[0], nodes) == want


def test_it_counts_an_image_once_per_node_whatever_its_names() -> None:
    node = make_node().name("node-0").obj()
    node.images = (ContainerImage(("gcr.io/10:v1", "gcr.io/10:latest"), 10 * MB),)
    other = node_with_images("node-1", {"gcr.io/10:v1": 10 * MB})
    assert summaries(node, [node, other]) == {
        "gcr.io/10:v1": (10 * MB, 2),
        "gcr.io/10:latest": (10 * MB, 1),
    }


def test_it_sizes_an_image_as_each_node_reports_it() -> None:
    """getNodeImageStates builds each node's summaries from that node's own image list."""
    nodes = [
        node_with_images("node-0", {"gcr.io/app:v1": 10 * MB}),
        node_with_images("node-1", {"gcr.io/app:v1": 12 * MB}),
    ]
    assert summaries(nodes[0], nodes) == {"gcr.io/app:v1": (10 * MB, 2)}
    assert summaries(nodes[1], nodes) == {"gcr.io/app:v1": (12 * MB, 2)}
    snapshot = new_snapshot([], nodes)
    assert snapshot.node_info_map["node-1"].image_states["gcr.io/app:v1"].size == 12 * MB


@pytest.mark.parametrize(
    ("pods", "want"),
    [
        pytest.param([], set(), id="empty pods list"),
        pytest.param(
            [make_pod().name("foo").namespace("foo").obj(), make_pod().name("bar").obj()],
            set(),
            id="pods not scheduled",
        ),
        pytest.param(
            [
                make_pod().name("foo").namespace("foo").node("node-1").obj(),
                make_pod().name("bar").namespace("bar").node("node-2").obj(),
            ],
            set(),
            id="scheduled pods that do not use any PVC",
        ),
        pytest.param(
            [
                make_pod().name("foo").namespace("foo").node("node-1").pvc("pvc1").obj(),
                make_pod().name("bar").namespace("bar").node("node-2").pvc("pvc2").obj(),
                make_pod().name("baz").namespace("baz").pvc("pvc3").obj(),
            ],
            {"foo/pvc1", "bar/pvc2"},
            id="scheduled pods that use PVC",
        ),
    ],
)
def test_it_marks_the_claims_of_scheduled_pods_as_used(pods: list[Pod], want: set[str]) -> None:
    snapshot = new_snapshot(pods, [make_node().name("node-1").obj()])
    assert snapshot.used_pvc_set == want
    assert all(snapshot.is_pvc_used_by_pods(key) for key in want)


WITH_PORT = make_pod().name("foo").namespace("foo").node("node-0").host_port(8080).obj()
WITH_ANNOTATION = (
    make_pod().name("foo").namespace("ns").node("node-1").annotation("custom", "annotation").obj()
)
WITH_ANTI_AFFINITY = (
    make_pod()
    .name("baz")
    .namespace("ns")
    .pod_anti_affinity_exists("another", "another")
    .node("node-0")
    .obj()
)
WITH_AFFINITY = [
    make_pod().name("bar").namespace("ns").pod_affinity_exists("baz", "baz").node("node-2").obj(),
    make_pod().name("bar").namespace("ns").pod_affinity_exists("key", "key").node("node-0").obj(),
]
WITH_PVCS = [
    make_pod().name("foo").namespace("foo").node("node-0").pvc("pvc0").obj(),
    make_pod().name("bar").namespace("bar").node("node-1").pvc("pvc1").obj(),
    make_pod().name("baz").namespace("baz").node("node-2").pvc("pvc2").obj(),
]


def nodes_named(*names: str) -> list[Node]:
    return [make_node().name(name).obj() for name in names]


@pytest.mark.parametrize(
    ("pods", "nodes", "pods_per_node", "with_affinity", "with_anti_affinity", "pvcs"),
    [
        pytest.param([], [], [], 0, 0, set(), id="no pods no nodes"),
        pytest.param([WITH_PORT], nodes_named("node-0"), [[WITH_PORT]], 0, 0, set(),
                     id="single pod single node"),
        pytest.param(WITH_PVCS, nodes_named("node-0", "node-1", "node-2"),
                     [[WITH_PVCS[0]], [WITH_PVCS[1]], [WITH_PVCS[2]]], 0, 0,
                     {"foo/pvc0", "bar/pvc1", "baz/pvc2"}, id="multiple nodes, pods with PVCs"),
        pytest.param([WITH_ANNOTATION, WITH_AFFINITY[0]], nodes_named("node-0", "node-1", "node-2"),
                     [[], [WITH_ANNOTATION], [WITH_AFFINITY[0]]], 1, 0, set(),
                     id="multiple nodes, pod with affinity"),
        pytest.param([WITH_AFFINITY[1], WITH_ANTI_AFFINITY], nodes_named("node-0", "node-1"),
                     [[WITH_AFFINITY[1], WITH_ANTI_AFFINITY], []], 1, 1, set(),
                     id="multiple nodes, pod with affinity, pod with anti-affinity"),
    ],
)  # fmt: skip
def test_it_builds_a_snapshot_from_pods_and_nodes(
    pods: list[Pod],
    nodes: list[Node],
    pods_per_node: list[list[Pod]],
    with_affinity: int,
    with_anti_affinity: int,
    pvcs: set[str],
) -> None:
    snapshot = new_snapshot(pods, nodes)
    assert snapshot.num_nodes() == len(nodes)
    for node, want in zip(nodes, pods_per_node, strict=True):
        info = snapshot.get(node.name)
        assert info is not None
        assert [p.pod for p in info.pods] == want
    assert len(snapshot.have_pods_with_affinity_list()) == with_affinity
    assert len(snapshot.have_pods_with_required_anti_affinity_list()) == with_anti_affinity
    assert snapshot.used_pvc_set == pvcs
    assert [n.name for n in snapshot.list()] == [n.name for n in nodes]
