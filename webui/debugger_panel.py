"""The step debugger panel of the dashboard: a cycle stopped before an extension point.

Read from the cluster's ``DebugSession`` (selectors), never from the runner: the same fragment
answers the page, an htmx request and a ``cluster.debug`` message on the websocket
(webui/consumers.py). The extension points are listed in upstream's order with the one about to
run highlighted, each with a one-line explanation and a link to the framework runtime upstream;
plugins link to their upstream source as the trace pages do.
"""

from __future__ import annotations

from typing import Any

from django.template.loader import render_to_string

from schedviz.cluster import selectors
from schedviz.cluster.models import Cluster, DebugSession
from schedviz.scheduler.debugger import END, EXPLANATIONS, POINTS
from webui.templatetags.trace_tags import plugin_source_url

DEBUGGER_TEMPLATE = "webui/dashboard/debugger.html"


def debugger_context(*, cluster: Cluster) -> dict[str, Any]:
    """What the panel shows; ``debugger.visible`` is False when there is nothing to show."""
    session = selectors.debug_session_get(cluster=cluster)
    paused = cluster.run_state == Cluster.RunState.PAUSED
    view: dict[str, Any] = {
        "visible": paused or (session is not None and session.active),
        "paused": paused,
        "session": session,
        "state": _shown_state(session),
        "active": session is not None and session.active,
    }
    if session is None or session.state == DebugSession.State.REQUESTED:
        return {"cluster": cluster, "debugger": view}
    reached = list(session.reached)
    current = session.point
    view["points"] = [_point(name, reached, current) for name in (*POINTS, END)]
    view["current"] = current
    view["explanation"] = EXPLANATIONS.get(current, "")
    view["plugins"] = [{"name": p, "url": plugin_source_url(p)} for p in session.plugins]
    view["entries"] = session.state_entries
    view["previous"] = [
        {
            "point": outcome["point"],
            "plugins": [_plugin_outcome(outcome["point"], plugin) for plugin in outcome["plugins"]],
        }
        for outcome in session.previous
    ]
    view["next_point"] = _next_point(current)
    view["continue_hint"] = _continue_hint(current)
    view["stopped"] = view["state"] == DebugSession.State.STOPPED
    view["outcome"] = session.outcome
    return {"cluster": cluster, "debugger": view}


def _shown_state(session: DebugSession | None) -> str:
    """A stop already answered is shown running: the runner is about to take the command."""
    if session is None:
        return ""
    if session.state == DebugSession.State.STOPPED and session.command:
        return DebugSession.State.RUNNING
    return session.state


def _point(name: str, reached: list[str], current: str) -> dict[str, Any]:
    if name == current:
        status = "current"
    elif name in reached:
        status = "done"
    else:
        status = "skipped" if current == END or _after(current, name) else "ahead"
    return {"name": name, "status": status, "explanation": EXPLANATIONS[name]}


def _after(current: str, name: str) -> bool:
    """Whether the cycle is past ``name`` (a point it did not reach was skipped)."""
    order = (*POINTS, END)
    return current in order and order.index(name) < order.index(current)


def _nodes(count: int) -> str:
    return f"{count} node{'s' if count != 1 else ''}"


def _plugin_outcome(point: str, plugin: dict[str, Any]) -> dict[str, Any]:
    """One plugin's line in "What the previous point decided", in words: Filter counts the
    nodes it ran on and names those it rejected; Score counts the nodes it scored."""
    calls, rejected = int(plugin.get("calls", 1)), int(plugin.get("rejected", 0))
    named = list(plugin.get("rejectedNodes") or [])
    if point == "Filter":
        summary = f"ran on {_nodes(calls)}, " + (
            f"rejected {rejected}" if rejected else "rejected none"
        )
    elif point == "Score" and plugin.get("code") == "Success":
        summary = f"scored {_nodes(calls)}"
    else:
        summary = str(plugin.get("code", ""))
        if calls != 1:
            summary += f" on {_nodes(calls)}"
    return {
        **plugin,
        "url": plugin_source_url(plugin["plugin"]),
        "summary": summary,
        "rejectedNodes": named,
        "more": max(rejected - len(named), 0) if named else 0,
    }


# Where the cycle goes once the current point has let the pod through; after Filter it
# depends on whether any node fits (PostFilter) and how many (one is not scored: Reserve).
_NEXT = {
    "PreFilter": "Filter",
    "Filter": "PostFilter if no node fits, else PreScore (or Reserve when one node fits)",
    "PostFilter": "the end of the cycle",
    "PreScore": "Score",
    "Score": "Reserve",
    "Reserve": "Permit",
    "Permit": "PreBind",
    "PreBind": "Bind",
    "Bind": "PostBind",
    "PostBind": "the end of the cycle",
}


def _next_point(current: str) -> str:
    return _NEXT.get(current, "")


def _continue_hint(current: str) -> str:
    """What "Run <point>" does, in one style for every point."""
    following = _next_point(current)
    return f"Runs {current}'s plugins, then stops before {following}." if following else ""


def debugger_fragment(*, cluster_id: int) -> str:
    """The panel for the websocket (out of band); "" when the cluster is gone."""
    cluster = Cluster.objects.filter(pk=cluster_id).first()
    if cluster is None:
        return ""
    context = debugger_context(cluster=cluster)
    context["oob"] = True
    return render_to_string(f"{DEBUGGER_TEMPLATE}#debugger", context)
