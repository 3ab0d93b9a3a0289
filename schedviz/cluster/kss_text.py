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
encoded once per node order.

``pod_text`` writes the annotated pod of the export (``json.dumps`` of it, byte for byte). Its
JSON holds each annotation escaped once (a string in the pod) and again inside result-history (a
string in a string): about a gigabyte at 5000 nodes and 2000 cycles, where escaping whole texts
took longer than writing them. ``annotation_forms`` writes those two forms from the forms of the
texts' pieces (node names, each node's part), kept as they repeat.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Iterable, Mapping
from json.encoder import encode_basestring, encode_basestring_ascii
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


class _Members:
    """A map keyed by node as text not yet joined: each key (a node's name as JSON text, then
    ":") and its value's text, in key order. Kept apart so that the text can be written in the
    forms the pod's JSON holds it (``_Form``) from each piece's form, made once per piece."""

    __slots__ = ("keys", "values")

    def __init__(self) -> None:
        self.keys: list[str] = []
        self.values: list[str] = []

    def text(self, form: Callable[[str], str] | None = None) -> str:
        keys, values = self.keys, self.values
        if form is not None:
            keys, values = list(map(form, keys)), list(map(form, values))
        return "{" + ",".join(map(str.__add__, keys, values)) + "}"


class _Keys(dict[str, str]):
    """Node names as the keys of ``_Members``; a name outside the node order is encoded when
    asked (and not kept: ``in`` tells the order's names)."""

    def __missing__(self, node: str) -> str:
        return go_string(node) + ":"


_keys_of: tuple[tuple[str, ...], _Keys] = ((), _Keys())


def _keys(all_nodes: tuple[str, ...]) -> _Keys:
    """Each node's key; the node order is shared between cycles, so the last one asked for is
    kept."""
    global _keys_of
    cached = _keys_of  # read once: other threads may replace it
    if cached[0] is not all_nodes:
        cached = (all_nodes, _Keys((name, go_string(name) + ":") for name in all_nodes))
        _keys_of = cached
    return cached[1]


def _object_text(members: Iterable[tuple[str, str]]) -> str:
    """A map of strings, its members already in key order, as text."""
    return "{" + ",".join(f"{go_string(key)}:{go_string(value)}" for key, value in members) + "}"


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


def _filter_members(trace: CycleTrace, keys: _Keys) -> tuple[_Members, list[str]]:
    """filter-result, and the nodes it shows rejected (by name). Only nodes of the order a
    filter ran on count: PreFilter's cut and rejection, the nodes asked afterwards and the
    extenders' verdicts are not filter plugins' results."""
    plugins = trace.filter_plugins
    results = trace.filter_results
    made: dict[tuple[int, int], tuple[str, bool] | None] = {}
    kept: list[Status | None] = []  # keeps the keys' statuses alive while ``made`` is used
    members = _Members()
    rejected: list[str] = []
    for node in sorted(filter(keys.__contains__, results)):
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
            members.keys.append(keys[node])
            members.values.append(part[0])
            if part[1]:
                rejected.append(node)
    return members, rejected


def _post_filter_members(trace: CycleTrace, keys: _Keys, rejected: list[str]) -> _Members:
    """Every rejected node, when a PostFilter plugin ran; on the nominated node, the plugins
    that nominated it."""
    members = _Members()
    records = [p for p in trace.points if p.point == "PostFilter"]
    if not records:
        return members
    nominated = trace.nominated_node or None
    plugins = sorted({p.plugin for p in records if p.code == Code.Success})
    victim = _object_text((plugin, KSS_PREEMPTION_VICTIM) for plugin in plugins)
    members.keys = [keys[node] for node in rejected]
    members.values = [victim if node == nominated else "{}" for node in rejected]
    return members


def _score_members(trace: CycleTrace, keys: _Keys) -> tuple[_Members, _Members]:
    """score-result and finalscore-result: the plugins run at Score (a plugin named twice keeps
    its last column, a node named twice its last row), raw and weighted."""
    score, final_score = _Members(), _Members()
    ran = {p.plugin for p in trace.points if p.point == "Score"}
    last = {plugin: column for column, (plugin, _) in enumerate(trace.score_plugins)}
    chosen = sorted((plugin, column) for plugin, column in last.items() if plugin in ran)
    if not chosen:
        return score, final_score
    plugins = [go_string(plugin) + ":" for plugin, _ in chosen]
    count = len(trace.score_nodes)
    # Each node's row: its raw scores, then its weighted ones, by plugin.
    raw = [trace.raw_scores[column][:count] for _, column in chosen]
    weighted = []
    for _, column in chosen:
        weight = trace.score_plugins[column][1]
        weighted.append([value * weight for value in trace.normalized_scores[column][:count]])
    rows = list(zip(*raw, *weighted, strict=True))
    made: dict[tuple[Any, ...], tuple[str, str]] = {}

    def texts(values: tuple[Any, ...]) -> tuple[str, str]:
        text = made.get(values)
        if text is None:
            strings = [go_string(str(value)) for value in values]
            text = made[values] = (
                "{" + ",".join(map(str.__add__, plugins, strings[: len(chosen)])) + "}",
                "{" + ",".join(map(str.__add__, plugins, strings[len(chosen) :])) + "}",
            )
        return text

    last_row = {node: row for row, node in enumerate(trace.score_nodes)}
    nodes = sorted(last_row)
    score.keys = final_score.keys = [keys[node] for node in nodes]
    pairs = [texts(rows[last_row[node]]) for node in nodes]
    score.values = [pair[0] for pair in pairs]
    final_score.values = [pair[1] for pair in pairs]
    return score, final_score


def _pre_filter_text(trace: CycleTrace) -> str:
    """The nodes PreFilter narrowed to, under each plugin its status names (NodeAffinity when
    it names none)."""
    narrowed = trace.pre_filter_nodes
    if narrowed is None:
        return "{}"
    status = trace.pre_filter_status
    plugins = _plugins_named_in(status_json(status) if status else None) or ["NodeAffinity"]
    nodes = "[" + ",".join(map(go_string, sorted(narrowed))) + "]"
    return "{" + ",".join(f"{go_string(plugin)}:{nodes}" for plugin in sorted(set(plugins))) + "}"


def _annotation_parts(trace: CycleTrace) -> dict[str, str | _Members]:
    """``kss_annotations(trace.to_json())``, the maps keyed by node not yet joined."""
    keys = _keys(trace.all_nodes)
    filter_result, rejected = _filter_members(trace, keys)
    score, final_score = _score_members(trace, keys)
    by_point: dict[str, list[PointRecord]] = {}
    for record in trace.points:
        by_point.setdefault(record.point, []).append(record)
    annotations: dict[str, str | _Members] = {
        KSS_PREFILTER: _pre_filter_text(trace),
        KSS_FILTER: filter_result,
        KSS_POSTFILTER: _post_filter_members(trace, keys, rejected),
        KSS_SCORE: score,
        KSS_FINALSCORE: final_score,
        KSS_PERMIT_TIMEOUT: _plugin_words(by_point.get("Permit", []), lambda _: "0s"),
        KSS_SELECTED_NODE: trace.selected_node,
    }
    for key, point in KSS_STATUS_POINTS.items():
        annotations[key] = _plugin_words(by_point.get(point, []), _word)
    return dict(sorted(annotations.items()))


def annotation_texts(trace: CycleTrace) -> dict[str, str]:
    """``kss_annotations(trace.to_json())``, written from the trace's columns."""
    return {
        key: part if isinstance(part, str) else part.text()
        for key, part in _annotation_parts(trace).items()
    }


# ---------------------------------------------------------------------------------------------
# The pod


class _Form(dict[str, str]):
    """Text as the pod's compact JSON holds it, piece by piece: the escaping of a JSON string
    (``json.dumps``, ASCII only) replaces each character on its own, so the form of a text is
    the forms of its pieces joined (``{``, ``}``, ``,`` and ``:`` are their own form). The
    pieces repeat from node to node and cycle to cycle: each one's form is kept, up to a
    bound."""

    LIMIT = 100_000

    def __init__(self, escape: Callable[[str], str]) -> None:
        super().__init__()
        self.escape = escape

    def __missing__(self, piece: str) -> str:
        if len(self) >= self.LIMIT:
            self.clear()
        form = self[piece] = self.escape(piece)
        return form


def _in_value(text: str) -> str:
    """An annotation's value inside the pod's JSON (between its quotes)."""
    return encode_basestring_ascii(text)[1:-1]


def _in_history(text: str) -> str:
    """An annotation's value inside result-history (``go_json`` of the attempts), itself a
    string inside the pod's JSON."""
    return encode_basestring_ascii(go_string(text)[1:-1])[1:-1]


_VALUE = _Form(_in_value)
_HISTORY = _Form(_in_history)


def annotation_forms(trace: CycleTrace | Mapping[str, Any]) -> dict[str, tuple[str, str]]:
    """One attempt's annotations as ``pod_text`` writes them: each one's text as the pod's JSON
    holds it in the pod's annotations, and in result-history. From the decoded trace, or from
    its documented JSON (a dict)."""
    parts = _annotation_parts(trace) if isinstance(trace, CycleTrace) else kss_annotations(trace)
    return {
        key: (_in_value(part), _in_history(part))
        if isinstance(part, str)
        else (part.text(_VALUE.__getitem__), part.text(_HISTORY.__getitem__))
        for key, part in parts.items()
    }


# Stands in for the annotations' values in the pod's JSON, replaced by their text.
_MARKER = "\x00kss\x00"
_MEMBERS = re.compile(
    "|".join(
        re.escape(json.dumps(key) + ":" + json.dumps(_MARKER))
        for key in (
            KSS_PREFILTER_STATUS,
            KSS_PREFILTER,
            KSS_FILTER,
            KSS_POSTFILTER,
            KSS_PRESCORE,
            KSS_SCORE,
            KSS_FINALSCORE,
            KSS_RESERVE,
            KSS_PERMIT,
            KSS_PERMIT_TIMEOUT,
            KSS_PREBIND,
            KSS_BIND,
            KSS_SELECTED_NODE,
            KSS_RESULT_HISTORY,
        )
    )
)


def _history_text(history: list[dict[str, tuple[str, str]]]) -> str:
    """result-history (``go_json`` of the attempts' annotations) as the pod's JSON holds it."""
    return (
        "["
        + ",".join(
            "{"
            + ",".join(f'\\"{key}\\":\\"{forms[1]}\\"' for key, forms in annotations.items())
            + "}"
            for annotations in history
        )
        + "]"
    )


def pod_text(manifest: Mapping[str, Any], history: list[dict[str, tuple[str, str]]]) -> str:
    """The pod as compact JSON (``json.dumps`` with ``separators=(",", ":")``), annotated with
    its last attempt's annotations and ``result-history``: ``history``, oldest first, each
    attempt's ``annotation_forms``. The manifest is not changed."""
    pod = dict(manifest)
    pod.setdefault("apiVersion", "v1")
    pod.setdefault("kind", "Pod")
    if not history:
        return json.dumps(pod, separators=(",", ":"))
    values = {key: forms[0] for key, forms in history[-1].items()}
    values[KSS_RESULT_HISTORY] = _history_text(history)
    metadata = pod["metadata"] = dict(pod.get("metadata") or {})
    annotations = metadata["annotations"] = dict(metadata.get("annotations") or {})
    annotations.update(dict.fromkeys(values, _MARKER))
    # Each member the markers stand in is found once with its key, where a quote ends the
    # string: the annotations' own. Anything else (a pod holding the marker's text itself)
    # is written whole, the values unescaped again from their forms.
    text = json.dumps(pod, separators=(",", ":"))
    found = _MEMBERS.findall(text)
    if len(found) == len(set(found)) == len(values):
        return _MEMBERS.sub(lambda member: _member(member.group(), values), text)
    annotations.update({key: json.loads(f'"{value}"') for key, value in values.items()})
    return json.dumps(pod, separators=(",", ":"))


def _member(member: str, values: dict[str, str]) -> str:
    key = member[1 : member.index('"', 1)]
    return f'"{key}":"{values[key]}"'
