"""The trace page's explanations in templates: the cycle's decision in one sentence, the reasons
each Filter plugin rejected nodes for, score cells that know their plugin, and numbers rounded
for people. The words come from webui/score_explain.py."""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Mapping, Sequence
from typing import Any

from django import template

from webui.score_explain import Decision, decision, round_for_people

register = template.Library()

_FLOAT = re.compile(r"^-?\d+\.\d{4,}$")
# A Filter plugin's reasons shown in the points table; the rest are counted.
REASONS_SHOWN = 3


@register.simple_tag
def cycle_decision(trace: Mapping[str, Any]) -> Decision:
    return decision(trace)


@register.simple_tag
def filter_reasons(trace: Mapping[str, Any]) -> dict[str, list[str]]:
    """Per Filter plugin, the reasons it rejected nodes for, each with its count of nodes."""
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


@register.filter
def lookup(mapping: Mapping[str, Any] | None, key: str) -> Any:
    return (mapping or {}).get(key)


@register.filter
def score_cells(values: Sequence[Any], columns: Sequence[Any]) -> list[dict[str, Any]]:
    """A score row's flat values (raw, normalized, weighted per plugin) with their plugin."""
    cells = []
    for index, value in enumerate(values):
        column = columns[index // 3]
        cells.append(
            {
                "plugin": column.plugin,
                "field": ("raw", "norm", "weighted")[index % 3],
                "value": value,
            }
        )
    return cells


@register.filter
def for_people(value: Any) -> Any:
    """A float (or a float written as text, as queue details are) rounded for reading."""
    if isinstance(value, str) and _FLOAT.match(value):
        return str(round_for_people(float(value)))
    return round_for_people(value)
