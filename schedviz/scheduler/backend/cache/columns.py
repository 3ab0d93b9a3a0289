"""The snapshot's nodes as columns, for plugins that filter and score many nodes at once.

Not in upstream. kube-scheduler runs Filter and Score once per node on 16 goroutines, where a
call costs next to nothing; one Python thread pays for every call. A plugin may therefore also
offer a column-wise form (``interface.ColumnFilterPlugin``, ``interface.ColumnScorerPlugin``)
that reads these arrays, one entry per node in the snapshot's walking order, and answers for a
whole batch of nodes in a few numpy operations. The per-node ``filter`` and ``score`` stay the
definition: a column-wise answer must be exactly theirs (integers throughout; floats only where
upstream computes in float64, in the same operations), and where it cannot be, the plugin says
so and the framework calls it node by node.

Columns follow the snapshot incrementally: ``Cache.update_snapshot`` names the node infos it
refreshed, and only their rows are rewritten; they are rebuilt whole only when nodes come or go
(the snapshot's ``node_names`` tuple is replaced then).

Nodes are also grouped by what some plugins read of them: every distinct taint list gets a
small number, so a taint check runs once per group rather than once per node; and the values
of a label key (a topology key, say) are numbered on first use of the key.
"""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Callable, Hashable, Iterable, Sequence

import numpy as np
import numpy.typing as npt

from schedviz.kube.objects import Taint
from schedviz.scheduler.framework.types import NodeInfo

IntArray = npt.NDArray[np.int64]
BoolArray = npt.NDArray[np.bool_]

# Larger amounts are left to the per-node code: products like (capacity - requested) * 100 must
# stay inside int64, and conversions to float64 exact, for the answers to be the same.
EXACT_LIMIT = 2**53

# How many derived per-row figures are kept (each two int64 arrays of a row per node).
MEMO_SIZE = 64

_INT_COLUMNS = (
    "alloc_cpu",
    "alloc_memory",
    "alloc_ephemeral",
    "alloc_pods",
    "requested_cpu",
    "requested_memory",
    "requested_ephemeral",
    "non_zero_cpu",
    "non_zero_memory",
)


class NodeColumns:
    """One row per node of a snapshot, in its walking order (``node_info_list``)."""

    __slots__ = (
        *_INT_COLUMNS,
        "pod_count",
        "_group_taints",
        "_inexact",
        "_labels",
        "generation",
        "memo",
        "_objects",
        "_row_of_id",
        "has_images",
        "index",
        "infos",
        "names",
        "taint_group",
        "taint_groups",
        "unschedulable",
    )

    def __init__(self, names: tuple[str, ...], infos: Sequence[NodeInfo]) -> None:
        self.names = names
        # The snapshot's node_info_list itself (callers compare it by identity).
        self.infos: Sequence[NodeInfo] = infos
        self.index: dict[str, int] = {name: i for i, name in enumerate(names)}
        # Rows by node info identity; the objects are kept so that no id is reused meanwhile.
        self._objects = list(infos)
        self._row_of_id: dict[int, int] = {id(info): i for i, info in enumerate(infos)}
        count = len(self.infos)
        for column in _INT_COLUMNS:
            setattr(self, column, np.zeros(count, dtype=np.int64))
        self.pod_count: IntArray = np.zeros(count, dtype=np.int64)
        # Each row's node info generation: a row whose generation moved has changed.
        self.generation: IntArray = np.zeros(count, dtype=np.int64)
        # Per-row figures plugins derive and keep between cycles (see ``derived``).
        self.memo: OrderedDict[Hashable, tuple[IntArray, IntArray]] = OrderedDict()
        self.unschedulable: BoolArray = np.zeros(count, dtype=np.bool_)
        self.has_images: BoolArray = np.zeros(count, dtype=np.bool_)
        # Each node's taint list as a group number; group 0 is "no taints".
        self.taint_group: IntArray = np.zeros(count, dtype=np.int64)
        self.taint_groups: dict[tuple[tuple[str, str, str], ...], int] = {(): 0}
        self._group_taints: list[tuple[Taint, ...]] = [()]
        # Rows holding an amount beyond EXACT_LIMIT (none, usually).
        self._inexact: set[int] = set()
        # Label key -> each row's value number (-1: no such label) and the values by number.
        self._labels: dict[str, tuple[IntArray, list[str], dict[str, int]]] = {}
        for row in range(count):
            self._write(row)

    # Reading

    alloc_cpu: IntArray
    alloc_memory: IntArray
    alloc_ephemeral: IntArray
    alloc_pods: IntArray
    requested_cpu: IntArray
    requested_memory: IntArray
    requested_ephemeral: IntArray
    non_zero_cpu: IntArray
    non_zero_memory: IntArray

    @property
    def exact(self) -> bool:
        """Whether every amount is small enough for column-wise answers to be exact."""
        return not self._inexact

    def taints_of_group(self) -> list[tuple[Taint, ...]]:
        """The taint lists by group number (equal lists share a number)."""
        return self._group_taints

    def label_values(self, key: str) -> tuple[IntArray, list[str]]:
        """Each row's value of the label ``key`` as a number (-1 where the node has no such
        label), and the values by number."""
        cached = self._labels.get(key)
        if cached is None:
            cached = (np.full(len(self._objects), -1, dtype=np.int64), [], {})
            self._labels[key] = cached
            for row in range(len(self._objects)):
                self._write_label(row, key, cached)
        return cached[0], cached[1]

    def derived(self, key: Hashable, compute: Callable[[NodeInfo], int]) -> IntArray:
        """``compute(node info)`` of every row, kept under ``key`` between cycles and worked
        out again only for the rows whose node info changed since (usually one or two). The
        last MEMO_SIZE keys are kept."""
        kept = self.memo.get(key)
        if kept is None:
            count = len(self._objects)
            kept = (np.full(count, -1, dtype=np.int64), np.zeros(count, dtype=np.int64))
            self.memo[key] = kept
            if len(self.memo) > MEMO_SIZE:
                self.memo.popitem(last=False)
        else:
            self.memo.move_to_end(key)
        generations, values = kept
        infos = self.infos
        for row in np.flatnonzero(generations != self.generation).tolist():
            values[row] = compute(infos[row])
        generations[:] = self.generation
        return values

    def label_number(self, key: str, value: str) -> int:
        """The number ``label_values(key)`` gives ``value`` (-1: no node has it)."""
        self.label_values(key)
        return self._labels[key][2].get(value, -1)

    def label_numbers(self, key: str, values: Iterable[str]) -> IntArray:
        """``label_number`` of each of ``values``, in their order."""
        self.label_values(key)
        number_of = self._labels[key][2]
        return np.fromiter((number_of.get(v, -1) for v in values), dtype=np.int64)

    def rows(self, nodes: Sequence[NodeInfo]) -> IntArray | None:
        """The rows of these node infos, in their order; None unless every one of them is the
        snapshot's own."""
        if nodes is self.infos:
            return np.arange(len(nodes), dtype=np.int64)
        try:
            return np.fromiter(
                map(self._row_of_id.__getitem__, map(id, nodes)), dtype=np.int64, count=len(nodes)
            )
        except KeyError:
            return None

    def names_at(self, rows: IntArray) -> list[str]:
        """The node names at these rows."""
        return list(map(self.names.__getitem__, rows.tolist()))

    # Writing

    def refresh(self, names: Iterable[str]) -> None:
        """Rewrites the rows of these nodes (their node infos were updated in place)."""
        index = self.index
        for name in names:
            row = index.get(name)
            if row is not None:
                self._write(row)

    def _write(self, row: int) -> None:
        info = self.infos[row]
        allocatable, requested, non_zero = (
            info.allocatable,
            info.requested,
            info.non_zero_requested,
        )
        self.pod_count[row] = len(info.pods)
        self.generation[row] = info.generation
        values = (
            allocatable.milli_cpu,
            allocatable.memory,
            allocatable.ephemeral_storage,
            allocatable.allowed_pod_number,
            requested.milli_cpu,
            requested.memory,
            requested.ephemeral_storage,
            non_zero.milli_cpu,
            non_zero.memory,
        )
        if all(-EXACT_LIMIT < value < EXACT_LIMIT for value in values):
            self._inexact.discard(row)
            for column, value in zip(_INT_COLUMNS, values, strict=True):
                getattr(self, column)[row] = value
        else:
            self._inexact.add(row)
        node = info.node
        taints = node.taints if node is not None else ()
        key = tuple((t.key, t.effect, t.value) for t in taints)
        group = self.taint_groups.get(key)
        if group is None:
            group = self.taint_groups[key] = len(self.taint_groups)
            self._group_taints.append(taints)
        self.taint_group[row] = group
        self.unschedulable[row] = node is not None and node.unschedulable
        self.has_images[row] = bool(info.image_states)
        for label, cached in self._labels.items():
            self._write_label(row, label, cached)

    def _write_label(
        self, row: int, key: str, cached: tuple[IntArray, list[str], dict[str, int]]
    ) -> None:
        numbers, values, number_of = cached
        node = self.infos[row].node
        value = node.labels.get(key) if node is not None else None
        if value is None:
            numbers[row] = -1
            return
        number = number_of.get(value)
        if number is None:
            number = number_of[value] = len(values)
            values.append(value)
        numbers[row] = number


def columns_of(lister: object) -> NodeColumns | None:
    """A node lister's columns, when it is a snapshot (``node_columns``) and they are on; None
    otherwise (a plugin then walks the nodes as upstream does)."""
    node_columns = getattr(lister, "node_columns", None)
    columns: NodeColumns | None = node_columns() if node_columns is not None else None
    return columns if columns is not None and columns.exact else None


def distinct(values: IntArray) -> list[int]:
    """The distinct values, ascending (``np.unique``): at a quarter of its cost when they are
    all one value, as a column of group numbers usually is (nodes alike)."""
    if not len(values):
        return []
    first = int(values[0])
    if (values == first).all():
        return [first]
    result: list[int] = np.unique(values).tolist()
    return result
