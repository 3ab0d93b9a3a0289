"""The objects admission reads: LimitRange and ResourceQuota (v1), RuntimeClass (node.k8s.io/v1).

Mirrors pkg/apis/core/v1/defaults.go (SetDefaults_LimitRangeItem, SetDefaults_ResourceList),
pkg/apis/core/validation/validation.go (ValidateLimitRange, ValidateResourceQuota and its
scope checks) and pkg/apis/node/validation/validation.go (ValidateRuntimeClass).

Deliberately different: a ResourceQuota's ``status`` is not read; the quota's usage is what
the admission plugin counts of the pods it admitted (schedviz.kube.admission.resourcequota),
as the quota controller would have recalculated it.
"""

from __future__ import annotations

from collections.abc import Mapping
from fractions import Fraction
from typing import Any

from schedviz.kube import errors as fe
from schedviz.kube.decode.meta import read_meta, validate_labels
from schedviz.kube.decode.pods import STANDARD_RESOURCES
from schedviz.kube.decode.quantities import canonical_quantity
from schedviz.kube.decode.reader import Reader, child, index, key
from schedviz.kube.decode.resources import (
    _is_overcommit_allowed,
    validate_resource_quantity,
    validate_resource_requirements,
)
from schedviz.kube.decode.taints import read_tolerations, validate_tolerations
from schedviz.kube.decode.validation import (
    is_qualified_name,
    name_is_dns_label,
    name_is_dns_subdomain,
)
from schedviz.kube.errors import FieldError, Raw
from schedviz.kube.objects import (
    TOLERATION_OP_EQUAL,
    LimitRange,
    LimitRangeItem,
    ResourceList,
    ResourceQuota,
    RuntimeClass,
    ScopedResourceSelectorRequirement,
    Toleration,
)
from schedviz.kube.quantity import Quantity

LIMIT_TYPE_POD = "Pod"
LIMIT_TYPE_CONTAINER = "Container"
LIMIT_TYPE_PVC = "PersistentVolumeClaim"

# v1.ResourceQuotaScope values.
SCOPE_TERMINATING = "Terminating"
SCOPE_NOT_TERMINATING = "NotTerminating"
SCOPE_BEST_EFFORT = "BestEffort"
SCOPE_NOT_BEST_EFFORT = "NotBestEffort"
SCOPE_PRIORITY_CLASS = "PriorityClass"
SCOPE_CROSS_NAMESPACE_POD_AFFINITY = "CrossNamespacePodAffinity"
SCOPE_VOLUME_ATTRIBUTES_CLASS = "VolumeAttributesClass"
_STANDARD_SCOPES = (
    SCOPE_TERMINATING,
    SCOPE_NOT_TERMINATING,
    SCOPE_BEST_EFFORT,
    SCOPE_NOT_BEST_EFFORT,
    SCOPE_PRIORITY_CLASS,
    SCOPE_CROSS_NAMESPACE_POD_AFFINITY,
    SCOPE_VOLUME_ATTRIBUTES_CLASS,
)
_SCOPE_OPERATORS = ("In", "NotIn", "Exists", "DoesNotExist")
# helper.IsStandardQuotaResourceName's list (the standard resource names), and what the
# BestEffort scopes may limit.
_QUOTA_RESOURCES = STANDARD_RESOURCES
_BEST_EFFORT_RESOURCES = frozenset({"pods"})


def _dec(q: Quantity) -> str:
    return canonical_quantity(q)


def _limit_item(r: Reader, raw: Mapping[str, Any], path: str) -> LimitRangeItem:
    item = LimitRangeItem(
        type=r.string(raw, "type", path),
        max=r.resources(raw, "max", path),
        min=r.resources(raw, "min", path),
        default=r.resources(raw, "default", path),
        default_request=r.resources(raw, "defaultRequest", path),
        max_limit_request_ratio=r.resources(raw, "maxLimitRequestRatio", path),
    )
    given_default = dict(item.default)
    given_default_request = dict(item.default_request)
    if item.type == LIMIT_TYPE_CONTAINER:  # SetDefaults_LimitRangeItem
        for name, value in item.max.items():
            item.default.setdefault(name, value)
        for name, value in item.default.items():
            item.default_request.setdefault(name, value)
        for name, value in item.min.items():
            item.default_request.setdefault(name, value)
    r.extend(_validate_limit_item(item, given_default, given_default_request, path))
    return item


def _validate_limit_item(
    item: LimitRangeItem,
    given_default: ResourceList,
    given_default_request: ResourceList,
    path: str,
) -> list[FieldError]:
    """One item of ValidateLimitRange (after defaulting, as the API server validates)."""
    errs = [fe.invalid(child(path, "type"), item.type, m) for m in is_qualified_name(item.type)]
    lists: list[tuple[str, ResourceList]] = [("max", item.max), ("min", item.min)]
    if item.type == LIMIT_TYPE_POD:
        if given_default:
            errs.append(
                fe.forbidden(child(path, "default"), "may not be specified when `type` is 'Pod'")
            )
        if given_default_request:
            errs.append(
                fe.forbidden(
                    child(path, "defaultRequest"), "may not be specified when `type` is 'Pod'"
                )
            )
    else:
        lists += [("default", item.default), ("defaultRequest", item.default_request)]
    if item.type == LIMIT_TYPE_PVC and "storage" not in item.min and "storage" not in item.max:
        errs.append(
            fe.required(
                child(path, "limits"),
                "either minimum or maximum storage value is required, but neither was provided",
            )
        )
    lists.append(("maxLimitRequestRatio", item.max_limit_request_ratio))
    names: dict[str, None] = {}
    for list_name, resources in lists:
        for name, value in resources.items():
            entry = key(child(path, list_name), name)
            errs.extend(fe.invalid(entry, name, m) for m in is_qualified_name(name))
            errs.extend(validate_resource_quantity(name, value, entry))
            names[name] = None
    for name in names:
        errs.extend(_validate_limit_values(item, name, path))
    return errs


def _validate_limit_values(item: LimitRangeItem, name: str, path: str) -> list[FieldError]:
    errs: list[FieldError] = []
    low, high = item.min.get(name), item.max.get(name)
    default, request = item.default.get(name), item.default_request.get(name)
    ratio = item.max_limit_request_ratio.get(name)

    def bad(list_name: str, value: Quantity, detail: str) -> None:
        errs.append(fe.invalid(key(child(path, list_name), name), Raw(_dec(value)), detail))

    if low is not None and high is not None and low > high:
        bad("min", low, f"min value {_dec(low)} is greater than max value {_dec(high)}")
    if request is not None and low is not None and low > request:
        bad(
            "defaultRequest",
            request,
            f"min value {_dec(low)} is greater than default request value {_dec(request)}",
        )
    if request is not None and high is not None and request > high:
        bad(
            "defaultRequest",
            request,
            f"default request value {_dec(request)} is greater than max value {_dec(high)}",
        )
    if request is not None and default is not None and request > default:
        bad(
            "defaultRequest",
            request,
            f"default request value {_dec(request)} is greater than default limit value "
            f"{_dec(default)}",
        )
    if default is not None and low is not None and low > default:
        bad(
            "default",
            default,
            f"min value {_dec(low)} is greater than default value {_dec(default)}",
        )
    if default is not None and high is not None and default > high:
        bad(
            "default",
            default,
            f"default value {_dec(default)} is greater than max value {_dec(high)}",
        )
    if ratio is not None and ratio.amount < 1:
        bad("maxLimitRequestRatio", ratio, f"ratio {_dec(ratio)} is less than 1")
    if ratio is not None and low is not None and high is not None and low.amount > 0:
        ratio_limit = float(Fraction(high.milli_value(), low.milli_value()))
        if ratio.milli_value() / 1000 > ratio_limit:
            bad(
                "maxLimitRequestRatio",
                ratio,
                f"ratio {_dec(ratio)} is greater than max/min = {ratio_limit:f}",
            )
    if (
        not _is_overcommit_allowed(name)
        and default is not None
        and request is not None
        and default != request
    ):
        bad(
            "defaultRequest",
            request,
            f"default value {_dec(default)} must equal to defaultRequest value {_dec(request)} "
            f"in {name}",
        )
    return errs


def decode_limit_range(r: Reader, doc: Mapping[str, Any]) -> LimitRange:
    """SetDefaults_LimitRangeItem and ValidateLimitRange."""
    meta = read_meta(r, doc, namespaced=True, name_fn=name_is_dns_subdomain)
    spec = r.obj(doc, "spec", "")
    items: list[LimitRangeItem] = []
    seen: set[str] = set()
    for path, raw in r.maps(spec, "limits", "spec"):
        item = _limit_item(r, raw, path)
        if item.type in seen:
            r.add(fe.duplicate(child(path, "type"), item.type))
        seen.add(item.type)
        items.append(item)
    return LimitRange(
        name=meta.name, namespace=meta.namespace, limits=tuple(items), manifest=dict(doc)
    )


def decode_runtime_class(r: Reader, doc: Mapping[str, Any]) -> RuntimeClass:
    """ValidateRuntimeClass (node.k8s.io/v1)."""
    meta = read_meta(r, doc, namespaced=False, name_fn=name_is_dns_subdomain)
    handler = r.string(doc, "handler", "")
    if not handler:
        r.add(fe.required("handler"))
    else:
        r.extend(fe.invalid("handler", handler, m) for m in name_is_dns_label(handler, False))
    overhead: ResourceList | None = None
    raw_overhead = r.optional_map(doc, "overhead", "")
    if raw_overhead is not None and raw_overhead.get("podFixed") is not None:
        overhead = r.resources(raw_overhead, "podFixed", "overhead")
        r.extend(validate_resource_requirements({}, overhead, child("overhead", "podFixed")))
    node_selector: dict[str, str] | None = None
    tolerations: tuple[Toleration, ...] = ()
    scheduling = r.optional_map(doc, "scheduling", "")
    if scheduling is not None:
        if scheduling.get("nodeSelector") is not None:
            node_selector = r.str_map(scheduling, "nodeSelector", "scheduling")
            r.extend(validate_labels(node_selector, "scheduling.nodeSelector"))
        read = read_tolerations(r, scheduling, "scheduling")
        r.extend(validate_tolerations(read, "scheduling.tolerations"))
        r.extend(_duplicate_tolerations(read, "scheduling.tolerations"))
        tolerations = tuple(
            Toleration(
                t.key, t.operator or TOLERATION_OP_EQUAL, t.value, t.effect, t.toleration_seconds
            )
            for t in read
        )
    return RuntimeClass(
        name=meta.name,
        handler=handler,
        overhead=overhead,
        node_selector=node_selector,
        tolerations=tolerations,
        manifest=dict(doc),
    )


def _duplicate_tolerations(tolerations: tuple[Toleration, ...], path: str) -> list[FieldError]:
    """validateTolerations of pkg/apis/node/validation: the list keys are unique."""
    errs: list[FieldError] = []
    seen: set[tuple[str, str, str, str]] = set()
    for i, t in enumerate(tolerations):
        list_key = (t.key, t.operator, t.value, t.effect)
        if list_key in seen:
            errs.append(fe.duplicate(index(path, i), Raw(_toleration_text(t))))
        seen.add(list_key)
    return errs


def _toleration_text(t: Toleration) -> str:
    seconds = "nil" if t.toleration_seconds is None else str(t.toleration_seconds)
    return (
        f"{{Key:{t.key} Operator:{t.operator} Value:{t.value} Effect:{t.effect} "
        f"TolerationSeconds:{seconds}}}"
    )


def decode_resource_quota(r: Reader, doc: Mapping[str, Any]) -> ResourceQuota:
    """ValidateResourceQuota (spec.hard, spec.scopes, spec.scopeSelector)."""
    meta = read_meta(r, doc, namespaced=True, name_fn=name_is_dns_subdomain)
    spec = r.obj(doc, "spec", "")
    hard = r.resources(spec, "hard", "spec")
    for name, value in hard.items():
        entry = key("spec.hard", name)
        problems = is_qualified_name(name)
        r.extend(fe.invalid(entry, name, m) for m in problems)
        standard = name in _QUOTA_RESOURCES or name.startswith(
            ("requests.", "hugepages-", "count/")
        )
        if not problems and "/" not in name and not standard:
            r.add(fe.invalid(entry, name, "must be a standard resource for quota"))
        r.extend(validate_resource_quantity(name, value, entry))
    scopes = tuple(r.str_list(spec, "scopes", "spec"))
    selector: list[ScopedResourceSelectorRequirement] = []
    raw_selector = r.optional_map(spec, "scopeSelector", "spec")
    if raw_selector is not None:
        for path, raw in r.maps(raw_selector, "matchExpressions", "spec.scopeSelector"):
            requirement = ScopedResourceSelectorRequirement(
                scope_name=r.string(raw, "scopeName", path),
                operator=r.string(raw, "operator", path),
                values=tuple(r.str_list(raw, "values", path)),
            )
            r.extend(_validate_scope_requirement(requirement, path))
            selector.append(requirement)
    r.extend(_validate_scopes(scopes, [s.scope_name for s in selector], hard))
    return ResourceQuota(
        name=meta.name,
        namespace=meta.namespace,
        hard=hard,
        scopes=scopes,
        scope_selector=tuple(selector),
        manifest=dict(doc),
    )


def _validate_scope_requirement(
    requirement: ScopedResourceSelectorRequirement, path: str
) -> list[FieldError]:
    errs: list[FieldError] = []
    if requirement.scope_name not in _STANDARD_SCOPES:
        errs.append(
            fe.invalid(child(path, "scopeName"), requirement.scope_name, "unsupported scope")
        )
    if requirement.operator not in _SCOPE_OPERATORS:
        errs.append(
            fe.invalid(
                child(path, "operator"), requirement.operator, "not a valid selector operator"
            )
        )
    elif requirement.operator in ("In", "NotIn"):
        if not requirement.values:
            errs.append(
                fe.required(
                    child(path, "values"),
                    "must be at least one value when `operator` is 'In' or 'NotIn' for scope "
                    "selector",
                )
            )
    elif requirement.values:
        errs.append(
            fe.invalid(
                child(path, "values"),
                list(requirement.values),
                "must be no value when `operator` is 'Exist' or 'DoesNotExist' for scope selector",
            )
        )
    return errs


def _validate_scopes(
    scopes: tuple[str, ...], selector_scopes: list[str], hard: ResourceList
) -> list[FieldError]:
    """validateResourceQuotaScopes and validateScopeSelector's scope checks."""
    errs: list[FieldError] = []
    for scope in scopes:
        if scope not in _STANDARD_SCOPES:
            errs.append(fe.invalid("spec.scopes", scope, "unsupported scope"))
    every = {*scopes, *selector_scopes}
    for scope in every:
        if scope in (SCOPE_BEST_EFFORT,) and any(n not in _BEST_EFFORT_RESOURCES for n in hard):
            names = sorted(hard)
            shown = Raw("[" + " ".join(names) + "]")
            errs.append(fe.invalid("spec.hard", shown, "unsupported scope applied to resource"))
    for first, second in (
        (SCOPE_TERMINATING, SCOPE_NOT_TERMINATING),
        (SCOPE_BEST_EFFORT, SCOPE_NOT_BEST_EFFORT),
    ):
        if first in every and second in every:
            shown = Raw("[" + " ".join(scopes) + "]")
            errs.append(fe.invalid("spec.scopes", shown, "conflicting scopes"))
    return errs
