"""What the trace page says about a cycle: one sentence on who won and why (or why nothing
fit), and, for every score cell, how that score was computed.

The sentence is read from the trace alone (docs/trace-format.md). A score cell's computation has
two parts. Normalizing and weighting are read from the trace too: every scored node's raw score
is there, so upstream's NormalizeScore can be shown with its numbers (helper.DefaultNormalizeScore
for TaintToleration and NodeAffinity, PodTopologySpread's and InterPodAffinity's own). The raw
score's inputs are recomputed for the one node asked about, from the cluster as stored, with the
engine's own functions (NodeResourcesFit's and BalancedAllocation's scorers, the taint and
node-affinity matchers, ImageLocality's priority, PodTopologySpread's and InterPodAffinity's
PreScore and Score), and shown only when the recomputation gives the trace's raw score: a node
whose pods have changed since the cycle says so instead of showing numbers that were not the
ones used. Nothing is recorded for this while scheduling, so a cycle costs no more.
PodTopologySpread and InterPodAffinity count pods per topology domain over the whole cluster, so
their cells read every node and bound pod.
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from schedviz.cluster import selectors
from schedviz.cluster.models import KIND_MODELS, Cluster, Cycle
from schedviz.cluster.models import Node as NodeRow
from schedviz.cluster.models import Pod as PodRow
from schedviz.kube.decode import decode_object
from schedviz.kube.labels import Selector
from schedviz.kube.nodeaffinity import PreferredSchedulingTerms
from schedviz.kube.objects import LABEL_HOSTNAME, Namespace, Node, Pod
from schedviz.kube.taints import tolerations_tolerate_taint
from schedviz.scheduler.apis.config.types import KubeSchedulerConfiguration
from schedviz.scheduler.apis.config.types_pluginargs import (
    LEAST_ALLOCATED,
    MOST_ALLOCATED,
    SYSTEM_DEFAULTING,
    InterPodAffinityArgs,
    NodeResourcesBalancedAllocationArgs,
    NodeResourcesFitArgs,
    PodTopologySpreadArgs,
    ResourceSpec,
)
from schedviz.scheduler.framework.interface import MAX_NODE_SCORE
from schedviz.scheduler.framework.plugins import names
from schedviz.scheduler.framework.plugins.imagelocality import (
    MAX_CONTAINER_THRESHOLD,
    MB,
    MIN_THRESHOLD,
    calculate_priority,
    normalized_image_name,
)
from schedviz.scheduler.framework.plugins.interpodaffinity.filtering import NO_NAMESPACE_LABELS
from schedviz.scheduler.framework.plugins.interpodaffinity.plugin import (
    merge_affinity_term_namespaces_if_not_empty,
    namespace_labels_snapshot,
)
from schedviz.scheduler.framework.plugins.interpodaffinity.scoring import (
    PreScoreState as IpaPreScoreState,
)
from schedviz.scheduler.framework.plugins.interpodaffinity.scoring import (
    compute_topology_score,
    has_preferred_constraints,
)
from schedviz.scheduler.framework.plugins.interpodaffinity.scoring import (
    score_node as ipa_score_node,
)
from schedviz.scheduler.framework.plugins.noderesources.balanced_allocation import (
    balanced_resource_scorer,
)
from schedviz.scheduler.framework.plugins.noderesources.least_allocated import (
    least_resource_scorer,
)
from schedviz.scheduler.framework.plugins.noderesources.most_allocated import (
    most_resource_scorer,
)
from schedviz.scheduler.framework.plugins.noderesources.requested_to_capacity_ratio import (
    requested_to_capacity_ratio_scorer,
)
from schedviz.scheduler.framework.plugins.noderesources.resource_allocation import (
    ResourceAllocationScorer,
    Scorer,
)
from schedviz.scheduler.framework.plugins.podtopologyspread.common import (
    SCHEDULE_ANYWAY,
    build_default_constraints,
    count_pods_match_selector,
    filter_topology_spread_constraints,
)
from schedviz.scheduler.framework.plugins.podtopologyspread.plugin import (
    SYSTEM_DEFAULT_CONSTRAINTS,
)
from schedviz.scheduler.framework.plugins.podtopologyspread.scoring import (
    count_existing_pods,
    init_pre_score_state,
    score_for_count,
    score_node,
)
from schedviz.scheduler.framework.types import AffinityTerm, NodeInfo, PodInfo

# Plugins scored 0-100 directly, without NormalizeScore.
UNNORMALIZED = frozenset(
    {
        names.NODE_RESOURCES_FIT,
        names.NODE_RESOURCES_BALANCED_ALLOCATION,
        names.IMAGE_LOCALITY,
        names.VOLUME_BINDING,
    }
)
# The signs of the formulas, as people write them.
X = "\u00d7"
M = "\u2212"
# How many plugins the sentence names as having decided the winner.
DECISIVE_SHOWN = 3
TAINT_EFFECT_PREFER_NO_SCHEDULE = "PreferNoSchedule"
# How many matching pods an InterPodAffinity step names.
IPA_PODS_SHOWN = 3


# ---------------------------------------------------------------- the sentence on top


@dataclass(frozen=True, slots=True)
class Decisive:
    plugin: str
    difference: int


@dataclass(frozen=True, slots=True)
class Decision:
    """The cycle in one sentence, with the plugins that decided it (to highlight them)."""

    sentence: str
    winner: str = ""
    runner_up: str = ""
    margin: int = 0
    decisive: tuple[Decisive, ...] = ()
    tie: tuple[str, ...] = ()

    @property
    def decisive_plugins(self) -> frozenset[str]:
        return frozenset(d.plugin for d in self.decisive)


def _nodes(count: int) -> str:
    return f"{count} node{'' if count == 1 else 's'}"


def _join(items: Sequence[str]) -> str:
    if len(items) <= 1:
        return "".join(items)
    return ", ".join(items[:-1]) + " and " + items[-1]


def _rejections(trace: Mapping[str, Any]) -> Counter[tuple[str, str]]:
    """(plugin, reason) -> how many nodes it rejected for that reason (asked-afterwards
    entries left out: they decided nothing)."""
    counted: Counter[tuple[str, str]] = Counter()
    for entries in (trace.get("filter") or {}).values():
        for entry in entries:
            if entry.get("code") == "Success" or entry.get("hypothetical"):
                continue
            plugin = entry.get("plugin") or entry.get("stage") or "PreFilter"
            for reason in entry.get("reasons") or [entry.get("code", "")]:
                counted[(plugin, reason)] += 1
    return counted


def decision(trace: Mapping[str, Any]) -> Decision:
    """Who won, by how much and which plugins decided it; or why no node fit."""
    result = trace.get("result")
    total_nodes = int(trace.get("totalNodes") or 0)
    if result == "Scheduled" or (result == "Waiting" and trace.get("node")):
        return _scheduled(trace, total_nodes)
    if result == "Unschedulable":
        return Decision(_unschedulable(trace, total_nodes))
    if result == "Error":
        return Decision(f"The cycle failed with an error: {trace.get('message') or 'no message'}.")
    return Decision(f"The cycle ended {result or 'without a result'}.")


def _scheduled(trace: Mapping[str, Any], total_nodes: int) -> Decision:
    winner = str(trace.get("node") or "")
    totals: dict[str, int] = dict(trace.get("totals") or {})
    tie = tuple((trace.get("selected") or {}).get("tieSet") or ())
    nominated = trace.get("nominatedNodeTried")
    if nominated and nominated == winner and len(totals) <= 1:
        return Decision(
            f"{winner} was the node an earlier preemption had nominated the pod to; the "
            "scheduler tries that node first, and it fit, so no other node was looked at.",
            winner=winner,
        )
    if len(totals) <= 1:
        feasible = int(trace.get("feasibleNodes") or 1)
        if feasible == 1:
            return Decision(
                f"{winner} was the only one of {_nodes(total_nodes)} that passed every "
                "filter, so nothing was scored.",
                winner=winner,
            )
        return Decision(f"{winner} was chosen without scoring.", winner=winner)
    best = totals.get(winner, 0)
    if len(tie) > 1:
        others = [n for n in tie if n != winner]
        return Decision(
            f"{winner} won with {best}, tied with {_join(others)}: among the {len(tie)} nodes "
            "with the top score the scheduler picks one at random.",
            winner=winner,
            tie=tie,
        )
    runner_up, second = max(
        ((n, t) for n, t in totals.items() if n != winner), key=lambda item: (item[1], item[0])
    )
    scores = trace.get("scores") or {}
    differences = [
        Decisive(plugin, int(cell["weighted"]) - int(scores[runner_up][plugin]["weighted"]))
        for plugin, cell in (scores.get(winner) or {}).items()
        if plugin in (scores.get(runner_up) or {})
    ]
    decisive = tuple(
        sorted((d for d in differences if d.difference > 0), key=lambda d: -d.difference)[
            :DECISIVE_SHOWN
        ]
    )
    against = sorted((d for d in differences if d.difference < 0), key=lambda d: d.difference)
    sentence = (
        f"{winner} won with {best}, {best - second} ahead of {runner_up} ({second}), "
        f"out of {_nodes(len(totals))} scored"
    )
    if decisive:
        named = [f"{d.plugin} (+{d.difference})" for d in decisive]
        sentence += f"; decided by {_join(named)}"
    if against:
        sentence += f"; {against[0].plugin} favoured {runner_up} ({against[0].difference})"
    return Decision(
        sentence + ".",
        winner=winner,
        runner_up=runner_up,
        margin=best - second,
        decisive=decisive,
    )


def _unschedulable(trace: Mapping[str, Any], total_nodes: int) -> str:
    counted = _rejections(trace)
    parts = [
        f"{count} by {plugin} ({reason})"
        for (plugin, reason), count in sorted(counted.items(), key=lambda item: -item[1])
    ]
    sentence = f"No node fit: of {_nodes(total_nodes)}, "
    sentence += ("rejected " + _join(parts)) if parts else "none passed the filters"
    preemption = trace.get("preemption") or {}
    nominated = trace.get("nominatedNode")
    if nominated:
        victims = preemption.get("victims") or []
        sentence += f". Preemption then nominated {nominated}"
        if victims:
            sentence += f", evicting {_join(list(victims))}"
        sentence += ": the pod is bound in a later cycle."
    else:
        sentence += ". Preemption found no node where evicting pods would help."
    return sentence


# ---------------------------------------------------------------- one score cell


@dataclass(slots=True)
class Computation:
    """How one node's score of one plugin was computed: inputs, raw, normalized, weighted."""

    plugin: str
    node: str
    raw: int
    normalized: int
    weight: int
    weighted: int
    inputs: list[tuple[str, str]] = field(default_factory=list)
    raw_steps: list[str] = field(default_factory=list)
    normalize_steps: list[str] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)

    @property
    def weighted_step(self) -> str:
        return (
            f"weighted = normalized {X} weight = {self.normalized} {X} {self.weight} "
            f"= {self.weighted}"
        )


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
        context = _CellContext(cluster, trace, node)
        explain(context, computation)
    else:
        computation.notes.append(
            f"The trace keeps {plugin}'s raw score; its inputs are not recomputed here."
        )
    return computation


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


@dataclass(slots=True)
class _CellContext:
    cluster: Cluster
    trace: Mapping[str, Any]
    node: str
    _pod: Pod | None = None
    _node: Node | None = None

    @property
    def pod_key(self) -> tuple[str, str]:
        namespace, _, name = str(self.trace.get("pod", "")).partition("/")
        return namespace, name

    def pod(self) -> Pod | None:
        if self._pod is None:
            namespace, name = self.pod_key
            row = PodRow.objects.filter(
                cluster=self.cluster, namespace=namespace, name=name
            ).first()
            if row is not None:
                decoded = decode_object(row.manifest)
                self._pod = decoded if isinstance(decoded, Pod) else None
        return self._pod

    def node_object(self) -> Node | None:
        if self._node is None:
            row = NodeRow.objects.filter(cluster=self.cluster, name=self.node).first()
            if row is not None:
                decoded = decode_object(row.manifest)
                self._node = decoded if isinstance(decoded, Node) else None
        return self._node

    def node_info(self) -> NodeInfo | None:
        """The node with the pods the cluster says ran on it when the cycle ran: those bound to
        it now, less the pod itself and pods bound by a later cycle (a pod deleted since is
        missing: the caller compares with the trace)."""
        node = self.node_object()
        if node is None:
            return None
        later = set(
            Cycle.objects.filter(
                cluster=self.cluster,
                number__gte=int(self.trace.get("cycle") or 0),
                result="Scheduled",
                node=self.node,
            ).values_list("pod_namespace", "pod_name")
        )
        me = self.pod_key
        pods: list[Pod] = []
        rows = PodRow.objects.filter(cluster=self.cluster, node_name=self.node).exclude(
            phase__in=["Succeeded", "Failed"]
        )
        for namespace, name, manifest in rows.values_list("namespace", "name", "manifest"):
            if (namespace, name) == me or (namespace, name) in later:
                continue
            decoded = decode_object(manifest)
            if isinstance(decoded, Pod):
                pods.append(decoded)
        return NodeInfo(node, pods)

    def all_node_infos(
        self, *, namespace: str | None = None, affinity_only: bool = False
    ) -> list[NodeInfo]:
        """Every node with the pods bound to it when the cycle ran (``node_info`` for all);
        only those of ``namespace``, or only pods with an affinity, when the caller reads no
        other (decoding every pod of a large cluster takes seconds)."""
        later = self._later_bound()
        by_name: dict[str, NodeInfo] = {}
        for manifest in (
            NodeRow.objects.filter(cluster=self.cluster)
            .order_by("name")
            .values_list("manifest", flat=True)
        ):
            decoded = decode_object(manifest)
            if isinstance(decoded, Node):
                by_name[decoded.name] = NodeInfo(decoded, [])
        if self._node is not None and self._node.name in by_name:
            # The same object as node_object(), so callers can find it by identity.
            by_name[self._node.name] = NodeInfo(self._node, [])
        rows = (
            PodRow.objects.filter(cluster=self.cluster)
            .exclude(node_name="")
            .exclude(phase__in=["Succeeded", "Failed"])
        )
        if namespace is not None:
            rows = rows.filter(namespace=namespace)
        if affinity_only:
            rows = rows.filter(manifest__spec__has_key="affinity")
        me = self.pod_key
        for pod_namespace, name, node_name, manifest in rows.values_list(
            "namespace", "name", "node_name", "manifest"
        ):
            info = by_name.get(node_name)
            key = (pod_namespace, name)
            if info is None or key == me or (node_name, *key) in later:
                continue
            decoded = decode_object(manifest)
            if isinstance(decoded, Pod):
                info.add_pod(decoded)
        return list(by_name.values())

    def _later_bound(self) -> set[tuple[str, str, str]]:
        """(node, namespace, name) of the pods bound by this cycle or a later one."""
        return set(
            Cycle.objects.filter(
                cluster=self.cluster,
                number__gte=int(self.trace.get("cycle") or 0),
                result="Scheduled",
            ).values_list("node", "pod_namespace", "pod_name")
        )

    def image_holders(self, names: set[str]) -> dict[str, int]:
        """How many of the cluster's nodes list each image (read from every node: only asked
        when the node holds one of the pod's images)."""
        counts: dict[str, int] = dict.fromkeys(names, 0)
        for manifest in NodeRow.objects.filter(cluster=self.cluster).values_list(
            "manifest", flat=True
        ):
            held: set[str] = set()
            for image in (manifest.get("status") or {}).get("images") or []:
                held.update(n for n in image.get("names") or [] if n in names)
            for name in held:
                counts[name] += 1
        return counts

    def profile_args(self, plugin: str) -> Any:
        config: KubeSchedulerConfiguration = selectors.scheduler_configuration(cluster=self.cluster)
        profile_name = self.trace.get("profile")
        for profile in config.profiles:
            if profile.scheduler_name == profile_name:
                for entry in profile.plugin_config:
                    if entry.name == plugin:
                        return entry.args
        return None


def _quantity(resource: str, amount: int) -> str:
    if resource == "cpu":
        return f"{amount // 1000}" if amount % 1000 == 0 else f"{amount}m"
    if resource in ("memory", "ephemeral-storage"):
        for unit, size in (("Gi", 1 << 30), ("Mi", 1 << 20), ("Ki", 1 << 10)):
            if amount and amount % size == 0:
                return f"{amount // size}{unit}"
        return str(amount)
    return str(amount)


def _mismatch(computation: Computation, recomputed: int) -> None:
    computation.inputs.clear()
    computation.raw_steps.clear()
    computation.notes.append(
        f"Recomputed from the cluster as it is now, the raw score would be {recomputed}, not "
        f"the {computation.raw} the cycle gave: the node or its pods have changed since, so the "
        "inputs of that moment are not known."
    )


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
                    f"requested {_quantity(spec.name, wanted)} (this pod "
                    f"{_quantity(spec.name, pod_request)}) of allocatable "
                    f"{_quantity(spec.name, capacity)}, weight {spec.weight}",
                )
            )
    return requested, allocatable, used


def _explain_fit(context: _CellContext, computation: Computation) -> None:
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
        _mismatch(computation, recomputed)
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
        a, r = _quantity(spec.name, capacity), _quantity(spec.name, wanted)
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


def _explain_balanced(context: _CellContext, computation: Computation) -> None:
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
        _mismatch(computation, recomputed)
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


def _explain_taints(context: _CellContext, computation: Computation) -> None:
    pod, node = context.pod(), context.node_object()
    if pod is None or node is None:
        computation.notes.append("The pod or the node is no longer in the cluster.")
        return
    tolerations = [
        t for t in pod.tolerations if not t.effect or t.effect == TAINT_EFFECT_PREFER_NO_SCHEDULE
    ]
    prefer = [t for t in node.taints if t.effect == TAINT_EFFECT_PREFER_NO_SCHEDULE]
    intolerable = [t for t in prefer if not tolerations_tolerate_taint(tolerations, t)]
    if len(intolerable) != computation.raw:
        _mismatch(computation, len(intolerable))
        return
    shown = ", ".join(
        f"{t.key}={t.value}:{t.effect}" if t.value else f"{t.key}:{t.effect}" for t in intolerable
    )
    computation.inputs.append(("PreferNoSchedule taints on the node", str(len(prefer))))
    computation.inputs.append(("not tolerated by the pod", shown or "none"))
    computation.raw_steps.append(
        f"raw = the number of PreferNoSchedule taints the pod does not tolerate = {computation.raw}"
    )


def _explain_node_affinity(context: _CellContext, computation: Computation) -> None:
    pod, node = context.pod(), context.node_object()
    if pod is None or node is None:
        computation.notes.append("The pod or the node is no longer in the cluster.")
        return
    affinity = pod.affinity.node_affinity if pod.affinity else None
    terms = list(affinity.preferred) if affinity and affinity.preferred else []
    matched = [
        (index, term.weight)
        for index, term in enumerate(terms)
        if PreferredSchedulingTerms([term]).score(node) > 0
    ]
    recomputed = sum(weight for _, weight in matched)
    if recomputed != computation.raw:
        # The profile's addedAffinity counts too; or the labels have changed since.
        _mismatch(computation, recomputed)
        return
    computation.inputs.append(("preferred terms of the pod", str(len(terms))))
    computation.inputs.append(
        (
            "matched by the node's labels",
            ", ".join(f"term {i + 1} (weight {w})" for i, w in matched) or "none",
        )
    )
    weights = " + ".join(str(w) for _, w in matched) or "0"
    computation.raw_steps.append(
        f"raw = the sum of the matched terms' weights = {weights} = {computation.raw}"
    )


def _explain_image_locality(context: _CellContext, computation: Computation) -> None:
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
        _mismatch(computation, recomputed)
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


class _StoredObjects:
    """The objects besides pods and nodes that the plugins read, from the cluster's rows
    (``KIND_MODELS``): Namespaces for affinity terms, Services and controllers for the default
    spreading selector; a kind not stored lists nothing."""

    def __init__(self, cluster: Cluster) -> None:
        self._cluster = cluster
        self._listed: dict[str, list[object]] = {}

    def namespace_labels(self, namespace: str) -> dict[str, str] | None:
        for obj in self.list_objects("Namespace"):
            if isinstance(obj, Namespace) and obj.name == namespace:
                return obj.labels
        return None

    def list_objects(self, kind: str) -> Sequence[object]:
        model = KIND_MODELS.get(kind)
        if model is None or kind in ("Pod", "Node"):
            return []
        if kind not in self._listed:
            manifests = model._default_manager.filter(cluster=self._cluster).values_list(
                "manifest", flat=True
            )
            self._listed[kind] = [decode_object(m) for m in manifests]
        return self._listed[kind]

    def get(self, kind: str, key: str) -> object | None:
        for obj in self.list_objects(kind):
            if getattr(obj, "key", None) == key:
                return obj
        return None

    def apply(self, obj: object) -> None:
        raise NotImplementedError("the score explanation only reads")


def _selector_text(selector: Selector) -> str:
    """A label selector as kubectl writes one: app=web,tier in (a,b)."""
    if selector.nothing:
        return "selects nothing"
    parts: list[str] = []
    for key, operator, values in selector.requirements:
        listed = ",".join(sorted(values))
        if operator == "In" and len(values) == 1:
            parts.append(f"{key}={listed}")
        elif operator == "In":
            parts.append(f"{key} in ({listed})")
        elif operator == "NotIn":
            parts.append(f"{key} notin ({listed})")
        elif operator == "Exists":
            parts.append(key)
        else:
            parts.append(f"!{key}")
    return "selector " + (",".join(parts) or "everything")


def _explain_topology_spread(context: _CellContext, computation: Computation) -> None:
    """PreScore's counts and Score's sum (podtopologyspread/scoring.go) for this node, with the
    engine's functions over every node of the cluster as it was at the cycle."""
    pod, node = context.pod(), context.node_object()
    if pod is None or node is None:
        computation.notes.append("The pod or the node is no longer in the cluster.")
        return
    args = context.profile_args(names.POD_TOPOLOGY_SPREAD) or PodTopologySpreadArgs()
    system_defaulted = args.defaulting_type == SYSTEM_DEFAULTING
    if pod.topology_spread_constraints:
        constraints = filter_topology_spread_constraints(
            pod.topology_spread_constraints, pod.labels, SCHEDULE_ANYWAY
        )
        origin = "the pod's ScheduleAnyway constraints"
    else:
        defaults = (
            SYSTEM_DEFAULT_CONSTRAINTS if system_defaulted else tuple(args.default_constraints)
        )
        constraints = build_default_constraints(
            pod, defaults, _StoredObjects(context.cluster), SCHEDULE_ANYWAY
        )
        origin = (
            "the System default constraints"
            if system_defaulted
            else "the profile's default constraints"
        )
    require_all_topologies = bool(pod.topology_spread_constraints) or not system_defaulted
    # Only pods of the pod's namespace count (count_pods_match_selector).
    all_nodes = context.all_node_infos(namespace=pod.namespace)
    scored = set((context.trace.get("scores") or {}).keys())
    filtered = [info for info in all_nodes if info.node is not None and info.node.name in scored]
    state = init_pre_score_state(constraints, filtered, require_all_topologies)
    count_existing_pods(state, pod, all_nodes, require_all_topologies)
    this = next((info for info in all_nodes if info.node is node), None)
    if this is None or not state.constraints:
        computation.notes.append("The pod has no soft spreading constraints now.")
        return
    recomputed = score_node(state, pod, this)
    if recomputed != computation.raw:
        _mismatch(computation, recomputed)
        return
    computation.inputs.append(("constraints", f"{len(state.constraints)}, {origin}"))
    if node.name in state.ignored_nodes:
        computation.raw_steps.append(
            "the node lacks one of the constraints' topology keys: it is not scored (raw = 0)"
        )
        return
    terms: list[str] = []
    total = 0.0
    for index, constraint in enumerate(state.constraints):
        key = constraint.topology_key
        value = node.labels.get(key)
        weight = state.topology_normalizing_weight[index]
        if key == LABEL_HOSTNAME:
            domains = len(filtered) - len(state.ignored_nodes)
        else:
            domains = len(state.topology_value_to_pod_counts[index])
        label = f"{key}, maxSkew {constraint.max_skew}"
        if value is None:
            computation.inputs.append((label, "the node has no such label: adds nothing"))
            continue
        if key == LABEL_HOSTNAME:
            count = count_pods_match_selector(this.pods, constraint.selector, pod.namespace)
        else:
            count = state.topology_value_to_pod_counts[index].get(value, 0)
        added = score_for_count(count, constraint.max_skew, weight)
        total += added
        computation.inputs.append(
            (
                label,
                f"domain {value}: {count} matching pod{'' if count == 1 else 's'} "
                f"({_selector_text(constraint.selector)}); {domains} "
                f"domain{'' if domains == 1 else 's'} among the scored nodes",
            )
        )
        computation.raw_steps.append(
            f"{key}: count {X} log(domains + 2) + (maxSkew {M} 1) = {count} {X} "
            f"log({domains} + 2) + ({constraint.max_skew} {M} 1) = {count} {X} {weight:.4f} + "
            f"{constraint.max_skew - 1} = {added:.4f}"
        )
        terms.append(f"{added:.4f}")
    summed = " + ".join(terms) or "0"
    if len(terms) > 1:
        summed += f") = round({total:.4f}"
    computation.raw_steps.append(f"raw = round({summed}) = {computation.raw}")
    computation.notes.append(
        "Domains are those of the nodes that passed the filters; matching pods are counted on "
        "every node that carries the keys (and passes the node inclusion policies); a hostname "
        "key counts the node's own pods."
    )


def _explain_inter_pod_affinity(context: _CellContext, computation: Computation) -> None:
    """PreScore's summed weights per topology domain and Score's sum
    (interpodaffinity/scoring.go) for this node, with the engine's functions, and the terms
    behind them: the incoming pod's preferred terms matching existing pods, and the existing
    pods' terms (preferred, and required ones at hardPodAffinityWeight) matching it."""
    pod, node = context.pod(), context.node_object()
    if pod is None or node is None:
        computation.notes.append("The pod or the node is no longer in the cluster.")
        return
    args = context.profile_args(names.INTER_POD_AFFINITY) or InterPodAffinityArgs()
    hard_weight = args.hard_pod_affinity_weight
    has_constraints = has_preferred_constraints(pod)
    objects = _StoredObjects(context.cluster)
    pod_info = PodInfo(pod)
    for weighted in (*pod_info.preferred_affinity_terms, *pod_info.preferred_anti_affinity_terms):
        merge_affinity_term_namespaces_if_not_empty(weighted.term, objects)
    state = IpaPreScoreState({}, pod_info, namespace_labels_snapshot(pod.namespace, objects))
    # Without preferred terms of its own, only existing pods with affinity count.
    all_nodes = context.all_node_infos(affinity_only=not has_constraints)
    state.topology_score = (
        compute_topology_score(state, all_nodes, has_constraints, hard_weight) or {}
    )
    this = next((info for info in all_nodes if info.node is node), None)
    if this is None:
        computation.notes.append("The node is no longer in the cluster.")
        return
    recomputed = ipa_score_node(state, this)
    if recomputed != computation.raw:
        _mismatch(computation, recomputed)
        return
    computation.inputs.append(
        (
            "the pod's preferred terms",
            f"{len(pod_info.preferred_affinity_terms)} affinity, "
            f"{len(pod_info.preferred_anti_affinity_terms)} anti-affinity",
        )
    )
    computation.inputs.append(("hardPodAffinityWeight", str(hard_weight)))
    # (what, signed weight, topology key, the node's value) -> the matching pods' names.
    matched: dict[tuple[str, int, str, str], list[str]] = {}

    def count(
        what: str, term: AffinityTerm, weight: int, target: Pod, labels: Any, other: Node, name: str
    ) -> None:
        value = other.labels.get(term.topology_key)
        if value is None or node.labels.get(term.topology_key) != value:
            return
        if term.matches(target, labels):
            matched.setdefault((what, weight, term.topology_key, value), []).append(name)

    pod_terms = [
        ("the pod's preferred affinity term", pod_info.preferred_affinity_terms, 1),
        ("the pod's preferred anti-affinity term", pod_info.preferred_anti_affinity_terms, -1),
    ]
    for info in all_nodes:
        other = info.node
        if other is None or not other.labels:
            continue
        for existing in info.pods if has_constraints else info.pods_with_affinity:
            existing_name = f"{existing.pod.namespace}/{existing.pod.name}"
            for what, terms, sign in pod_terms:
                for index, weighted in enumerate(terms):
                    count(
                        f"{what} {index + 1}",
                        weighted.term,
                        sign * weighted.weight,
                        existing.pod,
                        NO_NAMESPACE_LABELS,
                        other,
                        existing_name,
                    )
            # Symmetry: the existing pod's terms that the incoming pod matches.
            symmetric = [
                ("preferred affinity", existing.preferred_affinity_terms, 1),
                ("preferred anti-affinity", existing.preferred_anti_affinity_terms, -1),
            ]
            for what, terms, sign in symmetric:
                for weighted in terms:
                    count(
                        f"existing pods' {what} terms matching the pod",
                        weighted.term,
                        sign * weighted.weight,
                        pod,
                        state.namespace_labels,
                        other,
                        existing_name,
                    )
            if hard_weight > 0:
                for term in existing.required_affinity_terms:
                    count(
                        "existing pods' required affinity terms matching the pod "
                        "(at hardPodAffinityWeight)",
                        term,
                        hard_weight,
                        pod,
                        state.namespace_labels,
                        other,
                        existing_name,
                    )
    parts: list[str] = []
    for (what, weight, key, value), pods in matched.items():
        names_ = list(dict.fromkeys(pods))
        shown = ", ".join(names_[:IPA_PODS_SHOWN]) + (
            f" and {len(names_) - IPA_PODS_SHOWN} more" if len(names_) > IPA_PODS_SHOWN else ""
        )
        computation.raw_steps.append(
            f"{what} (weight {weight}, {key}) in the node's domain {key}={value}: "
            f"{len(pods)} match{'' if len(pods) == 1 else 'es'} ({shown}) "
            f"{X} {weight} = {len(pods) * weight}"
        )
        parts.append(str(len(pods) * weight))
    if len(parts) == 1:
        computation.raw_steps.append(f"raw = {computation.raw}")
    elif parts:
        computation.raw_steps.append(f"raw = {' + '.join(parts)} = {computation.raw}")
    else:
        computation.raw_steps.append("raw = 0: no term matched a pod in the node's domains")
    computation.notes.append(
        "Each match adds its term's weight (subtracts, for anti-affinity) once to the domain "
        "of the node the existing pod runs on, over every node of the cluster, not only those "
        "that passed the filters; a node's raw score is the sum over its domains."
    )


_RAW_EXPLAINERS = {
    names.NODE_RESOURCES_FIT: _explain_fit,
    names.NODE_RESOURCES_BALANCED_ALLOCATION: _explain_balanced,
    names.TAINT_TOLERATION: _explain_taints,
    names.NODE_AFFINITY: _explain_node_affinity,
    names.IMAGE_LOCALITY: _explain_image_locality,
    names.POD_TOPOLOGY_SPREAD: _explain_topology_spread,
    names.INTER_POD_AFFINITY: _explain_inter_pod_affinity,
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


__all__ = [
    "Computation",
    "Decision",
    "Decisive",
    "decision",
    "normalize_steps",
    "round_for_people",
    "score_computation",
]
