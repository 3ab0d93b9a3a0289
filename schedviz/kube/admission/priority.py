"""The Priority admission plugin: resolving a pod's priority from its PriorityClass.

Mirrors plugin/pkg/admission/priority/admission.go (``admitPod`` on create,
``validatePriorityClass``, ``getDefaultPriority``). The system classes system-cluster-critical
and system-node-critical, which the API server creates at start-up (pkg/apis/scheduling/types.go,
``SystemPriorityClasses``), are always known here.

Deliberately different: pods are admitted in a batch against the given classes instead of one
request at a time against an informer, and every refused pod is reported at once.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterable, Sequence

from schedviz.kube.decode.policy import SYSTEM_PRIORITY_CLASSES
from schedviz.kube.errors import ForbiddenError, LocatedError, ManifestError
from schedviz.kube.objects import PREEMPT_LOWER_PRIORITY, Pod, PriorityClass

# scheduling.DefaultPriorityWhenNoDefaultClassExists
DEFAULT_PRIORITY_WHEN_NO_DEFAULT_CLASS_EXISTS = 0

SYSTEM_CLASSES = {
    name: PriorityClass(name=name, value=value, preemption_policy=PREEMPT_LOWER_PRIORITY)
    for name, value in SYSTEM_PRIORITY_CLASSES.items()
}


def default_priority_class(classes: Iterable[PriorityClass]) -> PriorityClass | None:
    """getDefaultPriorityClass: the globalDefault class; with several, the lowest value."""
    found: PriorityClass | None = None
    for pc in classes:
        if pc.global_default and (found is None or found.value > pc.value):
            found = pc
    return found


def admit_priority_classes(classes: Sequence[PriorityClass]) -> None:
    """validatePriorityClass on create, in order: only one class may be the global default."""
    errors: list[LocatedError] = []
    default: PriorityClass | None = None
    for pc in classes:
        if not pc.global_default:
            continue
        if default is not None:
            reason = (
                f"PriorityClass {default.name} is already marked as default. "
                "Only one default can exist"
            )
            errors.append(ForbiddenError("priorityclasses.scheduling.k8s.io", pc.name, reason))
        else:
            default = pc
    if errors:
        raise ManifestError(errors)


def admit_pod_priority(
    pod: Pod, classes: dict[str, PriorityClass], default: PriorityClass | None
) -> Pod:
    """admitPod for a create; raises ForbiddenError as the plugin refuses a pod."""
    class_name = pod.priority_class_name
    if not class_name and pod.priority is not None:
        # Already admitted: what `kubectl get -o yaml` exports carries the resolved priority
        # (and upstream's scheduler tests set spec.priority directly). Deliberately accepted.
        return pod
    if not class_name:
        if default is not None:
            class_name, priority, policy = default.name, default.value, default.preemption_policy
        else:
            priority, policy = DEFAULT_PRIORITY_WHEN_NO_DEFAULT_CLASS_EXISTS, PREEMPT_LOWER_PRIORITY
    else:
        pc = classes.get(class_name)
        if pc is None:
            raise ForbiddenError(
                "pods",
                pod.name,
                f"no PriorityClass with name {class_name} was found",
                namespace=pod.namespace,
            )
        priority, policy = pc.value, pc.preemption_policy
    if pod.priority is not None and pod.priority != priority:
        reason = (
            f"the integer value of priority ({pod.priority}) must not be provided in pod spec; "
            f"priority admission controller computed {priority} from the given PriorityClass name"
        )
        raise ForbiddenError("pods", pod.name, reason, namespace=pod.namespace)
    if pod.preemption_policy is not None and pod.preemption_policy != policy:
        reason = (
            f"the string value of PreemptionPolicy ({pod.preemption_policy}) must not be "
            f"provided in pod spec; priority admission controller computed {policy} "
            "from the given PriorityClass name"
        )
        raise ForbiddenError("pods", pod.name, reason, namespace=pod.namespace)
    return dataclasses.replace(
        pod, priority_class_name=class_name, priority=priority, preemption_policy=policy
    )


def admit_pods(pods: Sequence[Pod], priority_classes: Sequence[PriorityClass]) -> list[Pod]:
    """The pods with spec.priority and preemptionPolicy resolved, as the API server stores them.

    Raises ManifestError with every refused pod (``pods "web-1" is forbidden: ...``).
    """
    classes = {**SYSTEM_CLASSES, **{pc.name: pc for pc in priority_classes}}
    default = default_priority_class(priority_classes)
    admitted: list[Pod] = []
    errors: list[LocatedError] = []
    for pod in pods:
        try:
            admitted.append(admit_pod_priority(pod, classes, default))
        except ForbiddenError as error:
            errors.append(error)
    if errors:
        raise ManifestError(errors)
    return admitted
