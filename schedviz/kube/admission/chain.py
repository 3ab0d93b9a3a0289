"""The admission chain a pod create goes through, in kube-apiserver's plugin order.

Mirrors what k8s.io/apiserver's admission chain does with the default plugins of
pkg/kubeapiserver/options/plugins.go (``AllOrderedPlugins``: LimitRanger ... Priority ...
RuntimeClass ... ResourceQuota last): every mutating plugin's ``Admit`` in order, then the
object is validated again (the registry's ``ValidatePodCreate``: a default limit below the
container's request is refused as Invalid here), then every validating plugin's
``Validate`` in order, ResourceQuota last because it charges the quota.

Deliberately different: the plugins read the objects given (an input, or the stored cluster
with the input) instead of informers; a pod applied again over a stored one (schedviz's
update replaces the manifest) goes through the mutating plugins again, so that what they set
is kept, and through no validating plugin (LimitRanger and RuntimeClass ignore pod updates,
quota charges creates).
"""

from __future__ import annotations

import copy
import dataclasses
from collections.abc import Iterable
from typing import Any

from schedviz.kube.admission import limitranger, runtimeclass
from schedviz.kube.admission.priority import (
    SYSTEM_CLASSES,
    admit_pod_priority,
    default_priority_class,
)
from schedviz.kube.admission.resourcequota import QuotaUsage
from schedviz.kube.decode import decode_object
from schedviz.kube.errors import ForbiddenError
from schedviz.kube.objects import (
    KubeObject,
    LimitRange,
    Pod,
    PriorityClass,
    ResourceQuota,
    RuntimeClass,
)


def admission_objects(objects: Iterable[KubeObject]) -> list[KubeObject]:
    """The objects of an input that admission finds wherever they are in it: PriorityClasses
    and RuntimeClasses (a dump lists them anywhere). LimitRanges and ResourceQuotas apply
    from where they are created on (``PodAdmission.add``), as ``kubectl create`` makes the
    objects of a file in order."""
    return [o for o in objects if isinstance(o, PriorityClass | RuntimeClass)]


class PodAdmission:
    """The admission plugins over the given objects; ``admit`` one pod create at a time (each
    admitted pod counts in the quotas of the next). PriorityClasses and RuntimeClasses are
    those given; LimitRanges and ResourceQuotas those given and those ``add``ed since, in the
    order they were created."""

    def __init__(
        self,
        objects: Iterable[KubeObject],
        existing_pods: Iterable[Pod] = (),
        *,
        lenient_runtime_classes: bool = False,
    ) -> None:
        """``lenient_runtime_classes``: RuntimeClass's refusals of what storage can hold (a
        dump's pod whose RuntimeClass was not dumped, or whose overhead its class no longer
        has; upstream's test fixtures' pods with an overhead and no class) let the pod through
        as it is, each refusal kept in ``warnings``, as ``manage.py simulate`` reads names the
        API server refuses."""
        self.lenient_runtime_classes = lenient_runtime_classes
        self.warnings: list[str] = []
        objects = list(objects)
        classes = [o for o in objects if isinstance(o, PriorityClass)]
        self._classes = {**SYSTEM_CLASSES, **{pc.name: pc for pc in classes}}
        self._default = default_priority_class(classes)
        self._runtime_classes = {o.name: o for o in objects if isinstance(o, RuntimeClass)}
        self._limit_ranges: dict[str, list[LimitRange]] = {}
        self.quotas = QuotaUsage(existing=existing_pods)
        for obj in objects:
            self.add(obj)

    def add(self, obj: KubeObject) -> None:
        """A LimitRange or ResourceQuota created: it applies to the pods created after it (a
        quota counts the pods created before it, as its controller does)."""
        if isinstance(obj, LimitRange):
            ranges = [lr for lr in self._limit_ranges.get(obj.namespace, []) if lr.name != obj.name]
            self._limit_ranges[obj.namespace] = sorted([*ranges, obj], key=lambda lr: lr.name)
        elif isinstance(obj, ResourceQuota):
            self.quotas.add(obj)

    def admit(self, pod: Pod, *, create: bool = True) -> Pod:
        """The pod as the API server stores it. Raises ForbiddenError (``pods "x" is
        forbidden: ...``) as a plugin refuses it, InvalidObjectError when what the mutating
        plugins set makes it invalid."""
        limit_ranges = self._limit_ranges.get(pod.namespace, [])
        manifest: dict[str, Any] = pod.manifest
        changes: list[str] = []
        if limit_ranges:
            manifest = copy.deepcopy(manifest)
            changes += limitranger.mutate(manifest, limit_ranges)
        admitted = admit_pod_priority(pod, self._classes, self._default)
        let_through = False
        try:
            rc = runtimeclass.runtime_class_of(pod, self._runtime_classes)
            if rc is not None and manifest is pod.manifest:
                manifest = copy.deepcopy(manifest)
            changes += runtimeclass.mutate(pod, rc, manifest)
        except runtimeclass.RuntimeClassRefusal as refusal:
            let_through = create and self._let_through(pod, str(refusal))
            if create and not let_through:
                raise self._forbidden(pod, str(refusal)) from None
            rc = None
        if manifest is not pod.manifest and manifest != pod.manifest:
            admitted = self._decoded(manifest, admitted)
        if changes:
            admitted = dataclasses.replace(admitted, admitted_changes=tuple(changes))
        if not create:
            return admitted
        reason = limitranger.validate(admitted, limit_ranges)
        overhead = "" if let_through else runtimeclass.validate(admitted, rc)
        if not reason and overhead and not self._let_through(pod, overhead):
            reason = overhead
        # ResourceQuota last: it charges the quotas when it admits.
        reason = reason or self.quotas.admit(admitted)
        if reason:
            raise self._forbidden(pod, reason)
        return admitted

    def _let_through(self, pod: Pod, refusal: str) -> bool:
        """A RuntimeClass refusal, when lenient: kept as a warning, the pod let through."""
        if self.lenient_runtime_classes:
            self.warnings.append(str(self._forbidden(pod, refusal)))
        return self.lenient_runtime_classes

    @staticmethod
    def _forbidden(pod: Pod, reason: str) -> ForbiddenError:
        return ForbiddenError("pods", pod.name, reason, namespace=pod.namespace)

    @staticmethod
    def _decoded(manifest: dict[str, Any], admitted: Pod) -> Pod:
        """The pod decoded and validated again from the mutated manifest (the registry's
        validation after the mutating plugins), with what Priority resolved."""
        pod = decode_object(manifest, name_warnings=[])
        assert isinstance(pod, Pod)
        return dataclasses.replace(
            pod,
            priority_class_name=admitted.priority_class_name,
            priority=admitted.priority,
            preemption_policy=admitted.preemption_policy,
        )
