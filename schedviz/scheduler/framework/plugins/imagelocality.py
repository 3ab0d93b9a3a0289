"""ImageLocality: favours nodes that already hold the pod's container images.

Mirrors pkg/scheduler/framework/plugins/imagelocality/image_locality.go: each image present on the
node counts its size scaled by the share of nodes holding it, and the sum is mapped linearly
between 23 MiB and 1000 MiB per container (init containers included) onto [0, 100].
"""

from __future__ import annotations

from schedviz.kube.objects import Pod
from schedviz.scheduler.framework.cycle_state import CycleState
from schedviz.scheduler.framework.interface import (
    MAX_NODE_SCORE,
    Handle,
    ScoreExtensions,
    ScorePlugin,
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
    total = 0
    for container in (*pod.init_containers, *pod.containers):
        state = node_info.image_states.get(normalized_image_name(container.image))
        if state is not None:
            total += scaled_image_score(state, total_num_nodes)
    return total


def normalized_image_name(name: str) -> str:
    """The CRI name of an image: ``:latest`` is added when there is no tag."""
    if name.rfind(":") <= name.rfind("/"):
        return name + ":latest"
    return name


class ImageLocality(ScorePlugin):
    def __init__(self, handle: Handle) -> None:
        self._handle = handle

    def name(self) -> str:
        return NAME

    def score(self, state: CycleState, pod: Pod, node_info: NodeInfo) -> tuple[int, Status | None]:
        total_num_nodes = len(self._handle.snapshot_shared_lister().list())
        image_scores = sum_image_scores(node_info, pod, total_num_nodes)
        num_containers = len(pod.init_containers) + len(pod.containers)
        return calculate_priority(image_scores, num_containers), None

    def score_extensions(self) -> ScoreExtensions | None:
        return None


def new(args: object | None, handle: Handle) -> ImageLocality:
    return ImageLocality(handle)
