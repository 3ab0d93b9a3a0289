"""Validation of the internal KubeSchedulerConfiguration and of the in-tree plugin args.

Mirrors pkg/scheduler/apis/config/validation/validation.go and validation_pluginargs.go at
Kubernetes v1.34. The field errors (field.Error), label-key checks and the node affinity parser
(component-helpers) are the project's own, from ``schedviz.kube``. What differs:
- the process-level checks (leaderElection, clientConnection) are gone with those settings;
- NodeResourcesFit args are validated here with their full path: upstream's table keys them by
  "NodeResourcesFitArgs" so only the plugin factory (NewFit) catches them, at start-up;
- plugin names unknown to the registry (``known_plugins``) are reported here, at their path;
  upstream's framework refuses them when it builds the profile ("... does not exist");
- errors are strings in upstream's field.Error format, in a stable order (upstream walks the
  extension points of a map, in random order).
"""

from __future__ import annotations

from collections.abc import Collection, Iterable, Sequence
from typing import Any

from schedviz.kube import errors as fe
from schedviz.kube.decode.meta import validate_label_name as kube_validate_label_name
from schedviz.kube.decode.reader import child
from schedviz.kube.decode.resources import is_extended_resource
from schedviz.kube.decode.validation import is_qualified_name
from schedviz.kube.errors import Raw, aggregate_message, go_quote
from schedviz.kube.nodeaffinity import NodeSelectorMatcher, PreferredSchedulingTerms
from schedviz.kube.objects import NodeAffinity
from schedviz.scheduler.apis.config.types import (
    API_VERSION,
    EXTENSION_POINTS,
    MAX_CUSTOM_PRIORITY_SCORE,
    Args,
    DynamicResourcesArgs,
    Extender,
    KubeSchedulerConfiguration,
    KubeSchedulerProfile,
    Plugin,
    PluginSet,
    format_duration,
)
from schedviz.scheduler.apis.config.types_pluginargs import (
    LEAST_ALLOCATED,
    LIST_DEFAULTING,
    MOST_ALLOCATED,
    REQUESTED_TO_CAPACITY_RATIO,
    SYSTEM_DEFAULTING,
    DefaultPreemptionArgs,
    InterPodAffinityArgs,
    NodeAffinityArgs,
    NodeResourcesBalancedAllocationArgs,
    NodeResourcesFitArgs,
    PodTopologySpreadArgs,
    ResourceSpec,
    UtilizationShapePoint,
    VolumeBindingArgs,
)
from schedviz.scheduler.framework.plugins import names

# Plugins removed from kube-scheduler, refused by name in v1 (invalidPluginsByVersion).
INVALID_PLUGINS_V1 = frozenset({"AzureDiskLimits", "CinderLimits", "EBSLimits", "GCEPDLimits"})

SUPPORTED_SCORING_STRATEGY_TYPES = (LEAST_ALLOCATED, MOST_ALLOCATED, REQUESTED_TO_CAPACITY_RATIO)


class ConfigError(ValueError):
    """A configuration refused whole, with every reason (an apimachinery aggregate)."""

    def __init__(self, errors: Sequence[str]) -> None:
        self.errors = list(errors)
        super().__init__(aggregate_message(self.errors))


# ---------------------------------------------------------------------------------------------
# field.Error constructors, as strings.


def invalid(path: str, value: Any, detail: str) -> str:
    return str(fe.invalid(path, value, detail))


def required(path: str, detail: str = "") -> str:
    return str(fe.required(path, detail))


def forbidden(path: str, detail: str) -> str:
    return str(fe.forbidden(path, detail))


def duplicate(path: str, value: Any) -> str:
    return str(fe.duplicate(path, value))


def not_supported(path: str, value: Any, valid: Sequence[str]) -> str:
    return str(fe.not_supported(path, value, valid))


def _unique(errors: Iterable[str]) -> list[str]:
    """ErrorList.ToAggregate drops repeated messages."""
    return list(dict.fromkeys(errors))


def validate_label_name(path: str, name: str) -> list[str]:
    """metav1validation.ValidateLabelName: one error per broken rule."""
    return [str(error) for error in kube_validate_label_name(name, path)]


# ---------------------------------------------------------------------------------------------
# validation_pluginargs.go


def validate_default_preemption_args(path: str, args: DefaultPreemptionArgs) -> list[str]:
    errors: list[str] = []
    percentage_path = child(path, "minCandidateNodesPercentage")
    absolute_path = child(path, "minCandidateNodesAbsolute")
    percentage = args.min_candidate_nodes_percentage
    absolute = args.min_candidate_nodes_absolute
    if percentage < 0 or percentage > 100:
        errors.append(invalid(percentage_path, percentage, "not in valid range [0, 100]"))
    if absolute < 0:
        errors.append(invalid(absolute_path, absolute, "not in valid range [0, inf)"))
    if percentage == 0 and absolute == 0:
        errors.append(
            invalid(
                percentage_path,
                percentage,
                "cannot be zero at the same time as minCandidateNodesAbsolute",
            )
        )
        errors.append(
            invalid(
                absolute_path,
                absolute,
                "cannot be zero at the same time as minCandidateNodesPercentage",
            )
        )
    return _unique(errors)


def validate_inter_pod_affinity_args(path: str, args: InterPodAffinityArgs) -> list[str]:
    weight = args.hard_pod_affinity_weight
    if weight < 0 or weight > 100:
        return [
            invalid(child(path, "hardPodAffinityWeight"), weight, "not in valid range [0, 100]")
        ]
    return []


def _validate_topology_key(path: str, key: str) -> list[str]:
    if not key:
        return [required(path, "can not be empty")]
    return validate_label_name(path, key)


def _validate_when_unsatisfiable(path: str, value: str) -> list[str]:
    supported = ("DoNotSchedule", "ScheduleAnyway")
    if not value:
        return [required(path, "can not be empty")]
    if value not in supported:
        return [not_supported(path, value, supported)]
    return []


def validate_pod_topology_spread_args(path: str, args: PodTopologySpreadArgs) -> list[str]:
    """It replicates the API's constraint checks, and refuses a labelSelector."""
    errors: list[str] = []
    defaulting_path = child(path, "defaultingType")
    if args.defaulting_type not in (SYSTEM_DEFAULTING, LIST_DEFAULTING):
        errors.append(
            not_supported(
                defaulting_path, args.defaulting_type, (SYSTEM_DEFAULTING, LIST_DEFAULTING)
            )
        )
    elif args.defaulting_type == SYSTEM_DEFAULTING and args.default_constraints:
        errors.append(
            invalid(defaulting_path, args.defaulting_type, "when .defaultConstraints are not empty")
        )
    constraints_path = child(path, "defaultConstraints")
    for i, constraint in enumerate(args.default_constraints):
        p = f"{constraints_path}[{i}]"
        if constraint.max_skew <= 0:
            errors.append(
                invalid(child(p, "maxSkew"), constraint.max_skew, "not in valid range (0, inf)")
            )
        errors.extend(_validate_topology_key(child(p, "topologyKey"), constraint.topology_key))
        errors.extend(
            _validate_when_unsatisfiable(
                child(p, "whenUnsatisfiable"), constraint.when_unsatisfiable
            )
        )
        if constraint.label_selector is not None:
            errors.append(
                forbidden(
                    child(p, "labelSelector"),
                    "constraint must not define a selector, as they deduced for each pod",
                )
            )
        for other in args.default_constraints[:i]:
            if (other.topology_key, other.when_unsatisfiable) == (
                constraint.topology_key,
                constraint.when_unsatisfiable,
            ):
                errors.append(
                    duplicate(
                        p,
                        f"{{{constraint.topology_key}, {constraint.when_unsatisfiable}}}",
                    )
                )
                break
    return _unique(errors)


def _validate_function_shape(path: str, shape: list[UtilizationShapePoint]) -> list[str]:
    if not shape:
        return [required(path, "at least one point must be specified")]
    errors: list[str] = []
    for i in range(1, len(shape)):
        if shape[i - 1].utilization >= shape[i].utilization:
            errors.append(
                invalid(
                    f"{path}[{i}].utilization",
                    shape[i].utilization,
                    "values must be sorted in increasing order",
                )
            )
            break
    for i, point in enumerate(shape):
        if point.utilization < 0 or point.utilization > 100:
            errors.append(
                invalid(
                    f"{path}[{i}].utilization", point.utilization, "not in valid range [0, 100]"
                )
            )
        if point.score < 0 or point.score > MAX_CUSTOM_PRIORITY_SCORE:
            errors.append(
                invalid(
                    f"{path}[{i}].score",
                    point.score,
                    f"not in valid range [0, {MAX_CUSTOM_PRIORITY_SCORE}]",
                )
            )
    return errors


def _validate_resources(path: str, resources: list[ResourceSpec]) -> list[str]:
    return [
        invalid(
            f"{path}[{i}].weight",
            r.weight,
            f"resource weight of {r.name} not in valid range (0, 100]",
        )
        for i, r in enumerate(resources)
        if r.weight <= 0 or r.weight > 100
    ]


def validate_node_resources_balanced_allocation_args(
    path: str, args: NodeResourcesBalancedAllocationArgs
) -> list[str]:
    errors: list[str] = []
    seen: set[str] = set()
    for i, resource in enumerate(args.resources):
        p = f"{child(path, 'resources')}[{i}]"
        if resource.name in seen:
            errors.append(duplicate(child(p, "name"), resource.name))
        else:
            seen.add(resource.name)
        if resource.weight != 1:
            errors.append(invalid(child(p, "weight"), resource.weight, "must be 1"))
    return _unique(errors)


def validate_node_resources_fit_args(path: str, args: NodeResourcesFitArgs) -> list[str]:
    errors: list[str] = []
    for i, resource in enumerate(args.ignored_resources):
        errors.extend(validate_label_name(f"{child(path, 'ignoredResources')}[{i}]", resource))
    for i, group in enumerate(args.ignored_resource_groups):
        p = f"{child(path, 'ignoredResourceGroups')}[{i}]"
        if "/" in group:
            errors.append(invalid(p, group, "resource group name can't contain '/'"))
        errors.extend(validate_label_name(p, group))
    strategy_path = child(path, "scoringStrategy")
    strategy = args.scoring_strategy
    if strategy.type not in SUPPORTED_SCORING_STRATEGY_TYPES:
        errors.append(
            not_supported(
                child(strategy_path, "type"),
                strategy.type,
                sorted(SUPPORTED_SCORING_STRATEGY_TYPES),
            )
        )
    errors.extend(_validate_resources(child(strategy_path, "resources"), strategy.resources))
    ratio_path = child(strategy_path, "requestedToCapacityRatio")
    if strategy.type == REQUESTED_TO_CAPACITY_RATIO:
        if strategy.requested_to_capacity_ratio is None:
            errors.append(
                required(ratio_path, "must be specified when type is RequestedToCapacityRatio")
            )
        else:
            errors.extend(
                _validate_function_shape(
                    child(ratio_path, "shape"), strategy.requested_to_capacity_ratio.shape
                )
            )
    elif strategy.requested_to_capacity_ratio is not None:
        errors.append(
            forbidden(ratio_path, "must be nil when type is not RequestedToCapacityRatio")
        )
    return _unique(errors)


def validate_node_affinity(path: str, affinity: NodeAffinity) -> list[str]:
    """nodeaffinity.NewNodeSelector and NewPreferredSchedulingTerms parse errors, at their paths.

    As upstream, empty and zero-weight terms are skipped, and a preferred term's path has no
    ".preference".
    """
    errors: list[str] = []
    if affinity.required is not None:
        required_path = child(path, "requiredDuringSchedulingIgnoredDuringExecution")
        errors.extend(NodeSelectorMatcher(affinity.required, required_path).errors)
    preferred_path = child(path, "preferredDuringSchedulingIgnoredDuringExecution")
    errors.extend(PreferredSchedulingTerms(affinity.preferred, preferred_path).errors)
    return errors


def validate_node_affinity_args(path: str, args: NodeAffinityArgs) -> list[str]:
    if args.added_affinity is None:
        return []
    return validate_node_affinity(child(path, "addedAffinity"), args.added_affinity)


def validate_volume_binding_args(path: str, args: VolumeBindingArgs) -> list[str]:
    """StorageCapacityScoring is alpha in v1.34 (off): a shape is refused."""
    errors: list[str] = []
    if args.bind_timeout_seconds < 0:
        errors.append(
            invalid(
                child(path, "bindTimeoutSeconds"),
                args.bind_timeout_seconds,
                "invalid BindTimeoutSeconds, should not be a negative value",
            )
        )
    if args.shape:
        shape = ", ".join(
            f"config.UtilizationShapePoint{{Utilization:{p.utilization}, Score:{p.score}}}"
            for p in args.shape
        )
        errors.append(
            invalid(
                child(path, "shape"),
                Raw(f"[]config.UtilizationShapePoint{{{shape}}}"),
                "unexpected field `shape`, remove it or turn on the feature gate "
                "StorageCapacityScoring",
            )
        )
    return errors


def validate_dynamic_resources_args(path: str, args: DynamicResourcesArgs) -> list[str]:
    """DRASchedulerFilterTimeout is beta (on) in v1.34, DRADeviceBindingConditions alpha (off)."""
    errors: list[str] = []
    if args.filter_timeout_seconds is not None and args.filter_timeout_seconds < 0:
        errors.append(
            invalid(
                child(path, "filterTimeout"),
                Raw(format_duration(args.filter_timeout_seconds)),
                "must be zero or positive",
            )
        )
    if args.binding_timeout_seconds is not None:
        errors.append(
            forbidden(
                child(path, "bindingTimeout"),
                "DRADeviceBindingConditions or DRAResourceClaimDeviceStatus feature gate is "
                "disabled",
            )
        )
    return errors


def validate_args(path: str, name: str, args: Args | None) -> list[str]:
    """The args check of one in-tree plugin (validatePluginConfig's table)."""
    expected: dict[str, type] = {
        names.DEFAULT_PREEMPTION: DefaultPreemptionArgs,
        names.INTER_POD_AFFINITY: InterPodAffinityArgs,
        names.NODE_AFFINITY: NodeAffinityArgs,
        names.NODE_RESOURCES_BALANCED_ALLOCATION: NodeResourcesBalancedAllocationArgs,
        names.NODE_RESOURCES_FIT: NodeResourcesFitArgs,
        names.POD_TOPOLOGY_SPREAD: PodTopologySpreadArgs,
        names.VOLUME_BINDING: VolumeBindingArgs,
        names.DYNAMIC_RESOURCES: DynamicResourcesArgs,
    }
    if name not in expected:
        return []
    if not isinstance(args, expected[name]):
        return [invalid(path, Raw(repr(args)), "has to match plugin args")]
    if isinstance(args, DefaultPreemptionArgs):
        return validate_default_preemption_args(path, args)
    if isinstance(args, InterPodAffinityArgs):
        return validate_inter_pod_affinity_args(path, args)
    if isinstance(args, NodeAffinityArgs):
        return validate_node_affinity_args(path, args)
    if isinstance(args, NodeResourcesBalancedAllocationArgs):
        return validate_node_resources_balanced_allocation_args(path, args)
    if isinstance(args, NodeResourcesFitArgs):
        return validate_node_resources_fit_args(path, args)
    if isinstance(args, PodTopologySpreadArgs):
        return validate_pod_topology_spread_args(path, args)
    if isinstance(args, VolumeBindingArgs):
        return validate_volume_binding_args(path, args)
    if isinstance(args, DynamicResourcesArgs):
        return validate_dynamic_resources_args(path, args)
    return []


# ---------------------------------------------------------------------------------------------
# validation.go


def _validate_percentage(path: str, value: int | None) -> list[str]:
    if value is not None and (value < 0 or value > 100):
        return [invalid(path, value, "not in valid range [0-100]")]
    return []


_INVALID_PLUGIN_MESSAGE = (
    f'was invalid in version "{API_VERSION}" (KubeSchedulerConfiguration is version '
    f'"{API_VERSION}")'
)


def _validate_profile(path: str, profile: KubeSchedulerProfile) -> list[str]:
    errors: list[str] = []
    if not profile.scheduler_name:
        errors.append(required(child(path, "schedulerName")))
    errors.extend(
        _validate_percentage(
            child(path, "percentageOfNodesToScore"), profile.percentage_of_nodes_to_score
        )
    )
    # Upstream leaves multiPoint out of this check.
    for point in EXTENSION_POINTS:
        if point == "multiPoint":
            continue
        for i, plugin in enumerate(profile.plugins.get(point).enabled):
            if plugin.name in INVALID_PLUGINS_V1:
                errors.append(
                    invalid(
                        f"{path}.plugins.{point}.enabled[{i}]",
                        plugin.name,
                        _INVALID_PLUGIN_MESSAGE,
                    )
                )
    seen: set[str] = set()
    for i, config in enumerate(profile.plugin_config):
        config_path = f"{path}.pluginConfig[{i}]"
        if config.name in seen:
            errors.append(duplicate(config_path, config.name))
        seen.add(config.name)
        if config.name in INVALID_PLUGINS_V1:
            errors.append(invalid(config_path, config.name, _INVALID_PLUGIN_MESSAGE))
        else:
            errors.extend(validate_args(child(config_path, "args"), config.name, config.args))
    return errors


def _go_plugin_set(plugin_set: PluginSet) -> Raw:
    """%#v of a config.PluginSet, as upstream prints it."""

    def plugins(items: list[Plugin]) -> str:
        if not items:
            return "[]config.Plugin(nil)"
        inner = ", ".join(
            f"config.Plugin{{Name:{go_quote(p.name)}, Weight:{p.weight}}}" for p in items
        )
        return f"[]config.Plugin{{{inner}}}"

    return Raw(
        f"config.PluginSet{{Enabled:{plugins(plugin_set.enabled)}, "
        f"Disabled:{plugins(plugin_set.disabled)}}}"
    )


def _validate_common_queue_sort(profiles: list[KubeSchedulerProfile]) -> list[str]:
    errors: list[str] = []
    canon = profiles[0].plugins.queue_sort
    queue_sort_name = canon.enabled[0].name if canon.enabled else ""
    if len(canon.enabled) > 1:
        errors.append(
            invalid(
                "profiles[0].plugins.queueSort.Enabled",
                len(canon.enabled),
                "only one queue sort plugin can be enabled",
            )
        )
    queue_sort_args = None
    for config in profiles[0].plugin_config:
        if queue_sort_name and config.name == queue_sort_name:
            queue_sort_args = config.args
    for i, profile in enumerate(profiles[1:], start=1):
        current = profile.plugins.queue_sort
        if current != canon:
            errors.append(
                invalid(
                    f"profiles[{i}].plugins.queueSort",
                    _go_plugin_set(current),
                    "must be the same for all profiles",
                )
            )
        for config in profile.plugin_config:
            if config.name == queue_sort_name and config.args != queue_sort_args:
                errors.append(
                    invalid(
                        f"profiles[{i}].pluginConfig.args",
                        Raw(repr(config.args)),
                        "queueSort must be the same for all profiles",
                    )
                )
    return errors


def _validate_extenders(extenders: list[Extender]) -> list[str]:
    errors: list[str] = []
    binders = 0
    managed: set[str] = set()
    for i, extender in enumerate(extenders):
        path = f"extenders[{i}]"
        if extender.prioritize_verb and extender.weight <= 0:
            errors.append(
                invalid(
                    child(path, "weight"),
                    extender.weight,
                    "must have a positive weight applied to it",
                )
            )
        if extender.bind_verb:
            binders += 1
        for j, resource in enumerate(extender.managed_resources):
            name_path = f"{path}.managedResources[{j}].name"
            errors.extend(_validate_extended_resource_name(name_path, resource.name))
            if resource.name in managed:
                errors.append(
                    invalid(name_path, resource.name, "duplicate extender managed resource name")
                )
            managed.add(resource.name)
    if binders > 1:
        errors.append(
            invalid(
                "extenders",
                f"found {binders} extenders implementing bind",
                "only one extender can implement bind",
            )
        )
    return errors


def _validate_extended_resource_name(path: str, name: str) -> list[str]:
    errors = [invalid(path, name, msg) for msg in is_qualified_name(name)]
    if errors:
        return errors
    if not is_extended_resource(name):
        return [invalid(path, name, "is an invalid extended resource name")]
    return []


def _validate_known_plugins(
    profiles: list[KubeSchedulerProfile], known_plugins: Collection[str]
) -> list[str]:
    errors: list[str] = []
    for i, profile in enumerate(profiles):
        for point in EXTENSION_POINTS:
            for j, plugin in enumerate(profile.plugins.get(point).enabled):
                if plugin.name not in known_plugins:
                    errors.append(
                        invalid(
                            f"profiles[{i}].plugins.{point}.enabled[{j}]",
                            plugin.name,
                            f"plugin {go_quote(plugin.name)} does not exist",
                        )
                    )
    return errors


def validate(
    config: KubeSchedulerConfiguration, known_plugins: Collection[str] | None = None
) -> list[str]:
    """ValidateKubeSchedulerConfiguration: every problem, as upstream's field error strings.

    ``known_plugins`` (the registry's names) adds a check of every enabled plugin's name.
    """
    errors: list[str] = []
    if config.parallelism <= 0:
        errors.append(
            invalid(
                "parallelism", config.parallelism, "should be an integer value greater than zero"
            )
        )
    if not config.profiles:
        errors.append(required("profiles"))
    else:
        seen: dict[str, int] = {}
        for i, profile in enumerate(config.profiles):
            path = f"profiles[{i}]"
            errors.extend(_validate_profile(path, profile))
            if profile.scheduler_name in seen:
                errors.append(
                    duplicate(
                        child(path, "schedulerName"),
                        Raw(f"profiles[{seen[profile.scheduler_name]}].schedulerName"),
                    )
                )
            seen[profile.scheduler_name] = i
        errors.extend(_validate_common_queue_sort(config.profiles))
    errors.extend(
        _validate_percentage("percentageOfNodesToScore", config.percentage_of_nodes_to_score)
    )
    if config.pod_initial_backoff_seconds <= 0:
        errors.append(
            invalid(
                "podInitialBackoffSeconds",
                config.pod_initial_backoff_seconds,
                "must be greater than 0",
            )
        )
    if config.pod_max_backoff_seconds < config.pod_initial_backoff_seconds:
        errors.append(
            invalid(
                "podMaxBackoffSeconds",
                config.pod_max_backoff_seconds,
                "must be greater than or equal to PodInitialBackoffSeconds",
            )
        )
    errors.extend(_validate_extenders(config.extenders))
    if known_plugins is not None:
        errors.extend(_validate_known_plugins(config.profiles, known_plugins))
    return errors
