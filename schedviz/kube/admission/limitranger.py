"""The LimitRanger admission plugin, for pod creates.

Mirrors plugin/pkg/admission/limitranger/admission.go as of v1.34: ``Admit`` defaults each
container's (and init container's) requests and limits from the namespace's LimitRanges
(``defaultContainerResourceRequirements``, ``mergeContainerResources``) and writes the
``kubernetes.io/limit-ranger`` annotation; ``Validate`` enforces the Container and Pod items'
min, max and maxLimitRequestRatio (``minConstraint``, ``maxConstraint``,
``limitRequestRatioConstraint``), a Pod item against the pod's requests and limits with
pod-level resources (PodLevelResources, on in v1.34) in place of the containers' sums for cpu
and memory.

Deliberately different: the LimitRanges of a namespace are taken in name order (upstream's
informer lists them in its cache's order); the resources of one item are checked in name order
(Go ranges over a map). PersistentVolumeClaim items are read but not enforced: claims are not
admitted here.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from fractions import Fraction
from typing import Any

from schedviz.kube.decode.admission import LIMIT_TYPE_CONTAINER, LIMIT_TYPE_POD
from schedviz.kube.decode.quantities import canonical_quantity, format_amount_as, quantity_format
from schedviz.kube.errors import aggregate_message
from schedviz.kube.objects import (
    RESOURCE_CPU,
    RESOURCE_MEMORY,
    Container,
    LimitRange,
    Pod,
    ResourceList,
)
from schedviz.kube.quantity import Quantity
from schedviz.kube.resources import RESTART_POLICY_ALWAYS

PLUGIN_NAME = "LimitRanger"
LIMIT_RANGER_ANNOTATION = "kubernetes.io/limit-ranger"
# resource.MaxMilliValue: past it, values are compared whole rather than in thousandths.
MAX_MILLI_VALUE = (2**63 - 1) // 1000


def _default_requirements(limit_range: LimitRange) -> tuple[ResourceList, ResourceList]:
    """defaultContainerResourceRequirements: (requests, limits) of the Container items."""
    requests: ResourceList = {}
    limits: ResourceList = {}
    for item in limit_range.limits:
        if item.type == LIMIT_TYPE_CONTAINER:
            requests.update(item.default_request)
            limits.update(item.default)
    return requests, limits


def _containers(spec: dict[str, Any]) -> Iterator[tuple[str, dict[str, Any]]]:
    for list_name, prefix in (("containers", "container"), ("initContainers", "init container")):
        for container in spec.get(list_name) or []:
            if isinstance(container, dict):
                yield prefix, container


def mutate(manifest: dict[str, Any], limit_ranges: Sequence[LimitRange]) -> list[str]:
    """PodMutateLimitFunc of every LimitRange in turn, on the pod's manifest (changed in
    place); returns what was set, one line per container and list, for the pod page."""
    changes: list[str] = []
    spec = manifest.setdefault("spec", {})
    for limit_range in limit_ranges:
        default_requests, default_limits = _default_requirements(limit_range)
        if not default_requests and not default_limits:
            continue
        annotations: list[str] = []
        for prefix, container in _containers(spec):
            resources = container.get("resources")
            if not isinstance(resources, dict):
                resources = container["resources"] = {}
            name = str(container.get("name", ""))
            set_requests = _merge(resources, "requests", default_requests)
            set_limits = _merge(resources, "limits", default_limits)
            if set_requests:
                annotations.append(f"{', '.join(sorted(set_requests))} request for {prefix} {name}")
            if set_limits:
                annotations.append(f"{', '.join(sorted(set_limits))} limit for {prefix} {name}")
            for list_name, values in (("requests", set_requests), ("limits", set_limits)):
                if values:
                    shown = ", ".join(f"{list_name}.{k}={v}" for k, v in sorted(values.items()))
                    changes.append(
                        f"{PLUGIN_NAME} set {shown} on {prefix} {name} "
                        f"(LimitRange {limit_range.name})"
                    )
        if annotations:
            metadata = manifest.setdefault("metadata", {})
            if not isinstance(metadata.get("annotations"), dict):
                metadata["annotations"] = {}
            metadata["annotations"][LIMIT_RANGER_ANNOTATION] = (
                "LimitRanger plugin set: " + "; ".join(annotations)
            )
    return changes


def _merge(resources: dict[str, Any], list_name: str, defaults: ResourceList) -> dict[str, str]:
    """mergeContainerResources for one list: the defaults the container does not name."""
    if not defaults:
        return {}
    current = resources.get(list_name)
    if not isinstance(current, dict):
        current = resources[list_name] = {}
    added = {}
    for name, value in defaults.items():
        if name not in current:
            current[name] = added[name] = canonical_quantity(value)
    return added


# ---------------------------------------------------------------------------------------------
# Validate


def _values(
    request: Quantity | None, limit: Quantity | None, enforced: Quantity
) -> tuple[int, int, int]:
    """requestLimitEnforcedValues: the three at a common precision."""
    zero = Quantity(0)
    req, lim = request or zero, limit or zero
    values = (req.value(), lim.value(), enforced.value())
    if all(v <= MAX_MILLI_VALUE for v in values):
        return req.milli_value(), lim.milli_value(), enforced.milli_value()
    return values


def _min(
    kind: str, name: str, enforced: Quantity, requests: ResourceList, limits: ResourceList
) -> str:
    req, lim = requests.get(name), limits.get(name)
    observed_req, observed_lim, value = _values(req, lim, enforced)
    shown = canonical_quantity(enforced)
    if req is None:
        return f"minimum {name} usage per {kind} is {shown}.  No request is specified"
    if observed_req < value:
        return (
            f"minimum {name} usage per {kind} is {shown}, but request is {canonical_quantity(req)}"
        )
    if lim is not None and observed_lim < value:
        return f"minimum {name} usage per {kind} is {shown}, but limit is {canonical_quantity(lim)}"
    return ""


def _max(
    kind: str, name: str, enforced: Quantity, requests: ResourceList, limits: ResourceList
) -> str:
    req, lim = requests.get(name), limits.get(name)
    observed_req, observed_lim, value = _values(req, lim, enforced)
    shown = canonical_quantity(enforced)
    if lim is None:
        return f"maximum {name} usage per {kind} is {shown}.  No limit is specified"
    if observed_lim > value:
        return f"maximum {name} usage per {kind} is {shown}, but limit is {canonical_quantity(lim)}"
    if req is not None and observed_req > value:
        return (
            f"maximum {name} usage per {kind} is {shown}, but request is {canonical_quantity(req)}"
        )
    return ""


def _ratio(
    kind: str, name: str, enforced: Quantity, requests: ResourceList, limits: ResourceList
) -> str:
    req, lim = requests.get(name), limits.get(name)
    observed_req, observed_lim, _ = _values(req, lim, enforced)
    shown = canonical_quantity(enforced)
    if req is None or observed_req == 0:
        return (
            f"{name} max limit to request ratio per {kind} is {shown}, but no request is "
            "specified or request is 0"
        )
    if lim is None or observed_lim == 0:
        return (
            f"{name} max limit to request ratio per {kind} is {shown}, but no limit is "
            "specified or limit is 0"
        )
    observed = observed_lim / observed_req
    displayed = observed
    maximum = float(enforced.value())
    if enforced.value() <= MAX_MILLI_VALUE:
        observed *= 1000
        maximum = float(enforced.milli_value())
    if observed > maximum:
        return (
            f"{name} max limit to request ratio per {kind} is {shown}, but provided ratio is "
            f"{displayed:f}"
        )
    return ""


def _check(kind: str, item_lists: Any, requests: ResourceList, limits: ResourceList) -> list[str]:
    minimum, maximum, ratio = item_lists
    errors = [_min(kind, n, q, requests, limits) for n, q in sorted(minimum.items())]
    errors += [_max(kind, n, q, requests, limits) for n, q in sorted(maximum.items())]
    errors += [_ratio(kind, n, q, requests, limits) for n, q in sorted(ratio.items())]
    return [e for e in errors if e]


def _sum(regular: Sequence[Container], init: Sequence[Container], attr: str) -> ResourceList:
    """podRequests / podLimits over the spec: containers and sidecars add up, init containers
    count by their maximum."""
    total: dict[str, Fraction] = {}
    formats: dict[str, str] = {}

    def note(resources: ResourceList) -> dict[str, Fraction]:
        for name, quantity in resources.items():
            formats.setdefault(name, quantity_format(quantity))
        return {name: quantity.amount for name, quantity in resources.items()}

    def add(into: dict[str, Fraction], other: dict[str, Fraction]) -> None:
        for name, amount in other.items():
            into[name] = into.get(name, Fraction(0)) + amount

    def maximum(into: dict[str, Fraction], other: dict[str, Fraction]) -> None:
        for name, amount in other.items():
            if name not in into or amount > into[name]:
                into[name] = amount

    for container in regular:
        add(total, note(getattr(container, attr)))
    sidecars: dict[str, Fraction] = {}
    init_max: dict[str, Fraction] = {}
    for container in init:
        own = note(getattr(container, attr))
        if container.restart_policy == RESTART_POLICY_ALWAYS:
            add(total, own)
            add(sidecars, own)
            step = dict(sidecars)
        else:
            step = dict(own)
            add(step, sidecars)
        maximum(init_max, step)
    maximum(total, init_max)
    return {
        name: Quantity(amount, format_amount_as(amount, formats.get(name, "decimal")))
        for name, amount in total.items()
    }


def _pod_totals(pod: Pod) -> tuple[ResourceList, ResourceList]:
    requests = _sum(pod.containers, pod.init_containers, "requests")
    limits = _sum(pod.containers, pod.init_containers, "limits")
    if pod.resources is not None:  # pod-level cpu and memory replace the sums
        for name in (RESOURCE_CPU, RESOURCE_MEMORY):
            if name in pod.resources.requests:
                requests[name] = pod.resources.requests[name]
            if name in pod.resources.limits:
                limits[name] = pod.resources.limits[name]
    return requests, limits


def validate(pod: Pod, limit_ranges: Sequence[LimitRange]) -> str:
    """PodValidateLimitFunc of every LimitRange in turn: the first one's refusal, its errors
    aggregated ("" when every LimitRange admits the pod)."""
    for limit_range in limit_ranges:
        errors: list[str] = []
        for item in limit_range.limits:
            lists = (item.min, item.max, item.max_limit_request_ratio)
            if item.type == LIMIT_TYPE_CONTAINER:
                for container in (*pod.containers, *pod.init_containers):
                    errors += _check(item.type, lists, container.requests, container.limits)
            elif item.type == LIMIT_TYPE_POD:
                errors += _check(item.type, lists, *_pod_totals(pod))
        if errors:
            return aggregate_message(errors)
    return ""
