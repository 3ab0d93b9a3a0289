"""The nominator: pods that preemption nominated to a node, waiting for victims to leave.

Mirrors pkg/scheduler/backend/queue/nominator.go. Pods are identified by ``namespace/name`` where
upstream uses the UID. Upstream asks the pod informer whether the pod still exists and is not
bound yet before it nominates it; ``pod_lister`` plays that part (by key), and without one the
pod handed in is taken as current.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from schedviz.kube.objects import Pod
from schedviz.scheduler.framework.interface import NominatingInfo
from schedviz.scheduler.framework.types import PodInfo

PodLister = Callable[[str], Pod | None]


@dataclass(frozen=True, slots=True)
class PodRef:
    """What the nominator remembers of a pod (upstream ``podRef``)."""

    name: str
    namespace: str
    uid: str

    @property
    def key(self) -> str:
        return f"{self.namespace}/{self.name}"

    @classmethod
    def of(cls, pod: Pod) -> PodRef:
        return cls(pod.name, pod.namespace, pod.uid)

    def to_pod(self) -> Pod:
        return Pod(name=self.name, namespace=self.namespace, uid=self.uid)


class Nominator:
    def __init__(self, pod_lister: PodLister | None = None) -> None:
        self._pod_lister = pod_lister
        # node name -> pods nominated to it, in nomination order
        self.nominated_pods: dict[str, list[PodRef]] = {}
        # pod key -> the node it is nominated to
        self.nominated_pod_to_node: dict[str, str] = {}

    def add_nominated_pod(self, pod_info: PodInfo, nominating_info: NominatingInfo | None) -> None:
        """Records the pod's nomination; ``None`` nominating info keeps the pod's own (ModeNoop)."""
        pod = pod_info.pod
        # Never more than one entry per pod.
        self._delete(pod.key)
        if nominating_info is not None and nominating_info.mode_override:
            node_name = nominating_info.nominated_node_name
        else:
            node_name = pod.nominated_node_name
        if not node_name:
            return
        current = self._pod_lister(pod.key) if self._pod_lister is not None else pod
        if current is None or current.node_name:
            # The pod is gone, or already bound: nothing to reserve for it.
            return
        self.nominated_pod_to_node[pod.key] = node_name
        refs = self.nominated_pods.setdefault(node_name, [])
        if any(ref.key == pod.key for ref in refs):
            return
        refs.append(PodRef.of(pod))

    def update_nominated_pod(self, old_pod: Pod, new_pod_info: PodInfo) -> None:
        nominating_info: NominatingInfo | None = None
        # An update that carries no nomination while the nominator holds one (set by preemption
        # just before the update arrived) keeps the reservation.
        if not old_pod.nominated_node_name and not new_pod_info.pod.nominated_node_name:
            node_name = self.nominated_pod_to_node.get(old_pod.key)
            if node_name is not None:
                nominating_info = NominatingInfo(nominated_node_name=node_name)
        self._delete(old_pod.key)
        self.add_nominated_pod(new_pod_info, nominating_info)

    def delete_nominated_pod_if_exists(self, pod: Pod) -> None:
        self._delete(pod.key)

    def nominated_refs_for_node(self, node_name: str) -> list[PodRef]:
        return list(self.nominated_pods.get(node_name, ()))

    def _delete(self, key: str) -> None:
        node_name = self.nominated_pod_to_node.pop(key, None)
        if node_name is None:
            return
        refs = self.nominated_pods.get(node_name)
        if refs is None:
            return
        for index, ref in enumerate(refs):
            if ref.key == key:
                del refs[index]
                break
        if not refs:
            del self.nominated_pods[node_name]
