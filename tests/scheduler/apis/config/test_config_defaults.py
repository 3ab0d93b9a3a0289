"""Defaults: ports of upstream's v1/default_plugins_test.go and v1/defaults_test.go (v1.34)."""

from __future__ import annotations

from typing import Any

import pytest

from schedviz.scheduler.apis.config.default_plugins import get_default_plugins, merge_plugins
from schedviz.scheduler.apis.config.types import (
    DEFAULT_PERCENTAGE_OF_NODES_TO_SCORE,
    DynamicResourcesArgs,
    Plugin,
    PluginConfig,
    Plugins,
    PluginSet,
)
from schedviz.scheduler.apis.config.types_pluginargs import (
    DefaultPreemptionArgs,
    InterPodAffinityArgs,
    NodeAffinityArgs,
    NodeResourcesBalancedAllocationArgs,
    NodeResourcesFitArgs,
    PodTopologySpreadArgs,
    ResourceSpec,
    ScoringStrategy,
    VolumeBindingArgs,
)
from schedviz.scheduler.apis.config.v1 import (
    API_VERSION,
    KIND,
    decode_configuration,
    default_args,
    default_configuration,
)
from schedviz.scheduler.apis.config.validation import ConfigError

Entry = str | tuple[str, int]


def plugin_set(enabled: list[Entry] | None = None, disabled: list[str] | None = None) -> PluginSet:
    def plugin(entry: Entry) -> Plugin:
        return Plugin(entry) if isinstance(entry, str) else Plugin(*entry)

    return PluginSet(
        enabled=[plugin(e) for e in enabled or []], disabled=[Plugin(d) for d in disabled or []]
    )


def doc(**fields: Any) -> dict[str, Any]:
    return {"apiVersion": API_VERSION, "kind": KIND, **fields}


def test_default_plugins_are_upstream_v1_34_multi_point_list_with_weights() -> None:
    # TestApplyFeatureGates, DynamicResourceAllocation on (GA in v1.34).
    assert get_default_plugins() == Plugins(
        multi_point=plugin_set(
            [
                "SchedulingGates",
                "PrioritySort",
                "NodeUnschedulable",
                "NodeName",
                ("TaintToleration", 3),
                ("NodeAffinity", 2),
                "NodePorts",
                ("NodeResourcesFit", 1),
                "VolumeRestrictions",
                "NodeVolumeLimits",
                "VolumeBinding",
                "VolumeZone",
                ("PodTopologySpread", 2),
                ("InterPodAffinity", 2),
                "DynamicResources",
                "DefaultPreemption",
                ("NodeResourcesBalancedAllocation", 1),
                ("ImageLocality", 1),
                "DefaultBinder",
            ]
        )
    )


# TestMergePlugins: (name, defaults, custom, expected).
MERGE_CASES: list[tuple[str, Plugins, Plugins | None, Plugins]] = [
    (
        "AppendCustomPlugin",
        Plugins(filter=plugin_set(["DefaultPlugin1", "DefaultPlugin2"])),
        Plugins(filter=plugin_set(["CustomPlugin"])),
        Plugins(filter=plugin_set(["DefaultPlugin1", "DefaultPlugin2", "CustomPlugin"])),
    ),
    (
        "InsertAfterDefaultPlugins2",
        Plugins(filter=plugin_set(["DefaultPlugin1", "DefaultPlugin2"])),
        Plugins(filter=plugin_set(["CustomPlugin", "DefaultPlugin2"], ["DefaultPlugin2"])),
        Plugins(
            filter=plugin_set(
                ["DefaultPlugin1", "CustomPlugin", "DefaultPlugin2"], ["DefaultPlugin2"]
            )
        ),
    ),
    (
        "InsertBeforeAllPlugins",
        Plugins(filter=plugin_set(["DefaultPlugin1", "DefaultPlugin2"])),
        Plugins(filter=plugin_set(["CustomPlugin", "DefaultPlugin1", "DefaultPlugin2"], ["*"])),
        Plugins(filter=plugin_set(["CustomPlugin", "DefaultPlugin1", "DefaultPlugin2"], ["*"])),
    ),
    (
        "ReorderDefaultPlugins",
        Plugins(filter=plugin_set(["DefaultPlugin1", "DefaultPlugin2"])),
        Plugins(filter=plugin_set(["DefaultPlugin2", "DefaultPlugin1"], ["*"])),
        Plugins(filter=plugin_set(["DefaultPlugin2", "DefaultPlugin1"], ["*"])),
    ),
    (
        "ApplyNilCustomPlugin",
        Plugins(filter=plugin_set(["DefaultPlugin1", "DefaultPlugin2"])),
        None,
        Plugins(filter=plugin_set(["DefaultPlugin1", "DefaultPlugin2"])),
    ),
    (
        "CustomPluginOverrideDefaultPlugin",
        Plugins(filter=plugin_set(["Plugin1", "Plugin2", "Plugin3"])),
        Plugins(filter=plugin_set([("Plugin1", 2), ("Plugin3", 3)])),
        Plugins(filter=plugin_set([("Plugin1", 2), "Plugin2", ("Plugin3", 3)])),
    ),
    (
        "OrderPreserveAfterOverride",
        Plugins(filter=plugin_set(["Plugin1", "Plugin2", "Plugin3"])),
        Plugins(filter=plugin_set([("Plugin2", 2), ("Plugin1", 1)])),
        Plugins(filter=plugin_set([("Plugin1", 1), ("Plugin2", 2), "Plugin3"])),
    ),
    (
        "RepeatedCustomPlugin",
        Plugins(filter=plugin_set(["Plugin1", "Plugin2", "Plugin3"])),
        Plugins(filter=plugin_set(["Plugin1", ("Plugin2", 2), "Plugin3", ("Plugin2", 4)])),
        Plugins(filter=plugin_set(["Plugin1", ("Plugin2", 4), "Plugin3", ("Plugin2", 2)])),
    ),
    (
        "Append custom MultiPoint plugin",
        Plugins(multi_point=plugin_set(["DefaultPlugin1", "DefaultPlugin2"])),
        Plugins(multi_point=plugin_set(["CustomPlugin"])),
        Plugins(multi_point=plugin_set(["DefaultPlugin1", "DefaultPlugin2", "CustomPlugin"])),
    ),
    (
        "Append disabled Multipoint plugins",
        Plugins(multi_point=plugin_set(["DefaultPlugin1", "DefaultPlugin2"])),
        Plugins(
            multi_point=plugin_set(["CustomPlugin", "CustomPlugin2"], ["DefaultPlugin2"]),
            score=plugin_set(disabled=["CustomPlugin2"]),
        ),
        Plugins(
            multi_point=plugin_set(
                ["DefaultPlugin1", "CustomPlugin", "CustomPlugin2"], ["DefaultPlugin2"]
            ),
            score=plugin_set(disabled=["CustomPlugin2"]),
        ),
    ),
    (
        "override default MultiPoint plugins with custom value",
        Plugins(multi_point=plugin_set(["DefaultPlugin"])),
        Plugins(multi_point=plugin_set([("DefaultPlugin", 5)])),
        Plugins(multi_point=plugin_set([("DefaultPlugin", 5)])),
    ),
    (
        "disabled MultiPoint plugin in default set",
        Plugins(multi_point=plugin_set(["DefaultPlugin"], ["DefaultPlugin2"])),
        Plugins(multi_point=plugin_set(["CustomPlugin"])),
        Plugins(multi_point=plugin_set(["DefaultPlugin", "CustomPlugin"], ["DefaultPlugin2"])),
    ),
    (
        "disabled MultiPoint plugin in default set for specific extension point",
        Plugins(
            multi_point=plugin_set(["DefaultPlugin"]), score=plugin_set(disabled=["DefaultPlugin2"])
        ),
        Plugins(multi_point=plugin_set(["CustomPlugin"])),
        Plugins(
            multi_point=plugin_set(["DefaultPlugin", "CustomPlugin"]),
            score=plugin_set(disabled=["DefaultPlugin2"]),
        ),
    ),
    (
        "multipoint with only disabled gets merged",
        Plugins(multi_point=plugin_set(["DefaultPlugin"])),
        Plugins(multi_point=plugin_set(disabled=["DefaultPlugin"])),
        Plugins(multi_point=plugin_set(disabled=["DefaultPlugin"])),
    ),
]


@pytest.mark.parametrize(
    ("defaults", "custom", "expected"),
    [case[1:] for case in MERGE_CASES],
    ids=[case[0] for case in MERGE_CASES],
)
def test_merge_plugins_follows_upstream_table(
    defaults: Plugins, custom: Plugins | None, expected: Plugins
) -> None:
    assert merge_plugins(defaults, custom) == expected


def default_plugin_configs() -> list[PluginConfig]:
    """defaults_test.go's pluginConfigs at v1.34: sorted by name, every args type defaulted."""
    return [
        PluginConfig("DefaultPreemption", DefaultPreemptionArgs(10, 100)),
        PluginConfig("DynamicResources", DynamicResourcesArgs(filter_timeout_seconds=10.0)),
        PluginConfig("InterPodAffinity", InterPodAffinityArgs(hard_pod_affinity_weight=1)),
        PluginConfig("NodeAffinity", NodeAffinityArgs()),
        PluginConfig(
            "NodeResourcesBalancedAllocation",
            NodeResourcesBalancedAllocationArgs(
                [ResourceSpec("cpu", 1), ResourceSpec("memory", 1)]
            ),
        ),
        PluginConfig(
            "NodeResourcesFit",
            NodeResourcesFitArgs(
                scoring_strategy=ScoringStrategy(
                    "LeastAllocated", [ResourceSpec("cpu", 1), ResourceSpec("memory", 1)]
                )
            ),
        ),
        PluginConfig("PodTopologySpread", PodTopologySpreadArgs(defaulting_type="System")),
        PluginConfig("VolumeBinding", VolumeBindingArgs(bind_timeout_seconds=600)),
    ]


def test_empty_config_gets_upstream_defaults() -> None:
    config = default_configuration()
    assert config.parallelism == 16
    assert config.percentage_of_nodes_to_score == DEFAULT_PERCENTAGE_OF_NODES_TO_SCORE == 0
    assert config.pod_initial_backoff_seconds == 1
    assert config.pod_max_backoff_seconds == 10
    assert config.extenders == []
    [profile] = config.profiles
    assert profile.scheduler_name == "default-scheduler"
    assert profile.percentage_of_nodes_to_score is None
    assert profile.plugins == get_default_plugins()
    assert profile.plugin_config == default_plugin_configs()


def test_decoding_an_empty_document_is_the_default_configuration() -> None:
    assert decode_configuration(doc()) == default_configuration()


def test_no_scheduler_name_in_the_only_profile_gets_default_scheduler() -> None:
    config = decode_configuration(doc(profiles=[{}]))
    assert config.profiles[0].scheduler_name == "default-scheduler"


def test_two_profiles_keep_their_own_plugins_and_configs() -> None:
    # "two profiles": a custom pluginConfig entry stays first, defaults follow sorted by name.
    config = decode_configuration(
        doc(
            parallelism=16,
            profiles=[
                {"schedulerName": "default-scheduler", "pluginConfig": [{"name": "FooPlugin"}]},
                {
                    "schedulerName": "custom-scheduler",
                    "plugins": {
                        "bind": {
                            "enabled": [{"name": "BarPlugin"}],
                            "disabled": [{"name": "DefaultBinder"}],
                        }
                    },
                },
            ],
        ),
    )
    first, second = config.profiles
    assert first.plugins == get_default_plugins()
    assert first.plugin_config == [PluginConfig("FooPlugin"), *default_plugin_configs()]
    assert second.scheduler_name == "custom-scheduler"
    assert second.plugins == Plugins(
        multi_point=get_default_plugins().multi_point,
        bind=plugin_set(["BarPlugin"], ["DefaultBinder"]),
    )
    assert second.plugin_config == default_plugin_configs()


def test_two_profiles_without_names_are_not_named_by_defaulting() -> None:
    # Only a single profile gets the default name; validation then requires a name.
    with pytest.raises(ConfigError) as error:
        decode_configuration(doc(profiles=[{}, {"schedulerName": "other"}]))
    assert error.value.errors == ["profiles[0].schedulerName: Required value"]


@pytest.mark.parametrize(
    ("fields", "attribute", "expected"),
    [
        ({"parallelism": 8}, "parallelism", 8),
        ({"percentageOfNodesToScore": 50}, "percentage_of_nodes_to_score", 50),
        ({"podInitialBackoffSeconds": 2}, "pod_initial_backoff_seconds", 2),
        ({"podMaxBackoffSeconds": 20}, "pod_max_backoff_seconds", 20),
    ],
    ids=[
        "set non default parallelism",
        "set non default global percentageOfNodesToScore",
        "set non default podInitialBackoffSeconds",
        "set non default podMaxBackoffSeconds",
    ],
)
def test_explicit_values_win_over_defaults(
    fields: dict[str, Any], attribute: str, expected: int
) -> None:
    assert getattr(decode_configuration(doc(**fields)), attribute) == expected


def test_profile_percentage_of_nodes_to_score_is_kept_beside_the_global_one() -> None:
    # "set non default global and profile percentageOfNodesToScore"
    config = decode_configuration(
        doc(percentageOfNodesToScore=10, profiles=[{"percentageOfNodesToScore": 50}])
    )
    assert config.percentage_of_nodes_to_score == 10
    assert config.profiles[0].percentage_of_nodes_to_score == 50


def test_process_settings_are_accepted_and_dropped() -> None:
    # "set non default delayCacheUntilActive" and the component-base settings of a real file.
    config = decode_configuration(
        doc(
            delayCacheUntilActive=True,
            leaderElection={"leaderElect": False},
            clientConnection={"kubeconfig": "/etc/kubernetes/scheduler.conf"},
            enableProfiling=True,
            enableContentionProfiling=True,
        )
    )
    assert config == default_configuration()


def test_unknown_plugin_config_is_kept_raw() -> None:
    config = decode_configuration(
        doc(profiles=[{"pluginConfig": [{"name": "OutOfTree", "args": {"anything": [1, 2]}}]}])
    )
    assert config.profiles[0].plugin_config[0] == PluginConfig("OutOfTree", {"anything": [1, 2]})


def test_disabling_a_default_plugin_drops_its_default_args() -> None:
    config = decode_configuration(
        doc(profiles=[{"plugins": {"multiPoint": {"disabled": [{"name": "VolumeBinding"}]}}}])
    )
    names = [c.name for c in config.profiles[0].plugin_config]
    assert "VolumeBinding" not in names
    assert "NodeResourcesFit" in names


def test_plugin_enabled_at_one_point_only_gets_default_args() -> None:
    config = decode_configuration(
        doc(
            profiles=[
                {
                    "plugins": {
                        "multiPoint": {"disabled": [{"name": "*"}]},
                        "score": {"enabled": [{"name": "NodeResourcesFit", "weight": 5}]},
                    }
                }
            ]
        )
    )
    [profile] = config.profiles
    assert profile.plugins.multi_point == plugin_set(disabled=["*"])
    assert profile.plugins.score == plugin_set([("NodeResourcesFit", 5)])
    assert [c.name for c in profile.plugin_config] == ["NodeResourcesFit"]


def args_of(name: str, args: dict[str, Any]) -> object:
    config = decode_configuration(doc(profiles=[{"pluginConfig": [{"name": name, "args": args}]}]))
    return config.profiles[0].plugin_config[0].args


# TestPluginArgsDefaults: (name, plugin, v1 args, defaulted args).
ARGS_CASES: list[tuple[str, str, dict[str, Any], object]] = [
    ("DefaultPreemptionArgs empty", "DefaultPreemption", {}, DefaultPreemptionArgs(10, 100)),
    (
        "DefaultPreemptionArgs with value",
        "DefaultPreemption",
        {"minCandidateNodesPercentage": 50},
        DefaultPreemptionArgs(50, 100),
    ),
    ("InterPodAffinityArgs empty", "InterPodAffinity", {}, InterPodAffinityArgs(1)),
    (
        "InterPodAffinityArgs explicit 0",
        "InterPodAffinity",
        {"hardPodAffinityWeight": 0},
        InterPodAffinityArgs(0),
    ),
    (
        "InterPodAffinityArgs with value",
        "InterPodAffinity",
        {"hardPodAffinityWeight": 5},
        InterPodAffinityArgs(5),
    ),
    (
        "NodeResourcesBalancedAllocationArgs resources empty",
        "NodeResourcesBalancedAllocation",
        {},
        NodeResourcesBalancedAllocationArgs([ResourceSpec("cpu", 1), ResourceSpec("memory", 1)]),
    ),
    (
        "NodeResourcesBalancedAllocationArgs with scalar resource",
        "NodeResourcesBalancedAllocation",
        {"resources": [{"name": "scalar.io/scalar1", "weight": 1}]},
        NodeResourcesBalancedAllocationArgs([ResourceSpec("scalar.io/scalar1", 1)]),
    ),
    (
        "NodeResourcesBalancedAllocationArgs have resource no weight",
        "NodeResourcesBalancedAllocation",
        {
            "resources": [
                {"name": "cpu"},
                {"name": "scalar.io/scalar0"},
                {"name": "scalar.io/scalar1", "weight": 1},
            ]
        },
        NodeResourcesBalancedAllocationArgs(
            [
                ResourceSpec("cpu", 1),
                ResourceSpec("scalar.io/scalar0", 1),
                ResourceSpec("scalar.io/scalar1", 1),
            ]
        ),
    ),
    (
        "PodTopologySpreadArgs resources empty",
        "PodTopologySpread",
        {},
        PodTopologySpreadArgs(defaulting_type="System"),
    ),
    (
        "NodeResourcesFitArgs not set",
        "NodeResourcesFit",
        {},
        NodeResourcesFitArgs(
            scoring_strategy=ScoringStrategy(
                "LeastAllocated", [ResourceSpec("cpu", 1), ResourceSpec("memory", 1)]
            )
        ),
    ),
    (
        "NodeResourcesFitArgs Resources empty",
        "NodeResourcesFit",
        {"scoringStrategy": {"type": "MostAllocated"}},
        NodeResourcesFitArgs(
            scoring_strategy=ScoringStrategy(
                "MostAllocated", [ResourceSpec("cpu", 1), ResourceSpec("memory", 1)]
            )
        ),
    ),
    (
        "VolumeBindingArgs empty, StorageCapacityScoring disabled",
        "VolumeBinding",
        {},
        VolumeBindingArgs(bind_timeout_seconds=600),
    ),
    (
        "DynamicResourcesArgs empty, DRASchedulerFilterTimeout on",
        "DynamicResources",
        {},
        DynamicResourcesArgs(filter_timeout_seconds=10.0),
    ),
    (
        "DynamicResourcesArgs filterTimeout in Go duration syntax",
        "DynamicResources",
        {"filterTimeout": "1m30s"},
        DynamicResourcesArgs(filter_timeout_seconds=90.0),
    ),
]


@pytest.mark.parametrize(
    ("plugin", "args", "expected"),
    [case[1:] for case in ARGS_CASES],
    ids=[case[0] for case in ARGS_CASES],
)
def test_plugin_args_get_upstream_defaults(
    plugin: str, args: dict[str, Any], expected: object
) -> None:
    assert args_of(plugin, args) == expected


def test_default_args_is_none_for_plugins_without_args() -> None:
    assert default_args("TaintToleration") is None
    assert default_args("NodeResourcesFit") == args_of("NodeResourcesFit", {})
