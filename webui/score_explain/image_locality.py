"""ImageLocality's raw score: the pod's images on the node, scaled by how many nodes hold them
(imagelocality/image_locality.go)."""

from __future__ import annotations

from schedviz.scheduler.framework.plugins.imagelocality import (
    MAX_CONTAINER_THRESHOLD,
    MB,
    MIN_THRESHOLD,
    calculate_priority,
    normalized_image_name,
)
from webui.score_explain.cell import CellContext, Computation, M, X, mismatch


def explain_image_locality(context: CellContext, computation: Computation) -> None:
    pod, node = context.pod(), context.node_object()
    if pod is None or node is None:
        computation.notes.append("The pod or the node is no longer in the cluster.")
        return
    images = [normalized_image_name(c.image) for c in (*pod.init_containers, *pod.containers)]
    containers = len(images)
    on_node: dict[str, int] = {}
    for image in node.images:
        for name in image.names:
            on_node.setdefault(name, image.size_bytes)
    present = [name for name in images if name in on_node]
    total_nodes = int(context.trace.get("totalNodes") or 0) or 1
    holders = context.image_holders(set(present)) if present else {}
    terms: list[str] = []
    total = 0
    for name in present:
        held_by = holders.get(name, 0)
        scaled = int(on_node[name] * (held_by / total_nodes))
        total += scaled
        terms.append(
            f"{name}: {_megabytes(on_node[name])} {X} {held_by}/{total_nodes} nodes = "
            f"{_megabytes(scaled)}"
        )
    recomputed = calculate_priority(total, containers)
    if recomputed != computation.raw:
        mismatch(computation, recomputed)
        return
    top = MAX_CONTAINER_THRESHOLD * containers
    computation.inputs.append(("the pod's images", ", ".join(images) or "none"))
    computation.inputs.append(("on the node", ", ".join(present) or "none of them"))
    computation.raw_steps.extend(terms)
    computation.raw_steps.append(
        f"sum = {_megabytes(total)}, held between {MIN_THRESHOLD // MB} MB and "
        f"{top // MB} MB ({containers} container{'' if containers == 1 else 's'})"
    )
    clamped = min(max(total, MIN_THRESHOLD), top)
    computation.raw_steps.append(
        f"raw = 100 {X} (sum {M} {MIN_THRESHOLD // MB} MB) / ({top // MB} MB {M} "
        f"{MIN_THRESHOLD // MB} MB) = 100 {X} {_megabytes(clamped - MIN_THRESHOLD)} / "
        f"{_megabytes(top - MIN_THRESHOLD)} = {computation.raw}"
    )
    computation.notes.append(
        "Each image's size is scaled by the share of nodes that hold it, so an image on few "
        "nodes counts less (upstream's answer to piling pods onto one node)."
    )


def _megabytes(amount: int) -> str:
    return f"{amount / MB:.1f} MB"
