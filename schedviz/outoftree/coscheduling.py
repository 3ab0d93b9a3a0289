"""Coscheduling: gang scheduling of PodGroups, schedviz's example of an out-of-tree plugin.

Mirrors kubernetes-sigs/scheduler-plugins:
- pkg/coscheduling/coscheduling.go: the plugin at QueueSort, PreFilter, PostFilter, Reserve
  (Unreserve) and Permit, and its registered events;
- pkg/coscheduling/core/core.go: ``PodGroupManager`` (PreFilter's sibling and minResources
  checks, Permit's quorum, the assigned-pod count, CheckClusterResource);
- pkg/util/podgroup.go (``GetWaitTimeDuration``, the group label helpers) and
  apis/config/v1/defaults.go (``CoschedulingArgs``: permitWaitingTimeSeconds 60,
  podGroupBackoffSeconds 0).

A pod joins the PodGroup named by its ``scheduling.x-k8s.io/pod-group`` label in its namespace.
Permit holds each member (Wait) until ``minMember`` of the group are assumed or bound, then allows
every waiting sibling; a member that fails Filter rejects the waiting ones (PostFilter), and so does
one that leaves Reserve (Unreserve), e.g. when its wait times out. The first member to wait
(``ActivateSiblings``, asked for through ``PermitState``) puts its siblings into the cycle's
``PodsToActivate``, so the scheduler moves them to activeQ once the cycle succeeds. A gang that
cannot fit therefore retries without end (members wait, a later one fails, PostFilter rejects the
waiting ones, the next first waiter activates them again), as with upstream's defaults; in
virtual time that happens at one instant, since the scheduler pops backoffQ when activeQ is
empty. ``podGroupBackoffSeconds`` breaks the loop, as upstream intends it to.

Deliberately different:
- PodGroups and pods are read through the handle's object lister (the informers' cache) instead of
  a controller-runtime client and a pod informer.
- The manager's expiring caches (go-cache's permittedPG and backedOffPG) expire on the scheduler's
  clock, so they run in virtual time.
- A PodGroup's creation time for QueueSort is its ``metadata.creationTimestamp`` in seconds since
  the epoch, or 0.0 when the manifest has none: the start of virtual time, when the simulated API
  server creates every manifest. A pod never activated has no initial attempt time (upstream would
  dereference nil); its queue timestamp stands in.
- "resource gap" messages print quantities (``map[cpu:4 pods:2]``) where Go prints the structs.
"""

from __future__ import annotations

import enum
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime
from fractions import Fraction
from typing import Protocol

from schedviz.kube.crds import POD_GROUP_LABEL, SCHEDULING_GROUP, PodGroup
from schedviz.kube.objects import RESOURCE_CPU, RESOURCE_PODS, Pod
from schedviz.kube.quantity import Quantity
from schedviz.scheduler.framework.cycle_state import (
    PODS_TO_ACTIVATE_KEY,
    CycleState,
    PodsToActivate,
)
from schedviz.scheduler.framework.interface import (
    Code,
    EnqueueExtensions,
    NodeInfoLister,
    ObjectLister,
    PermitPlugin,
    PostFilterPlugin,
    PostFilterResult,
    PreFilterExtensions,
    PreFilterPlugin,
    PreFilterResult,
    QueueSortPlugin,
    ReservePlugin,
    Status,
    new_status,
)
from schedviz.scheduler.framework.types import (
    ActionType,
    ClusterEvent,
    ClusterEventWithHint,
    EventResource,
    NodeInfo,
    NodeToStatus,
    QueuedPodInfo,
)

NAME = "Coscheduling"

# util.DefaultWaitTime: the wait when neither the group nor the args give one.
DEFAULT_WAIT_TIME = 60.0
# The CoschedulingArgs defaults (apis/config/v1/defaults.go).
DEFAULT_PERMIT_WAITING_TIME_SECONDS = 60
DEFAULT_POD_GROUP_BACKOFF_SECONDS = 0
# go-cache default expirations of NewPodGroupManager's caches, used for an Add of duration 0.
_PERMITTED_DEFAULT_EXPIRATION = 3.0
_BACKED_OFF_DEFAULT_EXPIRATION = 10.0
# PostFilter leaves the group alone when at most this share of minMember is still unassigned.
_SMALL_GAP = 0.1
# The event resource of PodGroups: "<plural>.<version>.<group>", as EventsToRegister names it.
POD_GROUP_EVENT_RESOURCE = f"podgroups.v1alpha1.{SCHEDULING_GROUP}"

# Reasons, upstream's exact strings.
ERR_POD_GROUP_NOT_FOUND = "PodGroup not found"
ERR_NO_POD_GROUP = "can not find pod group"
REJECTED_IN_POST_FILTER = "optimistic rejection in PostFilter"
REJECTED_IN_UNRESERVE = "rejection in Unreserve"


class PermitOutcome(enum.Enum):
    """core.Status: what the manager's Permit decided."""

    POD_GROUP_NOT_SPECIFIED = "PodGroup not specified"
    POD_GROUP_NOT_FOUND = "PodGroup not found"
    SUCCESS = "Success"
    WAIT = "Wait"


class WaitingPodView(Protocol):
    """The part of the runtime's waiting pod a plugin uses (upstream ``framework.WaitingPod``)."""

    @property
    def pod(self) -> Pod: ...

    def allow(self, plugin: str) -> None: ...

    def reject(self, plugin: str, message: str) -> None: ...


class CoschedulingHandle(Protocol):
    """What the plugin needs of the framework: the shared ``Handle`` plus the waiting pods
    (upstream ``IterateOverWaitingPods``) and the scheduler's clock for its expiring caches."""

    clock_now: Callable[[], float]

    def snapshot_shared_lister(self) -> NodeInfoLister: ...

    @property
    def objects(self) -> ObjectLister: ...

    def iterate_over_waiting_pods(self) -> Sequence[WaitingPodView]: ...


@dataclass(frozen=True, slots=True)
class CoschedulingArgs:
    permit_waiting_time_seconds: int = DEFAULT_PERMIT_WAITING_TIME_SECONDS
    pod_group_backoff_seconds: int = DEFAULT_POD_GROUP_BACKOFF_SECONDS


_JSON_TYPES = {str: "string", float: "number", list: "array", dict: "object"}
_ARGS_FIELDS = {
    "permitWaitingTimeSeconds": "permit_waiting_time_seconds",
    "podGroupBackoffSeconds": "pod_group_backoff_seconds",
}


def decode_args(raw: object) -> CoschedulingArgs:
    """CoschedulingArgs from a pluginConfig entry's raw args, defaulted; ValueError if wrong."""
    if raw is None:
        return CoschedulingArgs()
    if not isinstance(raw, Mapping):
        raise ValueError(f"want args to be of type CoschedulingArgs, got {type(raw).__name__}")
    values: dict[str, int] = {}
    for key, value in raw.items():
        if key in ("apiVersion", "kind"):
            continue
        if key not in _ARGS_FIELDS:
            raise ValueError(f'strict decoding error: unknown field "{key}"')
        if value is None:
            continue
        if isinstance(value, bool) or not isinstance(value, int):
            json_type = _JSON_TYPES.get(type(value), "value")
            raise ValueError(
                f"json: cannot unmarshal {json_type} into Go struct field "
                f"CoschedulingArgs.{key} of type int64"
            )
        values[_ARGS_FIELDS[key]] = value
    return CoschedulingArgs(**values)


PERMIT_STATE_KEY = "PermitCoscheduling"


@dataclass
class PermitState:
    """Whether Permit asked for the siblings to be activated (core.go ``PermitState``)."""

    activate: bool = False

    def clone(self) -> PermitState:
        return PermitState(self.activate)


def pod_group_label(pod: Pod) -> str:
    """util.GetPodGroupLabel."""
    return pod.labels.get(POD_GROUP_LABEL, "")


def pod_group_full_name(pod: Pod) -> str:
    """util.GetPodGroupFullName: ``namespace/group``, or "" for a pod in no group."""
    name = pod_group_label(pod)
    return f"{pod.namespace}/{name}" if name else ""


def wait_time(pod_group: PodGroup | None, schedule_timeout: float | None) -> float:
    """util.GetWaitTimeDuration: the group's scheduleTimeoutSeconds, else the args', else 60 s."""
    if pod_group is not None and pod_group.schedule_timeout_seconds is not None:
        return float(pod_group.schedule_timeout_seconds)
    if schedule_timeout:
        return schedule_timeout
    return DEFAULT_WAIT_TIME


def _creation_seconds(timestamp: str) -> float:
    if not timestamp:
        return 0.0
    return datetime.fromisoformat(timestamp.replace("Z", "+00:00")).timestamp()


class _ExpiringSet:
    """The part of go-cache the manager uses: keys that vanish after their duration."""

    def __init__(self, clock: Callable[[], float], default_expiration: float) -> None:
        self._clock = clock
        self._default_expiration = default_expiration
        self._expiry: dict[str, float] = {}

    def __contains__(self, key: str) -> bool:
        expiry = self._expiry.get(key)
        return expiry is not None and self._clock() < expiry

    def add(self, key: str, duration: float) -> None:
        """Adds ``key`` unless it is present and unexpired (go-cache ``Add``)."""
        if key in self:
            return
        self._expiry[key] = self._clock() + (duration or self._default_expiration)

    def delete(self, key: str) -> None:
        self._expiry.pop(key, None)


class PodGroupManager:
    """core.PodGroupManager: the PodGroup bookkeeping behind the plugin."""

    def __init__(self, handle: CoschedulingHandle, schedule_timeout: float | None) -> None:
        self._handle = handle
        self._schedule_timeout = schedule_timeout
        self._permitted = _ExpiringSet(handle.clock_now, _PERMITTED_DEFAULT_EXPIRATION)
        self._backed_off = _ExpiringSet(handle.clock_now, _BACKED_OFF_DEFAULT_EXPIRATION)

    def get_pod_group(self, pod: Pod) -> tuple[str, PodGroup | None]:
        """The group's full name ("" when the pod names none) and the group, if it exists."""
        name = pod_group_label(pod)
        if not name:
            return "", None
        full_name = f"{pod.namespace}/{name}"
        found = self._handle.objects.get("PodGroup", full_name)
        return full_name, found if isinstance(found, PodGroup) else None

    def sibling_pods(self, pod: Pod) -> list[Pod]:
        """Every pod of the pod's namespace labelled with its group, itself included."""
        name = pod_group_label(pod)
        return [
            other
            for other in self._handle.objects.list_objects("Pod")
            if isinstance(other, Pod)
            and other.namespace == pod.namespace
            and pod_group_label(other) == name
        ]

    def pre_filter(self, pod: Pod) -> str | None:
        """Why the pod cannot be scheduled yet, or None."""
        full_name, pod_group = self.get_pod_group(pod)
        if pod_group is None:
            return None
        if full_name in self._backed_off:
            return f"podGroup {full_name} failed recently"
        siblings = len(self.sibling_pods(pod))
        if siblings < pod_group.min_member:
            return (
                f"pre-filter pod {pod.name} cannot find enough sibling pods, current pods "
                f"number: {siblings}, minMember of group: {pod_group.min_member}"
            )
        if pod_group.min_resources is None or full_name in self._permitted:
            return None
        request = {name: q.amount for name, q in pod_group.min_resources.items()}
        request[RESOURCE_PODS] = Fraction(pod_group.min_member)
        nodes = self._handle.snapshot_shared_lister().list()
        gap = check_cluster_resource(nodes, request, full_name)
        if gap is not None:
            return gap
        self._permitted.add(full_name, self._schedule_timeout or 0.0)
        return None

    def permit(self, state: CycleState, pod: Pod) -> PermitOutcome:
        full_name, pod_group = self.get_pod_group(pod)
        if not full_name:
            return PermitOutcome.POD_GROUP_NOT_SPECIFIED
        if pod_group is None:
            return PermitOutcome.POD_GROUP_NOT_FOUND
        # The snapshot was taken before this pod was assumed: it counts itself.
        assigned = self.calculate_assigned_pods(pod_group.name, pod_group.namespace)
        if assigned + 1 >= pod_group.min_member:
            return PermitOutcome.SUCCESS
        if assigned == 0:
            # Past PreFilter's minMember and minResources checks, the group's first member
            # (and only it: scheduler-plugins#682) wakes its siblings up.
            state.write(PERMIT_STATE_KEY, PermitState(activate=True))
        return PermitOutcome.WAIT

    def activate_siblings(self, state: CycleState, pod: Pod) -> None:
        """Asks the scheduler to move the pod's siblings to activeQ, when Permit asked for it."""
        if not pod_group_label(pod):
            return
        try:
            permit_state = state.read_as(PERMIT_STATE_KEY, PermitState)
        except (KeyError, TypeError):
            return
        if not permit_state.activate:
            return
        siblings = [other for other in self.sibling_pods(pod) if other.key != pod.key]
        if not siblings:
            return
        try:
            pods_to_activate = state.read_as(PODS_TO_ACTIVATE_KEY, PodsToActivate)
        except (KeyError, TypeError):
            return
        for sibling in siblings:
            pods_to_activate.map[sibling.key] = sibling

    def creation_timestamp(self, pod: Pod, fallback: float) -> float:
        """The group's creation time, or ``fallback`` for a pod in no (existing) group."""
        _, pod_group = self.get_pod_group(pod)
        if pod_group is None:
            return fallback
        return _creation_seconds(pod_group.creation_timestamp)

    def delete_permitted_pod_group(self, full_name: str) -> None:
        self._permitted.delete(full_name)

    def backoff_pod_group(self, full_name: str, backoff: float) -> None:
        if backoff:
            self._backed_off.add(full_name, backoff)

    def calculate_assigned_pods(self, pod_group_name: str, namespace: str) -> int:
        """Pods of the group with a node in the snapshot: assumed or bound."""
        return sum(
            1
            for node_info in self._handle.snapshot_shared_lister().list()
            for pod_info in node_info.pods
            if pod_group_label(pod_info.pod) == pod_group_name
            and pod_info.pod.namespace == namespace
            and pod_info.pod.node_name
        )


def check_cluster_resource(
    nodes: Sequence[NodeInfo], request: dict[str, Fraction], group_full_name: str
) -> str | None:
    """core.CheckClusterResource: None when the nodes' free resources, the group's own pods
    counted as free, cover ``request``; otherwise the gap that remains."""
    remaining = dict(request)
    for node_info in nodes:
        if node_info.node is None:
            continue
        free = _free_resources(node_info, group_full_name)
        for name in list(remaining):
            left = remaining[name] - free.get(name, Fraction(0))
            if left <= 0:
                del remaining[name]
            else:
                remaining[name] = left
        if not remaining:
            return None
    shown = " ".join(f"{name}:{Quantity(remaining[name])}" for name in sorted(remaining))
    return f"resource gap: map[{shown}]"


def _free_resources(node_info: NodeInfo, group_full_name: str) -> dict[str, Fraction]:
    """core.getNodeResource as util.ResourceList: what is left once the group's pods are gone."""
    node = node_info.clone()
    for pod_info in node_info.pods:
        if pod_group_full_name(pod_info.pod) == group_full_name:
            node.remove_pod(pod_info.pod)
    allocatable, requested = node.allocatable, node.requested
    free = {
        RESOURCE_CPU: Fraction(allocatable.milli_cpu - requested.milli_cpu, 1000),
        "memory": Fraction(allocatable.memory - requested.memory),
        "ephemeral-storage": Fraction(allocatable.ephemeral_storage - requested.ephemeral_storage),
        RESOURCE_PODS: Fraction(allocatable.allowed_pod_number - len(node.pods)),
    }
    for name, value in allocatable.scalar_resources.items():
        free[name] = Fraction(value - requested.scalar_resources.get(name, 0))
    return free


class Coscheduling(
    QueueSortPlugin,
    PreFilterPlugin,
    PostFilterPlugin,
    ReservePlugin,
    PermitPlugin,
    EnqueueExtensions,
):
    def __init__(
        self,
        handle: CoschedulingHandle,
        manager: PodGroupManager,
        schedule_timeout: float | None,
        pod_group_backoff: float | None = None,
    ) -> None:
        self._handle = handle
        self._manager = manager
        self._schedule_timeout = schedule_timeout
        self._pod_group_backoff = pod_group_backoff

    def name(self) -> str:
        return NAME

    def events_to_register(self) -> list[ClusterEventWithHint]:
        return [
            ClusterEventWithHint(ClusterEvent(EventResource.Pod, ActionType.Add)),
            ClusterEventWithHint(
                ClusterEvent(POD_GROUP_EVENT_RESOURCE, ActionType.Add | ActionType.Update)
            ),
        ]

    def less(self, a: QueuedPodInfo, b: QueuedPodInfo) -> bool:
        """Higher priority first, then the older group (or pod), then by ``namespace/name``."""
        priority_a, priority_b = a.pod.effective_priority, b.pod.effective_priority
        if priority_a != priority_b:
            return priority_a > priority_b
        created_a = self._manager.creation_timestamp(a.pod, _initial_attempt(a))
        created_b = self._manager.creation_timestamp(b.pod, _initial_attempt(b))
        if created_a == created_b:
            return a.pod.key < b.pod.key
        return created_a < created_b

    def pre_filter(
        self, state: CycleState, pod: Pod, nodes: Sequence[NodeInfo]
    ) -> tuple[PreFilterResult | None, Status | None]:
        # UnschedulableAndUnresolvable: preempting for one member cannot complete the group.
        reason = self._manager.pre_filter(pod)
        if reason is not None:
            return None, new_status(Code.UnschedulableAndUnresolvable, reason)
        return None, None

    def pre_filter_extensions(self) -> PreFilterExtensions | None:
        return None

    def post_filter(
        self, state: CycleState, pod: Pod, filtered_node_status_map: NodeToStatus
    ) -> tuple[PostFilterResult | None, Status | None]:
        """Rejects the group's waiting pods once a member is unschedulable, unless the group
        already has its quorum or is within 10% of it."""
        full_name, pod_group = self._manager.get_pod_group(pod)
        if pod_group is None:
            return PostFilterResult(), new_status(Code.Unschedulable, ERR_NO_POD_GROUP)
        assigned = self._manager.calculate_assigned_pods(pod_group.name, pod.namespace)
        if assigned >= pod_group.min_member:
            return PostFilterResult(), new_status(Code.Unschedulable)
        not_assigned = (pod_group.min_member - assigned) / pod_group.min_member
        if not_assigned <= _SMALL_GAP:
            return PostFilterResult(), new_status(Code.Unschedulable)
        # If the nth member failed, the others very likely will too.
        self._reject_waiting_siblings(pod.namespace, pod_group.name, REJECTED_IN_POST_FILTER)
        backoff = self._pod_group_backoff
        if backoff is not None and len(self._manager.sibling_pods(pod)) >= pod_group.min_member:
            self._manager.backoff_pod_group(full_name, backoff)
        self._manager.delete_permitted_pod_group(full_name)
        message = (
            f"PodGroup {full_name} gets rejected due to Pod {pod.name} is unschedulable even "
            "after PostFilter"
        )
        return PostFilterResult(), new_status(Code.Unschedulable, message)

    def permit(self, state: CycleState, pod: Pod, node_name: str) -> tuple[Status | None, float]:
        """Wait until minMember of the group are assumed or bound; the last one allows all."""
        timeout = self._schedule_timeout or 0.0
        outcome = self._manager.permit(state, pod)
        if outcome is PermitOutcome.POD_GROUP_NOT_SPECIFIED:
            return None, 0.0
        if outcome is PermitOutcome.POD_GROUP_NOT_FOUND:
            return new_status(Code.Unschedulable, ERR_POD_GROUP_NOT_FOUND), 0.0
        if outcome is PermitOutcome.WAIT:
            _, pod_group = self._manager.get_pod_group(pod)
            timeout = wait_time(pod_group, self._schedule_timeout) or timeout
            # Move the sibling pods back to activeQ too.
            self._manager.activate_siblings(state, pod)
            return new_status(Code.Wait), timeout
        full_name = pod_group_full_name(pod)
        for waiting in self._handle.iterate_over_waiting_pods():
            if pod_group_full_name(waiting.pod) == full_name:
                waiting.allow(NAME)
        return None, 0.0

    def reserve(self, state: CycleState, pod: Pod, node_name: str) -> Status | None:
        return None

    def unreserve(self, state: CycleState, pod: Pod, node_name: str) -> None:
        """A member leaving (rejected, timed out) takes the group's waiting pods with it."""
        full_name, pod_group = self._manager.get_pod_group(pod)
        if pod_group is None:
            return
        self._reject_waiting_siblings(pod.namespace, pod_group.name, REJECTED_IN_UNRESERVE)
        self._manager.delete_permitted_pod_group(full_name)

    def _reject_waiting_siblings(self, namespace: str, group: str, message: str) -> None:
        for waiting in self._handle.iterate_over_waiting_pods():
            if waiting.pod.namespace == namespace and pod_group_label(waiting.pod) == group:
                waiting.reject(NAME, message)


def _initial_attempt(pod_info: QueuedPodInfo) -> float:
    if pod_info.initial_attempt_timestamp is not None:
        return pod_info.initial_attempt_timestamp
    return pod_info.timestamp


def new(args: object | None, handle: CoschedulingHandle) -> Coscheduling:
    decoded = decode_args(args)
    if decoded.pod_group_backoff_seconds < 0:
        raise ValueError("parse arguments failed")
    schedule_timeout = float(decoded.permit_waiting_time_seconds)
    backoff = float(decoded.pod_group_backoff_seconds) or None
    manager = PodGroupManager(handle, schedule_timeout)
    return Coscheduling(handle, manager, schedule_timeout, backoff)
