"""Nodes grouped by zone, listed round-robin across zones.

Mirrors pkg/scheduler/backend/cache/node_tree.go. The scheduler walks nodes in this order, so
that when percentageOfNodesToScore stops the search early the nodes examined are spread over
zones.
"""

from __future__ import annotations

import contextlib

from schedviz.kube.objects import (
    LABEL_FAILURE_DOMAIN_REGION,
    LABEL_FAILURE_DOMAIN_ZONE,
    LABEL_TOPOLOGY_REGION,
    LABEL_TOPOLOGY_ZONE,
    Node,
)


def zone_key(node: Node) -> str:
    """utilnode.GetZoneKey: region and zone, or "" when the node has neither."""
    labels = node.labels
    # The deprecated beta labels win when present, even empty, as upstream reads them first.
    if LABEL_FAILURE_DOMAIN_ZONE in labels:
        zone = labels[LABEL_FAILURE_DOMAIN_ZONE]
    else:
        zone = labels.get(LABEL_TOPOLOGY_ZONE, "")
    if LABEL_FAILURE_DOMAIN_REGION in labels:
        region = labels[LABEL_FAILURE_DOMAIN_REGION]
    else:
        region = labels.get(LABEL_TOPOLOGY_REGION, "")
    if not region and not zone:
        return ""
    return f"{region}:\x00:{zone}"


class NodeTree:
    def __init__(self) -> None:
        self.tree: dict[str, list[str]] = {}
        self.zones: list[str] = []
        self.num_nodes = 0

    def add_node(self, node: Node) -> None:
        zone = zone_key(node)
        names = self.tree.get(zone)
        if names is None:
            self.zones.append(zone)
            self.tree[zone] = [node.name]
        elif node.name in names:
            return
        else:
            names.append(node.name)
        self.num_nodes += 1

    def remove_node(self, node: Node) -> None:
        zone = zone_key(node)
        names = self.tree.get(zone)
        if names is None or node.name not in names:
            raise KeyError(f"node {node.name} in group {zone} was not found")
        names.remove(node.name)
        if not names:
            del self.tree[zone]
            self.zones.remove(zone)
        self.num_nodes -= 1

    def update_node(self, old: Node | None, new: Node) -> None:
        if old is not None:
            if zone_key(old) == zone_key(new):
                return
            with contextlib.suppress(KeyError):  # upstream ignores whether old was there
                self.remove_node(old)
        self.add_node(new)

    def list(self) -> list[str]:
        """Node names taking one from each zone in turn."""
        result: list[str] = []
        index = 0
        while len(result) < self.num_nodes:
            for zone in self.zones:
                names = self.tree[zone]
                if index < len(names):
                    result.append(names[index])
            index += 1
        return result
