"""Service and the workloads decoded and validated in the API server's words
(schedviz/kube/decode/workloads.py)."""

from __future__ import annotations

from typing import Any

import pytest

from schedviz.kube.decode import decode_object
from schedviz.kube.errors import InvalidObjectError
from schedviz.kube.objects import Job, LabelSelector, ReplicationController, Service

CONTAINERS = [{"name": "c", "image": "x"}]


def deployment(**spec: Any) -> dict[str, Any]:
    base: dict[str, Any] = {
        "selector": {"matchLabels": {"app": "web"}},
        "template": {"metadata": {"labels": {"app": "web"}}, "spec": {"containers": CONTAINERS}},
    }
    return {
        "apiVersion": "apps/v1",
        "kind": "Deployment",
        "metadata": {"name": "web"},
        "spec": {**base, **spec},
    }


def errors_of(doc: dict[str, Any]) -> list[str]:
    with pytest.raises(InvalidObjectError) as info:
        decode_object(doc)
    return [str(e) for e in info.value.errors]


@pytest.mark.parametrize(
    ("doc", "expected"),
    [
        (deployment(selector=None), "spec.selector: Required value"),
        (
            deployment(selector={"matchLabels": {"app": "db"}}),
            'spec.template.metadata.labels: Invalid value: map[string]string{"app":"web"}: '
            "`selector` does not match template `labels`",
        ),
        (
            deployment(replicas=-1),
            "spec.replicas: Invalid value: -1: must be greater than or equal to 0",
        ),
        (
            deployment(
                template={
                    "metadata": {"labels": {"app": "web"}},
                    "spec": {"restartPolicy": "Never", "containers": CONTAINERS},
                }
            ),
            'spec.template.spec.restartPolicy: Unsupported value: "Never": '
            'supported values: "Always"',
        ),
        (
            deployment(
                template={"metadata": {"labels": {"app": "web"}}, "spec": {"containers": []}}
            ),
            "spec.template.spec.containers: Required value",
        ),
        (
            {
                "apiVersion": "batch/v1",
                "kind": "Job",
                "metadata": {"name": "j"},
                "spec": {"template": {"spec": {"containers": CONTAINERS}}},
            },
            'spec.template.spec.restartPolicy: Required value: valid values: "OnFailure", "Never"',
        ),
        (
            {"apiVersion": "v1", "kind": "Service", "metadata": {"name": "1web"}},
            'metadata.name: Invalid value: "1web": a DNS-1035 label must consist of lower case '
            "alphanumeric characters or '-', start with an alphabetic character, and end with an "
            "alphanumeric character (e.g. 'my-name',  or 'abc-123', regex used for validation is "
            "'[a-z]([-a-z0-9]*[a-z0-9])?')",
        ),
    ],
    ids=[
        "no selector",
        "selector mismatch",
        "negative replicas",
        "restart policy",
        "no containers",
        "job restart policy",
        "service name",
    ],
)
def test_invalid_workloads_are_refused_in_the_api_servers_words(
    doc: dict[str, Any], expected: str
) -> None:
    assert expected in errors_of(doc)


def test_a_service_keeps_its_selector_and_none_when_it_has_none() -> None:
    service = decode_object(
        {
            "apiVersion": "v1",
            "kind": "Service",
            "metadata": {"name": "web"},
            "spec": {"selector": {"app": "web"}},
        }
    )
    assert isinstance(service, Service) and service.selector == {"app": "web"}
    bare = decode_object({"apiVersion": "v1", "kind": "Service", "metadata": {"name": "ext"}})
    assert isinstance(bare, Service) and bare.selector is None


def test_a_replication_controller_defaults_its_selector_to_the_template_labels() -> None:
    rc = decode_object(
        {
            "apiVersion": "v1",
            "kind": "ReplicationController",
            "metadata": {"name": "rc"},
            "spec": {
                "template": {
                    "metadata": {"labels": {"app": "a"}},
                    "spec": {"containers": CONTAINERS},
                }
            },
        }
    )
    assert isinstance(rc, ReplicationController)
    assert rc.selector == {"app": "a"} and rc.labels == {"app": "a"} and rc.replicas == 1


def test_a_job_selects_its_pods_by_its_uid_and_labels_them() -> None:
    job = decode_object(
        {
            "apiVersion": "batch/v1",
            "kind": "Job",
            "metadata": {"name": "j", "uid": "u-1"},
            "spec": {"template": {"spec": {"restartPolicy": "Never", "containers": CONTAINERS}}},
        }
    )
    assert isinstance(job, Job)
    assert job.selector == LabelSelector(match_labels={"batch.kubernetes.io/controller-uid": "u-1"})
    assert job.template["metadata"]["labels"] == {
        "batch.kubernetes.io/controller-uid": "u-1",
        "batch.kubernetes.io/job-name": "j",
        "controller-uid": "u-1",
        "job-name": "j",
    }
    assert (job.parallelism, job.completions) == (1, 1)


def test_a_stateful_set_without_selector_gets_the_api_servers_two_errors() -> None:
    doc = deployment(selector=None)
    doc["kind"] = "StatefulSet"
    with pytest.raises(InvalidObjectError) as info:
        decode_object(doc)
    assert str(info.value) == (
        'StatefulSet.apps "web" is invalid: [spec.selector: Required value, '
        'spec.template.metadata.labels: Invalid value: map[string]string{"app":"web"}: '
        "`selector` does not match template `labels`]"
    )
