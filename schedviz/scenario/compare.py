"""One scenario under several scheduler configurations, and where they part.

Each configuration runs the scenario from the same empty cluster with the same seed; the runs
are then read side by side: per step, each run's figures, and the first step whose placements
differ (which pods sit on different nodes, or are pending in one run and bound in another), and
the first binding in timeline order that differs.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

# The figures put side by side (the attempts per pod stay in each run's own result).
COMPARED = ("time", "nodes", "pods", "pending", "unschedulable", "bindings", "preemptions")


@dataclass(frozen=True)
class Variant:
    """One configuration's result: the document of ``ScenarioRun.document`` with the node
    cards kept (``keep_cards``)."""

    name: str
    document: dict[str, Any]

    @property
    def steps(self) -> list[dict[str, Any]]:
        steps: list[dict[str, Any]] = self.document["schedviz"]["steps"]
        return steps

    @property
    def timeline(self) -> dict[str, list[dict[str, Any]]]:
        timeline: dict[str, list[dict[str, Any]]] = self.document["status"]["scenarioResult"][
            "timeline"
        ]
        return timeline

    def placements(self, index: int) -> dict[str, str]:
        """pod -> node at the end of the step."""
        cards = self.document["schedviz"].get("cards") or []
        if index >= len(cards):
            return {}
        return {pod: card["name"] for card in cards[index] for pod in card["pods"]}


def _bindings(variant: Variant) -> list[tuple[int, str, str]]:
    """(major step, pod, node) of every binding, in timeline order."""
    out = []
    for major, events in variant.timeline.items():
        for event in events:
            bound = event.get("podScheduled")
            if bound is not None:
                pod = f"{bound['pod']['namespace']}/{bound['pod']['name']}"
                out.append((int(major), pod, bound["node"]))
    return out


def _step_row(figures: dict[str, Any]) -> dict[str, Any]:
    row = {name: figures[name] for name in COMPARED}
    row["resources"] = {
        name: {"utilisation": f["utilisation"], "spread": f["spread"]}
        for name, f in figures["resources"].items()
    }
    return row


def compare_runs(variants: Sequence[Variant]) -> dict[str, Any]:
    """The comparison document: each variant's phase, the figures per step side by side,
    and where the placements first part."""
    steps: list[dict[str, Any]] = []
    first_difference: dict[str, Any] | None = None
    count = max(len(v.steps) for v in variants)
    for index in range(count):
        present = [v for v in variants if index < len(v.steps)]
        major = present[0].steps[index]["step"]
        steps.append(
            {
                "step": major,
                "variants": {v.name: _step_row(v.steps[index]) for v in present},
            }
        )
        if first_difference is None and len(present) == len(variants):
            differing = _differing_pods(variants, index)
            if differing:
                first_difference = {"step": major, "pods": differing}
    return {
        "variants": [
            {
                "name": v.name,
                "phase": v.document["status"]["phase"],
                "message": v.document["status"].get("message", ""),
            }
            for v in variants
        ],
        "firstDifference": first_difference,
        "firstDifferentBinding": _first_different_binding(variants),
        "steps": steps,
    }


def _differing_pods(variants: Sequence[Variant], index: int) -> list[dict[str, Any]]:
    placements = [v.placements(index) for v in variants]
    pods = sorted(set().union(*placements))
    out = []
    for pod in pods:
        nodes = [p.get(pod, "") for p in placements]
        if len(set(nodes)) > 1:
            out.append(
                {"pod": pod, "nodes": {v.name: n for v, n in zip(variants, nodes, strict=True)}}
            )
    return out


def _first_different_binding(variants: Sequence[Variant]) -> dict[str, Any] | None:
    sequences = [_bindings(v) for v in variants]
    for position in range(max(len(s) for s in sequences)):
        entries = [s[position] if position < len(s) else None for s in sequences]
        if len(set(entries)) > 1:
            return {
                "index": position,
                "bindings": {
                    v.name: ({"step": e[0], "pod": e[1], "node": e[2]} if e is not None else None)
                    for v, e in zip(variants, entries, strict=True)
                },
            }
    return None
