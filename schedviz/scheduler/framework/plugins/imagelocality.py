"""ImageLocality: favours nodes that already hold the pod's container images.

Mirrors pkg/scheduler/framework/plugins/imagelocality/image_locality.go: each image present on the
node counts its size scaled by the share of nodes holding it, and the sum is mapped linearly
between 23 MiB and 1000 MiB per container (init containers included) onto [0, 100].
"""

from __future__ import annotations

import numpy as np

from schedviz.kube.objects import Pod
from schedviz.scheduler.backend.cache.columns import IntArray, NodeColumns
from schedviz.scheduler.framework.cycle_state import CycleState
from schedviz.scheduler.framework.interface import (
    MAX_NODE_SCORE,
    Handle,
    NodeScorer,
    NodeScorerPlugin,
    ScoreExtensions,
    Status,
)
from schedviz.scheduler.framework.plugins.names import IMAGE_LOCALITY
from schedviz.scheduler.framework.types import ImageStateSummary, NodeInfo

NAME = IMAGE_LOCALITY

MB = 1024 * 1024
# Bounds of the image score range: 90% of the images on Docker Hub fall between them.
MIN_THRESHOLD = 23 * MB
MAX_CONTAINER_THRESHOLD = 1000 * MB


def calculate_priority(sum_scores: int, num_containers: int) -> int:
    """Maps the summed image scores onto [0, MAX_NODE_SCORE]."""
    max_threshold = MAX_CONTAINER_THRESHOLD * num_containers
    if sum_scores < MIN_THRESHOLD:
        sum_scores = MIN_THRESHOLD
    elif sum_scores > max_threshold:
        sum_scores = max_threshold
    return MAX_NODE_SCORE * (sum_scores - MIN_THRESHOLD) // (max_threshold - MIN_THRESHOLD)


def scaled_image_score(image_state: ImageStateSummary, total_num_nodes: int) -> int:
    """The image's size scaled by how far it has spread, against the "node heating" problem."""
    spread = image_state.num_nodes / total_num_nodes
    return int(image_state.size * spread)


def sum_image_scores(node_info: NodeInfo, pod: Pod, total_num_nodes: int) -> int:
    return _sum_image_scores(node_info, _pod_images(pod), total_num_nodes)


def _pod_images(pod: Pod) -> list[str]:
    """The normalized image of each container, init containers included."""
    return [normalized_image_name(c.image) for c in (*pod.init_containers, *pod.containers)]


def _sum_image_scores(node_info: NodeInfo, images: list[str], total_num_nodes: int) -> int:
    total = 0
    image_states = node_info.image_states
    for image in images:
        state = image_states.get(image)
        if state is not None:
            total += scaled_image_score(state, total_num_nodes)
    return total


def normalized_image_name(name: str) -> str:
    """The CRI name of an image: ``:latest`` is added when there is no tag."""
    if name.rfind(":") <= name.rfind("/"):
        return name + ":latest"
    return name


class ImageLocality(NodeScorerPlugin):
    def __init__(self, handle: Handle) -> None:
        self._handle = handle

    def name(self) -> str:
        return NAME

    def score(self, state: CycleState, pod: Pod, node_info: NodeInfo) -> tuple[int, Status | None]:
        return self.node_scorer(state, pod)(node_info), None

    def node_scorer(self, state: CycleState, pod: Pod) -> NodeScorer:
        total_num_nodes = len(self._handle.snapshot_shared_lister().list())
        images = _pod_images(pod)
        num_containers = len(images)
        # A node holding none of the images (most nodes, usually) scores the same as any other.
        score_without_images = calculate_priority(0, num_containers)

        def score_node(node_info: NodeInfo) -> int:
            if not node_info.image_states:
                return score_without_images
            image_scores = _sum_image_scores(node_info, images, total_num_nodes)
            return calculate_priority(image_scores, num_containers)

        return score_node

    def score_columns(
        self, state: CycleState, pod: Pod, columns: NodeColumns, rows: IntArray
    ) -> IntArray | None:
        """``score`` of many nodes: those holding no image at once, the others one by one."""
        score_node = self.node_scorer(state, pod)
        holding = np.flatnonzero(columns.has_images[rows])
        scores = np.full(len(rows), score_node(_NO_IMAGES), dtype=np.int64)
        infos = columns.infos
        for k in holding.tolist():
            scores[k] = score_node(infos[int(rows[k])])
        return scores

    def score_extensions(self) -> ScoreExtensions | None:
        return None


# A node info without images: what every node holding none of them scores.
_NO_IMAGES = NodeInfo()


def new(args: object | None, handle: Handle) -> ImageLocality:
    return ImageLocality(handle)
