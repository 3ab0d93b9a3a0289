"""PodGroup (scheduling.x-k8s.io/v1alpha1): the custom resource of the out-of-tree Coscheduling
plugin.

Checked as its CRD's structural schema would check it (kubernetes-sigs/scheduler-plugins
manifests/coscheduling/crd.yaml).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from schedviz.kube import errors as fe
from schedviz.kube.crds import PodGroup
from schedviz.kube.decode.meta import read_meta
from schedviz.kube.decode.reader import Reader, child
from schedviz.kube.decode.validation import name_is_dns_subdomain


def decode_pod_group(r: Reader, doc: Mapping[str, Any]) -> PodGroup:
    """spec.minMember (int32, minimum 1 when given), minResources, scheduleTimeoutSeconds."""
    meta = read_meta(r, doc, namespaced=True, name_fn=name_is_dns_subdomain)
    spec = r.obj(doc, "spec", "")
    min_member = r.int32(spec, "minMember", "spec")
    if min_member is not None and min_member < 1:
        path = child("spec", "minMember")
        r.add(fe.invalid(path, min_member, f"{path} in body should be greater than or equal to 1"))
    min_resources = None
    if r.optional_map(spec, "minResources", "spec") is not None:
        min_resources = r.resources(spec, "minResources", "spec")
    return PodGroup(
        name=meta.name,
        namespace=meta.namespace,
        min_member=min_member or 0,
        min_resources=min_resources,
        schedule_timeout_seconds=r.int32(spec, "scheduleTimeoutSeconds", "spec"),
        creation_timestamp=meta.creation_timestamp,
        manifest=dict(doc),
    )
