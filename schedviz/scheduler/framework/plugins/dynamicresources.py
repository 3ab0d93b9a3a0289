"""DynamicResources, for clusters without dynamic resource allocation objects.

Mirrors pkg/scheduler/framework/plugins/dynamicresources/dynamicresources.go as far as schedviz
models DRA, which is not at all: no ResourceClaim, ResourceSlice or DeviceClass is loaded. The
plugin sits in the v1.34 default profile, so what it does for the pods schedviz does model must
match upstream: a pod without claims is skipped at PreFilter, and at PostFilter it answers
"no new claims to deallocate" (which is why that phrase appears in real FailedScheduling
messages), unless an earlier plugin rejected the pod at PreFilter: then this PreFilter never ran,
its cycle state is missing, and PostFilter fails with Error "not found", which ends
RunPostFilterPlugins before preemption (the message ends ". not found"). A pod that names a
claim is refused as upstream refuses a claim its lister cannot find.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from schedviz.kube.objects import Pod
from schedviz.scheduler.apis.config.types import DynamicResourcesArgs
from schedviz.scheduler.framework.cycle_state import ERR_NOT_FOUND, CycleState, StateNotFoundError
from schedviz.scheduler.framework.interface import (
    Code,
    FilterPlugin,
    Handle,
    PostFilterPlugin,
    PostFilterResult,
    PreFilterExtensions,
    PreFilterPlugin,
    PreFilterResult,
    Status,
    as_status,
    new_status,
)
from schedviz.scheduler.framework.plugins.names import DYNAMIC_RESOURCES
from schedviz.scheduler.framework.types import NodeInfo, NodeToStatus

NAME = DYNAMIC_RESOURCES
STATE_KEY = NAME
NO_NEW_CLAIMS_TO_DEALLOCATE = "no new claims to deallocate"


class _StateData:
    def __init__(self, claims: tuple[str, ...] = ()) -> None:
        self.claims = claims

    def clone(self) -> _StateData:
        return self


def pod_claim_names(pod: Pod) -> list[str]:
    """The ResourceClaim names a pod uses (resourceclaim.Name): direct or generated ones."""
    spec = pod.manifest.get("spec", {}) if isinstance(pod.manifest, dict) else {}
    status = pod.manifest.get("status", {}) if isinstance(pod.manifest, dict) else {}
    generated: dict[str, Any] = {}
    for entry in status.get("resourceClaimStatuses", None) or []:
        if isinstance(entry, dict) and entry.get("resourceClaimName"):
            generated[str(entry.get("name"))] = entry["resourceClaimName"]
    names = []
    for claim in spec.get("resourceClaims", None) or []:
        if not isinstance(claim, dict):
            continue
        if claim.get("resourceClaimName"):
            names.append(str(claim["resourceClaimName"]))
        elif str(claim.get("name")) in generated:
            names.append(str(generated[str(claim.get("name"))]))
    return names


class DynamicResources(PreFilterPlugin, FilterPlugin, PostFilterPlugin):
    def __init__(self, handle: Handle) -> None:
        self.handle = handle

    def name(self) -> str:
        return NAME

    def pre_filter(
        self, state: CycleState, pod: Pod, nodes: Sequence[NodeInfo]
    ) -> tuple[PreFilterResult | None, Status | None]:
        state.write(STATE_KEY, _StateData())
        claims = pod_claim_names(pod)
        if not claims:
            return None, Status(Code.Skip)
        # No ResourceClaim is ever known here, so the first one is not found.
        message = f'resourceclaim.resource.k8s.io "{claims[0]}" not found'
        return None, new_status(Code.UnschedulableAndUnresolvable, message)

    def pre_filter_extensions(self) -> PreFilterExtensions | None:
        return None

    def filter(self, state: CycleState, pod: Pod, node_info: NodeInfo) -> Status | None:
        return None

    def post_filter(
        self, state: CycleState, pod: Pod, filtered_node_status_map: NodeToStatus
    ) -> tuple[PostFilterResult | None, Status | None]:
        # getStateData: a PreFilter rejection by an earlier plugin means this plugin's PreFilter
        # never ran, so its state is missing and PostFilter fails with ErrNotFound ("not
        # found"), which stops RunPostFilterPlugins before DefaultPreemption.
        try:
            state.read_as(STATE_KEY, _StateData)
        except StateNotFoundError:
            return None, as_status(ERR_NOT_FOUND)
        # Every claim this plugin knows of is refused at PreFilter, so none is ever allocated.
        return None, new_status(Code.Unschedulable, NO_NEW_CLAIMS_TO_DEALLOCATE)


def new(args: object | None, handle: Handle) -> DynamicResources:
    if args is not None and not isinstance(args, DynamicResourcesArgs):
        raise TypeError(f"want args to be of type DynamicResourcesArgs, got {type(args).__name__}")
    return DynamicResources(handle)
