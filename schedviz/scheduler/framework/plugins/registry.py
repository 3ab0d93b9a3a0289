"""The in-tree plugins by name.

Mirrors pkg/scheduler/framework/plugins/registry.go (``NewInTreeRegistry``). Out-of-tree plugins
join with ``Registry.merge``, exactly as a custom kube-scheduler build passes
``app.WithPlugin(name, factory)``.
"""

from __future__ import annotations

from schedviz.scheduler.framework.plugins import (
    defaultbinder,
    defaultpreemption,
    dynamicresources,
    imagelocality,
    interpodaffinity,
    names,
    nodeaffinity,
    nodename,
    nodeports,
    nodeunschedulable,
    podtopologyspread,
    prioritysort,
    schedulinggates,
    tainttoleration,
    volumerestrictions,
    volumezone,
)
from schedviz.scheduler.framework.plugins.noderesources import balanced_allocation, fit
from schedviz.scheduler.framework.plugins.nodevolumelimits import csi
from schedviz.scheduler.framework.plugins.volumebinding import volume_binding
from schedviz.scheduler.framework.runtime.registry import Registry


def new_in_tree_registry() -> Registry:
    return Registry(
        {
            names.SCHEDULING_GATES: schedulinggates.new,
            names.PRIORITY_SORT: prioritysort.new,
            names.NODE_UNSCHEDULABLE: nodeunschedulable.new,
            names.NODE_NAME: nodename.new,
            names.TAINT_TOLERATION: tainttoleration.new,
            names.NODE_AFFINITY: nodeaffinity.new,
            names.NODE_PORTS: nodeports.new,
            names.NODE_RESOURCES_FIT: fit.new,
            names.VOLUME_RESTRICTIONS: volumerestrictions.new,
            names.NODE_VOLUME_LIMITS: csi.new,
            names.VOLUME_BINDING: volume_binding.new,
            names.VOLUME_ZONE: volumezone.new,
            names.POD_TOPOLOGY_SPREAD: podtopologyspread.new,
            names.INTER_POD_AFFINITY: interpodaffinity.new,
            names.DYNAMIC_RESOURCES: dynamicresources.new,
            names.DEFAULT_PREEMPTION: defaultpreemption.new,
            names.NODE_RESOURCES_BALANCED_ALLOCATION: balanced_allocation.new,
            names.IMAGE_LOCALITY: imagelocality.new,
            names.DEFAULT_BINDER: defaultbinder.new,
        }
    )
