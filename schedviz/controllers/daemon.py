"""The DaemonSet controller: a pod on every node that should run one, none elsewhere.

Mirrors pkg/controller/daemon/daemon_controller.go: ``manage`` over
``podsShouldBeOnNode`` for each node (``NodeShouldRunDaemonPod``: the template's nodeName, node
affinity and selector, taints with the daemon tolerations; a node whose new taint is only
NoSchedule keeps its pod, a NoExecute one it does not tolerate loses it), extra daemon pods on
a node deleted but the oldest, failed ones deleted (and made again), unscheduled pods whose
node is gone deleted (``getUnscheduledPodsWithoutNode``); ``updateNode`` and ``addNode`` wake
the sets a node concerns. Its pods carry ``controller-revision-hash`` and
``pod-template-generation`` and are pinned to their node by required node affinity
(``workloads.daemon_pod``). Orphans the selector matches are adopted.

A template change rolls out as ``RollingUpdate`` without surge does (the default): old pods
deleted up to maxUnavailable (1 by default) at a time, the next made by the manage pass;
``OnDelete`` leaves them. The pods of a node deleted while bound are left to the pod garbage
collector (as upstream). Deliberately different: no surging update (maxSurge above 0 updates
nothing), no failed-pod backoff (a failed daemon pod is replaced
at once, on the sync after its deletion).
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from schedviz.controllers.controller_utils import (
    controller_ref,
    is_binding,
    is_pod_active,
    is_pod_ready,
    pod_event_matters,
    scaled_value,
)
from schedviz.controllers.manager import ControllerContext, claim_orphans, orphan_owners
from schedviz.controllers.workloads import (
    CONTROLLER_REVISION_HASH_LABEL,
    OBJECT_NAME_FIELD,
    POD_TEMPLATE_GENERATION_LABEL,
    daemon_pod,
    daemon_template_pod,
    node_should_run_daemon_pod,
    revision_hash,
    template_generation,
)
from schedviz.kube.objects import POD_FAILED, POD_SUCCEEDED, DaemonSet, Node, Pod


def target_node_name(pod: Pod) -> str:
    """util.GetTargetNodeName: the pod's node, or the node its required affinity names by
    ``metadata.name``."""
    if pod.node_name:
        return pod.node_name
    affinity = pod.manifest.get("spec", {}).get("affinity") or {}
    required = (affinity.get("nodeAffinity") or {}).get(
        "requiredDuringSchedulingIgnoredDuringExecution"
    ) or {}
    for term in required.get("nodeSelectorTerms") or []:
        for field in term.get("matchFields") or []:
            values = field.get("values") or []
            if (
                field.get("key") == OBJECT_NAME_FIELD
                and field.get("operator") == "In"
                and len(values) == 1
            ):
                return str(values[0])
    return ""


ROLLING_UPDATE = "RollingUpdate"


class DaemonSetController:
    name = "daemonset"

    def __init__(self, ctx: ControllerContext) -> None:
        self.ctx = ctx
        self._adopt: set[str] = set()
        self._given: dict[str, str] = {}  # each set's revision when first seen
        self._rolling: set[str] = set()  # sets with old pods left to replace

    def keys_for(self, event_type: str, old: Any, new: Any) -> Iterable[str]:
        obj = new if new is not None else old
        if isinstance(obj, DaemonSet):
            self._adopt.add(obj.key)
            return [obj.key]
        if isinstance(obj, Node):
            return self._node_keys(old, new)
        if not isinstance(obj, Pod) or not pod_event_matters(event_type, old, new):
            return []
        ref = controller_ref(obj)
        if ref is not None:
            key = f"{obj.namespace}/{ref.name}"
            if ref.kind != "DaemonSet" or (key not in self._rolling and is_binding(old, new)):
                return []  # a binding matters only to a rolling update
            return [key]
        if event_type == "DELETED":
            return []
        keys = orphan_owners(self.ctx, "DaemonSet", obj)
        self._adopt.update(keys)
        return keys

    def _node_keys(self, old: Any, new: Any) -> list[str]:
        """addNode, updateNode (only when shouldRun or shouldContinueRunning change), deleteNode."""
        keys = []
        for ds in self.ctx.objects("DaemonSet"):
            template = daemon_template_pod(ds)
            before = (
                node_should_run_daemon_pod(ds, template, old) if isinstance(old, Node) else None
            )
            after = node_should_run_daemon_pod(ds, template, new) if isinstance(new, Node) else None
            if before != after:
                keys.append(ds.key)
        return keys

    def sync(self, key: str) -> None:
        ds = self.ctx.get("DaemonSet", key)
        if not isinstance(ds, DaemonSet):
            return
        if key in self._adopt:
            self._adopt.discard(key)
            claim_orphans(self.ctx, ds, "apps/v1", active_only=False)
        self.manage(ds)

    def manage(self, ds: DaemonSet) -> None:
        ctx = self.ctx
        by_node: dict[str, list[Pod]] = {}
        for pod in ctx.owned_pods(ds.uid):
            if pod.deletion_timestamp is None:
                by_node.setdefault(target_node_name(pod), []).append(pod)
        nodes = ctx.objects("Node")
        template = daemon_template_pod(ds)

        def should_run_on(node: Node) -> bool:
            return node_should_run_daemon_pod(ds, template, node)[0]

        to_create: list[str] = []
        to_delete: list[Pod] = []
        for node in nodes:
            should_run, should_continue = node_should_run_daemon_pod(ds, template, node)
            pods = by_node.get(node.name, [])
            if should_run and not pods:
                to_create.append(node.name)
            elif should_continue:
                running = []
                for pod in pods:
                    if pod.phase in (POD_FAILED, POD_SUCCEEDED):
                        to_delete.append(pod)  # made again once it is gone
                    elif is_pod_active(pod):
                        running.append(pod)
                if len(running) > 1:
                    # Keep the oldest (by creation, then name), delete the rest.
                    running.sort(key=lambda p: (ctx.times.creation(p), p.name))
                    to_delete.extend(running[1:])
            elif pods:
                to_delete.extend(p for p in pods if is_pod_active(p))
        names = {node.name for node in nodes}
        for node_name, pods in by_node.items():
            if node_name not in names:
                to_delete.extend(p for p in pods if not p.node_name)
        for pod in to_delete:
            ctx.delete("Pod", pod.key)
        for node_name in to_create:
            ctx.create(daemon_pod(ds, node_name, ctx.names))
        self.rolling_update(ds, desired=sum(1 for node in nodes if should_run_on(node)))

    def rolling_update(self, ds: DaemonSet, desired: int) -> None:
        """rollingUpdate without surge: the old pods deleted, as many at a time as
        maxUnavailable allows (unavailable new pods and nodes the manage pass is still fixing
        counting against it); the manage pass of the next sync makes the new ones."""
        strategy = ds.manifest.get("spec", {}).get("updateStrategy") or {}
        if strategy.get("type", ROLLING_UPDATE) != ROLLING_UPDATE:
            return
        rolling = strategy.get("rollingUpdate") or {}
        max_unavailable = scaled_value(rolling.get("maxUnavailable"), desired, True, 1)
        max_surge = scaled_value(rolling.get("maxSurge"), desired, True, 0)
        if max_surge:
            return  # surging updates are not modelled
        if desired > 0 and max_unavailable == 0:
            max_unavailable = 1
        revision = revision_hash(ds.template)
        # A set as given (a dump) keeps its template until changed here: its pods, labelled
        # by the real controller's hash, are up to date by their template generation.
        as_given = self._given.setdefault(ds.uid, revision) == revision
        generation = str(template_generation(ds))

        def updated(pod: Pod) -> bool:
            return pod.labels.get(CONTROLLER_REVISION_HASH_LABEL) == revision or (
                as_given and pod.labels.get(POD_TEMPLATE_GENERATION_LABEL) == generation
            )

        by_node: dict[str, list[Pod]] = {}
        for pod in self.ctx.owned_pods(ds.uid):
            if pod.deletion_timestamp is None and is_pod_active(pod):
                by_node.setdefault(target_node_name(pod), []).append(pod)
        unavailable = 0
        replace: list[Pod] = []
        candidates: list[Pod] = []
        for node in self.ctx.objects("Node"):
            pods = by_node.get(node.name)
            if not pods:
                continue
            new = [p for p in pods if updated(p)]
            old = [p for p in pods if p not in new]
            if len(new) > 1 or len(old) > 1 or (new and old):
                unavailable += 1  # findUpdatedPodsOnNode's !ok, or both: manage's to fix
            elif new:
                unavailable += 0 if is_pod_ready(new[0]) else 1
            elif not is_pod_ready(old[0]):
                replace.append(old[0])
            elif unavailable < max_unavailable:
                candidates.append(old[0])
        if replace or candidates or unavailable:
            self._rolling.add(ds.key)
        else:
            self._rolling.discard(ds.key)
        room = max(0, min(max_unavailable - unavailable, len(candidates)))
        for pod in [*replace, *candidates[:room]]:
            self.ctx.delete("Pod", pod.key)
