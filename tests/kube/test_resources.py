"""A pod's requests: ported from upstream's k8s.io/component-helpers/resource/helpers_test.go
(``TestPodResourceRequests``, ``TestPodLevelResourceRequests``, v1.34 semantics) and the
non-zero defaults of pkg/scheduler/framework/types_test.go (``calculateResource`` with
pod-level resources)."""

from __future__ import annotations

from fractions import Fraction

import pytest

from schedviz.kube.objects import Container, Pod
from schedviz.kube.resources import (
    NON_ZERO_DEFAULTS,
    is_pod_level_requests_set,
    is_pod_resize_infeasible,
    non_zero_defaults,
    pod_requests,
)
from schedviz.scheduler.testing.wrappers import make_pod, resource_list

INFEASIBLE = ("PodResizePending", "True", "Infeasible")
DEFERRED = ("PodResizePending", "True", "Deferred")


def amounts(values: dict[str, str]) -> dict[str, Fraction]:
    return {name: q.amount for name, q in resource_list(dict(values)).items()}


def sidecar(name: str, requests: dict[str, str | int]) -> Container:
    return Container(name=name, requests=resource_list(requests), restart_policy="Always")


CASES: list[tuple[str, Pod, bool, dict[str, str]]] = [
    (
        "larger init container",
        make_pod().init_req({"cpu": "4"}).req({"cpu": "1"}).obj(),
        False,
        {"cpu": "4"},
    ),
    (
        "larger containers",
        make_pod().init_req({"cpu": "2"}).req({"cpu": "2"}).req({"cpu": "3"}).obj(),
        False,
        {"cpu": "5"},
    ),
    (
        "pod overhead included",
        make_pod()
        .overhead({"cpu": "1", "memory": "1Gi"})
        .init_req({"cpu": "2"})
        .req({"cpu": "2"})
        .req({"cpu": "3"})
        .obj(),
        False,
        {"cpu": "6", "memory": "1Gi"},
    ),
    (
        "resized, infeasible",
        make_pod()
        .req({"cpu": "4"})
        .container_status("con0", requests={"cpu": "2"})
        .condition(*INFEASIBLE)
        .obj(),
        True,
        {"cpu": "2"},
    ),
    (
        "resized, infeasible & in-progress",
        make_pod()
        .req({"cpu": "6"})
        .container_status("con0", requests={"cpu": "2"}, allocated={"cpu": "4"})
        .condition(*INFEASIBLE)
        .obj(),
        True,
        {"cpu": "4"},
    ),
    (
        "resized, no resize status",
        make_pod().req({"cpu": "4"}).container_status("con0", requests={"cpu": "2"}).obj(),
        True,
        {"cpu": "4"},
    ),
    (
        "resized, deferred: the larger of spec and status",
        make_pod()
        .req({"cpu": "2"})
        .container_status("con0", requests={"cpu": "4"})
        .condition(*DEFERRED)
        .obj(),
        True,
        {"cpu": "4"},
    ),
    (
        "resized: per-resource 3-way maximum",
        make_pod()
        .req({"cpu": "10m", "memory": "20M"})
        .container_status(
            "con0", requests={"cpu": "30m", "memory": "10M"}, allocated={"memory": "30M"}
        )
        .obj(),
        True,
        {"cpu": "30m", "memory": "30M"},
    ),
    (
        "a status without resources is not read, allocatedResources or not",
        make_pod().req({"cpu": "1"}).container_status("con0", allocated={"cpu": "3"}).obj(),
        True,
        {"cpu": "1"},
    ),
    (
        "status ignored without UseStatusResources",
        make_pod().req({"cpu": "1"}).container_status("con0", requests={"cpu": "3"}).obj(),
        False,
        {"cpu": "1"},
    ),
    (
        "a resized sidecar adds its larger requests",
        make_pod()
        ._set(init_containers=(sidecar("side", {"cpu": "1"}),))
        .req({"cpu": "1"})
        .container_status("side", requests={"cpu": "2"})
        .obj(),
        True,
        {"cpu": "3"},
    ),
    (
        "pod-level cpu replaces the containers' cpu, their memory stays",
        make_pod()
        .pod_resources({"cpu": "3"})
        .req({"cpu": "100m", "memory": "1Gi"})
        .req({"memory": "1Gi"})
        .obj(),
        False,
        {"cpu": "3", "memory": "2Gi"},
    ),
    (
        "pod-level requests with no container requests",
        make_pod().pod_resources({"cpu": "3", "memory": "1Gi"}).container("busybox").obj(),
        False,
        {"cpu": "3", "memory": "1Gi"},
    ),
    (
        "pod-level requests of unsupported resources are not applied",
        make_pod()
        .pod_resources({"cpu": "2", "ephemeral-storage": "1Gi"})
        .req({"ephemeral-storage": "5Gi"})
        .obj(),
        False,
        {"cpu": "2", "ephemeral-storage": "5Gi"},
    ),
    (
        "overhead is added to pod-level requests",
        make_pod().pod_resources({"cpu": "2"}).overhead({"cpu": "500m"}).req({"cpu": "1"}).obj(),
        False,
        {"cpu": "2500m"},
    ),
    (
        "pod-level requests win over resized container requests",
        make_pod()
        .pod_resources({"cpu": "2"})
        .req({"cpu": "1"})
        .container_status("con0", requests={"cpu": "3"})
        .obj(),
        True,
        {"cpu": "2"},
    ),
]


@pytest.mark.parametrize(
    ("pod", "use_status", "expected"),
    [pytest.param(pod, use, want, id=name) for name, pod, use, want in CASES],
)
def test_pod_requests(pod: Pod, use_status: bool, expected: dict[str, str]) -> None:
    assert pod_requests(pod, use_status_resources=use_status) == amounts(expected)


def test_skip_pod_level_resources_aggregates_the_containers() -> None:
    pod = make_pod().pod_resources({"cpu": "3"}).req({"cpu": "1"}).obj()
    assert pod_requests(pod, skip_pod_level_resources=True) == amounts({"cpu": "1"})


def test_pod_level_limits_alone_are_not_requests() -> None:
    pod = make_pod().pod_resources({}, limits={"cpu": "3"}).req({"cpu": "1"}).obj()
    assert not is_pod_level_requests_set(pod)
    assert pod_requests(pod) == amounts({"cpu": "1"})


def test_first_resize_pending_condition_decides_infeasible() -> None:
    pod = make_pod().condition(*DEFERRED).condition(*INFEASIBLE).obj()
    assert not is_pod_resize_infeasible(pod)
    assert is_pod_resize_infeasible(make_pod().condition(*INFEASIBLE).obj())


@pytest.mark.parametrize(
    ("pod", "expected_cpu", "expected_memory"),
    [
        pytest.param(
            make_pod().container("busybox").container("busybox").obj(),
            "200m",
            "400Mi",
            id="no requests: the defaults per container",
        ),
        pytest.param(
            make_pod().pod_resources({"cpu": "2"}).container("busybox").container("busybox").obj(),
            "2",
            "400Mi",
            id="pod-level cpu: memory defaulted in each container",
        ),
        pytest.param(
            make_pod().pod_resources({"cpu": "2"}).req({"memory": "1Gi"}).container("c").obj(),
            "2",
            "1Gi",
            id="pod-level cpu, a container requests memory: no default",
        ),
        pytest.param(
            make_pod().pod_resources({"cpu": "2", "memory": "1Gi"}).container("c").obj(),
            "2",
            "1Gi",
            id="pod-level cpu and memory: no default",
        ),
    ],
)
def test_non_zero_requests_as_the_scheduler_cache_counts_them(
    pod: Pod, expected_cpu: str, expected_memory: str
) -> None:
    requests = pod_requests(pod, use_status_resources=True)
    defaults = non_zero_defaults(pod, requests)
    non_zero = pod_requests(pod, defaults, use_status_resources=True) if defaults else requests
    want = amounts({"cpu": expected_cpu, "memory": expected_memory})
    assert {k: non_zero[k] for k in want} == want


def test_without_pod_level_requests_both_defaults_apply() -> None:
    pod = make_pod().req({"cpu": "1"}).obj()
    assert non_zero_defaults(pod, pod_requests(pod)) == NON_ZERO_DEFAULTS
