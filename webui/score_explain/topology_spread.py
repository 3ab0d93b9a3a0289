"""PodTopologySpread's raw score: PreScore's counts per domain and Score's sum
(podtopologyspread/scoring.go), recomputed over every node of the cluster."""

from __future__ import annotations

from schedviz.kube.labels import Selector
from schedviz.kube.objects import LABEL_HOSTNAME
from schedviz.scheduler.apis.config.types_pluginargs import SYSTEM_DEFAULTING, PodTopologySpreadArgs
from schedviz.scheduler.framework.plugins import names
from schedviz.scheduler.framework.plugins.podtopologyspread.common import (
    SCHEDULE_ANYWAY,
    build_default_constraints,
    count_pods_match_selector,
    filter_topology_spread_constraints,
)
from schedviz.scheduler.framework.plugins.podtopologyspread.plugin import SYSTEM_DEFAULT_CONSTRAINTS
from schedviz.scheduler.framework.plugins.podtopologyspread.scoring import (
    count_existing_pods,
    init_pre_score_state,
    score_for_count,
    score_node,
)
from webui.score_explain.cell import CellContext, Computation, M, StoredObjects, X, mismatch


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


def explain_topology_spread(context: CellContext, computation: Computation) -> None:
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
            pod, defaults, StoredObjects(context.cluster), SCHEDULE_ANYWAY
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
        mismatch(computation, recomputed)
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
