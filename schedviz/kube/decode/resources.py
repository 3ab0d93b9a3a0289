"""Resource names and resource requirements.

Mirrors pkg/apis/core/helper/helpers.go (which resource names are native, hugepages, extended,
integer, overcommittable) and pkg/apis/core/validation/validation.go
(ValidateResourceQuantityValue, validateContainerResourceName,
ValidateContainerResourceRequirements).
"""

from __future__ import annotations

from schedviz.kube import errors as fe
from schedviz.kube.decode.quantities import canonical_quantity
from schedviz.kube.decode.reader import child, key
from schedviz.kube.decode.validation import (
    IS_NEGATIVE_ERROR,
    IS_NOT_INTEGER_ERROR,
    is_qualified_name,
)
from schedviz.kube.errors import FieldError, Raw
from schedviz.kube.objects import ResourceList
from schedviz.kube.quantity import Quantity

# pkg/apis/core/helper: which resource names are native, integer, overcommittable.
_STANDARD_CONTAINER_RESOURCES = {"cpu", "memory", "ephemeral-storage"}
_INTEGER_RESOURCES = {
    "pods",
    "services",
    "replicationcontrollers",
    "resourcequotas",
    "secrets",
    "configmaps",
    "persistentvolumeclaims",
    "services.nodeports",
    "services.loadbalancers",
}
HUGEPAGES_PREFIX = "hugepages-"


def is_native_resource(name: str) -> bool:
    return "/" not in name or "kubernetes.io/" in name


def is_hugepage_resource(name: str) -> bool:
    return name.startswith(HUGEPAGES_PREFIX)


def is_extended_resource(name: str) -> bool:
    if is_native_resource(name) or name.startswith("requests."):
        return False
    return not is_qualified_name("requests." + name)


def _is_integer_resource(name: str) -> bool:
    return name in _INTEGER_RESOURCES or is_extended_resource(name)


def _is_overcommit_allowed(name: str) -> bool:
    return is_native_resource(name) and not is_hugepage_resource(name)


def validate_resource_quantity(name: str, value: Quantity, path: str) -> list[FieldError]:
    """ValidateResourceQuantityValue."""
    errs = []
    if value.amount < 0:
        errs.append(fe.invalid(path, canonical_quantity(value), IS_NEGATIVE_ERROR))
    if _is_integer_resource(name) and value.milli_value() % 1000 != 0:
        errs.append(fe.invalid(path, Raw(canonical_quantity(value)), IS_NOT_INTEGER_ERROR))
    return errs


def _validate_container_resource_name(name: str, path: str) -> list[FieldError]:
    errs = [fe.invalid(path, name, msg) for msg in is_qualified_name(name)]
    if errs:
        return errs
    if "/" not in name:
        if name not in _STANDARD_CONTAINER_RESOURCES and not is_hugepage_resource(name):
            return [fe.invalid(path, name, "must be a standard resource for containers")]
    elif not is_native_resource(name) and not is_extended_resource(name):
        return [fe.invalid(path, name, "doesn't follow extended resource name standard")]
    return []


def validate_resource_requirements(
    requests: ResourceList, limits: ResourceList, path: str
) -> list[FieldError]:
    """ValidateContainerResourceRequirements (resource claims aside)."""
    errs: list[FieldError] = []
    lim_path, req_path = child(path, "limits"), child(path, "requests")
    cpu_or_memory = hugepages = False
    for name, quantity in limits.items():
        errs.extend(_validate_container_resource_name(name, key(lim_path, name)))
        errs.extend(validate_resource_quantity(name, quantity, key(lim_path, name)))
        hugepages = hugepages or is_hugepage_resource(name)
        cpu_or_memory = cpu_or_memory or name in ("cpu", "memory")
    for name, quantity in requests.items():
        errs.extend(_validate_container_resource_name(name, key(req_path, name)))
        errs.extend(validate_resource_quantity(name, quantity, key(req_path, name)))
        limit = limits.get(name)
        shown = canonical_quantity(quantity)
        if limit is not None:
            if quantity != limit and not _is_overcommit_allowed(name):
                detail = f"must be equal to {name} limit of {canonical_quantity(limit)}"
                errs.append(fe.invalid(req_path, shown, detail))
            elif quantity > limit:
                detail = (
                    f"must be less than or equal to {name} limit of {canonical_quantity(limit)}"
                )
                errs.append(fe.invalid(req_path, shown, detail))
        elif not _is_overcommit_allowed(name):
            errs.append(fe.required(lim_path, "Limit must be set for non overcommitable resources"))
        hugepages = hugepages or is_hugepage_resource(name)
        cpu_or_memory = cpu_or_memory or name in ("cpu", "memory")
    if hugepages and not cpu_or_memory:
        errs.append(fe.forbidden(path, "HugePages require cpu or memory"))
    return errs
