"""The RuntimeClass admission plugin, for pod creates.

Mirrors plugin/pkg/admission/runtimeclass/admission.go: ``Admit`` refuses a pod naming an
unknown RuntimeClass, sets ``spec.overhead`` from the class's ``overhead.podFixed``
(``setOverhead``) and merges its ``scheduling`` into the pod (``setScheduling``: the node
selector, refusing a conflicting value, and the tolerations as pkg/util/tolerations
``MergeTolerations`` does); ``Validate`` refuses an overhead that is not the class's
(``validateOverhead``).
"""

from __future__ import annotations

from typing import Any

from schedviz.kube.decode.quantities import canonical_quantity
from schedviz.kube.errors import go_quote
from schedviz.kube.objects import (
    TAINT_EFFECT_NO_EXECUTE,
    TOLERATION_OP_EQUAL,
    TOLERATION_OP_EXISTS,
    Pod,
    ResourceList,
    RuntimeClass,
    Toleration,
)

PLUGIN_NAME = "RuntimeClass"
OVERHEAD_MISMATCH = "pod rejected: Pod's Overhead doesn't match RuntimeClass's defined Overhead"
OVERHEAD_WITHOUT_CLASS = (
    "pod rejected: Pod Overhead set without corresponding RuntimeClass defined Overhead"
)


class RuntimeClassRefusal(Exception):
    """What the plugin refuses a pod with (the reason of its Forbidden error)."""


def runtime_class_of(pod: Pod, classes: dict[str, RuntimeClass]) -> RuntimeClass | None:
    """prepareObjects: the pod's RuntimeClass, None without one; refuses an unknown one."""
    if not pod.runtime_class_name:
        return None
    found = classes.get(pod.runtime_class_name)
    if found is None:
        raise RuntimeClassRefusal(
            f"pod rejected: RuntimeClass {go_quote(pod.runtime_class_name)} not found"
        )
    return found


def _same(a: ResourceList, b: ResourceList) -> bool:
    """apiequality.Semantic.DeepEqual of two resource lists (quantities by value)."""
    return a.keys() == b.keys() and all(a[k].amount == b[k].amount for k in a)


def _has_overhead(manifest: dict[str, Any]) -> bool:
    spec = manifest.get("spec")
    return isinstance(spec, dict) and spec.get("overhead") is not None


def mutate(pod: Pod, rc: RuntimeClass | None, manifest: dict[str, Any]) -> list[str]:
    """setOverhead and setScheduling on the pod's manifest (changed in place); returns what
    changed. Raises RuntimeClassRefusal."""
    if rc is None:
        return []
    changes: list[str] = []
    spec = manifest.setdefault("spec", {})
    where = f"(RuntimeClass {rc.name})"
    if rc.overhead is not None:
        if _has_overhead(manifest) and not _same(rc.overhead, pod.overhead):
            raise RuntimeClassRefusal(OVERHEAD_MISMATCH)
        if not _has_overhead(manifest):
            shown = ", ".join(
                f"{k}={canonical_quantity(v)}" for k, v in sorted(rc.overhead.items())
            )
            changes.append(f"{PLUGIN_NAME} added overhead {shown} {where}")
        spec["overhead"] = {k: canonical_quantity(v) for k, v in rc.overhead.items()}
    if rc.node_selector is None and not rc.tolerations:
        return changes
    selector = spec.get("nodeSelector")
    selector = dict(selector) if isinstance(selector, dict) else {}
    added: list[str] = []
    for key, value in (rc.node_selector or {}).items():
        current = selector.get(key)
        if current is not None and current != value:
            raise RuntimeClassRefusal(
                f"conflict: runtimeClass.scheduling.nodeSelector[{key}] = {value}; "
                f"pod.spec.nodeSelector[{key}] = {current}"
            )
        if current is None:
            added.append(f"{key}={value}")
        selector[key] = value
    if rc.node_selector is not None and (selector or "nodeSelector" in spec):
        spec["nodeSelector"] = selector
    if added:
        changes.append(f"{PLUGIN_NAME} added nodeSelector {', '.join(added)} {where}")
    raw = spec.get("tolerations")
    own = [t for t in raw if isinstance(t, dict)] if isinstance(raw, list) else []
    merged = merge_tolerations(
        [*zip(pod.tolerations, own, strict=False)],
        [(t, _toleration_dict(t)) for t in rc.tolerations],
    )
    if rc.tolerations or own:
        spec["tolerations"] = [raw_toleration for _, raw_toleration in merged]
    own_ids = {id(raw_toleration) for raw_toleration in own}
    new = [t for t, raw_toleration in merged if id(raw_toleration) not in own_ids]
    if new:
        shown = ", ".join(_toleration_text(t) for t in new)
        changes.append(f"{PLUGIN_NAME} added tolerations {shown} {where}")
    return changes


def validate(pod: Pod, rc: RuntimeClass | None) -> str:
    """validateOverhead: the refusal, "" when the overhead is the class's."""
    if rc is not None and rc.overhead is not None:
        if not _same(rc.overhead, pod.overhead):
            return OVERHEAD_MISMATCH
    elif _has_overhead(pod.manifest):
        return OVERHEAD_WITHOUT_CLASS
    return ""


def _toleration_dict(t: Toleration) -> dict[str, Any]:
    out: dict[str, Any] = {}
    if t.key:
        out["key"] = t.key
    out["operator"] = t.operator
    if t.value:
        out["value"] = t.value
    if t.effect:
        out["effect"] = t.effect
    if t.toleration_seconds is not None:
        out["tolerationSeconds"] = t.toleration_seconds
    return out


def _toleration_text(t: Toleration) -> str:
    text = t.key or "*"
    if t.operator == TOLERATION_OP_EQUAL:
        text += f"={t.value}"
    else:
        text += f" {t.operator}"
    return f"{text}:{t.effect}" if t.effect else text


def _is_superset(ss: Toleration, t: Toleration) -> bool:
    """isSuperset: whether ``ss`` tolerates everything ``t`` does."""
    if ss == t:
        return True
    if t.key != ss.key and (ss.key or ss.operator != TOLERATION_OP_EXISTS):
        return False
    if t.effect != ss.effect and ss.effect:
        return False
    if (
        ss.effect == TAINT_EFFECT_NO_EXECUTE
        and ss.toleration_seconds is not None
        and (t.toleration_seconds is None or t.toleration_seconds > ss.toleration_seconds)
    ):
        return False
    if ss.operator in (TOLERATION_OP_EQUAL, ""):
        return t.operator == TOLERATION_OP_EQUAL and t.value == ss.value
    return ss.operator == TOLERATION_OP_EXISTS


def merge_tolerations(
    first: list[tuple[Toleration, dict[str, Any]]], second: list[tuple[Toleration, dict[str, Any]]]
) -> list[tuple[Toleration, dict[str, Any]]]:
    """MergeTolerations: both lists, without a toleration another one tolerates a superset of
    (of two equal ones, the first is kept)."""
    every = [*first, *second]
    merged: list[tuple[Toleration, dict[str, Any]]] = []
    for i, (t, raw) in enumerate(every):
        if any(_is_superset(kept, t) for kept, _ in merged):
            continue
        if any(t2 != t and _is_superset(t2, t) for t2, _ in every[i + 1 :]):
            continue
        merged.append((t, raw))
    return merged
