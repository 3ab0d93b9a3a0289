"""Namespace (v1), PriorityClass (scheduling.k8s.io/v1), PodDisruptionBudget (policy/v1).

Mirrors pkg/apis/core/v1/defaults.go (SetDefaults_Namespace: the kubernetes.io/metadata.name
label) and pkg/apis/core/validation/validation.go (ValidateNamespace); pkg/apis/scheduling/v1
(SetDefaults_PriorityClass, the system priority classes) and pkg/apis/scheduling/validation
(ValidatePriorityClass); pkg/apis/policy/validation (ValidatePodDisruptionBudget).
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

from schedviz.kube import errors as fe
from schedviz.kube.decode.meta import read_label_selector, read_meta, validate_label_selector
from schedviz.kube.decode.pods import validate_preemption_policy
from schedviz.kube.decode.reader import Reader, child
from schedviz.kube.decode.validation import (
    IS_NEGATIVE_ERROR,
    name_is_dns_label,
    name_is_dns_subdomain,
    regex_error,
)
from schedviz.kube.errors import Raw
from schedviz.kube.objects import (
    PREEMPT_LOWER_PRIORITY,
    Namespace,
    PodDisruptionBudget,
    PriorityClass,
)

HIGHEST_USER_DEFINABLE_PRIORITY = 1_000_000_000
SYSTEM_PRIORITY_CLASSES = {
    "system-node-critical": 2_000_001_000,
    "system-cluster-critical": 2_000_000_000,
}
SYSTEM_PRIORITY_CLASS_PREFIX = "system-"
NAMESPACE_NAME_LABEL = "kubernetes.io/metadata.name"
_PERCENT_FMT = "[0-9]+%"
_PERCENT_RE = re.compile(_PERCENT_FMT)


def decode_namespace(r: Reader, doc: Mapping[str, Any]) -> Namespace:
    """SetDefaults_Namespace (the kubernetes.io/metadata.name label) and ValidateNamespace."""
    meta = read_meta(r, doc, namespaced=False, name_fn=name_is_dns_label)
    labels = dict(meta.labels)
    if meta.name:
        labels[NAMESPACE_NAME_LABEL] = meta.name
    return Namespace(name=meta.name, labels=labels, manifest=dict(doc))


def _known_system_priority_class(name: str, value: int, global_default: bool) -> str:
    """schedulingapiv1.IsKnownSystemPriorityClass: "" when known, else why not."""
    if name not in SYSTEM_PRIORITY_CLASSES:
        return f"{name} is not a known system priority class"
    if SYSTEM_PRIORITY_CLASSES[name] != value:
        return f"value of {name} PriorityClass must be {SYSTEM_PRIORITY_CLASSES[name]}"
    if global_default:
        return f"globalDefault of {name} PriorityClass must be false"
    return ""


def decode_priority_class(r: Reader, doc: Mapping[str, Any]) -> PriorityClass:
    """SetDefaults_PriorityClass and ValidatePriorityClass."""
    meta = read_meta(r, doc, namespaced=False, name_fn=name_is_dns_subdomain)
    value = r.int32(doc, "value", "") or 0
    global_default = r.boolean(doc, "globalDefault", "")
    preemption_policy = r.optional_str(doc, "preemptionPolicy", "")
    if meta.name.startswith(SYSTEM_PRIORITY_CLASS_PREFIX):
        problem = _known_system_priority_class(meta.name, value, global_default)
        if problem:
            r.add(
                fe.forbidden(
                    "metadata.name",
                    f"priority class names with '{SYSTEM_PRIORITY_CLASS_PREFIX}' prefix are "
                    f"reserved for system use only. error: {problem}",
                )
            )
    elif value > HIGHEST_USER_DEFINABLE_PRIORITY:
        r.add(
            fe.forbidden(
                "value",
                "maximum allowed value of a user defined priority is "
                f"{HIGHEST_USER_DEFINABLE_PRIORITY}",
            )
        )
    r.extend(validate_preemption_policy(preemption_policy, "preemptionPolicy"))
    return PriorityClass(
        name=meta.name,
        value=value,
        global_default=global_default,
        preemption_policy=preemption_policy or PREEMPT_LOWER_PRIORITY,
        description=r.string(doc, "description", ""),
        manifest=dict(doc),
    )


def _read_int_or_percent(
    r: Reader, spec: Mapping[str, Any], name: str, path: str
) -> int | str | None:
    value = spec.get(name)
    if value is None:
        return None
    field_path = child(path, name)
    if isinstance(value, bool) or not isinstance(value, int | str):
        r._wrong(field_path, value, "integer or string")
        return None
    if isinstance(value, int):
        if value < 0:
            r.add(fe.invalid(field_path, value, IS_NEGATIVE_ERROR))
        return value
    if not _PERCENT_RE.fullmatch(value):
        r.add(
            fe.invalid(
                field_path,
                Raw(value),
                regex_error(
                    "a valid percent string must be a numeric string followed by an ending '%'",
                    _PERCENT_FMT,
                    "1%",
                    "93%",
                ),
            )
        )
    elif int(value[:-1]) > 100:
        r.add(fe.invalid(field_path, value, "must not be greater than 100%"))
    return value


def decode_pod_disruption_budget(r: Reader, doc: Mapping[str, Any]) -> PodDisruptionBudget:
    """ValidatePodDisruptionBudget (policy/v1)."""
    meta = read_meta(r, doc, namespaced=True, name_fn=name_is_dns_subdomain)
    spec = r.obj(doc, "spec", "")
    min_available = spec.get("minAvailable")
    max_unavailable = spec.get("maxUnavailable")
    if min_available is not None and max_unavailable is not None:
        shown = Raw(
            f"policy.PodDisruptionBudgetSpec{{MinAvailable:{min_available}, "
            f"MaxUnavailable:{max_unavailable}}}"
        )
        r.add(fe.invalid("spec", shown, "minAvailable and maxUnavailable cannot be both set"))
    min_value = _read_int_or_percent(r, spec, "minAvailable", "spec")
    max_value = _read_int_or_percent(r, spec, "maxUnavailable", "spec")
    selector = read_label_selector(r, spec, "selector", "spec")
    r.extend(validate_label_selector(selector, "spec.selector"))
    policy = r.optional_str(spec, "unhealthyPodEvictionPolicy", "spec")
    if policy is not None and policy not in ("AlwaysAllow", "IfHealthyBudget"):
        r.add(
            fe.not_supported(
                "spec.unhealthyPodEvictionPolicy", policy, ("AlwaysAllow", "IfHealthyBudget")
            )
        )
    status = r.obj(doc, "status", "")
    return PodDisruptionBudget(
        name=meta.name,
        namespace=meta.namespace,
        selector=selector,
        min_available=min_value,
        max_unavailable=max_value,
        disruptions_allowed=r.int32(status, "disruptionsAllowed", "status") or 0,
        manifest=dict(doc),
    )
