"""Statuses and the extension-point interfaces of the scheduling framework.

Mirrors staging/src/k8s.io/kube-scheduler/framework/interface.go. A plugin class lists the
protocols it implements as bases, so the type checker verifies it the way upstream's
``var _ framework.FilterPlugin = &NodeUnschedulable{}`` does. As upstream, a ``None`` status is
success.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from enum import IntEnum
from typing import TYPE_CHECKING, Protocol, overload, runtime_checkable

if TYPE_CHECKING:
    from schedviz.kube.objects import Pod
    from schedviz.scheduler.backend.cache.columns import IntArray, NodeColumns
    from schedviz.scheduler.framework.cycle_state import CycleState
    from schedviz.scheduler.framework.types import (
        ClusterEventWithHint,
        NodeInfo,
        NodeToStatus,
        PodInfo,
        QueuedPodInfo,
        Resource,
    )

# Scores: staging/src/k8s.io/kube-scheduler/framework/interface.go.
MAX_NODE_SCORE = 100
MIN_NODE_SCORE = 0
MAX_TOTAL_SCORE = 2**63 - 1


class Code(IntEnum):
    """A plugin's verdict, in upstream's order."""

    Success = 0
    Error = 1
    Unschedulable = 2
    UnschedulableAndUnresolvable = 3
    Wait = 4
    Skip = 5
    Pending = 6


@dataclass(frozen=True, slots=True)
class Status:
    """The result of running a plugin. Build with the helpers below; ``None`` means success."""

    code: Code = Code.Success
    reasons: tuple[str, ...] = ()
    plugin: str = ""
    error: str = ""
    # The error this status carries (upstream ``WithError``), e.g. a FitError with its diagnosis.
    cause: Exception | None = field(default=None, compare=False, repr=False)

    def is_success(self) -> bool:
        return self.code == Code.Success

    def is_wait(self) -> bool:
        return self.code == Code.Wait

    def is_skip(self) -> bool:
        return self.code == Code.Skip

    def is_rejected(self) -> bool:
        return self.code in _REJECTED

    def message(self) -> str:
        """The reasons joined by ", " (upstream ``Status.Message``)."""
        return ", ".join(self.reasons)

    def as_error(self) -> str:
        """The error text of a non-success status (upstream ``Status.AsError``)."""
        return self.error or self.message()

    def with_plugin(self, plugin: str) -> Status:
        return Status(self.code, self.reasons, plugin, self.error, self.cause)

    def __str__(self) -> str:
        return f"{self.code.name}: {self.message()}"


_REJECTED = frozenset({Code.Unschedulable, Code.UnschedulableAndUnresolvable, Code.Pending})


def new_status(code: Code, *reasons: str) -> Status:
    return Status(code, tuple(reasons))


def as_status(error: Exception | str) -> Status:
    """An Error status wrapping an exception (upstream ``framework.AsStatus``)."""
    return Status(Code.Error, (str(error),), error=str(error))


def is_success(status: Status | None) -> bool:
    return status is None or status.code == Code.Success


def code_of(status: Status | None) -> Code:
    return Code.Success if status is None else status.code


@dataclass(slots=True)
class NodeScore:
    name: str
    score: int


class NodePluginScores:
    """One node's scores from every score plugin, and their sum.

    ``scores`` (plugin, weighted score) pairs may be given as the plugin names and the node's
    row of weighted scores (``of_row``), paired only when someone reads them: the framework
    builds one per scored node per cycle and only extenders and tests look inside.
    """

    __slots__ = ("_names", "_row", "_scores", "name", "total_score")

    def __init__(
        self, name: str, scores: list[tuple[str, int]] | None = None, total_score: int = 0
    ) -> None:
        self.name = name
        self._scores: list[tuple[str, int]] | None = scores if scores is not None else []
        self._names: Sequence[str] = ()
        self._row: Sequence[int] = ()
        self.total_score = total_score

    @classmethod
    def of_row(
        cls, name: str, names: Sequence[str], row: Sequence[int], total_score: int
    ) -> NodePluginScores:
        scores = cls.__new__(cls)
        scores.name = name
        scores._scores = None
        scores._names = names
        scores._row = row
        scores.total_score = total_score
        return scores

    @property
    def scores(self) -> list[tuple[str, int]]:
        if self._scores is None:
            self._scores = list(zip(self._names, self._row, strict=True))
        return self._scores

    @scores.setter
    def scores(self, scores: list[tuple[str, int]]) -> None:
        self._scores = scores

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, NodePluginScores):
            return NotImplemented
        return (self.name, self.scores, self.total_score) == (
            other.name,
            other.scores,
            other.total_score,
        )

    __hash__ = None  # type: ignore[assignment]

    def __repr__(self) -> str:
        return (
            f"NodePluginScores(name={self.name!r}, scores={self.scores!r}, "
            f"total_score={self.total_score!r})"
        )


class ScoredNodes(Sequence[NodePluginScores]):
    """The framework's scores of the nodes it scored, in order: their names, each node's
    weighted score from every plugin (``rows``, in ``plugins`` order) and their sums. A node's
    NodePluginScores is made when first read (then kept, so changes to it stay); the
    scheduler itself reads ``names`` and ``totals`` and makes none. Not in upstream, which
    returns a slice of NodePluginScores."""

    __slots__ = ("_made", "names", "plugins", "rows", "totals")

    def __init__(
        self,
        names: Sequence[str],
        plugins: Sequence[str],
        rows: Sequence[Sequence[int]],
        totals: Sequence[int],
    ) -> None:
        self.names = names
        self.plugins = plugins
        self.rows = rows
        self.totals = totals
        self._made: list[NodePluginScores | None] = [None] * len(names)

    def __len__(self) -> int:
        return len(self.names)

    @overload
    def __getitem__(self, index: int) -> NodePluginScores: ...

    @overload
    def __getitem__(self, index: slice) -> list[NodePluginScores]: ...

    def __getitem__(self, index: int | slice) -> NodePluginScores | list[NodePluginScores]:
        if isinstance(index, slice):
            return [self[i] for i in range(*index.indices(len(self)))]
        made = self._made[index]
        if made is None:
            made = NodePluginScores.of_row(
                self.names[index], self.plugins, self.rows[index], self.totals[index]
            )
            self._made[index] = made
        return made

    def __eq__(self, other: object) -> bool:
        if isinstance(other, Sequence) and not isinstance(other, str):
            return list(self) == list(other)
        return NotImplemented

    __hash__ = None  # type: ignore[assignment]

    def __repr__(self) -> str:
        return f"ScoredNodes({list(self)!r})"


@dataclass(frozen=True, slots=True)
class PreFilterResult:
    """The nodes a PreFilter plugin narrows the cycle to; ``None`` node_names means all nodes."""

    node_names: frozenset[str] | None = None

    def all_nodes(self) -> bool:
        return self.node_names is None

    def merge(self, other: PreFilterResult | None) -> PreFilterResult:
        if other is None or other.all_nodes():
            return self
        if self.all_nodes():
            return other
        assert self.node_names is not None and other.node_names is not None
        return PreFilterResult(self.node_names & other.node_names)


@dataclass(slots=True)
class NominatingInfo:
    nominated_node_name: str = ""
    # ModeOverride sets the nominated node; ModeNoop leaves it as it is.
    mode_override: bool = True


@dataclass(slots=True)
class PostFilterResult:
    nominating_info: NominatingInfo | None = None


class Plugin(Protocol):
    def name(self) -> str: ...


@runtime_checkable
class PreEnqueuePlugin(Plugin, Protocol):
    def pre_enqueue(self, pod: Pod) -> Status | None: ...


@runtime_checkable
class QueueSortPlugin(Plugin, Protocol):
    def less(self, a: QueuedPodInfo, b: QueuedPodInfo) -> bool: ...


@runtime_checkable
class EnqueueExtensions(Plugin, Protocol):
    """Plugins that reject declare which cluster events may make the pod schedulable again."""

    def events_to_register(self) -> list[ClusterEventWithHint]: ...


class PreFilterExtensions(Protocol):
    def add_pod(
        self, state: CycleState, pod_to_schedule: Pod, pod_info_to_add: PodInfo, node_info: NodeInfo
    ) -> Status | None: ...

    def remove_pod(
        self,
        state: CycleState,
        pod_to_schedule: Pod,
        pod_info_to_remove: PodInfo,
        node_info: NodeInfo,
    ) -> Status | None: ...


@runtime_checkable
class PreFilterPlugin(Plugin, Protocol):
    def pre_filter(
        self, state: CycleState, pod: Pod, nodes: Sequence[NodeInfo]
    ) -> tuple[PreFilterResult | None, Status | None]: ...

    def pre_filter_extensions(self) -> PreFilterExtensions | None: ...


@runtime_checkable
class FilterPlugin(Plugin, Protocol):
    def filter(self, state: CycleState, pod: Pod, node_info: NodeInfo) -> Status | None: ...


@runtime_checkable
class PostFilterPlugin(Plugin, Protocol):
    def post_filter(
        self, state: CycleState, pod: Pod, filtered_node_status_map: NodeToStatus
    ) -> tuple[PostFilterResult | None, Status | None]: ...


@runtime_checkable
class PreScorePlugin(Plugin, Protocol):
    def pre_score(
        self, state: CycleState, pod: Pod, nodes: Sequence[NodeInfo]
    ) -> Status | None: ...


class ScoreExtensions(Protocol):
    def normalize_score(
        self, state: CycleState, pod: Pod, scores: list[NodeScore]
    ) -> Status | None: ...


class ColumnNormalizer(ScoreExtensions, Protocol):
    """ScoreExtensions that can also normalize a plain column of scores (the scored nodes' in
    order) into a new one, exactly as ``normalize_score`` would, without building a NodeScore
    per node. Not in upstream; used by the framework when present."""

    def normalize_score_column(
        self, state: CycleState, pod: Pod, scores: list[int]
    ) -> list[int]: ...


@runtime_checkable
class ScorePlugin(Plugin, Protocol):
    def score(
        self, state: CycleState, pod: Pod, node_info: NodeInfo
    ) -> tuple[int, Status | None]: ...

    def score_extensions(self) -> ScoreExtensions | None: ...


NodeScorer = Callable[["NodeInfo"], int]


@runtime_checkable
class NodeScorerPlugin(ScorePlugin, Protocol):
    """A ScorePlugin that can do its per-cycle part of Score once. Not in upstream.

    Upstream calls Score once per node, and each call reads the plugin's PreScore state from the
    CycleState; in Go that costs next to nothing, in Python the call and the read cost more than
    many scores. ``node_scorer`` reads the state once and returns a function of the node alone
    giving exactly what ``score`` gives, or the failing status ``score`` would return for every
    node. The framework uses it when a plugin has it; ``score`` stays the upstream entry point.
    """

    def node_scorer(self, state: CycleState, pod: Pod) -> NodeScorer | Status: ...


# What ``ColumnFilterPlugin.filter_columns`` says of a node: it passes, or ask ``filter``. Any
# other number names a class of nodes on which ``filter`` gives one and the same answer.
FILTER_PASSES = 0
FILTER_ASK = -1


class ColumnFilterPlugin(FilterPlugin, Protocol):
    """A FilterPlugin that can answer for many nodes at once. Not in upstream (see
    backend/cache/columns.py).

    ``filter_columns`` classifies the nodes in ``rows`` of ``columns``: FILTER_PASSES where
    ``filter`` would return success, FILTER_ASK where ``filter`` must be asked about the node,
    and a positive number for nodes ``filter`` rejects alike (the same status for every node
    of that number, so it is asked once, about one of them). None: ask about every node. The
    statuses are therefore always ``filter``'s own.
    """

    def filter_columns(
        self, state: CycleState, pod: Pod, columns: NodeColumns, rows: IntArray
    ) -> IntArray | None: ...


class NodeOnlyFilterPlugin(FilterPlugin, Protocol):
    """A FilterPlugin whose verdict reads the node object and the cycle state only: never the
    pods on the node nor anything ``NodeInfo`` derives from them (requested resources, used
    ports, volumes, images), and it writes nothing. Not in upstream.

    ``filter_reads_node_only`` is True on such a plugin (read with ``getattr``, so a plugin that
    does not say is assumed to read the pods). Preemption's dry run relies on it: on a node that
    differs only in its pods, such a filter gives the same verdict.
    """

    filter_reads_node_only: bool


# Whether a node with this allocatable, whose pods request this much and number this many,
# passes a filter: see RequestsFilterPlugin.
RequestsCheck = Callable[["Resource", "Resource", int], bool]


class RequestsFilterPlugin(FilterPlugin, Protocol):
    """A FilterPlugin whose verdict reads, of the node's pods, only how many there are and what
    they request in total (``NodeInfo.requested`` and ``len(NodeInfo.pods)``), beside the node's
    allocatable and the cycle state, and which writes nothing. Not in upstream.

    ``filter_requests_check`` reads the cycle state once and returns a function telling whether
    ``filter`` would pass a node with that allocatable, those requests and that many pods,
    exactly; preemption's dry run asks it instead of building a node per victim it tries to
    keep. Such a plugin may also offer ``filter_requests_key(state, pod)``: a hashable value
    equal for two cycles whose checks answer alike (None: cannot tell), read with ``getattr``;
    the dry run then keeps its answers on an unchanged node from one attempt to the next.
    """

    def filter_requests_check(self, state: CycleState, pod: Pod) -> RequestsCheck: ...


class ColumnScorerPlugin(ScorePlugin, Protocol):
    """A ScorePlugin that can score many nodes at once. Not in upstream.

    ``score_columns`` returns the score ``score`` gives each node in ``rows`` of ``columns``,
    exactly, or None when it cannot (the framework then scores node by node, which also reports
    any failure as ``score`` does).
    """

    def score_columns(
        self, state: CycleState, pod: Pod, columns: NodeColumns, rows: IntArray
    ) -> IntArray | None: ...


@runtime_checkable
class ReservePlugin(Plugin, Protocol):
    def reserve(self, state: CycleState, pod: Pod, node_name: str) -> Status | None: ...

    def unreserve(self, state: CycleState, pod: Pod, node_name: str) -> None: ...


@runtime_checkable
class PermitPlugin(Plugin, Protocol):
    def permit(
        self, state: CycleState, pod: Pod, node_name: str
    ) -> tuple[Status | None, float]: ...


@runtime_checkable
class PreBindPlugin(Plugin, Protocol):
    def pre_bind(self, state: CycleState, pod: Pod, node_name: str) -> Status | None: ...


@runtime_checkable
class BindPlugin(Plugin, Protocol):
    def bind(self, state: CycleState, pod: Pod, node_name: str) -> Status | None: ...


@runtime_checkable
class PostBindPlugin(Plugin, Protocol):
    def post_bind(self, state: CycleState, pod: Pod, node_name: str) -> None: ...


# Every extension point, in the order a pod meets them (used by traces and the UI).
EXTENSION_POINTS = (
    "PreEnqueue",
    "QueueSort",
    "PreFilter",
    "Filter",
    "PostFilter",
    "PreScore",
    "Score",
    "Reserve",
    "Permit",
    "PreBind",
    "Bind",
    "PostBind",
)

PluginFactory = Callable[[object, "Handle"], Plugin]


class NodeInfoLister(Protocol):
    def list(self) -> Sequence[NodeInfo]: ...

    def get(self, node_name: str) -> NodeInfo | None: ...

    def have_pods_with_affinity_list(self) -> Sequence[NodeInfo]: ...

    def have_pods_with_required_anti_affinity_list(self) -> Sequence[NodeInfo]: ...


class Handle(Protocol):
    """What the framework offers plugins (upstream ``framework.Handle``)."""

    def snapshot_shared_lister(self) -> NodeInfoLister: ...

    @property
    def objects(self) -> ObjectLister: ...

    def bind_pod(self, pod: Pod, node_name: str) -> Status | None:
        """The pods/binding subresource: sets the pod's node once."""
        ...


class ObjectLister(Protocol):
    """The informers' listers for the kinds plugins read besides pods and nodes."""

    def namespace_labels(self, namespace: str) -> dict[str, str] | None: ...

    def list_objects(self, kind: str) -> Sequence[object]: ...

    def get(self, kind: str, key: str) -> object | None:
        """One object by kind ("PersistentVolumeClaim") and key ("ns/name" or "name")."""
        ...

    def apply(self, obj: object) -> None:
        """Creates or replaces an object through the API (PV/PVC binding writes)."""
        ...
