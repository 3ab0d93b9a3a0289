"""The scheduler's view of the cluster between cycles.

Mirrors pkg/scheduler/backend/cache/cache.go. Pods are added, updated and removed as the watch
reports them; the scheduler *assumes* a pod onto its chosen node before binding, so the next
cycle already counts it, and *forgets* it if binding fails. ``update_snapshot`` copies only the
node infos whose generation is newer than the snapshot's: like upstream, it walks the node infos
from the most recently updated (an ordered dict stands in for upstream's linked list) until it
meets one the snapshot already has.
"""

from __future__ import annotations

from dataclasses import dataclass

from schedviz.kube.objects import Node, Pod
from schedviz.scheduler.backend.cache.node_tree import NodeTree
from schedviz.scheduler.backend.cache.snapshot import Snapshot
from schedviz.scheduler.framework.types import ImageStateSummary, NodeInfo


class CacheError(RuntimeError):
    pass


@dataclass(slots=True)
class _PodState:
    pod: Pod
    deadline: float | None = None
    binding_finished: bool = False


class Cache:
    def __init__(self, ttl: float = 0.0) -> None:
        # upstream's durationToExpireAssumedPod is 0: assumed pods wait for the watch to confirm.
        self.ttl = ttl
        self.nodes: dict[str, NodeInfo] = {}
        self.node_tree = NodeTree()
        self.pod_states: dict[str, _PodState] = {}
        self.assumed_pods: set[str] = set()
        self.image_states: dict[str, ImageStateSummary] = {}
        self._image_nodes: dict[str, set[str]] = {}
        # Names of the node infos, least recently updated first (upstream's list, tail to head).
        self._recent: dict[str, None] = {}

    # ------------------------------------------------------------------ nodes

    def _node_info(self, name: str) -> NodeInfo:
        info = self.nodes.get(name)
        if info is None:
            info = self.nodes[name] = NodeInfo()
        self._move_to_head(name)
        return info

    def _move_to_head(self, name: str) -> None:
        self._recent.pop(name, None)
        self._recent[name] = None

    def _delete_node_info(self, name: str) -> None:
        del self.nodes[name]
        del self._recent[name]

    def add_node(self, node: Node) -> NodeInfo:
        info = self._node_info(node.name)
        if info.node is not None:
            self._remove_node_image_states(info.node)
        self.node_tree.update_node(info.node, node)
        self._add_node_image_states(node, info)
        info.set_node(node)
        return info

    def update_node(self, old: Node, new: Node) -> NodeInfo:
        del old  # the cache's own copy is authoritative, as upstream's
        return self.add_node(new)

    def remove_node(self, node: Node) -> None:
        info = self.nodes.get(node.name)
        if info is None or info.node is None:
            raise CacheError(f"node {node.name} is not found")
        self.node_tree.remove_node(info.node)
        self._remove_node_image_states(info.node)
        info.remove_node()
        if not info.pods:
            self._delete_node_info(node.name)
        else:
            self._move_to_head(node.name)

    def _add_node_image_states(self, node: Node, info: NodeInfo) -> None:
        states: dict[str, ImageStateSummary] = {}
        for image in node.images:
            for name in image.names:
                summary = self.image_states.get(name)
                if summary is None:
                    summary = self.image_states[name] = ImageStateSummary(image.size_bytes)
                    self._image_nodes[name] = set()
                holders = self._image_nodes[name]
                if node.name not in holders:
                    holders.add(node.name)
                    summary.num_nodes = len(holders)
                states.setdefault(name, summary)
        info.image_states = states

    def _remove_node_image_states(self, node: Node) -> None:
        for image in node.images:
            for name in image.names:
                holders = self._image_nodes.get(name)
                if holders is None:
                    continue
                holders.discard(node.name)
                self.image_states[name].num_nodes = len(holders)
                if not holders:
                    del self.image_states[name]
                    del self._image_nodes[name]

    # ------------------------------------------------------------------ pods

    def _add_pod(self, pod: Pod, assume: bool) -> None:
        self._node_info(pod.node_name).add_pod(pod)
        self.pod_states[pod.key] = _PodState(pod)
        if assume:
            self.assumed_pods.add(pod.key)

    def _remove_pod(self, pod: Pod) -> None:
        info = self.nodes.get(pod.node_name)
        if info is not None:
            info.remove_pod(pod)
            if not info.pods and info.node is None:
                self._delete_node_info(pod.node_name)
            else:
                self._move_to_head(pod.node_name)
        self.pod_states.pop(pod.key, None)
        self.assumed_pods.discard(pod.key)

    def assume_pod(self, pod: Pod) -> None:
        if pod.key in self.pod_states:
            raise CacheError(f"pod {pod.key} is in the cache, so can't be assumed")
        self._add_pod(pod, assume=True)

    def finish_binding(self, pod: Pod, now: float) -> None:
        state = self.pod_states.get(pod.key)
        if state is not None and pod.key in self.assumed_pods:
            state.deadline = now + self.ttl if self.ttl else None
            state.binding_finished = True

    def forget_pod(self, pod: Pod) -> None:
        state = self.pod_states.get(pod.key)
        if state is not None and state.pod.node_name != pod.node_name:
            raise CacheError(
                f"pod {pod.key} was assumed on {pod.node_name} but assigned to "
                f"{state.pod.node_name}"
            )
        if pod.key not in self.assumed_pods:
            raise CacheError(f"pod {pod.key} wasn't assumed so cannot be forgotten")
        self._remove_pod(state.pod if state else pod)

    def add_pod(self, pod: Pod) -> None:
        """A bound pod reported by the watch: confirms an assumed pod or adds a new one."""
        state = self.pod_states.get(pod.key)
        if state is not None and pod.key in self.assumed_pods:
            self._remove_pod(state.pod)
            self._add_pod(pod, assume=False)
            return
        if state is None:
            self._add_pod(pod, assume=False)
            return
        raise CacheError(f"pod {pod.key} was already in added state")

    def update_pod(self, old: Pod, new: Pod) -> None:
        state = self.pod_states.get(old.key)
        if state is None:
            raise CacheError(f"pod {old.key} is not added to scheduler cache, so cannot be updated")
        if old.key in self.assumed_pods:
            # An assumed pod gets an Add event (which confirms it) before any Update.
            raise CacheError(f"assumed pod {old.key} should not be updated")
        self._remove_pod(state.pod)
        self._add_pod(new, assume=False)

    def remove_pod(self, pod: Pod) -> None:
        state = self.pod_states.get(pod.key)
        if state is None:
            raise CacheError(
                f"pod {pod.key} is not found in scheduler cache, so cannot be removed from it"
            )
        self._remove_pod(state.pod)

    def is_assumed_pod(self, pod: Pod) -> bool:
        return pod.key in self.assumed_pods

    def get_pod(self, key: str) -> Pod | None:
        state = self.pod_states.get(key)
        return state.pod if state else None

    def cleanup_assumed_pods(self, now: float) -> list[Pod]:
        """Expires assumed pods whose binding finished and whose deadline passed."""
        expired = []
        for key in list(self.assumed_pods):
            state = self.pod_states[key]
            if state.binding_finished and state.deadline is not None and now > state.deadline:
                expired.append(state.pod)
                self._remove_pod(state.pod)
        return expired

    def node_count(self) -> int:
        """Node infos held, ghosts of deleted nodes that still have pods included."""
        return len(self.nodes)

    def pod_count(self) -> int:
        return len(self.pod_states)

    # ------------------------------------------------------------------ snapshot

    def update_snapshot(self, snapshot: Snapshot) -> None:
        """Refreshes ``snapshot`` with the node infos updated since its generation."""
        update_all = False
        update_lists = False
        for name in reversed(self._recent):
            info = self.nodes[name]
            if info.generation <= snapshot.generation:
                break  # this one and all older ones are in the snapshot already
            if info.node is None:
                continue
            clone = info.snapshot()
            # Upstream's ImageStateSummary.Snapshot: the node count as of this copy.
            clone.image_states = {
                image: ImageStateSummary(state.size, state.num_nodes)
                for image, state in info.image_states.items()
            }
            existing = snapshot.node_info_map.get(name)
            if existing is None:
                snapshot.node_info_map[name] = clone
                update_all = True
                continue
            if (
                bool(existing.pods_with_affinity) != bool(clone.pods_with_affinity)
                or bool(existing.pods_with_required_anti_affinity)
                != bool(clone.pods_with_required_anti_affinity)
                or existing.pvc_ref_counts.keys() != clone.pvc_ref_counts.keys()
            ):
                update_lists = True
            # Keep the object the snapshot's lists point at, as upstream keeps the pointer.
            for slot in NodeInfo.__slots__:
                setattr(existing, slot, getattr(clone, slot))
            snapshot.changed.add(name)
        if self._recent:
            snapshot.generation = self.nodes[next(reversed(self._recent))].generation
        if len(snapshot.node_info_map) > self.node_tree.num_nodes:
            # Deleted nodes: gone from the cache, or ghosts kept for their pods.
            for name in list(snapshot.node_info_map):
                cached = self.nodes.get(name)
                if cached is None or cached.node is None:
                    del snapshot.node_info_map[name]
            update_all = True
        if not update_all and len(snapshot.node_info_list) != self.node_tree.num_nodes:
            update_all = True  # upstream reports the inconsistency and rebuilds
        if update_all:
            snapshot.node_names = tuple(self.node_tree.list())
        if update_all or update_lists:
            snapshot.rebuild_lists(snapshot.node_names)
