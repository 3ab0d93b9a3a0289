"""Benchmark workloads, built like upstream's scheduler_perf test cases.

Mirrors kubernetes/kubernetes test/integration/scheduler_perf: the test cases in
``misc/performance-config.yaml`` (SchedulingBasic, PreemptionAsync, Unschedulable),
``affinity/performance-config.yaml`` (SchedulingNodeAffinity, SchedulingPodAntiAffinity) and
``topology_spreading/performance-config.yaml`` (TopologySpreading, PreferredTopologySpreading),
with the objects of ``templates/node-default.yaml`` and the pod templates they name. The objects
are built directly as ``schedviz.kube.objects`` dataclasses: decoding 5000 YAML nodes would cost
more than scheduling them.

What upstream's harness does and this follows:
- nodes are named ``scheduler-perf-`` plus five random characters and carry the
  ``kubernetes.io/hostname`` label (IntegrationTestNodePreparer); ``labelNodePrepareStrategy``
  gives the label values round-robin in the order the nodes are listed (by name);
- node-default.yaml sets capacity only; the API server defaults allocatable to it;
- pods are named from their template's ``generateName`` plus five random characters, in the
  namespace ``namespace-<op index>`` unless the test case names one;
- the Priority admission plugin is off in scheduler_perf, so templates set ``spec.priority``
  directly and the other pods have none (priority 0);
- ``churn`` ops (PreemptionAsync, Unschedulable) create one pod every 200 ms of wall time while
  the measured pods are scheduled; ``churn`` here is the factory the runner calls.

Sizes: each workload knows upstream's variants (5, 500 and 5000 nodes) and the CI threshold of
the 5000-node variant it is measured against. Deliberately different: no feature-gate variants
(async API calls, async preemption, queueing hints off) since the engine has one behaviour.
"""

from __future__ import annotations

import random
import uuid
from collections.abc import Callable
from dataclasses import dataclass

from schedviz.kube.objects import (
    LABEL_HOSTNAME,
    LABEL_TOPOLOGY_ZONE,
    Affinity,
    Container,
    ContainerPort,
    KubeObject,
    LabelSelector,
    Namespace,
    Node,
    NodeAffinity,
    NodeCondition,
    NodeSelector,
    NodeSelectorRequirement,
    NodeSelectorTerm,
    Pod,
    PodAffinity,
    PodAffinityTerm,
    TopologySpreadConstraint,
)
from schedviz.kube.quantity import Quantity
from schedviz.scheduler.apis.config.types import KubeSchedulerConfiguration

# k8s.io/apimachinery/pkg/util/rand: the characters of generated names.
_NAME_ALPHABET = "bcdfghjklmnpqrstvwxz2456789"
_PAUSE_IMAGE = "registry.k8s.io/pause:3.10.1"
CHURN_INTERVAL_SECONDS = 0.2


@dataclass
class Workload:
    """What one run needs: the cluster before measuring, the measured pods, and the rest."""

    name: str
    init_objects: list[KubeObject]
    measured_pods: list[Pod]
    config: KubeSchedulerConfiguration | None = None
    # Creates the n-th churn pod; called every ``churn_interval`` seconds of the measured phase.
    churn: Callable[[int], Pod] | None = None
    churn_interval: float = CHURN_INTERVAL_SECONDS

    @property
    def node_count(self) -> int:
        return sum(1 for obj in self.init_objects if isinstance(obj, Node))

    @property
    def init_pod_count(self) -> int:
        return sum(1 for obj in self.init_objects if isinstance(obj, Pod))


class _Names:
    """generateName: a prefix and five random characters, never twice in one namespace."""

    def __init__(self, rng: random.Random) -> None:
        self._rng = rng
        self._used: set[tuple[str, str]] = set()

    def __call__(self, prefix: str, namespace: str = "") -> str:
        while True:
            name = prefix + "".join(self._rng.choices(_NAME_ALPHABET, k=5))
            if (namespace, name) not in self._used:
                self._used.add((namespace, name))
                return name

    def uid(self) -> str:
        return str(uuid.UUID(int=self._rng.getrandbits(128), version=4))


def _quantities(cpu: str, memory: str) -> dict[str, Quantity]:
    return {"cpu": Quantity.parse(cpu), "memory": Quantity.parse(memory)}


def default_nodes(count: int, names: _Names, zone_values: tuple[str, ...] = ()) -> list[KubeObject]:
    """templates/node-default.yaml: 110 pods, 4 cpu, 32Gi, Ready; zones round-robin by name."""
    node_names = sorted(names("scheduler-perf-") for _ in range(count))
    capacity = {
        "pods": Quantity.parse("110"),
        "cpu": Quantity.parse("4"),
        "memory": Quantity.parse("32Gi"),
    }
    nodes: list[KubeObject] = []
    for index, name in enumerate(node_names):
        labels = {LABEL_HOSTNAME: name}
        if zone_values:
            labels[LABEL_TOPOLOGY_ZONE] = zone_values[index % len(zone_values)]
        nodes.append(
            Node(
                name=name,
                uid=names.uid(),
                labels=labels,
                capacity=dict(capacity),
                allocatable=dict(capacity),
                conditions=(NodeCondition("Ready", "True"),),
            )
        )
    return nodes


def _pod(
    names: _Names,
    prefix: str,
    namespace: str,
    *,
    cpu: str = "100m",
    memory: str = "500Mi",
    limits: bool = True,
    labels: dict[str, str] | None = None,
    priority: int | None = None,
    affinity: Affinity | None = None,
    spread: tuple[TopologySpreadConstraint, ...] = (),
) -> Pod:
    requests = _quantities(cpu, memory)
    container = Container(
        name="pause",
        image=_PAUSE_IMAGE,
        requests=requests,
        limits=dict(requests) if limits else {},
        ports=(ContainerPort(container_port=80),),
    )
    return Pod(
        name=names(prefix, namespace),
        namespace=namespace,
        uid=names.uid(),
        labels=dict(labels or {}),
        priority=priority,
        affinity=affinity,
        topology_spread_constraints=spread,
        containers=(container,),
    )


PodTemplate = Callable[[_Names, str], Pod]


def pod_default(names: _Names, namespace: str) -> Pod:
    """templates/pod-default.yaml: 100m cpu and 500Mi requested and limited."""
    return _pod(names, "pod-", namespace)


def pod_low_priority(names: _Names, namespace: str) -> Pod:
    """templates/pod-low-priority.yaml: 900m cpu, no priority (4 fill 3.6 of a node's 4 cpu)."""
    return _pod(names, "pod-", namespace, cpu="900m")


def pod_high_priority(names: _Names, namespace: str) -> Pod:
    """templates/pod-high-priority.yaml: priority 10, 3 cpu: it preempts three 900m pods."""
    return _pod(names, "pod-", namespace, cpu="3000m", priority=10)


def pod_high_priority_large_cpu(names: _Names, namespace: str) -> Pod:
    """templates/pod-high-priority-large-cpu.yaml: priority 10, 9 cpu: fits no node."""
    return _pod(names, "pod-h-", namespace, cpu="9", limits=False, priority=10)


def pod_with_node_affinity(names: _Names, namespace: str) -> Pod:
    """templates/pod-with-node-affinity.yaml: required zone In [zone1, zone2]."""
    requirement = NodeSelectorRequirement(LABEL_TOPOLOGY_ZONE, "In", ("zone1", "zone2"))
    affinity = Affinity(
        node_affinity=NodeAffinity(
            required=NodeSelector((NodeSelectorTerm(match_expressions=(requirement,)),))
        )
    )
    return _pod(names, "node-affinity-", namespace, affinity=affinity)


def pod_with_pod_anti_affinity(names: _Names, namespace: str) -> Pod:
    """templates/pod-with-pod-anti-affinity.yaml: color=green, one per host across sched-0/1."""
    term = PodAffinityTerm(
        topology_key=LABEL_HOSTNAME,
        label_selector=LabelSelector(match_labels={"color": "green"}),
        namespaces=("sched-1", "sched-0"),
    )
    affinity = Affinity(pod_anti_affinity=PodAffinity(required=(term,)))
    return _pod(
        names, "anti-affinity-pod-", namespace, labels={"color": "green"}, affinity=affinity
    )


def _spreading_pod(names: _Names, namespace: str, when_unsatisfiable: str) -> Pod:
    constraint = TopologySpreadConstraint(
        max_skew=5,
        topology_key=LABEL_TOPOLOGY_ZONE,
        when_unsatisfiable=when_unsatisfiable,
        label_selector=LabelSelector(match_labels={"color": "blue"}),
    )
    return _pod(names, "spreading-pod-", namespace, labels={"color": "blue"}, spread=(constraint,))


def pod_with_topology_spreading(names: _Names, namespace: str) -> Pod:
    """templates/pod-with-topology-spreading.yaml: maxSkew 5 over zones, DoNotSchedule."""
    return _spreading_pod(names, namespace, "DoNotSchedule")


def pod_with_preferred_topology_spreading(names: _Names, namespace: str) -> Pod:
    """templates/pod-with-preferred-topology-spreading.yaml: the same, ScheduleAnyway."""
    return _spreading_pod(names, namespace, "ScheduleAnyway")


def _namespaces(*names: str) -> list[KubeObject]:
    return [Namespace(name=name) for name in names]


def _pods(template: PodTemplate, names: _Names, namespace: str, count: int) -> list[Pod]:
    return [template(names, namespace) for _ in range(count)]


def _basic_shape(
    name: str,
    nodes: int,
    init_pods: int,
    measured_pods: int,
    seed: int,
    *,
    init_template: PodTemplate,
    measured_template: PodTemplate,
    zone_values: tuple[str, ...] = (),
) -> Workload:
    """createNodes, createPods (op 1, namespace-1), createPods measured (op 2, namespace-2)."""
    names = _Names(random.Random(seed))
    objects = default_nodes(nodes, names, zone_values)
    objects += _namespaces("namespace-1", "namespace-2")
    objects += _pods(init_template, names, "namespace-1", init_pods)
    measured = _pods(measured_template, names, "namespace-2", measured_pods)
    return Workload(name, objects, measured)


def scheduling_basic(nodes: int, init_pods: int, measured_pods: int, seed: int = 0) -> Workload:
    """misc: SchedulingBasic, pod-default.yaml for both the init and the measured pods."""
    return _basic_shape(
        "SchedulingBasic",
        nodes,
        init_pods,
        measured_pods,
        seed,
        init_template=pod_default,
        measured_template=pod_default,
    )


def scheduling_node_affinity(
    nodes: int, init_pods: int, measured_pods: int, seed: int = 0
) -> Workload:
    """affinity: SchedulingNodeAffinity, every node in zone1, pod-with-node-affinity.yaml."""
    return _basic_shape(
        "SchedulingNodeAffinity",
        nodes,
        init_pods,
        measured_pods,
        seed,
        init_template=pod_with_node_affinity,
        measured_template=pod_with_node_affinity,
        zone_values=("zone1",),
    )


_MOON_ZONES = ("moon-1", "moon-2", "moon-3")


def topology_spreading(nodes: int, init_pods: int, measured_pods: int, seed: int = 0) -> Workload:
    """topology_spreading: TopologySpreading, three zones, pod-default then spreading pods."""
    return _basic_shape(
        "TopologySpreading",
        nodes,
        init_pods,
        measured_pods,
        seed,
        init_template=pod_default,
        measured_template=pod_with_topology_spreading,
        zone_values=_MOON_ZONES,
    )


def preferred_topology_spreading(
    nodes: int, init_pods: int, measured_pods: int, seed: int = 0
) -> Workload:
    """topology_spreading: PreferredTopologySpreading, the ScheduleAnyway variant."""
    return _basic_shape(
        "PreferredTopologySpreading",
        nodes,
        init_pods,
        measured_pods,
        seed,
        init_template=pod_default,
        measured_template=pod_with_preferred_topology_spreading,
        zone_values=_MOON_ZONES,
    )


def scheduling_pod_anti_affinity(
    nodes: int, init_pods: int, measured_pods: int, seed: int = 0
) -> Workload:
    """affinity: SchedulingPodAntiAffinity, namespaces sched-0 (init) and sched-1 (measured)."""
    names = _Names(random.Random(seed))
    objects = default_nodes(nodes, names)
    objects += _namespaces("sched-0", "sched-1")
    objects += _pods(pod_with_pod_anti_affinity, names, "sched-0", init_pods)
    measured = _pods(pod_with_pod_anti_affinity, names, "sched-1", measured_pods)
    return Workload("SchedulingPodAntiAffinity", objects, measured)


def _churn_shape(
    name: str,
    nodes: int,
    init_pods: int,
    measured_pods: int,
    seed: int,
    *,
    init_template: PodTemplate,
    churn_template: PodTemplate,
) -> Workload:
    """createNodes, createPods (op 1), churn create every 200 ms (op 2), createPods measured
    (op 3, pod-default.yaml)."""
    names = _Names(random.Random(seed))
    objects = default_nodes(nodes, names)
    objects += _namespaces("namespace-1", "namespace-2", "namespace-3")
    objects += _pods(init_template, names, "namespace-1", init_pods)
    measured = _pods(pod_default, names, "namespace-3", measured_pods)

    def churn(_: int) -> Pod:
        return churn_template(names, "namespace-2")

    return Workload(name, objects, measured, churn=churn)


def preemption_async(nodes: int, init_pods: int, measured_pods: int, seed: int = 0) -> Workload:
    """misc: PreemptionAsync, low-priority 900m init pods, high-priority 3-cpu churn."""
    return _churn_shape(
        "PreemptionAsync",
        nodes,
        init_pods,
        measured_pods,
        seed,
        init_template=pod_low_priority,
        churn_template=pod_high_priority,
    )


def unschedulable(nodes: int, init_pods: int, measured_pods: int, seed: int = 0) -> Workload:
    """misc: Unschedulable, pod-default init pods, 9-cpu high-priority churn that never fits."""
    return _churn_shape(
        "Unschedulable",
        nodes,
        init_pods,
        measured_pods,
        seed,
        init_template=pod_default,
        churn_template=pod_high_priority_large_cpu,
    )


Builder = Callable[[int, int, int, int], Workload]


@dataclass(frozen=True)
class WorkloadSpec:
    name: str
    build: Builder
    # Upstream's variants: nodes -> (init pods, measured pods).
    sizes: dict[int, tuple[int, int]]
    # The upstream CI threshold (pods/s, 2026) and the variant it belongs to.
    threshold: int
    upstream_variant: str

    def counts(self, nodes: int) -> tuple[int, int]:
        """The init and measured pod counts for a node count: upstream's variant when there is
        one, else the 5000-node variant scaled to the node count."""
        if nodes in self.sizes:
            return self.sizes[nodes]
        init, measured = self.sizes[DEFAULT_NODES]
        return round(init * nodes / DEFAULT_NODES), max(1, round(measured * nodes / DEFAULT_NODES))


DEFAULT_NODES = 5000

WORKLOADS: dict[str, WorkloadSpec] = {
    spec.name: spec
    for spec in (
        WorkloadSpec(
            "SchedulingBasic",
            scheduling_basic,
            {5: (5, 10), 500: (500, 1000), 5000: (1000, 10000)},
            680,
            "5000Nodes_10000Pods",
        ),
        WorkloadSpec(
            "SchedulingNodeAffinity",
            scheduling_node_affinity,
            {5: (5, 10), 500: (500, 1000), 5000: (5000, 10000)},
            220,
            "5000Nodes_10000Pods",
        ),
        WorkloadSpec(
            "TopologySpreading",
            topology_spreading,
            {5: (10, 10), 500: (1000, 1000), 5000: (5000, 5000)},
            460,
            "5000Nodes_5000Pods",
        ),
        WorkloadSpec(
            "PreferredTopologySpreading",
            preferred_topology_spreading,
            {5: (10, 10), 500: (1000, 1000), 5000: (5000, 5000)},
            340,
            "5000Nodes_5000Pods",
        ),
        WorkloadSpec(
            "SchedulingPodAntiAffinity",
            scheduling_pod_anti_affinity,
            {5: (1, 4), 500: (100, 400), 5000: (1000, 2000)},
            60,
            "5000Nodes_2000Pods",
        ),
        WorkloadSpec(
            "PreemptionAsync",
            preemption_async,
            {5: (20, 5), 500: (2000, 500), 5000: (20000, 5000)},
            570,
            "5000Nodes",
        ),
        WorkloadSpec(
            "Unschedulable",
            unschedulable,
            {5: (1, 10), 500: (10, 1000), 5000: (100, 10000)},
            590,
            "5kNodes/100Init/10kPods",
        ),
    )
}
