"""A cycle's documented JSON as text, written straight from the trace's columns.

Not upstream: an export writes thousands of cycles of 5000 nodes each, and building
``CycleTrace.to_json``'s dicts (tens of thousands per cycle) and then encoding them took longer
than everything else. ``dumps(trace)`` gives exactly ``json.dumps(trace.to_json(),
separators=(",", ":"))``, byte for byte: the small fields go through ``json.dumps`` as always,
and the node-keyed parts (filter verdicts, scores, totals, the nodes never evaluated, the tie
set) are written here, each node's part made once per distinct value (most nodes pass the same
plugins and get the same few scores) and each node name encoded once per node order.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Iterable
from typing import Any

from schedviz.scheduler.framework.interface import Status
from schedviz.scheduler.trace import CycleTrace, status_json

_encode = json.JSONEncoder(separators=(",", ":")).encode

# Markers standing in for the node-keyed parts in the rest of the document. Each is found with
# its key (`"filter":"\u0000filter\u0000"`): inside an encoded string every quote is escaped, so
# that text with its bare quotes is the document's own member and never a name or a message.
_PARTS = ("filter", "notEvaluated", "scores", "totals", "tieSet")
_MARKERS = {part: f"\x00{part}\x00" for part in _PARTS}
_MEMBERS = re.compile(
    "|".join(re.escape(f"{_encode(part)}:{_encode(marker)}") for part, marker in _MARKERS.items())
)


class _Names(dict[str, str]):
    """Node names as JSON text; a name outside the node order is encoded when asked."""

    def __missing__(self, node: str) -> str:
        return _encode(node)


_names_of: tuple[tuple[str, ...], _Names] = ((), _Names())


def _names(all_nodes: tuple[str, ...]) -> _Names:
    """Each node's name as JSON text; the node order is shared between cycles, so the last
    one asked for is kept."""
    global _names_of
    cached = _names_of  # read once: other threads may replace it
    if cached[0] is not all_nodes:
        cached = (all_nodes, _Names((name, _encode(name)) for name in all_nodes))
        _names_of = cached
    return cached[1]


def dumps(trace: CycleTrace) -> str:
    """``json.dumps(trace.to_json(), separators=(",", ":"))``, written faster."""
    name = _names(trace.all_nodes).__getitem__
    text = _encode(
        trace.document(
            filter_json=_MARKERS["filter"],
            not_evaluated=_MARKERS["notEvaluated"],
            scores=_MARKERS["scores"],
            totals=_MARKERS["totals"],
            tie_set=_MARKERS["tieSet"],
        )
    )
    parts = {
        "filter": _filter_text(trace, name),
        "notEvaluated": _list_text(map(name, trace.not_evaluated())),
        "scores": _scores_text(trace, name),
        "totals": _object_text(
            f"{name(node)}:{total}"
            for node, total in _last_per_key(zip(trace.score_nodes, trace.totals, strict=True))
        ),
        "tieSet": _list_text(map(name, trace.tie_set)),
    }
    # One pass over the document's own text: the parts put in are not searched again.
    return _MEMBERS.sub(lambda member: _member(member.group(), parts), text)


def _member(member: str, parts: dict[str, str]) -> str:
    key = member[1 : member.index('"', 1)]
    return f"{_encode(key)}:{parts[key]}"


def _list_text(items: Iterable[str]) -> str:
    return "[" + ",".join(items) + "]"


def _object_text(members: Iterable[str]) -> str:
    return "{" + ",".join(members) + "}"


def _last_per_key(pairs: Iterable[tuple[str, Any]]) -> Iterable[tuple[str, Any]]:
    """The pairs as a dict keeps them: the first position of each key, its last value."""
    return dict(pairs).items()


def _filter_text(trace: CycleTrace, name: Callable[[str], str]) -> str:
    """``filter_json`` as text: the same entries in the same order, each node's list written
    once per distinct outcome."""
    status = trace.pre_filter_status
    if status is not None and trace._rejected_at_pre_filter():
        entry = "[" + _encode(status_json(status, stage="PreFilter")) + "]"
        return _object_text(f"{name(node)}:{entry}" for node in trace.all_nodes)
    narrowed = trace.pre_filter_nodes
    cut = status is not None and narrowed is not None
    cut_text = (
        "[" + _encode(status_json(status, stage="PreFilter")) + "]" if status is not None else ""
    )
    plugins = trace.filter_plugins
    successes = [_encode({"plugin": p, "code": "Success"}) for p in plugins]
    hypothetical_successes = [
        _encode({"plugin": p, "code": "Success", "hypothetical": True}) for p in plugins
    ]
    made: dict[tuple[int, int, bool, int], str] = {}
    statuses: dict[int, Status] = {}  # keeps the keys' objects alive while ``made`` is used

    def entries(passed: int, rejection: Status | None, hypothetical: bool, node: str) -> str:
        extender = trace.extender_results.get(node)
        key = (passed, id(rejection), hypothetical, id(extender))
        text = made.get(key)
        if text is None:
            for kept in (rejection, extender):
                if kept is not None:
                    statuses[id(kept)] = kept
            items = list((hypothetical_successes if hypothetical else successes)[:passed])
            if rejection is not None:
                record = status_json(rejection)
                if hypothetical:
                    record["hypothetical"] = True
                items.append(_encode(record))
            if extender is not None:
                items.append(_encode(status_json(extender, stage="Extender")))
            text = made[key] = _list_text(items)
        return text

    results = trace.filter_results
    unevaluated = trace.unevaluated_filter_results
    members: list[str] = []
    for node in trace._nodes_with_filter_entries(cut):
        outcome = results.get(node)
        hypothetical = outcome is None and node in unevaluated
        if hypothetical:
            outcome = unevaluated[node]
        if outcome is None:
            if cut and narrowed is not None and node not in narrowed:
                members.append(f"{name(node)}:{cut_text}")
            continue
        passed, rejection = outcome
        members.append(f"{name(node)}:{entries(passed, rejection, hypothetical, node)}")
    return _object_text(members)


def _scores_text(trace: CycleTrace, name: Callable[[str], str]) -> str:
    """``scores_json`` as text, each node's part written once per distinct set of scores."""
    plugins = [(_encode(plugin), weight) for plugin, weight in trace.score_plugins]
    # A plugin named twice keeps its first place and its last scores, as the dict does.
    last = {plugin: column for column, (plugin, _) in enumerate(trace.score_plugins)}
    order = [last[plugin] for plugin in dict.fromkeys(p for p, _ in trace.score_plugins)]
    columns = [trace.raw_scores[c] for c in order] + [trace.normalized_scores[c] for c in order]
    made: dict[tuple[int, ...], str] = {}

    def scores(values: tuple[int, ...]) -> str:
        text = made.get(values)
        if text is None:
            members = []
            for position, column in enumerate(order):
                plugin, weight = plugins[column]
                raw, normalized = values[position], values[len(order) + position]
                members.append(
                    f'{plugin}:{{"raw":{_encode(raw)},"normalized":{_encode(normalized)},'
                    f'"weight":{_encode(weight)},"weighted":{_encode(normalized * weight)}}}'
                )
            text = made[values] = _object_text(members)
        return text

    rows = zip(*columns, strict=True) if columns else (() for _ in trace.score_nodes)
    per_node = dict(zip(trace.score_nodes, map(scores, rows), strict=True))
    return _object_text(f"{name(node)}:{text}" for node, text in per_node.items())
