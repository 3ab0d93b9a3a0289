"""decode_object: defaulting and validation, after pkg/apis/core/validation/validation_test.go."""

import copy
from typing import Any

import pytest
import yaml

from schedviz.kube.decode import decode_object
from schedviz.kube.decode.quantities import canonical_quantity
from schedviz.kube.errors import DocumentError, InvalidObjectError
from schedviz.kube.objects import (
    CSINode,
    LabelSelectorRequirement,
    Namespace,
    Node,
    PersistentVolume,
    PersistentVolumeClaim,
    Pod,
    PodDisruptionBudget,
    PriorityClass,
    StorageClass,
)
from schedviz.kube.quantity import Quantity

SUBDOMAIN_MSG = (
    "a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or "
    "'.', and must start and end with an alphanumeric character (e.g. 'example.com', regex used "
    "for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')"
)
LABEL_MSG = (
    "a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', and "
    "must start and end with an alphanumeric character (e.g. 'my-name',  or '123-abc', regex "
    "used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?')"
)
LABEL_KEY_NAME_MSG = (
    "name part must consist of alphanumeric characters, '-', '_' or '.', and must start and end "
    "with an alphanumeric character (e.g. 'MyName',  or 'my.name',  or '123-abc', regex used for "
    "validation is '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]')"
)
LABEL_VALUE_MSG = (
    "a valid label must be an empty string or consist of alphanumeric characters, '-', '_' or "
    "'.', and must start and end with an alphanumeric character (e.g. 'MyValue',  or 'my_value',"
    "  or '12345', regex used for validation is '(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?')"
)
QUANTITY_MSG = (
    "quantities must match the regular expression '^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$'"
)


def pod(**spec: Any) -> dict[str, Any]:
    base: dict[str, Any] = {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": "web-1", "labels": {"app": "web"}},
        "spec": {"containers": [{"name": "c", "image": "nginx"}]},
    }
    base["spec"].update(spec)
    return base


def with_path(doc: dict[str, Any], path: str, value: Any) -> dict[str, Any]:
    """A copy of ``doc`` with ``value`` set at a dotted path (list indexes as numbers)."""
    doc = copy.deepcopy(doc)
    *parents, last = path.split(".")
    node: Any = doc
    for part in parents:
        node = node[int(part)] if part.isdigit() else node.setdefault(part, {})
    node[int(last) if last.isdigit() else last] = value
    return doc


def errors_of(doc: dict[str, Any]) -> list[str]:
    with pytest.raises(InvalidObjectError) as info:
        decode_object(doc)
    return [str(e) for e in info.value.errors]


def node(**status: Any) -> dict[str, Any]:
    return {"apiVersion": "v1", "kind": "Node", "metadata": {"name": "n1"}, "status": status}


# --- Pods: one invalid field at a time, the API server's message for it. --------------------

DNS1123_SUBDOMAIN_MESSAGE = (
    "a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or "
    "'.', and must start and end with an alphanumeric character (e.g. 'example.com', regex used "
    "for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')"
)
POD_ERROR_CASES = [
    (
        "missing name",
        with_path(pod(), "metadata.name", ""),
        "metadata.name: Required value: name or generateName is required",
    ),
    (
        "name not a DNS-1123 subdomain",
        with_path(pod(), "metadata.name", "Bad_Name"),
        'metadata.name: Invalid value: "Bad_Name": ' + DNS1123_SUBDOMAIN_MESSAGE,
    ),
    (
        "nodeName not a DNS-1123 subdomain",
        pod(nodeName='a<>"!'),
        'spec.nodeName: Invalid value: "a<>\\"!": ' + DNS1123_SUBDOMAIN_MESSAGE,
    ),
    (
        "bad namespace",
        with_path(pod(), "metadata.namespace", "a.b"),
        'metadata.namespace: Invalid value: "a.b": must not contain dots',
    ),
    (
        "bad label key",
        with_path(pod(), "metadata.labels", {"-bad": "x"}),
        f'metadata.labels: Invalid value: "-bad": {LABEL_KEY_NAME_MSG}',
    ),
    (
        "bad label value",
        with_path(pod(), "metadata.labels", {"app": "a b"}),
        f'metadata.labels: Invalid value: "a b": {LABEL_VALUE_MSG}',
    ),
    (
        "label key prefix",
        with_path(pod(), "metadata.labels", {"/x": "y"}),
        'metadata.labels: Invalid value: "/x": prefix part must be non-empty',
    ),
    ("no containers", with_path(pod(), "spec.containers", []), "spec.containers: Required value"),
    (
        "unnamed container",
        with_path(pod(), "spec.containers.0.name", ""),
        "spec.containers[0].name: Required value",
    ),
    (
        "container name not a label",
        with_path(pod(), "spec.containers.0.name", "Web"),
        f'spec.containers[0].name: Invalid value: "Web": {LABEL_MSG}',
    ),
    (
        "no image",
        with_path(pod(), "spec.containers.0.image", ""),
        "spec.containers[0].image: Required value",
    ),
    (
        "duplicate container",
        pod(containers=[{"name": "c", "image": "a"}, {"name": "c", "image": "b"}]),
        'spec.containers[1].name: Duplicate value: "c"',
    ),
    (
        "init container name clashes",
        pod(initContainers=[{"name": "c", "image": "a"}]),
        'spec.initContainers[0].name: Duplicate value: "c"',
    ),
    (
        "bad quantity",
        with_path(pod(), "spec.containers.0.resources", {"requests": {"cpu": "1.5.3"}}),
        f'spec.containers[0].resources.requests[cpu]: Invalid value: "1.5.3": {QUANTITY_MSG}',
    ),
    (
        "negative request",
        with_path(pod(), "spec.containers.0.resources", {"requests": {"memory": "-1Gi"}}),
        'spec.containers[0].resources.requests[memory]: Invalid value: "-1Gi": '
        "must be greater than or equal to 0",
    ),
    (
        "request above limit",
        with_path(
            pod(),
            "spec.containers.0.resources",
            {"requests": {"cpu": "1500m"}, "limits": {"cpu": "1"}},
        ),
        'spec.containers[0].resources.requests: Invalid value: "1500m": '
        "must be less than or equal to cpu limit of 1",
    ),
    (
        "request above limit, canonical form",
        with_path(
            pod(),
            "spec.containers.0.resources",
            {"requests": {"memory": "2048Mi"}, "limits": {"memory": "1.5Gi"}},
        ),
        'spec.containers[0].resources.requests: Invalid value: "2Gi": '
        "must be less than or equal to memory limit of 1536Mi",
    ),
    (
        "extended resource request without limit",
        with_path(pod(), "spec.containers.0.resources", {"requests": {"example.com/gpu": "1"}}),
        "spec.containers[0].resources.limits: Required value: Limit must be set for non "
        "overcommitable resources",
    ),
    (
        "unknown unprefixed resource",
        with_path(pod(), "spec.containers.0.resources", {"requests": {"gpu": "1"}}),
        'spec.containers[0].resources.requests[gpu]: Invalid value: "gpu": must be a standard '
        "resource for containers",
    ),
    (
        "port out of range",
        with_path(pod(), "spec.containers.0.ports", [{"containerPort": 70000}]),
        "spec.containers[0].ports[0].containerPort: Invalid value: 70000: must be between 1 and "
        "65535, inclusive",
    ),
    (
        "port missing",
        with_path(pod(), "spec.containers.0.ports", [{"name": "http"}]),
        "spec.containers[0].ports[0].containerPort: Required value",
    ),
    (
        "bad protocol",
        with_path(pod(), "spec.containers.0.ports", [{"containerPort": 80, "protocol": "HTTP"}]),
        'spec.containers[0].ports[0].protocol: Unsupported value: "HTTP": supported values: '
        '"SCTP", "TCP", "UDP"',
    ),
    (
        "host port conflict",
        pod(
            containers=[
                {"name": "a", "image": "x", "ports": [{"containerPort": 80, "hostPort": 8080}]},
                {"name": "b", "image": "x", "ports": [{"containerPort": 81, "hostPort": 8080}]},
            ]
        ),
        'spec.containers[1].ports[0].hostPort: Duplicate value: "TCP//8080"',
    ),
    (
        "host port conflict within an init container",
        pod(
            initContainers=[
                {"name": "i0", "image": "x"},
                {
                    "name": "i1",
                    "image": "x",
                    "ports": [
                        {"containerPort": 80, "hostPort": 9000},
                        {"containerPort": 81, "hostPort": 9000},
                    ],
                },
            ]
        ),
        'spec.initContainers[0].ports[1].hostPort: Duplicate value: "TCP//9000"',
    ),
    (
        "restartPolicy on a regular container",
        with_path(pod(), "spec.containers.0.restartPolicy", "Always"),
        "spec.containers[0].restartPolicy: Forbidden: may not be set for non-init containers",
    ),
    (
        "init container restartPolicy",
        pod(initContainers=[{"name": "i", "image": "x", "restartPolicy": "OnFailure"}]),
        'spec.initContainers[0].restartPolicy: Unsupported value: "OnFailure": supported values: '
        '"Always"',
    ),
    (
        "taint effect in toleration",
        pod(tolerations=[{"key": "k", "operator": "Exists", "effect": "Foo"}]),
        'spec.tolerations[0].effect: Unsupported value: "Foo": supported values: '
        '"NoSchedule", "PreferNoSchedule", "NoExecute"',
    ),
    (
        "toleration operator",
        pod(tolerations=[{"key": "k", "operator": "In"}]),
        'spec.tolerations[0].operator: Unsupported value: "In": supported values: "Equal", '
        '"Exists"',
    ),
    (
        "toleration Exists with a value",
        pod(tolerations=[{"key": "k", "operator": "Exists", "value": "v"}]),
        'spec.tolerations[0].operator: Invalid value: "v": value must be empty when `operator` '
        "is 'Exists'",
    ),
    (
        "toleration without key",
        pod(tolerations=[{"operator": "Equal", "value": "v"}]),
        'spec.tolerations[0].operator: Invalid value: "Equal": operator must be Exists when '
        "`key` is "
        'empty, which means "match all values and all keys"',
    ),
    (
        "tolerationSeconds without NoExecute",
        pod(
            tolerations=[
                {"key": "k", "operator": "Exists", "effect": "NoSchedule", "tolerationSeconds": 5}
            ]
        ),
        "spec.tolerations[0].effect: Invalid value: \"NoSchedule\": effect must be 'NoExecute' "
        "when "
        "`tolerationSeconds` is set",
    ),
    (
        "node affinity In without values",
        pod(
            affinity={
                "nodeAffinity": {
                    "requiredDuringSchedulingIgnoredDuringExecution": {
                        "nodeSelectorTerms": [
                            {"matchExpressions": [{"key": "zone", "operator": "In"}]}
                        ]
                    }
                }
            }
        ),
        "spec.affinity.nodeAffinity.requiredDuringSchedulingIgnoredDuringExecution.nodeSelectorTerms[0]"
        ".matchExpressions[0].values: Required value: must be specified when `operator` is 'In' "
        "or 'NotIn'",
    ),
    (
        "node affinity Exists with values",
        pod(
            affinity={
                "nodeAffinity": {
                    "requiredDuringSchedulingIgnoredDuringExecution": {
                        "nodeSelectorTerms": [
                            {
                                "matchExpressions": [
                                    {"key": "zone", "operator": "Exists", "values": ["a"]}
                                ]
                            }
                        ]
                    }
                }
            }
        ),
        "spec.affinity.nodeAffinity.requiredDuringSchedulingIgnoredDuringExecution.nodeSelectorTerms[0]"
        ".matchExpressions[0].values: Forbidden: may not be specified when `operator` is "
        "'Exists' or "
        "'DoesNotExist'",
    ),
    (
        "node affinity Gt with two values",
        pod(
            affinity={
                "nodeAffinity": {
                    "requiredDuringSchedulingIgnoredDuringExecution": {
                        "nodeSelectorTerms": [
                            {
                                "matchExpressions": [
                                    {"key": "cores", "operator": "Gt", "values": ["1", "2"]}
                                ]
                            }
                        ]
                    }
                }
            }
        ),
        "spec.affinity.nodeAffinity.requiredDuringSchedulingIgnoredDuringExecution.nodeSelectorTerms[0]"
        ".matchExpressions[0].values: Required value: must be specified single value when "
        "`operator` is "
        "'Lt' or 'Gt'",
    ),
    (
        "node affinity bad operator",
        pod(
            affinity={
                "nodeAffinity": {
                    "requiredDuringSchedulingIgnoredDuringExecution": {
                        "nodeSelectorTerms": [
                            {"matchExpressions": [{"key": "zone", "operator": "Has"}]}
                        ]
                    }
                }
            }
        ),
        "spec.affinity.nodeAffinity.requiredDuringSchedulingIgnoredDuringExecution.nodeSelectorTerms[0]"
        '.matchExpressions[0].operator: Invalid value: "Has": not a valid selector operator',
    ),
    (
        "node affinity without terms",
        pod(
            affinity={
                "nodeAffinity": {
                    "requiredDuringSchedulingIgnoredDuringExecution": {"nodeSelectorTerms": []}
                }
            }
        ),
        "spec.affinity.nodeAffinity.requiredDuringSchedulingIgnoredDuringExecution."
        "nodeSelectorTerms: Required value: must have at least one node selector term",
    ),
    (
        "preferred weight",
        pod(
            affinity={
                "nodeAffinity": {
                    "preferredDuringSchedulingIgnoredDuringExecution": [
                        {
                            "weight": 0,
                            "preference": {
                                "matchExpressions": [{"key": "a", "operator": "Exists"}]
                            },
                        }
                    ]
                }
            }
        ),
        "spec.affinity.nodeAffinity.preferredDuringSchedulingIgnoredDuringExecution[0].weight: "
        "Invalid value: 0: must be in the range 1-100",
    ),
    (
        "label selector operator",
        pod(
            affinity={
                "podAffinity": {
                    "requiredDuringSchedulingIgnoredDuringExecution": [
                        {
                            "topologyKey": "zone",
                            "labelSelector": {
                                "matchExpressions": [
                                    {"key": "app", "operator": "Gt", "values": ["1"]}
                                ]
                            },
                        }
                    ]
                }
            }
        ),
        "spec.affinity.podAffinity.requiredDuringSchedulingIgnoredDuringExecution[0].labelSelector"
        '.matchExpressions[0].operator: Invalid value: "Gt": not a valid selector operator',
    ),
    (
        "spread maxSkew",
        pod(
            topologySpreadConstraints=[
                {"maxSkew": 0, "topologyKey": "zone", "whenUnsatisfiable": "DoNotSchedule"}
            ]
        ),
        "spec.topologySpreadConstraints[0].maxSkew: Invalid value: 0: must be greater than zero",
    ),
    (
        "spread whenUnsatisfiable",
        pod(
            topologySpreadConstraints=[
                {"maxSkew": 1, "topologyKey": "zone", "whenUnsatisfiable": "Never"}
            ]
        ),
        'spec.topologySpreadConstraints[0].whenUnsatisfiable: Unsupported value: "Never": '
        'supported values: "DoNotSchedule", "ScheduleAnyway"',
    ),
    (
        "spread topologyKey",
        pod(topologySpreadConstraints=[{"maxSkew": 1, "whenUnsatisfiable": "DoNotSchedule"}]),
        "spec.topologySpreadConstraints[0].topologyKey: Required value: can not be empty",
    ),
    (
        "spread minDomains with ScheduleAnyway",
        pod(
            topologySpreadConstraints=[
                {
                    "maxSkew": 1,
                    "topologyKey": "zone",
                    "whenUnsatisfiable": "ScheduleAnyway",
                    "minDomains": 2,
                }
            ]
        ),
        "spec.topologySpreadConstraints[0].minDomains: Invalid value: 2: can only use minDomains "
        "if "
        "whenUnsatisfiable=DoNotSchedule, not ScheduleAnyway",
    ),
    (
        "spread minDomains zero",
        pod(
            topologySpreadConstraints=[
                {
                    "maxSkew": 1,
                    "topologyKey": "zone",
                    "whenUnsatisfiable": "DoNotSchedule",
                    "minDomains": 0,
                }
            ]
        ),
        "spec.topologySpreadConstraints[0].minDomains: Invalid value: 0: must be greater than zero",
    ),
    (
        "spread nodeAffinityPolicy",
        pod(
            topologySpreadConstraints=[
                {
                    "maxSkew": 1,
                    "topologyKey": "zone",
                    "whenUnsatisfiable": "DoNotSchedule",
                    "nodeAffinityPolicy": "Always",
                }
            ]
        ),
        'spec.topologySpreadConstraints[0].nodeAffinityPolicy: Unsupported value: "Always": '
        'supported values: "Honor", "Ignore"',
    ),
    (
        "spread duplicate",
        pod(
            topologySpreadConstraints=[
                {"maxSkew": 1, "topologyKey": "zone", "whenUnsatisfiable": "DoNotSchedule"},
                {"maxSkew": 2, "topologyKey": "zone", "whenUnsatisfiable": "DoNotSchedule"},
            ]
        ),
        "spec.topologySpreadConstraints[0].{topologyKey, whenUnsatisfiable}: Duplicate value: "
        '"{zone, DoNotSchedule}"',
    ),
    (
        "scheduling gate name",
        pod(schedulingGates=[{"name": "a/b/c"}]),
        'spec.schedulingGates[0]: Invalid value: "a/b/c": a valid label key must consist of '
        "alphanumeric "
        "characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. "
        "'MyName',  or 'my.name',  or '123-abc', regex used for validation is "
        "'([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]') with an optional DNS subdomain prefix and '/' "
        "(e.g. 'example.com/MyName')",
    ),
    (
        "scheduling gates with nodeName",
        pod(schedulingGates=[{"name": "wait"}], nodeName="n1"),
        "spec.nodeName: Forbidden: cannot be set until all schedulingGates have been cleared",
    ),
    (
        "preemption policy",
        pod(preemptionPolicy="Sometimes"),
        'spec.preemptionPolicy: Unsupported value: "Sometimes": supported values: '
        '"PreemptLowerPriority", "Never"',
    ),
    (
        "volume without source",
        pod(volumes=[{"name": "data"}]),
        "spec.volumes[0]: Required value: must specify a volume type",
    ),
    (
        "volume claim name",
        pod(volumes=[{"name": "data", "persistentVolumeClaim": {"readOnly": True}}]),
        "spec.volumes[0].persistentVolumeClaim.claimName: Required value",
    ),
    (
        "overhead negative",
        pod(overhead={"cpu": "-1"}),
        'spec.overhead.limits[cpu]: Invalid value: "-1": must be greater than or equal to 0',
    ),
    (
        "hostNetwork port mismatch",
        pod(
            hostNetwork=True,
            containers=[
                {"name": "c", "image": "x", "ports": [{"containerPort": 80, "hostPort": 81}]}
            ],
        ),
        "spec.containers[0].ports[0].hostPort: Invalid value: 81: must match `containerPort` "
        "when `hostNetwork` is true",
    ),
    (
        "wrong type",
        with_path(pod(), "spec.containers.0.resources", "lots"),
        'spec.containers[0].resources: Invalid value: "string": spec.containers[0].resources in '
        'body must be of type object: "string"',
    ),
    (
        "label value of wrong type",
        with_path(pod(), "metadata.labels", {"tier": True}),
        'metadata.labels[tier]: Invalid value: "boolean": metadata.labels[tier] in body must be '
        'of type string: "boolean"',
    ),
    (
        "ephemeral containers on create",
        pod(ephemeralContainers=[{"name": "debug", "image": "busybox"}]),
        "spec.ephemeralContainers: Forbidden: cannot be set on create",
    ),
]


@pytest.mark.parametrize(
    ("name", "doc", "expected"), POD_ERROR_CASES, ids=[c[0] for c in POD_ERROR_CASES]
)
def test_it_rejects_invalid_pods_in_the_api_servers_words(
    name: str, doc: dict[str, Any], expected: str
) -> None:
    assert errors_of(doc) == [expected]


def test_it_collects_every_error_of_a_pod() -> None:
    doc = pod(
        containers=[
            {"name": "", "image": "", "resources": {"requests": {"cpu": "x", "memory": "-1"}}}
        ]
    )
    doc["metadata"]["name"] = ""
    assert errors_of(doc) == [
        "metadata.name: Required value: name or generateName is required",
        f'spec.containers[0].resources.requests[cpu]: Invalid value: "x": {QUANTITY_MSG}',
        "spec.containers[0].name: Required value",
        "spec.containers[0].image: Required value",
        'spec.containers[0].resources.requests[memory]: Invalid value: "-1": '
        "must be greater than or equal to 0",
    ]


def test_an_extended_resource_must_be_an_integer_in_limits_and_defaulted_requests() -> None:
    doc = with_path(pod(), "spec.containers.0.resources", {"limits": {"example.com/gpu": "500m"}})
    assert errors_of(doc) == [
        "spec.containers[0].resources.limits[example.com/gpu]: Invalid value: 500m: "
        "must be an integer",
        "spec.containers[0].resources.requests[example.com/gpu]: Invalid value: 500m: "
        "must be an integer",
    ]


def test_a_missing_topology_key_is_required_and_not_a_label_name() -> None:
    term = {"labelSelector": {"matchLabels": {"a": "b"}}}
    doc = pod(
        affinity={"podAntiAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": [term]}}
    )
    path = "spec.affinity.podAntiAffinity.requiredDuringSchedulingIgnoredDuringExecution[0]"
    assert errors_of(doc) == [
        f"{path}.topologyKey: Required value: can not be empty",
        f'{path}.topologyKey: Invalid value: "": name part must be non-empty',
        f'{path}.topologyKey: Invalid value: "": {LABEL_KEY_NAME_MSG}',
    ]


def test_invalid_object_error_reads_like_the_api_server() -> None:
    with pytest.raises(InvalidObjectError) as info:
        decode_object(with_path(pod(), "spec.containers", []))
    assert str(info.value) == 'Pod "web-1" is invalid: spec.containers: Required value'


def test_path_prefix_is_put_before_each_field() -> None:
    with pytest.raises(InvalidObjectError) as info:
        decode_object(with_path(pod(), "spec.containers", []), path_prefix="items[2].")
    assert [str(e) for e in info.value.errors] == ["items[2].spec.containers: Required value"]


# --- Pods: pod-level resources (validatePodResources, validatePodResourceConsistency). --------

POD_LEVEL_ERROR_CASES = [
    (
        "unsupported pod-level resource",
        with_path(pod(), "spec.resources", {"requests": {"cpu": "1", "ephemeral-storage": "1Gi"}}),
        'spec.resources.requests[ephemeral-storage]: Unsupported value: "ephemeral-storage": '
        'supported values: "cpu", "hugepages-", "memory"',
    ),
    (
        "non-standard unqualified name",
        with_path(pod(), "spec.resources", {"limits": {"gpu": "1"}}),
        'spec.resources.limits[gpu]: Invalid value: "gpu": must be a standard resource type or '
        "fully qualified",
    ),
    (
        "pod-level request above its limit",
        with_path(pod(), "spec.resources", {"requests": {"cpu": "2"}, "limits": {"cpu": "1"}}),
        'spec.resources.requests: Invalid value: "2": must be less than or equal to cpu limit of 1',
    ),
    (
        "pod-level request below the containers' aggregate",
        with_path(
            with_path(pod(), "spec.containers.0.resources", {"requests": {"cpu": "1500m"}}),
            "spec.resources",
            {"requests": {"cpu": "1"}},
        ),
        'spec.resources.requests[cpu]: Invalid value: "1": must be greater than or equal to '
        "aggregate container requests of 1500m",
    ),
    (
        "container limit above the pod's",
        with_path(
            with_path(pod(), "spec.containers.0.resources", {"limits": {"memory": "2Gi"}}),
            "spec.resources",
            {"requests": {"memory": "2Gi"}, "limits": {"memory": "1Gi"}},
        ),
        'spec.resources.requests: Invalid value: "2Gi": must be less than or equal to memory '
        "limit of 1Gi",
    ),
    (
        "windows pod",
        with_path(with_path(pod(), "spec.os", {"name": "windows"}), "spec.resources", {}),
        "spec.resources: Forbidden: may not be set for a windows pod",
    ),
]


@pytest.mark.parametrize(
    ("name", "doc", "expected"),
    POD_LEVEL_ERROR_CASES,
    ids=[c[0] for c in POD_LEVEL_ERROR_CASES],
)
def test_it_validates_pod_level_resources_as_the_api_server(
    name: str, doc: dict[str, Any], expected: str
) -> None:
    assert expected in errors_of(doc)


def test_a_container_limit_above_the_pod_limit_is_refused_under_spec_resources() -> None:
    doc = with_path(
        with_path(pod(), "spec.containers.0.resources", {"limits": {"cpu": "2"}}),
        "spec.resources",
        {"requests": {"cpu": "2"}, "limits": {"cpu": "3"}},
    )
    assert isinstance(decode_object(doc), Pod)
    doc = with_path(doc, "spec.resources", {"requests": {"cpu": "2"}, "limits": {"cpu": "1"}})
    assert (
        'spec.resources.containers[0][cpu].limits: Invalid value: "2": must be less than or '
        "equal to pod limits of 1"
    ) in errors_of(doc)


def test_pod_level_requests_default_from_the_containers_then_from_the_limits() -> None:
    """defaultPodRequests: with pod-level limits, a missing pod-level request is the containers'
    aggregate (when they request it), else the pod-level limit."""
    doc = with_path(
        with_path(pod(), "spec.containers.0.resources", {"requests": {"cpu": "500m"}}),
        "spec.resources",
        {"limits": {"cpu": "2", "memory": "1Gi"}},
    )
    p = decode_object(doc)
    assert isinstance(p, Pod) and p.resources is not None
    assert p.resources.requests == {"cpu": Quantity.parse("500m"), "memory": Quantity.parse("1Gi")}


def test_pod_level_requests_without_limits_are_kept_as_given() -> None:
    p = decode_object(with_path(pod(), "spec.resources", {"requests": {"cpu": "3"}}))
    assert isinstance(p, Pod) and p.resources is not None
    assert p.resources.requests == {"cpu": Quantity.parse("3")}
    assert p.resources.limits == {}


def test_container_statuses_keep_resized_resources() -> None:
    doc = pod()
    doc["status"] = {
        "phase": "Running",
        "containerStatuses": [
            {
                "name": "c",
                "allocatedResources": {"cpu": "2"},
                "resources": {"requests": {"cpu": "3"}, "limits": {"cpu": "4"}},
            },
            {"name": "sidecar"},
        ],
        "conditions": [{"type": "PodResizePending", "status": "True", "reason": "Infeasible"}],
    }
    p = decode_object(doc)
    assert isinstance(p, Pod)
    first, second = p.container_statuses
    assert first.name == "c" and first.allocated_resources == {"cpu": Quantity.parse("2")}
    assert first.resources is not None
    assert first.resources.requests == {"cpu": Quantity.parse("3")}
    assert second.resources is None and second.allocated_resources == {}


# --- Pods: defaulting. ------------------------------------------------------------------------


def test_pod_defaults() -> None:
    p = decode_object(
        pod(
            containers=[{"name": "c", "image": "x", "ports": [{"containerPort": 80}]}],
            tolerations=[{"key": "k", "value": "v"}],
        )
    )
    assert isinstance(p, Pod)
    assert p.namespace == "default"
    assert p.scheduler_name == "default-scheduler"
    assert p.containers[0].ports[0].protocol == "TCP"
    assert p.tolerations[0].operator == "Equal"
    assert p.phase == "Pending"
    assert p.priority is None
    again = decode_object(pod())
    assert isinstance(again, Pod) and p.uid and p.uid == again.uid  # deterministic


def test_requests_default_to_limits() -> None:
    p = decode_object(
        with_path(
            pod(),
            "spec.containers.0.resources",
            {"requests": {"cpu": "100m"}, "limits": {"cpu": "1", "memory": "1Gi"}},
        )
    )
    assert isinstance(p, Pod)
    assert p.containers[0].requests == {
        "cpu": Quantity.parse("100m"),
        "memory": Quantity.parse("1Gi"),
    }


def test_quantities_are_rounded_up_to_milli_precision() -> None:
    resources = {"requests": {"cpu": "1.5m", "memory": "100u"}, "limits": {"cpu": "0.0025"}}
    p = decode_object(with_path(pod(), "spec.containers.0.resources", resources))
    assert isinstance(p, Pod)
    requests, limits = p.containers[0].requests, p.containers[0].limits
    assert requests["cpu"] == Quantity.parse("2m") and requests["memory"] == Quantity.parse("1m")
    assert limits["cpu"] == Quantity.parse("3m")
    assert str(requests["cpu"]) == "2m"


def test_host_network_host_ports_default_to_container_ports() -> None:
    p = decode_object(
        pod(
            hostNetwork=True,
            containers=[{"name": "c", "image": "x", "ports": [{"containerPort": 80}]}],
        )
    )
    assert isinstance(p, Pod)
    assert p.host_network and p.containers[0].ports[0].host_port == 80


def test_pod_keeps_status_gates_volumes_owners_and_sidecars() -> None:
    doc = pod(
        schedulingGates=[{"name": "example.com/wait"}],
        volumes=[
            {"name": "data", "persistentVolumeClaim": {"claimName": "pvc-1", "readOnly": True}},
            {"name": "tmp", "emptyDir": {}},
        ],
        initContainers=[{"name": "proxy", "image": "envoy", "restartPolicy": "Always"}],
        priority=5,
    )
    doc["metadata"]["ownerReferences"] = [
        {
            "apiVersion": "apps/v1",
            "kind": "ReplicaSet",
            "name": "web",
            "uid": "u1",
            "controller": True,
        }
    ]
    doc["status"] = {
        "phase": "Running",
        "nominatedNodeName": "n2",
        "conditions": [{"type": "PodScheduled", "status": "False", "reason": "Unschedulable"}],
    }
    p = decode_object(doc)
    assert isinstance(p, Pod)
    assert p.scheduling_gates == ("example.com/wait",)
    assert (p.volumes[0].pvc_claim_name, p.volumes[0].pvc_read_only, p.volumes[0].source_kind) == (
        "pvc-1",
        True,
        "persistentVolumeClaim",
    )
    assert p.volumes[1].source_kind == "emptyDir" and p.volumes[1].pvc_claim_name is None
    assert p.init_containers[0].restart_policy == "Always"
    assert p.owner_references[0].kind == "ReplicaSet" and p.owner_references[0].controller
    assert (p.phase, p.nominated_node_name) == ("Running", "n2")
    assert p.conditions[0].reason == "Unschedulable"
    assert p.priority == 5
    assert p.manifest == doc


def affinity_term(**extra: Any) -> dict[str, Any]:
    return {"topologyKey": "zone", "labelSelector": {"matchLabels": {"app": "web"}}, **extra}


def test_match_label_keys_are_merged_into_the_selector_as_on_create() -> None:
    doc = pod(
        affinity={
            "podAffinity": {
                "requiredDuringSchedulingIgnoredDuringExecution": [
                    affinity_term(
                        matchLabelKeys=["version", "missing"], mismatchLabelKeys=["tenant"]
                    )
                ]
            },
            "podAntiAffinity": {
                "preferredDuringSchedulingIgnoredDuringExecution": [
                    {"weight": 10, "podAffinityTerm": affinity_term(matchLabelKeys=["version"])}
                ]
            },
        }
    )
    doc["metadata"]["labels"] = {"app": "web", "version": "v2", "tenant": "t1"}
    p = decode_object(doc)
    assert isinstance(p, Pod) and p.affinity is not None
    assert p.affinity.pod_affinity is not None and p.affinity.pod_anti_affinity is not None
    required = p.affinity.pod_affinity.required[0].label_selector
    assert required is not None
    assert required.match_expressions == (
        LabelSelectorRequirement("version", "In", ("v2",)),
        LabelSelectorRequirement("tenant", "NotIn", ("t1",)),
    )
    preferred = p.affinity.pod_anti_affinity.preferred[0].pod_affinity_term.label_selector
    assert preferred is not None
    assert preferred.match_expressions == (LabelSelectorRequirement("version", "In", ("v2",)),)


def test_spread_match_label_keys_are_merged_into_the_selector_as_on_create() -> None:
    spread = {
        "maxSkew": 1,
        "topologyKey": "zone",
        "whenUnsatisfiable": "DoNotSchedule",
        "labelSelector": {"matchLabels": {"app": "web"}},
        "matchLabelKeys": ["pod-template-hash", "missing"],
    }
    doc = pod(topologySpreadConstraints=[spread])
    doc["metadata"]["labels"] = {"app": "web", "pod-template-hash": "abc"}
    p = decode_object(doc)
    assert isinstance(p, Pod)
    selector = p.topology_spread_constraints[0].label_selector
    assert selector is not None
    assert selector.match_expressions == (
        LabelSelectorRequirement("pod-template-hash", "In", ("abc",)),
    )


def test_a_spread_match_label_key_also_in_the_selector_is_refused() -> None:
    spread = {
        "maxSkew": 1,
        "topologyKey": "zone",
        "whenUnsatisfiable": "DoNotSchedule",
        "labelSelector": {"matchLabels": {"app": "web"}},
        "matchLabelKeys": ["app"],
    }
    assert errors_of(pod(topologySpreadConstraints=[spread])) == [
        'spec.topologySpreadConstraints[0].matchLabelKeys[0]: Invalid value: "app": '
        "exists in both matchLabelKeys and labelSelector"
    ]


def test_a_gated_pod_gets_the_scheduling_gated_condition() -> None:
    p = decode_object(pod(schedulingGates=[{"name": "example.com/quota"}]))
    assert isinstance(p, Pod)
    assert [(c.type, c.status, c.reason, c.message) for c in p.conditions] == [
        (
            "PodScheduled",
            "False",
            "SchedulingGated",
            "Scheduling is blocked due to non-empty scheduling gates",
        )
    ]


def test_match_label_keys_without_selector_is_forbidden() -> None:
    doc = pod(
        affinity={
            "podAffinity": {
                "requiredDuringSchedulingIgnoredDuringExecution": [
                    {"topologyKey": "zone", "matchLabelKeys": ["app"]}
                ]
            }
        }
    )
    assert errors_of(doc) == [
        "spec.affinity.podAffinity.requiredDuringSchedulingIgnoredDuringExecution[0]."
        "matchLabelKeys: Forbidden: must not be specified when labelSelector is not set"
    ]


def test_a_key_in_match_and_mismatch_label_keys_is_refused() -> None:
    doc = pod(
        affinity={
            "podAffinity": {
                "requiredDuringSchedulingIgnoredDuringExecution": [
                    affinity_term(matchLabelKeys=["tier"], mismatchLabelKeys=["tier"])
                ]
            }
        }
    )
    assert errors_of(doc) == [
        "spec.affinity.podAffinity.requiredDuringSchedulingIgnoredDuringExecution[0]."
        'matchLabelKeys[0]: Invalid value: "tier": exists in both matchLabelKeys and '
        "mismatchLabelKeys"
    ]


# --- Nodes. -----------------------------------------------------------------------------------


def test_node_decodes_scheduling_fields() -> None:
    doc = node(
        capacity={"cpu": "4", "memory": "8Gi", "pods": "110"},
        allocatable={"cpu": "3800m", "memory": "7Gi", "pods": "110"},
        images=[{"names": ["nginx:1.25", "docker.io/nginx@sha256:abc"], "sizeBytes": 1000}],
        conditions=[{"type": "Ready", "status": "True"}],
    )
    doc["metadata"]["labels"] = {"kubernetes.io/hostname": "n1"}
    doc["spec"] = {
        "unschedulable": True,
        "taints": [{"key": "gpu", "value": "yes", "effect": "NoSchedule"}],
    }
    n = decode_object(doc)
    assert isinstance(n, Node)
    assert n.unschedulable
    assert str(n.taints[0]) == "gpu=yes:NoSchedule"
    assert n.allocatable["cpu"] == Quantity.parse("3.8")
    assert n.images[0].size_bytes == 1000
    assert n.conditions[0].type == "Ready"
    assert n.labels == {"kubernetes.io/hostname": "n1"}


def test_node_allocatable_defaults_to_capacity() -> None:
    n = decode_object(node(capacity={"cpu": "4"}))
    assert isinstance(n, Node)
    assert n.allocatable == {"cpu": Quantity.parse("4")}


NODE_ERROR_CASES = [
    (
        "taint effect",
        {"taints": [{"key": "a", "effect": "Foo"}]},
        'metadata.taints[0].effect: Unsupported value: "Foo": supported values: "NoSchedule", '
        '"PreferNoSchedule", "NoExecute"',
    ),
    (
        "taint without effect",
        {"taints": [{"key": "a"}]},
        "metadata.taints[0].effect: Required value",
    ),
    (
        "taint key",
        {"taints": [{"key": "a b", "effect": "NoSchedule"}]},
        f'metadata.taints[0].key: Invalid value: "a b": {LABEL_KEY_NAME_MSG}',
    ),
    (
        "duplicate taint",
        {
            "taints": [
                {"key": "a", "effect": "NoSchedule"},
                {"key": "a", "value": "x", "effect": "NoSchedule"},
            ]
        },
        'metadata.taints[1]: Duplicate value: core.Taint{Key:"a", Value:"x", Effect:"NoSchedule", '
        "TimeAdded:(*v1.Time)(nil)}: taints must be unique by key and effect pair",
    ),
]


@pytest.mark.parametrize(
    ("name", "spec", "expected"), NODE_ERROR_CASES, ids=[c[0] for c in NODE_ERROR_CASES]
)
def test_it_rejects_invalid_node_taints(name: str, spec: dict[str, Any], expected: str) -> None:
    doc = node()
    doc["spec"] = spec
    assert errors_of(doc) == [expected]


def test_it_rejects_invalid_node_capacity() -> None:
    assert errors_of(node(capacity={"cpu": "-1", "pods": "1.5", "memory": "lots"})) == [
        f'status.capacity.memory: Invalid value: "lots": {QUANTITY_MSG}',
        'status.capacity.cpu: Invalid value: "-1": must be greater than or equal to 0',
        "status.capacity.pods: Invalid value: 1500m: must be an integer",
    ]


# --- Other kinds. -----------------------------------------------------------------------------


def test_namespace_gets_its_name_label_and_a_label_name() -> None:
    ns = decode_object({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "team-a"}})
    assert isinstance(ns, Namespace)
    assert ns.labels == {"kubernetes.io/metadata.name": "team-a"}
    bad = {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "team.a"}}
    assert errors_of(bad) == ['metadata.name: Invalid value: "team.a": must not contain dots']


def priority_class(name: str = "high", value: int = 1000, **extra: Any) -> dict[str, Any]:
    return {
        "apiVersion": "scheduling.k8s.io/v1",
        "kind": "PriorityClass",
        "metadata": {"name": name},
        "value": value,
        **extra,
    }


def test_priority_class_defaults_preemption_policy() -> None:
    pc = decode_object(priority_class(globalDefault=True))
    assert isinstance(pc, PriorityClass)
    assert (pc.value, pc.global_default, pc.preemption_policy) == (
        1000,
        True,
        "PreemptLowerPriority",
    )


@pytest.mark.parametrize(
    ("doc", "expected"),
    [
        (
            priority_class(value=2_000_000_000),
            "value: Forbidden: maximum allowed value of a user defined priority is 1000000000",
        ),
        (
            priority_class(name="system-high"),
            "metadata.name: Forbidden: priority class names with 'system-' prefix are reserved "
            "for system "
            "use only. error: system-high is not a known system priority class",
        ),
        (
            priority_class(name="system-node-critical", value=5),
            "metadata.name: Forbidden: priority class names with 'system-' prefix are reserved "
            "for system "
            "use only. error: value of system-node-critical PriorityClass must be 2000001000",
        ),
        (
            priority_class(preemptionPolicy="Always"),
            'preemptionPolicy: Unsupported value: "Always": supported values: '
            '"PreemptLowerPriority", "Never"',
        ),
        (
            priority_class(value=2**40),
            "value: Invalid value: 1099511627776: must be between -2147483648 and 2147483647, "
            "inclusive",
        ),
    ],
)
def test_it_rejects_invalid_priority_classes(doc: dict[str, Any], expected: str) -> None:
    assert errors_of(doc) == [expected]


def test_priority_class_error_names_its_group() -> None:
    with pytest.raises(InvalidObjectError) as info:
        decode_object(priority_class(value=2_000_000_000))
    assert str(info.value).startswith('PriorityClass.scheduling.k8s.io "high" is invalid: ')


def pdb(**spec: Any) -> dict[str, Any]:
    return {
        "apiVersion": "policy/v1",
        "kind": "PodDisruptionBudget",
        "metadata": {"name": "web"},
        "spec": spec,
    }


def test_pdb_decodes() -> None:
    budget = decode_object(pdb(minAvailable="50%", selector={"matchLabels": {"app": "web"}}))
    assert isinstance(budget, PodDisruptionBudget)
    assert (budget.namespace, budget.min_available, budget.max_unavailable) == (
        "default",
        "50%",
        None,
    )
    assert budget.selector is not None and budget.selector.match_labels == {"app": "web"}


@pytest.mark.parametrize(
    ("doc", "expected"),
    [
        (
            pdb(minAvailable=1, maxUnavailable=1),
            "spec: Invalid value: policy.PodDisruptionBudgetSpec{MinAvailable:1, "
            "MaxUnavailable:1}: "
            "minAvailable and maxUnavailable cannot be both set",
        ),
        (
            pdb(minAvailable=-1),
            "spec.minAvailable: Invalid value: -1: must be greater than or equal to 0",
        ),
        (
            pdb(maxUnavailable="150%"),
            'spec.maxUnavailable: Invalid value: "150%": must not be greater than 100%',
        ),
        (
            pdb(minAvailable="half"),
            "spec.minAvailable: Invalid value: half: a valid percent string must be a numeric "
            "string followed "
            "by an ending '%' (e.g. '1%',  or '93%', regex used for validation is '[0-9]+%')",
        ),
    ],
)
def test_it_rejects_invalid_pdbs(doc: dict[str, Any], expected: str) -> None:
    assert errors_of(doc) == [expected]


def pv(**spec: Any) -> dict[str, Any]:
    return {
        "apiVersion": "v1",
        "kind": "PersistentVolume",
        "metadata": {"name": "pv-1"},
        "spec": spec,
    }


def test_pv_decodes_with_pending_phase() -> None:
    volume = decode_object(
        pv(
            capacity={"storage": "10Gi"},
            accessModes=["ReadWriteOnce"],
            storageClassName="fast",
            csi={"driver": "ebs.csi.aws.com", "volumeHandle": "vol-1"},
            claimRef={"namespace": "default", "name": "data"},
            nodeAffinity={
                "required": {
                    "nodeSelectorTerms": [
                        {"matchExpressions": [{"key": "zone", "operator": "In", "values": ["a"]}]}
                    ]
                }
            },
        )
    )
    assert isinstance(volume, PersistentVolume)
    assert volume.phase == "Pending"
    assert volume.csi_driver == "ebs.csi.aws.com"
    assert volume.claim_ref == "default/data"
    assert volume.node_affinity is not None and len(volume.node_affinity.node_selector_terms) == 1


def test_pv_without_source_modes_or_capacity_is_refused() -> None:
    assert errors_of(pv()) == [
        "spec.accessModes: Required value",
        "spec.capacity: Required value",
        'spec.capacity: Unsupported value: core.ResourceList{}: supported values: "storage"',
        "spec: Required value: must specify a volume type",
    ]


def test_pvc_decodes_and_requires_storage() -> None:
    claim = {
        "apiVersion": "v1",
        "kind": "PersistentVolumeClaim",
        "metadata": {"name": "data", "namespace": "apps"},
        "spec": {"accessModes": ["ReadWriteOnce"], "resources": {"requests": {"storage": "1Gi"}}},
    }
    decoded = decode_object(claim)
    assert isinstance(decoded, PersistentVolumeClaim)
    assert (decoded.key, decoded.phase, decoded.storage_class_name) == (
        "apps/data",
        "Pending",
        None,
    )
    claim["spec"] = {"accessModes": ["ReadWriteSometimes"]}
    assert errors_of(claim) == [
        'spec.accessModes: Unsupported value: "ReadWriteSometimes": supported values: '
        '"ReadOnlyMany", '
        '"ReadWriteMany", "ReadWriteOnce", "ReadWriteOncePod"',
        "spec.resources[storage]: Required value",
    ]


def test_storage_class_defaults_binding_mode_and_reads_topologies() -> None:
    sc = decode_object(
        {
            "apiVersion": "storage.k8s.io/v1",
            "kind": "StorageClass",
            "metadata": {"name": "fast"},
            "provisioner": "ebs.csi.aws.com",
            "allowedTopologies": [
                {"matchLabelExpressions": [{"key": "zone", "values": ["a", "b"]}]}
            ],
        }
    )
    assert isinstance(sc, StorageClass)
    assert sc.volume_binding_mode == "Immediate"
    assert sc.allowed_topologies[0].match_expressions[0].values == ("a", "b")
    bad = {
        "apiVersion": "storage.k8s.io/v1",
        "kind": "StorageClass",
        "metadata": {"name": "slow"},
        "provisioner": "x",
        "volumeBindingMode": "Later",
    }
    assert errors_of(bad) == [
        'volumeBindingMode: Unsupported value: "Later": supported values: "Immediate", '
        '"WaitForFirstConsumer"'
    ]


def test_csi_node_decodes_drivers() -> None:
    csi = decode_object(
        {
            "apiVersion": "storage.k8s.io/v1",
            "kind": "CSINode",
            "metadata": {"name": "n1"},
            "spec": {
                "drivers": [
                    {"name": "ebs.csi.aws.com", "nodeID": "i-1", "allocatable": {"count": 25}}
                ]
            },
        }
    )
    assert isinstance(csi, CSINode)
    assert csi.drivers[0].allocatable_count == 25


# --- Kinds and versions. ----------------------------------------------------------------------


@pytest.mark.parametrize(
    ("doc", "message"),
    [
        ({"apiVersion": "v1", "kind": "Foo"}, 'no matches for kind "Foo" in version "v1"'),
        (
            {"apiVersion": "apps/v1", "kind": "Pod"},
            'no matches for kind "Pod" in version "apps/v1"',
        ),
        (
            {"apiVersion": "policy/v1beta1", "kind": "PodDisruptionBudget"},
            'no matches for kind "PodDisruptionBudget" in version "policy/v1beta1"',
        ),
        ({"apiVersion": "v1"}, "Object 'Kind' is missing"),
        ({"kind": "Pod"}, "Object 'apiVersion' is missing"),
    ],
)
def test_unknown_kinds_and_versions_are_refused(doc: dict[str, Any], message: str) -> None:
    with pytest.raises(DocumentError) as info:
        decode_object(doc)
    assert str(info.value) == message


@pytest.mark.parametrize(
    ("text", "canonical"),
    [
        ("1", "1"),
        ("1000m", "1"),
        ("1.5", "1500m"),
        ("2000", "2k"),
        ("1500", "1500"),
        ("0.1", "100m"),
        ("1024Mi", "1Gi"),
        ("1.5Gi", "1536Mi"),
        ("512Ki", "512Ki"),
        ("0.5Ki", "512"),
        ("1e3", "1e3"),
        ("1.5e3", "1500"),
        ("-1", "-1"),
        ("-100m", "-100m"),
        ("0", "0"),
        ("1.5n", "2n"),
    ],
)
def test_canonical_quantity_is_upstreams_string_form(text: str, canonical: str) -> None:
    assert canonical_quantity(Quantity.parse(text)) == canonical


def test_a_kubectl_style_manifest_decodes() -> None:
    doc = yaml.safe_load(
        """
apiVersion: v1
kind: Pod
metadata:
  name: web-7d4b9c-x2x9z
  namespace: shop
  uid: 0b8a6c4e-1111-2222-3333-444455556666
  labels: {app: web, pod-template-hash: 7d4b9c}
  creationTimestamp: "2024-05-01T10:00:00Z"
spec:
  containers:
  - name: web
    image: nginx:1.25
    imagePullPolicy: IfNotPresent
    terminationMessagePolicy: File
    resources:
      requests: {cpu: 250m, memory: 64Mi}
  dnsPolicy: ClusterFirst
  restartPolicy: Always
  schedulerName: default-scheduler
  priority: 0
  preemptionPolicy: PreemptLowerPriority
  enableServiceLinks: true
  terminationGracePeriodSeconds: 30
status:
  phase: Pending
"""
    )
    p = decode_object(doc)
    assert isinstance(p, Pod)
    assert (p.key, p.uid, p.creation_timestamp) == (
        "shop/web-7d4b9c-x2x9z",
        "0b8a6c4e-1111-2222-3333-444455556666",
        "2024-05-01T10:00:00Z",
    )


# --- Wrong types anywhere are field errors, never crashes. -------------------------------------

GARBAGE: list[Any] = [
    None,
    "x",
    1,
    -1,
    1.5,
    True,
    [],
    {},
    [1],
    {"a": 1},
    ["x"],
    [None],
    [{}],
    2**40,
]


def _paths(obj: Any, prefix: tuple[Any, ...] = ()) -> list[tuple[Any, ...]]:
    found = [prefix] if prefix else []
    items = (
        obj.items() if isinstance(obj, dict) else enumerate(obj) if isinstance(obj, list) else []
    )
    for k, v in items:
        found += _paths(v, (*prefix, k))
    return found


RICH_POD = pod(
    volumes=[{"name": "d", "persistentVolumeClaim": {"claimName": "c"}}],
    tolerations=[{"key": "k", "operator": "Exists"}],
    affinity={
        "nodeAffinity": {
            "requiredDuringSchedulingIgnoredDuringExecution": {
                "nodeSelectorTerms": [
                    {"matchExpressions": [{"key": "a", "operator": "In", "values": ["b"]}]}
                ]
            }
        },
        "podAntiAffinity": {
            "preferredDuringSchedulingIgnoredDuringExecution": [
                {"weight": 1, "podAffinityTerm": affinity_term(matchLabelKeys=["app"])}
            ]
        },
    },
    topologySpreadConstraints=[
        {
            "maxSkew": 1,
            "topologyKey": "z",
            "whenUnsatisfiable": "DoNotSchedule",
            "labelSelector": {},
        }
    ],
    schedulingGates=[{"name": "g"}],
    initContainers=[{"name": "i", "image": "x", "ports": [{"containerPort": 1}]}],
)


@pytest.mark.parametrize("path", _paths(RICH_POD)[2:], ids=lambda p: ".".join(map(str, p)))
def test_a_value_of_the_wrong_type_is_a_field_error(path: tuple[Any, ...]) -> None:
    for garbage in GARBAGE:
        doc = copy.deepcopy(RICH_POD)
        parent: Any = doc
        for part in path[:-1]:
            parent = parent[part]
        parent[path[-1]] = garbage
        try:
            decode_object(doc)
        except InvalidObjectError as error:
            assert error.errors


# IsDNS1123Subdomain's table (k8s.io/apimachinery/pkg/util/validation/validation_test.go): what
# ValidateNodeName and ValidatePodName accept and refuse.
@pytest.mark.parametrize(
    "name",
    ["a", "ab", "abc", "a1", "a-1", "a--1--2--b", "0", "01", "a.a", "1.a", "a.b.c.d.e", "a" * 253],
)
def test_node_and_pod_names_that_are_dns_1123_subdomains_are_accepted(name: str) -> None:
    node = decode_object({"apiVersion": "v1", "kind": "Node", "metadata": {"name": name}})
    assert node.name == name
    assert decode_object(with_path(pod(), "metadata.name", name)).name == name


@pytest.mark.parametrize(
    "name",
    [
        "A",
        "ABC",
        "aBc",
        "A1",
        "A-1",
        "1-A",
        "-",
        "a-",
        "-a",
        "1-",
        "-1",
        "_",
        "a_",
        "_a",
        "a_b",
        "1_",
        "_1",
        "1_2",
        ".",
        "a.",
        ".a",
        "a..b",
        "1.",
        ".1",
        "1..2",
        " ",
        "a ",
        " a",
        "a b",
        "1 ",
        " 1",
        "1 2",
        "A.a",
        "aB.a",
        "ab.A",
        "A1.a",
        "a1.A",
        "A.1",
        "aB.1",
        "A1.1",
        "1A.1",
        "0.A",
        "01.A",
        "012.A",
        "1A.a",
        "1a.A",
        "A.B.C.D.E",
        "AA.BB.CC.DD.EE",
        "a.B.c.d.e",
        "aa.bB.cc.dd.ee",
        "a@b",
        "a,b",
        "a_b",
        "a;b",
        "a:b",
        "a%b",
        "a?b",
        "a$b",
        'a<>"!',
        "a" * 254,
        "nodeA",
        "Machine_1",
    ],
)
def test_node_and_pod_names_that_are_not_dns_1123_subdomains_are_refused(name: str) -> None:
    with pytest.raises(InvalidObjectError) as node_error:
        decode_object({"apiVersion": "v1", "kind": "Node", "metadata": {"name": name}})
    with pytest.raises(InvalidObjectError) as pod_error:
        decode_object(with_path(pod(), "metadata.name", name))
    for error in (node_error.value, pod_error.value):
        assert [e.field for e in error.errors] == ["metadata.name"] * len(error.errors)
