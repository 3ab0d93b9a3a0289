"""A pod's resource requests computed as upstream does.

Mirrors k8s.io/component-helpers/resource/helpers.go (``PodRequests``): regular containers are
summed; init containers run one at a time, so their requests are a maximum, except restartable
init containers (sidecars, restartPolicy Always), which keep running beside the rest and are
added; pod overhead is added last. ``non_missing`` fills in a default for any container that does
not name a resource (how the scheduler's non-zero requests for scoring are made).
"""

from __future__ import annotations

from fractions import Fraction

from schedviz.kube.objects import RESOURCE_CPU, RESOURCE_MEMORY, Container, Pod

Amounts = dict[str, Fraction]

# pkg/scheduler/util/pod_resources.go: DefaultMilliCPURequest and DefaultMemoryRequest.
DEFAULT_MILLI_CPU_REQUEST = 100
DEFAULT_MEMORY_REQUEST = 200 * 1024 * 1024
NON_ZERO_DEFAULTS: Amounts = {
    RESOURCE_CPU: Fraction(DEFAULT_MILLI_CPU_REQUEST, 1000),
    RESOURCE_MEMORY: Fraction(DEFAULT_MEMORY_REQUEST),
}
RESTART_POLICY_ALWAYS = "Always"


def _container_requests(container: Container, non_missing: Amounts | None) -> Amounts:
    amounts = {name: q.amount for name, q in container.requests.items()}
    if non_missing:
        for name, default in non_missing.items():
            if name not in amounts:
                amounts[name] = default
    return amounts


def _add(into: Amounts, other: Amounts) -> None:
    for name, amount in other.items():
        into[name] = into.get(name, Fraction(0)) + amount


def _max(into: Amounts, other: Amounts) -> None:
    for name, amount in other.items():
        if name not in into or amount > into[name]:
            into[name] = amount


def pod_requests(pod: Pod, non_missing: Amounts | None = None) -> Amounts:
    """The pod's effective requests per resource name, exact."""
    requests: Amounts = {}
    for container in pod.containers:
        if requests:
            _add(requests, _container_requests(container, non_missing))
        else:
            requests = _container_requests(container, non_missing)  # a new dict: ours
    if not pod.init_containers and not pod.overhead:
        return requests
    sidecars: Amounts = {}
    init_max: Amounts = {}
    for container in pod.init_containers:
        container_requests = _container_requests(container, non_missing)
        if container.restart_policy == RESTART_POLICY_ALWAYS:
            _add(requests, container_requests)
            _add(sidecars, container_requests)
            step = dict(sidecars)
        else:
            step = dict(container_requests)
            _add(step, sidecars)
        _max(init_max, step)
    _max(requests, init_max)
    if pod.overhead:
        _add(requests, {name: q.amount for name, q in pod.overhead.items()})
    return requests


def to_int(name: str, amount: Fraction) -> int:
    """The integer the scheduler keeps: millicores for cpu, the value rounded up otherwise."""
    scaled = amount * 1000 if name == RESOURCE_CPU else amount
    if scaled >= 0:
        return -((-scaled.numerator) // scaled.denominator)
    return scaled.numerator // scaled.denominator
