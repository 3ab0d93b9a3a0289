"""What a step left the cluster with: the per-step figures beside KEP-140's timeline.

Pending and unschedulable pods, preemptions and bindings of the step, scheduling attempts per
pod in the step, and per resource the pods' requests against the nodes' allocatable with its
spread over nodes (each node's requested/allocatable: least, most, mean, standard deviation).
Requests are the scheduler's own (``pod_requests``, upstream ``PodRequests``), in the integers
the scheduler keeps (millicores, bytes); only bound, non-terminal pods count.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence
from typing import Any

from schedviz.kube.objects import Node, Pod
from schedviz.kube.resources import pod_requests, to_int
from schedviz.scheduler.store import is_terminal_pod

RESOURCE_PODS = "pods"
REASON_UNSCHEDULABLE = "Unschedulable"


def _ratio(used: int, total: int) -> float:
    return round(used / total, 4) if total else 0.0


def is_unschedulable(pod: Pod) -> bool:
    return any(
        c.type == "PodScheduled" and c.status == "False" and c.reason == REASON_UNSCHEDULABLE
        for c in pod.conditions
    )


class AmountCache:
    """The integer amounts of pods' requests and nodes' allocatable, computed once per object
    state: a pod or node changed by the store is a new object sharing the fields it kept, so
    the fields' identity says whether the amounts can still be the same."""

    def __init__(self) -> None:
        self._pods: dict[str, tuple[tuple[object, ...], dict[str, int]]] = {}
        self._nodes: dict[str, tuple[object, dict[str, int]]] = {}

    def requests(self, pod: Pod) -> dict[str, int]:
        identity = (pod.containers, pod.init_containers, pod.overhead, pod.resources, pod.uid)
        entry = self._pods.get(pod.key)
        if entry is None or any(a is not b for a, b in zip(entry[0], identity, strict=True)):
            amounts = {name: to_int(name, a) for name, a in pod_requests(pod).items()}
            entry = (identity, amounts)
            self._pods[pod.key] = entry
        return entry[1]

    def allocatable(self, node: Node) -> dict[str, int]:
        entry = self._nodes.get(node.name)
        if entry is None or entry[0] is not node.allocatable:
            entry = (node.allocatable, allocatable(node))
            self._nodes[node.name] = entry
        return entry[1]


def node_usage(
    nodes: Sequence[Node], pods: Iterable[Pod], cache: AmountCache | None = None
) -> dict[str, dict[str, int]]:
    """node -> resource -> requested (pods: how many), over the bound non-terminal pods."""
    cache = cache or AmountCache()
    usage: dict[str, dict[str, int]] = {node.name: {} for node in nodes}
    for pod in pods:
        if not pod.node_name or is_terminal_pod(pod) or pod.node_name not in usage:
            continue
        used = usage[pod.node_name]
        for name, amount in cache.requests(pod).items():
            used[name] = used.get(name, 0) + amount
        used[RESOURCE_PODS] = used.get(RESOURCE_PODS, 0) + 1
    return usage


def allocatable(node: Node) -> dict[str, int]:
    return {name: to_int(name, q.amount) for name, q in node.allocatable.items()}


def resource_figures(
    nodes: Sequence[Node], pods: Iterable[Pod], cache: AmountCache | None = None
) -> dict[str, dict[str, Any]]:
    cache = cache or AmountCache()
    usage = node_usage(nodes, pods, cache)
    alloc = {node.name: cache.allocatable(node) for node in nodes}
    names = sorted({name for a in alloc.values() for name in a})
    figures: dict[str, dict[str, Any]] = {}
    for name in names:
        requested = sum(usage[n].get(name, 0) for n in usage)
        total = sum(alloc[n].get(name, 0) for n in alloc)
        shares = [
            usage[n].get(name, 0) / alloc[n][name] for n in alloc if alloc[n].get(name, 0) > 0
        ]
        figures[name] = {
            "requested": requested,
            "allocatable": total,
            "utilisation": _ratio(requested, total),
            "spread": _spread(shares),
        }
    return figures


def _spread(shares: list[float]) -> dict[str, float]:
    if not shares:
        return {"min": 0.0, "max": 0.0, "mean": 0.0, "stddev": 0.0}
    mean = sum(shares) / len(shares)
    variance = sum((s - mean) ** 2 for s in shares) / len(shares)
    return {
        "min": round(min(shares), 4),
        "max": round(max(shares), 4),
        "mean": round(mean, 4),
        "stddev": round(math.sqrt(variance), 4),
    }


def step_figures(
    *,
    major: int,
    time: float,
    nodes: Sequence[Node],
    pods: Sequence[Pod],
    events: Sequence[dict[str, Any]],
    attempts: dict[str, int],
    cache: AmountCache | None = None,
) -> dict[str, Any]:
    live = [pod for pod in pods if not is_terminal_pod(pod)]
    pending = [pod for pod in live if not pod.node_name]
    return {
        "step": major,
        "time": time,
        "nodes": len(nodes),
        "pods": len(live),
        "pending": len(pending),
        "unschedulable": sum(1 for pod in pending if is_unschedulable(pod)),
        "bindings": sum(1 for e in events if "podScheduled" in e),
        "preemptions": sum(1 for e in events if e.get("delete", {}).get("preemption")),
        "resources": resource_figures(nodes, live, cache),
        "attempts": dict(sorted(attempts.items())),
    }


def node_cards(
    nodes: Sequence[Node], pods: Sequence[Pod], cache: AmountCache | None = None
) -> list[dict[str, Any]]:
    """The nodes as the page draws them at a step: cordon, taints, pods, share of each
    resource."""
    cache = cache or AmountCache()
    usage = node_usage(nodes, pods, cache)
    on_node: dict[str, list[str]] = {node.name: [] for node in nodes}
    for pod in pods:
        if pod.node_name in on_node and not is_terminal_pod(pod):
            on_node[pod.node_name].append(pod.key)
    cards = []
    for node in sorted(nodes, key=lambda n: n.name):
        alloc = cache.allocatable(node)
        cards.append(
            {
                "name": node.name,
                "unschedulable": node.unschedulable,
                "taints": [str(t) for t in node.taints],
                "pods": sorted(on_node[node.name]),
                "shares": {
                    name: _ratio(usage[node.name].get(name, 0), alloc[name])
                    for name in ("cpu", "memory")
                    if alloc.get(name)
                },
            }
        )
    return cards
