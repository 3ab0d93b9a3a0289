"""The ResourceQuota admission plugin and the pods' quota evaluator, for pod creates.

Mirrors staging/src/k8s.io/apiserver/pkg/admission/plugin/resourcequota/controller.go
(``CheckRequest``: the quotas that match the pod, ``Constraints``, the usage the pod adds, the
"exceeded quota" refusal with ``prettyPrint``'s sorted ``name=value`` lists) and
pkg/quota/v1/evaluator/core/pods.go (``podResources``, ``MatchingResources``,
``podMatchesScopeFunc``: Terminating, NotTerminating, BestEffort, NotBestEffort,
PriorityClass with its In/NotIn/Exists/DoesNotExist selector, CrossNamespacePodAffinity;
``PodUsageFunc``: ``count/pods`` always, the compute resources only for a pod that is not
terminal; ``podComputeUsageHelper``; ``Constraints``' "must specify" for cpu and memory).

A quota's ``status.used`` is what the quota controller would have counted: the usage of the
namespace's pods that were admitted before (``QuotaUsage.charge``), recalculated from the
pods that exist when the quota is created (``QuotaUsage.add``: the stored ones and those
admitted before it).

Deliberately different: quotas of a namespace are checked in name order (upstream: the
informer's order); no ``limitedResources`` admission configuration (the API server's default
has none); a pod's deletion grace period is not modelled (a pod marked for deletion
is charged until it is gone); quota on other kinds (claims, services, object counts other
than pods) is not enforced.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from fractions import Fraction

from schedviz.kube.decode.admission import (
    SCOPE_BEST_EFFORT,
    SCOPE_CROSS_NAMESPACE_POD_AFFINITY,
    SCOPE_NOT_BEST_EFFORT,
    SCOPE_NOT_TERMINATING,
    SCOPE_PRIORITY_CLASS,
    SCOPE_TERMINATING,
)
from schedviz.kube.decode.quantities import format_amount_as, quantity_format
from schedviz.kube.objects import (
    POD_FAILED,
    POD_SUCCEEDED,
    RESOURCE_CPU,
    RESOURCE_MEMORY,
    Pod,
    PodAffinityTerm,
    ResourceList,
    ResourceQuota,
    ScopedResourceSelectorRequirement,
)
from schedviz.kube.resources import (
    aggregate_container_limits,
    is_pod_level_resources_set,
    is_supported_pod_level_resource,
    pod_requests,
)

PLUGIN_NAME = "ResourceQuota"
POD_OBJECT_COUNT = "count/pods"
_POD_RESOURCES = frozenset(
    {
        POD_OBJECT_COUNT,
        "cpu",
        "memory",
        "ephemeral-storage",
        "requests.cpu",
        "requests.memory",
        "requests.ephemeral-storage",
        "limits.cpu",
        "limits.memory",
        "limits.ephemeral-storage",
        "pods",
    }
)
_VALIDATION_SET = frozenset(
    {"cpu", "memory", "requests.cpu", "requests.memory", "limits.cpu", "limits.memory"}
)
_HUGEPAGES = "hugepages-"
_REQUESTS = "requests."

# An amount and the format it prints in (Add keeps the format of what it adds to).
Usage = dict[str, tuple[Fraction, str]]


def _is_native(name: str) -> bool:
    return "/" not in name or "kubernetes.io/" in name


def matching_resources(names: Iterable[str]) -> list[str]:
    """podEvaluator.MatchingResources: the quota's resource names a pod can use."""
    return [
        name
        for name in names
        if name in _POD_RESOURCES
        or name.startswith((_HUGEPAGES, _REQUESTS + _HUGEPAGES))
        or (not _is_native(name) and name.startswith(_REQUESTS))
    ]


def _compute_usage(requests: Usage, limits: Usage) -> Usage:
    """podComputeUsageHelper."""
    result: Usage = {"pods": (Fraction(1), "decimal")}
    for name in (RESOURCE_CPU, RESOURCE_MEMORY, "ephemeral-storage"):
        if name in requests:
            result[name] = result[_REQUESTS + name] = requests[name]
        if name in limits:
            result["limits." + name] = limits[name]
    for name, value in requests.items():
        if name.startswith(_HUGEPAGES):
            result[name] = result[_REQUESTS + name] = value
        elif "/" in name and not _is_native(name) and not name.startswith(_REQUESTS):
            result[_REQUESTS + name] = value
    return result


def _formats(pod: Pod) -> dict[str, str]:
    """The format each resource of the pod prints in: that of the first quantity naming it."""
    formats: dict[str, str] = {}
    lists: list[ResourceList] = []
    for container in (*pod.containers, *pod.init_containers):
        lists += [container.requests, container.limits]
    if pod.resources is not None:
        lists += [pod.resources.requests, pod.resources.limits]
    lists.append(pod.overhead)
    for resources in lists:
        for name, quantity in resources.items():
            formats.setdefault(name, quantity_format(quantity))
    return formats


def is_terminal(pod: Pod) -> bool:
    return pod.phase in (POD_SUCCEEDED, POD_FAILED)


def pod_usage(pod: Pod) -> Usage:
    """PodUsageFunc: ``count/pods``, and for a pod that is not terminal its compute usage
    (requests with resized resources, pod-level resources and overhead; limits with
    overhead added to the ones set)."""
    result: Usage = {POD_OBJECT_COUNT: (Fraction(1), "decimal")}
    if is_terminal(pod):
        return result
    formats = _formats(pod)
    requests = pod_requests(pod, use_status_resources=True)
    limits = aggregate_container_limits(pod)
    if pod.resources is not None:
        for name, quantity in pod.resources.limits.items():
            if is_supported_pod_level_resource(name):
                limits[name] = quantity.amount
    for name, quantity in pod.overhead.items():
        if limits.get(name):
            limits[name] += quantity.amount

    def styled(amounts: dict[str, Fraction]) -> Usage:
        return {name: (amount, formats.get(name, "decimal")) for name, amount in amounts.items()}

    result.update(_compute_usage(styled(requests), styled(limits)))
    return result


def _is_best_effort(pod: Pod) -> bool:
    """qos.GetPodQOS(pod) == BestEffort: no cpu or memory request or limit anywhere."""
    lists: list[ResourceList] = []
    for container in (*pod.containers, *pod.init_containers):
        lists += [container.requests, container.limits]
    if pod.resources is not None:
        lists += [pod.resources.requests, pod.resources.limits]
    return not any(name in (RESOURCE_CPU, RESOURCE_MEMORY) for r in lists for name in r)


def _cross_namespace(terms: Iterable[PodAffinityTerm]) -> bool:
    return any(t.namespaces or t.namespace_selector is not None for t in terms)


def _uses_cross_namespace_affinity(pod: Pod) -> bool:
    affinity = pod.affinity
    if affinity is None:
        return False
    for pod_affinity in (affinity.pod_affinity, affinity.pod_anti_affinity):
        if pod_affinity is None:
            continue
        preferred = (w.pod_affinity_term for w in pod_affinity.preferred)
        if _cross_namespace(pod_affinity.required) or _cross_namespace(preferred):
            return True
    return False


def _matches_scope(selector: ScopedResourceSelectorRequirement, pod: Pod) -> bool:
    """podMatchesScopeFunc."""
    scope = selector.scope_name
    if scope == SCOPE_TERMINATING:
        return pod.active_deadline_seconds is not None and pod.active_deadline_seconds >= 0
    if scope == SCOPE_NOT_TERMINATING:
        return not (pod.active_deadline_seconds is not None and pod.active_deadline_seconds >= 0)
    if scope == SCOPE_BEST_EFFORT:
        return _is_best_effort(pod)
    if scope == SCOPE_NOT_BEST_EFFORT:
        return not _is_best_effort(pod)
    if scope == SCOPE_PRIORITY_CLASS:
        name = pod.priority_class_name
        if selector.operator == "Exists":
            return bool(name)
        if selector.operator == "DoesNotExist":
            return not name
        if selector.operator == "In":
            return bool(name) and name in selector.values
        if selector.operator == "NotIn":
            return not name or name not in selector.values
        return False
    if scope == SCOPE_CROSS_NAMESPACE_POD_AFFINITY:
        return _uses_cross_namespace_affinity(pod)
    return False


def _scope_selectors(quota: ResourceQuota) -> list[ScopedResourceSelectorRequirement]:
    """getScopeSelectorsFromQuota: each scope as an Exists requirement, then the selector's."""
    return [
        *(ScopedResourceSelectorRequirement(scope, "Exists") for scope in quota.scopes),
        *quota.scope_selector,
    ]


def matches(quota: ResourceQuota, pod: Pod) -> bool:
    """generic.Matches: the quota limits something a pod uses, and every scope matches."""
    if not matching_resources(quota.hard):
        return False
    return all(_matches_scope(s, pod) for s in _scope_selectors(quota))


def constraints(required: Iterable[str], pod: Pod) -> str:
    """podEvaluator.Constraints: every container must name cpu and memory where a quota
    limits them ("must specify limits.cpu for: app; requests.cpu for: app,init"), unless the
    pod sets resources at pod level (PodLevelResources, on in v1.34)."""
    if is_pod_level_resources_set(pod):
        return ""
    required_set = set(required) & _VALIDATION_SET
    missing: dict[str, set[str]] = {}
    for container in (*pod.containers, *pod.init_containers):
        names = set(_compute_usage(_plain(container.requests), _plain(container.limits)))
        for name in required_set - names:
            missing.setdefault(name, set()).add(container.name)
    if not missing:
        return ""
    parts = [f"{name} for: {','.join(sorted(missing[name]))}" for name in sorted(missing)]
    return f"must specify {'; '.join(parts)}"


def _plain(resources: ResourceList) -> Usage:
    return {name: (q.amount, "decimal") for name, q in resources.items()}


def _pretty(usage: Usage) -> str:
    """prettyPrint: ``name=value`` sorted by name, joined by commas."""
    return ",".join(
        f"{name}={format_amount_as(amount, fmt)}" for name, (amount, fmt) in sorted(usage.items())
    )


class QuotaUsage:
    """The quotas of the cluster and their ``status.used``, as admission reads and updates
    them: a quota added (``add``) counts the pods admitted before it and the ``existing``
    ones, as the quota controller recalculates a new quota."""

    def __init__(self, quotas: Iterable[ResourceQuota] = (), existing: Iterable[Pod] = ()):
        self._pods: dict[str, list[Pod]] = {}
        for pod in existing:
            self._pods.setdefault(pod.namespace, []).append(pod)
        self._used: dict[str, Usage] = {}
        self._by_namespace: dict[str, list[ResourceQuota]] = {}
        for quota in quotas:
            self.add(quota)

    @property
    def quotas(self) -> list[ResourceQuota]:
        return [q for quotas in self._by_namespace.values() for q in quotas]

    def add(self, quota: ResourceQuota) -> None:
        """A quota created (or replaced), its usage counted from the namespace's pods."""
        quotas = [q for q in self._by_namespace.get(quota.namespace, []) if q.name != quota.name]
        self._by_namespace[quota.namespace] = sorted([*quotas, quota], key=lambda q: q.name)
        self._used[quota.key] = {}
        for pod in self._pods.get(quota.namespace, ()):
            if matches(quota, pod):
                self._charge([quota], pod_usage(pod))

    def _charge(self, quotas: Sequence[ResourceQuota], usage: Usage) -> None:
        for quota in quotas:
            used = self._used[quota.key]
            for name, (amount, fmt) in usage.items():
                if name in quota.hard and amount:
                    before, kept = used.get(name, (Fraction(0), fmt))
                    used[name] = (before + amount, kept)

    def used(self, quota: ResourceQuota) -> Usage:
        return dict(self._used.get(quota.key, {}))

    def admit(self, pod: Pod) -> str:
        """CheckRequest for the pod's create: its refusal, or "" after charging every quota
        that matches it."""
        quotas = self._by_namespace.get(pod.namespace)
        if not quotas:
            self._pods.setdefault(pod.namespace, []).append(pod)
            return ""
        interesting = []
        for quota in quotas:
            if not matches(quota, pod):
                continue
            problem = constraints(matching_resources(quota.hard), pod)
            if problem:
                return f"failed quota: {quota.name}: {problem}"
            interesting.append(quota)
        usage = {name: value for name, value in pod_usage(pod).items() if value[0]}
        if not interesting or not usage:
            self._pods.setdefault(pod.namespace, []).append(pod)
            return ""
        for quota in interesting:
            requested = {n: v for n, v in usage.items() if n in quota.hard}
            used = self._used[quota.key]
            exceeded = sorted(
                name
                for name, (amount, _) in requested.items()
                if used.get(name, (Fraction(0), ""))[0] + amount > quota.hard[name].amount
            )
            if exceeded:
                failed_used = {n: used.get(n, (Fraction(0), "decimal")) for n in exceeded}
                limited = {
                    n: (quota.hard[n].amount, quantity_format(quota.hard[n])) for n in exceeded
                }
                return (
                    f"exceeded quota: {quota.name}, "
                    f"requested: {_pretty({n: requested[n] for n in exceeded})}, "
                    f"used: {_pretty(failed_used)}, limited: {_pretty(limited)}"
                )
        self._charge(interesting, usage)
        self._pods.setdefault(pod.namespace, []).append(pod)
        return ""
