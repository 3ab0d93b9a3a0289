"""NodePorts: a pod's host ports must be free on the node.

Mirrors pkg/scheduler/framework/plugins/nodeports/node_ports.go, with queueing hints enabled (the
default since v1.34), and ``GetHostPorts`` of pkg/scheduler/util/utils.go: the host ports of the
containers and of the sidecar (restartPolicy Always) init containers.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from schedviz.kube.objects import ContainerPort, Pod
from schedviz.scheduler.framework.cycle_state import CycleState, StateNotFoundError
from schedviz.scheduler.framework.interface import (
    Code,
    EnqueueExtensions,
    FilterPlugin,
    Handle,
    PreFilterExtensions,
    PreFilterPlugin,
    PreFilterResult,
    Status,
    as_status,
    new_status,
)
from schedviz.scheduler.framework.plugins.names import NODE_PORTS
from schedviz.scheduler.framework.types import (
    ActionType,
    ClusterEvent,
    ClusterEventWithHint,
    EventResource,
    HostPortInfo,
    NodeInfo,
    QueueingHint,
)

NAME = NODE_PORTS
PRE_FILTER_STATE_KEY = "PreFilter" + NAME

ERR_REASON = "node(s) didn't have free ports for the requested pod ports"


def get_host_ports(pod: Pod) -> list[ContainerPort]:
    """The ports with a host port of the containers and the sidecar init containers."""
    sidecars = [c for c in pod.init_containers if c.restart_policy == "Always"]
    return [
        port
        for container in (*sidecars, *pod.containers)
        for port in container.ports
        if port.host_port > 0
    ]


def fits_ports(want_ports: Sequence[ContainerPort], ports_in_use: HostPortInfo) -> bool:
    return not any(
        ports_in_use.check_conflict(port.host_ip, port.protocol, port.host_port)
        for port in want_ports
    )


def fits(pod: Pod, node_info: NodeInfo) -> bool:
    """Whether none of the pod's host ports is taken on the node."""
    return fits_ports(get_host_ports(pod), node_info.used_ports)


@dataclass(frozen=True, slots=True)
class _PreFilterState:
    ports: tuple[ContainerPort, ...]

    def clone(self) -> _PreFilterState:
        # Adding or removing other pods does not change the pod's own ports.
        return self


class NodePorts(PreFilterPlugin, FilterPlugin, EnqueueExtensions):
    def name(self) -> str:
        return NAME

    def pre_filter(
        self, state: CycleState, pod: Pod, nodes: Sequence[NodeInfo]
    ) -> tuple[PreFilterResult | None, Status | None]:
        ports = get_host_ports(pod)
        if not ports:
            return None, Status(Code.Skip)
        state.write(PRE_FILTER_STATE_KEY, _PreFilterState(tuple(ports)))
        return None, None

    def pre_filter_extensions(self) -> PreFilterExtensions | None:
        return None

    def events_to_register(self) -> list[ClusterEventWithHint]:
        return [
            # Container ports are immutable: only a deletion frees a port.
            ClusterEventWithHint(
                ClusterEvent(EventResource.Pod, ActionType.Delete),
                self.is_schedulable_after_pod_deleted,
            ),
            # No hint: a new node is always worth a retry.
            ClusterEventWithHint(ClusterEvent(EventResource.Node, ActionType.Add)),
        ]

    def is_schedulable_after_pod_deleted(
        self, pod: Pod, old_obj: object, new_obj: object
    ) -> QueueingHint:
        deleted = old_obj
        if not isinstance(deleted, Pod):
            return QueueingHint.Queue
        if not deleted.node_name and not deleted.nominated_node_name:
            # An unscheduled pod held no port.
            return QueueingHint.QueueSkip
        ports = get_host_ports(deleted)
        if not ports:
            return QueueingHint.QueueSkip
        ports_in_use = HostPortInfo()
        for port in ports:
            ports_in_use.add(port.host_ip, port.protocol, port.host_port)
        if fits_ports(get_host_ports(pod), ports_in_use):
            # No port in common: the deletion frees nothing this pod wants.
            return QueueingHint.QueueSkip
        return QueueingHint.Queue

    def filter(self, state: CycleState, pod: Pod, node_info: NodeInfo) -> Status | None:
        try:
            want = state.read_as(PRE_FILTER_STATE_KEY, _PreFilterState)
        except StateNotFoundError:
            return as_status(f'reading "{PRE_FILTER_STATE_KEY}" from cycleState: not found')
        except TypeError as error:
            return as_status(error)
        if not fits_ports(want.ports, node_info.used_ports):
            return new_status(Code.Unschedulable, ERR_REASON)
        return None


def new(args: object | None, handle: Handle) -> NodePorts:
    return NodePorts()
