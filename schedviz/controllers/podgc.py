"""The pod garbage collector: pods of deleted nodes, finished pods beyond a threshold.

Mirrors pkg/controller/podgc/gc_controller.go: ``gcOrphaned`` (a pod bound to a node that no
longer exists, after the node has been gone for the quarantine time of 40 s, is marked Failed
with the ``DisruptionTarget`` condition, reason ``DeletionByPodGC``, and deleted),
``gcUnscheduledTerminating`` (a pod being deleted that was never bound is deleted) and
``gcTerminated`` (beyond ``terminatedPodThreshold``, 12500 as kube-controller-manager
defaults it, the oldest finished pods are deleted).

Deliberately different: the 20 s check period is not modelled (the quarantine starts when the
node is deleted, not at the next check); the quarantine runs on the virtual clock.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterable
from typing import Any

from schedviz.controllers.controller_utils import is_pod_terminal
from schedviz.controllers.manager import ControllerContext
from schedviz.kube.objects import POD_FAILED, Node, Pod, PodCondition

QUARANTINE_SECONDS = 40.0
TERMINATED_POD_THRESHOLD = 12500
DISRUPTION_TARGET = "DisruptionTarget"
REASON_DELETION_BY_POD_GC = "DeletionByPodGC"
MESSAGE_NODE_GONE = "PodGC: node no longer exists"
_TERMINATED = "terminated"
_UNSCHEDULED = "unscheduled/"
_ORPHANED = "orphaned/"


class PodGCController:
    name = "podgc"

    def __init__(self, ctx: ControllerContext, threshold: int = TERMINATED_POD_THRESHOLD) -> None:
        self.ctx = ctx
        self.threshold = threshold
        self._terminated: dict[str, None] = {}

    def keys_for(self, event_type: str, old: Any, new: Any) -> Iterable[str]:
        if isinstance(old, Node) and event_type == "DELETED":
            self.ctx.after(self.ctx.now() + QUARANTINE_SECONDS, self.name, _ORPHANED + old.name)
            return []
        if not isinstance(old if new is None else new, Pod):
            return []
        if isinstance(old, Pod) and event_type == "DELETED":
            self._terminated.pop(old.key, None)
            return []
        keys = []
        if is_pod_terminal(new):
            self._terminated[new.key] = None
            if len(self._terminated) > self.threshold:
                keys.append(_TERMINATED)
        if new.deletion_timestamp is not None and not new.node_name:
            keys.append(_UNSCHEDULED + new.key)
        return keys

    def sync(self, key: str) -> None:
        if key == _TERMINATED:
            self._gc_terminated()
        elif key.startswith(_UNSCHEDULED):
            self.ctx.delete("Pod", key[len(_UNSCHEDULED) :])
        elif key.startswith(_ORPHANED):
            self._gc_orphaned(key[len(_ORPHANED) :])

    def _gc_orphaned(self, node_name: str) -> None:
        if self.ctx.get("Node", node_name) is not None:
            return  # back again
        for pod in self.ctx.objects("Pod"):
            if pod.node_name != node_name:
                continue
            if not is_pod_terminal(pod):
                condition = PodCondition(
                    DISRUPTION_TARGET, "True", REASON_DELETION_BY_POD_GC, MESSAGE_NODE_GONE
                )
                manifest = dict(pod.manifest)
                status = dict(manifest.get("status") or {})
                status["phase"] = POD_FAILED
                status["conditions"] = [
                    *[
                        c
                        for c in status.get("conditions") or []
                        if c.get("type") != DISRUPTION_TARGET
                    ],
                    {
                        "type": DISRUPTION_TARGET,
                        "status": "True",
                        "reason": REASON_DELETION_BY_POD_GC,
                        "message": MESSAGE_NODE_GONE,
                    },
                ]
                manifest["status"] = status
                conditions = (
                    *(c for c in pod.conditions if c.type != DISRUPTION_TARGET),
                    condition,
                )
                self.ctx.update(
                    dataclasses.replace(
                        pod, phase=POD_FAILED, conditions=conditions, manifest=manifest
                    )
                )
            self.ctx.delete("Pod", pod.key)

    def _gc_terminated(self) -> None:
        excess = len(self._terminated) - self.threshold
        if excess <= 0:
            return
        pods = [self.ctx.get("Pod", key) for key in self._terminated]
        ordered = sorted(
            (p for p in pods if isinstance(p, Pod)),
            key=lambda p: (self.ctx.times.creation(p), p.name),
        )
        for pod in ordered[:excess]:
            self.ctx.delete("Pod", pod.key)
