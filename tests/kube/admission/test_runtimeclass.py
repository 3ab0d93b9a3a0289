"""RuntimeClass admission, ported from plugin/pkg/admission/runtimeclass/admission_test.go
(TestSetOverhead, TestSetScheduling, TestAdmit, TestValidate, TestValidateOverhead) with
upstream's messages."""

from __future__ import annotations

import copy
from typing import Any

import pytest

from schedviz.kube.admission import runtimeclass
from schedviz.kube.decode import decode_object
from schedviz.kube.objects import Pod, RuntimeClass

OVERHEAD = {"cpu": "100m", "memory": "1"}


def pod(
    name: str,
    *,
    overhead: bool = False,
    requests: dict[str, str] | None = None,
    node_selector: dict[str, str] | None = None,
    tolerations: list[dict[str, Any]] | None = None,
) -> Pod:
    """newOverheadValidPod / newSchedulingValidPod."""
    resources = {"requests": requests, "limits": requests} if requests else {}
    spec: dict[str, Any] = {
        "runtimeClassName": "foo",
        "containers": [{"name": "foo-0", "image": "foo:V0", "resources": resources}],
    }
    if overhead:
        spec["overhead"] = dict(OVERHEAD)
    if node_selector is not None:
        spec["nodeSelector"] = node_selector
    if tolerations is not None:
        spec["tolerations"] = tolerations
    decoded = decode_object(
        {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": name}, "spec": spec}
    )
    assert isinstance(decoded, Pod)
    return decoded


def runtime_class(**fields: Any) -> RuntimeClass:
    doc: dict[str, Any] = {
        "apiVersion": "node.k8s.io/v1",
        "kind": "RuntimeClass",
        "metadata": {"name": "foo"},
        "handler": "bar",
        **fields,
    }
    decoded = decode_object(doc)
    assert isinstance(decoded, RuntimeClass)
    return decoded


GUARANTEED = {"cpu": "1", "memory": "10Mi"}
SAME = {"overhead": {"podFixed": OVERHEAD}}
DIFFERENT = {"overhead": {"podFixed": {"cpu": "10", "memory": "10G"}}}


def _mutate(p: Pod, rc: RuntimeClass | None) -> dict[str, Any]:
    manifest = copy.deepcopy(p.manifest)
    runtimeclass.mutate(p, rc, manifest)
    return manifest


@pytest.mark.parametrize(
    ("the_pod", "rc", "error"),
    [
        (pod("no-resource-req-no-overhead"), runtime_class(**SAME), ""),
        (pod("guaranteed", requests=GUARANTEED), runtime_class(**SAME), ""),
        (
            pod("empty-requiremennts-overhead", overhead=True),
            runtime_class(**DIFFERENT),
            runtimeclass.OVERHEAD_MISMATCH,
        ),
        (pod("empty-requiremennts-overhead", overhead=True), runtime_class(**SAME), ""),
    ],
    ids=[
        "overhead, no container requirements",
        "overhead, guaranteed pod",
        "overhead, pod with differing overhead already set",
        "overhead, pod with same overhead already set",
    ],
)
def test_set_overhead(the_pod: Pod, rc: RuntimeClass, error: str) -> None:
    if error:
        with pytest.raises(runtimeclass.RuntimeClassRefusal, match="^" + error + "$"):
            _mutate(the_pod, rc)
    else:
        assert _mutate(the_pod, rc)["spec"]["overhead"] == OVERHEAD


NO_SCHEDULE = "NoSchedule"


@pytest.mark.parametrize(
    ("the_pod", "rc", "selector", "tolerations"),
    [
        (
            pod("nil-scheduling", node_selector={"foo": "bar"}),
            runtime_class(),
            {"foo": "bar"},
            None,
        ),
        (
            pod("nil-node-selector"),
            runtime_class(scheduling={"nodeSelector": {"foo": "bar"}}),
            {"foo": "bar"},
            None,
        ),
        (
            pod("same-key-value", node_selector={"foo": "bar"}),
            runtime_class(scheduling={"nodeSelector": {"foo": "bar"}}),
            {"foo": "bar"},
            None,
        ),
        (
            pod("different-key-value", node_selector={"foo": "bar"}),
            runtime_class(scheduling={"nodeSelector": {"foo": "bar", "fizz": "buzz"}}),
            {"foo": "bar", "fizz": "buzz"},
            None,
        ),
        (
            pod(
                "tolerations",
                node_selector={"foo": "bar"},
                tolerations=[
                    {"key": "foo", "operator": "Equal", "value": "bar", "effect": NO_SCHEDULE}
                ],
            ),
            runtime_class(
                scheduling={
                    "tolerations": [
                        {"key": "foo", "operator": "Equal", "value": "bar", "effect": NO_SCHEDULE},
                        {
                            "key": "fizz",
                            "operator": "Equal",
                            "value": "buzz",
                            "effect": NO_SCHEDULE,
                        },
                    ]
                }
            ),
            {"foo": "bar"},
            [
                {"key": "foo", "operator": "Equal", "value": "bar", "effect": NO_SCHEDULE},
                {"key": "fizz", "operator": "Equal", "value": "buzz", "effect": NO_SCHEDULE},
            ],
        ),
    ],
    ids=[
        "scheduling, nil scheduling",
        "scheduling, nil node selector",
        "scheduling, node selector with the same key value",
        "scheduling, node selector with different key value",
        "scheduling, multiple tolerations",
    ],
)
def test_set_scheduling(
    the_pod: Pod, rc: RuntimeClass, selector: dict[str, str], tolerations: Any
) -> None:
    spec = _mutate(the_pod, rc)["spec"]
    assert spec.get("nodeSelector") == selector
    assert spec.get("tolerations") == tolerations


def test_a_conflicting_node_selector_is_refused_in_upstreams_words() -> None:
    rc = runtime_class(scheduling={"nodeSelector": {"foo": "conflict"}})
    with pytest.raises(runtimeclass.RuntimeClassRefusal) as refused:
        _mutate(pod("conflict", node_selector={"foo": "bar"}), rc)
    assert str(refused.value) == (
        "conflict: runtimeClass.scheduling.nodeSelector[foo] = conflict; "
        "pod.spec.nodeSelector[foo] = bar"
    )


def test_a_toleration_the_class_covers_is_merged_away() -> None:
    merged = runtimeclass.merge_tolerations(
        [(t, {}) for t in pod("t", tolerations=[{"key": "a", "operator": "Exists"}]).tolerations],
        [
            (t, {})
            for t in runtime_class(scheduling={"tolerations": [{"operator": "Exists"}]}).tolerations
        ],
    )
    assert [(t.key, t.operator) for t, _ in merged] == [("", "Exists")]


def test_admit_refuses_an_unknown_runtime_class() -> None:
    with pytest.raises(runtimeclass.RuntimeClassRefusal) as refused:
        runtimeclass.runtime_class_of(pod("podname"), {})
    assert str(refused.value) == 'pod rejected: RuntimeClass "foo" not found'
    assert runtimeclass.runtime_class_of(pod("podname"), {"foo": runtime_class()}) is not None


def test_lenient_admission_lets_a_stored_pod_through_with_one_warning_per_refusal() -> None:
    from schedviz.kube.admission import PodAdmission
    from schedviz.kube.errors import ForbiddenError

    stored = pod("dumped", overhead=True)
    with pytest.raises(ForbiddenError):
        PodAdmission([]).admit(stored)
    lenient = PodAdmission([], lenient_runtime_classes=True)
    assert lenient.admit(stored).overhead == stored.overhead
    assert lenient.warnings == [
        'pods "dumped" is forbidden: pod rejected: RuntimeClass "foo" not found'
    ]


@pytest.mark.parametrize(
    ("the_pod", "rc", "error"),
    [
        (pod("no-requirements"), runtime_class(**SAME), runtimeclass.OVERHEAD_MISMATCH),
        (
            pod("no-resource-req-no-overhead", requests=GUARANTEED, overhead=True),
            runtime_class(),
            runtimeclass.OVERHEAD_WITHOUT_CLASS,
        ),
        (
            pod("no-resource-req-no-overhead", requests=GUARANTEED, overhead=True),
            None,
            runtimeclass.OVERHEAD_WITHOUT_CLASS,
        ),
        (
            pod("non-matching", overhead=True),
            runtime_class(**DIFFERENT),
            runtimeclass.OVERHEAD_MISMATCH,
        ),
        (pod("matching", overhead=True), runtime_class(**SAME), ""),
    ],
    ids=[
        "Overhead part of RuntimeClass, no Overhead defined in pod",
        "No Overhead in RunntimeClass, Overhead set in pod",
        "No RunntimeClass, Overhead set in pod",
        "Non-matching Overheads",
        "Matching Overheads",
    ],
)
def test_validate_overhead(the_pod: Pod, rc: RuntimeClass | None, error: str) -> None:
    assert runtimeclass.validate(the_pod, rc) == error


def test_runtime_classes_are_validated_in_the_api_servers_words() -> None:
    from schedviz.kube.errors import InvalidObjectError

    with pytest.raises(InvalidObjectError) as info:
        decode_object(
            {"apiVersion": "node.k8s.io/v1", "kind": "RuntimeClass", "metadata": {"name": "x"}}
        )
    assert str(info.value) == 'RuntimeClass.node.k8s.io "x" is invalid: handler: Required value'
