"""NodeResourcesFit's and NodeResourcesBalancedAllocation's raw scores, recomputed with the
engine's scorers (noderesources/least_allocated.go, most_allocated.go,
requested_to_capacity_ratio.go, balanced_allocation.go)."""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

from schedviz.kube.objects import Pod
from schedviz.scheduler.apis.config.types_pluginargs import (
    LEAST_ALLOCATED,
    MOST_ALLOCATED,
    NodeResourcesBalancedAllocationArgs,
    NodeResourcesFitArgs,
    ResourceSpec,
)
from schedviz.scheduler.framework.plugins import names
from schedviz.scheduler.framework.plugins.noderesources.balanced_allocation import (
    balanced_resource_scorer,
)
from schedviz.scheduler.framework.plugins.noderesources.least_allocated import least_resource_scorer
from schedviz.scheduler.framework.plugins.noderesources.most_allocated import most_resource_scorer
from schedviz.scheduler.framework.plugins.noderesources.requested_to_capacity_ratio import (
    requested_to_capacity_ratio_scorer,
)
from schedviz.scheduler.framework.plugins.noderesources.resource_allocation import (
    ResourceAllocationScorer,
    Scorer,
)
from schedviz.scheduler.framework.types import NodeInfo
from webui.score_explain.cell import CellContext, Computation, M, X, mismatch, quantity


def _resources_table(
    computation: Computation,
    scorer: ResourceAllocationScorer,
    node_info: NodeInfo,
    pod: Pod,
    resources: Sequence[ResourceSpec],
) -> tuple[list[int], list[int], list[ResourceSpec]]:
    """Each resource's requested (the node's pods plus this one) and allocatable, as the
    scorer reads them; a resource the node does not offer is left out."""
    requested: list[int] = []
    allocatable: list[int] = []
    used: list[ResourceSpec] = []
    for spec in resources:
        pod_request = scorer.calculate_pod_resource_request(pod, spec.name)
        capacity, wanted = scorer.calculate_resource_allocatable_request(
            node_info, spec.name, pod_request
        )
        requested.append(wanted)
        allocatable.append(capacity)
        if capacity:
            used.append(spec)
            computation.inputs.append(
                (
                    spec.name,
                    f"requested {quantity(spec.name, wanted)} (this pod "
                    f"{quantity(spec.name, pod_request)}) of allocatable "
                    f"{quantity(spec.name, capacity)}, weight {spec.weight}",
                )
            )
    return requested, allocatable, used


def explain_fit(context: CellContext, computation: Computation) -> None:
    pod, node_info = context.pod(), context.node_info()
    if pod is None or node_info is None:
        computation.notes.append("The pod or the node is no longer in the cluster.")
        return
    args = context.profile_args(names.NODE_RESOURCES_FIT) or NodeResourcesFitArgs()
    strategy = args.scoring_strategy
    resources = list(strategy.resources)
    scorer_of: dict[str, Any] = {
        LEAST_ALLOCATED: least_resource_scorer,
        MOST_ALLOCATED: most_resource_scorer,
    }
    shape = (
        strategy.requested_to_capacity_ratio.shape if strategy.requested_to_capacity_ratio else []
    )

    def make(specs: Sequence[ResourceSpec]) -> Scorer:
        if strategy.type in scorer_of:
            made: Scorer = scorer_of[strategy.type](specs)
            return made
        return requested_to_capacity_ratio_scorer(specs, shape)

    scorer = ResourceAllocationScorer(
        strategy.type, make(resources), resources, use_requested=False
    )
    computation.inputs.append(("strategy", strategy.type))
    requested, allocatable, used = _resources_table(computation, scorer, node_info, pod, resources)
    recomputed = scorer.scorer(requested, allocatable)
    if recomputed != computation.raw:
        mismatch(computation, recomputed)
        return
    computation.notes.append(
        "requested counts every pod's requests, a container without requests as 100m CPU and "
        "200Mi memory (for scoring only)."
    )
    per_resource: list[tuple[ResourceSpec, int]] = []
    for spec, wanted, capacity in zip(resources, requested, allocatable, strict=True):
        if not capacity:
            continue
        score = make([ResourceSpec(spec.name, 1)])([wanted], [capacity])
        per_resource.append((spec, score))
        a, r = quantity(spec.name, capacity), quantity(spec.name, wanted)
        if strategy.type == LEAST_ALLOCATED:
            formula = (
                f"(allocatable {M} requested) {X} 100 / allocatable = ({a} {M} {r}) {X} 100 / {a}"
            )
        elif strategy.type == MOST_ALLOCATED:
            formula = f"requested {X} 100 / allocatable = {r} {X} 100 / {a}"
        else:
            utilization = wanted * 100 // capacity if wanted <= capacity else 100
            formula = (
                f"utilization = requested {X} 100 / allocatable = {r} {X} 100 / {a} "
                f"= {utilization}; "
                f"shape(utilization) {X} 10"
            )
        computation.raw_steps.append(f"{spec.name}: {formula} = {score}")
    if per_resource:
        terms = " + ".join(f"{score} {X} {spec.weight}" for spec, score in per_resource)
        weights = " + ".join(str(spec.weight) for spec, _ in per_resource)
        rounding = "rounded" if strategy.type not in scorer_of else "integer division"
        computation.raw_steps.append(
            f"raw = ({terms}) / ({weights}) = {computation.raw} ({rounding})"
        )
    del used


def explain_balanced(context: CellContext, computation: Computation) -> None:
    pod, node_info = context.pod(), context.node_info()
    if pod is None or node_info is None:
        computation.notes.append("The pod or the node is no longer in the cluster.")
        return
    args = (
        context.profile_args(names.NODE_RESOURCES_BALANCED_ALLOCATION)
        or NodeResourcesBalancedAllocationArgs()
    )
    resources = list(args.resources)
    scorer = ResourceAllocationScorer(
        names.NODE_RESOURCES_BALANCED_ALLOCATION,
        balanced_resource_scorer,
        resources,
        use_requested=True,
    )
    requested, allocatable, _ = _resources_table(computation, scorer, node_info, pod, resources)
    recomputed = balanced_resource_scorer(requested, allocatable)
    if recomputed != computation.raw:
        mismatch(computation, recomputed)
        return
    fractions = [
        (spec.name, min(wanted / capacity, 1.0))
        for spec, wanted, capacity in zip(resources, requested, allocatable, strict=True)
        if capacity
    ]
    for name, fraction in fractions:
        computation.raw_steps.append(f"{name} fraction = requested / allocatable = {fraction:.3f}")
    if len(fractions) == 2:
        std = abs(fractions[0][1] - fractions[1][1]) / 2
        computation.raw_steps.append(
            f"std = |{fractions[0][1]:.3f} {M} {fractions[1][1]:.3f}| / 2 = {std:.3f}"
        )
    elif fractions:
        mean = sum(f for _, f in fractions) / len(fractions)
        std = math.sqrt(sum((f - mean) ** 2 for _, f in fractions) / len(fractions))
        computation.raw_steps.append(
            f"std = √(Σ(fraction {M} {mean:.3f})² / {len(fractions)}) = {std:.3f}"
        )
    else:
        std = 0.0
    computation.raw_steps.append(
        f"raw = (1 {M} std) {X} 100 = (1 {M} {std:.3f}) {X} 100 = {computation.raw} (truncated)"
    )
    computation.notes.append("Requests count as the pods ask, without the scoring defaults.")
