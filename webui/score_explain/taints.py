"""TaintToleration's raw score: the PreferNoSchedule taints the pod does not tolerate
(tainttoleration/taint_toleration.go)."""

from __future__ import annotations

from schedviz.kube.taints import tolerations_tolerate_taint
from webui.score_explain.cell import CellContext, Computation, mismatch

TAINT_EFFECT_PREFER_NO_SCHEDULE = "PreferNoSchedule"


def explain_taints(context: CellContext, computation: Computation) -> None:
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
        mismatch(computation, len(intolerable))
        return
    shown = ", ".join(
        f"{t.key}={t.value}:{t.effect}" if t.value else f"{t.key}:{t.effect}" for t in intolerable
    )
    computation.inputs.append(("PreferNoSchedule taints on the node", str(len(prefer))))
    computation.inputs.append(("not tolerated by the pod", shown or "none"))
    computation.raw_steps.append(
        f"raw = the number of PreferNoSchedule taints the pod does not tolerate = {computation.raw}"
    )
