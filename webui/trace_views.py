"""The pages that explain a decision: a cycle's trace, a pod's attempts, the scheduler profiles.

Views parse input, call the selectors (reads) or ``services.manifests_apply`` (the profiles'
writes), and render. What sits between is presentation only: the trace (docs/trace-format.md)
laid out as rows and cells, sorted and paged on the server so every table works without
JavaScript and a cycle over thousands of nodes renders one page of one table.
"""

from __future__ import annotations

import copy
import json
import math
from collections import Counter
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from functools import cache
from typing import Any, TypeVar

import yaml
from django.conf import settings
from django.contrib import messages
from django.http import Http404, HttpRequest, HttpResponse, HttpResponseRedirect
from django.shortcuts import render
from django.urls import reverse
from django.views.decorators.http import require_http_methods
from django_htmx.middleware import HtmxDetails

from schedviz.cluster import attempts as pod_attempts
from schedviz.cluster import selectors, services
from schedviz.cluster.models import Cluster
from schedviz.cluster.services import ObjectNotFound, ServiceError
from schedviz.kube.errors import ManifestError
from schedviz.kube.load import Manifests, load_manifests
from schedviz.outoftree.registry import new_registry
from schedviz.scheduler.apis.config.types import KubeSchedulerConfiguration
from schedviz.scheduler.apis.config.v1 import (
    API_VERSION,
    KIND,
    decode_configuration,
    default_configuration,
    to_v1_dict,
)
from schedviz.scheduler.apis.config.validation import ConfigError
from schedviz.scheduler.backend.queue.scheduling_queue import (
    DEFAULT_POD_MAX_IN_UNSCHEDULABLE_PODS_DURATION,
)
from schedviz.scheduler.framework.runtime.framework import EXTENSION_POINTS, FrameworkError
from schedviz.scheduler.simulator import new_simulation
from webui import access
from webui.forms import too_large
from webui.limits import limit_page_writes

# Rows per page of the filter matrix and of the score table.
PAGE_SIZE = 200

RowT = TypeVar("RowT")

CODE_SUCCESS = "Success"
STAGE_PRE_FILTER = "PreFilter"
STAGE_EXTENDER = "Extender"


def _cluster(request: HttpRequest, cluster_id: int) -> Cluster:
    """The page's cluster: read with a share link too, written by its owner alone."""
    return access.cluster_for(request, cluster_id)


def _htmx_target(request: HttpRequest) -> str | None:
    """The id of the element an htmx request will swap (None for a plain request)."""
    htmx: HtmxDetails | None = getattr(request, "htmx", None)
    return htmx.target if htmx else None


def _int_param(request: HttpRequest, name: str, default: int = 1) -> int:
    try:
        return max(1, int(request.GET.get(name, default)))
    except ValueError:
        return default


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


def score_table(trace: Mapping[str, Any], *, sort: str = "", page: int = 1) -> ScoreTable:
    """Nodes x score plugins (raw, normalized, weighted) and the total, sorted by any column."""
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
    return ScoreTable(
        columns=columns,
        rows=shown.cut(rows),
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


def point_rows(trace: Mapping[str, Any]) -> list[PointRow]:
    points = trace.get("points") or []
    slowest = max((float(p.get("durationMs") or 0) for p in points), default=0.0)
    return [
        PointRow(
            point=p.get("point", ""),
            plugin=p.get("plugin", ""),
            code=p.get("code", ""),
            duration_ms=float(p.get("durationMs") or 0),
            bar=round(100 * float(p.get("durationMs") or 0) / slowest) if slowest else 0,
            calls=int(p.get("calls", 1)),
            rejected=int(p.get("rejected", 0)),
            reasons=list(p.get("reasons") or []),
        )
        for p in points
    ]


QUEUE_NAMES = {
    "activeQ": "activeQ (pop order)",
    "backoffQ": "backoffQ (expiry order)",
    "unschedulablePods": "unschedulablePods",
    "gated": "gated (PreEnqueue)",
    "inFlight": "in flight",
    "inFlightEvents": "events seen while in flight",
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


def _split_key(key: str) -> tuple[str, str]:
    namespace, _, name = key.rpartition("/")
    return namespace, name


# ---------------------------------------------------------------------------------------------
# The cycle page


@require_http_methods(["GET", "HEAD"])
def cycle(request: HttpRequest, cluster_id: int, number: int) -> HttpResponse:
    """One scheduling cycle: every extension point, the filter matrix, the scores, preemption."""
    cluster = _cluster(request, cluster_id)
    try:
        trace = selectors.cycle_get(cluster=cluster, number=number)
    except ObjectNotFound as error:
        raise Http404(error.errors[0]) from None
    later = selectors.cycle_list(cluster=cluster, after=number, limit=1)
    namespace, name = _split_key(str(trace.get("pod", "")))
    preemption = trace.get("preemption") or None
    context = {
        "cluster": cluster,
        "trace": trace,
        "pod_namespace": namespace,
        "pod_name": name,
        "points": point_rows(trace),
        "matrix": filter_matrix(
            trace, page=_int_param(request, "fpage"), reason=request.GET.get("reason", "")
        ),
        "scores": score_table(
            trace, sort=request.GET.get("sort", ""), page=_int_param(request, "spage")
        ),
        "queue": queue_parts(trace),
        "extenders": extender_calls(trace),
        "preemption": preemption,
        "victims": [_split_key(v) for v in (preemption or {}).get("victims") or []],
        "previous_number": number - 1 if number > 1 else None,
        "next_number": next((c.number for c in later), None),
    }
    template = "webui/trace/cycle.html"
    target = _htmx_target(request)
    if target in ("scores", "filter-matrix"):
        template += "#" + target
    return render(request, template, context)


# ---------------------------------------------------------------------------------------------
# The pod page


def _diff_choice(request: HttpRequest, attempts: Sequence[Mapping[str, Any]]) -> tuple[int, int]:
    """The two attempts to compare: ?a=&b= (cycle numbers), else the last two."""
    numbers = [int(a["cycle"]) for a in attempts]
    defaults = (numbers[-2], numbers[-1]) if len(numbers) > 1 else (0, 0)
    try:
        chosen = (int(request.GET["a"]), int(request.GET["b"]))
    except (KeyError, ValueError):
        return defaults
    return chosen if all(n in numbers for n in chosen) else defaults


@require_http_methods(["GET", "HEAD"])
def pod(request: HttpRequest, cluster_id: int, namespace: str, name: str) -> HttpResponse:
    """A pod: its manifest and status, every scheduling attempt (two compared side by side),
    why it is Pending, its events."""
    cluster = _cluster(request, cluster_id)
    try:
        row = selectors.pod_get(cluster=cluster, namespace=namespace, name=name)
    except ObjectNotFound:
        row = None
    attempts = selectors.cycles_for_pod(cluster=cluster, namespace=namespace, name=name)
    if row is None and not attempts:
        raise Http404(f'pods "{name}" not found')
    why = None
    if row is not None and not row.node_name:
        why = pod_attempts.pod_diagnosis(cluster=cluster, namespace=namespace, name=name)
    diff_a, diff_b = _diff_choice(request, attempts)
    diff = None
    if diff_a and diff_b:
        diff = pod_attempts.pod_attempt_diff(
            cluster=cluster, namespace=namespace, name=name, before=diff_a, after=diff_b
        )
    context = {
        "cluster": cluster,
        "namespace": namespace,
        "name": name,
        "pod": row,
        "manifest": yaml.safe_dump(row.manifest, sort_keys=False) if row is not None else "",
        "attempts": attempts,
        "why": why.diagnosis if why is not None else None,
        "gates": why.scheduling_gates if why is not None else (),
        "max_unschedulable_seconds": DEFAULT_POD_MAX_IN_UNSCHEDULABLE_PODS_DURATION,
        "diff": diff,
        "diff_a": diff_a,
        "diff_b": diff_b,
        "events": selectors.events_for_object(cluster=cluster, namespace=namespace, name=name),
    }
    template = "webui/trace/pod.html"
    if _htmx_target(request) == "attempt-diff":
        template = "webui/trace/pod_history.html#attempt_diff"
    return render(request, template, context)


# ---------------------------------------------------------------------------------------------
# The profiles page


@dataclass(slots=True)
class PluginChoice:
    """A plugin that could sit at an extension point: whether it does, where, with what weight."""

    name: str
    enabled: bool
    order: int | None
    weight: int | None


@dataclass(slots=True)
class PointPlugins:
    point: str
    plugins: list[PluginChoice]


@dataclass(slots=True)
class ProfileView:
    index: int
    name: str
    percentage: int | None
    points: list[PointPlugins]
    args_yaml: str
    error: str = ""


@cache
def _capabilities() -> dict[str, frozenset[str]]:
    """Every registered plugin's extension points (a profile enabling them all, built once)."""
    frameworks = _frameworks(default_configuration())
    capable: dict[str, set[str]] = {}
    for framework in frameworks.values():
        for name, plugin in framework.plugins_map.items():
            for point, protocol in EXTENSION_POINTS.items():
                if isinstance(plugin, protocol):
                    capable.setdefault(name, set()).add(point)
    return {name: frozenset(points) for name, points in capable.items()}


def _frameworks(config: KubeSchedulerConfiguration) -> dict[str, Any]:
    """The profiles' frameworks as the scheduler builds them (multiPoint expanded)."""
    simulation = new_simulation(
        Manifests(), registry=new_registry(), config=config, capture_queue=False
    )
    return dict(simulation.scheduler.profiles)


def _profile_views(config: KubeSchedulerConfiguration) -> tuple[list[ProfileView], str]:
    try:
        frameworks = _frameworks(config)
        error = ""
    except (FrameworkError, ValueError) as failure:
        frameworks, error = {}, str(failure)
    capable = _capabilities()
    encoded = to_v1_dict(config).get("profiles") or []
    views = []
    for index, profile in enumerate(config.profiles):
        framework = frameworks.get(profile.scheduler_name)
        points = []
        for point in EXTENSION_POINTS:
            running = [p.name() for p in framework.points[point]] if framework else []
            candidates = [n for n, where in capable.items() if point in where]
            candidates += [n for n in running if n not in candidates]
            choices = [
                PluginChoice(
                    name=name,
                    enabled=name in running,
                    order=running.index(name) + 1 if name in running else None,
                    weight=(framework.score_plugin_weight.get(name) if framework else None)
                    if point == "score"
                    else None,
                )
                for name in candidates
            ]
            choices.sort(key=lambda c: (c.order is None, c.order or 0))
            points.append(PointPlugins(point, choices))
        plugin_config = encoded[index].get("pluginConfig") if index < len(encoded) else None
        views.append(
            ProfileView(
                index=index,
                name=profile.scheduler_name,
                percentage=profile.percentage_of_nodes_to_score,
                points=points,
                args_yaml=yaml.safe_dump(plugin_config or [], sort_keys=False),
            )
        )
    return views, error


def _document_yaml(document: Mapping[str, Any]) -> str:
    return yaml.safe_dump(dict(document), sort_keys=False)


def _set_entry(entries: list[dict[str, Any]], name: str, **fields: Any) -> None:
    for entry in entries:
        if entry.get("name") == name:
            entry.update(fields)
            return
    entries.append({"name": name, **fields})


def _remove_entry(entries: list[dict[str, Any]], name: str) -> None:
    entries[:] = [e for e in entries if e.get("name") != name]


def _plugin_set(profile: dict[str, Any], point: str) -> dict[str, list[dict[str, Any]]]:
    plugins = profile.setdefault("plugins", {})
    plugin_set: dict[str, list[dict[str, Any]]] = plugins.setdefault(point, {})
    plugin_set.setdefault("enabled", [])
    plugin_set.setdefault("disabled", [])
    return plugin_set


class FormError(ValueError):
    pass


def _parse_weights(post: Mapping[str, Any], names: Sequence[str]) -> dict[str, int]:
    weights = {}
    for name in names:
        text = str(post.get(f"weight-{name}", "")).strip()
        if not text:
            continue
        try:
            weights[name] = int(text)
        except ValueError:
            raise FormError(f"weight of {name}: {text!r} is not an integer") from None
    return weights


def _parse_percentage(text: str) -> int | None:
    text = text.strip()
    if not text:
        return None
    try:
        return int(text)
    except ValueError:
        raise FormError(f"percentageOfNodesToScore: {text!r} is not an integer") from None


def profile_document_from_form(
    document: Mapping[str, Any], view: ProfileView, post: Any
) -> dict[str, Any]:
    """The configuration document with one profile changed as the form asks.

    Changes are written the way a person would write them by hand, leaving the rest of their
    document alone: a plugin turned off at a point is listed under that point's ``disabled``,
    one turned on under its ``enabled``; a changed weight replaces the plugin's multiPoint entry
    when multiPoint enables it there (the defaults' order is kept), else its ``score`` entry.
    """
    new = copy.deepcopy(dict(document))
    profiles: list[dict[str, Any]] = new.setdefault("profiles", [])
    while len(profiles) <= view.index:
        profiles.append({})
    profile = profiles[view.index]
    profile["schedulerName"] = view.name
    wanted = set(post.getlist("enabled"))
    score_names = [c.name for p in view.points if p.point == "score" for c in p.plugins]
    weights = _parse_weights(post, score_names)
    for point in view.points:
        for choice in point.plugins:
            on = f"{point.point}:{choice.name}" in wanted
            if on and not choice.enabled:
                plugin_set = _plugin_set(profile, point.point)
                _remove_entry(plugin_set["disabled"], choice.name)
                extra = {"weight": weights[choice.name]} if choice.name in weights else {}
                _set_entry(plugin_set["enabled"], choice.name, **extra)
            elif not on and choice.enabled:
                plugin_set = _plugin_set(profile, point.point)
                _remove_entry(plugin_set["enabled"], choice.name)
                _set_entry(plugin_set["disabled"], choice.name)
            elif (
                on
                and point.point == "score"
                and weights.get(choice.name, choice.weight) != (choice.weight)
            ):
                _set_weight(profile, choice.name, weights[choice.name])
    percentage = _parse_percentage(str(post.get("percentage", "")))
    if percentage is None:
        profile.pop("percentageOfNodesToScore", None)
    else:
        profile["percentageOfNodesToScore"] = percentage
    _drop_empty_sets(profile)
    return new


def _set_weight(profile: dict[str, Any], name: str, weight: int) -> None:
    score = _plugin_set(profile, "score")
    if any(e.get("name") == name for e in score["enabled"]):
        _set_entry(score["enabled"], name, weight=weight)
        return
    multi = _plugin_set(profile, "multiPoint")
    if any(e.get("name") == name for e in multi["disabled"]):
        _set_entry(score["enabled"], name, weight=weight)
        return
    _set_entry(multi["enabled"], name, weight=weight)


def _drop_empty_sets(profile: dict[str, Any]) -> None:
    plugins = profile.get("plugins") or {}
    for point in list(plugins):
        plugin_set = plugins[point]
        for key in ("enabled", "disabled"):
            if key in plugin_set and not plugin_set[key]:
                del plugin_set[key]
        if not plugin_set:
            del plugins[point]
    if "plugins" in profile and not profile["plugins"]:
        del profile["plugins"]


def _yaml_errors(text: str) -> list[str]:
    """Why the text is not a single KubeSchedulerConfiguration document ([] if it is)."""
    try:
        manifests = load_manifests(text, "configuration")
    except ManifestError as error:
        return [str(e) for e in error.errors]
    if manifests.objects:
        return [f"only a {KIND} ({API_VERSION}) belongs here; other objects go to the cluster"]
    if not manifests.scheduler_configs:
        return [f"no {KIND} ({API_VERSION}) in the text"]
    return _unrunnable(manifests.scheduler_configs[0])


def _unrunnable(document: Mapping[str, Any]) -> list[str]:
    """Why the scheduler could not build a configuration the decoder accepts (a plugin at a
    point it does not implement...): it is refused before it is saved. The decoder's own errors
    are left to the service, which reports them with their field paths."""
    try:
        config = decode_configuration(document, known_plugins=set(new_registry()))
    except ConfigError:
        return []
    try:
        _frameworks(config)
    except (FrameworkError, ValueError) as error:
        return [f"{KIND}: {error}"]
    return []


@dataclass(slots=True)
class PostedConfiguration:
    """The configuration a form asks for: the YAML form's text, or the document with one
    profile changed by the profile form (``profile``)."""

    text: str
    profile: int | None
    errors: list[str]


def _posted_configuration(
    post: Any, document: Mapping[str, Any], views: Sequence[ProfileView]
) -> PostedConfiguration:
    if post.get("action") == "yaml":
        text = str(post.get("configuration", ""))
        if len(text.encode()) > settings.SCHEDVIZ_MAX_UPLOAD_BYTES:
            return PostedConfiguration(text, None, [too_large(len(text.encode()))])
        return PostedConfiguration(text, None, _yaml_errors(text))
    try:
        index = int(post.get("profile", ""))
    except ValueError:
        index = -1
    if not 0 <= index < len(views):
        return PostedConfiguration("", None, ["no such profile"])
    try:
        changed = profile_document_from_form(document, views[index], post)
    except FormError as error:
        return PostedConfiguration("", index, [str(error)])
    return PostedConfiguration(_document_yaml(changed), index, _unrunnable(changed))


@require_http_methods(["GET", "HEAD", "POST"])
@limit_page_writes
def profiles(request: HttpRequest, cluster_id: int) -> HttpResponse:
    """The scheduler profiles after multiPoint expansion; edited in a form or as YAML."""
    cluster = _cluster(request, cluster_id)
    document = services.scheduler_config_document(cluster=cluster)
    config = selectors.scheduler_configuration(cluster=cluster)
    views, framework_error = _profile_views(config)
    yaml_text = _document_yaml(document)
    posted = None
    if request.method == "POST":
        posted = _posted_configuration(request.POST, document, views)
        if posted.profile is None:
            yaml_text = posted.text
        if not posted.errors:
            try:
                result = services.manifests_apply(
                    cluster=cluster, text=posted.text, source="profiles"
                )
            except ServiceError as error:
                posted.errors = list(error.errors)
            else:
                messages.success(request, f"scheduler configuration {result.scheduler_config}")
                return HttpResponseRedirect(reverse("webui:profiles", args=[cluster.pk]))
    errors = posted.errors if posted else []
    context = {
        "cluster": cluster,
        "profiles": views,
        "framework_error": framework_error,
        "configuration": config,
        "yaml_text": yaml_text,
        "yaml_rows": min(40, max(10, yaml_text.count("\n") + 3)),
        "defaulted_yaml": _document_yaml(to_v1_dict(config)),
        "errors": errors,
        "failed_profile": posted.profile if posted and errors else None,
        "yaml_failed": bool(errors) and posted is not None and posted.profile is None,
    }
    return render(request, "webui/trace/profiles.html", context, status=400 if errors else 200)
