"""The workload controllers' part: the pods (and ReplicaSets, claims) they create.

Mirrors what kube-controller-manager's controllers write when a workload is created:
- pkg/controller/deployment (sync.go ``getNewReplicaSet``; controller_utils.go ``ComputeHash``):
  the Deployment's ReplicaSet ``<deployment>-<pod-template-hash>``, the ``pod-template-hash``
  label on it, its selector and its template;
- pkg/controller/replicaset and replication (``manageReplicas``) through controller_utils.go
  (``GetPodFromTemplate``, ``getPodsPrefix``): ``replicas`` pods named by the API server from
  ``generateName: <owner>-``, with the template's labels and annotations and a controller
  ownerReference;
- pkg/controller/statefulset (stateful_set_utils.go ``newStatefulSetPod``,
  ``getPersistentVolumeClaims``): pods ``<sts>-0..N-1`` with the
  ``statefulset.kubernetes.io/pod-name`` and ``apps.kubernetes.io/pod-index`` labels,
  hostname and subdomain, and a claim ``<template>-<sts>-<ordinal>`` per volumeClaimTemplate;
  OrderedReady creates the next ordinal only when the one before is running and ready (here:
  bound), Parallel creates them all;
- pkg/controller/daemon (``NodeShouldRunDaemonPod``, util/daemonset_util.go
  ``AddOrUpdateDaemonPodTolerations``, ``ReplaceDaemonSetPodNodeNameNodeAffinity``): one pod per
  node its template's node selector, required node affinity and NoSchedule/NoExecute taints
  (with the added tolerations) allow, bound to that node by required node affinity on
  ``metadata.name``;
- pkg/controller/job (``manageJob``): ``min(parallelism, completions - succeeded)`` pods
  active (``parallelism`` when completions is unset), none for a finished Job; Indexed jobs
  name and annotate each pod with its completion index.

The control loops that use these (rollouts, scaling, replacement, completion) are the modules
beside this one; the live system's apply (schedviz/cluster/services/workloads.py) makes its
pods with these same functions.

Deliberately different: ``DeepHashObject`` hashes the Go struct as go-spew prints it, which has
no Python equivalent; ``pod_template_hash`` runs upstream's fnv32a and ``SafeEncodeString`` over
the template's canonical JSON instead, so a Deployment's ReplicaSet gets a stable hash of the
same form but not the one a real cluster would print. Names generated for ``generateName`` come
from a seeded source (``schedviz.kube.names``). The ``controller-revision-hash`` of
StatefulSets and DaemonSets is fnv32a over the canonical JSON of the revision's patch, for the
same reason; no ControllerRevision objects are kept.
"""

from __future__ import annotations

import json
import struct
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from schedviz.kube.decode import decode_object
from schedviz.kube.names import ALPHANUMS, NameGenerator
from schedviz.kube.nodeaffinity import RequiredNodeAffinity
from schedviz.kube.objects import (
    TAINT_EFFECT_NO_EXECUTE,
    TAINT_EFFECT_NO_SCHEDULE,
    DaemonSet,
    Deployment,
    Job,
    KubeObject,
    LabelSelector,
    Node,
    Pod,
    ReplicaSet,
    ReplicationController,
    StatefulSet,
    Toleration,
    Workload,
)
from schedviz.kube.taints import find_matching_untolerated_taint

POD_TEMPLATE_HASH_LABEL = "pod-template-hash"
# apps/v1 types.go: ControllerRevisionHashLabelKey (StatefulSetRevisionLabel,
# DefaultDaemonSetUniqueLabelKey) and DaemonSetTemplateGenerationKey.
CONTROLLER_REVISION_HASH_LABEL = "controller-revision-hash"
POD_TEMPLATE_GENERATION_LABEL = "pod-template-generation"
STATEFUL_SET_POD_NAME_LABEL = "statefulset.kubernetes.io/pod-name"
POD_INDEX_LABEL = "apps.kubernetes.io/pod-index"
JOB_COMPLETION_INDEX = "batch.kubernetes.io/job-completion-index"
OBJECT_NAME_FIELD = "metadata.name"
DESIRED_REPLICAS_ANNOTATION = "deployment.kubernetes.io/desired-replicas"

_API_VERSIONS = {
    "Deployment": "apps/v1",
    "ReplicaSet": "apps/v1",
    "StatefulSet": "apps/v1",
    "DaemonSet": "apps/v1",
    "ReplicationController": "v1",
    "Job": "batch/v1",
}

# AddOrUpdateDaemonPodTolerations, in its order: (key, effect); network-unavailable only for
# host-network pods.
DAEMON_POD_TOLERATIONS = (
    ("node.kubernetes.io/not-ready", TAINT_EFFECT_NO_EXECUTE),
    ("node.kubernetes.io/unreachable", TAINT_EFFECT_NO_EXECUTE),
    ("node.kubernetes.io/disk-pressure", TAINT_EFFECT_NO_SCHEDULE),
    ("node.kubernetes.io/memory-pressure", TAINT_EFFECT_NO_SCHEDULE),
    ("node.kubernetes.io/pid-pressure", TAINT_EFFECT_NO_SCHEDULE),
    ("node.kubernetes.io/unschedulable", TAINT_EFFECT_NO_SCHEDULE),
)
NETWORK_UNAVAILABLE_TOLERATION = (
    "node.kubernetes.io/network-unavailable",
    TAINT_EFFECT_NO_SCHEDULE,
)


# ---------------------------------------------------------------------------------------------
# pod-template-hash


def fnv32a(data: bytes) -> int:
    """hash/fnv New32a."""
    value = 0x811C9DC5
    for byte in data:
        value = ((value ^ byte) * 0x01000193) & 0xFFFFFFFF
    return value


def safe_encode_string(text: str) -> str:
    """util/rand.SafeEncodeString: each character mapped into the alphabet without vowels."""
    return "".join(ALPHANUMS[ord(c) % len(ALPHANUMS)] for c in text)


def pod_template_hash(template: Mapping[str, Any], collision_count: int | None = None) -> str:
    """controller.ComputeHash over the template's canonical JSON (see the module docstring)."""
    data = json.dumps(template, sort_keys=True, separators=(",", ":")).encode()
    if collision_count is not None:
        # binary.LittleEndian.PutUint32 into an 8-byte buffer.
        data += struct.pack("<I", collision_count & 0xFFFFFFFF) + b"\x00" * 4
    return safe_encode_string(str(fnv32a(data)))


def revision_hash(template: Mapping[str, Any]) -> str:
    """history.HashControllerRevision over the revision's data, the patch
    ``{"spec": {"template": {..., "$patch": "replace"}}}`` that StatefulSets and DaemonSets
    record (stateful_set_utils.go ``getPatch``, daemon ``getPatch``), as canonical JSON."""
    patch = {"spec": {"template": {**template, "$patch": "replace"}}}
    data = json.dumps(patch, sort_keys=True, separators=(",", ":")).encode()
    return safe_encode_string(str(fnv32a(data)))


def stateful_set_revision(sts: StatefulSet) -> str:
    """The name of the set's current ControllerRevision, ``<set>-<hash>``
    (history.ControllerRevisionName), which its pods carry as ``controller-revision-hash``."""
    return f"{sts.name}-{revision_hash(sts.template)}"


TEMPLATE_GENERATION_ANNOTATION = "deprecated.daemonset.template.generation"


def template_generation(workload: Workload) -> int:
    """util.GetTemplateGeneration: the ``deprecated.daemonset.template.generation`` annotation
    the DaemonSet strategy keeps, else metadata.generation (1 on create)."""
    annotation = workload.annotations.get(TEMPLATE_GENERATION_ANNOTATION, "")
    if annotation.isdigit():
        return int(annotation)
    generation = workload.manifest.get("metadata", {}).get("generation")
    return generation if isinstance(generation, int) and generation > 0 else 1


# ---------------------------------------------------------------------------------------------
# Pods from templates


def _labels(template: Mapping[str, Any]) -> dict[str, str]:
    labels = template.get("metadata", {}).get("labels")
    return dict(labels) if isinstance(labels, Mapping) else {}


def _controller_ref(owner: Workload) -> dict[str, Any]:
    return {
        "apiVersion": _API_VERSIONS[owner.kind],
        "kind": owner.kind,
        "name": owner.name,
        "uid": owner.uid,
        "controller": True,
        "blockOwnerDeletion": True,
    }


def _pod_manifest(
    owner: Workload,
    template: Mapping[str, Any],
    *,
    name: str,
    labels: Mapping[str, str] | None = None,
    annotations: Mapping[str, str] | None = None,
    spec: Mapping[str, Any] | None = None,
) -> dict[str, Any]:
    """GetPodFromTemplate: the template's labels, annotations, finalizers and spec, the owner's
    namespace, a controller ownerReference."""
    metadata = template.get("metadata", {})
    pod_meta: dict[str, Any] = {
        "name": name,
        "namespace": owner.namespace,
        "labels": {**_labels(template), **(labels or {})},
        "ownerReferences": [_controller_ref(owner)],
    }
    template_annotations = metadata.get("annotations")
    if template_annotations or annotations:
        pod_meta["annotations"] = {**(template_annotations or {}), **(annotations or {})}
    if metadata.get("finalizers"):
        pod_meta["finalizers"] = list(metadata["finalizers"])
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": pod_meta,
        "spec": dict(spec if spec is not None else template.get("spec", {})),
    }


def _decoded(manifest: dict[str, Any]) -> Pod:
    pod = decode_object(manifest)
    assert isinstance(pod, Pod)
    return pod


def _generated_pods(
    owner: Workload, template: Mapping[str, Any], count: int, names: NameGenerator
) -> list[Pod]:
    prefix = f"{owner.name}-"
    return [
        _decoded(_pod_manifest(owner, template, name=names.generate(prefix))) for _ in range(count)
    ]


def replica_pods(
    owner: ReplicaSet | ReplicationController, count: int, names: NameGenerator
) -> list[Pod]:
    """manageReplicas' creations: ``count`` pods of the owner's template, named from
    ``<owner>-``."""
    return _generated_pods(owner, owner.template, count, names)


def replica_set_for(deployment: Deployment, collision_count: int | None = None) -> ReplicaSet:
    """getNewReplicaSet: ``<deployment>-<hash>``, the hash as a label on it, its selector and
    its template's labels; the Deployment's replicas and a controller ownerReference."""
    template = deployment.template
    template_hash = pod_template_hash(template, collision_count)
    template = {
        **template,
        "metadata": {
            **template.get("metadata", {}),
            "labels": {**_labels(template), POD_TEMPLATE_HASH_LABEL: template_hash},
        },
    }
    selector = deployment.selector
    assert isinstance(selector, LabelSelector)
    match_labels = {**selector.match_labels, POD_TEMPLATE_HASH_LABEL: template_hash}
    selector_manifest: dict[str, Any] = {"matchLabels": match_labels}
    if selector.match_expressions:
        selector_manifest["matchExpressions"] = [
            {
                "key": e.key,
                "operator": e.operator,
                **({"values": list(e.values)} if e.values else {}),
            }
            for e in selector.match_expressions
        ]
    manifest = {
        "apiVersion": "apps/v1",
        "kind": "ReplicaSet",
        "metadata": {
            "name": f"{deployment.name}-{template_hash}",
            "namespace": deployment.namespace,
            "labels": {**_labels(template)},
            "annotations": {DESIRED_REPLICAS_ANNOTATION: str(deployment.replicas)},
            "ownerReferences": [_controller_ref(deployment)],
        },
        "spec": {
            "replicas": deployment.replicas,
            "selector": selector_manifest,
            "template": template,
        },
    }
    replica_set = decode_object(manifest)
    assert isinstance(replica_set, ReplicaSet)
    return replica_set


def stateful_set_pod(sts: StatefulSet, ordinal: int) -> Pod:
    """newStatefulSetPod: ``<sts>-<ordinal>``, its identity labels, hostname and subdomain, and
    the claims of its volumeClaimTemplates as volumes."""
    name = f"{sts.name}-{ordinal}"
    spec = dict(sts.template.get("spec", {}))
    spec["hostname"] = name
    if sts.service_name:
        spec["subdomain"] = sts.service_name
    volumes = [v for v in spec.get("volumes", []) or []]
    template_names = {_claim_template_name(c) for c in sts.volume_claim_templates}
    volumes = [v for v in volumes if v.get("name") not in template_names]
    for claim in sts.volume_claim_templates:
        template_name = _claim_template_name(claim)
        volumes.append(
            {
                "name": template_name,
                "persistentVolumeClaim": {"claimName": f"{template_name}-{name}"},
            }
        )
    if volumes:
        spec["volumes"] = volumes
    labels = {
        STATEFUL_SET_POD_NAME_LABEL: name,
        POD_INDEX_LABEL: str(ordinal),
        CONTROLLER_REVISION_HASH_LABEL: stateful_set_revision(sts),
    }
    return _decoded(_pod_manifest(sts, sts.template, name=name, labels=labels, spec=spec))


def _claim_template_name(claim: Mapping[str, Any]) -> str:
    return str(claim.get("metadata", {}).get("name", ""))


def stateful_set_claims(sts: StatefulSet, ordinal: int) -> list[KubeObject]:
    """getPersistentVolumeClaims: one claim per template, ``<template>-<sts>-<ordinal>``, with
    the StatefulSet's selector labels."""
    claims: list[KubeObject] = []
    selector = sts.selector
    match_labels = selector.match_labels if isinstance(selector, LabelSelector) else {}
    for template in sts.volume_claim_templates:
        metadata = dict(template.get("metadata", {}))
        metadata["name"] = f"{_claim_template_name(template)}-{sts.name}-{ordinal}"
        metadata["namespace"] = sts.namespace
        metadata["labels"] = {**(metadata.get("labels") or {}), **match_labels}
        claims.append(
            decode_object(
                {
                    "apiVersion": "v1",
                    "kind": "PersistentVolumeClaim",
                    "metadata": metadata,
                    "spec": template.get("spec", {}),
                }
            )
        )
    return claims


def daemon_pod_tolerations(
    tolerations: Sequence[Mapping[str, Any]], host_network: bool
) -> list[dict[str, Any]]:
    """AddOrUpdateDaemonPodTolerations over the template's tolerations (as manifests): each
    added with operator Exists unless an equal one is there (AddOrUpdateTolerationInPodSpec)."""
    result = [dict(t) for t in tolerations]
    wanted = list(DAEMON_POD_TOLERATIONS)
    if host_network:
        wanted.append(NETWORK_UNAVAILABLE_TOLERATION)
    for key, effect in wanted:
        toleration = {"key": key, "operator": "Exists", "effect": effect}
        # MatchToleration: key, operator, value and effect equal; an equal one stays as it is,
        # a matching one (with tolerationSeconds) is replaced.
        matching = [
            i
            for i, t in enumerate(result)
            if t.get("key", "") == key
            and t.get("effect", "") == effect
            and (t.get("operator") or "Equal") == "Exists"
            and not t.get("value")
        ]
        if any(result[i] == toleration for i in matching):
            continue
        for i in matching:
            result[i] = toleration
        if not matching:
            result.append(toleration)
    return result


def _node_name_affinity(affinity: Mapping[str, Any] | None, node_name: str) -> dict[str, Any]:
    """ReplaceDaemonSetPodNodeNameNodeAffinity: the required node affinity becomes one term
    matching the node by ``metadata.name``; the preferred terms stay."""
    term = {"matchFields": [{"key": OBJECT_NAME_FIELD, "operator": "In", "values": [node_name]}]}
    affinity = dict(affinity or {})
    node_affinity = dict(affinity.get("nodeAffinity") or {})
    node_affinity["requiredDuringSchedulingIgnoredDuringExecution"] = {"nodeSelectorTerms": [term]}
    affinity["nodeAffinity"] = node_affinity
    return affinity


def _daemon_tolerations(template: Mapping[str, Any]) -> tuple[Toleration, ...]:
    spec = template.get("spec", {})
    tolerations = daemon_pod_tolerations(
        spec.get("tolerations") or [], bool(spec.get("hostNetwork"))
    )
    return tuple(
        Toleration(
            key=str(t.get("key", "")),
            operator=str(t.get("operator") or "Equal"),
            value=str(t.get("value", "")),
            effect=str(t.get("effect", "")),
        )
        for t in tolerations
    )


def daemon_template_pod(ds: DaemonSet) -> Pod:
    """The set's template as a pod (daemon ``NewPod`` without the node): what the
    predicates read of it."""
    return _decoded(_pod_manifest(ds, ds.template, name=ds.name or "daemon"))


def node_should_run_daemon_pod(ds: DaemonSet, template_pod: Pod, node: Node) -> tuple[bool, bool]:
    """NodeShouldRunDaemonPod: (shouldRun, shouldContinueRunning). The template's nodeName,
    then ``predicates``: its required node affinity and node selector, and no untolerated
    NoSchedule or NoExecute taint (the daemon tolerations added). A pod already there keeps
    running on a node whose only untolerated taints are NoSchedule."""
    if template_pod.node_name and template_pod.node_name != node.name:
        return False, False
    if not RequiredNodeAffinity(template_pod).match(node):
        return False, False
    tolerations = _daemon_tolerations(ds.template)
    untolerated = find_matching_untolerated_taint(
        node.taints,
        tolerations,
        lambda t: t.effect in (TAINT_EFFECT_NO_SCHEDULE, TAINT_EFFECT_NO_EXECUTE),
    )
    if untolerated is None:
        return True, True
    no_execute = find_matching_untolerated_taint(
        node.taints, tolerations, lambda t: t.effect == TAINT_EFFECT_NO_EXECUTE
    )
    return False, no_execute is None


def daemon_pod(ds: DaemonSet, node_name: str, names: NameGenerator) -> Pod:
    """A daemon pod for ``node_name``: the daemon tolerations added, required node affinity to
    the node by name, the ``controller-revision-hash`` and ``pod-template-generation`` labels
    (daemon_controller.go ``syncNodes``, util ``CreatePodTemplate``)."""
    spec = dict(ds.template.get("spec", {}))
    spec["tolerations"] = daemon_pod_tolerations(
        spec.get("tolerations") or [], bool(spec.get("hostNetwork"))
    )
    spec["affinity"] = _node_name_affinity(spec.get("affinity"), node_name)
    labels = {
        CONTROLLER_REVISION_HASH_LABEL: revision_hash(ds.template),
        POD_TEMPLATE_GENERATION_LABEL: str(template_generation(ds)),
    }
    name = names.generate(f"{ds.name}-")
    return _decoded(_pod_manifest(ds, ds.template, name=name, labels=labels, spec=spec))


def daemon_set_pods(ds: DaemonSet, nodes: Iterable[Node], names: NameGenerator) -> list[Pod]:
    """A daemon pod for each node that should run one."""
    template_pod = daemon_template_pod(ds)
    return [
        daemon_pod(ds, node.name, names)
        for node in nodes
        if node_should_run_daemon_pod(ds, template_pod, node)[0]
    ]


def job_finished(job: Job) -> bool:
    """IsJobFinished: a Complete or Failed condition with status True."""
    conditions = job.manifest.get("status", {}).get("conditions") or []
    return any(
        isinstance(c, Mapping)
        and c.get("type") in ("Complete", "Failed")
        and c.get("status") == "True"
        for c in conditions
    )


def job_status_count(job: Job, field: str) -> int:
    """``status.succeeded`` or ``status.failed`` as the Job carries it (0 when unset)."""
    value = job.manifest.get("status", {}).get(field)
    return value if isinstance(value, int) and value > 0 else 0


def job_want_active(job: Job, succeeded: int, active: int = 0) -> int:
    """manageJob's ``wantActive``: none for a finished Job; without completions, parallelism
    until one pod has succeeded (then what runs keeps running); with completions, what is
    left of them, at most parallelism."""
    if job_finished(job):
        return 0
    if job.completions is None:
        return active if succeeded > 0 else job.parallelism
    return max(0, min(job.completions - succeeded, job.parallelism))


def job_active_count(job: Job) -> int:
    """The pods the Job's controller wants running when it is created or applied: none once
    it has finished, and its counted successes taken off its completions."""
    return job_want_active(job, job_status_count(job, "succeeded"))


def job_pod(job: Job, names: NameGenerator, index: int | None = None) -> Pod:
    """A pod of the Job's template named from ``<job>-`` (``<job>-<index>-`` and the
    completion index as label and annotation for an Indexed Job)."""
    if index is None:
        return _decoded(_pod_manifest(job, job.template, name=names.generate(f"{job.name}-")))
    marks = {JOB_COMPLETION_INDEX: str(index)}
    name = names.generate(f"{job.name}-{index}-")
    return _decoded(_pod_manifest(job, job.template, name=name, labels=marks, annotations=marks))


def job_pods(job: Job, names: NameGenerator) -> list[Pod]:
    """The pods a Job starts with: ``job_active_count`` of them (the lowest indexes not
    counted as succeeded, for an Indexed Job)."""
    count = job_active_count(job)
    if job.completion_mode != "Indexed":
        return [job_pod(job, names) for _ in range(count)]
    return [job_pod(job, names, index) for index in range(count)]
