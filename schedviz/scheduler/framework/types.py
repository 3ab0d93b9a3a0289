"""Node and pod bookkeeping, cluster events and diagnoses.

Mirrors pkg/scheduler/framework/types.go (NodeInfo, PodInfo, Resource, HostPortInfo, FitError,
Diagnosis) and staging/src/k8s.io/kube-scheduler/framework/types.go (ClusterEvent, ActionType,
EventResource, QueueingHint, QueuedPodInfo). Pods are identified by ``namespace/name`` where
upstream uses the UID: a name is unique at any one time, and traces read better with it.
``NodeInfo.without_pods`` (a snapshot minus some pods in one pass, for preemption's dry run) is
not in upstream.
"""

from __future__ import annotations

import itertools
from collections import Counter
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from enum import IntEnum, IntFlag
from fractions import Fraction
from operator import itemgetter
from typing import Any

from schedviz.kube.labels import Selector, as_selector
from schedviz.kube.objects import (
    RESOURCE_CPU,
    RESOURCE_EPHEMERAL_STORAGE,
    RESOURCE_MEMORY,
    RESOURCE_PODS,
    ContainerPort,
    Node,
    Pod,
    PodAffinityTerm,
    ResourceList,
)
from schedviz.kube.resources import non_zero_defaults, pod_requests, to_int
from schedviz.scheduler.framework.interface import Code, Status

# ---------------------------------------------------------------------------------------------
# Resources


def is_scalar_resource_name(name: str) -> bool:
    """schedutil.IsScalarResourceName: extended, hugepages, prefixed-native, attachable volumes."""
    return (
        ("/" in name and not name.startswith("requests."))
        or name.startswith("hugepages-")
        or name.startswith("attachable-volumes-")
    )


class Resource:
    """Computed resources of a node or pod: cpu in millicores, the rest as integers."""

    __slots__ = (
        "allowed_pod_number",
        "ephemeral_storage",
        "memory",
        "milli_cpu",
        "scalar_resources",
    )

    def __init__(
        self,
        milli_cpu: int = 0,
        memory: int = 0,
        ephemeral_storage: int = 0,
        allowed_pod_number: int = 0,
        scalar_resources: dict[str, int] | None = None,
    ) -> None:
        self.milli_cpu = milli_cpu
        self.memory = memory
        self.ephemeral_storage = ephemeral_storage
        self.allowed_pod_number = allowed_pod_number
        self.scalar_resources: dict[str, int] = scalar_resources or {}

    @classmethod
    def from_resource_list(cls, resources: ResourceList) -> Resource:
        result = cls()
        result.add_amounts({name: q.amount for name, q in resources.items()})
        return result

    def add_amounts(self, amounts: dict[str, Fraction]) -> None:
        """Resource.Add: cpu as MilliValue, everything else as Value, unknown names ignored."""
        for name, amount in amounts.items():
            value = to_int(name, amount)
            if name == RESOURCE_CPU:
                self.milli_cpu += value
            elif name == RESOURCE_MEMORY:
                self.memory += value
            elif name == RESOURCE_PODS:
                self.allowed_pod_number += value
            elif name == RESOURCE_EPHEMERAL_STORAGE:
                self.ephemeral_storage += value
            elif is_scalar_resource_name(name):
                self.scalar_resources[name] = self.scalar_resources.get(name, 0) + value

    def add(self, other: Resource, sign: int = 1) -> None:
        self.milli_cpu += sign * other.milli_cpu
        self.memory += sign * other.memory
        self.ephemeral_storage += sign * other.ephemeral_storage
        self.allowed_pod_number += sign * other.allowed_pod_number
        for name, value in other.scalar_resources.items():
            self.scalar_resources[name] = self.scalar_resources.get(name, 0) + sign * value

    def get(self, name: str) -> int:
        if name == RESOURCE_CPU:
            return self.milli_cpu
        if name == RESOURCE_MEMORY:
            return self.memory
        if name == RESOURCE_EPHEMERAL_STORAGE:
            return self.ephemeral_storage
        if name == RESOURCE_PODS:
            return self.allowed_pod_number
        return self.scalar_resources.get(name, 0)

    def clone(self) -> Resource:
        return Resource(
            self.milli_cpu,
            self.memory,
            self.ephemeral_storage,
            self.allowed_pod_number,
            dict(self.scalar_resources),
        )

    def as_dict(self) -> dict[str, int]:
        values = {
            RESOURCE_CPU: self.milli_cpu,
            RESOURCE_MEMORY: self.memory,
            RESOURCE_EPHEMERAL_STORAGE: self.ephemeral_storage,
            RESOURCE_PODS: self.allowed_pod_number,
        }
        values.update(self.scalar_resources)
        return values

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Resource) and self.as_dict() == other.as_dict()

    def __repr__(self) -> str:
        return f"Resource({self.as_dict()})"


# ---------------------------------------------------------------------------------------------
# Pods


@dataclass(slots=True)
class AffinityTerm:
    """A PodAffinityTerm with its selectors compiled (upstream ``framework.AffinityTerm``)."""

    namespaces: frozenset[str]
    selector: Selector
    topology_key: str
    namespace_selector: Selector

    def matches(self, pod: Pod, namespace_labels: dict[str, str] | None) -> bool:
        # A namespace the scheduler knows no labels of matches as an unlabelled one.
        if pod.namespace in self.namespaces or self.namespace_selector.matches(
            namespace_labels or {}
        ):
            return self.selector.matches(pod.labels)
        return False


@dataclass(slots=True)
class WeightedAffinityTerm:
    term: AffinityTerm
    weight: int


def new_affinity_term(pod: Pod, term: PodAffinityTerm) -> AffinityTerm:
    if not term.namespaces and term.namespace_selector is None:
        namespaces = frozenset((pod.namespace,))
    else:
        namespaces = frozenset(term.namespaces)
    return AffinityTerm(
        namespaces=namespaces,
        selector=as_selector(term.label_selector),
        topology_key=term.topology_key,
        namespace_selector=as_selector(term.namespace_selector),
    )


# What PodInfo derives from a pod, kept by the identity of the parts it reads (the
# containers, init containers, overhead and affinity objects, which a copy of the pod with
# another node name or status shares), with those parts held so that no identity is reused
# meanwhile: the scheduler makes a PodInfo of one pod several times a cycle (queue, assume,
# the bound pod's informer event). Not in upstream, where the informer's pod is used as is.
# Nothing changes a derived value after it is made (they are read, added and subtracted).
# Enough for a burst of pods queued together (upstream's benchmarks create 10000 at once): each
# is derived when queued and again when scheduled, unless still kept.
_DERIVED_KEPT = 16384
_DERIVED: dict[tuple[int, int, int, int], tuple[Any, ...]] = {}


class PodInfo:
    """A pod with what the scheduler derives from it once: affinity terms and requests."""

    __slots__ = (
        "non_zero_cpu",
        "non_zero_memory",
        "pod",
        "preferred_affinity_terms",
        "preferred_anti_affinity_terms",
        "requests",
        "required_affinity_terms",
        "required_anti_affinity_terms",
    )

    def __init__(self, pod: Pod) -> None:
        self.update(pod)

    def update(self, pod: Pod) -> None:
        self.pod = pod
        key = (id(pod.containers), id(pod.init_containers), id(pod.overhead), id(pod.affinity))
        kept = _DERIVED.get(key)
        if (
            kept is not None
            and kept[0] is pod.containers
            and kept[1] is pod.init_containers
            and kept[2] is pod.overhead
            and kept[3] is pod.affinity
            and kept[4] == pod.namespace
        ):
            (
                self.required_affinity_terms,
                self.required_anti_affinity_terms,
                self.preferred_affinity_terms,
                self.preferred_anti_affinity_terms,
                self.requests,
                self.non_zero_cpu,
                self.non_zero_memory,
            ) = kept[5]
            return
        self._derive(pod)
        if len(_DERIVED) >= _DERIVED_KEPT:
            del _DERIVED[next(iter(_DERIVED))]
        _DERIVED[key] = (
            pod.containers,
            pod.init_containers,
            pod.overhead,
            pod.affinity,
            pod.namespace,
            (
                self.required_affinity_terms,
                self.required_anti_affinity_terms,
                self.preferred_affinity_terms,
                self.preferred_anti_affinity_terms,
                self.requests,
                self.non_zero_cpu,
                self.non_zero_memory,
            ),
        )

    def _derive(self, pod: Pod) -> None:
        affinity = pod.affinity
        pod_affinity = affinity.pod_affinity if affinity else None
        anti = affinity.pod_anti_affinity if affinity else None
        self.required_affinity_terms = (
            [new_affinity_term(pod, t) for t in pod_affinity.required] if pod_affinity else []
        )
        self.required_anti_affinity_terms = (
            [new_affinity_term(pod, t) for t in anti.required] if anti else []
        )
        self.preferred_affinity_terms = (
            [
                WeightedAffinityTerm(new_affinity_term(pod, w.pod_affinity_term), w.weight)
                for w in pod_affinity.preferred
            ]
            if pod_affinity
            else []
        )
        self.preferred_anti_affinity_terms = (
            [
                WeightedAffinityTerm(new_affinity_term(pod, w.pod_affinity_term), w.weight)
                for w in anti.preferred
            ]
            if anti
            else []
        )
        # calculateResource: InPlacePodVerticalScaling and PodLevelResources are on in v1.34.
        requests = pod_requests(pod, use_status_resources=True)
        self.requests = Resource()
        self.requests.add_amounts(requests)
        defaults = non_zero_defaults(pod, requests)
        non_zero = pod_requests(pod, defaults, use_status_resources=True) if defaults else requests
        self.non_zero_cpu = to_int(RESOURCE_CPU, non_zero.get(RESOURCE_CPU, Fraction(0)))
        self.non_zero_memory = to_int(RESOURCE_MEMORY, non_zero.get(RESOURCE_MEMORY, Fraction(0)))

    @property
    def key(self) -> str:
        return self.pod.key

    def has_affinity(self) -> bool:
        affinity = self.pod.affinity
        return affinity is not None and (
            affinity.pod_affinity is not None or affinity.pod_anti_affinity is not None
        )

    def has_required_anti_affinity(self) -> bool:
        return bool(self.required_anti_affinity_terms)

    def __repr__(self) -> str:
        return f"PodInfo({self.key})"


# ---------------------------------------------------------------------------------------------
# Nodes

DEFAULT_BIND_ALL_HOST_IP = "0.0.0.0"
ProtocolPort = tuple[str, int]


class HostPortInfo(dict[str, set[ProtocolPort]]):
    """Host ports in use on a node, per host IP (upstream ``HostPortInfo``)."""

    @staticmethod
    def _sanitize(ip: str, protocol: str) -> tuple[str, str]:
        return ip or DEFAULT_BIND_ALL_HOST_IP, protocol or "TCP"

    def add(self, ip: str, protocol: str, port: int) -> None:
        if port <= 0:
            return
        ip, protocol = self._sanitize(ip, protocol)
        self.setdefault(ip, set()).add((protocol, port))

    def remove(self, ip: str, protocol: str, port: int) -> None:
        if port <= 0:
            return
        ip, protocol = self._sanitize(ip, protocol)
        ports = self.get(ip)
        if ports is not None:
            ports.discard((protocol, port))
            if not ports:
                del self[ip]

    def check_conflict(self, ip: str, protocol: str, port: int) -> bool:
        if port <= 0:
            return False
        ip, protocol = self._sanitize(ip, protocol)
        wanted = (protocol, port)
        if ip == DEFAULT_BIND_ALL_HOST_IP:
            return any(wanted in ports for ports in self.values())
        return any(wanted in self.get(key, ()) for key in (DEFAULT_BIND_ALL_HOST_IP, ip))

    def clone(self) -> HostPortInfo:
        copy = HostPortInfo()
        for ip, ports in self.items():
            copy[ip] = set(ports)
        return copy


@dataclass(slots=True)
class ImageStateSummary:
    """An image's size and how many nodes hold it. Shared by every NodeInfo of one cache."""

    size: int
    num_nodes: int = 0


_generation = itertools.count(1)


def next_generation() -> int:
    return next(_generation)


class NodeInfo:
    """A node with the pods on it and their aggregated requests (upstream ``NodeInfo``)."""

    __slots__ = (
        "allocatable",
        "generation",
        "image_states",
        "name",
        "node",
        "non_zero_requested",
        "pods",
        "pods_with_affinity",
        "pods_with_required_anti_affinity",
        "pvc_ref_counts",
        "requested",
        "used_ports",
    )

    def __init__(self, node: Node | None = None, pods: list[Pod] | None = None) -> None:
        self.node: Node | None = None
        # The node's name ("" without a node), kept beside it: read for every node of a cycle.
        self.name = ""
        self.pods: list[PodInfo] = []
        self.pods_with_affinity: list[PodInfo] = []
        self.pods_with_required_anti_affinity: list[PodInfo] = []
        self.used_ports = HostPortInfo()
        self.requested = Resource()
        self.non_zero_requested = Resource()
        self.allocatable = Resource()
        self.image_states: dict[str, ImageStateSummary] = {}
        self.pvc_ref_counts: dict[str, int] = {}
        self.generation = next_generation()
        if node is not None:
            self.set_node(node)
        for pod in pods or ():
            self.add_pod(pod)

    def set_node(self, node: Node) -> None:
        self.node = node
        self.name = node.name
        self.allocatable = Resource.from_resource_list(node.allocatable)
        self.generation = next_generation()

    def remove_node(self) -> None:
        self.node = None
        self.name = ""
        self.generation = next_generation()

    def add_pod(self, pod: Pod) -> None:
        self.add_pod_info(PodInfo(pod))

    def add_pod_info(self, pod_info: PodInfo) -> None:
        self.pods.append(pod_info)
        if pod_info.has_affinity():
            self.pods_with_affinity.append(pod_info)
        if pod_info.has_required_anti_affinity():
            self.pods_with_required_anti_affinity.append(pod_info)
        self._update(pod_info, 1)

    def remove_pod(self, pod: Pod) -> bool:
        """Removes the pod with this key; False when the node does not hold it."""
        key = pod.key
        for index, pod_info in enumerate(self.pods):
            if pod_info.key == key:
                del self.pods[index]
                self.pods_with_affinity = [p for p in self.pods_with_affinity if p.key != key]
                self.pods_with_required_anti_affinity = [
                    p for p in self.pods_with_required_anti_affinity if p.key != key
                ]
                self._update(pod_info, -1)
                return True
        return False

    def without_pods(self, pod_infos: Sequence[PodInfo]) -> NodeInfo:
        """A snapshot without these pod infos, which must be among ``pods``: ``snapshot`` then
        ``remove_pod`` of each, in one pass over the pods. Not in upstream."""
        gone = {id(pod_info) for pod_info in pod_infos}
        with_affinity = self.pods_with_affinity
        with_anti_affinity = self.pods_with_required_anti_affinity
        copy = self._copy_with(
            [p for p in self.pods if id(p) not in gone],
            [p for p in with_affinity if id(p) not in gone] if with_affinity else [],
            [p for p in with_anti_affinity if id(p) not in gone] if with_anti_affinity else [],
        )
        for pod_info in pod_infos:
            copy._update(pod_info, -1)
        return copy

    def _update(self, pod_info: PodInfo, sign: int) -> None:
        self.requested.add(pod_info.requests, sign)
        self.non_zero_requested.milli_cpu += sign * pod_info.non_zero_cpu
        self.non_zero_requested.memory += sign * pod_info.non_zero_memory
        pod = pod_info.pod
        # schedutil.GetHostPorts: regular containers and sidecars; init containers that run to
        # completion free their ports before the pod runs.
        if pod.init_containers:
            for container in pod.init_containers:
                if container.restart_policy == "Always" and container.ports:
                    self._update_ports(container.ports, sign)
        for container in pod.containers:
            if container.ports:
                self._update_ports(container.ports, sign)
        for volume in pod.volumes:
            if volume.pvc_claim_name:
                key = f"{pod.namespace}/{volume.pvc_claim_name}"
                count = self.pvc_ref_counts.get(key, 0) + sign
                if count:
                    self.pvc_ref_counts[key] = count
                else:
                    self.pvc_ref_counts.pop(key, None)
        self.generation = next_generation()

    def _update_ports(self, ports: Sequence[ContainerPort], sign: int) -> None:
        for port in ports:
            if sign > 0:
                self.used_ports.add(port.host_ip, port.protocol, port.host_port)
            else:
                self.used_ports.remove(port.host_ip, port.protocol, port.host_port)

    def snapshot(self) -> NodeInfo:
        """A copy for the scheduler's snapshot; pod infos are shared, as upstream shares them."""
        return self._copy_with(
            list(self.pods),
            list(self.pods_with_affinity),
            list(self.pods_with_required_anti_affinity),
        )

    clone = snapshot

    def _copy_with(
        self,
        pods: list[PodInfo],
        pods_with_affinity: list[PodInfo],
        pods_with_required_anti_affinity: list[PodInfo],
    ) -> NodeInfo:
        """This node's copy holding these pods; its counters copied as they are."""
        copy = NodeInfo.__new__(NodeInfo)
        copy.node = self.node
        copy.name = self.name
        copy.pods = pods
        copy.pods_with_affinity = pods_with_affinity
        copy.pods_with_required_anti_affinity = pods_with_required_anti_affinity
        copy.used_ports = self.used_ports.clone()
        copy.requested = self.requested.clone()
        copy.non_zero_requested = self.non_zero_requested.clone()
        copy.allocatable = self.allocatable.clone()
        copy.image_states = self.image_states
        copy.pvc_ref_counts = dict(self.pvc_ref_counts)
        copy.generation = self.generation
        return copy

    def __repr__(self) -> str:
        return f"NodeInfo({self.name}, pods={[p.key for p in self.pods]})"


# ---------------------------------------------------------------------------------------------
# Cluster events and queueing hints


class ActionType(IntFlag):
    """What happened to an object (upstream ``ActionType``)."""

    Add = 1 << 0
    Delete = 1 << 1
    UpdateNodeAllocatable = 1 << 2
    UpdateNodeLabel = 1 << 3
    UpdateNodeTaint = 1 << 4
    UpdateNodeCondition = 1 << 5
    UpdateNodeAnnotation = 1 << 6
    UpdatePodLabel = 1 << 7
    UpdatePodScaleDown = 1 << 8
    UpdatePodToleration = 1 << 9
    UpdatePodSchedulingGatesEliminated = 1 << 10
    UpdatePodGeneratedResourceClaim = 1 << 11
    UpdatePodOther = 1 << 12
    Update = (
        UpdateNodeAllocatable
        | UpdateNodeLabel
        | UpdateNodeTaint
        | UpdateNodeCondition
        | UpdateNodeAnnotation
        | UpdatePodLabel
        | UpdatePodScaleDown
        | UpdatePodToleration
        | UpdatePodSchedulingGatesEliminated
        | UpdatePodGeneratedResourceClaim
        | UpdatePodOther
    )
    All = (1 << 13) - 1


class EventResource:
    """The kinds of object an event is about (upstream ``EventResource``)."""

    Pod = "Pod"
    # Events of a pod are labelled by whether it is bound (AssignedPod) or not (UnschedulablePod);
    # a plugin registering for Pod receives both.
    AssignedPod = "AssignedPod"
    UnschedulablePod = "UnschedulablePod"
    Node = "Node"
    PersistentVolume = "PersistentVolume"
    PersistentVolumeClaim = "PersistentVolumeClaim"
    CSINode = "CSINode"
    CSIDriver = "CSIDriver"
    CSIStorageCapacity = "CSIStorageCapacity"
    StorageClass = "StorageClass"
    VolumeAttachment = "VolumeAttachment"
    Namespace = "Namespace"
    WildCard = "*"


_ACTION_LABELS = {
    ActionType.Add: "Add",
    ActionType.Delete: "Delete",
    ActionType.Update: "Update",
    ActionType.All: "All",
}


@dataclass(frozen=True, slots=True)
class ClusterEvent:
    resource: str
    action_type: ActionType
    custom_label: str = ""

    def is_wildcard(self) -> bool:
        return self.resource == EventResource.WildCard and self.action_type == ActionType.All

    def match(self, incoming: ClusterEvent) -> bool:
        """Whether this registered event covers ``incoming`` (upstream ``ClusterEvent.Match``)."""
        if self.is_wildcard():
            return True
        resource_matches = (
            self.resource == incoming.resource
            or self.resource == EventResource.WildCard
            or (
                self.resource == EventResource.Pod
                and incoming.resource in (EventResource.AssignedPod, EventResource.UnschedulablePod)
            )
        )
        return resource_matches and bool(self.action_type & incoming.action_type)

    def label(self) -> str:
        if self.custom_label:
            return self.custom_label
        action = _ACTION_LABELS.get(self.action_type)
        if action is None:
            action = "|".join(a.name for a in ActionType if a & self.action_type and a.name)
            action = action.replace("UpdateNode", "").replace("UpdatePod", "")
            action = action + "Change"
        return f"{self.resource}{action}"


# Events the scheduler itself raises (upstream's framework/events.go).
EVENT_UNSCHEDULABLE_TIMEOUT = ClusterEvent(
    EventResource.WildCard, ActionType.All, "UnschedulableTimeout"
)
EVENT_FORCE_ACTIVATE = ClusterEvent(EventResource.WildCard, ActionType.All, "ForceActivate")
EVENT_ASSIGNED_POD_ADD = ClusterEvent(EventResource.AssignedPod, ActionType.Add)
EVENT_ASSIGNED_POD_DELETE = ClusterEvent(EventResource.AssignedPod, ActionType.Delete)
EVENT_NODE_ADD = ClusterEvent(EventResource.Node, ActionType.Add)


class QueueingHint(IntEnum):
    QueueSkip = 0
    Queue = 1


# (pod being scheduled, old object, new object) -> hint; errors count as Queue.
QueueingHintFn = Callable[[Pod, object, object], QueueingHint]


@dataclass(frozen=True, slots=True)
class ClusterEventWithHint:
    event: ClusterEvent
    queueing_hint_fn: QueueingHintFn | None = None


@dataclass(slots=True)
class QueuedPodInfo:
    """A pod in the scheduling queue, with its attempts and why it was last rejected."""

    pod_info: PodInfo
    timestamp: float = 0.0
    attempts: int = 0
    unschedulable_count: int = 0
    consecutive_errors_count: int = 0
    initial_attempt_timestamp: float | None = None
    unschedulable_plugins: set[str] = field(default_factory=set)
    pending_plugins: set[str] = field(default_factory=set)
    gating_plugin: str = ""
    gating_plugin_events: list[ClusterEvent] = field(default_factory=list)
    backoff_expiration: float | None = None
    # When the queue took ``timestamp``, as a count: orders pods whose timestamps are equal (in
    # virtual time many pods are queued at one instant), as distinct nanoseconds do upstream.
    stamp: int = 0

    @property
    def pod(self) -> Pod:
        return self.pod_info.pod

    @property
    def key(self) -> str:
        return self.pod_info.pod.key

    @property
    def gated(self) -> bool:
        return bool(self.gating_plugin)


# ---------------------------------------------------------------------------------------------
# Diagnoses


class NodeToStatus:
    """Each rejected node's status; nodes not listed share ``absent_nodes_status``."""

    __slots__ = ("_statuses", "absent_nodes_status")

    def __init__(self, statuses: dict[str, Status] | None = None) -> None:
        self._statuses: dict[str, Status] = statuses or {}
        self.absent_nodes_status = Status(Code.UnschedulableAndUnresolvable)

    def get(self, node_name: str) -> Status:
        return self._statuses.get(node_name, self.absent_nodes_status)

    def set(self, node_name: str, status: Status) -> None:
        self._statuses[node_name] = status

    def update(self, statuses: Iterable[tuple[str, Status]]) -> None:
        """``set`` for each (node name, status), in order."""
        self._statuses.update(statuses)

    def items(self) -> Iterator[tuple[str, Status]]:
        return iter(self._statuses.items())

    def __len__(self) -> int:
        return len(self._statuses)

    def nodes_for_status_code(self, nodes: list[NodeInfo], code: Code) -> list[NodeInfo]:
        """The nodes whose status has this code, absent ones included when they qualify."""
        get = self._statuses.get
        if self.absent_nodes_status.code == code:
            absent = self.absent_nodes_status
            return [n for n in nodes if get(n.name, absent).code == code]
        return [n for n in nodes if (status := get(n.name)) is not None and status.code == code]


@dataclass(slots=True)
class Diagnosis:
    node_to_status: NodeToStatus = field(default_factory=NodeToStatus)
    unschedulable_plugins: set[str] = field(default_factory=set)
    pending_plugins: set[str] = field(default_factory=set)
    pre_filter_msg: str = ""
    post_filter_msg: str = ""


NO_NODE_AVAILABLE_MSG = "0/{} nodes are available"


class FitError(Exception):
    """No node fits the pod; ``str()`` is upstream's "0/N nodes are available: ..." message."""

    def __init__(self, pod: Pod, num_all_nodes: int, diagnosis: Diagnosis) -> None:
        super().__init__()
        self.pod = pod
        self.num_all_nodes = num_all_nodes
        self.diagnosis = diagnosis

    def __str__(self) -> str:
        message = NO_NODE_AVAILABLE_MSG.format(self.num_all_nodes) + ":"
        diagnosis = self.diagnosis
        if diagnosis.pre_filter_msg:
            message += f" {diagnosis.pre_filter_msg}."
        else:
            histogram: dict[str, int] = {}
            # Counted per distinct status object: nodes rejected alike share one.
            statuses = list(map(itemgetter(1), diagnosis.node_to_status.items()))
            distinct = dict(zip(map(id, statuses), statuses, strict=True))
            for key, count in Counter(map(id, statuses)).items():
                for reason in distinct[key].reasons:
                    histogram[reason] = histogram.get(reason, 0) + count
            absent = self.num_all_nodes - len(diagnosis.node_to_status)
            if absent > 0:
                for reason in diagnosis.node_to_status.absent_nodes_status.reasons:
                    histogram[reason] = histogram.get(reason, 0) + absent
            reasons = sorted(f"{count} {reason}" for reason, count in histogram.items())
            if reasons:
                message += f" {', '.join(reasons)}."
        if diagnosis.post_filter_msg:
            message += f" {diagnosis.post_filter_msg}"
        return message
