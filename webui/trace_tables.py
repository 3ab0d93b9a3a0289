"""A cycle's trace (docs/trace-format.md) laid out for the cycle page: the filter matrix, the
score table, the extension points, the queue and the extender calls, as rows and cells sorted and
paged on the server, so every table works without JavaScript and a cycle over thousands of nodes
renders one page of one table. Presentation only: no request, no database.
"""

from __future__ import annotations

import json
import math
from collections import Counter
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, TypeVar

from django.utils.html import escape
from django.utils.safestring import SafeString, mark_safe

from webui.score_explain import decision, round_for_people

# Rows per page of the filter matrix and of the score table: the cycle page of a 5000-node
# cluster renders in well under a second (``manage.py pagebench``), and a phone gets a page it
# can hold; the rest are a page link away, and the reason filter and sorting are the server's.
PAGE_SIZE = 100

RowT = TypeVar("RowT")

CODE_SUCCESS = "Success"
STAGE_PRE_FILTER = "PreFilter"
STAGE_EXTENDER = "Extender"


@dataclass(slots=True)
class Page:
    """One page of rows: which, and how many pages there are."""

    number: int
    count: int
    total_rows: int
    first: int  # 1-based index of the first row shown

    @classmethod
    def of(cls, total_rows: int, requested: int) -> Page:
        count = max(1, math.ceil(total_rows / PAGE_SIZE))
        number = min(requested, count)
        return cls(number, count, total_rows, (number - 1) * PAGE_SIZE + 1)

    @property
    def last(self) -> int:
        return min(self.total_rows, self.number * PAGE_SIZE)

    def cut(self, rows: Sequence[RowT]) -> list[RowT]:
        return list(rows[self.first - 1 : self.last])

    @property
    def previous(self) -> int | None:
        return self.number - 1 if self.number > 1 else None

    @property
    def next(self) -> int | None:
        return self.number + 1 if self.number < self.count else None


# ---------------------------------------------------------------------------------------------
# The filter matrix

ROW_REJECTED = "rejected"
ROW_CUT = "prefilter"
ROW_FEASIBLE = "feasible"
ROW_HYPOTHETICAL = "hypothetical"
ROW_NOT_EVALUATED = "not-evaluated"
# Rejected nodes first: they are what a person asks about.
_ROW_ORDER = {
    ROW_CUT: 0,
    ROW_REJECTED: 0,
    ROW_FEASIBLE: 1,
    ROW_HYPOTHETICAL: 2,
    ROW_NOT_EVALUATED: 3,
}

CELL_PASSED = "passed"
CELL_REJECTED = "rejected"
CELL_NOT_RUN = "not-run"


@dataclass(slots=True)
class Cell:
    state: str
    text: str
    hypothetical: bool = False
    code: str = ""


@dataclass(slots=True)
class MatrixRow:
    node: str
    state: str
    verdict: str
    reasons: list[str]
    cells: list[Cell]
    selected: bool = False


@dataclass(slots=True)
class FilterMatrix:
    plugins: list[str]
    rows: list[MatrixRow]
    page: Page
    reason: str
    reasons: list[tuple[str, int]]
    counts: dict[str, int]
    not_evaluated: int
    skipped_plugins: list[str]


def _reason_text(entry: Mapping[str, Any]) -> str:
    reasons = entry.get("reasons") or []
    return "; ".join(reasons) if reasons else str(entry.get("code", ""))


def _filter_plugins(trace: Mapping[str, Any]) -> list[str]:
    """The filter plugins in execution order, an extenders' column last when there is one."""
    plugins = [p["plugin"] for p in trace.get("points", []) if p.get("point") == "Filter"]
    seen = set(plugins)
    extender = False
    for entries in trace.get("filter", {}).values():
        for entry in entries:
            stage = entry.get("stage")
            if stage == STAGE_EXTENDER:
                extender = True
            elif stage is None and entry.get("plugin") and entry["plugin"] not in seen:
                seen.add(entry["plugin"])
                plugins.append(entry["plugin"])
    return [*plugins, STAGE_EXTENDER] if extender else plugins


def _cut_row(node: str, entry: Mapping[str, Any], columns: int) -> MatrixRow:
    plugin = entry.get("plugin") or ""
    by = f" ({plugin})" if plugin else ""
    reason = _reason_text(entry)
    return MatrixRow(
        node=node,
        state=ROW_CUT,
        verdict=f"rejected at PreFilter{by}: {reason}",
        reasons=list(entry.get("reasons") or [entry.get("code", "")]),
        cells=[Cell(CELL_NOT_RUN, "not run (PreFilter)")] * columns,
    )


def _filter_row(node: str, entries: Sequence[Mapping[str, Any]], plugins: list[str]) -> MatrixRow:
    if entries and entries[0].get("stage") == STAGE_PRE_FILTER:
        return _cut_row(node, entries[0], len(plugins))
    by_plugin = {
        (STAGE_EXTENDER if e.get("stage") == STAGE_EXTENDER else e.get("plugin", "")): e
        for e in entries
    }
    hypothetical = any(e.get("hypothetical") for e in entries)
    rejection = next((e for e in entries if e.get("code") != CODE_SUCCESS), None)
    cells: list[Cell] = []
    rejected_before = False
    for plugin in plugins:
        entry = by_plugin.get(plugin)
        if entry is None:
            text = "not run: rejected earlier" if rejected_before else "not run"
            cells.append(Cell(CELL_NOT_RUN, text, hypothetical))
        elif entry.get("code") == CODE_SUCCESS:
            cells.append(Cell(CELL_PASSED, "passed", hypothetical))
        else:
            rejected_before = True
            cells.append(Cell(CELL_REJECTED, _reason_text(entry), hypothetical, entry["code"]))
    if rejection is None:
        verdict, state, reasons = "feasible", ROW_FEASIBLE, []
    else:
        reasons = list(rejection.get("reasons") or [rejection.get("code", "")])
        who = rejection.get("plugin", "")
        if rejection.get("stage") == STAGE_EXTENDER:
            who = f"extender {who}"
        verdict, state = f"rejected by {who}: {_reason_text(rejection)}", ROW_REJECTED
    if hypothetical:
        verdict = f"not evaluated by the scheduler; filters would say: {verdict}"
        state = ROW_HYPOTHETICAL
    return MatrixRow(node, state, verdict, reasons, cells)


def filter_matrix(trace: Mapping[str, Any], *, page: int = 1, reason: str = "") -> FilterMatrix:
    """Nodes x filter plugins: rejected nodes first, then feasible, then those never evaluated."""
    plugins = _filter_plugins(trace)
    filter_entries: Mapping[str, Sequence[Mapping[str, Any]]] = trace.get("filter") or {}
    rows = [_filter_row(node, entries, plugins) for node, entries in filter_entries.items()]
    rows += [
        MatrixRow(
            node,
            ROW_NOT_EVALUATED,
            "not evaluated: enough feasible nodes were found (percentageOfNodesToScore)",
            [],
            [Cell(CELL_NOT_RUN, "not evaluated")] * len(plugins),
        )
        for node in trace.get("notEvaluated") or []
        if node not in filter_entries
    ]
    rows.sort(key=lambda row: _ROW_ORDER[row.state])
    selected = (trace.get("selected") or {}).get("node") or trace.get("node")
    for row in rows:
        row.selected = row.node == selected
    reasons = Counter(
        r for row in rows if row.state in (ROW_REJECTED, ROW_CUT) for r in row.reasons
    )
    counts = Counter(row.state for row in rows)
    if reason:
        rows = [row for row in rows if reason in row.reasons]
    shown = Page.of(len(rows), page)
    return FilterMatrix(
        plugins=plugins,
        rows=shown.cut(rows),
        page=shown,
        reason=reason,
        reasons=reasons.most_common(),
        counts=dict(counts),
        not_evaluated=counts[ROW_HYPOTHETICAL] + counts[ROW_NOT_EVALUATED],
        skipped_plugins=list(trace.get("skippedFilterPlugins") or []),
    )


# ---------------------------------------------------------------------------------------------
# The score table

SORT_NODE = "node"
SORT_TOTAL = "total"
SCORE_FIELDS = ("raw", "normalized", "weighted")


@dataclass(slots=True)
class ScoreColumn:
    plugin: str
    weight: int
    sorts: list[tuple[str, str, str]]  # (field, its sort key, the link's sort key)


@dataclass(slots=True)
class ScoreRow:
    node: str
    values: list[int]  # raw, normalized, weighted per plugin, in column order
    total: int
    selected: bool
    tied: bool
    # The row's numbers as table cells, each a link to how it was computed (``_cells``).
    cells: SafeString = field(default_factory=lambda: SafeString(""))


@dataclass(slots=True)
class ScoreTable:
    columns: list[ScoreColumn]
    rows: list[ScoreRow]
    page: Page
    sort: str
    node_sort: str
    total_sort: str
    tie_set: list[str]
    selected: str


def _toggle(current: str, key: str, descending_first: bool) -> str:
    """The sort a header link asks for: the other direction when already sorted by it."""
    if current == key:
        return f"-{key}"
    if current == f"-{key}":
        return key
    return f"-{key}" if descending_first else key


def _value_at(column: int) -> Callable[[ScoreRow], int]:
    return lambda row: row.values[column]


def _cells(row: ScoreRow, plugins: list[str], decisive: frozenset[str]) -> SafeString:
    """The row's numbers as ``<td>`` cells, each linking to ``scores/<node>/<plugin>/``, relative
    to the cycle's page (how it was computed); the weighted ones marked, the winner's deciding
    plugins too. Made
    here, escaped, rather than cell by cell in the template: a page holds up to PAGE_SIZE rows
    of a dozen cells or more, and the template's lookups per cell cost more than the rest of
    the page."""
    parts = []
    fields = len(SCORE_FIELDS)
    node = escape(row.node)
    for index, value in enumerate(row.values):
        plugin = plugins[index // fields]
        css = "num"
        if index % fields == fields - 1:
            css = "num weighted decisive" if row.selected and plugin in decisive else "num weighted"
        href = f"scores/{node}/{escape(plugin)}/"
        parts.append(f'<td class="{css}"><a href="{href}">{int(value)}</a></td>')
    # Every piece above is escaped or an integer.
    return mark_safe("".join(parts))


def score_table(trace: Mapping[str, Any], *, sort: str = "", page: int = 1) -> ScoreTable:
    """Nodes x score plugins (raw, normalized, weighted) and the total, sorted by any column;
    each number links to its computation."""
    scores: Mapping[str, Mapping[str, Mapping[str, int]]] = trace.get("scores") or {}
    totals: Mapping[str, int] = trace.get("totals") or {}
    ordered = [p["plugin"] for p in trace.get("points", []) if p.get("point") == "Score"]
    first = next(iter(scores.values()), {})
    plugins = [p for p in ordered if p in first] + [p for p in first if p not in ordered]
    selected = (trace.get("selected") or {}).get("node") or ""
    tie_set = list((trace.get("selected") or {}).get("tieSet") or [])
    ties = set(tie_set) if len(tie_set) > 1 else set()
    rows = [
        ScoreRow(
            node=node,
            values=[per_plugin.get(p, {}).get(f, 0) for p in plugins for f in SCORE_FIELDS],
            total=totals.get(node, 0),
            selected=node == selected,
            tied=node in ties,
        )
        for node, per_plugin in scores.items()
    ]
    keys: dict[str, Callable[[ScoreRow], Any]] = {
        SORT_NODE: lambda row: row.node,
        SORT_TOTAL: lambda row: row.total,
    }
    for index, plugin in enumerate(plugins):
        for offset, name in enumerate(SCORE_FIELDS):
            keys[f"{plugin}.{name}"] = _value_at(index * len(SCORE_FIELDS) + offset)
    wanted = sort or f"-{SORT_TOTAL}"
    if wanted.lstrip("-") not in keys:
        wanted = f"-{SORT_TOTAL}"
    rows.sort(key=keys[wanted.lstrip("-")], reverse=wanted.startswith("-"))
    columns = [
        ScoreColumn(
            plugin=plugin,
            weight=int(first[plugin].get("weight", 0)),
            sorts=[
                (f, f"{plugin}.{f}", _toggle(wanted, f"{plugin}.{f}", True)) for f in SCORE_FIELDS
            ],
        )
        for plugin in plugins
    ]
    shown = Page.of(len(rows), page)
    shown_rows = shown.cut(rows)
    decisive = decision(trace).decisive_plugins
    for row in shown_rows:
        row.cells = _cells(row, plugins, decisive)
    return ScoreTable(
        columns=columns,
        rows=shown_rows,
        page=shown,
        sort=wanted,
        node_sort=_toggle(wanted, SORT_NODE, False),
        total_sort=_toggle(wanted, SORT_TOTAL, True),
        tie_set=tie_set,
        selected=selected,
    )


# ---------------------------------------------------------------------------------------------
# Extension points and the queue


@dataclass(slots=True)
class PointRow:
    point: str
    plugin: str
    code: str
    duration_ms: float
    bar: int  # width of the duration bar, percent of the slowest entry
    calls: int
    rejected: int
    reasons: list[str]
    status: str = ""  # the code; for Filter "passed" or "rejected N"
    css: str = ""


# A Filter plugin's reasons shown in the points table; the rest are counted.
REASONS_SHOWN = 3


def filter_reasons(trace: Mapping[str, Any]) -> dict[str, list[str]]:
    """Per Filter plugin, the reasons it rejected nodes for, each with its count of nodes (the
    points table's Filter rows: the trace's Filter records count rejections, the reasons are in
    the per-node entries)."""
    counted: dict[str, Counter[str]] = {}
    for entries in (trace.get("filter") or {}).values():
        for entry in entries:
            if entry.get("code") == "Success" or entry.get("hypothetical") or entry.get("stage"):
                continue
            reasons = counted.setdefault(str(entry.get("plugin") or ""), Counter())
            for reason in entry.get("reasons") or [str(entry.get("code", ""))]:
                reasons[reason] += 1
    shown: dict[str, list[str]] = {}
    for plugin, reasons in counted.items():
        lines = [
            f"{reason} ({count} node{'' if count == 1 else 's'})"
            for reason, count in reasons.most_common(REASONS_SHOWN)
        ]
        rest = len(reasons) - REASONS_SHOWN
        if rest > 0:
            lines.append(f"{rest} more reason{'' if rest == 1 else 's'}")
        shown[plugin] = lines
    return shown


def point_rows(trace: Mapping[str, Any]) -> list[PointRow]:
    """The extension points table. A Filter record sums over nodes: its status is "passed" or
    "rejected N" (a plugin that rejected some nodes in a cycle that scheduled the pod is not
    a failure), its reasons those of the nodes it rejected."""
    points = trace.get("points") or []
    slowest = max((float(p.get("durationMs") or 0) for p in points), default=0.0)
    rejected_for = (
        filter_reasons(trace)
        if any(p.get("point") == "Filter" and p.get("rejected") for p in points)
        else {}
    )
    rows = []
    for p in points:
        point, plugin = p.get("point", ""), p.get("plugin", "")
        rejected = int(p.get("rejected", 0))
        reasons = list(p.get("reasons") or [])
        code = p.get("code", "")
        if point == "Filter":
            status = f"rejected {rejected}" if rejected else "passed"
            css = "filter-rejected" if rejected else "code-Success"
            reasons = reasons or rejected_for.get(plugin, [])
        else:
            status, css = code, f"code-{code}"
        rows.append(
            PointRow(
                point=point,
                plugin=plugin,
                code=code,
                duration_ms=float(p.get("durationMs") or 0),
                bar=round(100 * float(p.get("durationMs") or 0) / slowest) if slowest else 0,
                calls=int(p.get("calls", 1)),
                rejected=rejected,
                reasons=reasons,
                status=status,
                css=css,
            )
        )
    return rows


QUEUE_NAMES = {
    "activeQ": "activeQ (pop order)",
    "backoffQ": "backoffQ (expiry order)",
    "unschedulablePods": "unschedulablePods",
    "gated": "gated (PreEnqueue)",
    "inFlight": "in flight",
    "inFlightEvents": "events seen while in flight",
    "moves": "moved since the last pop",
}


@dataclass(slots=True)
class QueueEntry:
    pod: str
    namespace: str
    name: str
    details: list[tuple[str, str]]


@dataclass(slots=True)
class QueuePart:
    key: str
    title: str
    entries: list[QueueEntry] = field(default_factory=list)


def _detail(value: Any) -> str:
    if isinstance(value, list | tuple):
        return ", ".join(str(v) for v in value) or "-"
    if isinstance(value, float):
        return str(round_for_people(value))
    return "-" if value is None else str(value)


def queue_parts(trace: Mapping[str, Any]) -> list[QueuePart]:
    """The scheduling queue just before the pop, one part per sub-queue, in a fixed order."""
    queue: Mapping[str, Any] = trace.get("queue") or {}
    parts = []
    for key in [*QUEUE_NAMES, *(k for k in queue if k not in QUEUE_NAMES)]:
        if key not in queue:
            continue
        part = QueuePart(key, QUEUE_NAMES.get(key, key))
        for item in queue[key] or []:
            if not isinstance(item, Mapping):
                part.entries.append(QueueEntry("", "", "", [("event", str(item))]))
                continue
            pod = str(item.get("pod", ""))
            namespace, _, name = pod.rpartition("/")
            details = [(k, _detail(v)) for k, v in item.items() if k != "pod"]
            part.entries.append(QueueEntry(pod, namespace, name, details))
        parts.append(part)
    return parts


@dataclass(slots=True)
class ExtenderCall:
    extender: str
    verb: str
    duration_ms: float
    error: str
    ignored: bool
    summary: str
    detail: str  # request and response, as indented JSON


def _extender_summary(call: Mapping[str, Any]) -> str:
    request = call.get("request") or {}
    response = call.get("response") or {}
    sent = request.get("nodeNames")
    parts = [f"{len(sent)} node(s) sent"] if isinstance(sent, list) else []
    if isinstance(response.get("nodeNames"), list):
        parts.append(f"{len(response['nodeNames'])} kept")
    failed = {
        **(response.get("failedNodes") or {}),
        **(response.get("failedAndUnresolvableNodes") or {}),
    }
    if failed:
        parts.append(f"{len(failed)} rejected")
    if isinstance(response.get("scores"), Mapping):
        parts.append(f"{len(response['scores'])} scored")
    return ", ".join(parts)


def extender_calls(trace: Mapping[str, Any]) -> list[ExtenderCall]:
    """Every request the cycle made to a scheduler extender, in order."""
    return [
        ExtenderCall(
            extender=str(call.get("extender", "")),
            verb=str(call.get("verb", "")),
            duration_ms=float(call.get("durationMs") or 0),
            error=str(call.get("error") or ""),
            ignored=bool(call.get("ignored")),
            summary=_extender_summary(call),
            detail=json.dumps(
                {"request": call.get("request"), "response": call.get("response")}, indent=2
            ),
        )
        for call in trace.get("extenders") or []
    ]


def split_key(key: str) -> tuple[str, str]:
    namespace, _, name = key.rpartition("/")
    return namespace, name
