"""Ports the behaviour of pkg/scheduler/framework/plugins/defaultbinder/default_binder_test.go."""

from __future__ import annotations

from schedviz.kube.objects import Pod
from schedviz.scheduler.framework.cycle_state import CycleState
from schedviz.scheduler.framework.interface import BindPlugin, Code, Status, new_status
from schedviz.scheduler.framework.plugins.defaultbinder import NAME, new
from schedviz.scheduler.testing.framework_helpers import FakeHandle
from schedviz.scheduler.testing.wrappers import make_pod


class RefusingHandle(FakeHandle):
    def bind_pod(self, pod: Pod, node_name: str) -> Status | None:
        return new_status(Code.Error, 'pods "foo" is already bound')


def test_it_binds_the_pod_through_the_handle() -> None:
    handle = FakeHandle()
    plugin = new(None, handle)
    assert isinstance(plugin, BindPlugin)
    assert plugin.name() == NAME == "DefaultBinder"
    pod = make_pod().name("foo").namespace("ns").obj()
    assert plugin.bind(CycleState(), pod, "foohost") is None
    assert handle.bound == [("ns/foo", "foohost")]


def test_it_returns_the_binding_error() -> None:
    status = new(None, RefusingHandle()).bind(CycleState(), make_pod().name("foo").obj(), "n1")
    assert status is not None and status.code == Code.Error
