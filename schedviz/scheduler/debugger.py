"""The step debugger's hook: a cycle that stops before each extension point it reaches.

No upstream counterpart: kube-scheduler has no debugger. The points and their order are those
pkg/scheduler/schedule_one.go runs (``schedulingCycle``: PreFilter, Filter, PostFilter when no
node fits, PreScore, Score with NormalizeScore, Reserve, Permit; ``bindingCycle``: PreBind, Bind,
PostBind); a point the cycle does not reach (no filter plugin, one feasible node so nothing is
scored, a rejection) is not stopped at. After the last point the debugger is called once more
with ``END``.

A ``Debugger`` is attached to the scheduler for one cycle (``Scheduler.debugger``); without one,
each point costs one ``is None`` check. What it sees is read from the cycle itself, never
written by plugins: the CycleState (described by ``framework.describe``) and the plugin records
the framework runtime has added to the cycle's trace since the previous stop.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Protocol

from schedviz.kube.objects import Pod
from schedviz.scheduler.framework.cycle_state import CycleState
from schedviz.scheduler.trace import CycleTrace, PointRecord

PRE_FILTER = "PreFilter"
FILTER = "Filter"
POST_FILTER = "PostFilter"
PRE_SCORE = "PreScore"
SCORE = "Score"
RESERVE = "Reserve"
PERMIT = "Permit"
PRE_BIND = "PreBind"
BIND = "Bind"
POST_BIND = "PostBind"
END = "End"

# Upstream's execution order; PostFilter runs only when Filter leaves no node.
POINTS = (
    PRE_FILTER,
    FILTER,
    POST_FILTER,
    PRE_SCORE,
    SCORE,
    RESERVE,
    PERMIT,
    PRE_BIND,
    BIND,
    POST_BIND,
)

# One line each, for someone who has never read the scheduling framework's documentation.
EXPLANATIONS = {
    PRE_FILTER: "Each plugin looks at the pod once, computes what Filter will need and writes "
    "it to the cycle state; it may reject the pod outright.",
    FILTER: "Each node is checked by every Filter plugin in turn; a node that any plugin "
    "rejects cannot host the pod.",
    POST_FILTER: "No node fits: these plugins try to make room, e.g. by preempting (evicting) "
    "lower-priority pods.",
    PRE_SCORE: "Each plugin prepares, once, what it needs to score the nodes that passed Filter.",
    SCORE: "Each plugin scores every feasible node from 0 to 100 (NormalizeScore rescales "
    "them); scores are weighted and summed.",
    RESERVE: "The best node is chosen and the pod assumed on it; plugins reserve resources "
    "(e.g. volumes) for it.",
    PERMIT: "Plugins approve, reject, or hold the pod (wait) before it is bound.",
    PRE_BIND: "The binding cycle starts: plugins do work the node needs first, such as "
    "binding volumes.",
    BIND: "A Bind plugin writes the pod's node to the API server (here: the database).",
    POST_BIND: "Informational: plugins learn that the pod is bound, e.g. to clean up.",
    END: "The cycle is over.",
}


# Rejected nodes named per Filter plugin; beyond this many, the count says the rest.
NAMED_NODES = 10


@dataclass(frozen=True, slots=True)
class PluginOutcome:
    """What one plugin did at a point: its status, and for Filter and Score how many nodes;
    for Filter the first rejected nodes by name (``NAMED_NODES``) with their reasons."""

    plugin: str
    code: str
    reasons: tuple[str, ...] = ()
    calls: int = 1
    rejected: int = 0
    rejected_nodes: tuple[str, ...] = ()

    def to_json(self) -> dict[str, Any]:
        return {
            "plugin": self.plugin,
            "code": self.code,
            "reasons": list(self.reasons),
            "calls": self.calls,
            "rejected": self.rejected,
            "rejectedNodes": list(self.rejected_nodes),
        }


@dataclass(frozen=True, slots=True)
class PointOutcome:
    """The plugins that ran at one point (Unreserve counts as a point of its own)."""

    point: str
    plugins: tuple[PluginOutcome, ...]

    def to_json(self) -> dict[str, Any]:
        return {"point": self.point, "plugins": [p.to_json() for p in self.plugins]}


def _filter_rejections(trace: CycleTrace | None) -> dict[str, tuple[list[str], list[str]]]:
    """Per Filter plugin, the first nodes it rejected (in the walk's order) and their reasons."""
    found: dict[str, tuple[list[str], list[str]]] = {}
    if trace is None:
        return found
    for node, (_, status) in trace.filter_results.items():
        if status is None:
            continue
        nodes, reasons = found.setdefault(status.plugin, ([], []))
        if len(nodes) < NAMED_NODES:
            nodes.append(node)
        reasons.extend(r for r in status.reasons if r not in reasons)
    return found


def outcomes(
    records: list[PointRecord], trace: CycleTrace | None = None
) -> tuple[PointOutcome, ...]:
    """Records grouped by point, in the order they ran; Filter's rejections named from the
    cycle's ``trace`` when given."""
    grouped: list[tuple[str, list[PluginOutcome]]] = []
    rejections = (
        _filter_rejections(trace) if any(r.point == FILTER and r.rejected for r in records) else {}
    )
    for record in records:
        if not grouped or grouped[-1][0] != record.point:
            grouped.append((record.point, []))
        nodes: list[str] = []
        reasons = list(record.reasons)
        if record.point == FILTER and record.plugin in rejections:
            nodes, found = rejections[record.plugin]
            reasons = reasons or found
        grouped[-1][1].append(
            PluginOutcome(
                record.plugin,
                record.code.name,
                tuple(reasons),
                record.calls,
                record.rejected,
                tuple(nodes),
            )
        )
    return tuple(PointOutcome(point, tuple(plugins)) for point, plugins in grouped)


@dataclass(frozen=True, slots=True)
class Stop:
    """The cycle, held before ``point`` (or at its end, ``END``)."""

    cycle: int
    point: str
    pod: Pod
    state: CycleState
    # The plugins about to run at ``point``, in order (none at END).
    plugins: tuple[str, ...]
    # What ran since the previous stop, grouped by point.
    previous: tuple[PointOutcome, ...]
    trace: CycleTrace
    # The framework running the cycle (plugins' configuration, for the state's description).
    framework: Any


class Debugger(Protocol):
    def stop(self, stop: Stop) -> None:
        """Called before each point; the cycle goes on when it returns."""


class DebugCycle:
    """One cycle under a debugger: remembers where the previous stop left the trace."""

    __slots__ = ("_mark", "debugger", "framework", "state", "trace")

    def __init__(
        self, debugger: Debugger, framework: Any, state: CycleState, trace: CycleTrace
    ) -> None:
        self.debugger = debugger
        self.framework = framework
        self.state = state
        self.trace = trace
        self._mark = 0

    def before(self, point: str, pod: Pod, plugins: list[str] | tuple[str, ...]) -> None:
        records = self.trace.points
        previous = outcomes(records[self._mark :], self.trace)
        self._mark = len(records)
        self.debugger.stop(
            Stop(
                cycle=self.trace.cycle,
                point=point,
                pod=pod,
                state=self.state,
                plugins=tuple(plugins),
                previous=previous,
                trace=self.trace,
                framework=self.framework,
            )
        )
