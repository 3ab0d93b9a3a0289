"""The trace page's explanations in templates: the cycle's decision in one sentence and numbers
rounded for people. The words come from webui/score_explain/."""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

from django import template

from webui.score_explain import Decision, decision, round_for_people

register = template.Library()

_FLOAT = re.compile(r"^-?\d+\.\d{4,}$")


@register.simple_tag
def cycle_decision(trace: Mapping[str, Any]) -> Decision:
    return decision(trace)


@register.filter
def for_people(value: Any) -> Any:
    """A float (or a float written as text, as queue details are) rounded for reading."""
    if isinstance(value, str) and _FLOAT.match(value):
        return str(round_for_people(float(value)))
    return round_for_people(value)
