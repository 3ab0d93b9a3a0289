"""Typed views of the Kubernetes objects the scheduler reads.

Mirrors the fields of k8s.io/api/core/v1 (types.go), policy/v1, scheduling/v1 and storage/v1
that kube-scheduler uses, with Python names. Objects are built once by ``schedviz.kube.decode``
from a validated manifest and then treated as immutable: a change is a new object
(``dataclasses.replace``), as it is a new resourceVersion in the API server. ``manifest`` keeps the
original document for display and export.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from schedviz.kube.crds import PodGroup
from schedviz.kube.quantity import Quantity

ResourceList = dict[str, Quantity]
Manifest = dict[str, Any]

# Resource names (k8s.io/api/core/v1).
RESOURCE_CPU = "cpu"
RESOURCE_MEMORY = "memory"
RESOURCE_EPHEMERAL_STORAGE = "ephemeral-storage"
RESOURCE_PODS = "pods"

# Taint effects and toleration operators.
TAINT_EFFECT_NO_SCHEDULE = "NoSchedule"
TAINT_EFFECT_PREFER_NO_SCHEDULE = "PreferNoSchedule"
TAINT_EFFECT_NO_EXECUTE = "NoExecute"
TOLERATION_OP_EXISTS = "Exists"
TOLERATION_OP_EQUAL = "Equal"

# Well-known labels and taints.
LABEL_HOSTNAME = "kubernetes.io/hostname"
LABEL_TOPOLOGY_ZONE = "topology.kubernetes.io/zone"
LABEL_TOPOLOGY_REGION = "topology.kubernetes.io/region"
LABEL_FAILURE_DOMAIN_ZONE = "failure-domain.beta.kubernetes.io/zone"
LABEL_FAILURE_DOMAIN_REGION = "failure-domain.beta.kubernetes.io/region"
TAINT_NODE_UNSCHEDULABLE = "node.kubernetes.io/unschedulable"

DEFAULT_SCHEDULER_NAME = "default-scheduler"
PREEMPT_LOWER_PRIORITY = "PreemptLowerPriority"
PREEMPT_NEVER = "Never"

POD_PENDING = "Pending"
POD_RUNNING = "Running"
POD_SUCCEEDED = "Succeeded"
POD_FAILED = "Failed"


@dataclass(slots=True)
class LabelSelectorRequirement:
    key: str
    operator: str  # In, NotIn, Exists, DoesNotExist
    values: tuple[str, ...] = ()


@dataclass(slots=True)
class LabelSelector:
    """metav1.LabelSelector. ``None`` where a selector is optional means "nothing selected"."""

    match_labels: dict[str, str] = field(default_factory=dict)
    match_expressions: tuple[LabelSelectorRequirement, ...] = ()


@dataclass(slots=True)
class NodeSelectorRequirement:
    key: str
    operator: str  # In, NotIn, Exists, DoesNotExist, Gt, Lt
    values: tuple[str, ...] = ()


@dataclass(slots=True)
class NodeSelectorTerm:
    match_expressions: tuple[NodeSelectorRequirement, ...] = ()
    match_fields: tuple[NodeSelectorRequirement, ...] = ()


@dataclass(slots=True)
class NodeSelector:
    """Required node affinity: the terms are ORed."""

    node_selector_terms: tuple[NodeSelectorTerm, ...] = ()


@dataclass(slots=True)
class PreferredSchedulingTerm:
    weight: int
    preference: NodeSelectorTerm


@dataclass(slots=True)
class NodeAffinity:
    required: NodeSelector | None = None
    preferred: tuple[PreferredSchedulingTerm, ...] = ()


@dataclass(slots=True)
class PodAffinityTerm:
    topology_key: str
    label_selector: LabelSelector | None = None
    namespaces: tuple[str, ...] = ()
    namespace_selector: LabelSelector | None = None
    match_label_keys: tuple[str, ...] = ()
    mismatch_label_keys: tuple[str, ...] = ()


@dataclass(slots=True)
class WeightedPodAffinityTerm:
    weight: int
    pod_affinity_term: PodAffinityTerm


@dataclass(slots=True)
class PodAffinity:
    """Used for both podAffinity and podAntiAffinity."""

    required: tuple[PodAffinityTerm, ...] = ()
    preferred: tuple[WeightedPodAffinityTerm, ...] = ()


@dataclass(slots=True)
class Affinity:
    node_affinity: NodeAffinity | None = None
    pod_affinity: PodAffinity | None = None
    pod_anti_affinity: PodAffinity | None = None


@dataclass(slots=True)
class Toleration:
    key: str = ""
    operator: str = TOLERATION_OP_EQUAL
    value: str = ""
    effect: str = ""  # empty matches every effect
    toleration_seconds: int | None = None


@dataclass(slots=True)
class Taint:
    key: str
    effect: str
    value: str = ""

    def __str__(self) -> str:
        # v1.Taint.ToString: "key=value:effect", "key:effect" without a value.
        if self.value:
            return f"{self.key}={self.value}:{self.effect}"
        return f"{self.key}:{self.effect}"


@dataclass(slots=True)
class TopologySpreadConstraint:
    max_skew: int
    topology_key: str
    when_unsatisfiable: str  # DoNotSchedule, ScheduleAnyway
    label_selector: LabelSelector | None = None
    min_domains: int | None = None
    node_affinity_policy: str | None = None  # Honor, Ignore
    node_taints_policy: str | None = None  # Honor, Ignore
    match_label_keys: tuple[str, ...] = ()


@dataclass(slots=True)
class ContainerPort:
    container_port: int
    host_port: int = 0
    protocol: str = "TCP"
    host_ip: str = ""


@dataclass(slots=True)
class Container:
    name: str
    image: str = ""
    requests: ResourceList = field(default_factory=dict)
    limits: ResourceList = field(default_factory=dict)
    ports: tuple[ContainerPort, ...] = ()
    restart_policy: str | None = None  # "Always" makes an init container a sidecar


@dataclass(slots=True)
class ResourceRequirements:
    """v1.ResourceRequirements: a pod's ``spec.resources`` (pod-level resources) or a
    container status's ``resources`` (what the kubelet applied)."""

    requests: ResourceList = field(default_factory=dict)
    limits: ResourceList = field(default_factory=dict)


@dataclass(slots=True)
class ContainerStatus:
    """The parts of v1.ContainerStatus that count in the pod's requests once it runs (an
    in-place resize): ``resources`` (None when the status has none) and
    ``allocatedResources``."""

    name: str
    resources: ResourceRequirements | None = None
    allocated_resources: ResourceList = field(default_factory=dict)


@dataclass(slots=True)
class Volume:
    """A pod volume; only the sources the scheduler looks at are kept."""

    name: str
    pvc_claim_name: str | None = None
    pvc_read_only: bool = False
    source_kind: str = ""  # persistentVolumeClaim, gcePersistentDisk, awsElasticBlockStore, ...
    source: dict[str, Any] = field(default_factory=dict)


@dataclass(slots=True)
class PodCondition:
    type: str
    status: str
    reason: str = ""
    message: str = ""


@dataclass(slots=True)
class OwnerReference:
    kind: str
    name: str
    uid: str = ""
    controller: bool = False


@dataclass(slots=True)
class Pod:
    name: str
    namespace: str = "default"
    uid: str = ""
    labels: dict[str, str] = field(default_factory=dict)
    annotations: dict[str, str] = field(default_factory=dict)
    owner_references: tuple[OwnerReference, ...] = ()
    creation_timestamp: str = ""
    deletion_timestamp: str | None = None
    # spec
    node_name: str = ""
    scheduler_name: str = DEFAULT_SCHEDULER_NAME
    priority: int | None = None
    priority_class_name: str = ""
    preemption_policy: str | None = None
    node_selector: dict[str, str] = field(default_factory=dict)
    affinity: Affinity | None = None
    tolerations: tuple[Toleration, ...] = ()
    topology_spread_constraints: tuple[TopologySpreadConstraint, ...] = ()
    scheduling_gates: tuple[str, ...] = ()
    containers: tuple[Container, ...] = ()
    init_containers: tuple[Container, ...] = ()
    overhead: ResourceList = field(default_factory=dict)
    resources: ResourceRequirements | None = None  # pod-level resources
    volumes: tuple[Volume, ...] = ()
    host_network: bool = False
    runtime_class_name: str = ""
    active_deadline_seconds: int | None = None
    # status
    phase: str = POD_PENDING
    nominated_node_name: str = ""
    conditions: tuple[PodCondition, ...] = ()
    container_statuses: tuple[ContainerStatus, ...] = ()
    init_container_statuses: tuple[ContainerStatus, ...] = ()
    manifest: Manifest = field(default_factory=dict, repr=False, compare=False)
    # What the admission plugins changed when the pod was created, one line each
    # ("LimitRanger set requests.cpu=1 on container app (LimitRange limits)").
    admitted_changes: tuple[str, ...] = field(default=(), repr=False, compare=False)

    @property
    def key(self) -> str:
        """``namespace/name``, the key the scheduler's cache and queue use."""
        return f"{self.namespace}/{self.name}"

    @property
    def effective_priority(self) -> int:
        """corev1helpers.PodPriority: spec.priority, or 0 when unset."""
        return self.priority if self.priority is not None else 0


@dataclass(slots=True)
class ContainerImage:
    names: tuple[str, ...]
    size_bytes: int = 0


@dataclass(slots=True)
class NodeCondition:
    type: str
    status: str


@dataclass(slots=True)
class Node:
    name: str
    uid: str = ""
    labels: dict[str, str] = field(default_factory=dict)
    annotations: dict[str, str] = field(default_factory=dict)
    unschedulable: bool = False
    taints: tuple[Taint, ...] = ()
    capacity: ResourceList = field(default_factory=dict)
    allocatable: ResourceList = field(default_factory=dict)
    images: tuple[ContainerImage, ...] = ()
    conditions: tuple[NodeCondition, ...] = ()
    creation_timestamp: str = ""
    manifest: Manifest = field(default_factory=dict, repr=False, compare=False)

    @property
    def key(self) -> str:
        return self.name


@dataclass(slots=True)
class Namespace:
    name: str
    labels: dict[str, str] = field(default_factory=dict)
    manifest: Manifest = field(default_factory=dict, repr=False, compare=False)

    @property
    def key(self) -> str:
        return self.name


@dataclass(slots=True)
class PriorityClass:
    name: str
    value: int
    global_default: bool = False
    preemption_policy: str = PREEMPT_LOWER_PRIORITY
    description: str = ""
    manifest: Manifest = field(default_factory=dict, repr=False, compare=False)

    @property
    def key(self) -> str:
        return self.name


@dataclass(slots=True)
class PodDisruptionBudget:
    name: str
    namespace: str = "default"
    selector: LabelSelector | None = None
    min_available: int | str | None = None
    max_unavailable: int | str | None = None
    disruptions_allowed: int = 0
    manifest: Manifest = field(default_factory=dict, repr=False, compare=False)

    @property
    def key(self) -> str:
        return f"{self.namespace}/{self.name}"


@dataclass(slots=True)
class PersistentVolume:
    name: str
    capacity: ResourceList = field(default_factory=dict)
    access_modes: tuple[str, ...] = ()
    storage_class_name: str = ""
    node_affinity: NodeSelector | None = None
    claim_ref: str | None = None  # "namespace/name" of the bound claim
    phase: str = "Available"
    csi_driver: str = ""
    labels: dict[str, str] = field(default_factory=dict)
    manifest: Manifest = field(default_factory=dict, repr=False, compare=False)

    @property
    def key(self) -> str:
        return self.name


@dataclass(slots=True)
class PersistentVolumeClaim:
    name: str
    namespace: str = "default"
    storage_class_name: str | None = None
    access_modes: tuple[str, ...] = ()
    requests: ResourceList = field(default_factory=dict)
    volume_name: str = ""
    phase: str = "Pending"
    annotations: dict[str, str] = field(default_factory=dict)
    manifest: Manifest = field(default_factory=dict, repr=False, compare=False)

    @property
    def key(self) -> str:
        return f"{self.namespace}/{self.name}"


@dataclass(slots=True)
class StorageClass:
    name: str
    provisioner: str = ""
    volume_binding_mode: str = "Immediate"  # or WaitForFirstConsumer
    allowed_topologies: tuple[NodeSelectorTerm, ...] = ()
    manifest: Manifest = field(default_factory=dict, repr=False, compare=False)

    @property
    def key(self) -> str:
        return self.name


@dataclass(slots=True)
class CSINodeDriver:
    name: str
    node_id: str = ""
    allocatable_count: int | None = None


@dataclass(slots=True)
class CSINode:
    name: str
    drivers: tuple[CSINodeDriver, ...] = ()
    manifest: Manifest = field(default_factory=dict, repr=False, compare=False)

    @property
    def key(self) -> str:
        return self.name


@dataclass(slots=True)
class Service:
    """A Service: only its selector matters to the scheduler (default topology spreading)."""

    name: str
    namespace: str = "default"
    uid: str = ""
    labels: dict[str, str] = field(default_factory=dict)
    # None: a Service without selector, which selects nothing.
    selector: dict[str, str] | None = None
    manifest: Manifest = field(default_factory=dict, repr=False, compare=False)

    @property
    def key(self) -> str:
        return f"{self.namespace}/{self.name}"


@dataclass(slots=True)
class LimitRangeItem:
    """v1.LimitRangeItem, defaulted (SetDefaults_LimitRangeItem: a Container item's ``max``
    is its default limit, its default limit its default request, its ``min`` its default
    request, where those are not given)."""

    type: str  # Container, Pod, PersistentVolumeClaim
    max: ResourceList = field(default_factory=dict)
    min: ResourceList = field(default_factory=dict)
    default: ResourceList = field(default_factory=dict)
    default_request: ResourceList = field(default_factory=dict)
    max_limit_request_ratio: ResourceList = field(default_factory=dict)


@dataclass(slots=True)
class LimitRange:
    """A LimitRange (v1): what the LimitRanger admission plugin defaults and enforces."""

    name: str
    namespace: str = "default"
    limits: tuple[LimitRangeItem, ...] = ()
    manifest: Manifest = field(default_factory=dict, repr=False, compare=False)

    @property
    def key(self) -> str:
        return f"{self.namespace}/{self.name}"


@dataclass(slots=True)
class RuntimeClass:
    """A RuntimeClass (node.k8s.io/v1): the overhead and scheduling the RuntimeClass admission
    plugin gives the pods that name it. ``overhead`` is None when ``overhead.podFixed`` is
    not set, ``node_selector`` None when ``scheduling`` has none."""

    name: str
    handler: str = ""
    overhead: ResourceList | None = None
    node_selector: dict[str, str] | None = None
    tolerations: tuple[Toleration, ...] = ()
    manifest: Manifest = field(default_factory=dict, repr=False, compare=False)

    @property
    def key(self) -> str:
        return self.name


@dataclass(slots=True)
class ScopedResourceSelectorRequirement:
    scope_name: str
    operator: str  # In, NotIn, Exists, DoesNotExist
    values: tuple[str, ...] = ()


@dataclass(slots=True)
class ResourceQuota:
    """A ResourceQuota (v1): ``hard`` as its ``status.hard`` holds it once the quota
    controller has seen it; the usage is counted by the admission plugin."""

    name: str
    namespace: str = "default"
    hard: ResourceList = field(default_factory=dict)
    scopes: tuple[str, ...] = ()
    scope_selector: tuple[ScopedResourceSelectorRequirement, ...] = ()
    manifest: Manifest = field(default_factory=dict, repr=False, compare=False)

    @property
    def key(self) -> str:
        return f"{self.namespace}/{self.name}"


@dataclass(slots=True)
class Workload:
    """What the workload controllers read of their object: the pod template (its manifest,
    metadata and spec, as the pods are made from it), the selector, the counts. One subclass per
    kind, so that listers find them by kind name as upstream's informers do."""

    name: str
    namespace: str = "default"
    uid: str = ""
    labels: dict[str, str] = field(default_factory=dict)
    annotations: dict[str, str] = field(default_factory=dict)
    owner_references: tuple[OwnerReference, ...] = ()
    # A LabelSelector (apps/v1, batch/v1) or a label map (ReplicationController).
    selector: LabelSelector | dict[str, str] | None = None
    template: Manifest = field(default_factory=dict)
    replicas: int = 1
    manifest: Manifest = field(default_factory=dict, repr=False, compare=False)

    @property
    def key(self) -> str:
        return f"{self.namespace}/{self.name}"

    @property
    def kind(self) -> str:
        return type(self).__name__


@dataclass(slots=True)
class Deployment(Workload):
    pass


@dataclass(slots=True)
class ReplicaSet(Workload):
    pass


@dataclass(slots=True)
class ReplicationController(Workload):
    pass


@dataclass(slots=True)
class StatefulSet(Workload):
    pod_management_policy: str = "OrderedReady"  # or Parallel
    service_name: str = ""
    # The volumeClaimTemplates' manifests.
    volume_claim_templates: tuple[Manifest, ...] = ()


@dataclass(slots=True)
class DaemonSet(Workload):
    pass


@dataclass(slots=True)
class Job(Workload):
    parallelism: int = 1
    completions: int | None = None
    completion_mode: str = "NonIndexed"  # or Indexed


WORKLOAD_KINDS = (Deployment, ReplicaSet, ReplicationController, StatefulSet, DaemonSet, Job)


KubeObject = (
    Pod
    | Node
    | Namespace
    | PriorityClass
    | PodDisruptionBudget
    | PersistentVolume
    | PersistentVolumeClaim
    | StorageClass
    | CSINode
    | PodGroup
    | Service
    | LimitRange
    | RuntimeClass
    | ResourceQuota
    | Deployment
    | ReplicaSet
    | ReplicationController
    | StatefulSet
    | DaemonSet
    | Job
)
