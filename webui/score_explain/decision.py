"""The sentence on top of the trace page: who won a cycle, by how much and which plugins
decided it; or why no node fit. Read from the trace alone (docs/trace-format.md)."""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

# How many plugins the sentence names as having decided the winner.
DECISIVE_SHOWN = 3


@dataclass(frozen=True, slots=True)
class Decisive:
    plugin: str
    difference: int


@dataclass(frozen=True, slots=True)
class Decision:
    """The cycle in one sentence, with the plugins that decided it (to highlight them)."""

    sentence: str
    winner: str = ""
    runner_up: str = ""
    margin: int = 0
    decisive: tuple[Decisive, ...] = ()
    tie: tuple[str, ...] = ()

    @property
    def decisive_plugins(self) -> frozenset[str]:
        return frozenset(d.plugin for d in self.decisive)


def _nodes(count: int) -> str:
    return f"{count} node{'' if count == 1 else 's'}"


def _join(items: Sequence[str]) -> str:
    if len(items) <= 1:
        return "".join(items)
    return ", ".join(items[:-1]) + " and " + items[-1]


def _rejections(trace: Mapping[str, Any]) -> Counter[tuple[str, str]]:
    """(plugin, reason) -> how many nodes it rejected for that reason (asked-afterwards
    entries left out: they decided nothing)."""
    counted: Counter[tuple[str, str]] = Counter()
    for entries in (trace.get("filter") or {}).values():
        for entry in entries:
            if entry.get("code") == "Success" or entry.get("hypothetical"):
                continue
            plugin = entry.get("plugin") or entry.get("stage") or "PreFilter"
            for reason in entry.get("reasons") or [entry.get("code", "")]:
                counted[(plugin, reason)] += 1
    return counted


def decision(trace: Mapping[str, Any]) -> Decision:
    """Who won, by how much and which plugins decided it; or why no node fit."""
    result = trace.get("result")
    total_nodes = int(trace.get("totalNodes") or 0)
    if result == "Scheduled" or (result == "Waiting" and trace.get("node")):
        return _scheduled(trace, total_nodes)
    if result == "Unschedulable":
        return Decision(_unschedulable(trace, total_nodes))
    if result == "Error":
        return Decision(f"The cycle failed with an error: {trace.get('message') or 'no message'}.")
    return Decision(f"The cycle ended {result or 'without a result'}.")


def _scheduled(trace: Mapping[str, Any], total_nodes: int) -> Decision:
    winner = str(trace.get("node") or "")
    totals: dict[str, int] = dict(trace.get("totals") or {})
    tie = tuple((trace.get("selected") or {}).get("tieSet") or ())
    nominated = trace.get("nominatedNodeTried")
    if nominated and nominated == winner and len(totals) <= 1:
        return Decision(
            f"{winner} was the node an earlier preemption had nominated the pod to; the "
            "scheduler tries that node first, and it fit, so no other node was looked at.",
            winner=winner,
        )
    if len(totals) <= 1:
        feasible = int(trace.get("feasibleNodes") or 1)
        if feasible == 1:
            return Decision(
                f"{winner} was the only one of {_nodes(total_nodes)} that passed every "
                "filter, so nothing was scored.",
                winner=winner,
            )
        return Decision(f"{winner} was chosen without scoring.", winner=winner)
    best = totals.get(winner, 0)
    if len(tie) <= 1:
        # A trace without the tie set (rebuilt from kube-scheduler-simulator's annotations, say)
        # still ties when another node has the winner's total: it is no "0 ahead".
        tie = (winner, *sorted(n for n, t in totals.items() if t == best and n != winner))
    if len(tie) > 1:
        others = [n for n in tie if n != winner]
        return Decision(
            f"{winner} won with {best}, tied with {_join(others)}: among the {len(tie)} nodes "
            "with the top score the scheduler picks one at random.",
            winner=winner,
            tie=tie,
        )
    runner_up, second = max(
        ((n, t) for n, t in totals.items() if n != winner), key=lambda item: (item[1], item[0])
    )
    scores = trace.get("scores") or {}
    differences = [
        Decisive(plugin, int(cell["weighted"]) - int(scores[runner_up][plugin]["weighted"]))
        for plugin, cell in (scores.get(winner) or {}).items()
        if plugin in (scores.get(runner_up) or {})
    ]
    decisive = tuple(
        sorted((d for d in differences if d.difference > 0), key=lambda d: -d.difference)[
            :DECISIVE_SHOWN
        ]
    )
    against = sorted((d for d in differences if d.difference < 0), key=lambda d: d.difference)
    sentence = (
        f"{winner} won with {best}, {best - second} ahead of {runner_up} ({second}), "
        f"out of {_nodes(len(totals))} scored"
    )
    if decisive:
        named = [f"{d.plugin} (+{d.difference})" for d in decisive]
        sentence += f"; decided by {_join(named)}"
    if against:
        sentence += f"; {against[0].plugin} favoured {runner_up} ({against[0].difference})"
    return Decision(
        sentence + ".",
        winner=winner,
        runner_up=runner_up,
        margin=best - second,
        decisive=decisive,
    )


def _unschedulable(trace: Mapping[str, Any], total_nodes: int) -> str:
    counted = _rejections(trace)
    parts = [
        f"{count} by {plugin} ({reason})"
        for (plugin, reason), count in sorted(counted.items(), key=lambda item: -item[1])
    ]
    sentence = f"No node fit: of {_nodes(total_nodes)}, "
    sentence += ("rejected " + _join(parts)) if parts else "none passed the filters"
    preemption = trace.get("preemption") or {}
    nominated = trace.get("nominatedNode")
    if nominated:
        victims = preemption.get("victims") or []
        sentence += f". Preemption then nominated {nominated}"
        if victims:
            sentence += f", evicting {_join(list(victims))}"
        sentence += ": the pod is bound in a later cycle."
    else:
        sentence += ". Preemption found no node where evicting pods would help."
    return sentence
