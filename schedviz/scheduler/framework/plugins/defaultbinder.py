"""DefaultBinder: binds the pod through the API (here the handle's pods/binding).

Mirrors pkg/scheduler/framework/plugins/defaultbinder/default_binder.go.
"""

from __future__ import annotations

from schedviz.kube.objects import Pod
from schedviz.scheduler.framework.cycle_state import CycleState
from schedviz.scheduler.framework.interface import BindPlugin, Handle, Status
from schedviz.scheduler.framework.plugins.names import DEFAULT_BINDER

NAME = DEFAULT_BINDER


class DefaultBinder(BindPlugin):
    def __init__(self, handle: Handle) -> None:
        self._handle = handle

    def name(self) -> str:
        return NAME

    def bind(self, state: CycleState, pod: Pod, node_name: str) -> Status | None:
        return self._handle.bind_pod(pod, node_name)


def new(args: object | None, handle: Handle) -> DefaultBinder:
    return DefaultBinder(handle)
