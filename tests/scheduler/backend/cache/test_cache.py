"""The scheduler cache, ported from upstream's pkg/scheduler/backend/cache/cache_test.go."""

from __future__ import annotations

import dataclasses
from collections.abc import Callable

import pytest

from schedviz.kube.objects import (
    LABEL_TOPOLOGY_REGION,
    LABEL_TOPOLOGY_ZONE,
    Container,
    ContainerPort,
    Node,
    Pod,
    Taint,
)
from schedviz.kube.resources import DEFAULT_MEMORY_REQUEST, DEFAULT_MILLI_CPU_REQUEST
from schedviz.scheduler.backend.cache.cache import Cache, CacheError
from schedviz.scheduler.backend.cache.snapshot import Snapshot
from schedviz.scheduler.framework.types import HostPortInfo, NodeInfo, Resource
from schedviz.scheduler.testing.wrappers import make_node, make_pod, resource_list

NODE = "node"
MB = 1024 * 1024


def base_pod(
    node: str, name: str, cpu: str = "", mem: str = "", extended: str = "", port: int = 0
) -> Pod:
    """Upstream's makeBasePod: one container with these requests and a host port on 127.0.0.1."""
    requests: dict[str, str | int] = {}
    if cpu:
        requests = {"cpu": cpu, "memory": mem}
        if extended:
            resource, amount = extended.split(":")
            requests[resource] = amount
    container = Container(
        "container",
        image="pause",
        requests=resource_list(requests),
        ports=(ContainerPort(port, port, "TCP", "127.0.0.1"),) if port else (),
    )
    pod = make_pod().name(name).namespace("node_info_cache_test").uid(name).node(node).obj()
    return dataclasses.replace(pod, containers=(container,))


def ports(*entries: tuple[str, int]) -> HostPortInfo:
    info = HostPortInfo()
    for ip, port in entries:
        info.add(ip, "TCP", port)
    return info


def assert_node_info(
    got: NodeInfo | None,
    requested: Resource,
    non_zero: Resource,
    pods: list[Pod],
    used_ports: HostPortInfo,
) -> None:
    """Upstream's deepEqualWithoutGeneration, on what the cache aggregates."""
    assert got is not None
    assert [p.pod for p in got.pods] == pods
    assert got.requested == requested
    assert (got.non_zero_requested.milli_cpu, got.non_zero_requested.memory) == (
        non_zero.milli_cpu,
        non_zero.memory,
    )
    assert got.used_ports == used_ports
    assert got.image_states == {}


def is_forgotten(cache: Cache, pod: Pod) -> bool:
    return not cache.is_assumed_pod(pod) and cache.get_pod(pod.key) is None


TEST_PODS = [
    base_pod(NODE, "test-resource-request-and-port-0", "100m", "500", port=80),
    base_pod(NODE, "test-resource-request-and-port-1", "100m", "500", port=80),
    base_pod(NODE, "test-resource-request-and-port-2", "200m", "1Ki", port=8080),
    base_pod(NODE, "test-nonzero-request", port=80),
    base_pod(NODE, "test-extended-resource-1", "100m", "500", "example.com/foo:3", port=80),
    base_pod(NODE, "test-extended-resource-2", "200m", "1Ki", "example.com/foo:5", port=8080),
    base_pod(NODE, "test-extended-key", "100m", "500", "random-invalid-extended-key:100"),
]

ASSUME_CASES = [
    pytest.param([0], Resource(100, 500), Resource(100, 500), ports(("127.0.0.1", 80)),
                 id="assumed one pod with resource request and used ports"),
    pytest.param([1, 2], Resource(300, 1524), Resource(300, 1524),
                 ports(("127.0.0.1", 80), ("127.0.0.1", 8080)),
                 id="node requests are the sum of the assumed pods' requests"),
    pytest.param([3], Resource(0, 0), Resource(DEFAULT_MILLI_CPU_REQUEST, DEFAULT_MEMORY_REQUEST),
                 ports(("127.0.0.1", 80)), id="assumed pod without resource request"),
    pytest.param([4], Resource(100, 500, scalar_resources={"example.com/foo": 3}),
                 Resource(100, 500), ports(("127.0.0.1", 80)),
                 id="assumed one pod with extended resource"),
    pytest.param([4, 5], Resource(300, 1524, scalar_resources={"example.com/foo": 8}),
                 Resource(300, 1524), ports(("127.0.0.1", 80), ("127.0.0.1", 8080)),
                 id="assumed two pods with extended resources"),
    pytest.param([6], Resource(100, 500), Resource(100, 500), ports(),
                 id="assumed pod with random invalid extended resource key"),
]  # fmt: skip


@pytest.mark.parametrize(("indexes", "requested", "non_zero", "used_ports"), ASSUME_CASES)
def test_it_aggregates_assumed_pods_on_their_node(
    indexes: list[int], requested: Resource, non_zero: Resource, used_ports: HostPortInfo
) -> None:
    cache = Cache(ttl=1.0)
    pods = [TEST_PODS[i] for i in indexes]
    for pod in pods:
        cache.assume_pod(pod)
        with pytest.raises(CacheError, match="is in the cache, so can't be assumed"):
            cache.assume_pod(pod)
    assert_node_info(cache.nodes.get(NODE), requested, non_zero, pods, used_ports)
    for pod in pods:
        cache.forget_pod(pod)
        assert is_forgotten(cache, pod)
    assert NODE not in cache.nodes


EXPIRE_PODS = [
    base_pod(NODE, "test-1", "100m", "500", port=80),
    base_pod(NODE, "test-2", "200m", "1Ki", port=8080),
    base_pod(NODE, "test-3", "200m", "1Ki", port=8080),
]
TTL = 10.0


@pytest.mark.parametrize(
    ("assumed", "ttl", "cleanup_at", "left"),
    [
        pytest.param([(0, True, 0.0)], TTL, 2 * TTL, [], id="assumed pod would expire"),
        pytest.param(
            [(0, True, 0.0), (1, True, 3 * TTL / 2), (2, False, 0.0)],
            TTL,
            2 * TTL,
            [1, 2],
            id="first one would expire, second and third would not",
        ),
        pytest.param([(0, True, 0.0)], 0.0, 3 * TTL, [0], id="assumed pod never expires"),
    ],
)
def test_it_expires_assumed_pods_whose_binding_finished_ttl_ago(
    assumed: list[tuple[int, bool, float]], ttl: float, cleanup_at: float, left: list[int]
) -> None:
    cache = Cache(ttl=ttl)
    for index, finish_binding, at in assumed:
        cache.assume_pod(EXPIRE_PODS[index])
        if finish_binding:
            cache.finish_binding(EXPIRE_PODS[index], at)
    expired = cache.cleanup_assumed_pods(cleanup_at)
    remaining = [EXPIRE_PODS[i] for i in left]
    assert [p.name for p in expired] == [
        EXPIRE_PODS[i].name for i, _, _ in assumed if i not in left
    ]
    if not remaining:
        assert NODE not in cache.nodes
        return
    cpu = sum(100 if p.name == "test-1" else 200 for p in remaining)
    memory = sum(500 if p.name == "test-1" else 1024 for p in remaining)
    used = {("127.0.0.1", 80 if p.name == "test-1" else 8080) for p in remaining}
    assert_node_info(
        cache.nodes.get(NODE),
        Resource(cpu, memory),
        Resource(cpu, memory),
        remaining,
        ports(*used),
    )


def test_it_confirms_an_assumed_pod_when_the_watch_adds_it() -> None:
    first, second = EXPIRE_PODS[0], EXPIRE_PODS[1]
    cache = Cache(ttl=1.0)
    cache.assume_pod(first)
    cache.assume_pod(second)
    cache.add_pod(first)
    with pytest.raises(CacheError, match="was already in added state"):
        cache.add_pod(first)
    assert not cache.is_assumed_pod(first)
    for pod in (first, second):
        if cache.is_assumed_pod(pod):
            cache.forget_pod(pod)
    assert_node_info(
        cache.nodes.get(NODE),
        Resource(100, 500),
        Resource(100, 500),
        [first],
        ports(("127.0.0.1", 80)),
    )


def test_it_adds_a_pod_back_after_its_assumption_expired() -> None:
    pod = EXPIRE_PODS[0]
    cache = Cache(ttl=TTL)
    cache.assume_pod(pod)
    cache.finish_binding(pod, 0.0)
    assert cache.cleanup_assumed_pods(2 * TTL) == [pod]
    assert NODE not in cache.nodes
    cache.add_pod(pod)
    assert_node_info(
        cache.nodes.get(NODE),
        Resource(100, 500),
        Resource(100, 500),
        [pod],
        ports(("127.0.0.1", 80)),
    )


def test_it_keeps_the_added_version_of_an_assumed_pod() -> None:
    assumed = base_pod("node1", "test-1", "100m", "500", port=80)
    added = make_pod().name("test-1").namespace("node_info_cache_test").node("node1").obj()
    cache = Cache()
    cache.assume_pod(assumed)
    cache.add_pod(added)
    assert cache.get_pod(added.key) is added
    assert [p.pod for p in cache.nodes["node1"].pods] == [added]


def test_it_replaces_an_assumed_pod_added_on_another_node() -> None:
    assumed = base_pod("assumed-node-1", "test-1", "100m", "500", port=80)
    added = base_pod("actual-node", "test-1", "100m", "500", port=80)
    updated = base_pod("actual-node", "test-1", "200m", "500", port=90)
    cache = Cache()
    cache.assume_pod(assumed)
    cache.add_pod(added)
    cache.update_pod(added, updated)
    assert "assumed-node-1" not in cache.nodes
    assert_node_info(
        cache.nodes.get("actual-node"),
        Resource(200, 500),
        Resource(200, 500),
        [updated],
        ports(("127.0.0.1", 90)),
    )


def test_it_updates_an_added_pod() -> None:
    small = base_pod(NODE, "test", "100m", "500", port=80)
    big = base_pod(NODE, "test", "200m", "1Ki", port=8080)
    cache = Cache()
    cache.add_pod(small)
    cache.update_pod(small, big)
    assert_node_info(
        cache.nodes.get(NODE),
        Resource(200, 1024),
        Resource(200, 1024),
        [big],
        ports(("127.0.0.1", 8080)),
    )
    cache.update_pod(big, small)
    assert_node_info(
        cache.nodes.get(NODE),
        Resource(100, 500),
        Resource(100, 500),
        [small],
        ports(("127.0.0.1", 80)),
    )
    assert cache.get_pod(small.key) is small


def test_it_refuses_to_update_an_unknown_or_assumed_pod() -> None:
    pod = base_pod(NODE, "test", "100m", "500", port=80)
    cache = Cache()
    assert cache.get_pod(pod.key) is None
    with pytest.raises(CacheError, match="is not added to scheduler cache, so cannot be updated"):
        cache.update_pod(pod, pod)
    cache.assume_pod(pod)
    with pytest.raises(CacheError, match="should not be updated"):
        cache.update_pod(pod, pod)
    assert cache.get_pod(pod.key) is pod


def test_it_counts_ephemeral_storage_requests() -> None:
    pod = make_pod().name("eph").namespace("default").node(NODE).req({"ephemeral-storage": "500"})
    cache = Cache()
    cache.add_pod(pod.obj())
    info = cache.nodes[NODE]
    assert info.requested == Resource(ephemeral_storage=500)
    cache.remove_pod(pod.obj())
    assert cache.get_pod(pod.obj().key) is None


@pytest.mark.parametrize("assume", [False, True], ids=["bound", "assumed"])
def test_it_removes_a_pod_and_its_requests(assume: bool) -> None:
    pod = base_pod("node-1", "test", "100m", "500", port=80)
    cache = Cache()
    if assume:
        cache.assume_pod(pod)
    else:
        cache.add_pod(pod)
    assert_node_info(
        cache.nodes.get("node-1"),
        Resource(100, 500),
        Resource(100, 500),
        [pod],
        ports(("127.0.0.1", 80)),
    )
    for name in ("node-1", "node-2"):
        cache.add_node(make_node().name(name).obj())
    cache.remove_pod(pod)
    assert cache.get_pod(pod.key) is None
    assert cache.nodes["node-1"].pods == []
    with pytest.raises(CacheError, match="is not found in scheduler cache"):
        cache.remove_pod(pod)
    # The node that held the pod is the most recently updated.
    assert next(reversed(cache._recent)) == "node-1"


def test_it_forgets_an_assumed_pod() -> None:
    pod = base_pod(NODE, "test", "100m", "500", port=80)
    cache = Cache()
    cache.assume_pod(pod)
    assert cache.is_assumed_pod(pod)
    assumed = cache.get_pod(pod.key)
    assert assumed is not None and (assumed.namespace, assumed.name) == (pod.namespace, pod.name)
    cache.forget_pod(pod)
    assert is_forgotten(cache, pod)


def test_it_refuses_to_forget_a_pod_assumed_elsewhere_or_bound() -> None:
    pod = base_pod(NODE, "test", "100m", "500")
    cache = Cache()
    cache.assume_pod(pod)
    with pytest.raises(CacheError, match=f"was assumed on other but assigned to {NODE}"):
        cache.forget_pod(make_pod().name("test").namespace(pod.namespace).node("other").obj())
    cache.add_pod(pod)
    with pytest.raises(CacheError, match="wasn't assumed so cannot be forgotten"):
        cache.forget_pod(pod)


# ---------------------------------------------------------------------------------------------
# Nodes

RESOURCES_1: dict[str, str | int] = {"cpu": "1000m", "memory": "100m", "example.com/foo": "1"}
RESOURCES_2: dict[str, str | int] = {"cpu": "500m", "memory": "50m", "example.com/foo": "2"}
TAINTS = [Taint("test-key", "test-value", "PreferNoSchedule")]
IMAGES_1 = {"gcr.io/80:latest": 80 * MB, "gcr.io/80:v1": 80 * MB,
            "gcr.io/300:latest": 300 * MB, "gcr.io/300:v1": 300 * MB}  # fmt: skip
IMAGES_2 = {
    "gcr.io/600:latest": 600 * MB,
    "gcr.io/80:latest": 80 * MB,
    "gcr.io/900:latest": 900 * MB,
}


def operated_node(name: str, resources: dict[str, str | int], images: dict[str, int]) -> Node:
    return make_node().name(name).capacity(resources).taints(TAINTS).images(images).obj()


def half_pod(name: str, port: int = 0) -> Pod:
    wrapper = (
        make_pod().name(name).uid(name).node("test-node-1").req({"cpu": "500m", "memory": "50m"})
    )
    return (wrapper.host_port(port) if port else wrapper).obj()


def same_image_summaries(infos: list[NodeInfo], *images: str) -> bool:
    """Upstream's checkImageStateSummary: every node holding an image sees the same summary."""
    for image in images:
        seen = {(s.size, s.num_nodes) for i in infos if (s := i.image_states.get(image))}
        if len(seen) > 1:
            return False
    return True


@pytest.mark.parametrize(
    ("nodes", "pods"),
    [
        pytest.param(
            [
                operated_node("test-node-1", RESOURCES_1, IMAGES_1),
                operated_node("test-node-2", RESOURCES_2, IMAGES_2),
                operated_node("test-node-3", RESOURCES_1, IMAGES_1),
                operated_node("test-node-4", RESOURCES_2, IMAGES_2),
            ],
            [half_pod("pod1", 80)],
            id="operate the node with one pod",
        ),
        pytest.param(
            [
                operated_node("test-node-1", RESOURCES_1, IMAGES_1),
                operated_node("test-node-2", RESOURCES_2, IMAGES_2),
                operated_node("test-node-3", RESOURCES_1, IMAGES_1),
            ],
            [half_pod("pod1"), half_pod("pod2")],
            id="operate the node with two pods",
        ),
    ],
)
def test_it_adds_updates_and_removes_nodes(nodes: list[Node], pods: list[Pod]) -> None:
    node = nodes[0]
    cache = Cache()
    for item in nodes:
        cache.add_node(item)
    for pod in pods:
        cache.add_pod(pod)

    # Step 1: the node was added into the cache.
    got = cache.nodes[node.name]
    assert cache.node_tree.num_nodes == len(nodes) == len(cache.node_tree.list())
    expected = NodeInfo(node, pods)
    assert got.allocatable == expected.allocatable
    assert got.requested == expected.requested
    assert [p.pod for p in got.pods] == pods
    holders = sum(1 for n in nodes if "gcr.io/80:latest" in {i.names[0] for i in n.images})
    assert (
        got.image_states["gcr.io/80:latest"].size,
        got.image_states["gcr.io/80:latest"].num_nodes,
    ) == (80 * MB, holders)
    assert got.image_states["gcr.io/300:latest"].num_nodes == len(nodes) // 2 + len(nodes) % 2
    assert same_image_summaries(list(cache.nodes.values()), "gcr.io/80:latest", "gcr.io/300:latest")

    # Step 2: a snapshot holds a copy of every node.
    snapshot = Snapshot()
    cache.update_snapshot(snapshot)
    copied = snapshot.node_info_map[node.name]
    assert len(snapshot.node_info_map) == len(nodes)
    assert copied is not got and copied.requested == got.requested
    assert [p.pod for p in copied.pods] == pods
    assert same_image_summaries(
        list(snapshot.node_info_map.values()), "gcr.io/80:latest", "gcr.io/300:latest"
    )

    # Step 3: updating the node bumps its generation.
    generation = got.generation
    updated = make_node().name(node.name).capacity({**RESOURCES_1, "memory": "50m"}).taints(TAINTS)
    cache.update_node(node, updated.images(IMAGES_1).obj())
    assert cache.nodes[node.name].generation > generation
    assert cache.nodes[node.name].allocatable.memory == 1  # 50m rounds up to 1 byte
    assert cache.node_tree.num_nodes == len(nodes)

    # Step 4: the node can be removed even if it still has pods: a ghost stays.
    cache.remove_node(node)
    assert cache.nodes[node.name].node is None
    assert cache.node_count() == len(nodes)  # the ghost is still counted, as upstream's
    with pytest.raises(CacheError, match="is not found"):
        cache.remove_node(node)
    assert cache.node_tree.num_nodes == len(nodes) - 1 == len(cache.node_tree.list())
    assert same_image_summaries(list(cache.nodes.values()), "gcr.io/80:latest", "gcr.io/300:latest")
    assert all(cache.get_pod(p.key) is not None for p in pods)

    # Step 5: removing the pods of the removed node still succeeds, and drops the ghost.
    for pod in pods:
        cache.remove_pod(pod)
        assert cache.get_pod(pod.key) is None
    assert node.name not in cache.nodes


# ---------------------------------------------------------------------------------------------
# Snapshots


NODES = [
    make_node().name(f"test-node{i}").capacity({"cpu": "1000m", "memory": "100m"}).obj()
    for i in range(10)
]
UPDATED_NODES = [
    make_node().name(f"test-node{i}").capacity({"cpu": "2000m", "memory": "500m"}).obj()
    for i in range(10)
]
PODS = [
    make_pod().name(f"test-pod{i}").namespace("test-ns").node(f"test-node{i % 10}").obj()
    for i in range(20)
]
UPDATED_PODS = [
    make_pod()
    .name(f"test-pod{i}")
    .namespace("test-ns")
    .node(f"test-node{i % 10}")
    .priority(1000)
    .obj()
    for i in range(20)
]
AFFINITY_PODS = [
    make_pod()
    .name(f"p-affinity-{i}")
    .namespace("test-ns")
    .pod_affinity_exists("foo", "")
    .node(f"test-node{i}")
    .obj()
    for i in range(2)
]
PVC_PODS = [
    make_pod()
    .name(f"p-pvc-{i}")
    .namespace("test-ns")
    .pvc(f"test-pvc{i % 4}")
    .node(f"test-node{i % 2}")
    .obj()
    for i in range(8)
]

Operation = Callable[[Cache, Snapshot], None]


def add_node(i: int) -> Operation:
    return lambda c, s: (c.add_node(NODES[i]), None)[1]


def remove_node(i: int) -> Operation:
    return lambda c, s: c.remove_node(NODES[i])


def update_node(i: int) -> Operation:
    return lambda c, s: (c.update_node(NODES[i], UPDATED_NODES[i]), None)[1]


def add_pod(i: int, pods: list[Pod] = PODS) -> Operation:
    return lambda c, s: c.add_pod(pods[i])


def remove_pod(i: int, pods: list[Pod] = PODS) -> Operation:
    return lambda c, s: c.remove_pod(pods[i])


def update_pod(i: int) -> Operation:
    return lambda c, s: c.update_pod(PODS[i], UPDATED_PODS[i])


def assume_pod(i: int) -> Operation:
    return lambda c, s: c.assume_pod(PODS[i])


def forget_pod(i: int) -> Operation:
    return lambda c, s: c.forget_pod(PODS[i])


def update_snapshot() -> Operation:
    def run(cache: Cache, snapshot: Snapshot) -> None:
        cache.update_snapshot(snapshot)
        assert_snapshot_matches_cache(cache, snapshot)

    return run


def assert_snapshot_matches_cache(cache: Cache, snapshot: Snapshot) -> None:
    """Upstream's compareCacheWithNodeInfoSnapshot."""
    assert len(snapshot.node_info_map) == cache.node_tree.num_nodes
    for name, info in cache.nodes.items():
        copied = snapshot.node_info_map.get(name)
        if info.node is None:
            assert copied is None
            continue
        assert copied is not None and copied.node is info.node
        assert [p.key for p in copied.pods] == [p.key for p in info.pods]
        assert copied.requested == info.requested
        assert copied.generation == info.generation
    order = cache.node_tree.list()
    assert [n.name for n in snapshot.node_info_list] == order
    assert all(snapshot.node_info_list[i] is snapshot.node_info_map[n] for i, n in enumerate(order))
    assert snapshot.have_pods_with_affinity_node_info_list == [
        n for n in snapshot.node_info_list if n.pods_with_affinity
    ]
    assert snapshot.used_pvc_set == {k for n in snapshot.node_info_list for k in n.pvc_ref_counts}


UPDATE_SNAPSHOT_CASES = [
    pytest.param([], [], 0, set(), id="Empty cache"),
    pytest.param([add_node(1)], [1], 0, set(), id="Single node"),
    pytest.param([add_node(1), update_snapshot(), remove_node(1), add_node(1)], [1], 0, set(),
                 id="Add node, remove it, add it again"),
    pytest.param([add_node(1), update_snapshot(), add_node(2), remove_node(1)], [2], 0, set(),
                 id="Add node and remove it in the same cycle, add it again"),
    pytest.param([add_node(0), update_snapshot(), add_node(1), update_snapshot(), add_node(2),
                  update_snapshot(), add_node(3)], [3, 2, 1, 0], 0, set(),
                 id="Add a few nodes, and snapshot in the middle"),
    pytest.param([add_node(0), add_node(2), add_node(5), add_node(6)], [6, 5, 2, 0], 0, set(),
                 id="Add a few nodes, and snapshot in the end"),
    pytest.param([add_node(0), add_node(1), add_node(5), update_snapshot(), update_node(1)],
                 [1, 5, 0], 0, set(), id="Update some nodes"),
    pytest.param([add_node(0), add_node(2), add_node(5), add_node(6), update_snapshot(),
                  remove_node(0), remove_node(2), remove_node(5), remove_node(6)], [], 0, set(),
                 id="Add a few nodes, and remove all of them"),
    pytest.param([add_node(0), add_node(2), add_node(5), add_node(6), update_snapshot(),
                  remove_node(0), remove_node(6)], [5, 2], 0, set(),
                 id="Add a few nodes, and remove some of them"),
    pytest.param([add_node(2), add_node(5), add_node(6), update_snapshot(), remove_node(2),
                  remove_node(5), remove_node(6), update_snapshot(), add_node(7), add_node(9)],
                 [9, 7], 0, set(), id="Add a few nodes, remove all of them, and add more"),
    pytest.param([add_node(8), update_node(2), update_node(8), update_snapshot(), add_node(1)],
                 [1, 8, 2], 0, set(), id="Update nodes in particular order"),
    pytest.param([add_node(0), add_node(2), add_node(8), update_snapshot(), add_pod(8), add_pod(2)],
                 [2, 8, 0], 0, set(), id="Add some nodes and some pods"),
    pytest.param([add_node(0), add_pod(0), add_node(2), add_node(4), update_pod(0)], [0, 4, 2], 0,
                 set(), id="Updating a pod moves its node to the head"),
    pytest.param([add_node(0), add_pod(1), update_pod(1), add_node(1)], [1, 0], 0, set(),
                 id="Add pod before its node"),
    pytest.param([add_node(0), add_node(1), add_pod(1), add_pod(11), update_snapshot(),
                  remove_node(1), update_snapshot(), update_pod(1), update_pod(11), remove_pod(1),
                  remove_pod(11)], [0], 0, set(), id="Remove node before its pods"),
    pytest.param([add_node(0), add_pod(0, AFFINITY_PODS), update_snapshot(), add_node(1)], [1, 0],
                 1, set(), id="Add Pods with affinity"),
    pytest.param([add_node(0), add_pod(0, PVC_PODS), update_snapshot(), add_node(1)], [1, 0], 0,
                 {"test-ns/test-pvc0"}, id="Add Pods with PVC"),
    pytest.param([add_node(0), add_pod(0, AFFINITY_PODS), update_snapshot(), add_node(1),
                  add_pod(1, AFFINITY_PODS), update_snapshot()], [1, 0], 2, set(),
                 id="Add multiple nodes with pods with affinity"),
    pytest.param([add_node(0), add_pod(0, PVC_PODS), update_snapshot(), add_node(1),
                  add_pod(1, PVC_PODS), update_snapshot()], [1, 0], 0,
                 {"test-ns/test-pvc0", "test-ns/test-pvc1"},
                 id="Add multiple nodes with pods with PVC"),
    pytest.param([add_node(0), add_node(1), add_pod(0, AFFINITY_PODS), update_snapshot(),
                  remove_pod(0, AFFINITY_PODS), update_snapshot()], [0, 1], 0, set(),
                 id="Add then Remove pods with affinity"),
    pytest.param([add_node(0), add_pod(0, PVC_PODS), update_snapshot(), remove_pod(0, PVC_PODS),
                  add_pod(2, PVC_PODS), update_snapshot()], [0], 0, {"test-ns/test-pvc2"},
                 id="Add then Remove pod with PVC"),
    pytest.param([add_node(0), add_pod(0, PVC_PODS), update_snapshot(), remove_pod(0, PVC_PODS),
                  add_pod(0, PVC_PODS), update_snapshot()], [0], 0, {"test-ns/test-pvc0"},
                 id="Add then Remove pod with PVC and add same pod again"),
    pytest.param([add_node(0), add_node(1), add_pod(0, PVC_PODS), add_pod(1, PVC_PODS),
                  update_snapshot(), remove_pod(0, PVC_PODS), remove_pod(1, PVC_PODS),
                  add_pod(2, PVC_PODS), add_pod(3, PVC_PODS), update_snapshot()], [1, 0], 0,
                 {"test-ns/test-pvc2", "test-ns/test-pvc3"},
                 id="Remove and add pods with PVC, same ref count length, different content"),
    pytest.param([add_node(0), add_node(1), add_pod(0, PVC_PODS), add_pod(1, PVC_PODS),
                  add_pod(2, PVC_PODS), update_snapshot(), remove_pod(0, PVC_PODS),
                  remove_pod(1, PVC_PODS), update_snapshot(), add_pod(0, PVC_PODS),
                  update_snapshot(), add_pod(3, PVC_PODS), add_pod(4, PVC_PODS),
                  add_pod(5, PVC_PODS), update_snapshot(), remove_pod(0, PVC_PODS),
                  remove_pod(3, PVC_PODS), remove_pod(4, PVC_PODS), update_snapshot()], [0, 1], 0,
                 {"test-ns/test-pvc1", "test-ns/test-pvc2"},
                 id="Add and Remove multiple pods with PVC"),
    pytest.param([add_node(0), add_node(2), add_node(4), add_node(8), update_snapshot(),
                  assume_pod(8), assume_pod(0), forget_pod(0), update_snapshot()], [0, 8, 4, 2],
                 0, set(), id="Assume and forget in cache"),
]  # fmt: skip


@pytest.mark.parametrize(("operations", "order", "with_affinity", "pvcs"), UPDATE_SNAPSHOT_CASES)
def test_it_refreshes_the_snapshot_with_what_changed(
    operations: list[Operation], order: list[int], with_affinity: int, pvcs: set[str]
) -> None:
    cache, snapshot = Cache(), Snapshot()
    for operation in operations:
        operation(cache, snapshot)
    # The cache's node infos, most recently updated first.
    recent = [cache.nodes[n] for n in reversed(cache._recent)]
    assert [i.name for i in recent if i.node is not None] == [NODES[i].name for i in order]
    assert len(recent) == len(cache.nodes)
    assert len(snapshot.have_pods_with_affinity_node_info_list) == with_affinity
    cache.update_snapshot(snapshot)
    assert_snapshot_matches_cache(cache, snapshot)
    assert snapshot.used_pvc_set == pvcs


ZONED = [
    make_node()
    .name(f"node-{i}")
    .labels({LABEL_TOPOLOGY_REGION: f"region-{zone}", LABEL_TOPOLOGY_ZONE: f"zone-{zone}"})
    .obj()
    for i, zone in enumerate([0, 0, 1, 1, 1, 1, 1, 1])
]


@pytest.mark.parametrize(
    ("batches", "want"),
    [
        pytest.param([], [], id="Empty cache"),
        pytest.param([[0]], ["node-0"], id="Single node"),
        pytest.param([[0], [1]], ["node-0", "node-1"], id="Two nodes"),
        pytest.param(
            [[2, 3], [4, 0]], ["node-2", "node-0", "node-3", "node-4"],
            id="bug 91601, two nodes, update the snapshot and add two nodes in different zones",
        ),
        pytest.param(
            [[2, 3, 4, 5], [6, 0]], ["node-2", "node-0", "node-3", "node-4", "node-5", "node-6"],
            id="bug 91601, 6 nodes, one in a different zone",
        ),
        pytest.param(
            [[2], [3, 4], [5, 6, 0, 1]],
            ["node-2", "node-0", "node-3", "node-1", "node-4", "node-5", "node-6"],
            id="bug 91601, 7 nodes, two in a different zone",
        ),
        pytest.param(
            [[2, 1], [3, 4], [5, 6, 0]],
            ["node-2", "node-1", "node-3", "node-0", "node-4", "node-5", "node-6"],
            id="bug 91601, 7 nodes, two in a different zone, different zone order",
        ),
    ],
)  # fmt: skip
def test_it_lists_snapshot_nodes_round_robin_over_zones(
    batches: list[list[int]], want: list[str]
) -> None:
    cache, snapshot = Cache(), Snapshot()
    for batch in batches:
        for index in batch:
            cache.add_node(ZONED[index])
        cache.update_snapshot(snapshot)
        assert_snapshot_matches_cache(cache, snapshot)
    assert [n.name for n in snapshot.node_info_list] == want
    assert list(snapshot.node_names) == want


def test_it_fills_a_fresh_snapshot_with_every_node() -> None:
    """Any snapshot works: what is copied depends on the snapshot's generation."""
    cache = Cache()
    for node in NODES[:3]:
        cache.add_node(node)
    cache.add_pod(PODS[0])
    cache.update_snapshot(Snapshot())
    fresh = Snapshot()
    cache.update_snapshot(fresh)
    assert_snapshot_matches_cache(cache, fresh)
    assert [p.pod for p in fresh.node_info_map["test-node0"].pods] == [PODS[0]]


def test_it_copies_a_nodes_image_counts_as_of_its_last_refresh() -> None:
    """Upstream's ImageStateSummary.Snapshot: an unchanged node keeps the count it was copied
    with."""
    cache, snapshot = Cache(), Snapshot()
    cache.add_node(make_node().name("a").images({"img": 10}).obj())
    cache.update_snapshot(snapshot)
    cache.add_node(make_node().name("b").images({"img": 10}).obj())
    cache.update_snapshot(snapshot)
    assert snapshot.node_info_map["a"].image_states["img"].num_nodes == 1
    assert snapshot.node_info_map["b"].image_states["img"].num_nodes == 2
    assert cache.image_states["img"].num_nodes == 2


def test_it_counts_each_image_once_per_node_and_drops_unused_images() -> None:
    cache = Cache()
    first = make_node().name("a").images({"img": 10, "other": 5}).obj()
    cache.add_node(first)
    cache.add_node(make_node().name("b").images({"img": 10}).obj())
    assert {n: s.num_nodes for n, s in cache.image_states.items()} == {"img": 2, "other": 1}
    cache.update_node(first, make_node().name("a").images({"img": 10}).obj())
    assert {n: s.num_nodes for n, s in cache.image_states.items()} == {"img": 2}
    cache.remove_node(make_node().name("b").obj())
    assert {n: s.num_nodes for n, s in cache.image_states.items()} == {"img": 1}


def test_it_keeps_the_snapshot_order_when_a_node_only_changes_zone() -> None:
    """Upstream rebuilds the node list only when nodes come or go (or affinity/PVC sets move)."""
    cache, snapshot = Cache(), Snapshot()
    a = make_node().name("a").label(LABEL_TOPOLOGY_ZONE, "z1").obj()
    b = make_node().name("b").label(LABEL_TOPOLOGY_ZONE, "z1").obj()
    c = make_node().name("c").label(LABEL_TOPOLOGY_ZONE, "z2").obj()
    for node in (a, b, c):
        cache.add_node(node)
    cache.update_snapshot(snapshot)
    assert [n.name for n in snapshot.node_info_list] == ["a", "c", "b"]
    cache.update_node(a, make_node().name("a").label(LABEL_TOPOLOGY_ZONE, "z2").obj())
    cache.update_snapshot(snapshot)
    assert cache.node_tree.list() == ["b", "c", "a"]
    assert [n.name for n in snapshot.node_info_list] == ["a", "c", "b"]
    assert snapshot.node_info_map["a"].node is not None
    assert snapshot.node_info_map["a"].node.labels[LABEL_TOPOLOGY_ZONE] == "z2"
    cache.add_node(make_node().name("d").label(LABEL_TOPOLOGY_ZONE, "z1").obj())
    cache.update_snapshot(snapshot)
    assert [n.name for n in snapshot.node_info_list] == cache.node_tree.list()
