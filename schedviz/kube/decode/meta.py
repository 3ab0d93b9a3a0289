"""ObjectMeta, labels, annotations, owner references, label selectors and node selectors.

Mirrors k8s.io/apimachinery/pkg/api/validation/objectmeta.go (ValidateObjectMeta on create,
ValidateAnnotations, ValidateOwnerReferences), k8s.io/apimachinery/pkg/apis/meta/v1/validation
(ValidateLabels, ValidateLabelName, ValidateLabelSelector) and pkg/apis/core/validation/
validation.go (ValidateNodeSelector, ValidateNodeSelectorTerm); a missing uid is filled with a
deterministic one (uuid5 of kind, namespace and name).
"""

from __future__ import annotations

import uuid
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from schedviz.kube import errors as fe
from schedviz.kube.decode.reader import Reader, child, index
from schedviz.kube.decode.validation import (
    NameFn,
    byte_len,
    is_qualified_name,
    is_valid_label_value,
    name_is_dns_label,
    name_is_dns_subdomain,
)
from schedviz.kube.errors import FieldError, Raw
from schedviz.kube.objects import (
    LabelSelector,
    LabelSelectorRequirement,
    NodeSelector,
    NodeSelectorRequirement,
    NodeSelectorTerm,
    OwnerReference,
)

TOTAL_ANNOTATION_SIZE_LIMIT = 256 * 1024


def validate_label_name(name: str, path: str) -> list[FieldError]:
    return [fe.invalid(path, name, msg) for msg in is_qualified_name(name)]


def validate_labels(labels: Mapping[str, str], path: str) -> list[FieldError]:
    errs: list[FieldError] = []
    for k, v in labels.items():
        errs.extend(validate_label_name(k, path))
        errs.extend(fe.invalid(path, v, msg) for msg in is_valid_label_value(v))
    return errs


def validate_annotations(annotations: Mapping[str, str], path: str) -> list[FieldError]:
    errs = [fe.invalid(path, k, msg) for k in annotations for msg in is_qualified_name(k.lower())]
    size = sum(byte_len(k) + byte_len(v) for k, v in annotations.items())
    if size > TOTAL_ANNOTATION_SIZE_LIMIT:
        errs.append(fe.too_long(path, TOTAL_ANNOTATION_SIZE_LIMIT))
    return errs


@dataclass
class _Meta:
    name: str = ""
    namespace: str = ""
    uid: str = ""
    labels: dict[str, str] = field(default_factory=dict)
    annotations: dict[str, str] = field(default_factory=dict)
    owner_references: tuple[OwnerReference, ...] = ()
    creation_timestamp: str = ""
    deletion_timestamp: str | None = None


def read_meta(r: Reader, doc: Mapping[str, Any], *, namespaced: bool, name_fn: NameFn) -> _Meta:
    """ObjectMeta, defaulted and validated as ValidateObjectMeta does on create."""
    path = "metadata"
    meta_doc = r.obj(doc, "metadata", "")
    meta = _Meta(
        name=r.string(meta_doc, "name", path),
        uid=r.string(meta_doc, "uid", path),
        labels=r.str_map(meta_doc, "labels", path),
        annotations=r.str_map(meta_doc, "annotations", path),
        creation_timestamp=r.string(meta_doc, "creationTimestamp", path),
        deletion_timestamp=r.optional_str(meta_doc, "deletionTimestamp", path),
    )
    generate_name = r.string(meta_doc, "generateName", path)
    if generate_name:
        r.name(child(path, "generateName"), generate_name, name_fn(generate_name, True))
    if not meta.name:
        r.add(fe.required(child(path, "name"), "name or generateName is required"))
    else:
        r.name(child(path, "name"), meta.name, name_fn(meta.name, False))
    if namespaced:
        # The request's namespace: "default" when the manifest names none.
        meta.namespace = r.string(meta_doc, "namespace", path) or "default"
        r.extend(
            fe.invalid(child(path, "namespace"), meta.namespace, msg)
            for msg in name_is_dns_label(meta.namespace, False)
        )
    r.extend(validate_labels(meta.labels, child(path, "labels")))
    r.extend(validate_annotations(meta.annotations, child(path, "annotations")))
    meta.owner_references = _read_owner_references(r, meta_doc, path)
    return meta


def _read_owner_references(
    r: Reader, meta_doc: Mapping[str, Any], path: str
) -> tuple[OwnerReference, ...]:
    refs = []
    refs_path = child(path, "ownerReferences")
    first_controller = ""
    for _, ref in r.maps(meta_doc, "ownerReferences", path):
        api_version = r.string(ref, "apiVersion", refs_path)
        owner = OwnerReference(
            kind=r.string(ref, "kind", refs_path),
            name=r.string(ref, "name", refs_path),
            uid=r.string(ref, "uid", refs_path),
            controller=r.boolean(ref, "controller", refs_path),
        )
        if not api_version.rpartition("/")[2]:
            r.add(
                fe.invalid(child(refs_path, "apiVersion"), api_version, "version must not be empty")
            )
        for name, value in (("kind", owner.kind), ("name", owner.name), ("uid", owner.uid)):
            if not value:
                r.add(fe.invalid(child(refs_path, name), value, "must not be empty"))
        if owner.controller:
            current = f"{owner.kind}/{owner.name}"
            if first_controller:
                detail = (
                    'Only one reference can have Controller set to true. Found "true" in '
                    f"references for {first_controller} and {current}"
                )
                r.add(fe.invalid(refs_path, Raw("[]v1.OwnerReference{...}"), detail))
            else:
                first_controller = current
        refs.append(owner)
    return tuple(refs)


def deterministic_uid(kind: str, namespace: str, name: str) -> str:
    return str(uuid.uuid5(uuid.NAMESPACE_URL, f"schedviz:{kind}/{namespace}/{name}"))


def read_label_selector(
    r: Reader, obj: Mapping[str, Any], name: str, path: str
) -> LabelSelector | None:
    raw = r.optional_map(obj, name, path)
    if raw is None:
        return None
    sel_path = child(path, name)
    requirements = []
    for expr_path, expr in r.maps(raw, "matchExpressions", sel_path):
        requirements.append(
            LabelSelectorRequirement(
                key=r.string(expr, "key", expr_path),
                operator=r.string(expr, "operator", expr_path),
                values=tuple(r.str_list(expr, "values", expr_path)),
            )
        )
    return LabelSelector(
        match_labels=r.str_map(raw, "matchLabels", sel_path), match_expressions=tuple(requirements)
    )


def validate_label_selector(selector: LabelSelector | None, path: str) -> list[FieldError]:
    """metav1validation.ValidateLabelSelector, label values checked (the create-time default)."""
    if selector is None:
        return []
    errs = validate_labels(selector.match_labels, child(path, "matchLabels"))
    for i, req in enumerate(selector.match_expressions):
        req_path = index(child(path, "matchExpressions"), i)
        if req.operator in ("In", "NotIn"):
            if not req.values:
                errs.append(
                    fe.required(
                        child(req_path, "values"),
                        "must be specified when `operator` is 'In' or 'NotIn'",
                    )
                )
        elif req.operator in ("Exists", "DoesNotExist"):
            if req.values:
                errs.append(
                    fe.forbidden(
                        child(req_path, "values"),
                        "may not be specified when `operator` is 'Exists' or 'DoesNotExist'",
                    )
                )
        else:
            errs.append(
                fe.invalid(
                    child(req_path, "operator"), req.operator, "not a valid selector operator"
                )
            )
        errs.extend(validate_label_name(req.key, child(req_path, "key")))
        for j, value in enumerate(req.values):
            value_path = index(child(req_path, "values"), j)
            errs.extend(fe.invalid(value_path, value, msg) for msg in is_valid_label_value(value))
    return errs


def read_node_selector_term(r: Reader, term: Mapping[str, Any], path: str) -> NodeSelectorTerm:
    def requirements(name: str) -> tuple[NodeSelectorRequirement, ...]:
        return tuple(
            NodeSelectorRequirement(
                key=r.string(req, "key", req_path),
                operator=r.string(req, "operator", req_path),
                values=tuple(r.str_list(req, "values", req_path)),
            )
            for req_path, req in r.maps(term, name, path)
        )

    return NodeSelectorTerm(
        match_expressions=requirements("matchExpressions"), match_fields=requirements("matchFields")
    )


def validate_node_selector_term(
    term: NodeSelectorTerm, path: str, *, allow_invalid_values: bool
) -> list[FieldError]:
    errs: list[FieldError] = []
    for j, req in enumerate(term.match_expressions):
        req_path = index(child(path, "matchExpressions"), j)
        values_path = child(req_path, "values")
        if req.operator in ("In", "NotIn"):
            if not req.values:
                errs.append(
                    fe.required(values_path, "must be specified when `operator` is 'In' or 'NotIn'")
                )
        elif req.operator in ("Exists", "DoesNotExist"):
            if req.values:
                errs.append(
                    fe.forbidden(
                        values_path,
                        "may not be specified when `operator` is 'Exists' or 'DoesNotExist'",
                    )
                )
        elif req.operator in ("Gt", "Lt"):
            if len(req.values) != 1:
                errs.append(
                    fe.required(
                        values_path,
                        "must be specified single value when `operator` is 'Lt' or 'Gt'",
                    )
                )
        else:
            errs.append(
                fe.invalid(
                    child(req_path, "operator"), req.operator, "not a valid selector operator"
                )
            )
        errs.extend(validate_label_name(req.key, child(req_path, "key")))
        if not allow_invalid_values:
            for k, value in enumerate(req.values):
                errs.extend(
                    fe.invalid(index(values_path, k), value, msg)
                    for msg in is_valid_label_value(value)
                )
    for j, req in enumerate(term.match_fields):
        req_path = index(child(path, "matchFields"), j)
        if req.operator in ("In", "NotIn"):
            if len(req.values) != 1:
                errs.append(
                    fe.required(
                        child(req_path, "values"),
                        "must be only one value when `operator` is 'In' or 'NotIn' "
                        "for node field selector",
                    )
                )
        else:
            errs.append(
                fe.invalid(
                    child(req_path, "operator"), req.operator, "not a valid selector operator"
                )
            )
        if req.key != "metadata.name":
            errs.append(
                fe.invalid(child(req_path, "key"), req.key, "not a valid field selector key")
            )
        else:
            for k, value in enumerate(req.values):
                errs.extend(
                    fe.invalid(index(child(req_path, "values"), k), value, msg)
                    for msg in name_is_dns_subdomain(value, False)
                )
    return errs


def read_node_selector(r: Reader, raw: Mapping[str, Any], path: str) -> NodeSelector:
    terms = tuple(
        read_node_selector_term(r, term, term_path)
        for term_path, term in r.maps(raw, "nodeSelectorTerms", path)
    )
    return NodeSelector(node_selector_terms=terms)


def validate_node_selector(selector: NodeSelector, path: str) -> list[FieldError]:
    terms_path = child(path, "nodeSelectorTerms")
    if not selector.node_selector_terms:
        return [fe.required(terms_path, "must have at least one node selector term")]
    errs: list[FieldError] = []
    for i, term in enumerate(selector.node_selector_terms):
        errs.extend(
            validate_node_selector_term(term, index(terms_path, i), allow_invalid_values=False)
        )
    return errs
