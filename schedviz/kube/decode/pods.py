"""Pod (v1): defaulted, prepared and validated as the API server creates it.

Mirrors pkg/apis/core/v1/defaults.go (SetDefaults_Pod, SetDefaults_PodSpec, and with
PodLevelResources, beta and on in v1.34, ``defaultPodRequests``),
pkg/registry/core/pod/strategy.go (PrepareForCreate: the SchedulingGated condition, label keys
merged into selectors) and pkg/apis/core/validation/validation.go (ValidatePodCreate,
ValidatePodSpec, ``validatePodResources`` and ``validatePodResourceConsistency``).
Deliberately different: the status (phase, nominatedNodeName, conditions, the containers'
``resources`` and ``allocatedResources`` of an in-place resize) is kept, where the API server
resets it on create, since manifests here are often ``kubectl get -o yaml`` output of a running
cluster; and pod-level hugepage limits are not defaulted from the containers'
(``defaultHugePagePodLimits``). Go reports a map's errors in random order; here names are
sorted.
"""

from __future__ import annotations

from collections.abc import Mapping
from fractions import Fraction
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
from schedviz.kube.decode.quantities import canonical_quantity
from schedviz.kube.decode.reader import Reader, child, index, key
from schedviz.kube.decode.resources import (
    HUGEPAGES_PREFIX,
    is_hugepage_resource,
    validate_resource_quantity,
    validate_resource_requirements,
)
from schedviz.kube.decode.taints import read_tolerations, validate_tolerations
from schedviz.kube.decode.validation import (
    inclusive_range_error,
    is_qualified_name,
    name_is_dns_subdomain,
)
from schedviz.kube.errors import FieldError
from schedviz.kube.objects import (
    DEFAULT_SCHEDULER_NAME,
    POD_PENDING,
    PREEMPT_LOWER_PRIORITY,
    PREEMPT_NEVER,
    TOLERATION_OP_EQUAL,
    ContainerPort,
    ContainerStatus,
    Pod,
    PodCondition,
    ResourceRequirements,
    Toleration,
)
from schedviz.kube.quantity import Quantity
from schedviz.kube.resources import (
    aggregate_container_limits,
    is_supported_pod_level_resource,
    pod_requests,
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
        r.name("status.nominatedNodeName", nominated, name_is_dns_subdomain(nominated, False))
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


# pkg/apis/core/helper IsStandardResourceName: the names a ResourceList may use unqualified.
STANDARD_RESOURCES = frozenset(
    {
        "cpu",
        "memory",
        "ephemeral-storage",
        "requests.cpu",
        "requests.memory",
        "requests.ephemeral-storage",
        "limits.cpu",
        "limits.memory",
        "limits.ephemeral-storage",
        "pods",
        "services",
        "replicationcontrollers",
        "resourcequotas",
        "secrets",
        "configmaps",
        "persistentvolumeclaims",
        "requests.storage",
        "services.nodeports",
        "services.loadbalancers",
    }
)
_POD_LEVEL_SUPPORTED = ("cpu", "hugepages-", "memory")


def _read_pod_resources(
    r: Reader, spec: Mapping[str, Any], path: str
) -> ResourceRequirements | None:
    raw = r.optional_map(spec, "resources", path)
    if raw is None:
        return None
    res_path = child(path, "resources")
    return ResourceRequirements(
        requests=r.resources(raw, "requests", res_path),
        limits=r.resources(raw, "limits", res_path),
    )


def _aggregate_container_requests(
    containers: list[ContainerSpec], init_containers: list[ContainerSpec]
) -> dict[str, Quantity]:
    """AggregateContainerRequests of the spec, each sum in the format of its first term."""
    pod = Pod(
        name="",
        containers=tuple(c.container for c in containers),
        init_containers=tuple(c.container for c in init_containers),
    )
    return _as_quantities(pod_requests(pod), [*containers, *init_containers], "requests")


def _aggregate_container_limits(
    containers: list[ContainerSpec], init_containers: list[ContainerSpec]
) -> dict[str, Quantity]:
    pod = Pod(
        name="",
        containers=tuple(c.container for c in containers),
        init_containers=tuple(c.container for c in init_containers),
    )
    return _as_quantities(
        aggregate_container_limits(pod), [*containers, *init_containers], "limits"
    )


def _as_quantities(
    amounts: Mapping[str, Fraction], specs: list[ContainerSpec], kind: str
) -> dict[str, Quantity]:
    """Sums as quantities: Go's Add keeps the format of the quantity added to."""
    result: dict[str, Quantity] = {}
    for name, amount in amounts.items():
        like = next(
            (
                getattr(spec.container, kind)[name]
                for spec in specs
                if name in getattr(spec.container, kind)
            ),
            None,
        )
        result[name] = Quantity(amount, None if like is None else str(like))
    return result


def default_pod_requests(
    resources: ResourceRequirements | None,
    containers: list[ContainerSpec],
    init_containers: list[ContainerSpec],
) -> ResourceRequirements | None:
    """defaultPodRequests: with pod-level limits, a supported resource without a pod-level
    request gets the containers' aggregate request (overcommittable ones), else the limit."""
    if resources is None or not resources.limits:
        return resources
    requests = dict(resources.requests)
    aggregate = _aggregate_container_requests(containers, init_containers)
    for name, quantity in aggregate.items():
        # Only overcommittable resources (isOvercommitAllowed): not huge pages.
        supported = is_supported_pod_level_resource(name) and not is_hugepage_resource(name)
        if name not in requests and supported:
            requests[name] = quantity
    for name, limit in resources.limits.items():
        if name not in requests and is_supported_pod_level_resource(name):
            requests[name] = limit
    return ResourceRequirements(requests=requests, limits=dict(resources.limits))


def _validate_pod_resource_name(name: str, path: str) -> list[FieldError]:
    """validatePodResourceName."""
    errs = [fe.invalid(path, name, msg) for msg in is_qualified_name(name)]
    if errs:
        return errs
    standard = (
        name in STANDARD_RESOURCES
        or is_hugepage_resource(name)
        or name.startswith("requests." + HUGEPAGES_PREFIX)
    )
    if "/" not in name and not standard:
        return [fe.invalid(path, name, "must be a standard resource type or fully qualified")]
    if is_supported_pod_level_resource(name):
        return []
    return [fe.not_supported(path, name, _POD_LEVEL_SUPPORTED)]


def validate_pod_resources(
    resources: ResourceRequirements,
    containers: list[ContainerSpec],
    init_containers: list[ContainerSpec],
    os_name: str,
    path: str,
) -> list[FieldError]:
    """validatePodResources and validatePodResourceConsistency (``path``: spec.resources)."""
    if os_name == "windows":
        return [fe.forbidden(path, "may not be set for a windows pod")]
    errs: list[FieldError] = []
    lim_path, req_path = child(path, "limits"), child(path, "requests")
    cpu_or_memory = hugepages = False
    for name in sorted(resources.limits):
        quantity = resources.limits[name]
        errs.extend(_validate_pod_resource_name(name, key(lim_path, name)))
        errs.extend(validate_resource_quantity(name, quantity, key(lim_path, name)))
        hugepages = hugepages or is_hugepage_resource(name)
        cpu_or_memory = cpu_or_memory or name in ("cpu", "memory")
    for name in sorted(resources.requests):
        quantity = resources.requests[name]
        errs.extend(_validate_pod_resource_name(name, key(req_path, name)))
        errs.extend(validate_resource_quantity(name, quantity, key(req_path, name)))
        limit = resources.limits.get(name)
        shown = canonical_quantity(quantity)
        if limit is not None:
            if quantity != limit and is_hugepage_resource(name):
                detail = f"must be equal to {name} limit of {canonical_quantity(limit)}"
                errs.append(fe.invalid(req_path, shown, detail))
            elif quantity > limit:
                detail = (
                    f"must be less than or equal to {name} limit of {canonical_quantity(limit)}"
                )
                errs.append(fe.invalid(req_path, shown, detail))
        elif is_hugepage_resource(name):
            errs.append(fe.required(lim_path, "Limit must be set for non overcommitable resources"))
        hugepages = hugepages or is_hugepage_resource(name)
        cpu_or_memory = cpu_or_memory or name in ("cpu", "memory")
    if hugepages and not cpu_or_memory:
        errs.append(fe.forbidden(path, "HugePages require cpu or memory"))
    # Pod-level requests cover the containers' aggregate requests.
    aggregate = _aggregate_container_requests(containers, init_containers)
    for name in sorted(aggregate):
        requested = resources.requests.get(name)
        if requested is not None and aggregate[name] > requested:
            errs.append(
                fe.invalid(
                    key(req_path, name),
                    canonical_quantity(requested),
                    "must be greater than or equal to aggregate container requests of "
                    + canonical_quantity(aggregate[name]),
                )
            )
    # A pod-level hugepage limit covers the containers' aggregate.
    aggregate_limits = _aggregate_container_limits(containers, init_containers)
    for name in sorted(aggregate_limits):
        limit = resources.limits.get(name)
        if is_hugepage_resource(name) and limit is not None and aggregate_limits[name] > limit:
            errs.append(
                fe.invalid(
                    key(lim_path, name),
                    canonical_quantity(limit),
                    "must be greater than or equal to aggregate container limits of "
                    + canonical_quantity(aggregate_limits[name]),
                )
            )
    # No container's limit exceeds the pod's (upstream builds the path from spec.resources).
    for i, spec in enumerate(containers):
        for name in sorted(spec.container.limits):
            pod_limit = resources.limits.get(name)
            container_limit = spec.container.limits[name]
            if pod_limit is not None and container_limit > pod_limit:
                errs.append(
                    fe.invalid(
                        child(key(index(child(path, "containers"), i), name), "limits"),
                        canonical_quantity(container_limit),
                        "must be less than or equal to pod limits of "
                        + canonical_quantity(pod_limit),
                    )
                )
    return errs


def _read_container_statuses(
    r: Reader, status: Mapping[str, Any], name: str
) -> tuple[ContainerStatus, ...]:
    """The name, ``resources`` and ``allocatedResources`` of each container status."""
    statuses = []
    for s_path, raw in r.maps(status, name, "status"):
        resources = r.optional_map(raw, "resources", s_path)
        res_path = child(s_path, "resources")
        statuses.append(
            ContainerStatus(
                name=r.string(raw, "name", s_path),
                resources=None
                if resources is None
                else ResourceRequirements(
                    requests=r.resources(resources, "requests", res_path),
                    limits=r.resources(resources, "limits", res_path),
                ),
                allocated_resources=r.resources(raw, "allocatedResources", s_path),
            )
        )
    return tuple(statuses)


def decode_pod(r: Reader, doc: Mapping[str, Any]) -> Pod:
    """Defaulting (SetDefaults_Pod, SetDefaults_PodSpec), PrepareForCreate, ValidatePodCreate."""
    meta = read_meta(r, doc, namespaced=True, name_fn=name_is_dns_subdomain)
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
    runtime_class_name = r.string(spec, "runtimeClassName", sp)
    active_deadline_seconds = r.integer(spec, "activeDeadlineSeconds", sp)
    # After the containers' own defaults (requests from limits), as SetDefaults_Pod orders it.
    pod_resources = default_pod_requests(
        _read_pod_resources(r, spec, sp), containers, init_containers
    )
    phase, nominated, conditions = _read_pod_status(r, doc)
    status = r.obj(doc, "status", "")
    container_statuses = _read_container_statuses(r, status, "containerStatuses")
    init_container_statuses = _read_container_statuses(r, status, "initContainerStatuses")
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
        r.name(child(sp, "nodeName"), node_name, name_is_dns_subdomain(node_name, False))
    r.extend(validate_tolerations(tolerations, child(sp, "tolerations")))
    if priority_class_name:
        r.extend(
            fe.invalid(child(sp, "priorityClassName"), priority_class_name, msg)
            for msg in name_is_dns_subdomain(priority_class_name, False)
        )
    r.extend(validate_preemption_policy(preemption_policy, child(sp, "preemptionPolicy")))
    if overhead:
        r.extend(validate_resource_requirements({}, overhead, child(sp, "overhead")))
    if runtime_class_name:
        r.extend(
            fe.invalid(child(sp, "runtimeClassName"), runtime_class_name, msg)
            for msg in name_is_dns_subdomain(runtime_class_name, False)
        )
    if active_deadline_seconds is not None and not 1 <= active_deadline_seconds <= 2**32 - 1:
        r.add(
            fe.invalid(
                child(sp, "activeDeadlineSeconds"),
                active_deadline_seconds,
                inclusive_range_error(1, 2**32 - 1),
            )
        )
    if pod_resources is not None:
        os_name = r.string(r.obj(spec, "os", sp), "name", child(sp, "os"))
        r.extend(
            validate_pod_resources(
                pod_resources, containers, init_containers, os_name, child(sp, "resources")
            )
        )
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
        resources=pod_resources,
        volumes=tuple(volumes),
        host_network=host_network,
        runtime_class_name=runtime_class_name,
        active_deadline_seconds=active_deadline_seconds,
        phase=phase,
        nominated_node_name=nominated,
        conditions=conditions,
        container_statuses=container_statuses,
        init_container_statuses=init_container_statuses,
        manifest=dict(doc),
    )
