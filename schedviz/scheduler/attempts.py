"""What changed between two scheduling attempts of the same pod.

Upstream has no such module: kube-scheduler keeps no history of a pod's attempts. This compares
two cycle traces (docs/trace-format.md) the way a person reads them side by side: the outcome,
each node's filter verdict (the first non-Success entry, as ``findNodesThatPassFilters`` stops
there), each score plugin's raw and weighted score on the nodes both attempts scored, the pod's
place in the scheduling queue (backend/queue/scheduling_queue.go: activeQ, backoffQ,
unschedulablePods, with attempts and backoff expiry), and the cluster changes recorded between
the two attempts when the caller has them (the change log, the informers' watch stream).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import asdict, dataclass, field
from typing import Any

from schedviz.scheduler.diagnosis import (
    EXTENDER_PLUGIN,
    STAGE_EXTENDER,
    STAGE_PRE_FILTER,
    camel_keys,
)

CODE_SUCCESS = "Success"


class AttemptMismatch(ValueError):
    """The two traces are not attempts of the same pod."""


@dataclass(frozen=True, slots=True)
class FieldChange:
    field: str
    before: Any
    after: Any


@dataclass(frozen=True, slots=True)
class VerdictChange:
    """One node's filter verdict in each attempt ("" when the attempt did not have the node)."""

    node: str
    before: str
    after: str


@dataclass(frozen=True, slots=True)
class ScoreChange:
    node: str
    plugin: str
    raw_before: int
    raw_after: int
    weighted_before: int
    weighted_after: int


@dataclass(frozen=True, slots=True)
class QueueFacts:
    """Where the pod sat in the scheduling queue just before it was popped."""

    subqueue: str
    details: dict[str, Any]


@dataclass(slots=True)
class AttemptDiff:
    pod: str
    cycle_before: int
    cycle_after: int
    fields: list[FieldChange]
    verdicts: list[VerdictChange]
    scores: list[ScoreChange]
    totals: list[FieldChange]
    queue_before: QueueFacts | None
    queue_after: QueueFacts | None
    # Cluster changes between the two attempts, as the caller found them (oldest first).
    changes: list[dict[str, Any]] = field(default_factory=list)

    def to_json(self) -> dict[str, Any]:
        data = asdict(self)
        camel: dict[str, Any] = camel_keys(data)
        return camel


def verdict(entries: Sequence[Mapping[str, Any]]) -> str:
    """A node's filter verdict in words: "passed", or who rejected it and why."""
    rejection = next((e for e in entries if e.get("code") != CODE_SUCCESS), None)
    if rejection is None:
        return "passed"
    reasons = "; ".join(rejection.get("reasons") or []) or str(rejection.get("code"))
    stage = rejection.get("stage")
    if stage == STAGE_PRE_FILTER:
        return f"cut by PreFilter: {reasons}"
    plugin = EXTENDER_PLUGIN if stage == STAGE_EXTENDER else rejection.get("plugin", "")
    return f"rejected by {plugin}: {reasons}"


def _verdicts(trace: Mapping[str, Any]) -> dict[str, str]:
    result = {node: verdict(entries) for node, entries in (trace.get("filter") or {}).items()}
    for node in trace.get("notEvaluated") or []:
        result.setdefault(node, "not evaluated")
    return result


def queue_facts(trace: Mapping[str, Any]) -> QueueFacts | None:
    """The pod's own entry in the queue the trace recorded, and which sub-queue held it."""
    pod = trace.get("pod")
    for subqueue, entries in (trace.get("queue") or {}).items():
        if subqueue == "moves":
            continue  # how pods moved, not where they sat
        for entry in entries or []:
            if isinstance(entry, Mapping) and entry.get("pod") == pod:
                return QueueFacts(subqueue, {k: v for k, v in entry.items() if k != "pod"})
    return None


_FIELDS = (
    ("result", "result"),
    ("node", "node"),
    ("message", "message"),
    ("attempt", "attempt"),
    ("time", "time"),
    ("profile", "profile"),
    ("feasibleNodes", "feasibleNodes"),
    ("totalNodes", "totalNodes"),
    ("nominatedNode", "nominatedNode"),
)


def diff_attempts(
    before: Mapping[str, Any],
    after: Mapping[str, Any],
    *,
    changes: Sequence[Mapping[str, Any]] = (),
) -> AttemptDiff:
    """What changed from attempt ``before`` to attempt ``after`` of the same pod."""
    if before.get("pod") != after.get("pod"):
        raise AttemptMismatch(
            f"cycles {before.get('cycle')} and {after.get('cycle')} are attempts of different "
            f"pods ({before.get('pod')}, {after.get('pod')})"
        )
    fields = [
        FieldChange(name, before.get(key), after.get(key))
        for name, key in _FIELDS
        if before.get(key) != after.get(key)
    ]
    # No PostFilter and a PostFilter without victims both evicted nobody.
    victims_before = (before.get("preemption") or {}).get("victims") or []
    victims_after = (after.get("preemption") or {}).get("victims") or []
    if victims_before != victims_after:
        fields.append(FieldChange("preemptionVictims", victims_before, victims_after))
    old, new = _verdicts(before), _verdicts(after)
    verdicts = [
        VerdictChange(node, old.get(node, ""), new.get(node, ""))
        for node in [*old, *(n for n in new if n not in old)]
        if old.get(node, "") != new.get(node, "")
    ]
    scores_before = before.get("scores") or {}
    scores_after = after.get("scores") or {}
    scores = []
    for node, plugins in scores_before.items():
        later = scores_after.get(node)
        if later is None:
            continue
        for plugin, score in plugins.items():
            other = later.get(plugin)
            if other is None:
                continue
            if (score.get("raw"), score.get("weighted")) != (
                other.get("raw"),
                other.get("weighted"),
            ):
                scores.append(
                    ScoreChange(
                        node,
                        plugin,
                        int(score.get("raw", 0)),
                        int(other.get("raw", 0)),
                        int(score.get("weighted", 0)),
                        int(other.get("weighted", 0)),
                    )
                )
    totals_before = before.get("totals") or {}
    totals_after = after.get("totals") or {}
    totals = [
        FieldChange(node, total, totals_after[node])
        for node, total in totals_before.items()
        if node in totals_after and totals_after[node] != total
    ]
    return AttemptDiff(
        pod=str(before.get("pod")),
        cycle_before=int(before.get("cycle") or 0),
        cycle_after=int(after.get("cycle") or 0),
        fields=fields,
        verdicts=verdicts,
        scores=scores,
        totals=totals,
        queue_before=queue_facts(before),
        queue_after=queue_facts(after),
        changes=[dict(c) for c in changes],
    )
