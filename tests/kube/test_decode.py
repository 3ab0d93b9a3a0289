"""decode_object on pods: one invalid field at a time in the API server's words, and pod-level
resources, after pkg/apis/core/validation/validation_test.go."""

from typing import Any

import pytest
from decode_helpers import (
    LABEL_KEY_NAME_MSG,
    LABEL_MSG,
    LABEL_VALUE_MSG,
    QUANTITY_MSG,
    errors_of,
    pod,
    with_path,
)

from schedviz.kube.decode import decode_object
from schedviz.kube.errors import InvalidObjectError
from schedviz.kube.objects import (
    Pod,
)
from schedviz.kube.quantity import Quantity

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
