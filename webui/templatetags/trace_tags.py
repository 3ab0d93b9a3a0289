"""Where each plugin and extension point comes from: upstream's Go file and schedviz's module.

Every plugin module of ``schedviz/scheduler`` names in its docstring the upstream file it mirrors
(``tests/webui/test_trace_views.py`` checks that this table agrees); the trace pages link there so
a learner can read the two side by side.
"""

from __future__ import annotations

from functools import cache

from django import template

from schedviz.outoftree import coscheduling
from schedviz.outoftree.registry import new_registry
from schedviz.scheduler.framework.plugins import names

register = template.Library()

UPSTREAM_VERSION = "v1.34.0"
UPSTREAM_BLOB = f"https://github.com/kubernetes/kubernetes/blob/{UPSTREAM_VERSION}/"
SCHEDULER_PLUGINS_BLOB = "https://github.com/kubernetes-sigs/scheduler-plugins/blob/master/"

_PLUGINS_DIR = "pkg/scheduler/framework/plugins/"
# Plugin name -> the upstream file it mirrors, relative to the kubernetes repository.
PLUGIN_SOURCES: dict[str, str] = {
    names.PRIORITY_SORT: "queuesort/priority_sort.go",
    names.DEFAULT_BINDER: "defaultbinder/default_binder.go",
    names.DEFAULT_PREEMPTION: "defaultpreemption/default_preemption.go",
    names.DYNAMIC_RESOURCES: "dynamicresources/dynamicresources.go",
    names.IMAGE_LOCALITY: "imagelocality/image_locality.go",
    names.INTER_POD_AFFINITY: "interpodaffinity/plugin.go",
    names.NODE_AFFINITY: "nodeaffinity/node_affinity.go",
    names.NODE_NAME: "nodename/node_name.go",
    names.NODE_PORTS: "nodeports/node_ports.go",
    names.NODE_RESOURCES_BALANCED_ALLOCATION: "noderesources/balanced_allocation.go",
    names.NODE_RESOURCES_FIT: "noderesources/fit.go",
    names.NODE_UNSCHEDULABLE: "nodeunschedulable/node_unschedulable.go",
    names.NODE_VOLUME_LIMITS: "nodevolumelimits/csi.go",
    names.POD_TOPOLOGY_SPREAD: "podtopologyspread/plugin.go",
    names.SCHEDULING_GATES: "schedulinggates/scheduling_gates.go",
    names.TAINT_TOLERATION: "tainttoleration/taint_toleration.go",
    names.VOLUME_BINDING: "volumebinding/volume_binding.go",
    names.VOLUME_RESTRICTIONS: "volumerestrictions/volume_restrictions.go",
    names.VOLUME_ZONE: "volumezone/volume_zone.go",
}
# Out-of-tree plugins live in kubernetes-sigs/scheduler-plugins.
OUT_OF_TREE_SOURCES: dict[str, str] = {coscheduling.NAME: "pkg/coscheduling/coscheduling.go"}

# What is not a plugin: the framework runtime runs every extension point, schedule_one the
# cycle, the scheduling queue holds the pods. Name -> (upstream file, schedviz module).
PARTS: dict[str, tuple[str, str]] = {
    "framework": (
        "pkg/scheduler/framework/runtime/framework.go",
        "schedviz/scheduler/framework/runtime/framework.py",
    ),
    "cycle": ("pkg/scheduler/schedule_one.go", "schedviz/scheduler/schedule_one.py"),
    "queue": (
        "pkg/scheduler/backend/queue/scheduling_queue.go",
        "schedviz/scheduler/backend/queue/scheduling_queue.py",
    ),
}


@register.filter
def plugin_source_url(plugin: str) -> str:
    """The upstream file a plugin mirrors ("" for a plugin schedviz does not know)."""
    if plugin in PLUGIN_SOURCES:
        return UPSTREAM_BLOB + _PLUGINS_DIR + PLUGIN_SOURCES[plugin]
    if plugin in OUT_OF_TREE_SOURCES:
        return SCHEDULER_PLUGINS_BLOB + OUT_OF_TREE_SOURCES[plugin]
    return ""


@cache
def _plugin_modules() -> dict[str, str]:
    return {
        name: factory.__module__.replace(".", "/") + ".py"
        for name, factory in new_registry().items()
    }


@register.filter
def plugin_module(plugin: str) -> str:
    """The schedviz module of a plugin, as a repository path ("" if unknown)."""
    return _plugin_modules().get(plugin, "")


@register.simple_tag
def part_source_url(part: str) -> str:
    """The upstream file of a part of the scheduler named in PARTS."""
    return UPSTREAM_BLOB + PARTS[part][0]


@register.simple_tag
def part_module(part: str) -> str:
    """The schedviz module of a part of the scheduler named in PARTS."""
    return PARTS[part][1]
