"""The out-of-tree plugins by name, and the registry schedviz schedules with.

An out-of-tree plugin registers exactly as an in-tree one does: a name and a factory
``new(args, handle)``. A custom kube-scheduler build passes ``app.WithPlugin(name, factory)`` to
``app.NewSchedulerCommand``, which merges those into ``NewInTreeRegistry()``
(cmd/kube-scheduler/app/server.go); ``new_registry`` does the same with ``Registry.merge``, which
refuses a name registered twice.
"""

from __future__ import annotations

from schedviz.outoftree import coscheduling
from schedviz.scheduler.framework.plugins.registry import new_in_tree_registry
from schedviz.scheduler.framework.runtime.registry import Registry


def out_of_tree_registry() -> Registry:
    return Registry({coscheduling.NAME: coscheduling.new})


def new_registry() -> Registry:
    """The in-tree plugins with the out-of-tree ones merged in."""
    return new_in_tree_registry().merge(out_of_tree_registry())
