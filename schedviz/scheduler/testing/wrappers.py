"""Fluent builders for pods and nodes in tests.

Mirrors pkg/scheduler/testing/wrappers.go (``st.MakePod()``, ``st.MakeNode()``) so upstream's test
tables translate line by line: ``make_pod().name("p").req({"cpu": "1"}).obj()``.
"""

from __future__ import annotations

import dataclasses
from typing import Any

from schedviz.kube.objects import (
    Affinity,
    Container,
    ContainerImage,
    ContainerPort,
    ContainerStatus,
    LabelSelector,
    LabelSelectorRequirement,
    Node,
    NodeAffinity,
    NodeSelector,
    NodeSelectorRequirement,
    NodeSelectorTerm,
    Pod,
    PodAffinity,
    PodAffinityTerm,
    PodCondition,
    PreferredSchedulingTerm,
    ResourceRequirements,
    Taint,
    Toleration,
    TopologySpreadConstraint,
    Volume,
    WeightedPodAffinityTerm,
)
from schedviz.kube.quantity import Quantity


def resource_list(values: dict[str, str | int]) -> dict[str, Quantity]:
    return {name: Quantity.parse(str(value)) for name, value in values.items()}


def label_selector(
    match_labels: dict[str, str] | None = None,
    expressions: list[tuple[str, str, list[str]]] | None = None,
) -> LabelSelector:
    return LabelSelector(
        match_labels=dict(match_labels or {}),
        match_expressions=tuple(
            LabelSelectorRequirement(k, op, tuple(v)) for k, op, v in expressions or []
        ),
    )


class PodWrapper:
    def __init__(self) -> None:
        self._pod = Pod(name="")

    def obj(self) -> Pod:
        return dataclasses.replace(self._pod)

    def _set(self, **changes: Any) -> PodWrapper:
        self._pod = dataclasses.replace(self._pod, **changes)
        return self

    def name(self, name: str) -> PodWrapper:
        return self._set(name=name)

    def namespace(self, namespace: str) -> PodWrapper:
        return self._set(namespace=namespace)

    def uid(self, uid: str) -> PodWrapper:
        return self._set(uid=uid)

    def node(self, node_name: str) -> PodWrapper:
        return self._set(node_name=node_name, phase="Running")

    def scheduler_name(self, name: str) -> PodWrapper:
        return self._set(scheduler_name=name)

    def priority(self, value: int) -> PodWrapper:
        return self._set(priority=value)

    def preemption_policy(self, policy: str) -> PodWrapper:
        return self._set(preemption_policy=policy)

    def nominated_node_name(self, name: str) -> PodWrapper:
        return self._set(nominated_node_name=name)

    def creation_timestamp(self, value: str) -> PodWrapper:
        return self._set(creation_timestamp=value)

    def label(self, key: str, value: str) -> PodWrapper:
        return self._set(labels={**self._pod.labels, key: value})

    def labels(self, labels: dict[str, str]) -> PodWrapper:
        return self._set(labels={**self._pod.labels, **labels})

    def annotation(self, key: str, value: str) -> PodWrapper:
        return self._set(annotations={**self._pod.annotations, key: value})

    def container(self, image: str, name: str = "") -> PodWrapper:
        name = name or f"con{len(self._pod.containers)}"
        return self._set(containers=(*self._pod.containers, Container(name=name, image=image)))

    def init_container_image(self, image: str) -> PodWrapper:
        init = Container(name=f"init{len(self._pod.init_containers)}", image=image)
        return self._set(init_containers=(*self._pod.init_containers, init))

    def req(self, requests: dict[str, str | int]) -> PodWrapper:
        """Adds a container with these requests (``st.MakePod().Req``)."""
        container = Container(
            name=f"con{len(self._pod.containers)}", requests=resource_list(requests)
        )
        return self._set(containers=(*self._pod.containers, container))

    def init_req(self, requests: dict[str, str | int]) -> PodWrapper:
        container = Container(
            name=f"init{len(self._pod.init_containers)}", requests=resource_list(requests)
        )
        return self._set(init_containers=(*self._pod.init_containers, container))

    def sidecar_req(self, requests: dict[str, str | int]) -> PodWrapper:
        container = Container(
            name=f"sidecar{len(self._pod.init_containers)}",
            requests=resource_list(requests),
            restart_policy="Always",
        )
        return self._set(init_containers=(*self._pod.init_containers, container))

    def overhead(self, overhead: dict[str, str | int]) -> PodWrapper:
        return self._set(overhead=resource_list(overhead))

    def container_port(self, ports: list[ContainerPort]) -> PodWrapper:
        container = Container(name=f"con{len(self._pod.containers)}", ports=tuple(ports))
        return self._set(containers=(*self._pod.containers, container))

    def host_port(self, port: int, protocol: str = "TCP", host_ip: str = "") -> PodWrapper:
        return self.container_port([ContainerPort(port, port, protocol, host_ip)])

    def node_selector(self, selector: dict[str, str]) -> PodWrapper:
        return self._set(node_selector=dict(selector))

    def toleration(self, toleration: Toleration) -> PodWrapper:
        return self._set(tolerations=(*self._pod.tolerations, toleration))

    def tolerations(self, tolerations: list[Toleration]) -> PodWrapper:
        return self._set(tolerations=tuple(tolerations))

    def scheduling_gates(self, gates: list[str]) -> PodWrapper:
        return self._set(scheduling_gates=tuple(gates))

    def pvc(self, claim_name: str, name: str = "") -> PodWrapper:
        volume = Volume(
            name=name or claim_name,
            pvc_claim_name=claim_name,
            source_kind="persistentVolumeClaim",
            source={"claimName": claim_name},
        )
        return self._set(volumes=(*self._pod.volumes, volume))

    def volume(self, volume: Volume) -> PodWrapper:
        return self._set(volumes=(*self._pod.volumes, volume))

    def pod_resources(
        self, requests: dict[str, str | int], limits: dict[str, str | int] | None = None
    ) -> PodWrapper:
        """Pod-level ``spec.resources`` (``st.MakePod().Resources``)."""
        return self._set(
            resources=ResourceRequirements(resource_list(requests), resource_list(limits or {}))
        )

    def container_status(
        self,
        name: str,
        requests: dict[str, str | int] | None = None,
        allocated: dict[str, str | int] | None = None,
    ) -> PodWrapper:
        """A container status; ``requests`` None leaves out ``resources``."""
        status = ContainerStatus(
            name=name,
            resources=None if requests is None else ResourceRequirements(resource_list(requests)),
            allocated_resources=resource_list(allocated or {}),
        )
        return self._set(container_statuses=(*self._pod.container_statuses, status))

    def condition(self, type_: str, status: str, reason: str = "") -> PodWrapper:
        return self._set(conditions=(*self._pod.conditions, PodCondition(type_, status, reason)))

    def phase(self, phase: str) -> PodWrapper:
        return self._set(phase=phase)

    def _affinity(self) -> Affinity:
        return self._pod.affinity or Affinity()

    def node_affinity(self, node_affinity: NodeAffinity) -> PodWrapper:
        return self._set(
            affinity=dataclasses.replace(self._affinity(), node_affinity=node_affinity)
        )

    def node_affinity_in(self, key: str, values: list[str]) -> PodWrapper:
        term = NodeSelectorTerm(
            match_expressions=(NodeSelectorRequirement(key, "In", tuple(values)),)
        )
        return self.node_affinity(NodeAffinity(required=NodeSelector((term,))))

    def node_affinity_not_in(self, key: str, values: list[str]) -> PodWrapper:
        term = NodeSelectorTerm(
            match_expressions=(NodeSelectorRequirement(key, "NotIn", tuple(values)),)
        )
        return self.node_affinity(NodeAffinity(required=NodeSelector((term,))))

    def preferred_node_affinity(self, weight: int, term: NodeSelectorTerm) -> PodWrapper:
        current = self._affinity().node_affinity or NodeAffinity()
        updated = dataclasses.replace(
            current, preferred=(*current.preferred, PreferredSchedulingTerm(weight, term))
        )
        return self.node_affinity(updated)

    def pod_affinity(self, affinity: PodAffinity) -> PodWrapper:
        return self._set(affinity=dataclasses.replace(self._affinity(), pod_affinity=affinity))

    def pod_anti_affinity(self, affinity: PodAffinity) -> PodWrapper:
        return self._set(affinity=dataclasses.replace(self._affinity(), pod_anti_affinity=affinity))

    def pod_affinity_exists(self, key: str, topology_key: str, required: bool = True) -> PodWrapper:
        term = PodAffinityTerm(topology_key, label_selector(expressions=[(key, "Exists", [])]))
        current = self._affinity().pod_affinity or PodAffinity()
        if required:
            updated = dataclasses.replace(current, required=(*current.required, term))
        else:
            weighted = WeightedPodAffinityTerm(1, term)
            updated = dataclasses.replace(current, preferred=(*current.preferred, weighted))
        return self.pod_affinity(updated)

    def pod_anti_affinity_exists(
        self, key: str, topology_key: str, required: bool = True
    ) -> PodWrapper:
        term = PodAffinityTerm(topology_key, label_selector(expressions=[(key, "Exists", [])]))
        current = self._affinity().pod_anti_affinity or PodAffinity()
        if required:
            updated = dataclasses.replace(current, required=(*current.required, term))
        else:
            weighted = WeightedPodAffinityTerm(1, term)
            updated = dataclasses.replace(current, preferred=(*current.preferred, weighted))
        return self.pod_anti_affinity(updated)

    def spread_constraint(
        self,
        max_skew: int,
        topology_key: str,
        when_unsatisfiable: str,
        selector: LabelSelector | None,
        min_domains: int | None = None,
        node_affinity_policy: str | None = None,
        node_taints_policy: str | None = None,
        match_label_keys: tuple[str, ...] = (),
    ) -> PodWrapper:
        constraint = TopologySpreadConstraint(
            max_skew=max_skew,
            topology_key=topology_key,
            when_unsatisfiable=when_unsatisfiable,
            label_selector=selector,
            min_domains=min_domains,
            node_affinity_policy=node_affinity_policy,
            node_taints_policy=node_taints_policy,
            match_label_keys=match_label_keys,
        )
        return self._set(
            topology_spread_constraints=(*self._pod.topology_spread_constraints, constraint)
        )


class NodeWrapper:
    def __init__(self) -> None:
        self._node = Node(
            name="", allocatable=resource_list({"pods": 32}), capacity=resource_list({"pods": 32})
        )

    def obj(self) -> Node:
        return dataclasses.replace(self._node)

    def _set(self, **changes: Any) -> NodeWrapper:
        self._node = dataclasses.replace(self._node, **changes)
        return self

    def name(self, name: str) -> NodeWrapper:
        labels = {**self._node.labels}
        return self._set(name=name, labels=labels)

    def uid(self, uid: str) -> NodeWrapper:
        return self._set(uid=uid)

    def label(self, key: str, value: str) -> NodeWrapper:
        return self._set(labels={**self._node.labels, key: value})

    def labels(self, labels: dict[str, str]) -> NodeWrapper:
        return self._set(labels={**self._node.labels, **labels})

    def capacity(self, resources: dict[str, str | int]) -> NodeWrapper:
        """Capacity and allocatable alike, pods 32 unless given (``st.MakeNode().Capacity``)."""
        values = resource_list({"pods": 32, **resources})
        return self._set(capacity=values, allocatable=dict(values))

    def allocatable(self, resources: dict[str, str | int]) -> NodeWrapper:
        return self._set(allocatable=resource_list(resources))

    def taints(self, taints: list[Taint]) -> NodeWrapper:
        return self._set(taints=tuple(taints))

    def unschedulable(self, value: bool = True) -> NodeWrapper:
        return self._set(unschedulable=value)

    def images(self, images: dict[str, int]) -> NodeWrapper:
        return self._set(
            images=tuple(ContainerImage((name,), size) for name, size in images.items())
        )


def make_pod() -> PodWrapper:
    return PodWrapper()


def make_node() -> NodeWrapper:
    return NodeWrapper()
