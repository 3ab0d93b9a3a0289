"""Predict, then reveal: where a learner's guess of a pod's node went wrong, read from the trace.

Mirrors no upstream file: it only reads a cycle trace (docs/trace-format.md, the ``to_json`` of
``schedviz/scheduler/trace.py``) and says, in the scheduler's own terms, why the guessed node was
or was not the one chosen: cut by PreFilter, rejected by a Filter plugin (or an extender), never
evaluated (percentageOfNodesToScore), feasible but scored lower, tied and lost the random
tie-break, or the pod fit nowhere (its FitError) or got its node through preemption.

A guess is a node name, or ``UNSCHEDULABLE`` ("") for "it fits nowhere". A guess is right when
it names where the cycle sends the pod: the selected node of a Scheduled cycle, the node
preemption nominated (the pod is bound there in a later cycle), or nowhere when the pod is
unschedulable without preemption.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from enum import StrEnum
from typing import Any

UNSCHEDULABLE = ""

RESULT_SCHEDULED = "Scheduled"
RESULT_UNSCHEDULABLE = "Unschedulable"
RESULT_WAITING = "Waiting"
CODE_SUCCESS = "Success"
STAGE_PREFILTER = "PreFilter"
STAGE_EXTENDER = "Extender"


class Verdict(StrEnum):
    """What happened to the guess."""

    RIGHT = "right"
    # The guessed node was cut by a PreFilter result (or PreFilter rejected the pod outright).
    PREFILTER = "prefilter"
    # A Filter plugin (or an extender) rejected the guessed node.
    FILTERED = "filtered"
    # The walk over the nodes stopped before reaching it (percentageOfNodesToScore).
    NOT_EVALUATED = "not-evaluated"
    # The pod's nominated node fit, so no other node was looked at.
    NOMINATED_FIRST = "nominated-first"
    # Feasible, but its total score was lower than the chosen node's.
    SCORED_LOWER = "scored-lower"
    # Feasible with the top total, but the random tie-break picked another node.
    LOST_TIE = "lost-tie"
    # The guess was a node, but the pod fit nowhere (and preemption did not help).
    UNSCHEDULABLE = "unschedulable"
    # The pod fit nowhere as things stood; preemption made room on another node.
    PREEMPTION = "preemption"
    # The guess was "unschedulable", but the pod fit.
    SCHEDULED = "scheduled"
    # The cycle failed with an error (a plugin's, a bind's): no node was decided.
    ERROR = "error"
    # The guessed node was not among the cycle's nodes (added or deleted since).
    UNKNOWN_NODE = "unknown-node"


class NotRevealable(ValueError):
    """The cycle has no outcome yet (held at Permit)."""


@dataclass(frozen=True, slots=True)
class ScoreRow:
    """One score plugin's weighted score on the guessed and on the chosen node."""

    plugin: str
    weight: int
    guessed: int
    chosen: int

    @property
    def difference(self) -> int:
        """How many points the plugin put the chosen node ahead (negative: behind)."""
        return self.chosen - self.guessed

    @property
    def decisive(self) -> bool:
        """The plugin favoured the chosen node: one of those that made the difference."""
        return self.chosen > self.guessed


@dataclass(frozen=True, slots=True)
class Rejection:
    """Where the guessed node's filtering stopped: the plugin (or extender) and its reasons."""

    plugin: str
    code: str
    reasons: tuple[str, ...]
    stage: str = ""
    # Asked after the decision, for the trace only (the node was not evaluated).
    hypothetical: bool = False


@dataclass(frozen=True, slots=True)
class Reveal:
    """The guess against one cycle of the pod."""

    cycle: int
    pod: str
    guess: str
    result: str
    # Where the cycle sends the pod: the selected node, or the node preemption nominated.
    landed: str | None
    correct: bool
    verdict: Verdict
    # The cycle's message: the Scheduled text or the FitError, byte for byte upstream's.
    message: str
    feasible_nodes: int
    evaluated_nodes: int
    total_nodes: int
    rejection: Rejection | None = None
    scores: tuple[ScoreRow, ...] = ()
    guessed_total: int | None = None
    chosen_total: int | None = None
    tie_set: tuple[str, ...] = ()
    nominated_node: str | None = None
    victims: tuple[str, ...] = ()
    nominated_node_tried: str | None = None

    @property
    def guessed_unschedulable(self) -> bool:
        return self.guess == UNSCHEDULABLE

    @property
    def decisive_plugins(self) -> tuple[str, ...]:
        return tuple(row.plugin for row in self.scores if row.decisive)


def _rejection(entries: Sequence[Mapping[str, Any]] | None) -> Rejection | None:
    """A node's verdict: its first entry whose code is not Success (None: it passed)."""
    for entry in entries or ():
        code = str(entry.get("code", CODE_SUCCESS))
        if code != CODE_SUCCESS:
            return Rejection(
                plugin=str(entry.get("plugin", "")),
                code=code,
                reasons=tuple(str(r) for r in entry.get("reasons") or ()),
                stage=str(entry.get("stage", "")),
                hypothetical=bool(entry.get("hypothetical", False)),
            )
    return None


def _int(value: Any) -> int:
    return int(value) if isinstance(value, int | float) else 0


def score_rows(trace: Mapping[str, Any], guessed: str, chosen: str) -> tuple[ScoreRow, ...]:
    """Per score plugin (in the trace's order), its weighted score on both nodes."""
    scores: Mapping[str, Mapping[str, Mapping[str, Any]]] = trace.get("scores") or {}
    guessed_scores = scores.get(guessed) or {}
    chosen_scores = scores.get(chosen) or {}
    plugins = list(chosen_scores) + [p for p in guessed_scores if p not in chosen_scores]
    rows = []
    for plugin in plugins:
        g = guessed_scores.get(plugin) or {}
        c = chosen_scores.get(plugin) or {}
        rows.append(
            ScoreRow(
                plugin=plugin,
                weight=_int(c.get("weight", g.get("weight"))),
                guessed=_int(g.get("weighted")),
                chosen=_int(c.get("weighted")),
            )
        )
    return tuple(rows)


def _nominated(trace: Mapping[str, Any]) -> tuple[str | None, tuple[str, ...]]:
    preemption = trace.get("preemption") or {}
    node = trace.get("nominatedNode") or preemption.get("nominatedNode") or None
    victims = tuple(str(v) for v in preemption.get("victims") or ())
    return (str(node) if node else None), victims


def _why_not(trace: Mapping[str, Any], guess: str, chosen: str) -> dict[str, Any]:
    """Why the feasible-or-not guessed node lost to ``chosen`` in a Scheduled cycle."""
    filtered: Mapping[str, Sequence[Mapping[str, Any]]] = trace.get("filter") or {}
    not_evaluated = set(trace.get("notEvaluated") or ())
    totals: Mapping[str, Any] = trace.get("totals") or {}
    rejection = _rejection(filtered.get(guess))
    if guess in not_evaluated or guess not in filtered:
        # Entries of nodes past the walk's end are hypothetical: kept with the verdict.
        tried = trace.get("nominatedNodeTried")
        if tried and tried == chosen:
            return {"verdict": Verdict.NOMINATED_FIRST, "rejection": rejection}
        if guess in not_evaluated:
            return {"verdict": Verdict.NOT_EVALUATED, "rejection": rejection}
        # In neither list: the node was not in the scheduler's snapshot.
        return {"verdict": Verdict.UNKNOWN_NODE}
    if rejection is not None:
        verdict = Verdict.PREFILTER if rejection.stage == STAGE_PREFILTER else Verdict.FILTERED
        return {"verdict": verdict, "rejection": rejection}
    if guess in totals and chosen in totals:
        guessed_total, chosen_total = _int(totals[guess]), _int(totals[chosen])
        verdict = Verdict.LOST_TIE if guessed_total == chosen_total else Verdict.SCORED_LOWER
        return {
            "verdict": verdict,
            "scores": score_rows(trace, guess, chosen),
            "guessed_total": guessed_total,
            "chosen_total": chosen_total,
        }
    # Passed every filter yet has no total: scoring was skipped, which upstream does only when a
    # single node is feasible (then it is the chosen one), so a trace never gets here; a total
    # missing from an imported trace is read as having scored lower.
    return {"verdict": Verdict.SCORED_LOWER}


def reveal(trace: Mapping[str, Any], guess: str) -> Reveal:
    """The guess (a node name, or ``UNSCHEDULABLE``) against the pod's cycle ``trace``."""
    result = str(trace.get("result", ""))
    if result == RESULT_WAITING:
        raise NotRevealable(f"cycle {trace.get('cycle')} is still waiting at Permit")
    selected = (trace.get("selected") or {}).get("node") or trace.get("node")
    nominated, victims = _nominated(trace)
    filtered: Mapping[str, Sequence[Mapping[str, Any]]] = trace.get("filter") or {}
    base: dict[str, Any] = {
        "cycle": _int(trace.get("cycle")),
        "pod": str(trace.get("pod", "")),
        "guess": guess,
        "result": result,
        "message": str(trace.get("message", "")),
        "feasible_nodes": _int(trace.get("feasibleNodes")),
        "evaluated_nodes": _int(trace.get("evaluatedNodes")),
        "total_nodes": _int(trace.get("totalNodes")),
        "tie_set": tuple(str(n) for n in (trace.get("selected") or {}).get("tieSet") or ()),
        "nominated_node": nominated,
        "victims": victims,
        "nominated_node_tried": trace.get("nominatedNodeTried") or None,
    }
    if result == RESULT_SCHEDULED and selected:
        chosen = str(selected)
        if guess == chosen:
            return Reveal(**base, landed=chosen, correct=True, verdict=Verdict.RIGHT)
        if guess == UNSCHEDULABLE:
            return Reveal(**base, landed=chosen, correct=False, verdict=Verdict.SCHEDULED)
        return Reveal(**base, landed=chosen, correct=False, **_why_not(trace, guess, chosen))
    if result == RESULT_UNSCHEDULABLE or (result != RESULT_SCHEDULED and nominated):
        rejection = None if guess == UNSCHEDULABLE else _rejection(filtered.get(guess))
        if nominated:
            return Reveal(
                **base,
                landed=nominated,
                correct=guess == nominated,
                verdict=Verdict.RIGHT if guess == nominated else Verdict.PREEMPTION,
                rejection=rejection,
            )
        if guess == UNSCHEDULABLE:
            return Reveal(**base, landed=None, correct=True, verdict=Verdict.RIGHT)
        if rejection is None and guess not in filtered:
            return Reveal(**base, landed=None, correct=False, verdict=Verdict.UNKNOWN_NODE)
        return Reveal(
            **base,
            landed=None,
            correct=False,
            verdict=Verdict.UNSCHEDULABLE,
            rejection=rejection,
        )
    # An Error (a plugin's or the bind's): the scheduler decided nothing.
    return Reveal(
        **base,
        landed=None,
        correct=False,
        verdict=Verdict.ERROR,
        rejection=None if guess == UNSCHEDULABLE else _rejection(filtered.get(guess)),
    )


__all__ = [
    "UNSCHEDULABLE",
    "NotRevealable",
    "Rejection",
    "Reveal",
    "ScoreRow",
    "Verdict",
    "reveal",
    "score_rows",
]
