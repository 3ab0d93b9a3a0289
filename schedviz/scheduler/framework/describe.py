"""The cycle state in words: what each plugin wrote to the CycleState, one sentence per entry.

No upstream counterpart. Plugins write typed state under keys like ``"PreFilter" + NAME``
(staging/src/k8s.io/kube-scheduler/framework/cycle_state.go) and never say what it means; this
module reads those values from the outside, so plugins stay unaware of being watched. Each state
type that a plugin writes has a describer here; a type without one is rendered generically from
its fields, so nothing is hidden or made up. Amounts are written as Kubernetes quantities
(``500m`` cpu, ``1Gi`` memory).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from schedviz.kube.labels import Selector
from schedviz.kube.objects import Pod
from schedviz.scheduler.diagnosis import format_amount, requirement_text
from schedviz.scheduler.framework.cycle_state import CycleState, PodsToActivate, StateData
from schedviz.scheduler.framework.plugins import (
    dynamicresources,
    nodeaffinity,
    nodeports,
    tainttoleration,
    volumerestrictions,
    volumezone,
)
from schedviz.scheduler.framework.plugins.interpodaffinity import filtering as ipa_filtering
from schedviz.scheduler.framework.plugins.interpodaffinity import scoring as ipa_scoring
from schedviz.scheduler.framework.plugins.noderesources import fit
from schedviz.scheduler.framework.plugins.noderesources.resource_allocation import (
    PodRequestsState,
    ResourceAllocationScorer,
)
from schedviz.scheduler.framework.plugins.podtopologyspread import filtering as pts_filtering
from schedviz.scheduler.framework.plugins.podtopologyspread import scoring as pts_scoring
from schedviz.scheduler.framework.plugins.podtopologyspread.common import SpreadConstraint
from schedviz.scheduler.framework.plugins.volumebinding import volume_binding
from schedviz.scheduler.framework.types import Resource

# Key prefixes plugins use; a key without one is the plugin's name.
_POINT_PREFIXES = ("PreFilter", "PreScore", "Reserve", "Permit", "PreBind")
# Generic renderings are cut to this many characters.
_GENERIC_LIMIT = 400


@dataclass(frozen=True, slots=True)
class StateEntry:
    """One CycleState entry: its key, the point and plugin that wrote it, and the sentence."""

    key: str
    point: str
    plugin: str
    text: str

    def to_json(self) -> dict[str, str]:
        return {"key": self.key, "point": self.point, "plugin": self.plugin, "text": self.text}


@dataclass(frozen=True, slots=True)
class _Context:
    pod: Pod
    plugin: str
    # The profile's plugins by name (their configuration completes some states).
    plugins: Mapping[str, object]


_Describer = Callable[[Any, _Context], str]


def describe_state(
    state: CycleState, pod: Pod, plugins: Mapping[str, object] | None = None
) -> list[StateEntry]:
    """Every entry of the state, in the order plugins wrote them."""
    entries = []
    written = state.keys()  # CycleState is not iterable: keys() lists them in writing order
    for key in written:
        value = state.read(key)
        point, plugin = split_key(key)
        describer = _DESCRIBERS.get(type(value))
        if describer is not None:
            written_at, describe = describer
            point = point or written_at
            body = describe(value, _Context(pod, plugin, plugins or {}))
        else:
            body = ": " + generic_text(value)
        entries.append(StateEntry(key, point, plugin, f"{point or 'State'} {plugin}{body}"))
    return entries


def split_key(key: str) -> tuple[str, str]:
    """``"PreFilterNodePorts"`` -> ``("PreFilter", "NodePorts")``; ``"VolumeBinding"`` -> ``("",
    "VolumeBinding")``."""
    for prefix in _POINT_PREFIXES:
        if key.startswith(prefix) and len(key) > len(prefix):
            return prefix, key[len(prefix) :]
    return "", key


def generic_text(value: StateData) -> str:
    """A state of a type without a describer: its type and fields, as they are."""
    name = type(value).__name__.lstrip("_")
    if dataclasses.is_dataclass(value):
        fields = {f.name: getattr(value, f.name) for f in dataclasses.fields(value)}
    else:
        fields = dict(getattr(value, "__dict__", {}))
    inner = ", ".join(f"{k}={v!r}" for k, v in fields.items())
    text = f"{name}({inner})"
    if len(text) > _GENERIC_LIMIT:
        text = text[: _GENERIC_LIMIT - 3] + "..."
    return text


# ---------------------------------------------------------------------------------------------
# Words for numbers and labels


def _plural(count: int, noun: str, plural: str | None = None) -> str:
    return f"{count} {noun if count == 1 else (plural or noun + 's')}"


def _resources_text(amounts: Iterable[tuple[str, int]]) -> str:
    return " ".join(f"{name}={format_amount(name, amount)}" for name, amount in amounts)


def _selector_text(selector: Selector) -> str:
    if selector.nothing:
        return "nothing"
    if not selector.requirements:
        return "every pod"
    parts = []
    for key, operator, values in selector.requirements:
        listed = ",".join(sorted(values))
        if operator == "In" and len(values) == 1:
            parts.append(f"{key}={listed}")
        elif operator == "Exists":
            parts.append(key)
        elif operator == "DoesNotExist":
            parts.append(f"!{key}")
        else:
            parts.append(f"{key} {operator} ({listed})")
    return ",".join(parts)


def _counts_text(counts: Mapping[str, int]) -> str:
    if not counts:
        return "no domain"
    return ", ".join(f"{domain}: {count}" for domain, count in sorted(counts.items()))


def _pair_counts_text(counts: Mapping[tuple[str, str], int]) -> str:
    return _counts_text({f"{key}={value}": count for (key, value), count in counts.items()})


def _constraint_text(constraint: SpreadConstraint, when: str) -> str:
    text = (
        f"maxSkew {constraint.max_skew} over {constraint.topology_key} ({when}) for pods "
        f"matching {_selector_text(constraint.selector)}"
    )
    if constraint.min_domains != 1:
        text += f", minDomains {constraint.min_domains}"
    return text


# ---------------------------------------------------------------------------------------------
# One describer per state type


def _fit_pre_filter(value: Any, context: _Context) -> str:
    request: Resource = value.pod_request
    amounts = [(name, amount) for name, amount in request.as_dict().items() if amount]
    if not amounts:
        return " computed requests: none (the pod asks for no resources)"
    return f" computed requests {_resources_text(amounts)}"


def _pod_requests(value: PodRequestsState, context: _Context) -> str:
    scorer = getattr(context.plugins.get(context.plugin), "_scorer", None)
    if isinstance(scorer, ResourceAllocationScorer) and len(scorer.resources) == len(
        value.pod_requests
    ):
        names = [spec.name for spec in scorer.resources]
    else:
        names = [f"resource {i + 1}" for i in range(len(value.pod_requests))]
    amounts = zip(names, value.pod_requests, strict=True)
    counted = "a container that requests no cpu or memory counts as cpu=100m memory=200Mi"
    if context.plugin == "NodeResourcesBalancedAllocation":
        counted = "as requested"
    text = _resources_text(amounts) if names else "none"
    return f" computed the requests it scores with: {text} ({counted})"


def _node_affinity_pre_filter(value: Any, context: _Context) -> str:
    pod = context.pod
    parts = []
    if pod.node_selector:
        selector = " ".join(f"{k}={v}" for k, v in sorted(pod.node_selector.items()))
        parts.append(f"required node selector {selector}")
    affinity = pod.affinity.node_affinity if pod.affinity is not None else None
    required = affinity.required if affinity is not None else None
    if required is not None:
        terms = []
        for term in required.node_selector_terms:
            requirements = [requirement_text(r) for r in term.match_expressions]
            requirements += [f"field {requirement_text(r)}" for r in term.match_fields]
            terms.append(" and ".join(requirements) or "(empty term)")
        parts.append("required node affinity " + " or ".join(f"[{t}]" for t in terms))
    plugin = context.plugins.get(context.plugin)
    if getattr(plugin, "_added_node_selector", None) is not None:
        parts.append("the profile's addedAffinity (NodeAffinityArgs)")
    if not parts:
        return ": no required node selector or affinity (every node passes)"
    return ": " + "; ".join(parts)


def _node_affinity_pre_score(value: Any, context: _Context) -> str:
    affinity = context.pod.affinity.node_affinity if context.pod.affinity is not None else None
    preferred = affinity.preferred if affinity is not None else ()
    if value.preferred_node_affinity is None or not preferred:
        return ": no preferred node affinity (every node scores 0)"
    terms = []
    for term in preferred:
        requirements = [requirement_text(r) for r in term.preference.match_expressions]
        requirements += [f"field {requirement_text(r)}" for r in term.preference.match_fields]
        terms.append(f"weight {term.weight} for [{' and '.join(requirements)}]")
    return f": {_plural(len(terms), 'preferred term')}: " + "; ".join(terms)


def _taint_toleration_pre_score(value: Any, context: _Context) -> str:
    tolerations = value.tolerations_prefer_no_schedule
    count = _plural(len(tolerations), "toleration")
    if not tolerations:
        return f": {count} with effect PreferNoSchedule (every PreferNoSchedule taint counts)"
    listed = ", ".join(
        f"{t.key or '(any key)'} {t.operator}{' ' + t.value if t.value else ''}"
        for t in tolerations
    )
    return f": {count} with effect PreferNoSchedule ({listed})"


def _node_ports(value: Any, context: _Context) -> str:
    if not value.ports:
        return ": the pod asks for no host port"
    listed = ", ".join(
        f"{p.host_ip + ':' if p.host_ip else ''}{p.host_port}/{p.protocol}" for p in value.ports
    )
    return f": host ports wanted {listed}"


def _volume_zone(value: Any, context: _Context) -> str:
    if not value.pod_pv_topologies:
        return ": the pod's volumes are bound to no zone or region"
    listed = "; ".join(
        f"volume {t.pv_name} needs {t.key} in ({', '.join(sorted(t.values))})"
        for t in value.pod_pv_topologies
    )
    return f": {listed}"


def _volume_restrictions(value: Any, context: _Context) -> str:
    claims = sorted(value.read_write_once_pod_pvcs)
    if not claims:
        return ": no ReadWriteOncePod claim"
    return (
        f": ReadWriteOncePod claims {', '.join(claims)}, used by "
        f"{_plural(value.conflicting_pvc_ref_count, 'scheduled pod')}"
    )


def _volume_binding(value: Any, context: _Context) -> str:
    claims = value.pod_volume_claims
    if claims is None:
        return ": the pod has no PersistentVolumeClaim"
    parts = [
        f"{_plural(len(claims.bound_claims), 'bound claim')}",
        f"{_plural(len(claims.unbound_claims_delay_binding), 'claim')} to bind on the chosen "
        "node (WaitForFirstConsumer)",
    ]
    if value.pod_volumes_by_node:
        nodes = sorted(value.pod_volumes_by_node)
        parts.append(f"volumes found for {_plural(len(nodes), 'node')}: {', '.join(nodes)}")
    if value.all_bound:
        parts.append("all bound")
    return ": " + "; ".join(parts)


def _dynamic_resources(value: Any, context: _Context) -> str:
    if not value.claims:
        return ": the pod uses no ResourceClaim"
    return f": ResourceClaims {', '.join(value.claims)}"


def _spread_pre_filter(value: pts_filtering.PreFilterState, context: _Context) -> str:
    if not value.constraints:
        return ": no DoNotSchedule topology spread constraint (every node passes)"
    parts = []
    for index, constraint in enumerate(value.constraints):
        counts = value.tp_value_to_match_num[index]
        minimum = value.min_match_num(index, constraint.min_domains)
        parts.append(
            f"constraint {index + 1}: {_constraint_text(constraint, 'DoNotSchedule')}; matching "
            f"pods per domain: {_counts_text(counts)} (minimum {minimum})"
        )
    return ": " + "; ".join(parts)


def _spread_pre_score(value: pts_scoring.PreScoreState, context: _Context) -> str:
    if not value.constraints:
        return ": no ScheduleAnyway topology spread constraint (every node scores the same)"
    parts = []
    for index, constraint in enumerate(value.constraints):
        counts = value.topology_value_to_pod_counts[index]
        counted = (
            f"matching pods per domain: {_counts_text(counts)}"
            if counts
            else "matching pods counted per node at Score"
        )
        parts.append(
            f"constraint {index + 1}: {_constraint_text(constraint, 'ScheduleAnyway')}; {counted}"
        )
    if value.ignored_nodes:
        parts.append(
            f"{_plural(len(value.ignored_nodes), 'node')} without the topology keys score 0"
        )
    return ": " + "; ".join(parts)


def _inter_pod_affinity_pre_filter(value: ipa_filtering.PreFilterState, context: _Context) -> str:
    return (
        f": existing pods whose anti-affinity rejects this pod, per domain: "
        f"{_pair_counts_text(value.existing_anti_affinity_counts)}; pods matching all its "
        f"affinity terms: {_pair_counts_text(value.affinity_counts)}; pods matching its "
        f"anti-affinity terms: {_pair_counts_text(value.anti_affinity_counts)}"
    )


def _inter_pod_affinity_pre_score(value: ipa_scoring.PreScoreState, context: _Context) -> str:
    if not value.topology_score:
        return ": no preferred (anti-)affinity applies (every node scores 0)"
    domains = {
        f"{key}={domain}": score
        for key, scores in value.topology_score.items()
        for domain, score in scores.items()
    }
    return f": score per domain from preferred (anti-)affinity terms: {_counts_text(domains)}"


def _pods_to_activate(value: PodsToActivate, context: _Context) -> str:
    if not value.map:
        return ": no pod to move to activeQ after the cycle"
    return ": pods to move to activeQ after the cycle: " + ", ".join(sorted(value.map))


_DESCRIBERS: dict[type, tuple[str, _Describer]] = {
    PodsToActivate: ("", _pods_to_activate),
    fit._PreFilterState: ("PreFilter", _fit_pre_filter),
    PodRequestsState: ("PreScore", _pod_requests),
    nodeaffinity._PreFilterState: ("PreFilter", _node_affinity_pre_filter),
    nodeaffinity._PreScoreState: ("PreScore", _node_affinity_pre_score),
    tainttoleration._PreScoreState: ("PreScore", _taint_toleration_pre_score),
    nodeports._PreFilterState: ("PreFilter", _node_ports),
    volumezone._StateData: ("PreFilter", _volume_zone),
    volumerestrictions._PreFilterState: ("PreFilter", _volume_restrictions),
    volume_binding._StateData: ("PreFilter", _volume_binding),
    dynamicresources._StateData: ("PreFilter", _dynamic_resources),
    pts_filtering.PreFilterState: ("PreFilter", _spread_pre_filter),
    pts_scoring.PreScoreState: ("PreScore", _spread_pre_score),
    ipa_filtering.PreFilterState: ("PreFilter", _inter_pod_affinity_pre_filter),
    ipa_scoring.PreScoreState: ("PreScore", _inter_pod_affinity_pre_score),
}

__all__ = ["StateEntry", "describe_state", "split_key"]
