"""NodeInfo (schedviz/scheduler/framework/types.py): what it derives from its pods."""

from __future__ import annotations

from schedviz.scheduler.framework.types import NodeInfo
from schedviz.scheduler.testing.wrappers import make_node, make_pod


def _state(node_info: NodeInfo) -> tuple[object, ...]:
    return (
        [p.key for p in node_info.pods],
        [p.key for p in node_info.pods_with_affinity],
        [p.key for p in node_info.pods_with_required_anti_affinity],
        node_info.requested.as_dict(),
        node_info.non_zero_requested.as_dict(),
        {key: set(ports) for key, ports in node_info.used_ports.items() if ports},
        dict(node_info.pvc_ref_counts),
    )


def test_without_pods_is_a_snapshot_with_those_pods_removed() -> None:
    node = make_node().name("n").capacity({"cpu": "8", "memory": "8Gi", "example.com/gpu": 4})
    pods = [
        make_pod().name("plain").req({"cpu": "1", "memory": "1Gi"}).node("n").obj(),
        make_pod().name("ports").req({"cpu": "500m"}).host_port(80).node("n").obj(),
        make_pod().name("claim").pvc("data").node("n").obj(),
        make_pod().name("claim2").pvc("data").node("n").obj(),
        make_pod().name("anti").pod_anti_affinity_exists("app", "zone").node("n").obj(),
        make_pod().name("gpu").req({"example.com/gpu": 2}).host_port(80, "UDP").node("n").obj(),
        make_pod().name("none").node("n").obj(),
    ]
    node_info = NodeInfo(node.obj(), pods)
    before = _state(node_info)
    removed = [node_info.pods[i] for i in (1, 2, 4, 5, 6)]

    got = node_info.without_pods(removed)

    want = node_info.snapshot()
    for pod_info in removed:
        assert want.remove_pod(pod_info.pod)
    assert _state(got) == _state(want)
    assert _state(got)[0] == ["default/plain", "default/claim2"]
    assert _state(node_info) == before
    assert got.generation != node_info.generation
