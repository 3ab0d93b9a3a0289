"""Decoding v1 documents strictly, encoding them back, and Go durations."""

from __future__ import annotations

from typing import Any

import pytest

from schedviz.kube.objects import (
    NodeAffinity,
    NodeSelector,
    NodeSelectorRequirement,
    NodeSelectorTerm,
    PreferredSchedulingTerm,
    TopologySpreadConstraint,
)
from schedviz.scheduler.apis.config.default_plugins import DEFAULT_MULTI_POINT
from schedviz.scheduler.apis.config.types import (
    DynamicResourcesArgs,
    Extender,
    ExtenderManagedResource,
    ExtenderTLSConfig,
    KubeSchedulerConfiguration,
    Plugin,
    format_duration,
    parse_duration,
)
from schedviz.scheduler.apis.config.types_pluginargs import (
    NodeAffinityArgs,
    NodeResourcesFitArgs,
    PodTopologySpreadArgs,
    RequestedToCapacityRatioParam,
    ResourceSpec,
    ScoringStrategy,
    UtilizationShapePoint,
)
from schedviz.scheduler.apis.config.v1 import (
    API_VERSION,
    KIND,
    decode_configuration,
    default_configuration,
    to_v1_dict,
)
from schedviz.scheduler.apis.config.validation import ConfigError


def doc(**fields: Any) -> dict[str, Any]:
    return {"apiVersion": API_VERSION, "kind": KIND, **fields}


def errors_of(document: Any) -> list[str]:
    with pytest.raises(ConfigError) as error:
        decode_configuration(document)
    return error.value.errors


def test_it_refuses_unknown_fields_with_their_path() -> None:
    assert errors_of(
        doc(foo=1, profiles=[{"schedulerName": "a", "plugins": {"score": {"enable": []}}}])
    ) == [
        'strict decoding error: unknown field "foo"',
        'strict decoding error: unknown field "profiles[0].plugins.score.enable"',
    ]


def test_it_refuses_removed_v1_fields() -> None:
    assert errors_of(doc(healthzBindAddress="0.0.0.0:10251")) == [
        'strict decoding error: unknown field "healthzBindAddress"'
    ]


def test_it_refuses_unknown_fields_in_plugin_args() -> None:
    document = doc(
        profiles=[
            {
                "pluginConfig": [
                    {"name": "NodeResourcesFit", "args": {"scoringStrategy": {"typ": "x"}}}
                ]
            }
        ]
    )
    assert errors_of(document) == [
        "strict decoding error: decoding .profiles[0].pluginConfig[0]: decoding args for plugin "
        'NodeResourcesFit: strict decoding error: unknown field "scoringStrategy.typ"'
    ]


@pytest.mark.parametrize(
    ("fields", "expected"),
    [
        (
            {"parallelism": "16"},
            "json: cannot unmarshal string into Go struct field "
            "KubeSchedulerConfiguration.parallelism of type int32",
        ),
        (
            {"podMaxBackoffSeconds": 1.5},
            "json: cannot unmarshal number 1.5 into Go struct field "
            "KubeSchedulerConfiguration.podMaxBackoffSeconds of type int64",
        ),
        (
            {"profiles": [{"plugins": {"score": {"enabled": [{"name": "A", "weight": True}]}}}]},
            "json: cannot unmarshal bool into Go struct field "
            "Plugin.profiles.plugins.score.enabled.weight of type int32",
        ),
        (
            {"profiles": {"schedulerName": "a"}},
            "json: cannot unmarshal object into Go struct field "
            "KubeSchedulerConfiguration.profiles of type []v1.KubeSchedulerProfile",
        ),
    ],
    ids=["string for int", "fraction for int", "bool for weight", "object for list"],
)
def test_it_words_type_errors_like_go_encoding_json(fields: dict[str, Any], expected: str) -> None:
    assert errors_of(doc(**fields)) == [expected]


@pytest.mark.parametrize(
    ("document", "expected"),
    [
        ({"apiVersion": API_VERSION}, "Object 'Kind' is missing"),
        (
            {"apiVersion": "kubescheduler.config.k8s.io/v1beta3", "kind": KIND},
            'no kind "KubeSchedulerConfiguration" is registered for version '
            '"kubescheduler.config.k8s.io/v1beta3"',
        ),
    ],
    ids=["no kind", "removed version"],
)
def test_it_requires_the_v1_kind(document: dict[str, Any], expected: str) -> None:
    assert errors_of(document) == [expected]


def test_it_refuses_args_of_another_kind() -> None:
    document = doc(
        profiles=[
            {
                "pluginConfig": [
                    {
                        "name": "NodeResourcesFit",
                        "args": {"apiVersion": API_VERSION, "kind": "InterPodAffinityArgs"},
                    }
                ]
            }
        ]
    )
    assert errors_of(document) == [
        "decoding .profiles[0].pluginConfig[0]: args for plugin NodeResourcesFit were not of type "
        "NodeResourcesFitArgs.kubescheduler.config.k8s.io, got "
        "InterPodAffinityArgs.kubescheduler.config.k8s.io"
    ]


def test_it_validates_after_decoding() -> None:
    assert errors_of(doc(percentageOfNodesToScore=101, podInitialBackoffSeconds=0)) == [
        "percentageOfNodesToScore: Invalid value: 101: not in valid range [0-100]",
        "podInitialBackoffSeconds: Invalid value: 0: must be greater than 0",
    ]


def test_it_checks_plugin_names_against_the_registry() -> None:
    document = doc(profiles=[{"plugins": {"filter": {"enabled": [{"name": "Foo"}]}}}])
    known = {name for name, _ in DEFAULT_MULTI_POINT}
    assert errors_of_with(document, known) == [
        'profiles[0].plugins.filter.enabled[0]: Invalid value: "Foo": plugin "Foo" does not exist'
    ]


def errors_of_with(document: dict[str, Any], known: set[str]) -> list[str]:
    with pytest.raises(ConfigError) as error:
        decode_configuration(document, known)
    return error.value.errors


def test_config_error_reads_like_an_aggregate() -> None:
    assert str(ConfigError(["a"])) == "a"
    assert str(ConfigError(["a", "b"])) == "[a, b]"


def test_it_decodes_node_affinity_args_into_kube_objects() -> None:
    document = doc(
        profiles=[
            {
                "pluginConfig": [
                    {
                        "name": "NodeAffinity",
                        "args": {
                            "addedAffinity": {
                                "requiredDuringSchedulingIgnoredDuringExecution": {
                                    "nodeSelectorTerms": [
                                        {
                                            "matchExpressions": [
                                                {
                                                    "key": "zone",
                                                    "operator": "In",
                                                    "values": ["a", "b"],
                                                }
                                            ]
                                        }
                                    ]
                                },
                                "preferredDuringSchedulingIgnoredDuringExecution": [
                                    {
                                        "weight": 5,
                                        "preference": {
                                            "matchFields": [
                                                {
                                                    "key": "metadata.name",
                                                    "operator": "In",
                                                    "values": ["n1"],
                                                }
                                            ]
                                        },
                                    }
                                ],
                            }
                        },
                    }
                ]
            }
        ]
    )
    args = decode_configuration(document).profiles[0].args_for("NodeAffinity")
    assert args == NodeAffinityArgs(
        NodeAffinity(
            required=NodeSelector(
                (NodeSelectorTerm((NodeSelectorRequirement("zone", "In", ("a", "b")),)),)
            ),
            preferred=(
                PreferredSchedulingTerm(
                    5,
                    NodeSelectorTerm(
                        match_fields=(NodeSelectorRequirement("metadata.name", "In", ("n1",)),)
                    ),
                ),
            ),
        )
    )


def test_it_decodes_list_default_constraints() -> None:
    document = doc(
        profiles=[
            {
                "pluginConfig": [
                    {
                        "name": "PodTopologySpread",
                        "args": {
                            "defaultingType": "List",
                            "defaultConstraints": [
                                {
                                    "maxSkew": 3,
                                    "topologyKey": "topology.kubernetes.io/zone",
                                    "whenUnsatisfiable": "ScheduleAnyway",
                                    "minDomains": 2,
                                    "nodeTaintsPolicy": "Honor",
                                    "matchLabelKeys": ["app"],
                                }
                            ],
                        },
                    }
                ]
            }
        ]
    )
    args = decode_configuration(document).profiles[0].args_for("PodTopologySpread")
    assert args == PodTopologySpreadArgs(
        [
            TopologySpreadConstraint(
                3,
                "topology.kubernetes.io/zone",
                "ScheduleAnyway",
                min_domains=2,
                node_taints_policy="Honor",
                match_label_keys=("app",),
            )
        ],
        "List",
    )


def test_a_label_selector_in_default_constraints_is_refused() -> None:
    constraint = {
        "maxSkew": 1,
        "topologyKey": "zone",
        "whenUnsatisfiable": "DoNotSchedule",
        "labelSelector": {"matchExpressions": [{"key": "a", "operator": "Exists"}]},
    }
    document = doc(
        profiles=[
            {
                "pluginConfig": [
                    {
                        "name": "PodTopologySpread",
                        "args": {"defaultingType": "List", "defaultConstraints": [constraint]},
                    }
                ]
            }
        ]
    )
    assert errors_of(document) == [
        "profiles[0].pluginConfig[0].args.defaultConstraints[0].labelSelector: Forbidden: "
        "constraint must not define a selector, as they deduced for each pod"
    ]


def test_it_decodes_extenders() -> None:
    document = doc(
        extenders=[
            {
                "urlPrefix": "http://127.0.0.1:8888/",
                "filterVerb": "filter",
                "prioritizeVerb": "prioritize",
                "weight": 2,
                "enableHTTPS": True,
                "tlsConfig": {"insecure": True},
                "httpTimeout": "1m30s",
                "nodeCacheCapable": True,
                "managedResources": [{"name": "example.com/foo", "ignoredByScheduler": True}],
                "ignorable": True,
            }
        ]
    )
    assert decode_configuration(document).extenders == [
        Extender(
            url_prefix="http://127.0.0.1:8888/",
            filter_verb="filter",
            prioritize_verb="prioritize",
            weight=2,
            enable_https=True,
            tls_config=ExtenderTLSConfig(insecure=True),
            http_timeout_seconds=90.0,
            node_cache_capable=True,
            managed_resources=[ExtenderManagedResource("example.com/foo", True)],
            ignorable=True,
        )
    ]


def test_it_refuses_a_bad_duration() -> None:
    document = doc(
        profiles=[{"pluginConfig": [{"name": "DynamicResources", "args": {"filterTimeout": "10"}}]}]
    )
    assert errors_of(document) == [
        "decoding .profiles[0].pluginConfig[0]: decoding args for plugin DynamicResources: "
        'time: invalid duration "10"'
    ]


def rich_config() -> KubeSchedulerConfiguration:
    return decode_configuration(
        doc(
            parallelism=8,
            percentageOfNodesToScore=30,
            podInitialBackoffSeconds=2,
            podMaxBackoffSeconds=20,
            profiles=[
                {
                    "schedulerName": "default-scheduler",
                    "percentageOfNodesToScore": 50,
                    "plugins": {
                        "multiPoint": {
                            "enabled": [{"name": "TaintToleration", "weight": 7}],
                            "disabled": [{"name": "ImageLocality"}],
                        },
                        "score": {"disabled": [{"name": "NodeResourcesBalancedAllocation"}]},
                    },
                    "pluginConfig": [
                        {
                            "name": "NodeResourcesFit",
                            "args": {
                                "ignoredResources": ["example.com/foo"],
                                "scoringStrategy": {
                                    "type": "RequestedToCapacityRatio",
                                    "resources": [{"name": "cpu", "weight": 3}],
                                    "requestedToCapacityRatio": {
                                        "shape": [
                                            {"utilization": 0, "score": 10},
                                            {"utilization": 100, "score": 0},
                                        ]
                                    },
                                },
                            },
                        },
                        {"name": "DynamicResources", "args": {"filterTimeout": "0s"}},
                        {"name": "OutOfTree", "args": {"x": {"y": [1]}}},
                    ],
                },
                {"schedulerName": "bin-packing"},
            ],
            extenders=[{"urlPrefix": "http://e/", "bindVerb": "bind", "httpTimeout": "500ms"}],
        )
    )


def test_rich_config_decodes_as_expected() -> None:
    config = rich_config()
    first = config.profiles[0]
    assert first.plugins.multi_point.enabled[4] == Plugin("TaintToleration", 7)
    assert "ImageLocality" not in [p.name for p in first.plugins.multi_point.enabled]
    assert first.args_for("NodeResourcesFit") == NodeResourcesFitArgs(
        ignored_resources=["example.com/foo"],
        scoring_strategy=ScoringStrategy(
            "RequestedToCapacityRatio",
            [ResourceSpec("cpu", 3)],
            RequestedToCapacityRatioParam(
                [UtilizationShapePoint(0, 10), UtilizationShapePoint(100, 0)]
            ),
        ),
    )
    assert first.args_for("DynamicResources") == DynamicResourcesArgs(0.0)
    assert first.args_for("OutOfTree") == {"x": {"y": [1]}}


@pytest.mark.parametrize(
    "config", [default_configuration(), rich_config()], ids=["default", "rich"]
)
def test_decoding_the_v1_encoding_gives_the_configuration_back(
    config: KubeSchedulerConfiguration,
) -> None:
    encoded = to_v1_dict(config)
    assert decode_configuration(encoded) == config
    assert to_v1_dict(decode_configuration(encoded)) == encoded


@pytest.mark.parametrize(
    ("text", "seconds"),
    [("0", 0.0), ("10s", 10.0), ("1m30s", 90.0), ("1.5h", 5400.0), ("500ms", 0.5), ("-2s", -2.0)],
)
def test_parse_duration_reads_go_durations(text: str, seconds: float) -> None:
    assert parse_duration(text) == seconds


@pytest.mark.parametrize("text", ["", "10", "1x", "s", "1s2"])
def test_parse_duration_refuses_what_go_refuses(text: str) -> None:
    assert parse_duration(text) is None


@pytest.mark.parametrize(
    ("seconds", "text"),
    [
        (0.0, "0s"),
        (10.0, "10s"),
        (90.0, "1m30s"),
        (600.0, "10m0s"),
        (3600.0, "1h0m0s"),
        (0.5, "500ms"),
        (1.5, "1.5s"),
        (-1.0, "-1s"),
    ],
)
def test_format_duration_writes_go_durations(seconds: float, text: str) -> None:
    assert format_duration(seconds) == text
