"""ResourceQuota admission and the pods' evaluator, ported from
staging/src/k8s.io/apiserver/pkg/admission/plugin/resourcequota/admission_test.go (below and
past the limit, the constraints on cpu and memory, scopes) and
pkg/quota/v1/evaluator/core/pods_test.go (TestPodEvaluatorUsage, TestPodEvaluatorMatchingScopes)
with upstream's messages."""

from __future__ import annotations

from fractions import Fraction
from typing import Any

import pytest

from schedviz.kube.admission import resourcequota
from schedviz.kube.decode import decode_object
from schedviz.kube.objects import Pod, ResourceQuota


def quota(hard: dict[str, str], **spec: Any) -> ResourceQuota:
    decoded = decode_object(
        {
            "apiVersion": "v1",
            "kind": "ResourceQuota",
            "metadata": {"name": "quota", "namespace": "test"},
            "spec": {"hard": hard, **spec},
        }
    )
    assert isinstance(decoded, ResourceQuota)
    return decoded


def pod(
    name: str,
    requests: dict[str, str] | None = None,
    limits: dict[str, str] | None = None,
    **spec: Any,
) -> Pod:
    """validPod: one container with the given requirements."""
    resources = {k: v for k, v in (("requests", requests), ("limits", limits)) if v}
    status = spec.pop("status", None)
    doc: dict[str, Any] = {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": name, "namespace": "test"},
        "spec": {"containers": [{"name": "ctr", "image": "image", "resources": resources}], **spec},
    }
    if status:
        doc["status"] = status
    decoded = decode_object(doc)
    assert isinstance(decoded, Pod)
    return decoded


def used(hard: dict[str, str], *existing: Pod) -> resourcequota.QuotaUsage:
    return resourcequota.QuotaUsage([quota(hard)], existing)


def test_admit_below_quota_limit_charges_the_quota() -> None:
    usage = used(
        {"cpu": "3", "memory": "100Gi", "pods": "5"}, pod("a", {"cpu": "1", "memory": "50Gi"})
    )
    assert (
        usage.admit(pod("b", {"cpu": "100m", "memory": "2Gi"}, {"cpu": "100m", "memory": "2Gi"}))
        == ""
    )
    assert usage.used(usage.quotas[0])["cpu"][0] == Fraction(11, 10)
    assert usage.used(usage.quotas[0])["pods"][0] == 2


def test_admit_exceed_quota_limit_in_upstreams_words() -> None:
    usage = used(
        {"cpu": "3", "memory": "100Gi", "pods": "5"}, pod("a", {"cpu": "1", "memory": "50Gi"})
    )
    assert usage.admit(pod("b", {"cpu": "3", "memory": "2Gi"})) == (
        "exceeded quota: quota, requested: cpu=3, used: cpu=1, limited: cpu=3"
    )


def test_the_issues_pods_quota_refuses_the_second_pod() -> None:
    usage = used({"pods": "1"})
    assert usage.admit(pod("first")) == ""
    assert usage.admit(pod("second")) == (
        "exceeded quota: quota, requested: pods=1, used: pods=1, limited: pods=1"
    )


def test_every_exceeded_resource_is_named_sorted() -> None:
    usage = used({"requests.cpu": "1", "requests.memory": "1Gi"})
    assert usage.admit(pod("big", {"cpu": "2", "memory": "2Gi"})) == (
        "exceeded quota: quota, requested: requests.cpu=2,requests.memory=2Gi, "
        "used: requests.cpu=0,requests.memory=0, limited: requests.cpu=1,requests.memory=1Gi"
    )


def test_quota_on_cpu_and_memory_requires_every_container_to_name_them() -> None:
    usage = used({"limits.cpu": "2", "requests.memory": "1Gi"})
    assert usage.admit(pod("bare")) == (
        "failed quota: quota: must specify limits.cpu for: ctr; requests.memory for: ctr"
    )


def test_terminal_pods_count_only_as_objects() -> None:
    done = pod("done", {"cpu": "1"}, status={"phase": "Succeeded"})
    assert resourcequota.pod_usage(done) == {"count/pods": (Fraction(1), "decimal")}
    usage = used({"pods": "1", "count/pods": "5"}, done)
    assert usage.admit(pod("next")) == ""


@pytest.mark.parametrize(
    ("the_pod", "expected"),
    [
        (
            pod(
                "init",
                {"cpu": "1m"},
                {"cpu": "2m"},
                initContainers=[
                    {
                        "name": "init",
                        "image": "i",
                        "resources": {"requests": {"cpu": "3m"}, "limits": {"cpu": "4m"}},
                    }
                ],
            ),
            {
                "requests.cpu": Fraction(3, 1000),
                "limits.cpu": Fraction(4, 1000),
                "cpu": Fraction(3, 1000),
                "pods": 1,
                "count/pods": 1,
            },
        ),
        (
            pod("extended", {"example.com/dongle": "3"}, {"example.com/dongle": "3"}),
            {"requests.example.com/dongle": 3, "pods": 1, "count/pods": 1},
        ),
        (
            pod(
                "hugepages",
                {"hugepages-1Gi": "1Gi", "memory": "1Gi"},
                {"hugepages-1Gi": "1Gi", "memory": "1Gi"},
            ),
            {
                "hugepages-1Gi": 2**30,
                "requests.hugepages-1Gi": 2**30,
                "memory": 2**30,
                "requests.memory": 2**30,
                "limits.memory": 2**30,
                "pods": 1,
                "count/pods": 1,
            },
        ),
    ],
    ids=["init container CPU", "extended resource", "hugepages"],
)
def test_pod_evaluator_usage(the_pod: Pod, expected: dict[str, Any]) -> None:
    usage = {name: amount for name, (amount, _) in resourcequota.pod_usage(the_pod).items()}
    assert usage == expected


def test_overhead_counts_in_requests_and_in_the_limits_that_are_set() -> None:
    the_pod = pod("overhead", {"cpu": "1"}, {"cpu": "2"}, overhead={"cpu": "1", "memory": "1Gi"})
    usage = {name: amount for name, (amount, _) in resourcequota.pod_usage(the_pod).items()}
    assert usage["requests.cpu"] == 2 and usage["limits.cpu"] == 3
    assert usage["requests.memory"] == 2**30 and "limits.memory" not in usage


@pytest.mark.parametrize(
    ("scopes", "the_pod", "matches"),
    [
        ({"scopes": ["BestEffort"]}, pod("best-effort"), True),
        ({"scopes": ["BestEffort"]}, pod("burstable", {"cpu": "1"}), False),
        ({"scopes": ["NotBestEffort"]}, pod("burstable", {"cpu": "1"}), True),
        ({"scopes": ["Terminating"]}, pod("deadline", activeDeadlineSeconds=60), True),
        ({"scopes": ["NotTerminating"]}, pod("deadline", activeDeadlineSeconds=60), False),
        (
            {
                "scopeSelector": {
                    "matchExpressions": [
                        {"scopeName": "PriorityClass", "operator": "In", "values": ["high"]}
                    ]
                }
            },
            pod("high", priorityClassName="high"),
            True,
        ),
        (
            {
                "scopeSelector": {
                    "matchExpressions": [
                        {"scopeName": "PriorityClass", "operator": "NotIn", "values": ["high"]}
                    ]
                }
            },
            pod("high", priorityClassName="high"),
            False,
        ),
        (
            {
                "scopeSelector": {
                    "matchExpressions": [{"scopeName": "PriorityClass", "operator": "Exists"}]
                }
            },
            pod("none"),
            False,
        ),
    ],
    ids=[
        "best effort",
        "burstable not best effort",
        "not best effort",
        "terminating",
        "not terminating",
        "priority class in",
        "priority class not in",
        "priority class exists",
    ],
)
def test_pod_evaluator_matching_scopes(scopes: dict[str, Any], the_pod: Pod, matches: bool) -> None:
    hard = {"pods": "1"}
    assert resourcequota.matches(quota(hard, **scopes), the_pod) is matches


def test_a_scoped_quota_leaves_other_pods_alone() -> None:
    usage = resourcequota.QuotaUsage([quota({"pods": "0"}, scopes=["BestEffort"])])
    assert usage.admit(pod("burstable", {"cpu": "1"})) == ""
    assert usage.admit(pod("best-effort")) == (
        "exceeded quota: quota, requested: pods=1, used: pods=0, limited: pods=0"
    )


def test_conflicting_scopes_are_invalid() -> None:
    from schedviz.kube.errors import InvalidObjectError

    with pytest.raises(InvalidObjectError, match="conflicting scopes"):
        quota({"pods": "1"}, scopes=["Terminating", "NotTerminating"])


def test_a_pod_another_plugin_refuses_is_not_charged() -> None:
    from schedviz.kube.admission import PodAdmission
    from schedviz.kube.errors import ForbiddenError
    from schedviz.kube.objects import LimitRange, LimitRangeItem
    from schedviz.kube.quantity import Quantity

    limits = LimitRange(
        name="lr",
        namespace="test",
        limits=(LimitRangeItem(type="Container", min={"cpu": Quantity.parse("1")}),),
    )
    admission = PodAdmission([limits, quota({"pods": "1"})])
    with pytest.raises(ForbiddenError, match="minimum cpu usage per Container is 1"):
        admission.admit(pod("small", {"cpu": "100m"}))
    assert admission.admit(pod("big", {"cpu": "1"})).name == "big"


def test_pod_level_resources_spare_the_containers_the_constraints() -> None:
    usage = used({"limits.cpu": "2", "requests.memory": "1Gi"})
    the_pod = pod("pod-level", resources={"requests": {"memory": "100Mi"}, "limits": {"cpu": "1"}})
    assert usage.admit(the_pod) == ""
