"""LimitRanger, ported from plugin/pkg/admission/limitranger/admission_test.go
(TestDefaultContainerResourceRequirements, TestMergePodResourceRequirements, TestPodLimitFunc)
with upstream's messages checked where the test table only checks that an error occurs."""

from __future__ import annotations

import copy
from typing import Any

import pytest

from schedviz.kube.admission import limitranger
from schedviz.kube.objects import Container, LimitRange, LimitRangeItem, Pod, ResourceList
from schedviz.kube.quantity import Quantity


def resources(cpu: str = "", memory: str = "", storage: str = "") -> ResourceList:
    """getComputeResourceList / getLocalStorageResourceList."""
    out: ResourceList = {}
    for name, value in (("cpu", cpu), ("memory", memory), ("ephemeral-storage", storage)):
        if value:
            out[name] = Quantity.parse(value)
    return out


def limit_range(kind: str, **lists: ResourceList) -> LimitRange:
    """createLimitRange: one item, no defaulting (as the Go test converts without it)."""
    return LimitRange(name="abc", namespace="test", limits=(LimitRangeItem(type=kind, **lists),))


def valid_pod(name: str, count: int, requests: ResourceList, limits: ResourceList) -> Pod:
    containers = tuple(
        Container(name=f"foo-{i}", image=f"foo:V{i}", requests=dict(requests), limits=dict(limits))
        for i in range(count)
    )
    return Pod(name=name, namespace="test", containers=containers)


def with_init(pod: Pod, *pairs: tuple[ResourceList, ResourceList]) -> Pod:
    inits = tuple(
        Container(name=f"foo-{i}", image=f"foo:V{i}", requests=req, limits=lim)
        for i, (req, lim) in enumerate(pairs)
    )
    pod.init_containers = inits
    return pod


C, P = "Container", "Pod"
SUCCESS = [
    (
        valid_pod("ctr-min-cpu-request", 1, resources("100m"), {}),
        limit_range(C, min=resources("50m")),
    ),
    (
        valid_pod("ctr-min-cpu-request-limit", 1, resources("100m"), resources("200m")),
        limit_range(C, min=resources("50m")),
    ),
    (
        valid_pod("ctr-min-memory-request", 1, resources(memory="60Mi"), {}),
        limit_range(C, min=resources(memory="50Mi")),
    ),
    (
        valid_pod("ctr-max-cpu-request-limit", 1, resources("500m"), resources("1")),
        limit_range(C, max=resources("2")),
    ),
    (valid_pod("ctr-max-cpu-limit", 1, {}, resources("1")), limit_range(C, max=resources("2"))),
    (
        valid_pod(
            "ctr-max-mem-request-limit", 1, resources(memory="250Mi"), resources(memory="500Mi")
        ),
        limit_range(C, max=resources(memory="1Gi")),
    ),
    (
        valid_pod("ctr-max-cpu-ratio", 1, resources("500m"), resources("750m")),
        limit_range(C, max_limit_request_ratio=resources("1.5")),
    ),
    (
        valid_pod("pod-min-cpu-request", 2, resources("75m"), {}),
        limit_range(P, min=resources("100m")),
    ),
    (
        valid_pod(
            "pod-min-memory-request-limit", 2, resources(memory="60Mi"), resources(memory="100Mi")
        ),
        limit_range(P, min=resources(memory="100Mi")),
    ),
    (
        with_init(
            valid_pod("pod-init-min-memory-request", 2, resources(memory="60Mi"), {}),
            (resources(memory="100Mi"), {}),
        ),
        limit_range(P, min=resources(memory="100Mi")),
    ),
    (
        valid_pod("pod-max-cpu-request-limit", 2, resources("500m"), resources("1")),
        limit_range(P, max=resources("2")),
    ),
    (
        with_init(
            valid_pod("pod-init-max-cpu-request-limit", 2, resources("500m"), resources("1")),
            (resources("1"), resources("2")),
            (resources("1"), resources("1")),
        ),
        limit_range(P, max=resources("2")),
    ),
    (
        valid_pod("pod-max-mem-ratio", 3, resources(memory="300Mi"), resources(memory="450Mi")),
        limit_range(
            P, max=resources(memory="2Gi"), max_limit_request_ratio=resources(memory="1.5")
        ),
    ),
    (
        valid_pod("ctr-1-min-local-ephemeral-storage-request", 1, resources(storage="60Mi"), {}),
        limit_range(C, min=resources(storage="50Mi")),
    ),
    (
        valid_pod(
            "pod-max-local-ephemeral-storage-ratio",
            3,
            resources(storage="300Mi"),
            resources(storage="450Mi"),
        ),
        limit_range(
            P, max=resources(storage="2Gi"), max_limit_request_ratio=resources(storage="1.5")
        ),
    ),
]


@pytest.mark.parametrize(("pod", "lr"), SUCCESS, ids=[p.name for p, _ in SUCCESS])
def test_it_admits_pods_within_the_limits(pod: Pod, lr: LimitRange) -> None:
    manifest: dict[str, Any] = {"spec": {}}
    assert limitranger.mutate(manifest, [lr]) == []
    assert limitranger.validate(pod, [lr]) == ""


ERRORS = [
    (
        valid_pod("ctr-min-cpu-request", 1, resources("40m"), {}),
        limit_range(C, min=resources("50m")),
        "minimum cpu usage per Container is 50m, but request is 40m",
    ),
    (
        valid_pod("ctr-min-cpu-no-request-limit", 1, {}, {}),
        limit_range(C, min=resources("50m")),
        "minimum cpu usage per Container is 50m.  No request is specified",
    ),
    (
        valid_pod(
            "ctr-min-memory-request-limit", 1, resources(memory="40Mi"), resources(memory="100Mi")
        ),
        limit_range(C, min=resources(memory="50Mi")),
        "minimum memory usage per Container is 50Mi, but request is 40Mi",
    ),
    (
        valid_pod("ctr-max-cpu-request-limit", 1, resources("500m"), resources("2500m")),
        limit_range(C, max=resources("2")),
        "maximum cpu usage per Container is 2, but limit is 2500m",
    ),
    (
        valid_pod("ctr-max-cpu-no-request-limit", 1, {}, {}),
        limit_range(C, max=resources("2")),
        "maximum cpu usage per Container is 2.  No limit is specified",
    ),
    (
        valid_pod("ctr-max-cpu-ratio", 1, resources("1250m"), resources("2500m")),
        limit_range(C, max_limit_request_ratio=resources("1")),
        "cpu max limit to request ratio per Container is 1, but provided ratio is 2.000000",
    ),
    (
        valid_pod("ctr-max-mem-limit", 1, {}, resources(memory="2Gi")),
        limit_range(C, max=resources(memory="1Gi")),
        "maximum memory usage per Container is 1Gi, but limit is 2Gi",
    ),
    (
        valid_pod("pod-min-cpu-request", 1, resources("75m"), {}),
        limit_range(P, min=resources("100m")),
        "minimum cpu usage per Pod is 100m, but request is 75m",
    ),
    (
        valid_pod(
            "pod-min-memory-request-limit", 1, resources(memory="60Mi"), resources(memory="100Mi")
        ),
        limit_range(P, min=resources(memory="100Mi")),
        "minimum memory usage per Pod is 100Mi, but request is 60Mi",
    ),
    (
        valid_pod("pod-max-cpu-request-limit", 3, resources("500m"), resources("1")),
        limit_range(P, max=resources("2")),
        "maximum cpu usage per Pod is 2, but limit is 3",
    ),
    (
        valid_pod("pod-max-mem-limit", 3, {}, resources(memory="500Mi")),
        limit_range(P, max=resources(memory="1Gi")),
        "maximum memory usage per Pod is 1Gi, but limit is 1500Mi",
    ),
    (
        with_init(
            valid_pod("pod-init-max-mem-limit", 1, {}, resources(memory="500Mi")),
            ({}, resources(memory="1.5Gi")),
        ),
        limit_range(P, max=resources(memory="1Gi")),
        "maximum memory usage per Pod is 1Gi, but limit is 1536Mi",
    ),
    (
        valid_pod("pod-max-mem-ratio", 3, resources(memory="250Mi"), resources(memory="500Mi")),
        limit_range(
            P, max=resources(memory="2Gi"), max_limit_request_ratio=resources(memory="1.5")
        ),
        "memory max limit to request ratio per Pod is 1500m, but provided ratio is 2.000000",
    ),
    (
        valid_pod("ctr-1-max-local-ephemeral-storage-limit", 1, {}, resources(storage="2Gi")),
        limit_range(C, max=resources(storage="1Gi")),
        "maximum ephemeral-storage usage per Container is 1Gi, but limit is 2Gi",
    ),
]


@pytest.mark.parametrize(("pod", "lr", "message"), ERRORS, ids=[p.name for p, _, _ in ERRORS])
def test_it_refuses_pods_past_the_limits_in_upstreams_words(
    pod: Pod, lr: LimitRange, message: str
) -> None:
    assert limitranger.validate(pod, [lr]) == message


def test_errors_of_one_limit_range_are_aggregated() -> None:
    lr = limit_range(C, min=resources("50m", "50Mi"))
    assert limitranger.validate(valid_pod("two", 1, {}, {}), [lr]) == (
        "[minimum cpu usage per Container is 50m.  No request is specified, "
        "minimum memory usage per Container is 50Mi.  No request is specified]"
    )


def test_pod_level_resources_stand_for_the_containers_sums() -> None:
    from schedviz.kube.objects import ResourceRequirements

    pod = valid_pod("pod-level", 2, resources("500m"), resources("1"))
    pod.resources = ResourceRequirements(requests=resources("1"), limits=resources("1500m"))
    assert limitranger.validate(pod, [limit_range(P, max=resources("2"))]) == ""
    pod.resources = ResourceRequirements(requests=resources("1"), limits=resources("3"))
    assert limitranger.validate(pod, [limit_range(P, max=resources("2"))]) == (
        "maximum cpu usage per Pod is 2, but limit is 3"
    )


VALID_LIMIT_RANGE = LimitRange(
    name="abc",
    namespace="test",
    limits=(
        LimitRangeItem(type=P, max=resources("200m", "4Gi"), min=resources("50m", "2Mi")),
        LimitRangeItem(
            type=C,
            max=resources("100m", "2Gi"),
            min=resources("25m", "1Mi"),
            default=resources("75m", "10Mi"),
            default_request=resources("50m", "5Mi"),
        ),
    ),
)


def _manifest(
    containers: list[dict[str, Any]], inits: list[dict[str, Any]] | None = None
) -> dict[str, Any]:
    spec: dict[str, Any] = {"containers": containers}
    if inits is not None:
        spec["initContainers"] = inits
    return {"metadata": {"name": "p"}, "spec": spec}


def test_a_container_without_resources_gets_every_default_and_the_annotation() -> None:
    manifest = _manifest([{"name": "foo-0"}])
    changes = limitranger.mutate(manifest, [VALID_LIMIT_RANGE])
    assert manifest["spec"]["containers"][0]["resources"] == {
        "requests": {"cpu": "50m", "memory": "5Mi"},
        "limits": {"cpu": "75m", "memory": "10Mi"},
    }
    assert manifest["metadata"]["annotations"][limitranger.LIMIT_RANGER_ANNOTATION] == (
        "LimitRanger plugin set: cpu, memory request for container foo-0; "
        "cpu, memory limit for container foo-0"
    )
    assert changes == [
        "LimitRanger set requests.cpu=50m, requests.memory=5Mi on container foo-0 (LimitRange abc)",
        "LimitRanger set limits.cpu=75m, limits.memory=10Mi on container foo-0 (LimitRange abc)",
    ]


def test_only_what_a_container_lacks_is_defaulted_init_containers_included() -> None:
    given = {"name": "foo-0", "resources": {"requests": {"memory": "512Mi"}}}
    manifest = _manifest([copy.deepcopy(given)], [copy.deepcopy(given)])
    limitranger.mutate(manifest, [VALID_LIMIT_RANGE])
    expected = {
        "requests": {"memory": "512Mi", "cpu": "50m"},
        "limits": {"cpu": "75m", "memory": "10Mi"},
    }
    assert manifest["spec"]["containers"][0]["resources"] == expected
    assert manifest["spec"]["initContainers"][0]["resources"] == expected
    assert manifest["metadata"]["annotations"][limitranger.LIMIT_RANGER_ANNOTATION] == (
        "LimitRanger plugin set: cpu request for container foo-0; "
        "cpu, memory limit for container foo-0; cpu request for init container foo-0; "
        "cpu, memory limit for init container foo-0"
    )


def test_a_container_with_everything_set_is_left_alone_without_annotation() -> None:
    full = {
        "name": "foo-0",
        "resources": {
            "requests": {"cpu": "100m", "memory": "512Mi"},
            "limits": {"cpu": "200m", "memory": "1G"},
        },
    }
    manifest = _manifest([full])
    assert limitranger.mutate(manifest, [VALID_LIMIT_RANGE]) == []
    assert "annotations" not in manifest["metadata"]
