"""Pod (v1): defaulted, prepared and validated as the API server creates it.

Mirrors pkg/apis/core/v1/defaults.go (SetDefaults_Pod, SetDefaults_PodSpec),
pkg/registry/core/pod/strategy.go (PrepareForCreate: the SchedulingGated condition, label keys
merged into selectors) and pkg/apis/core/validation/validation.go (ValidatePodCreate,
ValidatePodSpec). Deliberately different: the status (phase, nominatedNodeName, conditions) is
kept, where the API server resets it on create, since manifests here are often
``kubectl get -o yaml`` output of a running cluster.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from schedviz.kube import errors as fe
from schedviz.kube.decode.affinity import (
    merge_match_label_keys,
    merge_spread_match_label_keys,
    read_affinity,
    read_topology_spread_constraints,
    validate_affinity,
    validate_topology_spread_constraints,
)
from schedviz.kube.decode.containers import (
    ContainerSpec,
    read_container,
    read_volumes,
    validate_containers,
    validate_init_containers,
)
from schedviz.kube.decode.meta import deterministic_uid, read_meta, validate_labels
from schedviz.kube.decode.reader import Reader, child, index
from schedviz.kube.decode.resources import validate_resource_requirements
from schedviz.kube.decode.taints import read_tolerations, validate_tolerations
from schedviz.kube.decode.validation import (
    is_qualified_name,
    name_is_dns_subdomain,
    name_is_path_segment,
)
from schedviz.kube.errors import FieldError
from schedviz.kube.objects import (
    DEFAULT_SCHEDULER_NAME,
    POD_PENDING,
    PREEMPT_LOWER_PRIORITY,
    PREEMPT_NEVER,
    TOLERATION_OP_EQUAL,
    ContainerPort,
    Pod,
    PodCondition,
    Toleration,
)

_RESTART_POLICIES = ("Always", "OnFailure", "Never")
SCHEDULING_GATED_CONDITION = PodCondition(
    type="PodScheduled",
    status="False",
    reason="SchedulingGated",
    message="Scheduling is blocked due to non-empty scheduling gates",
)
_DNS_POLICIES = ("ClusterFirstWithHostNet", "ClusterFirst", "Default", "None")
_PREEMPTION_POLICIES = (PREEMPT_LOWER_PRIORITY, PREEMPT_NEVER)
_POD_PHASES = ("Pending", "Running", "Succeeded", "Failed", "Unknown")


def validate_preemption_policy(policy: str | None, path: str) -> list[FieldError]:
    if policy is None or policy in _PREEMPTION_POLICIES:
        return []
    if not policy:
        return [fe.required(path)]
    return [fe.not_supported(path, policy, _PREEMPTION_POLICIES)]


def _validate_scheduling_gates(gates: list[str], path: str) -> list[FieldError]:
    errs: list[FieldError] = []
    seen: set[str] = set()
    for i, gate in enumerate(gates):
        errs.extend(fe.invalid(index(path, i), gate, msg) for msg in is_qualified_name(gate))
        if gate in seen:
            errs.append(fe.duplicate(index(path, i), gate))
        seen.add(gate)
    return errs


def _default_host_network_ports(containers: list[ContainerSpec]) -> None:
    """SetDefaults_PodSpec: with hostNetwork, an unset hostPort is the containerPort."""
    for spec in containers:
        spec.container.ports = tuple(
            ContainerPort(p.container_port, p.host_port or p.container_port, p.protocol, p.host_ip)
            for p in spec.container.ports
        )


def _validate_host_network_ports(containers: list[ContainerSpec], path: str) -> list[FieldError]:
    errs: list[FieldError] = []
    for i, spec in enumerate(containers):
        for j, port in enumerate(spec.container.ports):
            if port.host_port != port.container_port:
                port_path = index(child(index(path, i), "ports"), j)
                errs.append(
                    fe.invalid(
                        child(port_path, "hostPort"),
                        port.host_port,
                        "must match `containerPort` when `hostNetwork` is true",
                    )
                )
    return errs


def _read_pod_status(
    r: Reader, doc: Mapping[str, Any]
) -> tuple[str, str, tuple[PodCondition, ...]]:
    status = r.obj(doc, "status", "")
    phase = r.string(status, "phase", "status") or POD_PENDING
    if phase not in _POD_PHASES:
        r.add(fe.not_supported("status.phase", phase, _POD_PHASES))
    nominated = r.string(status, "nominatedNodeName", "status")
    if nominated:
        r.extend(
            fe.invalid("status.nominatedNodeName", nominated, msg)
            for msg in name_is_path_segment(nominated, False)
        )
    conditions = tuple(
        PodCondition(
            type=r.string(c, "type", c_path),
            status=r.string(c, "status", c_path),
            reason=r.string(c, "reason", c_path),
            message=r.string(c, "message", c_path),
        )
        for c_path, c in r.maps(status, "conditions", "status")
    )
    return phase, nominated, conditions


def decode_pod(r: Reader, doc: Mapping[str, Any]) -> Pod:
    """Defaulting (SetDefaults_Pod, SetDefaults_PodSpec), PrepareForCreate, ValidatePodCreate."""
    meta = read_meta(r, doc, namespaced=True, name_fn=name_is_path_segment)
    spec = r.obj(doc, "spec", "")
    sp = "spec"
    volumes, volume_errs = read_volumes(r, spec, sp)
    containers = [read_container(r, c, p) for p, c in r.maps(spec, "containers", sp)]
    init_containers = [read_container(r, c, p) for p, c in r.maps(spec, "initContainers", sp)]
    host_network = r.boolean(spec, "hostNetwork", sp)
    if host_network:
        _default_host_network_ports(containers)
        _default_host_network_ports(init_containers)
    restart_policy = r.string(spec, "restartPolicy", sp) or "Always"
    dns_policy = r.string(spec, "dnsPolicy", sp) or "ClusterFirst"
    node_selector = r.str_map(spec, "nodeSelector", sp)
    affinity = merge_match_label_keys(read_affinity(r, spec, sp), meta.labels)
    gates = [r.string(g, "name", p) for p, g in r.maps(spec, "schedulingGates", sp)]
    spread = merge_spread_match_label_keys(
        read_topology_spread_constraints(r, spec, sp), meta.labels
    )
    node_name = r.string(spec, "nodeName", sp)
    tolerations = read_tolerations(r, spec, sp)
    priority_class_name = r.string(spec, "priorityClassName", sp)
    priority = r.int32(spec, "priority", sp)
    preemption_policy = r.optional_str(spec, "preemptionPolicy", sp)
    overhead = r.resources(spec, "overhead", sp)
    phase, nominated, conditions = _read_pod_status(r, doc)
    if gates and not any(c.type == "PodScheduled" for c in conditions):
        conditions += (SCHEDULING_GATED_CONDITION,)  # applySchedulingGatedCondition

    r.extend(volume_errs)
    r.extend(validate_containers(containers, child(sp, "containers")))
    r.extend(validate_init_containers(init_containers, containers, child(sp, "initContainers")))
    if host_network:
        r.extend(_validate_host_network_ports(containers, child(sp, "containers")))
    if restart_policy not in _RESTART_POLICIES:
        r.add(fe.not_supported(child(sp, "restartPolicy"), restart_policy, _RESTART_POLICIES))
    if dns_policy not in _DNS_POLICIES:
        r.add(fe.not_supported(child(sp, "dnsPolicy"), dns_policy, _DNS_POLICIES))
    r.extend(validate_labels(node_selector, child(sp, "nodeSelector")))
    r.extend(validate_affinity(affinity, child(sp, "affinity")))
    r.extend(_validate_scheduling_gates(gates, child(sp, "schedulingGates")))
    r.extend(validate_topology_spread_constraints(spread, child(sp, "topologySpreadConstraints")))
    if node_name:
        r.extend(
            fe.invalid(child(sp, "nodeName"), node_name, msg)
            for msg in name_is_path_segment(node_name, False)
        )
    r.extend(validate_tolerations(tolerations, child(sp, "tolerations")))
    if priority_class_name:
        r.extend(
            fe.invalid(child(sp, "priorityClassName"), priority_class_name, msg)
            for msg in name_is_dns_subdomain(priority_class_name, False)
        )
    r.extend(validate_preemption_policy(preemption_policy, child(sp, "preemptionPolicy")))
    if overhead:
        r.extend(validate_resource_requirements({}, overhead, child(sp, "overhead")))
    for list_name, specs in (("containers", containers), ("initContainers", init_containers)):
        for i, c in enumerate(specs):
            if c.container.image != c.container.image.strip():
                r.add(
                    fe.invalid(
                        child(index(child(sp, list_name), i), "image"),
                        c.container.image,
                        "must not have leading or trailing whitespace",
                    )
                )
    if spec.get("ephemeralContainers"):
        r.add(fe.forbidden(child(sp, "ephemeralContainers"), "cannot be set on create"))
    if node_name and gates:
        r.add(
            fe.forbidden(
                child(sp, "nodeName"), "cannot be set until all schedulingGates have been cleared"
            )
        )

    return Pod(
        name=meta.name,
        namespace=meta.namespace,
        uid=meta.uid or deterministic_uid("Pod", meta.namespace, meta.name),
        labels=meta.labels,
        annotations=meta.annotations,
        owner_references=meta.owner_references,
        creation_timestamp=meta.creation_timestamp,
        deletion_timestamp=meta.deletion_timestamp,
        node_name=node_name,
        scheduler_name=r.string(spec, "schedulerName", sp) or DEFAULT_SCHEDULER_NAME,
        priority=priority,
        priority_class_name=priority_class_name,
        preemption_policy=preemption_policy,
        node_selector=node_selector,
        affinity=affinity,
        tolerations=tuple(
            Toleration(
                t.key, t.operator or TOLERATION_OP_EQUAL, t.value, t.effect, t.toleration_seconds
            )
            for t in tolerations
        ),
        topology_spread_constraints=spread,
        scheduling_gates=tuple(gates),
        containers=tuple(c.container for c in containers),
        init_containers=tuple(c.container for c in init_containers),
        overhead=overhead,
        volumes=tuple(volumes),
        host_network=host_network,
        phase=phase,
        nominated_node_name=nominated,
        conditions=conditions,
        manifest=dict(doc),
    )
