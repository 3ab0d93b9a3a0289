"""kube-scheduler-simulator's annotations of a pod, as the text Go's ``json.Marshal`` writes.

Mirrors the simulator's result store (kubernetes-sigs/kube-scheduler-simulator,
``simulator/scheduler/plugin/resultstore/store.go``; keys in ``plugin/annotation/annotation.go``
and ``storereflector/annotation.go``): for one scheduling attempt, a map per extension point
(node -> plugin -> verdict, or plugin -> status), each a JSON string as ``json.Marshal`` writes
it (map keys sorted, no spaces, ``&<>`` and U+2028/U+2029 escaped).

Two writers give the same text. ``kss_annotations`` reads a trace's documented JSON (a dict): it
is the definition, and the way for imported clusters' cycles, stored as that JSON.
``annotation_texts`` writes the same strings straight from a decoded ``CycleTrace`` (not
upstream: as ``schedviz/scheduler/trace_json.py`` does for the trace's own JSON), without the
documented JSON's dicts: each node's part is made once per distinct outcome, each node name
encoded once per node order. ``pod_text`` writes the annotated pod of the export.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Iterable, Mapping
from json.encoder import encode_basestring
from typing import Any

from schedviz.scheduler.framework.interface import Code, Status
from schedviz.scheduler.trace import CycleTrace, PointRecord, status_json

KSS_PREFIX = "kube-scheduler-simulator.sigs.k8s.io/"
KSS_PREFILTER_STATUS = KSS_PREFIX + "prefilter-result-status"
KSS_PREFILTER = KSS_PREFIX + "prefilter-result"
KSS_FILTER = KSS_PREFIX + "filter-result"
KSS_POSTFILTER = KSS_PREFIX + "postfilter-result"
KSS_PRESCORE = KSS_PREFIX + "prescore-result"
KSS_SCORE = KSS_PREFIX + "score-result"
KSS_FINALSCORE = KSS_PREFIX + "finalscore-result"
KSS_RESERVE = KSS_PREFIX + "reserve-result"
KSS_PERMIT = KSS_PREFIX + "permit-result"
KSS_PERMIT_TIMEOUT = KSS_PREFIX + "permit-result-timeout"
KSS_PREBIND = KSS_PREFIX + "prebind-result"
KSS_BIND = KSS_PREFIX + "bind-result"
KSS_SELECTED_NODE = KSS_PREFIX + "selected-node"
KSS_RESULT_HISTORY = KSS_PREFIX + "result-history"

KSS_PASSED = "passed"
KSS_SUCCESS = "success"
KSS_WAIT = "wait"
KSS_PREEMPTION_VICTIM = "preemption victim"

# Per-plugin status annotations: the extension point of our trace each one records.
KSS_STATUS_POINTS = {
    KSS_PREFILTER_STATUS: "PreFilter",
    KSS_PRESCORE: "PreScore",
    KSS_RESERVE: "Reserve",
    KSS_PERMIT: "Permit",
    KSS_PREBIND: "PreBind",
    KSS_BIND: "Bind",
}

# What json.Marshal escapes beyond what json.dumps does (HTML characters, JavaScript's line
# separators). Replaced one after another: no replacement holds a character replaced later.
_GO_ESCAPES = (
    ("&", "\\u0026"),
    ("<", "\\u003c"),
    (">", "\\u003e"),
    ("\u2028", "\\u2028"),
    ("\u2029", "\\u2029"),
)


def go_json(value: Any) -> str:
    """``json.Marshal``: map keys sorted, no spaces, HTML characters escaped."""
    text = json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    for char, escaped in _GO_ESCAPES:
        text = text.replace(char, escaped)
    return text


def go_string(text: str) -> str:
    """``go_json(text)`` of a string."""
    encoded = encode_basestring(text)
    for char, escaped in _GO_ESCAPES:
        encoded = encoded.replace(char, escaped)
    return encoded


# ---------------------------------------------------------------------------------------------
# From the documented JSON


def _message(entry: Mapping[str, Any]) -> str:
    """``Status.Message()``: the reasons joined by ", "."""
    return ", ".join(entry.get("reasons") or [])


def _status_word(entry: Mapping[str, Any]) -> str:
    code = entry.get("code")
    if code == "Success":
        return KSS_SUCCESS
    if code == "Wait":
        return KSS_WAIT
    return _message(entry)


def _points(trace: Mapping[str, Any], point: str) -> list[dict[str, Any]]:
    return [p for p in trace.get("points") or [] if p.get("point") == point]


def _plugins_named_in(status: Mapping[str, Any] | None) -> list[str]:
    """The plugins a PreFilter cut names: "node(s) didn't satisfy plugin NodeAffinity", or
    "plugin(s) [A B]"."""
    if not status:
        return []
    names: list[str] = []
    for reason in status.get("reasons") or []:
        match = re.search(r"plugin\(s\) \[([^\]]*)\]|plugin (\w+)", reason)
        if match:
            names.extend((match.group(1) or match.group(2)).split())
    return names or ([status["plugin"]] if status.get("plugin") else [])


def kss_annotations(trace: Mapping[str, Any]) -> dict[str, str]:
    """The annotations kube-scheduler-simulator writes for one scheduling attempt."""
    pre_filter = trace.get("preFilter") or {}
    narrowed = pre_filter.get("nodes")
    pre_filter_result: dict[str, list[str]] = {}
    if narrowed is not None:
        for plugin in _plugins_named_in(pre_filter.get("status")) or ["NodeAffinity"]:
            pre_filter_result[plugin] = list(narrowed)
    filter_result: dict[str, dict[str, str]] = {}
    for node, entries in (trace.get("filter") or {}).items():
        ran = [e for e in entries if not e.get("stage") and not e.get("hypothetical")]
        if ran:
            filter_result[node] = {
                e["plugin"]: KSS_PASSED if e["code"] == "Success" else _message(e) for e in ran
            }
    post_filter: dict[str, dict[str, str]] = {}
    for record in _points(trace, "PostFilter"):
        # Only the plugin that succeeded nominated a node; every rejected node gets an entry.
        nominated = trace.get("nominatedNode") if record["code"] == "Success" else None
        for node, results in filter_result.items():
            if any(word != KSS_PASSED for word in results.values()):
                post_filter.setdefault(node, {})
                if node == nominated:
                    post_filter[node][record["plugin"]] = KSS_PREEMPTION_VICTIM
    score_plugins = {p["plugin"] for p in _points(trace, "Score")}
    score: dict[str, dict[str, str]] = {}
    final_score: dict[str, dict[str, str]] = {}
    for node, per_plugin in (trace.get("scores") or {}).items():
        for plugin, value in per_plugin.items():
            if plugin in score_plugins:
                score.setdefault(node, {})[plugin] = str(value["raw"])
                final_score.setdefault(node, {})[plugin] = str(value["weighted"])
    annotations: dict[str, str] = {
        KSS_PREFILTER: go_json(pre_filter_result),
        KSS_FILTER: go_json(filter_result),
        KSS_POSTFILTER: go_json(post_filter),
        KSS_SCORE: go_json(score),
        KSS_FINALSCORE: go_json(final_score),
        KSS_PERMIT_TIMEOUT: go_json({p["plugin"]: "0s" for p in _points(trace, "Permit")}),
        KSS_SELECTED_NODE: trace.get("node") or "",
    }
    for key, point in KSS_STATUS_POINTS.items():
        annotations[key] = go_json({p["plugin"]: _status_word(p) for p in _points(trace, point)})
    return dict(sorted(annotations.items()))


# ---------------------------------------------------------------------------------------------
# From the decoded trace


class _Names(dict[str, str]):
    """The node order's names as Go's JSON text; a name outside the order is encoded when
    asked (and not kept: ``in`` tells the order's names)."""

    def __missing__(self, node: str) -> str:
        return go_string(node)


_names_of: tuple[tuple[str, ...], _Names] = ((), _Names())


def _names(all_nodes: tuple[str, ...]) -> _Names:
    """Each node's name as text; the node order is shared between cycles, so the last one
    asked for is kept."""
    global _names_of
    cached = _names_of  # read once: other threads may replace it
    if cached[0] is not all_nodes:
        cached = (all_nodes, _Names((name, go_string(name)) for name in all_nodes))
        _names_of = cached
    return cached[1]


def _object_text(members: Iterable[tuple[str, str]]) -> str:
    """A map of strings, its members already in key order, as text."""
    return "{" + ",".join(f"{go_string(key)}:{go_string(value)}" for key, value in members) + "}"


def _keyed_text(members: Iterable[tuple[str, str]]) -> str:
    """A map whose keys and values are text already, in key order."""
    return "{" + ",".join(f"{key}:{value}" for key, value in members) + "}"


def _word(record: PointRecord) -> str:
    """A point's status as the simulator writes it: success, wait, or the message."""
    if record.code == Code.Success:
        return KSS_SUCCESS
    if record.code == Code.Wait:
        return KSS_WAIT
    return ", ".join(record.reasons)


def _plugin_words(records: list[PointRecord], word: Callable[[PointRecord], str]) -> str:
    words = {record.plugin: word(record) for record in records}
    return _object_text(sorted(words.items()))


def _filter_texts(trace: CycleTrace, names: _Names) -> tuple[str, list[str]]:
    """The filter-result text, and the nodes it shows rejected (by name). Only nodes of the
    order a filter ran on count: PreFilter's cut and rejection, the nodes asked afterwards and
    the extenders' verdicts are not filter plugins' results."""
    plugins = trace.filter_plugins
    results = trace.filter_results
    made: dict[tuple[int, int], tuple[str, bool] | None] = {}
    kept: list[Status | None] = []  # keeps the keys' statuses alive while ``made`` is used
    members: list[tuple[str, str]] = []
    rejected: list[str] = []
    for node in sorted(filter(names.__contains__, results)):
        passed, rejection = results[node]
        key = (passed, id(rejection))
        if key in made:
            part = made[key]
        else:
            kept.append(rejection)
            words = dict.fromkeys(plugins[:passed], KSS_PASSED)
            if rejection is not None:
                words[rejection.plugin] = (
                    KSS_PASSED if rejection.code == Code.Success else ", ".join(rejection.reasons)
                )
            part = made[key] = (
                (_object_text(sorted(words.items())), any(w != KSS_PASSED for w in words.values()))
                if words
                else None
            )
        if part is not None:
            members.append((names[node], part[0]))
            if part[1]:
                rejected.append(node)
    return _keyed_text(members), rejected


def _post_filter_text(trace: CycleTrace, names: _Names, rejected: list[str]) -> str:
    """Every rejected node, when a PostFilter plugin ran; on the nominated node, the plugins
    that nominated it."""
    records = [p for p in trace.points if p.point == "PostFilter"]
    if not records:
        return "{}"
    nominated = trace.nominated_node or None
    plugins = sorted({p.plugin for p in records if p.code == Code.Success})
    victim = _object_text((plugin, KSS_PREEMPTION_VICTIM) for plugin in plugins)
    return _keyed_text((names[node], victim if node == nominated else "{}") for node in rejected)


def _score_texts(trace: CycleTrace, names: _Names) -> tuple[str, str]:
    """score-result and finalscore-result: the plugins run at Score (a plugin named twice keeps
    its last column, a node named twice its last row), raw and weighted."""
    ran = {p.plugin for p in trace.points if p.point == "Score"}
    last = {plugin: column for column, (plugin, _) in enumerate(trace.score_plugins)}
    chosen = sorted((plugin, column) for plugin, column in last.items() if plugin in ran)
    if not chosen:
        return "{}", "{}"
    plugin_texts = [go_string(plugin) for plugin, _ in chosen]
    raw = [trace.raw_scores[column] for _, column in chosen]
    normalized = [trace.normalized_scores[column] for _, column in chosen]
    weights = [trace.score_plugins[column][1] for _, column in chosen]
    made: dict[tuple[Any, ...], tuple[str, str]] = {}

    def texts(values: tuple[Any, ...]) -> tuple[str, str]:
        text = made.get(values)
        if text is None:
            count = len(chosen)
            text = made[values] = (
                _keyed_text(zip(plugin_texts, map(_str_text, values[:count]), strict=True)),
                _keyed_text(zip(plugin_texts, map(_str_text, values[count:]), strict=True)),
            )
        return text

    rows = {node: row for row, node in enumerate(trace.score_nodes)}
    score: list[tuple[str, str]] = []
    final_score: list[tuple[str, str]] = []
    for node in sorted(rows):
        row = rows[node]
        values = (
            *(column[row] for column in raw),
            *(column[row] * weight for column, weight in zip(normalized, weights, strict=True)),
        )
        score_text, final_text = texts(values)
        score.append((names[node], score_text))
        final_score.append((names[node], final_text))
    return _keyed_text(score), _keyed_text(final_score)


def _str_text(value: Any) -> str:
    return go_string(str(value))


def _pre_filter_text(trace: CycleTrace, names: _Names) -> str:
    """The nodes PreFilter narrowed to, under each plugin its status names (NodeAffinity when
    it names none)."""
    narrowed = trace.pre_filter_nodes
    if narrowed is None:
        return "{}"
    status = trace.pre_filter_status
    plugins = _plugins_named_in(status_json(status) if status else None) or ["NodeAffinity"]
    nodes = "[" + ",".join(names[node] for node in sorted(narrowed)) + "]"
    return _keyed_text((go_string(plugin), nodes) for plugin in sorted(set(plugins)))


def annotation_texts(trace: CycleTrace) -> dict[str, str]:
    """``kss_annotations(trace.to_json())``, written from the trace's columns."""
    names = _names(trace.all_nodes)
    filter_text, rejected = _filter_texts(trace, names)
    score_text, final_score_text = _score_texts(trace, names)
    by_point: dict[str, list[PointRecord]] = {}
    for record in trace.points:
        by_point.setdefault(record.point, []).append(record)
    annotations = {
        KSS_PREFILTER: _pre_filter_text(trace, names),
        KSS_FILTER: filter_text,
        KSS_POSTFILTER: _post_filter_text(trace, names, rejected),
        KSS_SCORE: score_text,
        KSS_FINALSCORE: final_score_text,
        KSS_PERMIT_TIMEOUT: _plugin_words(by_point.get("Permit", []), lambda _: "0s"),
        KSS_SELECTED_NODE: trace.selected_node,
    }
    for key, point in KSS_STATUS_POINTS.items():
        annotations[key] = _plugin_words(by_point.get(point, []), _word)
    return dict(sorted(annotations.items()))


# ---------------------------------------------------------------------------------------------
# The pod


def _history_text(history: list[dict[str, str]]) -> str:
    """``go_json(history)``: every annotation but the selected node is Go's JSON text already,
    which holds no character ``go_string`` escapes beyond what ``encode_basestring`` does."""
    return (
        "["
        + ",".join(
            "{"
            + ",".join(
                f'"{key}":'
                + (go_string(text) if key == KSS_SELECTED_NODE else encode_basestring(text))
                for key, text in annotations.items()
            )
            + "}"
            for annotations in history
        )
        + "]"
    )


def pod_text(manifest: Mapping[str, Any], history: list[dict[str, str]]) -> str:
    """The pod as compact JSON (``json.dumps`` with ``separators=(",", ":")``), annotated with
    its last attempt's annotations and ``result-history``: ``history``, oldest first, each
    attempt's annotations in key order. The manifest is not changed."""
    pod = dict(manifest)
    pod.setdefault("apiVersion", "v1")
    pod.setdefault("kind", "Pod")
    if history:
        metadata = pod["metadata"] = dict(pod.get("metadata") or {})
        annotations = dict(metadata.get("annotations") or {})
        annotations.update(history[-1])
        annotations[KSS_RESULT_HISTORY] = _history_text(history)
        metadata["annotations"] = annotations
    return json.dumps(pod, separators=(",", ":"))
