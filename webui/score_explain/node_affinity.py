"""NodeAffinity's raw score: the weights of the pod's preferred terms the node matches
(nodeaffinity/node_affinity.go)."""

from __future__ import annotations

from schedviz.kube.nodeaffinity import PreferredSchedulingTerms
from webui.score_explain.cell import CellContext, Computation, mismatch


def explain_node_affinity(context: CellContext, computation: Computation) -> None:
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
        mismatch(computation, recomputed)
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
