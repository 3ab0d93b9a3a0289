"""The PodGroup custom resource (scheduling.x-k8s.io/v1alpha1) through the manifest loader."""

from __future__ import annotations

import pytest

from schedviz.kube.crds import PodGroup
from schedviz.kube.errors import ManifestError
from schedviz.kube.load import load_manifests
from schedviz.kube.quantity import Quantity

HEADER = "apiVersion: scheduling.x-k8s.io/v1alpha1\nkind: PodGroup\n"
POD_GROUP = """
apiVersion: scheduling.x-k8s.io/v1alpha1
kind: PodGroup
metadata: {name: nginx, namespace: web, creationTimestamp: "2024-05-01T10:00:00Z"}
spec: {minMember: 3, minResources: {cpu: "6", memory: 1Gi}, scheduleTimeoutSeconds: 10}
"""


def test_it_loads_a_pod_group_with_its_spec() -> None:
    (group,) = load_manifests(POD_GROUP).objects
    assert isinstance(group, PodGroup)
    assert (group.key, group.min_member, group.schedule_timeout_seconds) == ("web/nginx", 3, 10)
    assert group.min_resources == {"cpu": Quantity.parse("6"), "memory": Quantity.parse("1Gi")}
    assert group.creation_timestamp == "2024-05-01T10:00:00Z"


def test_an_empty_spec_leaves_min_resources_and_timeout_unset() -> None:
    (group,) = load_manifests(HEADER + "metadata: {name: g}\n").objects
    assert group == PodGroup(name="g", namespace="default")


@pytest.mark.parametrize(
    ("spec", "error"),
    [
        (
            "{minMember: 0}",
            "spec.minMember: Invalid value: 0: spec.minMember in body should be greater than "
            "or equal to 1",
        ),
        (
            '{minMember: "3"}',
            'spec.minMember: Invalid value: "string": spec.minMember in body must be of type '
            'integer: "string"',
        ),
        (
            "{minResources: {cpu: lots}}",
            'spec.minResources[cpu]: Invalid value: "lots": quantities must match the regular '
            "expression",
        ),
    ],
)
def test_it_refuses_what_the_crd_schema_refuses(spec: str, error: str) -> None:
    text = f"{HEADER}metadata: {{name: g}}\nspec: {spec}\n"
    with pytest.raises(ManifestError) as info:
        load_manifests(text)
    assert 'PodGroup.scheduling.x-k8s.io "g" is invalid' in str(info.value)
    assert error in str(info.value)


def test_a_pod_group_name_is_unique_per_namespace() -> None:
    with pytest.raises(ManifestError) as info:
        load_manifests(POD_GROUP + "---" + POD_GROUP)
    assert 'podgroups.scheduling.x-k8s.io "nginx" already exists' in str(info.value)
