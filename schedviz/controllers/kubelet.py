"""The kubelet's part the controllers need: a pod bound to a node runs, and may finish.

No kubelet runs in schedviz: a bound pod counts as running and ready (``controller_utils``).
A pod can be given a run time so that it finishes on the virtual clock, as its containers
exiting would end it on a node:

- ``schedviz.io/run-seconds``: seconds from its binding until its containers exit (a
  non-negative decimal number);
- ``schedviz.io/run-outcome``: ``Succeeded`` (the default) or ``Failed``.

The pod's phase then becomes the outcome (the kubelet's status update), which the Job
controller counts and the scheduler sees as the pod leaving (a terminal pod holds nothing).
A pod whose restartPolicy is Always is restarted rather than finished, so the annotations only
apply to pods with restartPolicy Never or OnFailure; with OnFailure a Failed outcome restarts the
containers in place, so only Succeeded ends such a pod. The annotations can be on a pod or on a
workload's pod template (its pods inherit them).
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Iterable
from typing import Any

from schedviz.controllers.controller_utils import is_pod_active
from schedviz.controllers.manager import ControllerContext
from schedviz.kube.objects import POD_FAILED, POD_SUCCEEDED, Pod, Workload

RUN_SECONDS_ANNOTATION = "schedviz.io/run-seconds"
RUN_OUTCOME_ANNOTATION = "schedviz.io/run-outcome"
RUN_OUTCOMES = (POD_SUCCEEDED, POD_FAILED)


def run_error(annotations: dict[str, str]) -> str:
    """Why the run annotations are invalid (``<annotation>]: <why>``, to follow the field's
    ``[``), or "" when they are valid or absent."""
    seconds = annotations.get(RUN_SECONDS_ANNOTATION)
    if seconds is not None:
        try:
            value = float(seconds)
        except ValueError:
            value = -1.0
        if not math.isfinite(value) or value < 0:
            return (
                f"{RUN_SECONDS_ANNOTATION}]: must be a non-negative number of seconds, "
                f"got {seconds!r}"
            )
    outcome = annotations.get(RUN_OUTCOME_ANNOTATION)
    if outcome is not None and outcome not in RUN_OUTCOMES:
        return f"{RUN_OUTCOME_ANNOTATION}]: must be one of Succeeded, Failed, got {outcome!r}"
    return ""


def run_seconds(pod: Pod) -> float | None:
    """The pod's run time, when it has one and can finish (restartPolicy not Always)."""
    value = pod.annotations.get(RUN_SECONDS_ANNOTATION)
    if value is None or run_error(pod.annotations):
        return None
    if _restart_policy(pod) == "Always":
        return None
    return float(value)


def _restart_policy(pod: Pod) -> str:
    spec = pod.manifest.get("spec", {}) if isinstance(pod.manifest, dict) else {}
    return str(spec.get("restartPolicy") or "Always")


def _outcome(pod: Pod) -> str | None:
    outcome = pod.annotations.get(RUN_OUTCOME_ANNOTATION, POD_SUCCEEDED)
    if outcome == POD_FAILED and _restart_policy(pod) == "OnFailure":
        return None  # restarted in place
    return outcome


class Kubelet:
    name = "kubelet"

    def __init__(self, ctx: ControllerContext) -> None:
        self.ctx = ctx

    def keys_for(self, event_type: str, old: Any, new: Any) -> Iterable[str]:
        if not isinstance(new, Pod) or not new.node_name or not is_pod_active(new):
            return []
        if isinstance(old, Pod) and old.node_name:
            return []
        seconds = run_seconds(new)
        if seconds is not None:
            self.ctx.after(self.ctx.now() + seconds, self.name, new.key)
        return []

    def sync(self, key: str) -> None:
        pod = self.ctx.get("Pod", key)
        if not isinstance(pod, Pod) or not pod.node_name or not is_pod_active(pod):
            return
        seconds = run_seconds(pod)
        if seconds is None or self.ctx.times.ready_since(pod) + seconds > self.ctx.now():
            return
        outcome = _outcome(pod)
        if outcome is None:
            return
        manifest = dict(pod.manifest)
        manifest["status"] = {**(manifest.get("status") or {}), "phase": outcome}
        self.ctx.update(dataclasses.replace(pod, phase=outcome, manifest=manifest))


def run_annotation_errors(objects: Iterable[Any]) -> list[str]:
    """Each pod, and each workload's pod template, whose run annotations are invalid, as
    ``<kind> "<namespace>/<name>": <field>: <why>``."""
    errors = []
    for obj in objects:
        if isinstance(obj, Pod):
            annotations, field = obj.annotations, "metadata.annotations"
        elif isinstance(obj, Workload):
            metadata = obj.template.get("metadata") or {}
            annotations = dict(metadata.get("annotations") or {})
            field = "spec.template.metadata.annotations"
        else:
            continue
        error = run_error(annotations)
        if error:
            errors.append(f'{type(obj).__name__} "{obj.key}": {field}[{error}')
    return errors
