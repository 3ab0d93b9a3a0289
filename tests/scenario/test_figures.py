"""The per-step figures: requests against allocatable per node, their spread, the node cards,
and amounts kept only while the objects keep the fields they come from."""

from __future__ import annotations

import dataclasses

from scenario_builders import node, pod

from schedviz.kube.decode import decode_object
from schedviz.kube.objects import Node, Pod
from schedviz.scenario.figures import AmountCache, node_cards, resource_figures


def _node(name: str, cpu: str) -> Node:
    obj = decode_object(node(name, cpu))
    assert isinstance(obj, Node)
    return obj


def _pod(name: str, cpu: str, on: str = "") -> Pod:
    obj = decode_object(pod(name, cpu))
    assert isinstance(obj, Pod)
    return dataclasses.replace(obj, node_name=on)


def test_the_spread_is_each_nodes_requested_over_allocatable() -> None:
    nodes = [_node("a", "2"), _node("b", "4")]
    pods = [_pod("p", "1", "a"), _pod("q", "1", "b"), _pod("pending", "3")]
    cpu = resource_figures(nodes, pods)["cpu"]
    assert (cpu["requested"], cpu["allocatable"], cpu["utilisation"]) == (2000, 6000, 0.3333)
    assert cpu["spread"] == {"min": 0.25, "max": 0.5, "mean": 0.375, "stddev": 0.125}


def test_node_cards_list_each_nodes_pods_and_shares() -> None:
    cordoned = dataclasses.replace(_node("b", "4"), unschedulable=True)
    cards = node_cards([cordoned, _node("a", "2")], [_pod("p", "1", "a")])
    assert [(c["name"], c["unschedulable"], c["pods"]) for c in cards] == [
        ("a", False, ["default/p"]),
        ("b", True, []),
    ]
    assert cards[0]["shares"]["cpu"] == 0.5


def test_cached_requests_follow_a_pod_recreated_with_other_requests() -> None:
    cache = AmountCache()
    first = _pod("p", "1")
    assert cache.requests(first)["cpu"] == 1000
    assert cache.requests(dataclasses.replace(first, node_name="a"))["cpu"] == 1000
    assert cache.requests(_pod("p", "2"))["cpu"] == 2000
