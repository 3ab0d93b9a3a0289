"""The side-by-side comparison of variants' results (pure: no Django, no I/O).

No upstream file. Each variant's result is what ``engine.run_variant`` returns; ``compare``
puts two or more side by side:

- placements: every pod the workload scheduled and the node it got in each variant, and the
  pods that land differently (on another node, or placed in one variant and not another);
- utilisation per resource (cpu, memory, pods): each node's requested / allocatable, and the
  balance across nodes: the mean, the population standard deviation and max - min of that
  fraction (nodes that allocate none of a resource are left out of it);
- per-plugin scores: for each pod, each score plugin's weighted score on the node the variant
  chose (a plugin a variant does not run counts as absent, not as 0); per plugin and variant
  the mean over the pods it scored; and the plugins that drive the differences: over the pods
  that land differently, how far apart the variants' mean weighted scores of the plugin are
  (a plugin a variant does not run contributes 0 there, as it does to that variant's totals);
- unschedulable counts: pods left without a node at the end, and pods preempted.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

RESOURCES = ("cpu", "memory", "pods")


@dataclass(frozen=True)
class PodOutcome:
    node: str | None
    result: str
    attempts: int
    message: str
    scores: Mapping[str, int]
    total: int | None


@dataclass(frozen=True)
class NodeUsage:
    allocatable: Mapping[str, int]
    requested: Mapping[str, int]

    def utilisation(self, resource: str) -> float | None:
        """requested / allocatable; None when the node allocates none of the resource."""
        allocatable = self.allocatable.get(resource, 0)
        if allocatable <= 0:
            return None
        return self.requested.get(resource, 0) / allocatable


@dataclass(frozen=True)
class VariantResult:
    name: str
    pods: Mapping[str, PodOutcome]
    nodes: Mapping[str, NodeUsage]
    preempted: tuple[str, ...] = ()
    cycles: int = 0

    @classmethod
    def from_json(cls, name: str, data: Mapping[str, Any]) -> VariantResult:
        pods = {
            key: PodOutcome(
                node=pod.get("node"),
                result=str(pod.get("result", "")),
                attempts=int(pod.get("attempts", 0)),
                message=str(pod.get("message", "")),
                scores={str(k): int(v) for k, v in (pod.get("scores") or {}).items()},
                total=pod.get("total"),
            )
            for key, pod in (data.get("pods") or {}).items()
        }
        nodes = {
            node: NodeUsage(
                allocatable=dict(usage.get("allocatable") or {}),
                requested=dict(usage.get("requested") or {}),
            )
            for node, usage in (data.get("nodes") or {}).items()
        }
        return cls(
            name=name,
            pods=pods,
            nodes=nodes,
            preempted=tuple(data.get("preempted") or ()),
            cycles=int(data.get("cycles", 0)),
        )

    @property
    def unschedulable(self) -> int:
        """Pods left without a node at the end (preempted ones are counted apart)."""
        gone = set(self.preempted)
        return sum(1 for key, pod in self.pods.items() if pod.node is None and key not in gone)

    @property
    def scheduled(self) -> int:
        return sum(1 for pod in self.pods.values() if pod.node is not None)


# ---------------------------------------------------------------------------------------------
# Placements


@dataclass(frozen=True)
class Placement:
    pod: str
    nodes: tuple[str | None, ...]

    @property
    def differs(self) -> bool:
        return len(set(self.nodes)) > 1


def placements(variants: Sequence[VariantResult]) -> list[Placement]:
    """Every pod any variant was asked to schedule, by key, with its node in each variant."""
    keys = sorted({key for variant in variants for key in variant.pods})
    return [
        Placement(
            pod=key,
            nodes=tuple(
                variant.pods[key].node if key in variant.pods else None for variant in variants
            ),
        )
        for key in keys
    ]


def differing(variants: Sequence[VariantResult]) -> list[Placement]:
    return [placement for placement in placements(variants) if placement.differs]


# ---------------------------------------------------------------------------------------------
# Utilisation and balance


@dataclass(frozen=True)
class Balance:
    mean: float
    stdev: float
    spread: float  # max - min

    def to_json(self) -> dict[str, float]:
        return {"mean": self.mean, "stdev": self.stdev, "maxMinusMin": self.spread}


def balance_of(fractions: Sequence[float]) -> Balance | None:
    """Mean, population standard deviation and max - min; None for no value at all."""
    if not fractions:
        return None
    mean = sum(fractions) / len(fractions)
    variance = sum((value - mean) ** 2 for value in fractions) / len(fractions)
    return Balance(mean=mean, stdev=math.sqrt(variance), spread=max(fractions) - min(fractions))


def utilisation(variant: VariantResult, resource: str) -> dict[str, float]:
    """Node -> requested / allocatable of the resource, for the nodes that allocate it."""
    fractions: dict[str, float] = {}
    for name, usage in variant.nodes.items():
        value = usage.utilisation(resource)
        if value is not None:
            fractions[name] = value
    return fractions


def balance(variant: VariantResult, resource: str) -> Balance | None:
    return balance_of(list(utilisation(variant, resource).values()))


@dataclass(frozen=True)
class NodeUtilisation:
    node: str
    # [variant][resource], None where the node allocates none of it (or is missing).
    fractions: tuple[tuple[float | None, ...], ...]


def node_utilisation(variants: Sequence[VariantResult]) -> list[NodeUtilisation]:
    names = sorted({name for variant in variants for name in variant.nodes})
    tables = [{r: utilisation(v, r) for r in RESOURCES} for v in variants]
    return [
        NodeUtilisation(
            node=name,
            fractions=tuple(
                tuple(table[resource].get(name) for resource in RESOURCES) for table in tables
            ),
        )
        for name in names
    ]


# ---------------------------------------------------------------------------------------------
# Per-plugin scores


@dataclass(frozen=True)
class PodScores:
    pod: str
    plugin: str
    # Per variant, the plugin's weighted score on the chosen node; None: not scored there.
    scores: tuple[int | None, ...]


def plugin_names(variants: Sequence[VariantResult]) -> list[str]:
    return sorted({p for v in variants for pod in v.pods.values() for p in pod.scores})


def pod_scores(variants: Sequence[VariantResult]) -> list[PodScores]:
    """For each pod and score plugin, the weighted score on the chosen node per variant."""
    rows: list[PodScores] = []
    plugins = plugin_names(variants)
    for placement in placements(variants):
        outcomes = [variant.pods.get(placement.pod) for variant in variants]
        for plugin in plugins:
            scores = tuple(
                outcome.scores.get(plugin) if outcome is not None else None for outcome in outcomes
            )
            if any(score is not None for score in scores):
                rows.append(PodScores(pod=placement.pod, plugin=plugin, scores=scores))
    return rows


def _mean(values: Sequence[float]) -> float | None:
    return sum(values) / len(values) if values else None


@dataclass(frozen=True)
class PluginSummary:
    plugin: str
    # Per variant, the mean weighted score on the chosen node over the pods it scored (None:
    # the plugin scored no pod there).
    means: tuple[float | None, ...]
    # Per variant, the same over the pods that land differently, absent plugins counting 0.
    differing_means: tuple[float, ...]

    @property
    def drive(self) -> float:
        """How far apart the variants are on this plugin, over the pods that land differently."""
        if not self.differing_means:
            return 0.0
        return max(self.differing_means) - min(self.differing_means)


def plugin_summaries(variants: Sequence[VariantResult]) -> list[PluginSummary]:
    """Per score plugin, by how much it drives the differences (most first), then by name."""
    moved = [placement.pod for placement in differing(variants)]
    summaries: list[PluginSummary] = []
    for plugin in plugin_names(variants):
        means: list[float | None] = []
        differing_means: list[float] = []
        for variant in variants:
            scored = [p.scores[plugin] for p in variant.pods.values() if plugin in p.scores]
            means.append(_mean(scored))
            on_moved = [
                variant.pods[key].scores.get(plugin, 0)
                for key in moved
                if key in variant.pods and variant.pods[key].node is not None
            ]
            differing_means.append(_mean(on_moved) or 0.0)
        summaries.append(
            PluginSummary(
                plugin=plugin,
                means=tuple(means),
                differing_means=tuple(differing_means) if moved else (),
            )
        )
    summaries.sort(key=lambda summary: (-summary.drive, summary.plugin))
    return summaries


def drivers(variants: Sequence[VariantResult]) -> list[str]:
    """The plugins on which the variants differ over the pods that land differently, most
    first."""
    return [s.plugin for s in plugin_summaries(variants) if s.drive > 0]


# ---------------------------------------------------------------------------------------------
# The whole comparison


@dataclass(frozen=True)
class VariantSummary:
    name: str
    scheduled: int
    unschedulable: int
    preempted: int
    cycles: int
    balance: Mapping[str, Balance | None]


@dataclass(frozen=True)
class Comparison:
    variants: tuple[VariantSummary, ...]
    placements: tuple[Placement, ...]
    nodes: tuple[NodeUtilisation, ...]
    plugins: tuple[PluginSummary, ...]
    pod_scores: tuple[PodScores, ...]
    resources: tuple[str, ...] = field(default=RESOURCES)

    @property
    def differing(self) -> list[Placement]:
        return [placement for placement in self.placements if placement.differs]

    @property
    def drivers(self) -> list[str]:
        return [summary.plugin for summary in self.plugins if summary.drive > 0]

    def to_json(self) -> dict[str, Any]:
        names = [variant.name for variant in self.variants]

        def per_variant(values: Sequence[Any]) -> dict[str, Any]:
            return dict(zip(names, values, strict=True))

        return {
            "variants": [
                {
                    "name": v.name,
                    "scheduled": v.scheduled,
                    "unschedulable": v.unschedulable,
                    "preempted": v.preempted,
                    "cycles": v.cycles,
                    "balance": {
                        resource: b.to_json() if b is not None else None
                        for resource, b in v.balance.items()
                    },
                }
                for v in self.variants
            ],
            "placements": {p.pod: per_variant(p.nodes) for p in self.placements},
            "differing": [p.pod for p in self.differing],
            "utilisation": {
                n.node: per_variant(
                    [dict(zip(self.resources, row, strict=True)) for row in n.fractions]
                )
                for n in self.nodes
            },
            "plugins": [
                {
                    "plugin": s.plugin,
                    "means": per_variant(s.means),
                    "differingMeans": per_variant(s.differing_means) if s.differing_means else {},
                    "drive": s.drive,
                }
                for s in self.plugins
            ],
            "drivers": self.drivers,
            "podScores": [
                {"pod": row.pod, "plugin": row.plugin, "scores": per_variant(row.scores)}
                for row in self.pod_scores
            ],
        }


def compare(variants: Sequence[VariantResult]) -> Comparison:
    summaries = tuple(
        VariantSummary(
            name=v.name,
            scheduled=v.scheduled,
            unschedulable=v.unschedulable,
            preempted=len(v.preempted),
            cycles=v.cycles,
            balance={resource: balance(v, resource) for resource in RESOURCES},
        )
        for v in variants
    )
    return Comparison(
        variants=summaries,
        placements=tuple(placements(variants)),
        nodes=tuple(node_utilisation(variants)),
        plugins=tuple(plugin_summaries(variants)),
        pod_scores=tuple(pod_scores(variants)),
    )
