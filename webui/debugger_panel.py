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
            "plugins": [
                {**plugin, "url": plugin_source_url(plugin["plugin"])}
                for plugin in outcome["plugins"]
            ],
        }
        for outcome in session.previous
    ]
    view["next_point"] = _next_point(current)
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


# The point a Continue leads to when the current one lets the pod through; after Filter it
# depends on whether any node fits (PostFilter) and how many (one is not scored: Reserve).
_NEXT = {
    "PreFilter": "Filter",
    "Filter": "the next point",
    "PostFilter": "the end",
    "PreScore": "Score",
    "Score": "Reserve",
    "Reserve": "Permit",
    "Permit": "PreBind",
    "PreBind": "Bind",
    "Bind": "PostBind",
    "PostBind": "the end",
}


def _next_point(current: str) -> str:
    return _NEXT.get(current, "")


def debugger_fragment(*, cluster_id: int) -> str:
    """The panel for the websocket (out of band); "" when the cluster is gone."""
    cluster = Cluster.objects.filter(pk=cluster_id).first()
    if cluster is None:
        return ""
    context = debugger_context(cluster=cluster)
    context["oob"] = True
    return render_to_string(f"{DEBUGGER_TEMPLATE}#debugger", context)
