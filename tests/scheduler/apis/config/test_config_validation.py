"""Validation: ports of upstream's validation_test.go and validation_pluginargs_test.go (v1.34).

Upstream's tests compare error types and fields; these compare the whole error strings.
"""

from __future__ import annotations

import copy
from collections.abc import Callable

import pytest

from schedviz.kube.objects import (
    LabelSelector,
    NodeAffinity,
    NodeSelector,
    NodeSelectorRequirement,
    NodeSelectorTerm,
    PreferredSchedulingTerm,
    TopologySpreadConstraint,
)
from schedviz.scheduler.apis.config.types import (
    DynamicResourcesArgs,
    Extender,
    ExtenderManagedResource,
    KubeSchedulerConfiguration,
    KubeSchedulerProfile,
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
    RequestedToCapacityRatioParam,
    ResourceSpec,
    ScoringStrategy,
    UtilizationShapePoint,
    VolumeBindingArgs,
)
from schedviz.scheduler.apis.config.validation import (
    validate,
    validate_default_preemption_args,
    validate_dynamic_resources_args,
    validate_inter_pod_affinity_args,
    validate_node_affinity_args,
    validate_node_resources_balanced_allocation_args,
    validate_node_resources_fit_args,
    validate_pod_topology_spread_args,
    validate_volume_binding_args,
)

V1 = '"kubescheduler.config.k8s.io/v1"'


def valid_config() -> KubeSchedulerConfiguration:
    """TestValidateKubeSchedulerConfiguration's validConfig."""
    return KubeSchedulerConfiguration(
        parallelism=8,
        pod_initial_backoff_seconds=1,
        pod_max_backoff_seconds=1,
        percentage_of_nodes_to_score=35,
        profiles=[
            KubeSchedulerProfile(
                scheduler_name="me",
                plugins=Plugins(
                    queue_sort=PluginSet(enabled=[Plugin("CustomSort")]),
                    score=PluginSet(disabled=[Plugin("*")]),
                ),
                plugin_config=[PluginConfig("DefaultPreemption", DefaultPreemptionArgs(10, 100))],
            ),
            KubeSchedulerProfile(
                scheduler_name="other",
                plugins=Plugins(
                    queue_sort=PluginSet(enabled=[Plugin("CustomSort")]),
                    bind=PluginSet(enabled=[Plugin("CustomBind")]),
                ),
            ),
        ],
        extenders=[Extender(prioritize_verb="prioritize", weight=1)],
    )


Mutation = Callable[[KubeSchedulerConfiguration], None]


def set_profile_plugins(index: int, plugins: Plugins) -> Mutation:
    def mutate(c: KubeSchedulerConfiguration) -> None:
        c.profiles[index].plugins = plugins

    return mutate


def mismatch_queue_sort(c: KubeSchedulerConfiguration) -> None:
    c.profiles = [
        KubeSchedulerProfile(
            "me",
            plugins=Plugins(queue_sort=PluginSet([Plugin("PrioritySort")])),
            plugin_config=[PluginConfig("PrioritySort")],
        ),
        KubeSchedulerProfile(
            "other",
            plugins=Plugins(queue_sort=PluginSet([Plugin("CustomSort")])),
            plugin_config=[PluginConfig("CustomSort")],
        ),
    ]


def two_binders(c: KubeSchedulerConfiguration) -> None:
    c.extenders[0].bind_verb = "foo"
    c.extenders.append(Extender(prioritize_verb="prioritize", weight=1, bind_verb="bar"))


CUSTOM_SORT_SET = (
    'config.PluginSet{Enabled:[]config.Plugin{config.Plugin{Name:"CustomSort", Weight:0}}, '
    "Disabled:[]config.Plugin(nil)}"
)

# (name, mutation of the valid config, expected errors)
CONFIG_CASES: list[tuple[str, Mutation, list[str]]] = [
    ("good", lambda c: None, []),
    (
        "bad-parallelism-invalid-value",
        lambda c: setattr(c, "parallelism", 0),
        ["parallelism: Invalid value: 0: should be an integer value greater than zero"],
    ),
    (
        "bad-percentage-of-nodes-to-score",
        lambda c: setattr(c, "percentage_of_nodes_to_score", 101),
        ["percentageOfNodesToScore: Invalid value: 101: not in valid range [0-100]"],
    ),
    (
        "bad-profile-percentage-of-nodes-to-score",
        lambda c: setattr(c.profiles[1], "percentage_of_nodes_to_score", 101),
        ["profiles[1].percentageOfNodesToScore: Invalid value: 101: not in valid range [0-100]"],
    ),
    (
        "scheduler-name-not-set",
        lambda c: setattr(c.profiles[1], "scheduler_name", ""),
        ["profiles[1].schedulerName: Required value"],
    ),
    (
        "repeated-scheduler-name",
        lambda c: setattr(c.profiles[0], "scheduler_name", "other"),
        ["profiles[1].schedulerName: Duplicate value: profiles[0].schedulerName"],
    ),
    (
        "different-queue-sort",
        lambda c: setattr(c.profiles[1].plugins.queue_sort.enabled[0], "name", "AnotherSort"),
        [
            "profiles[1].plugins.queueSort: Invalid value: "
            + CUSTOM_SORT_SET.replace("CustomSort", "AnotherSort")
            + ": must be the same for all profiles"
        ],
    ),
    (
        "one-empty-queue-sort",
        set_profile_plugins(0, Plugins()),
        [
            f"profiles[1].plugins.queueSort: Invalid value: {CUSTOM_SORT_SET}: "
            "must be the same for all profiles"
        ],
    ),
    (
        "two-queue-sorts",
        set_profile_plugins(0, Plugins(queue_sort=PluginSet([Plugin("A"), Plugin("B")]))),
        [
            "profiles[0].plugins.queueSort.Enabled: Invalid value: 2: "
            "only one queue sort plugin can be enabled",
            f"profiles[1].plugins.queueSort: Invalid value: {CUSTOM_SORT_SET}: "
            "must be the same for all profiles",
        ],
    ),
    (
        "mismatch-queue-sort",
        mismatch_queue_sort,
        [
            f"profiles[1].plugins.queueSort: Invalid value: {CUSTOM_SORT_SET}: "
            "must be the same for all profiles"
        ],
    ),
    (
        "extender-negative-weight",
        lambda c: setattr(c.extenders[0], "weight", -1),
        ["extenders[0].weight: Invalid value: -1: must have a positive weight applied to it"],
    ),
    (
        "extender-duplicate-managed-resources",
        lambda c: setattr(
            c.extenders[0],
            "managed_resources",
            [
                ExtenderManagedResource("example.com/foo"),
                ExtenderManagedResource("example.com/foo"),
            ],
        ),
        [
            'extenders[0].managedResources[1].name: Invalid value: "example.com/foo": '
            "duplicate extender managed resource name"
        ],
    ),
    (
        "extender-invalid-extended-resource-name",
        lambda c: setattr(
            c.extenders[0], "managed_resources", [ExtenderManagedResource("kubernetes.io/foo")]
        ),
        [
            'extenders[0].managedResources[0].name: Invalid value: "kubernetes.io/foo": '
            "is an invalid extended resource name"
        ],
    ),
    (
        "extender-duplicate-bind",
        two_binders,
        [
            'extenders: Invalid value: "found 2 extenders implementing bind": '
            "only one extender can implement bind"
        ],
    ),
    (
        "invalid-node-percentage",
        lambda c: setattr(c.profiles[0].plugin_config[0], "args", DefaultPreemptionArgs(200, 100)),
        [
            "profiles[0].pluginConfig[0].args.minCandidateNodesPercentage: Invalid value: 200: "
            "not in valid range [0, 100]"
        ],
    ),
    (
        "duplicated-plugin-config",
        lambda c: setattr(
            c.profiles[0], "plugin_config", [PluginConfig("config"), PluginConfig("config")]
        ),
        ['profiles[0].pluginConfig[1]: Duplicate value: "config"'],
    ),
    (
        "bad-removed-plugins",
        lambda c: c.profiles[0].plugins.score.enabled.append(Plugin("EBSLimits", 2)),
        [
            'profiles[0].plugins.score.enabled[0]: Invalid value: "EBSLimits": '
            f"was invalid in version {V1} (KubeSchedulerConfiguration is version {V1})"
        ],
    ),
    (
        "bad-plugins-config",
        lambda c: c.profiles[0].plugin_config.append(PluginConfig("GCEPDLimits")),
        [
            'profiles[0].pluginConfig[1]: Invalid value: "GCEPDLimits": '
            f"was invalid in version {V1} (KubeSchedulerConfiguration is version {V1})"
        ],
    ),
    (
        "good-removed-plugins",
        lambda c: c.profiles[0].plugins.score.enabled.append(Plugin("PodTopologySpread", 2)),
        [],
    ),
    (
        "bad-pod-initial-backoff",
        lambda c: setattr(c, "pod_initial_backoff_seconds", 0),
        ["podInitialBackoffSeconds: Invalid value: 0: must be greater than 0"],
    ),
    (
        "bad-pod-max-backoff",
        lambda c: setattr(c, "pod_initial_backoff_seconds", 2),
        [
            "podMaxBackoffSeconds: Invalid value: 1: "
            "must be greater than or equal to PodInitialBackoffSeconds"
        ],
    ),
    ("no-profiles", lambda c: setattr(c, "profiles", []), ["profiles: Required value"]),
]


@pytest.mark.parametrize(
    ("mutate", "expected"),
    [case[1:] for case in CONFIG_CASES],
    ids=[case[0] for case in CONFIG_CASES],
)
def test_validate_kube_scheduler_configuration(mutate: Mutation, expected: list[str]) -> None:
    config = copy.deepcopy(valid_config())
    mutate(config)
    assert validate(config) == expected


def test_plugin_args_of_the_wrong_type_are_refused() -> None:
    config = valid_config()
    config.profiles[0].plugin_config[0].args = InterPodAffinityArgs()
    [error] = validate(config)
    assert error.startswith("profiles[0].pluginConfig[0].args: Invalid value: ")
    assert error.endswith(": has to match plugin args")


def test_unknown_plugin_names_are_refused_when_the_registry_is_given() -> None:
    config = valid_config()
    config.profiles[0].plugins.filter.enabled.append(Plugin("Foo"))
    known = {"CustomSort", "CustomBind", "DefaultPreemption"}
    assert validate(config, known) == [
        'profiles[0].plugins.filter.enabled[0]: Invalid value: "Foo": plugin "Foo" does not exist'
    ]


def test_unknown_plugin_names_pass_without_a_registry() -> None:
    config = valid_config()
    config.profiles[0].plugins.filter.enabled.append(Plugin("Foo"))
    assert validate(config) == []


# TestValidateDefaultPreemptionArgs
@pytest.mark.parametrize(
    ("percentage", "absolute", "expected"),
    [
        (10, 100, []),
        (-1, 100, ["minCandidateNodesPercentage: Invalid value: -1: not in valid range [0, 100]"]),
        (
            900,
            100,
            ["minCandidateNodesPercentage: Invalid value: 900: not in valid range [0, 100]"],
        ),
        (20, -1, ["minCandidateNodesAbsolute: Invalid value: -1: not in valid range [0, inf)"]),
        (
            0,
            0,
            [
                "minCandidateNodesPercentage: Invalid value: 0: "
                "cannot be zero at the same time as minCandidateNodesAbsolute",
                "minCandidateNodesAbsolute: Invalid value: 0: "
                "cannot be zero at the same time as minCandidateNodesPercentage",
            ],
        ),
        (
            -1,
            -1,
            [
                "minCandidateNodesPercentage: Invalid value: -1: not in valid range [0, 100]",
                "minCandidateNodesAbsolute: Invalid value: -1: not in valid range [0, inf)",
            ],
        ),
    ],
    ids=[
        "valid args (default)",
        "negative minCandidateNodesPercentage",
        "minCandidateNodesPercentage over 100",
        "negative minCandidateNodesAbsolute",
        "all zero",
        "both negative",
    ],
)
def test_validate_default_preemption_args(
    percentage: int, absolute: int, expected: list[str]
) -> None:
    assert (
        validate_default_preemption_args("", DefaultPreemptionArgs(percentage, absolute))
        == expected
    )


# TestValidateInterPodAffinityArgs
@pytest.mark.parametrize(
    ("weight", "expected"),
    [
        (10, []),
        (-1, ["hardPodAffinityWeight: Invalid value: -1: not in valid range [0, 100]"]),
        (101, ["hardPodAffinityWeight: Invalid value: 101: not in valid range [0, 100]"]),
    ],
    ids=["valid args", "less than min", "more than max"],
)
def test_validate_inter_pod_affinity_args(weight: int, expected: list[str]) -> None:
    assert validate_inter_pod_affinity_args("", InterPodAffinityArgs(weight)) == expected


def constraint(
    max_skew: int = 1,
    key: str = "node",
    when: str = "DoNotSchedule",
    selector: LabelSelector | None = None,
) -> TopologySpreadConstraint:
    return TopologySpreadConstraint(max_skew, key, when, label_selector=selector)


# TestValidatePodTopologySpreadArgs: (name, args, expected)
SPREAD_CASES: list[tuple[str, PodTopologySpreadArgs, list[str]]] = [
    (
        "valid config",
        PodTopologySpreadArgs([constraint(), constraint(2, "zone", "ScheduleAnyway")], "List"),
        [],
    ),
    (
        "maxSkew less than zero",
        PodTopologySpreadArgs([constraint(-1)], "List"),
        ["defaultConstraints[0].maxSkew: Invalid value: -1: not in valid range (0, inf)"],
    ),
    (
        "empty topology key",
        PodTopologySpreadArgs([constraint(key="")], "List"),
        ["defaultConstraints[0].topologyKey: Required value: can not be empty"],
    ),
    (
        "whenUnsatisfiable is empty",
        PodTopologySpreadArgs([constraint(when="")], "List"),
        ["defaultConstraints[0].whenUnsatisfiable: Required value: can not be empty"],
    ),
    (
        "whenUnsatisfiable contains unsupported action",
        PodTopologySpreadArgs([constraint(when="unknown action")], "List"),
        [
            'defaultConstraints[0].whenUnsatisfiable: Unsupported value: "unknown action": '
            'supported values: "DoNotSchedule", "ScheduleAnyway"'
        ],
    ),
    (
        "duplicated constraints",
        PodTopologySpreadArgs([constraint(), constraint(2)], "List"),
        ['defaultConstraints[1]: Duplicate value: "{node, DoNotSchedule}"'],
    ),
    (
        "label selector present",
        PodTopologySpreadArgs([constraint(key="key", selector=LabelSelector({"a": "b"}))], "List"),
        [
            "defaultConstraints[0].labelSelector: Forbidden: "
            "constraint must not define a selector, as they deduced for each pod"
        ],
    ),
    ("list default constraints, no constraints", PodTopologySpreadArgs([], "List"), []),
    ("system default constraints", PodTopologySpreadArgs([], "System"), []),
    (
        "wrong constraints",
        PodTopologySpreadArgs([], "unknown"),
        ['defaultingType: Unsupported value: "unknown": supported values: "System", "List"'],
    ),
    (
        "system default constraints, but has constraints",
        PodTopologySpreadArgs([constraint(key="key")], "System"),
        ['defaultingType: Invalid value: "System": when .defaultConstraints are not empty'],
    ),
]


@pytest.mark.parametrize(
    ("args", "expected"),
    [case[1:] for case in SPREAD_CASES],
    ids=[case[0] for case in SPREAD_CASES],
)
def test_validate_pod_topology_spread_args(
    args: PodTopologySpreadArgs, expected: list[str]
) -> None:
    assert validate_pod_topology_spread_args("", args) == expected


def test_topology_key_must_be_a_qualified_name() -> None:
    args = PodTopologySpreadArgs([constraint(key="a/b/c")], "List")
    [error] = validate_pod_topology_spread_args("", args)
    assert error.startswith(
        'defaultConstraints[0].topologyKey: Invalid value: "a/b/c": a valid label key must consist'
    )


# TestValidateNodeResourcesBalancedAllocationArgs
@pytest.mark.parametrize(
    ("resources", "expected"),
    [
        ([ResourceSpec("cpu", 1), ResourceSpec("memory", 1)], []),
        (
            [ResourceSpec("cpu", 2), ResourceSpec("memory", 1)],
            ["resources[0].weight: Invalid value: 2: must be 1"],
        ),
        (
            [ResourceSpec("cpu", 1), ResourceSpec("cpu", 1)],
            ['resources[1].name: Duplicate value: "cpu"'],
        ),
    ],
    ids=["valid config", "invalid config", "repeated resources"],
)
def test_validate_node_resources_balanced_allocation_args(
    resources: list[ResourceSpec], expected: list[str]
) -> None:
    args = NodeResourcesBalancedAllocationArgs(resources)
    assert validate_node_resources_balanced_allocation_args("", args) == expected


def test_validate_node_affinity_args_accepts_a_valid_added_affinity() -> None:
    affinity = NodeAffinity(
        required=NodeSelector(
            (NodeSelectorTerm((NodeSelectorRequirement("label-1", "In", ("label-1-val",)),)),)
        ),
        preferred=(
            PreferredSchedulingTerm(
                1,
                NodeSelectorTerm(
                    match_fields=(NodeSelectorRequirement("metadata.name", "In", ("node-1",)),)
                ),
            ),
        ),
    )
    assert validate_node_affinity_args("", NodeAffinityArgs()) == []
    assert validate_node_affinity_args("", NodeAffinityArgs(affinity)) == []


def test_validate_node_affinity_args_reports_parse_errors_at_their_paths() -> None:
    # TestValidateNodeAffinityArgs "invalid added affinity".
    affinity = NodeAffinity(
        required=NodeSelector(
            (
                NodeSelectorTerm(
                    (NodeSelectorRequirement("invalid/label/key", "In", ("label-1-val",)),)
                ),
            )
        ),
        preferred=(
            PreferredSchedulingTerm(
                1,
                NodeSelectorTerm(
                    match_fields=(
                        NodeSelectorRequirement("metadata.name", "In", ("node-1", "node-2")),
                    )
                ),
            ),
        ),
    )
    errors = validate_node_affinity_args("", NodeAffinityArgs(affinity))
    assert [e.split(": ")[0] for e in errors] == [
        "addedAffinity.requiredDuringSchedulingIgnoredDuringExecution.nodeSelectorTerms[0]"
        ".matchExpressions[0].key",
        "addedAffinity.preferredDuringSchedulingIgnoredDuringExecution[0].matchFields[0].values",
    ]
    assert errors[1].endswith(
        ': Invalid value: []string{"node-1", "node-2"}: must have one element'
    )


# TestValidateVolumeBindingArgs (StorageCapacityScoring off, as in v1.34)
@pytest.mark.parametrize(
    ("args", "expected"),
    [
        (VolumeBindingArgs(0), []),
        (VolumeBindingArgs(10), []),
        (
            VolumeBindingArgs(-10),
            [
                "bindTimeoutSeconds: Invalid value: -10: "
                "invalid BindTimeoutSeconds, should not be a negative value"
            ],
        ),
        (
            VolumeBindingArgs(10, [UtilizationShapePoint(1, 1), UtilizationShapePoint(3, 3)]),
            [
                "shape: Invalid value: []config.UtilizationShapePoint{"
                "config.UtilizationShapePoint{Utilization:1, Score:1}, "
                "config.UtilizationShapePoint{Utilization:3, Score:3}}: "
                "unexpected field `shape`, remove it or turn on the feature gate "
                "StorageCapacityScoring"
            ],
        ),
    ],
    ids=[
        "zero is a valid config",
        "positive value is valid config",
        "negative value is invalid config",
        "error if the shape is not nil when the feature is off",
    ],
)
def test_validate_volume_binding_args(args: VolumeBindingArgs, expected: list[str]) -> None:
    assert validate_volume_binding_args("", args) == expected


def fit(
    strategy_type: str = "LeastAllocated",
    resources: list[ResourceSpec] | None = None,
    shape: list[UtilizationShapePoint] | None = None,
    ignored_groups: list[str] | None = None,
) -> NodeResourcesFitArgs:
    return NodeResourcesFitArgs(
        ignored_resource_groups=ignored_groups or [],
        scoring_strategy=ScoringStrategy(
            strategy_type,
            resources if resources is not None else [ResourceSpec("cpu", 1)],
            None if shape is None else RequestedToCapacityRatioParam(shape),
        ),
    )


RATIO = "RequestedToCapacityRatio"
SHAPE_PATH = "scoringStrategy.requestedToCapacityRatio.shape"

# TestValidateNodeResourcesFitArgs: (name, args, expected)
FIT_CASES: list[tuple[str, NodeResourcesFitArgs, list[str]]] = [
    ("valid config", fit(), []),
    (
        "IgnoredResourceGroups: contains '/'",
        fit(ignored_groups=["example.com/aaa"]),
        [
            'ignoredResourceGroups[0]: Invalid value: "example.com/aaa": '
            "resource group name can't contain '/'"
        ],
    ),
    (
        "ScoringStrategy: type is unsupported",
        fit("Invalid"),
        [
            'scoringStrategy.type: Unsupported value: "Invalid": supported values: '
            '"LeastAllocated", "MostAllocated", "RequestedToCapacityRatio"'
        ],
    ),
    (
        "ScoringStrategy: resources weight is less than 1",
        fit(resources=[ResourceSpec("cpu", 0)]),
        [
            "scoringStrategy.resources[0].weight: Invalid value: 0: "
            "resource weight of cpu not in valid range (0, 100]"
        ],
    ),
    (
        "ScoringStrategy: resources weight is more than 100",
        fit(resources=[ResourceSpec("cpu", 101)]),
        [
            "scoringStrategy.resources[0].weight: Invalid value: 101: "
            "resource weight of cpu not in valid range (0, 100]"
        ],
    ),
    (
        "ScoringStrategy: RequestedToCapacityRatio is nil",
        fit(RATIO),
        [
            "scoringStrategy.requestedToCapacityRatio: Required value: "
            "must be specified when type is RequestedToCapacityRatio"
        ],
    ),
    (
        "ScoringStrategy: RequestedToCapacityRatio is set for another type",
        fit(shape=[UtilizationShapePoint(0, 0)]),
        [
            "scoringStrategy.requestedToCapacityRatio: Forbidden: "
            "must be nil when type is not RequestedToCapacityRatio"
        ],
    ),
    (
        "RequestedToCapacityRatio: empty shape",
        fit(RATIO, shape=[]),
        [f"{SHAPE_PATH}: Required value: at least one point must be specified"],
    ),
    (
        "RequestedToCapacityRatio: shape points are not sorted",
        fit(RATIO, shape=[UtilizationShapePoint(10, 1), UtilizationShapePoint(10, 2)]),
        [
            f"{SHAPE_PATH}[1].utilization: Invalid value: 10: "
            "values must be sorted in increasing order"
        ],
    ),
    (
        "RequestedToCapacityRatio: utilization and score out of range",
        fit(RATIO, shape=[UtilizationShapePoint(120, 11)]),
        [
            f"{SHAPE_PATH}[0].utilization: Invalid value: 120: not in valid range [0, 100]",
            f"{SHAPE_PATH}[0].score: Invalid value: 11: not in valid range [0, 10]",
        ],
    ),
    (
        "RequestedToCapacityRatio: valid shape",
        fit(RATIO, shape=[UtilizationShapePoint(0, 0), UtilizationShapePoint(100, 10)]),
        [],
    ),
]


@pytest.mark.parametrize(
    ("args", "expected"),
    [case[1:] for case in FIT_CASES],
    ids=[case[0] for case in FIT_CASES],
)
def test_validate_node_resources_fit_args(args: NodeResourcesFitArgs, expected: list[str]) -> None:
    assert validate_node_resources_fit_args("", args) == expected


@pytest.mark.parametrize(
    ("args", "expected"),
    [
        (DynamicResourcesArgs(10.0), []),
        (DynamicResourcesArgs(0.0), []),
        (
            DynamicResourcesArgs(-1.0),
            ["filterTimeout: Invalid value: -1s: must be zero or positive"],
        ),
        (
            DynamicResourcesArgs(10.0, 600.0),
            [
                "bindingTimeout: Forbidden: "
                "DRADeviceBindingConditions or DRAResourceClaimDeviceStatus "
                "feature gate is disabled"
            ],
        ),
    ],
    ids=["default", "zero disables the timeout", "negative", "binding timeout without gates"],
)
def test_validate_dynamic_resources_args(args: DynamicResourcesArgs, expected: list[str]) -> None:
    assert validate_dynamic_resources_args("", args) == expected


def test_args_errors_carry_the_profile_path() -> None:
    config = valid_config()
    config.profiles[0].plugin_config.append(
        PluginConfig("NodeResourcesFit", fit(resources=[ResourceSpec("cpu", 0)]))
    )
    assert validate(config) == [
        "profiles[0].pluginConfig[1].args.scoringStrategy.resources[0].weight: Invalid value: 0: "
        "resource weight of cpu not in valid range (0, 100]"
    ]
