"""Priority admission, after plugin/pkg/admission/priority/admission_test.go."""

import dataclasses
from typing import Any

import pytest

from schedviz.kube.admission import admit_pods, admit_priority_classes, default_priority_class
from schedviz.kube.errors import ForbiddenError, ManifestError
from schedviz.kube.objects import Pod, PriorityClass

HIGH = PriorityClass(name="high", value=1000)
LOW_DEFAULT = PriorityClass(name="low", value=10, global_default=True, preemption_policy="Never")
LOWER_DEFAULT = PriorityClass(name="lower", value=5, global_default=True)


def pod(name: str = "web-1", **fields: Any) -> Pod:
    return dataclasses.replace(Pod(name=name), **fields)


@pytest.mark.parametrize(
    ("name", "the_pod", "classes", "priority", "class_name", "policy"),
    [
        ("no class, no default", pod(), [HIGH], 0, "", "PreemptLowerPriority"),
        (
            "named class",
            pod(priority_class_name="high"),
            [HIGH],
            1000,
            "high",
            "PreemptLowerPriority",
        ),
        ("global default", pod(), [HIGH, LOW_DEFAULT], 10, "low", "Never"),
        (
            "lowest of two defaults",
            pod(),
            [LOW_DEFAULT, LOWER_DEFAULT],
            5,
            "lower",
            "PreemptLowerPriority",
        ),
        (
            "system cluster critical",
            pod(priority_class_name="system-cluster-critical"),
            [],
            2_000_000_000,
            "system-cluster-critical",
            "PreemptLowerPriority",
        ),
        (
            "system node critical",
            pod(priority_class_name="system-node-critical"),
            [],
            2_000_001_000,
            "system-node-critical",
            "PreemptLowerPriority",
        ),
        (
            "matching priority given",
            pod(priority_class_name="high", priority=1000),
            [HIGH],
            1000,
            "high",
            "PreemptLowerPriority",
        ),
        (
            "matching policy given",
            pod(preemption_policy="Never"),
            [LOW_DEFAULT],
            10,
            "low",
            "Never",
        ),
    ],
)
def test_it_resolves_priority_from_the_class(
    name: str,
    the_pod: Pod,
    classes: list[PriorityClass],
    priority: int,
    class_name: str,
    policy: str,
) -> None:
    (admitted,) = admit_pods([the_pod], classes)
    assert (admitted.priority, admitted.priority_class_name, admitted.preemption_policy) == (
        priority,
        class_name,
        policy,
    )
    assert the_pod.priority is None or the_pod.priority == priority  # the input is not changed


@pytest.mark.parametrize(
    ("the_pod", "classes", "message"),
    [
        (
            pod(priority_class_name="missing"),
            [HIGH],
            'pods "web-1" is forbidden: no PriorityClass with name missing was found',
        ),
        (
            pod(priority_class_name="high", priority=7),
            [HIGH],
            'pods "web-1" is forbidden: the integer value of priority (7) must not be provided '
            "in pod spec; "
            "priority admission controller computed 1000 from the given PriorityClass name",
        ),
        (
            pod(preemption_policy="Never"),
            [],
            'pods "web-1" is forbidden: the string value of PreemptionPolicy (Never) must not be '
            "provided "
            "in pod spec; priority admission controller computed PreemptLowerPriority from the "
            "given "
            "PriorityClass name",
        ),
    ],
)
def test_it_refuses_pods_as_the_plugin_does(
    the_pod: Pod, classes: list[PriorityClass], message: str
) -> None:
    with pytest.raises(ManifestError) as info:
        admit_pods([the_pod], classes)
    (error,) = info.value.errors
    assert isinstance(error, ForbiddenError)
    assert str(error) == message


def test_every_refused_pod_is_reported_and_none_admitted() -> None:
    pods = [pod("a", priority_class_name="x"), pod("b"), pod("c", priority_class_name="y")]
    with pytest.raises(ManifestError) as info:
        admit_pods(pods, [])
    assert str(info.value).splitlines() == [
        'pods "a" is forbidden: no PriorityClass with name x was found',
        'pods "c" is forbidden: no PriorityClass with name y was found',
    ]


def test_only_one_priority_class_may_be_the_global_default() -> None:
    admit_priority_classes([HIGH, LOW_DEFAULT])
    with pytest.raises(ManifestError) as info:
        admit_priority_classes([LOW_DEFAULT, HIGH, LOWER_DEFAULT])
    assert str(info.value) == (
        'priorityclasses.scheduling.k8s.io "lower" is forbidden: PriorityClass low is already '
        "marked "
        "as default. Only one default can exist"
    )


def test_default_priority_class_is_none_without_a_global_default() -> None:
    assert default_priority_class([HIGH]) is None


def test_it_accepts_an_exported_pod_whose_priority_is_already_resolved() -> None:
    # `kubectl get -o yaml` exports spec.priority without a class when none applied.
    (admitted,) = admit_pods([pod(priority=7)], [])
    assert admitted.priority == 7
    assert admitted.priority_class_name == ""
