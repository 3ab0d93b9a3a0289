"""The in-tree plugins' arguments.

Mirrors pkg/scheduler/apis/config/types_pluginargs.go. Values here are already defaulted; the v1
decoding and defaulting live in ``schedviz.scheduler.apis.config.v1``.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from schedviz.kube.objects import NodeAffinity, TopologySpreadConstraint

# ScoringStrategyType values.
LEAST_ALLOCATED = "LeastAllocated"
MOST_ALLOCATED = "MostAllocated"
REQUESTED_TO_CAPACITY_RATIO = "RequestedToCapacityRatio"

# PodTopologySpreadConstraintsDefaulting values.
SYSTEM_DEFAULTING = "System"
LIST_DEFAULTING = "List"


@dataclass(slots=True)
class ResourceSpec:
    name: str
    weight: int = 1


@dataclass(slots=True)
class UtilizationShapePoint:
    utilization: int
    score: int


@dataclass(slots=True)
class RequestedToCapacityRatioParam:
    shape: list[UtilizationShapePoint] = field(default_factory=list)


@dataclass(slots=True)
class ScoringStrategy:
    type: str = LEAST_ALLOCATED
    resources: list[ResourceSpec] = field(
        default_factory=lambda: [ResourceSpec("cpu", 1), ResourceSpec("memory", 1)]
    )
    requested_to_capacity_ratio: RequestedToCapacityRatioParam | None = None


@dataclass(slots=True)
class NodeResourcesFitArgs:
    ignored_resources: list[str] = field(default_factory=list)
    ignored_resource_groups: list[str] = field(default_factory=list)
    scoring_strategy: ScoringStrategy = field(default_factory=ScoringStrategy)


@dataclass(slots=True)
class NodeResourcesBalancedAllocationArgs:
    resources: list[ResourceSpec] = field(
        default_factory=lambda: [ResourceSpec("cpu", 1), ResourceSpec("memory", 1)]
    )


@dataclass(slots=True)
class InterPodAffinityArgs:
    hard_pod_affinity_weight: int = 1
    ignore_preferred_terms_of_existing_pods: bool = False


@dataclass(slots=True)
class NodeAffinityArgs:
    added_affinity: NodeAffinity | None = None


@dataclass(slots=True)
class PodTopologySpreadArgs:
    default_constraints: list[TopologySpreadConstraint] = field(default_factory=list)
    defaulting_type: str = SYSTEM_DEFAULTING


@dataclass(slots=True)
class DefaultPreemptionArgs:
    min_candidate_nodes_percentage: int = 10
    min_candidate_nodes_absolute: int = 100


@dataclass(slots=True)
class VolumeBindingArgs:
    bind_timeout_seconds: int = 600
    shape: list[UtilizationShapePoint] = field(default_factory=list)


PluginArgs = (
    NodeResourcesFitArgs
    | NodeResourcesBalancedAllocationArgs
    | InterPodAffinityArgs
    | NodeAffinityArgs
    | PodTopologySpreadArgs
    | DefaultPreemptionArgs
    | VolumeBindingArgs
)
