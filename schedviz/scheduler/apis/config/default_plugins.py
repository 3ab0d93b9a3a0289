"""The default plugin set and how a profile's plugins are merged into it.

Mirrors pkg/scheduler/apis/config/v1/default_plugins.go at Kubernetes v1.34, with the feature
gates at their v1.34 defaults: DynamicResourceAllocation is GA and on, so DynamicResources sits
just before DefaultPreemption (without a weight: its scorer came later). Upstream merges the v1
(pointer) types; here the internal types are merged, an unset weight being 0.
"""

from __future__ import annotations

from dataclasses import replace

from schedviz.scheduler.apis.config.types import EXTENSION_POINTS, Plugin, Plugins, PluginSet
from schedviz.scheduler.framework.plugins import names

# getDefaultPlugins' MultiPoint list, in upstream order, with its score weights.
DEFAULT_MULTI_POINT: tuple[tuple[str, int], ...] = (
    (names.SCHEDULING_GATES, 0),
    (names.PRIORITY_SORT, 0),
    (names.NODE_UNSCHEDULABLE, 0),
    (names.NODE_NAME, 0),
    (names.TAINT_TOLERATION, 3),
    (names.NODE_AFFINITY, 2),
    (names.NODE_PORTS, 0),
    (names.NODE_RESOURCES_FIT, 1),
    (names.VOLUME_RESTRICTIONS, 0),
    (names.NODE_VOLUME_LIMITS, 0),
    (names.VOLUME_BINDING, 0),
    (names.VOLUME_ZONE, 0),
    (names.POD_TOPOLOGY_SPREAD, 2),
    (names.INTER_POD_AFFINITY, 2),
    # applyFeatureGates: before DefaultPreemption, so that PostFilter first deallocates an idle
    # ResourceClaim rather than evicting a pod that may be doing useful work.
    (names.DYNAMIC_RESOURCES, 0),
    (names.DEFAULT_PREEMPTION, 0),
    (names.NODE_RESOURCES_BALANCED_ALLOCATION, 1),
    (names.IMAGE_LOCALITY, 1),
    (names.DEFAULT_BINDER, 0),
)

# Disabling this name disables every default plugin of an extension point.
DISABLE_ALL = "*"


def get_default_plugins() -> Plugins:
    """getDefaultPlugins: every default plugin enabled through MultiPoint."""
    enabled = [Plugin(name, weight) for name, weight in DEFAULT_MULTI_POINT]
    return Plugins(multi_point=PluginSet(enabled=enabled))


def merge_plugins(default_plugins: Plugins, custom_plugins: Plugins | None) -> Plugins:
    """mergePlugins: merge a profile's plugins into the defaults, extension point by point."""
    if custom_plugins is None:
        return default_plugins
    merged = {
        attribute: merge_plugin_set(
            getattr(default_plugins, attribute), getattr(custom_plugins, attribute)
        )
        for attribute in EXTENSION_POINTS.values()
    }
    return Plugins(**merged)


def merge_plugin_set(default_set: PluginSet, custom_set: PluginSet) -> PluginSet:
    """mergePluginSet.

    Default plugins keep their place unless disabled ("*" disables them all); a default plugin
    enabled again in the custom set takes the custom entry (its weight) in the default's place;
    the other custom plugins follow in their order. A name enabled twice in the custom set is kept
    twice: the framework rejects it later. Disabled lists are kept (custom first) so that the
    MultiPoint expansion knows which defaults to skip.
    """
    disabled = [Plugin(p.name) for p in (*custom_set.disabled, *default_set.disabled)]
    disabled_names = {p.name for p in disabled}
    # The last custom entry of a name wins, as with upstream's map.
    custom_by_name = {
        plugin.name: (index, plugin) for index, plugin in enumerate(custom_set.enabled)
    }
    replaced: set[int] = set()
    enabled: list[Plugin] = []
    if DISABLE_ALL not in disabled_names:
        for default in default_set.enabled:
            if default.name in disabled_names:
                continue
            if default.name in custom_by_name:
                index, custom = custom_by_name[default.name]
                replaced.add(index)
                default = custom
            enabled.append(replace(default))
    enabled.extend(
        replace(plugin) for index, plugin in enumerate(custom_set.enabled) if index not in replaced
    )
    return PluginSet(enabled=enabled, disabled=disabled)
