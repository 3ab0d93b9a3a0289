"""Upstream's NormalizeScore of each plugin for one node, with the numbers of the cycle
(helper.DefaultNormalizeScore for TaintToleration and NodeAffinity, PodTopologySpread's and
InterPodAffinity's own): every scored node's raw score is in the trace."""

from __future__ import annotations

from collections.abc import Mapping

from schedviz.scheduler.framework.interface import MAX_NODE_SCORE
from schedviz.scheduler.framework.plugins import names
from webui.score_explain.cell import M, X

# Plugins scored 0-100 directly, without NormalizeScore.
UNNORMALIZED = frozenset(
    {
        names.NODE_RESOURCES_FIT,
        names.NODE_RESOURCES_BALANCED_ALLOCATION,
        names.IMAGE_LOCALITY,
        names.VOLUME_BINDING,
    }
)


def normalize_steps(plugin: str, raws: Mapping[str, int], node: str, normalized: int) -> list[str]:
    """Upstream's NormalizeScore of ``plugin`` for ``node``, with the numbers of the cycle."""
    raw = raws[node]
    if plugin in UNNORMALIZED:
        return [f"{plugin} has no NormalizeScore: normalized = raw = {raw}"]
    high = max(raws.values())
    low = min(raws.values())
    if plugin == names.TAINT_TOLERATION:
        if high == 0:
            steps = [
                "DefaultNormalizeScore(100, reverse): no scored node has an intolerable "
                "PreferNoSchedule taint (max = 0), so every node gets 100"
            ]
            computed = MAX_NODE_SCORE
        else:
            scaled = MAX_NODE_SCORE * raw // high
            computed = MAX_NODE_SCORE - scaled
            steps = [
                f"DefaultNormalizeScore(100, reverse): max over the {len(raws)} scored "
                f"nodes = {high}",
                f"normalized = 100 {M} 100 {X} raw / max = 100 {M} 100 {X} {raw} / {high} = "
                f"100 {M} {scaled} = {computed}",
            ]
    elif plugin == names.NODE_AFFINITY:
        if high == 0:
            steps = ["DefaultNormalizeScore(100): every raw score is 0 (max = 0), so they stay 0"]
            computed = raw
        else:
            computed = MAX_NODE_SCORE * raw // high
            steps = [
                f"DefaultNormalizeScore(100): max over the {len(raws)} scored nodes = {high}",
                f"normalized = 100 {X} raw / max = 100 {X} {raw} / {high} = {computed}",
            ]
    elif plugin == names.POD_TOPOLOGY_SPREAD:
        if high == 0:
            steps = ["every node's weighted count of matching pods is 0 (max = 0): all get 100"]
            computed = MAX_NODE_SCORE
        else:
            computed = MAX_NODE_SCORE * (high + low - raw) // high
            steps = [
                f"min = {low}, max = {high} over the scored nodes (fewer matching pods is better)",
                f"normalized = 100 {X} (max + min {M} raw) / max "
                f"= 100 {X} ({high} + {low} {M} {raw}) / {high} = {computed}",
            ]
    elif plugin == names.INTER_POD_AFFINITY:
        if high == low:
            steps = [f"every scored node has the same raw score ({raw}): all normalized to 0"]
            computed = 0
        else:
            computed = int(float(MAX_NODE_SCORE) * (float(raw - low) / float(high - low)))
            steps = [
                f"min = {low}, max = {high} over the scored nodes",
                f"normalized = 100 {X} (raw {M} min) / (max {M} min) = 100 {X} ({raw} {M} {low}) / "
                f"({high} {M} {low}) = {computed}",
            ]
    else:
        return [f"normalized by {plugin}'s NormalizeScore: {raw} → {normalized}"]
    if computed != normalized:
        # PodTopologySpread gives 0 to nodes it ignores (no topology label), for one.
        steps.append(f"the trace records {normalized}: the plugin set this node apart")
    return steps
