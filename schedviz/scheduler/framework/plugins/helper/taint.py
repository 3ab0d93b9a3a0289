"""The taints that keep pods off a node.

Mirrors pkg/scheduler/framework/plugins/helper/taint.go.
"""

from __future__ import annotations

from schedviz.kube.objects import TAINT_EFFECT_NO_EXECUTE, TAINT_EFFECT_NO_SCHEDULE, Taint


def do_not_schedule_taints_filter(taint: Taint) -> bool:
    """DoNotScheduleTaintsFilterFunc: only NoSchedule and NoExecute taints reject a pod."""
    return taint.effect in (TAINT_EFFECT_NO_SCHEDULE, TAINT_EFFECT_NO_EXECUTE)
