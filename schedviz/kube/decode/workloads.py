"""Service (v1) and the workloads: Deployment, ReplicaSet, StatefulSet, DaemonSet (apps/v1),
ReplicationController (v1), Job (batch/v1).

Mirrors pkg/apis/apps/v1/defaults.go, pkg/apis/core/v1/defaults.go
(SetDefaults_ReplicationController), pkg/apis/batch/v1/defaults.go and the create-time parts of
pkg/registry/batch/job/strategy.go (the generated selector and labels), and the validation of
pkg/apis/apps/validation, pkg/apis/batch/validation and pkg/apis/core/validation
(ValidateReplicationController, ValidateService's name): the selector required and matching the
template's labels, the template a valid pod with the restart policy its controller allows.

Deliberately different: only what the scheduler and the controllers' pod creation read is kept
(no strategies, revision history, probes of readiness); a Service's ports, type and IPs are
ignored, its selector kept for the default topology spreading.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from schedviz.kube import errors as fe
from schedviz.kube.decode.meta import (
    _Meta,
    deterministic_uid,
    read_label_selector,
    read_meta,
    validate_label_selector,
)
from schedviz.kube.decode.pods import decode_pod
from schedviz.kube.decode.reader import Reader, child
from schedviz.kube.decode.validation import (
    IS_NEGATIVE_ERROR,
    NameFn,
    name_is_dns1035_label,
    name_is_dns_subdomain,
)
from schedviz.kube.errors import FieldError
from schedviz.kube.labels import as_selector
from schedviz.kube.objects import (
    DaemonSet,
    Deployment,
    Job,
    LabelSelector,
    ReplicaSet,
    ReplicationController,
    Service,
    StatefulSet,
    Workload,
)

# The labels the Job strategy puts on a Job's pods (and selects them by), batch/v1 types.go.
JOB_CONTROLLER_UID_LABEL = "batch.kubernetes.io/controller-uid"
JOB_NAME_LABEL = "batch.kubernetes.io/job-name"
LEGACY_JOB_CONTROLLER_UID_LABEL = "controller-uid"
LEGACY_JOB_NAME_LABEL = "job-name"


def _meta(r: Reader, doc: Mapping[str, Any], kind: str, name_fn: NameFn) -> _Meta:
    meta = read_meta(r, doc, namespaced=True, name_fn=name_fn)
    meta.uid = meta.uid or deterministic_uid(kind, meta.namespace, meta.name)
    return meta


def decode_service(r: Reader, doc: Mapping[str, Any]) -> Service:
    meta = _meta(r, doc, "Service", name_is_dns1035_label)
    spec = r.obj(doc, "spec", "")
    raw = r.optional_map(spec, "selector", "spec")
    selector = r.str_map(spec, "selector", "spec") if raw is not None else None
    return Service(
        name=meta.name,
        namespace=meta.namespace,
        uid=meta.uid,
        labels=meta.labels,
        selector=selector or None,
        manifest=dict(doc),
    )


def _template(r: Reader, spec: Mapping[str, Any], namespace: str, name: str) -> dict[str, Any]:
    """The pod template, validated as a pod of the workload's namespace would be."""
    template = r.obj(spec, "template", "spec")
    metadata = template.get("metadata")
    metadata = dict(metadata) if isinstance(metadata, Mapping) else {}
    pod_doc = {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {**metadata, "name": name or "template", "namespace": namespace},
        "spec": template.get("spec", {}),
    }
    inner = Reader()
    decode_pod(inner, pod_doc)
    r.extend(e.with_prefix("spec.template.") for e in inner.errors)
    return {"metadata": metadata, "spec": pod_doc["spec"]}


def _template_labels(template: Mapping[str, Any]) -> dict[str, str]:
    labels = template.get("metadata", {}).get("labels")
    return {str(k): str(v) for k, v in labels.items()} if isinstance(labels, Mapping) else {}


def _restart_policy(template: Mapping[str, Any]) -> str:
    spec = template.get("spec")
    policy = spec.get("restartPolicy") if isinstance(spec, Mapping) else None
    return policy if isinstance(policy, str) else ""


def _validate_selector(
    selector: LabelSelector | None, template: Mapping[str, Any], what: str
) -> list[FieldError]:
    """apps validation: a selector is required, not empty, and matches the template's labels.
    Without one, the template is still checked against ``LabelSelectorAsSelector(nil)``,
    which selects nothing: the API server gives both errors."""
    if selector is None:
        return [fe.required("spec.selector"), _selector_mismatch(template)]
    errs = validate_label_selector(selector, "spec.selector")
    if not selector.match_labels and not selector.match_expressions:
        errs.append(
            fe.invalid(
                "spec.selector", _raw_selector(selector), f"empty selector is invalid for {what}"
            )
        )
    elif not errs and not as_selector(selector).matches(_template_labels(template)):
        errs.append(_selector_mismatch(template))
    return errs


def _raw_selector(selector: LabelSelector) -> dict[str, Any]:
    return {"matchLabels": selector.match_labels}


def _selector_mismatch(template: Mapping[str, Any]) -> FieldError:
    return fe.invalid(
        "spec.template.metadata.labels",
        _template_labels(template),
        "`selector` does not match template `labels`",
    )


def _always(template: Mapping[str, Any]) -> list[FieldError]:
    policy = _restart_policy(template) or "Always"
    if policy != "Always":
        return [fe.not_supported("spec.template.spec.restartPolicy", policy, ["Always"])]
    return []


def _replicas(r: Reader, spec: Mapping[str, Any]) -> int:
    replicas = r.int32(spec, "replicas", "spec")
    if replicas is None:
        return 1
    if replicas < 0:
        r.add(fe.invalid("spec.replicas", replicas, IS_NEGATIVE_ERROR))
    return replicas


def _apps_workload(
    r: Reader, doc: Mapping[str, Any], cls: type[Workload], what: str
) -> tuple[Workload, Mapping[str, Any]]:
    meta = _meta(r, doc, cls.__name__, name_is_dns_subdomain)
    spec = r.obj(doc, "spec", "")
    selector = read_label_selector(r, spec, "selector", "spec")
    template = _template(r, spec, meta.namespace, meta.name)
    replicas = _replicas(r, spec) if cls is not DaemonSet else 0
    r.extend(_validate_selector(selector, template, what))
    r.extend(_always(template))
    workload = cls(
        name=meta.name,
        namespace=meta.namespace,
        uid=meta.uid,
        labels=meta.labels,
        annotations=meta.annotations,
        owner_references=meta.owner_references,
        selector=selector,
        template=template,
        replicas=replicas,
        manifest=dict(doc),
    )
    return workload, spec


def decode_deployment(r: Reader, doc: Mapping[str, Any]) -> Deployment:
    workload, _ = _apps_workload(r, doc, Deployment, "deployment")
    assert isinstance(workload, Deployment)
    return workload


def decode_replica_set(r: Reader, doc: Mapping[str, Any]) -> ReplicaSet:
    # Upstream's ValidateReplicaSetSpec says "deployment" too.
    workload, _ = _apps_workload(r, doc, ReplicaSet, "deployment")
    assert isinstance(workload, ReplicaSet)
    return workload


def decode_daemon_set(r: Reader, doc: Mapping[str, Any]) -> DaemonSet:
    workload, _ = _apps_workload(r, doc, DaemonSet, "daemonset")
    assert isinstance(workload, DaemonSet)
    return workload


_POD_MANAGEMENT_POLICIES = ("OrderedReady", "Parallel")


def decode_stateful_set(r: Reader, doc: Mapping[str, Any]) -> StatefulSet:
    workload, spec = _apps_workload(r, doc, StatefulSet, "statefulset")
    assert isinstance(workload, StatefulSet)
    policy = r.string(spec, "podManagementPolicy", "spec") or "OrderedReady"
    if policy not in _POD_MANAGEMENT_POLICIES:
        r.add(fe.not_supported("spec.podManagementPolicy", policy, _POD_MANAGEMENT_POLICIES))
    workload.pod_management_policy = policy
    workload.service_name = r.string(spec, "serviceName", "spec")
    workload.volume_claim_templates = tuple(
        dict(claim) for _, claim in r.maps(spec, "volumeClaimTemplates", "spec")
    )
    return workload


def decode_replication_controller(r: Reader, doc: Mapping[str, Any]) -> ReplicationController:
    """SetDefaults_ReplicationController: the selector and labels default to the template's
    labels; ValidateReplicationControllerSpec."""
    meta = _meta(r, doc, "ReplicationController", name_is_dns_subdomain)
    spec = r.obj(doc, "spec", "")
    template = _template(r, spec, meta.namespace, meta.name)
    selector = r.str_map(spec, "selector", "spec") or _template_labels(template)
    replicas = _replicas(r, spec)
    if not selector:
        r.add(fe.required("spec.selector"))
    elif not all(_template_labels(template).get(k) == v for k, v in selector.items()):
        r.add(_selector_mismatch(template))
    r.extend(_always(template))
    return ReplicationController(
        name=meta.name,
        namespace=meta.namespace,
        uid=meta.uid,
        labels=meta.labels or _template_labels(template),
        annotations=meta.annotations,
        owner_references=meta.owner_references,
        selector=selector,
        template=template,
        replicas=replicas,
        manifest=dict(doc),
    )


_JOB_RESTART_POLICIES = ("OnFailure", "Never")
_COMPLETION_MODES = ("NonIndexed", "Indexed")


def decode_job(r: Reader, doc: Mapping[str, Any]) -> Job:
    """SetDefaults_Job (parallelism and completions 1 when both are unset), the strategy's
    generated selector and pod labels (manualSelector unset), ValidateJobSpec."""
    meta = _meta(r, doc, "Job", name_is_dns_subdomain)
    spec = r.obj(doc, "spec", "")
    template = _template(r, spec, meta.namespace, meta.name)
    parallelism = r.int32(spec, "parallelism", "spec")
    completions = r.int32(spec, "completions", "spec")
    if parallelism is None and completions is None:
        parallelism, completions = 1, 1
    parallelism = 1 if parallelism is None else parallelism
    for name, value in (("parallelism", parallelism), ("completions", completions)):
        if value is not None and value < 0:
            r.add(fe.invalid(child("spec", name), value, IS_NEGATIVE_ERROR))
    mode = r.string(spec, "completionMode", "spec") or "NonIndexed"
    if mode not in _COMPLETION_MODES:
        r.add(fe.not_supported("spec.completionMode", mode, _COMPLETION_MODES))
    elif mode == "Indexed" and completions is None:
        r.add(fe.required("spec.completions", "when completion mode is Indexed"))
    policy = _restart_policy(template)
    if not policy:
        r.add(fe.required("spec.template.spec.restartPolicy", 'valid values: "OnFailure", "Never"'))
    elif policy not in _JOB_RESTART_POLICIES:
        r.add(fe.not_supported("spec.template.spec.restartPolicy", policy, _JOB_RESTART_POLICIES))
    if r.boolean(spec, "manualSelector", "spec"):
        selector = read_label_selector(r, spec, "selector", "spec")
        r.extend(_validate_selector(selector, template, "job"))
    else:
        uid = meta.uid
        generated = {
            JOB_CONTROLLER_UID_LABEL: uid,
            JOB_NAME_LABEL: meta.name,
            LEGACY_JOB_CONTROLLER_UID_LABEL: uid,
            LEGACY_JOB_NAME_LABEL: meta.name,
        }
        template["metadata"] = {
            **template["metadata"],
            "labels": {**_template_labels(template), **generated},
        }
        selector = LabelSelector(match_labels={JOB_CONTROLLER_UID_LABEL: uid})
    return Job(
        name=meta.name,
        namespace=meta.namespace,
        uid=meta.uid,
        labels=meta.labels,
        annotations=meta.annotations,
        owner_references=meta.owner_references,
        selector=selector,
        template=template,
        replicas=0,
        parallelism=parallelism,
        completions=completions,
        completion_mode=mode,
        manifest=dict(doc),
    )
