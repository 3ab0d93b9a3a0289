"""InterPodAffinity's raw score: PreScore's summed weights per topology domain and Score's sum
(interpodaffinity/scoring.go), with the terms behind them."""

from __future__ import annotations

from typing import Any

from schedviz.kube.objects import Node, Pod
from schedviz.scheduler.apis.config.types_pluginargs import InterPodAffinityArgs
from schedviz.scheduler.framework.plugins import names
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
from schedviz.scheduler.framework.types import AffinityTerm, PodInfo
from webui.score_explain.cell import CellContext, Computation, StoredObjects, X, mismatch

# How many matching pods an InterPodAffinity step names.
IPA_PODS_SHOWN = 3


def explain_inter_pod_affinity(context: CellContext, computation: Computation) -> None:
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
    objects = StoredObjects(context.cluster)
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
        mismatch(computation, recomputed)
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
