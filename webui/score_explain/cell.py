"""One score cell's computation and what its explainers share: the cluster as it was when the
cycle ran (``CellContext``), the objects the plugins read besides pods and nodes, and how a
quantity or a mismatch is said."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from schedviz.cluster import selectors
from schedviz.cluster.models import KIND_MODELS, Cluster, Cycle
from schedviz.cluster.models import Node as NodeRow
from schedviz.cluster.models import Pod as PodRow
from schedviz.kube.decode import decode_object
from schedviz.kube.objects import Namespace, Node, Pod
from schedviz.scheduler.apis.config.types import KubeSchedulerConfiguration
from schedviz.scheduler.framework.types import NodeInfo

# The signs of the formulas, as people write them.
X = "\u00d7"
M = "\u2212"


@dataclass(slots=True)
class Computation:
    """How one node's score of one plugin was computed: inputs, raw, normalized, weighted."""

    plugin: str
    node: str
    raw: int
    normalized: int
    weight: int
    weighted: int
    inputs: list[tuple[str, str]] = field(default_factory=list)
    raw_steps: list[str] = field(default_factory=list)
    normalize_steps: list[str] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)

    @property
    def weighted_step(self) -> str:
        return (
            f"weighted = normalized {X} weight = {self.normalized} {X} {self.weight} "
            f"= {self.weighted}"
        )


@dataclass(slots=True)
class CellContext:
    cluster: Cluster
    trace: Mapping[str, Any]
    node: str
    _pod: Pod | None = None
    _node: Node | None = None

    @property
    def pod_key(self) -> tuple[str, str]:
        namespace, _, name = str(self.trace.get("pod", "")).partition("/")
        return namespace, name

    def pod(self) -> Pod | None:
        if self._pod is None:
            namespace, name = self.pod_key
            row = PodRow.objects.filter(
                cluster=self.cluster, namespace=namespace, name=name
            ).first()
            if row is not None:
                decoded = decode_object(row.manifest)
                self._pod = decoded if isinstance(decoded, Pod) else None
        return self._pod

    def node_object(self) -> Node | None:
        if self._node is None:
            row = NodeRow.objects.filter(cluster=self.cluster, name=self.node).first()
            if row is not None:
                decoded = decode_object(row.manifest)
                self._node = decoded if isinstance(decoded, Node) else None
        return self._node

    def node_info(self) -> NodeInfo | None:
        """The node with the pods the cluster says ran on it when the cycle ran: those bound to
        it now, less the pod itself and pods bound by a later cycle (a pod deleted since is
        missing: the caller compares with the trace)."""
        node = self.node_object()
        if node is None:
            return None
        later = set(
            Cycle.objects.filter(
                cluster=self.cluster,
                number__gte=int(self.trace.get("cycle") or 0),
                result="Scheduled",
                node=self.node,
            ).values_list("pod_namespace", "pod_name")
        )
        me = self.pod_key
        pods: list[Pod] = []
        rows = PodRow.objects.filter(cluster=self.cluster, node_name=self.node).exclude(
            phase__in=["Succeeded", "Failed"]
        )
        for namespace, name, manifest in rows.values_list("namespace", "name", "manifest"):
            if (namespace, name) == me or (namespace, name) in later:
                continue
            decoded = decode_object(manifest)
            if isinstance(decoded, Pod):
                pods.append(decoded)
        return NodeInfo(node, pods)

    def all_node_infos(
        self, *, namespace: str | None = None, affinity_only: bool = False
    ) -> list[NodeInfo]:
        """Every node with the pods bound to it when the cycle ran (``node_info`` for all);
        only those of ``namespace``, or only pods with an affinity, when the caller reads no
        other (decoding every pod of a large cluster takes seconds)."""
        later = self._later_bound()
        by_name: dict[str, NodeInfo] = {}
        for manifest in (
            NodeRow.objects.filter(cluster=self.cluster)
            .order_by("name")
            .values_list("manifest", flat=True)
        ):
            decoded = decode_object(manifest)
            if isinstance(decoded, Node):
                by_name[decoded.name] = NodeInfo(decoded, [])
        if self._node is not None and self._node.name in by_name:
            # The same object as node_object(), so callers can find it by identity.
            by_name[self._node.name] = NodeInfo(self._node, [])
        rows = (
            PodRow.objects.filter(cluster=self.cluster)
            .exclude(node_name="")
            .exclude(phase__in=["Succeeded", "Failed"])
        )
        if namespace is not None:
            rows = rows.filter(namespace=namespace)
        if affinity_only:
            rows = rows.filter(manifest__spec__has_key="affinity")
        me = self.pod_key
        for pod_namespace, name, node_name, manifest in rows.values_list(
            "namespace", "name", "node_name", "manifest"
        ):
            info = by_name.get(node_name)
            key = (pod_namespace, name)
            if info is None or key == me or (node_name, *key) in later:
                continue
            decoded = decode_object(manifest)
            if isinstance(decoded, Pod):
                info.add_pod(decoded)
        return list(by_name.values())

    def _later_bound(self) -> set[tuple[str, str, str]]:
        """(node, namespace, name) of the pods bound by this cycle or a later one."""
        return set(
            Cycle.objects.filter(
                cluster=self.cluster,
                number__gte=int(self.trace.get("cycle") or 0),
                result="Scheduled",
            ).values_list("node", "pod_namespace", "pod_name")
        )

    def image_holders(self, names: set[str]) -> dict[str, int]:
        """How many of the cluster's nodes list each image (read from every node: only asked
        when the node holds one of the pod's images)."""
        counts: dict[str, int] = dict.fromkeys(names, 0)
        for manifest in NodeRow.objects.filter(cluster=self.cluster).values_list(
            "manifest", flat=True
        ):
            held: set[str] = set()
            for image in (manifest.get("status") or {}).get("images") or []:
                held.update(n for n in image.get("names") or [] if n in names)
            for name in held:
                counts[name] += 1
        return counts

    def profile_args(self, plugin: str) -> Any:
        config: KubeSchedulerConfiguration = selectors.scheduler_configuration(cluster=self.cluster)
        profile_name = self.trace.get("profile")
        for profile in config.profiles:
            if profile.scheduler_name == profile_name:
                for entry in profile.plugin_config:
                    if entry.name == plugin:
                        return entry.args
        return None


def quantity(resource: str, amount: int) -> str:
    if resource == "cpu":
        return f"{amount // 1000}" if amount % 1000 == 0 else f"{amount}m"
    if resource in ("memory", "ephemeral-storage"):
        for unit, size in (("Gi", 1 << 30), ("Mi", 1 << 20), ("Ki", 1 << 10)):
            if amount and amount % size == 0:
                return f"{amount // size}{unit}"
        return str(amount)
    return str(amount)


def mismatch(computation: Computation, recomputed: int) -> None:
    computation.inputs.clear()
    computation.raw_steps.clear()
    computation.notes.append(
        f"Recomputed from the cluster as it is now, the raw score would be {recomputed}, not "
        f"the {computation.raw} the cycle gave: the node or its pods have changed since, so the "
        "inputs of that moment are not known."
    )


class StoredObjects:
    """The objects besides pods and nodes that the plugins read, from the cluster's rows
    (``KIND_MODELS``): Namespaces for affinity terms, Services and controllers for the default
    spreading selector; a kind not stored lists nothing."""

    def __init__(self, cluster: Cluster) -> None:
        self._cluster = cluster
        self._listed: dict[str, list[object]] = {}

    def namespace_labels(self, namespace: str) -> dict[str, str] | None:
        for obj in self.list_objects("Namespace"):
            if isinstance(obj, Namespace) and obj.name == namespace:
                return obj.labels
        return None

    def list_objects(self, kind: str) -> Sequence[object]:
        model = KIND_MODELS.get(kind)
        if model is None or kind in ("Pod", "Node"):
            return []
        if kind not in self._listed:
            manifests = model._default_manager.filter(cluster=self._cluster).values_list(
                "manifest", flat=True
            )
            self._listed[kind] = [decode_object(m) for m in manifests]
        return self._listed[kind]

    def get(self, kind: str, key: str) -> object | None:
        for obj in self.list_objects(kind):
            if getattr(obj, "key", None) == key:
                return obj
        return None

    def apply(self, obj: object) -> None:
        raise NotImplementedError("the score explanation only reads")
