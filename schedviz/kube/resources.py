"""A pod's resource requests computed as upstream does.

Mirrors k8s.io/component-helpers/resource/helpers.go as of v1.34 (``PodRequests``,
``AggregateContainerRequests``, ``determineContainerReqs``, ``IsPodLevelRequestsSet``,
``IsPodResizeInfeasible``) and the scheduler's non-zero defaults of
pkg/scheduler/framework/types.go (``getNonMissingContainerRequests``):

- regular containers are summed; init containers run one at a time, so their requests are a
  maximum, except restartable init containers (sidecars, restartPolicy Always), which keep
  running beside the rest and are added;
- with ``use_status_resources`` (InPlacePodVerticalScaling, beta and on in v1.34) a container
  (or sidecar) whose status reports ``resources`` counts the maximum of its spec requests, its
  status requests and its ``allocatedResources``; only the last two when the pod's
  PodResizePending condition says Infeasible;
- pod-level requests (``spec.resources``, PodLevelResources, beta and on in v1.34) replace the
  aggregate for the resources they name (cpu, memory, hugepages-*);
- pod overhead is added last;
- ``non_missing`` fills in a default for any container that does not name a resource (how the
  scheduler's non-zero requests for scoring are made).
"""

from __future__ import annotations

from fractions import Fraction

from schedviz.kube.objects import (
    RESOURCE_CPU,
    RESOURCE_MEMORY,
    Container,
    ContainerStatus,
    Pod,
    ResourceList,
)

Amounts = dict[str, Fraction]

# pkg/scheduler/util/pod_resources.go: DefaultMilliCPURequest and DefaultMemoryRequest.
DEFAULT_MILLI_CPU_REQUEST = 100
DEFAULT_MEMORY_REQUEST = 200 * 1024 * 1024
NON_ZERO_DEFAULTS: Amounts = {
    RESOURCE_CPU: Fraction(DEFAULT_MILLI_CPU_REQUEST, 1000),
    RESOURCE_MEMORY: Fraction(DEFAULT_MEMORY_REQUEST),
}
RESTART_POLICY_ALWAYS = "Always"
RESOURCE_HUGE_PAGES_PREFIX = "hugepages-"
POD_RESIZE_PENDING = "PodResizePending"
POD_REASON_INFEASIBLE = "Infeasible"


def is_supported_pod_level_resource(name: str) -> bool:
    """cpu, memory and huge pages can be set at pod level (``IsSupportedPodLevelResource``)."""
    return name in (RESOURCE_CPU, RESOURCE_MEMORY) or name.startswith(RESOURCE_HUGE_PAGES_PREFIX)


def is_pod_level_requests_set(pod: Pod) -> bool:
    """Whether ``spec.resources.requests`` names a supported resource."""
    return pod.resources is not None and any(
        is_supported_pod_level_resource(name) for name in pod.resources.requests
    )


def is_pod_level_resources_set(pod: Pod) -> bool:
    """Whether ``spec.resources`` requests or limits a supported resource."""
    return pod.resources is not None and any(
        is_supported_pod_level_resource(name)
        for name in (*pod.resources.requests, *pod.resources.limits)
    )


def is_pod_resize_infeasible(pod: Pod) -> bool:
    """The first PodResizePending condition says Infeasible."""
    for condition in pod.conditions:
        if condition.type == POD_RESIZE_PENDING:
            return condition.reason == POD_REASON_INFEASIBLE
    return False


def _amounts(resources: ResourceList) -> Amounts:
    return {name: q.amount for name, q in resources.items()}


def _container_requests(
    container: Container, status: ContainerStatus | None, resize_infeasible: bool
) -> Amounts:
    """The container's requests, resized ones included when its status reports resources."""
    if status is None or status.resources is None:
        return _amounts(container.requests)
    requests = {} if resize_infeasible else _amounts(container.requests)
    _max(requests, _amounts(status.resources.requests))
    _max(requests, _amounts(status.allocated_resources))
    return requests


def _with_defaults(amounts: Amounts, non_missing: Amounts | None) -> Amounts:
    if non_missing:
        for name, default in non_missing.items():
            if name not in amounts:
                amounts[name] = default
    return amounts


def _add(into: Amounts, other: Amounts) -> None:
    for name, amount in other.items():
        total = into.get(name)
        into[name] = amount if total is None else total + amount


def _max(into: Amounts, other: Amounts) -> None:
    for name, amount in other.items():
        if name not in into or amount > into[name]:
            into[name] = amount


def pod_requests(
    pod: Pod,
    non_missing: Amounts | None = None,
    *,
    use_status_resources: bool = False,
    skip_pod_level_resources: bool = False,
) -> Amounts:
    """The pod's effective requests per resource name, exact (upstream ``PodRequests``)."""
    statuses: dict[str, ContainerStatus] = {}
    resize_infeasible = False
    if use_status_resources and (pod.container_statuses or pod.init_container_statuses):
        statuses = {s.name: s for s in (*pod.container_statuses, *pod.init_container_statuses)}
        resize_infeasible = is_pod_resize_infeasible(pod)
    requests: Amounts = {}
    for container in pod.containers:
        own = _container_requests(container, statuses.get(container.name), resize_infeasible)
        _add(requests, _with_defaults(own, non_missing))
    if pod.init_containers:
        sidecars: Amounts = {}
        init_max: Amounts = {}
        for container in pod.init_containers:
            if container.restart_policy == RESTART_POLICY_ALWAYS:
                own = _container_requests(
                    container, statuses.get(container.name), resize_infeasible
                )
                _with_defaults(own, non_missing)
                _add(requests, own)
                _add(sidecars, own)
                step = dict(sidecars)
            else:
                step = _with_defaults(_amounts(container.requests), non_missing)
                _add(step, sidecars)
            _max(init_max, step)
        _max(requests, init_max)
    if not skip_pod_level_resources and pod.resources is not None:
        for name, quantity in pod.resources.requests.items():
            if is_supported_pod_level_resource(name):
                requests[name] = quantity.amount
    if pod.overhead:
        _add(requests, _amounts(pod.overhead))
    return requests


def aggregate_container_limits(pod: Pod) -> Amounts:
    """The containers' limits combined as their requests are (``AggregateContainerLimits``,
    spec only): regular containers and sidecars add up, init containers count by their
    maximum."""
    limits: Amounts = {}
    for container in pod.containers:
        _add(limits, _amounts(container.limits))
    sidecars: Amounts = {}
    init_max: Amounts = {}
    for container in pod.init_containers:
        own = _amounts(container.limits)
        if container.restart_policy == RESTART_POLICY_ALWAYS:
            _add(limits, own)
            _add(sidecars, own)
            step = dict(sidecars)
        else:
            step = own
            _add(step, sidecars)
        _max(init_max, step)
    _max(limits, init_max)
    return limits


def non_zero_defaults(pod: Pod, requests: Amounts) -> Amounts:
    """The defaults the scheduler's NodeInfo fills in for missing container requests
    (``getNonMissingContainerRequests``): both without pod-level requests; with them, only
    for cpu or memory that neither the pod nor any container requests."""
    if not is_pod_level_requests_set(pod):
        return NON_ZERO_DEFAULTS
    return {name: value for name, value in NON_ZERO_DEFAULTS.items() if name not in requests}


def to_int(name: str, amount: Fraction) -> int:
    """The integer the scheduler keeps: millicores for cpu, the value rounded up otherwise."""
    # On the numerator and denominator: Fraction arithmetic is slow, and this runs per pod and
    # per scored node.
    numerator, denominator = amount.numerator, amount.denominator
    if name == RESOURCE_CPU:
        numerator *= 1000
    if numerator >= 0:
        return -((-numerator) // denominator)
    return numerator // denominator
