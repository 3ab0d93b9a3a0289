"""The per-cycle view of the cluster.

Mirrors pkg/scheduler/backend/cache/snapshot.go. The cache refreshes a snapshot incrementally
(only node infos whose generation moved are copied), so a cycle never copies the whole cluster.
``new_snapshot`` builds one directly from pods and nodes, as upstream's ``NewSnapshot`` does for
tests and for ``simulate``-style tools. ``node_columns`` (not upstream) gives the same nodes as
columns for column-wise plugins, kept up to date with the node infos the cache refreshed.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

from schedviz.kube.objects import Node, Pod
from schedviz.scheduler.backend.cache.columns import NodeColumns
from schedviz.scheduler.framework.types import ImageStateSummary, NodeInfo


class Snapshot:
    __slots__ = (
        "_columns",
        "changed",
        "generation",
        "have_pods_with_affinity_node_info_list",
        "have_pods_with_required_anti_affinity_node_info_list",
        "node_info_list",
        "node_info_map",
        "node_names",
        "used_pvc_set",
    )

    def __init__(self) -> None:
        self.node_info_map: dict[str, NodeInfo] = {}
        self.node_info_list: list[NodeInfo] = []
        self.have_pods_with_affinity_node_info_list: list[NodeInfo] = []
        self.have_pods_with_required_anti_affinity_node_info_list: list[NodeInfo] = []
        self.used_pvc_set: set[str] = set()
        # The node names in walking order; replaced (not mutated) when nodes come or go, so a
        # cycle's trace can keep a reference to it.
        self.node_names: tuple[str, ...] = ()
        self.generation = 0
        # Names of node infos refreshed in place since the columns last looked.
        self.changed: set[str] = set()
        self._columns: NodeColumns | None = None

    # NodeInfoLister
    def list(self) -> Sequence[NodeInfo]:
        return self.node_info_list

    def get(self, node_name: str) -> NodeInfo | None:
        return self.node_info_map.get(node_name)

    def have_pods_with_affinity_list(self) -> Sequence[NodeInfo]:
        return self.have_pods_with_affinity_node_info_list

    def have_pods_with_required_anti_affinity_list(self) -> Sequence[NodeInfo]:
        return self.have_pods_with_required_anti_affinity_node_info_list

    def is_pvc_used_by_pods(self, key: str) -> bool:
        return key in self.used_pvc_set

    def num_nodes(self) -> int:
        return len(self.node_info_list)

    def node_columns(self) -> NodeColumns:
        """The nodes as columns, in ``node_info_list`` order; rebuilt when nodes came or went,
        otherwise only the rows of the node infos refreshed since the last call."""
        columns = self._columns
        if (
            columns is None
            or columns.names is not self.node_names
            or len(columns.infos) != len(self.node_info_list)
        ):
            columns = self._columns = NodeColumns(self.node_names, self.node_info_list)
        else:
            # The same nodes in the same order; the list may be a new one (rebuild_lists).
            columns.infos = self.node_info_list
            if self.changed:
                columns.refresh(self.changed)
        self.changed.clear()
        return columns

    def rebuild_lists(self, order: Iterable[str]) -> None:
        """Recomputes the ordered lists from the map, in ``order`` (the node tree's)."""
        self.node_info_list = [self.node_info_map[name] for name in order]
        self.have_pods_with_affinity_node_info_list = [
            n for n in self.node_info_list if n.pods_with_affinity
        ]
        self.have_pods_with_required_anti_affinity_node_info_list = [
            n for n in self.node_info_list if n.pods_with_required_anti_affinity
        ]
        self.used_pvc_set = {key for n in self.node_info_list for key in n.pvc_ref_counts}


def image_states_for(nodes: Iterable[Node]) -> dict[str, dict[str, ImageStateSummary]]:
    """Per node, its images with their size there and the number of nodes holding each.

    Upstream's createImageExistenceMap and getNodeImageStates: each node gets its own summaries,
    sized as that node reports the image.
    """
    nodes = list(nodes)
    holders: dict[str, set[str]] = {}
    for node in nodes:
        for image in node.images:
            for image_name in image.names:
                holders.setdefault(image_name, set()).add(node.name)
    return {
        node.name: {
            image_name: ImageStateSummary(image.size_bytes, len(holders[image_name]))
            for image in node.images
            for image_name in image.names
        }
        for node in nodes
    }


def new_snapshot(pods: Iterable[Pod], nodes: Sequence[Node]) -> Snapshot:
    """A snapshot of these nodes with the pods that name one of them in ``node_name``.

    Unlike upstream, a pod bound to a node not given adds no node-less NodeInfo; its claims
    still count as used, as upstream's createUsedPVCSet counts every bound pod's.
    """
    pods = list(pods)
    snapshot = Snapshot()
    images = image_states_for(nodes)
    for node in nodes:
        node_info = NodeInfo(node)
        node_info.image_states = images[node.name]
        snapshot.node_info_map[node.name] = node_info
    for pod in pods:
        node_info_or_none = snapshot.node_info_map.get(pod.node_name)
        if node_info_or_none is not None:
            node_info_or_none.add_pod(pod)
    snapshot.node_names = tuple(node.name for node in nodes)
    snapshot.rebuild_lists(snapshot.node_names)
    snapshot.used_pvc_set = {
        f"{pod.namespace}/{volume.pvc_claim_name}"
        for pod in pods
        if pod.node_name
        for volume in pod.volumes
        if volume.pvc_claim_name
    }
    return snapshot
