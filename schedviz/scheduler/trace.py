"""The record of one scheduling cycle, written by the framework runtime and the scheduler.

Upstream has no such record: kube-scheduler keeps logs, events and metrics, and the
kube-scheduler-simulator stores the last result of each plugin in pod annotations. Here every
cycle keeps everything a person needs to see why the pod went where it went. It is stored in
columns (plugin order once, per-node outcomes as small tuples, scores as lists aligned with the
scored nodes) and expanded into the documented JSON (docs/trace-format.md) only when asked.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from itertools import filterfalse
from typing import TYPE_CHECKING, Any

from schedviz.scheduler.framework.interface import Code, Status

SCHEMA_VERSION = 1

RESULT_SCHEDULED = "Scheduled"
RESULT_UNSCHEDULABLE = "Unschedulable"
RESULT_ERROR = "Error"
RESULT_WAITING = "Waiting"

# The whole queue is kept when it is at most this long; beyond it each sub-queue keeps its head.
QUEUE_DETAIL_LIMIT = 100


class QueueEntries(list[dict[str, Any]]):
    """A sub-queue's entries in a trace's ``queue`` (a list as any other to a reader). The
    scheduling queue hands the same entries, and the same lists while a sub-queue is unchanged,
    to the traces of successive cycles, so nothing edits them once made. ``packed`` holds each
    entry's msgpack form once trace_codec has packed it (None: not yet), for the next trace
    holding the entry."""

    __slots__ = ("packed",)

    def __init__(
        self,
        entries: Iterable[dict[str, Any]] = (),
        packed: list[bytes | None] | None = None,
    ) -> None:
        super().__init__(entries)
        self.packed = packed

    def __reduce__(self) -> tuple[type[list[dict[str, Any]]], tuple[list[dict[str, Any]]]]:
        """Copied or pickled (a channel layer's message) as the plain list it shows."""
        return list, (list(self),)


@dataclass(slots=True)
class PointRecord:
    """One plugin at one extension point: its status and how long it took."""

    point: str
    plugin: str
    code: Code
    reasons: tuple[str, ...] = ()
    duration: float = 0.0
    calls: int = 1
    rejected: int = 0

    def to_json(self) -> dict[str, Any]:
        record: dict[str, Any] = {
            "point": self.point,
            "plugin": self.plugin,
            "code": self.code.name,
            "durationMs": round(self.duration * 1000, 4),
        }
        if self.reasons:
            record["reasons"] = list(self.reasons)
        if self.calls != 1:
            record["calls"] = self.calls
        if self.rejected:
            record["rejected"] = self.rejected
        return record


@dataclass(slots=True)
class ExtenderCall:
    """One request to a scheduler extender and its answer, summarised (node names, not nodes)."""

    extender: str
    verb: str
    request: dict[str, Any]
    response: dict[str, Any] | None = None
    error: str = ""
    # The error was skipped: the extender is ignorable, or it was a Prioritize call.
    ignored: bool = False
    duration: float = 0.0

    def to_json(self) -> dict[str, Any]:
        record: dict[str, Any] = {
            "extender": self.extender,
            "verb": self.verb,
            "request": self.request,
            "response": self.response,
            "error": self.error or None,
            "durationMs": round(self.duration * 1000, 4),
        }
        if self.ignored:
            record["ignored"] = True
        return record


@dataclass(slots=True)
class FilterColumns:
    """The filter outcomes of one column-wise walk, in the walk's order, as three columns: each
    node's row in ``names`` (the cycle's ``all_nodes``, each row once), how many filter plugins
    passed it, and the rejecting status or None. The walk appends to them batch by batch; the
    per-node ``filter_results`` dict is made from them only when someone reads it, and the
    codec stores the columns as they are."""

    names: tuple[str, ...]
    rows: list[int] = field(default_factory=list)
    passed: list[int] = field(default_factory=list)
    statuses: list[Status | None] = field(default_factory=list)

    def to_dict(self) -> dict[str, tuple[int, Status | None]]:
        return dict(
            zip(
                map(self.names.__getitem__, self.rows),
                zip(self.passed, self.statuses, strict=True),
                strict=True,
            )
        )


@dataclass(slots=True)
class CycleTrace:
    cycle: int
    pod: str
    profile: str
    attempt: int
    time: float
    wall_time: float
    queue: dict[str, Any] = field(default_factory=dict)
    points: list[PointRecord] = field(default_factory=list)
    # The snapshot's nodes, in the order the scheduler walks them (shared between cycles).
    all_nodes: tuple[str, ...] = ()
    start_index: int = 0
    # PreFilter: the nodes it narrowed to (None: all), and the status of nodes it cut or rejected.
    pre_filter_nodes: frozenset[str] | None = None
    pre_filter_status: Status | None = None
    nominated_node_tried: str = ""
    filter_plugins: tuple[str, ...] = ()
    skipped_filter_plugins: tuple[str, ...] = ()
    # node -> (number of filter plugins that passed, the rejecting status or None)
    filter_results: dict[str, tuple[int, Status | None]] = field(default_factory=dict)
    # While a column-wise walk's outcomes are pending (``set_filter_columns``), the
    # ``filter_results`` slot is unset and these columns hold them; the first read of
    # ``filter_results`` turns them into the dict.
    filter_columns: FilterColumns | None = field(default=None, compare=False, repr=False)
    # The same for nodes the walk never reached, asked afterwards for the trace only.
    unevaluated_filter_results: dict[str, tuple[int, Status | None]] = field(default_factory=dict)
    # Extenders' verdicts on nodes the plugins let through (the status names the extender).
    extender_results: dict[str, Status] = field(default_factory=dict)
    # Every request to an extender, in the order they were made.
    extenders: list[ExtenderCall] = field(default_factory=list)
    score_nodes: list[str] = field(default_factory=list)
    score_plugins: list[tuple[str, int]] = field(default_factory=list)
    raw_scores: list[list[int]] = field(default_factory=list)
    normalized_scores: list[list[int]] = field(default_factory=list)
    totals: list[int] = field(default_factory=list)
    selected_node: str = ""
    tie_set: list[str] = field(default_factory=list)
    feasible_nodes: int = 0
    evaluated_nodes: int = 0
    result: str = ""
    message: str = ""
    nominated_node: str = ""
    preemption: dict[str, Any] | None = None
    events: list[dict[str, str]] = field(default_factory=list)
    # ``score_nodes`` and ``tie_set`` as rows of ``all_nodes`` when the scheduler knew them
    # (for the codec, which stores nodes by row); None otherwise. Not in to_json.
    score_rows: list[int] | None = field(default=None, compare=False, repr=False)
    tie_rows: list[int] | None = field(default=None, compare=False, repr=False)
    # Wall seconds from the pop to the end of schedule_one (binding included, a Permit wait not):
    # upstream's scheduling_attempt_duration_seconds. Not in to_json: it varies run to run.
    duration: float = 0.0

    def set_filter_columns(self, columns: FilterColumns) -> None:
        """The walk's outcomes will be appended to ``columns``; ``filter_results`` must be empty
        (it is made from them when first read)."""
        if self.filter_results:
            raise ValueError("filter columns over filter results already recorded")
        del self.filter_results
        self.filter_columns = columns

    def filtered_count(self) -> int:
        """How many nodes a filter ran on (``len(filter_results)``, without making the dict)."""
        pending = self.filter_columns
        if pending is not None:
            return len(pending.rows)
        return len(self.filter_results)

    if not TYPE_CHECKING:  # mypy: keep attribute checks on CycleTrace

        def __getattr__(self, name: str) -> Any:
            # Reached only for an unset slot: filter_results while a walk's columns are pending.
            if name == "filter_results":
                pending = self.filter_columns
                if pending is None:
                    # Another thread made the dict meanwhile (it sets it before the columns go).
                    return object.__getattribute__(self, name)
                results = pending.to_dict()
                self.filter_results = results
                self.filter_columns = None
                return results
            raise AttributeError(name)

    def _rejected_at_pre_filter(self) -> bool:
        """PreFilter rejected the pod outright (or narrowed it to no node at all)."""
        return (
            self.pre_filter_status is not None
            and not self.filter_results
            and not self.pre_filter_nodes
        )

    def not_evaluated(self) -> list[str]:
        """Nodes the cycle never looked at (percentageOfNodesToScore stopped the search)."""
        if self._rejected_at_pre_filter():
            return []
        narrowed = self.pre_filter_nodes
        # C-level filters: a large cluster's cycles leave thousands of nodes unevaluated.
        unseen = filterfalse(self.filter_results.__contains__, self.all_nodes)
        return list(unseen if narrowed is None else filter(narrowed.__contains__, unseen))

    def _nodes_with_filter_entries(self, cut: bool) -> Iterable[str]:
        """The nodes ``filter_json`` may list, in ``all_nodes`` order: every node when PreFilter
        cut some, else only those a filter ran on (a tenth of them in a large cluster)."""
        if cut:
            return self.all_nodes
        positions = _positions(self.all_nodes)
        names = self.filter_results.keys() | self.unevaluated_filter_results.keys()
        return sorted((n for n in names if n in positions), key=positions.__getitem__)

    def filter_json(self) -> dict[str, list[dict[str, Any]]]:
        status = self.pre_filter_status
        if status is not None and self._rejected_at_pre_filter():
            entry = status_json(status, stage="PreFilter")
            return {name: [entry] for name in self.all_nodes}
        narrowed = self.pre_filter_nodes
        cut_entry = (
            status_json(status, stage="PreFilter")
            if status is not None and narrowed is not None
            else None
        )
        # Copied for each node: every entry is a dict of its own.
        successes = [{"plugin": p, "code": "Success"} for p in self.filter_plugins]
        copy = dict.copy
        result: dict[str, list[dict[str, Any]]] = {}
        for name in self._nodes_with_filter_entries(cut_entry is not None):
            outcome = self.filter_results.get(name)
            hypothetical = outcome is None and name in self.unevaluated_filter_results
            if hypothetical:
                outcome = self.unevaluated_filter_results[name]
            if outcome is None:
                if cut_entry is not None and narrowed is not None and name not in narrowed:
                    result[name] = [cut_entry]
                continue
            passed, rejection = outcome
            entries: list[dict[str, Any]] = list(map(copy, successes[:passed]))
            if rejection is not None:
                entries.append(status_json(rejection))
            if hypothetical:
                for entry in entries:
                    entry["hypothetical"] = True
            extender = self.extender_results.get(name)
            if extender is not None:
                entries.append(status_json(extender, stage="Extender"))
            result[name] = entries
        return result

    def scores_json(self) -> dict[str, dict[str, dict[str, int]]]:
        scores: dict[str, dict[str, dict[str, int]]] = {}
        for index, node in enumerate(self.score_nodes):
            per_plugin: dict[str, dict[str, int]] = {}
            for column, (plugin, weight) in enumerate(self.score_plugins):
                normalized = self.normalized_scores[column][index]
                per_plugin[plugin] = {
                    "raw": self.raw_scores[column][index],
                    "normalized": normalized,
                    "weight": weight,
                    "weighted": normalized * weight,
                }
            scores[node] = per_plugin
        return scores

    def to_json(self) -> dict[str, Any]:
        return self.document(
            filter_json=self.filter_json(),
            not_evaluated=self.not_evaluated(),
            scores=self.scores_json(),
            totals=dict(zip(self.score_nodes, self.totals, strict=True)),
            tie_set=list(self.tie_set),
        )

    def document(
        self, *, filter_json: Any, not_evaluated: Any, scores: Any, totals: Any, tie_set: Any
    ) -> dict[str, Any]:
        """The documented JSON with its node-keyed parts given: ``to_json`` passes them as
        data, ``trace_json.dumps`` as markers it replaces with text it writes itself."""
        return {
            "cycle": self.cycle,
            "pod": self.pod,
            "profile": self.profile,
            "attempt": self.attempt,
            "time": round(self.time, 6),
            "wallTime": round(self.wall_time, 6),
            "result": self.result,
            "node": self.selected_node or None,
            "message": self.message,
            "feasibleNodes": self.feasible_nodes,
            "evaluatedNodes": self.evaluated_nodes,
            "totalNodes": len(self.all_nodes),
            "startIndex": self.start_index,
            "nominatedNodeTried": self.nominated_node_tried or None,
            "preFilter": {
                "nodes": sorted(self.pre_filter_nodes)
                if self.pre_filter_nodes is not None
                else None,
                "status": status_json(self.pre_filter_status) if self.pre_filter_status else None,
            },
            "skippedFilterPlugins": list(self.skipped_filter_plugins),
            "filter": filter_json,
            "notEvaluated": not_evaluated,
            "scores": scores,
            "totals": totals,
            "selected": {"node": self.selected_node or None, "tieSet": tie_set},
            "points": [record.to_json() for record in self.points],
            "queue": self.queue,
            "nominatedNode": self.nominated_node or None,
            "preemption": self.preemption,
            "extenders": [call.to_json() for call in self.extenders],
            "events": list(self.events),
        }


_positions_of: tuple[tuple[str, ...], dict[str, int]] = ((), {})


def _positions(all_nodes: tuple[str, ...]) -> dict[str, int]:
    """Each node's index in ``all_nodes``; the snapshot's tuple is shared between cycles, so the
    last one asked for is kept."""
    global _positions_of
    cached = _positions_of  # read once: schedulers in other threads may replace it
    if cached[0] is not all_nodes:
        cached = (all_nodes, {name: index for index, name in enumerate(all_nodes)})
        _positions_of = cached
    return cached[1]


def status_json(status: Status, stage: str = "") -> dict[str, Any]:
    entry: dict[str, Any] = {"plugin": status.plugin, "code": status.code.name}
    if status.reasons:
        entry["reasons"] = list(status.reasons)
    if stage:
        entry["stage"] = stage
    return entry


def trace_document(cycles: list[CycleTrace]) -> dict[str, Any]:
    return {"schemaVersion": SCHEMA_VERSION, "cycles": [cycle.to_json() for cycle in cycles]}
