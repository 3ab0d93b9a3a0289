"""A score cell's computation: normalizing and weighting from the trace, the raw score's
inputs from the plugin's explainer; and numbers rounded for people."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from schedviz.cluster.models import Cluster
from schedviz.scheduler.framework.plugins import names
from webui.score_explain.cell import CellContext, Computation
from webui.score_explain.image_locality import explain_image_locality
from webui.score_explain.inter_pod_affinity import explain_inter_pod_affinity
from webui.score_explain.node_affinity import explain_node_affinity
from webui.score_explain.normalize import normalize_steps
from webui.score_explain.resources import explain_balanced, explain_fit
from webui.score_explain.taints import explain_taints
from webui.score_explain.topology_spread import explain_topology_spread


def score_computation(
    *, cluster: Cluster, trace: Mapping[str, Any], node: str, plugin: str
) -> Computation:
    """The computation of ``trace["scores"][node][plugin]``; KeyError when it was not scored."""
    cell = trace["scores"][node][plugin]
    computation = Computation(
        plugin=plugin,
        node=node,
        raw=int(cell["raw"]),
        normalized=int(cell["normalized"]),
        weight=int(cell["weight"]),
        weighted=int(cell["weighted"]),
    )
    raws = {n: int(s[plugin]["raw"]) for n, s in trace["scores"].items() if plugin in s}
    computation.normalize_steps = normalize_steps(plugin, raws, node, computation.normalized)
    explain = _RAW_EXPLAINERS.get(plugin)
    if explain is not None:
        context = CellContext(cluster, trace, node)
        explain(context, computation)
    else:
        computation.notes.append(
            f"The trace keeps {plugin}'s raw score; its inputs are not recomputed here."
        )
    return computation


_RAW_EXPLAINERS = {
    names.NODE_RESOURCES_FIT: explain_fit,
    names.NODE_RESOURCES_BALANCED_ALLOCATION: explain_balanced,
    names.TAINT_TOLERATION: explain_taints,
    names.NODE_AFFINITY: explain_node_affinity,
    names.IMAGE_LOCALITY: explain_image_locality,
    names.POD_TOPOLOGY_SPREAD: explain_topology_spread,
    names.INTER_POD_AFFINITY: explain_inter_pod_affinity,
}


def round_for_people(value: Any) -> Any:
    """Floats shown to people: a few significant digits (0.352087435000044 -> 0.352)."""
    if isinstance(value, float) and not value.is_integer():
        return float(f"{value:.3g}") if abs(value) < 1000 else round(value, 1)
    if isinstance(value, dict):
        return {k: round_for_people(v) for k, v in value.items()}
    if isinstance(value, list):
        return [round_for_people(v) for v in value]
    return value
