"""Ports pkg/scheduler/framework/plugins/imagelocality/image_locality_test.go."""

from __future__ import annotations

import hashlib

import pytest

from schedviz.kube.objects import Container, ContainerImage, Node, Pod
from schedviz.scheduler.framework.cycle_state import CycleState
from schedviz.scheduler.framework.interface import MAX_NODE_SCORE, NodeScore, ScorePlugin
from schedviz.scheduler.framework.plugins.imagelocality import (
    MB,
    NAME,
    new,
    normalized_image_name,
)
from schedviz.scheduler.testing.framework_helpers import FakeHandle


def pod_spec(*images: str, init: tuple[str, ...] = ()) -> Pod:
    return Pod(
        name="p",
        containers=tuple(Container(f"c{i}", image=image) for i, image in enumerate(images)),
        init_containers=tuple(Container(f"i{i}", image=image) for i, image in enumerate(init)),
    )


def image(size_mb: int, *names: str) -> ContainerImage:
    return ContainerImage(names, size_mb * MB)


NODE_40_300_2000 = (
    image(40, "gcr.io/40:latest", "gcr.io/40:v1", "gcr.io/40:v1"),
    image(300, "gcr.io/300:latest", "gcr.io/300:v1"),
    image(2000, "gcr.io/2000:latest"),
)
NODE_250_10 = (image(250, "gcr.io/250:latest"), image(10, "gcr.io/10:latest", "gcr.io/10:v1"))
NODE_600_40_900 = (
    image(600, "gcr.io/600:latest"),
    image(40, "gcr.io/40:latest"),
    image(900, "gcr.io/900:latest"),
)
NODE_300_600_900 = (
    image(300, "gcr.io/300:latest"),
    image(600, "gcr.io/600:latest"),
    image(900, "gcr.io/900:latest"),
)
NODE_4000_30 = (image(4000, "gcr.io/4000:latest"), image(30, "gcr.io/30:latest"))
NODE_20_30_40 = (
    image(20, "gcr.io/20:latest"),
    image(30, "gcr.io/30:latest"),
    image(40, "gcr.io/40:latest"),
)
NO_IMAGES: tuple[ContainerImage, ...] = ()

TEST_40_250 = pod_spec("gcr.io/40", "gcr.io/250")
TEST_40_300 = pod_spec("gcr.io/40", "gcr.io/300")
TEST_MIN_MAX = pod_spec("gcr.io/10", "gcr.io/4000")
TEST_300_600_900 = pod_spec("gcr.io/300", "gcr.io/600", "gcr.io/900")
TEST_30_40 = pod_spec("gcr.io/30", "gcr.io/40")
TEST_30_INIT_300 = pod_spec("gcr.io/30", init=("gcr.io/300",))

CASES = [
    # 100 * (250M/2 - 23M) / (1000M * 2 - 23M) = 5
    (
        "two images spread on two nodes, prefer the larger image one",
        TEST_40_250,
        [NODE_40_300_2000, NODE_250_10],
        [0, 5],
    ),
    # 100 * ((40M + 300M)/2 - 23M) / (1000M * 2 - 23M) = 7
    (
        "two images on one node, prefer this node",
        TEST_40_300,
        [NODE_40_300_2000, NODE_250_10],
        [7, 0],
    ),
    ("if exceed limit, use limit", TEST_MIN_MAX, [NODE_4000_30, NODE_250_10], [MAX_NODE_SCORE, 0]),
    # 100 * (4000M/3 - 23M) / (1000M * 2 - 23M) = 66
    (
        "if exceed limit, use limit (with node which has no images present)",
        TEST_MIN_MAX,
        [NODE_4000_30, NODE_250_10, NO_IMAGES],
        [66, 0, 0],
    ),
    # 100 * (600M * 2/3 + 900M * 2/3 - 23M) / (1000M * 3 - 23M) = 32, and 36 with 300M * 1/3
    (
        "pod with multiple large images, node2 is preferred",
        TEST_300_600_900,
        [NODE_600_40_900, NODE_300_600_900, NO_IMAGES],
        [32, 36, 0],
    ),
    ("pod with multiple small images", TEST_30_40, [NODE_20_30_40, NODE_4000_30], [1, 0]),
    (
        "include InitContainers: two images spread on two nodes, prefer the larger image one",
        TEST_30_INIT_300,
        [NODE_40_300_2000, NODE_20_30_40],
        [6, 0],
    ),
]


@pytest.mark.parametrize(
    ("pod", "node_images", "expected"), [c[1:] for c in CASES], ids=[c[0] for c in CASES]
)
def test_image_locality_priority(
    pod: Pod, node_images: list[tuple[ContainerImage, ...]], expected: list[int]
) -> None:
    nodes = [Node(name=f"node{i + 1}", images=images) for i, images in enumerate(node_images)]
    handle = FakeHandle(nodes=nodes)
    plugin = new(None, handle)
    assert isinstance(plugin, ScorePlugin)
    assert plugin.score_extensions() is None
    state = CycleState()
    got = []
    for info in handle.snapshot.list():
        score, status = plugin.score(state, pod, info)
        assert status is None
        got.append(NodeScore(info.name, score))
    assert got == [NodeScore(n.name, s) for n, s in zip(nodes, expected, strict=True)]


def fake_digest(content: str) -> str:
    return "sha256:" + hashlib.sha256(content.encode()).hexdigest()


@pytest.mark.parametrize(
    ("name", "normalized"),
    [
        pytest.param("root", "root:latest", id="add :latest postfix 1"),
        pytest.param("gcr.io:5000/root", "gcr.io:5000/root:latest", id="add :latest postfix 2"),
        pytest.param("root:tag", "root:tag", id="keep it as is 1"),
        pytest.param(
            "root@" + fake_digest("root"), "root@" + fake_digest("root"), id="keep it as is 2"
        ),
    ],
)
def test_normalized_image_name(name: str, normalized: str) -> None:
    assert normalized_image_name(name) == normalized


def test_name() -> None:
    assert new(None, FakeHandle()).name() == NAME == "ImageLocality"
