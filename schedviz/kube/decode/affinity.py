"""Pod and node affinity, topology spread constraints, and the label keys merged into them.

Mirrors pkg/apis/core/validation/validation.go (validateAffinity, validatePodAffinityTerm,
validateMatchLabelKeysAndMismatchLabelKeys, validateTopologySpreadConstraints,
validateMatchLabelKeysInTopologySpread) and pkg/registry/core/pod/strategy.go's PrepareForCreate:
matchLabelKeys/mismatchLabelKeys merged into pod affinity selectors and topology spread selectors
(MatchLabelKeysInPodAffinity, MatchLabelKeysInPodTopologySpreadSelectorMerge, both on).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from typing import Any

from schedviz.kube import errors as fe
from schedviz.kube.decode.meta import (
    read_label_selector,
    read_node_selector,
    read_node_selector_term,
    validate_label_name,
    validate_label_selector,
    validate_node_selector,
    validate_node_selector_term,
)
from schedviz.kube.decode.reader import Reader, child, index
from schedviz.kube.decode.validation import IS_NOT_POSITIVE_ERROR, name_is_dns_label
from schedviz.kube.errors import FieldError
from schedviz.kube.objects import (
    Affinity,
    LabelSelector,
    LabelSelectorRequirement,
    NodeAffinity,
    PodAffinity,
    PodAffinityTerm,
    PreferredSchedulingTerm,
    TopologySpreadConstraint,
    WeightedPodAffinityTerm,
)


def _read_pod_affinity_term(r: Reader, raw: Mapping[str, Any], path: str) -> PodAffinityTerm:
    return PodAffinityTerm(
        topology_key=r.string(raw, "topologyKey", path),
        label_selector=read_label_selector(r, raw, "labelSelector", path),
        namespaces=tuple(r.str_list(raw, "namespaces", path)),
        namespace_selector=read_label_selector(r, raw, "namespaceSelector", path),
        match_label_keys=tuple(r.str_list(raw, "matchLabelKeys", path)),
        mismatch_label_keys=tuple(r.str_list(raw, "mismatchLabelKeys", path)),
    )


def _read_pod_affinity(r: Reader, raw: Mapping[str, Any], path: str) -> PodAffinity:
    required_terms = tuple(
        _read_pod_affinity_term(r, term, term_path)
        for term_path, term in r.maps(raw, "requiredDuringSchedulingIgnoredDuringExecution", path)
    )
    preferred = []
    for term_path, term in r.maps(raw, "preferredDuringSchedulingIgnoredDuringExecution", path):
        inner = r.obj(term, "podAffinityTerm", term_path)
        preferred.append(
            WeightedPodAffinityTerm(
                weight=r.int32(term, "weight", term_path) or 0,
                pod_affinity_term=_read_pod_affinity_term(
                    r, inner, child(term_path, "podAffinityTerm")
                ),
            )
        )
    return PodAffinity(required=required_terms, preferred=tuple(preferred))


def read_affinity(r: Reader, spec: Mapping[str, Any], path: str) -> Affinity | None:
    raw = r.optional_map(spec, "affinity", path)
    if raw is None:
        return None
    aff_path = child(path, "affinity")
    node_affinity = None
    node_raw = r.optional_map(raw, "nodeAffinity", aff_path)
    if node_raw is not None:
        na_path = child(aff_path, "nodeAffinity")
        required_raw = r.optional_map(
            node_raw, "requiredDuringSchedulingIgnoredDuringExecution", na_path
        )
        required_selector = None
        if required_raw is not None:
            required_path = child(na_path, "requiredDuringSchedulingIgnoredDuringExecution")
            required_selector = read_node_selector(r, required_raw, required_path)
        preferred = []
        for term_path, term in r.maps(
            node_raw, "preferredDuringSchedulingIgnoredDuringExecution", na_path
        ):
            preference = r.obj(term, "preference", term_path)
            preferred.append(
                PreferredSchedulingTerm(
                    weight=r.int32(term, "weight", term_path) or 0,
                    preference=read_node_selector_term(
                        r, preference, child(term_path, "preference")
                    ),
                )
            )
        node_affinity = NodeAffinity(required=required_selector, preferred=tuple(preferred))
    pod_affinity = pod_anti_affinity = None
    if (raw_pa := r.optional_map(raw, "podAffinity", aff_path)) is not None:
        pod_affinity = _read_pod_affinity(r, raw_pa, child(aff_path, "podAffinity"))
    if (raw_paa := r.optional_map(raw, "podAntiAffinity", aff_path)) is not None:
        pod_anti_affinity = _read_pod_affinity(r, raw_paa, child(aff_path, "podAntiAffinity"))
    return Affinity(
        node_affinity=node_affinity, pod_affinity=pod_affinity, pod_anti_affinity=pod_anti_affinity
    )


def _merge_label_keys(
    selector: LabelSelector,
    keys_and_operators: tuple[tuple[tuple[str, ...], str], ...],
    labels: Mapping[str, str],
) -> LabelSelector:
    """applyLabelKeysToLabelSelector: ``key <operator> (pod's value)`` for each key it has."""
    added = tuple(
        LabelSelectorRequirement(k, operator, (labels[k],))
        for keys, operator in keys_and_operators
        for k in keys
        if k in labels
    )
    return LabelSelector(
        match_labels=dict(selector.match_labels),
        match_expressions=selector.match_expressions + added,
    )


def apply_match_label_keys(term: PodAffinityTerm, labels: Mapping[str, str]) -> PodAffinityTerm:
    """strategy.go applyMatchLabelKeysAndMismatchLabelKeys: ``key In (v)`` / ``key NotIn (v)``.

    Keys the pod has no label for are skipped; a term without a selector is left alone (a nil
    selector matches nothing).
    """
    if (not term.match_label_keys and not term.mismatch_label_keys) or term.label_selector is None:
        return term
    selector = _merge_label_keys(
        term.label_selector,
        ((term.match_label_keys, "In"), (term.mismatch_label_keys, "NotIn")),
        labels,
    )
    return dataclasses.replace(term, label_selector=selector)


def merge_match_label_keys(affinity: Affinity | None, labels: Mapping[str, str]) -> Affinity | None:
    """mutatePodAffinity: merges label keys into both podAffinity and podAntiAffinity terms."""
    if affinity is None:
        return None

    def merged(pa: PodAffinity | None) -> PodAffinity | None:
        if pa is None:
            return None
        return PodAffinity(
            required=tuple(apply_match_label_keys(t, labels) for t in pa.required),
            preferred=tuple(
                WeightedPodAffinityTerm(
                    w.weight, apply_match_label_keys(w.pod_affinity_term, labels)
                )
                for w in pa.preferred
            ),
        )

    return Affinity(
        affinity.node_affinity, merged(affinity.pod_affinity), merged(affinity.pod_anti_affinity)
    )


def _keys_also_in_selector(
    keys: tuple[str, ...], selector: LabelSelector, path: str
) -> list[FieldError]:
    """A matchLabelKeys key the selector constrains besides the requirement merged from it.

    The merged requirement comes after the user's own, so a key seen earlier in matchLabels or
    matchExpressions is reported (validateMatchLabelKeysAndMismatchLabelKeys, step 2).
    """
    errs: list[FieldError] = []
    positions = {k: i for i, k in enumerate(keys)}
    seen = set(selector.match_labels)
    for expr in selector.match_expressions:
        if expr.key in positions and expr.key in seen:
            detail = "exists in both matchLabelKeys and labelSelector"
            errs.append(fe.invalid(index(path, positions[expr.key]), expr.key, detail))
        seen.add(expr.key)
    return errs


def _validate_label_keys(
    path: str, keys: tuple[str, ...], selector: LabelSelector | None
) -> list[FieldError]:
    if not keys:
        return []
    if selector is None:
        return [fe.forbidden(path, "must not be specified when labelSelector is not set")]
    errs: list[FieldError] = []
    for i, k in enumerate(keys):
        errs.extend(validate_label_name(k, index(path, i)))
    return errs


def _validate_match_label_keys_and_mismatch_label_keys(
    term: PodAffinityTerm, path: str
) -> list[FieldError]:
    errs = _validate_label_keys(
        child(path, "matchLabelKeys"), term.match_label_keys, term.label_selector
    )
    errs += _validate_label_keys(
        child(path, "mismatchLabelKeys"), term.mismatch_label_keys, term.label_selector
    )
    if term.label_selector is not None:
        # Upstream indexes the term's own path here, not matchLabelKeys.
        errs += _keys_also_in_selector(term.match_label_keys, term.label_selector, path)
    mismatch = set(term.mismatch_label_keys)
    for i, k in enumerate(term.match_label_keys):
        if k in mismatch:
            errs.append(
                fe.invalid(
                    index(child(path, "matchLabelKeys"), i),
                    k,
                    "exists in both matchLabelKeys and mismatchLabelKeys",
                )
            )
    return errs


def _validate_pod_affinity_term(term: PodAffinityTerm, path: str) -> list[FieldError]:
    errs = validate_label_selector(term.label_selector, child(path, "labelSelector"))
    errs += validate_label_selector(term.namespace_selector, child(path, "namespaceSelector"))
    for name in term.namespaces:
        errs.extend(
            fe.invalid(child(path, "namespace"), name, msg)
            for msg in name_is_dns_label(name, False)
        )
    errs += _validate_match_label_keys_and_mismatch_label_keys(term, path)
    if not term.topology_key:
        errs.append(fe.required(child(path, "topologyKey"), "can not be empty"))
    return errs + validate_label_name(term.topology_key, child(path, "topologyKey"))


def _validate_pod_affinity(affinity: PodAffinity, path: str) -> list[FieldError]:
    errs: list[FieldError] = []
    required_path = child(path, "requiredDuringSchedulingIgnoredDuringExecution")
    for i, term in enumerate(affinity.required):
        errs += _validate_pod_affinity_term(term, index(required_path, i))
    preferred_path = child(path, "preferredDuringSchedulingIgnoredDuringExecution")
    for i, weighted in enumerate(affinity.preferred):
        term_path = index(preferred_path, i)
        if not 0 < weighted.weight <= 100:
            errs.append(
                fe.invalid(
                    child(term_path, "weight"), weighted.weight, "must be in the range 1-100"
                )
            )
        errs += _validate_pod_affinity_term(
            weighted.pod_affinity_term, child(term_path, "podAffinityTerm")
        )
    return errs


def validate_affinity(affinity: Affinity | None, path: str) -> list[FieldError]:
    if affinity is None:
        return []
    errs: list[FieldError] = []
    if (na := affinity.node_affinity) is not None:
        na_path = child(path, "nodeAffinity")
        if na.required is not None:
            errs += validate_node_selector(
                na.required, child(na_path, "requiredDuringSchedulingIgnoredDuringExecution")
            )
        preferred_path = child(na_path, "preferredDuringSchedulingIgnoredDuringExecution")
        for i, term in enumerate(na.preferred):
            if not 0 < term.weight <= 100:
                errs.append(
                    fe.invalid(
                        child(index(preferred_path, i), "weight"),
                        term.weight,
                        "must be in the range 1-100",
                    )
                )
            # Upstream always allows invalid label values in preferred terms.
            errs += validate_node_selector_term(
                term.preference,
                child(index(preferred_path, i), "preference"),
                allow_invalid_values=True,
            )
    if affinity.pod_affinity is not None:
        errs += _validate_pod_affinity(affinity.pod_affinity, child(path, "podAffinity"))
    if affinity.pod_anti_affinity is not None:
        errs += _validate_pod_affinity(affinity.pod_anti_affinity, child(path, "podAntiAffinity"))
    return errs


_WHEN_UNSATISFIABLE = ("DoNotSchedule", "ScheduleAnyway")
_NODE_INCLUSION_POLICIES = ("Honor", "Ignore")


def read_topology_spread_constraints(
    r: Reader, spec: Mapping[str, Any], path: str
) -> tuple[TopologySpreadConstraint, ...]:
    constraints = []
    for c_path, raw in r.maps(spec, "topologySpreadConstraints", path):
        constraints.append(
            TopologySpreadConstraint(
                max_skew=r.int32(raw, "maxSkew", c_path) or 0,
                topology_key=r.string(raw, "topologyKey", c_path),
                when_unsatisfiable=r.string(raw, "whenUnsatisfiable", c_path),
                label_selector=read_label_selector(r, raw, "labelSelector", c_path),
                min_domains=r.int32(raw, "minDomains", c_path),
                node_affinity_policy=r.optional_str(raw, "nodeAffinityPolicy", c_path),
                node_taints_policy=r.optional_str(raw, "nodeTaintsPolicy", c_path),
                match_label_keys=tuple(r.str_list(raw, "matchLabelKeys", c_path)),
            )
        )
    return tuple(constraints)


def validate_topology_spread_constraints(
    constraints: tuple[TopologySpreadConstraint, ...], path: str
) -> list[FieldError]:
    errs: list[FieldError] = []
    for i, c in enumerate(constraints):
        c_path = index(path, i)
        if c.max_skew <= 0:
            errs.append(fe.invalid(child(c_path, "maxSkew"), c.max_skew, IS_NOT_POSITIVE_ERROR))
        if not c.topology_key:
            errs.append(fe.required(child(c_path, "topologyKey"), "can not be empty"))
        if c.when_unsatisfiable not in _WHEN_UNSATISFIABLE:
            errs.append(
                fe.not_supported(
                    child(c_path, "whenUnsatisfiable"), c.when_unsatisfiable, _WHEN_UNSATISFIABLE
                )
            )
        for rest in constraints[i + 1 :]:
            if (rest.topology_key, rest.when_unsatisfiable) == (
                c.topology_key,
                c.when_unsatisfiable,
            ):
                errs.append(
                    fe.duplicate(
                        child(c_path, "{topologyKey, whenUnsatisfiable}"),
                        f"{{{c.topology_key}, {c.when_unsatisfiable}}}",
                    )
                )
                break
        if c.min_domains is not None:
            if c.min_domains <= 0:
                errs.append(
                    fe.invalid(child(c_path, "minDomains"), c.min_domains, IS_NOT_POSITIVE_ERROR)
                )
            if c.when_unsatisfiable != "DoNotSchedule":
                detail = (
                    "can only use minDomains if whenUnsatisfiable=DoNotSchedule, "
                    f"not {c.when_unsatisfiable}"
                )
                errs.append(fe.invalid(child(c_path, "minDomains"), c.min_domains, detail))
        for name, policy in (
            ("nodeAffinityPolicy", c.node_affinity_policy),
            ("nodeTaintsPolicy", c.node_taints_policy),
        ):
            if policy is not None and policy not in _NODE_INCLUSION_POLICIES:
                errs.append(fe.not_supported(child(c_path, name), policy, _NODE_INCLUSION_POLICIES))
        errs += _validate_match_label_keys_in_topology_spread(c, child(c_path, "matchLabelKeys"))
        errs += validate_label_selector(c.label_selector, child(c_path, "labelSelector"))
    return errs


def _validate_match_label_keys_in_topology_spread(
    c: TopologySpreadConstraint, path: str
) -> list[FieldError]:
    """matchLabelKeys of a constraint whose selector already has them merged in.

    With MatchLabelKeysInPodTopologySpreadSelectorMerge (on by default since 1.34) a key is
    refused when the selector constrains it besides the merged requirement, the rule
    validateMatchLabelKeysAndMismatchLabelKeys applies to pod affinity.
    """
    if not c.match_label_keys:
        return []
    if c.label_selector is None:
        return [fe.forbidden(path, "must not be specified when labelSelector is not set")]
    errs: list[FieldError] = []
    for i, k in enumerate(c.match_label_keys):
        errs += validate_label_name(k, index(path, i))
    return errs + _keys_also_in_selector(c.match_label_keys, c.label_selector, path)


def merge_spread_match_label_keys(
    constraints: tuple[TopologySpreadConstraint, ...], labels: Mapping[str, str]
) -> tuple[TopologySpreadConstraint, ...]:
    """strategy.go mutateTopologySpreadConstraints: ``key In (pod's value)`` per matchLabelKey."""
    merged = []
    for c in constraints:
        if c.match_label_keys and c.label_selector is not None:
            selector = _merge_label_keys(c.label_selector, ((c.match_label_keys, "In"),), labels)
            c = dataclasses.replace(c, label_selector=selector)
        merged.append(c)
    return tuple(merged)
