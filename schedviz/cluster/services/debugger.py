"""The step debugger's writes (docs/live-system.md, "The step debugger"): the person's
commands, and the runner's stops, claims and ends.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from django.db import transaction

from schedviz.cluster.models import (
    Cluster,
    DebugSession,
)
from schedviz.cluster.services.clusters import _start_runner_on_commit
from schedviz.cluster.services.errors import Conflict, ServiceError
from schedviz.cluster.services.stored import _lock
from schedviz.kube.errors import (
    go_quote,
)

DEBUG_ACTIONS = ("step-into", "continue", "finish")


def debug_step_into(*, cluster: Cluster) -> DebugSession:
    """Asks the runner to run the next cycle of a paused cluster, stopping before each point."""
    with transaction.atomic():
        _lock(cluster)
        run_state = Cluster.objects.values_list("run_state", flat=True).get(id=cluster.id)
        if run_state != Cluster.RunState.PAUSED:
            raise Conflict(["runState: the cluster must be paused to step into a cycle"])
        session = DebugSession.objects.filter(cluster=cluster).first()
        if session is not None and session.active:
            raise Conflict([f"cycle {session.cycle or 'next'} is already being stepped through"])
        session = DebugSession(cluster=cluster, state=DebugSession.State.REQUESTED)
        session.save()
        _start_runner_on_commit(cluster.id)
    return session


def debug_command(*, cluster: Cluster, command: str, sequence: int | None = None) -> DebugSession:
    """``continue`` to the next point or ``finish`` the cycle, from the stop the runner holds.

    ``sequence`` names the stop the command answers (a command sent twice moves on once).
    """
    if command not in (DebugSession.Command.CONTINUE, DebugSession.Command.FINISH):
        raise ServiceError(
            [
                f'action: Unsupported value: {go_quote(command)}: supported values: "continue", '
                '"finish"'
            ]
        )
    with transaction.atomic():
        session = DebugSession.objects.select_for_update().filter(cluster=cluster).first()
        if session is None or session.state != DebugSession.State.STOPPED:
            raise Conflict(["no cycle is stopped in the debugger: step into a cycle first"])
        if sequence is not None and sequence != session.sequence:
            raise Conflict([f"stop {sequence} is over: the debugger is at stop {session.sequence}"])
        if session.command:
            raise Conflict([f"the stop has its command already ({session.command})"])
        session.command = command
        session.save(update_fields=["command", "updated_at"])
    return session


def debug_session_claim(*, cluster_id: int) -> bool:
    """The runner takes a step-into request; False when there is none (or another took it)."""
    return (
        DebugSession.objects.filter(
            cluster_id=cluster_id, state=DebugSession.State.REQUESTED
        ).update(state=DebugSession.State.RUNNING, sequence=0, command="")
        == 1
    )


def debug_session_stop(*, cluster_id: int, stop: Mapping[str, Any]) -> int:
    """The runner holds the cycle before a point: records what it sees; the stop's number."""
    with transaction.atomic():
        session = DebugSession.objects.select_for_update().get(cluster_id=cluster_id)
        session.sequence += 1
        session.state = DebugSession.State.STOPPED
        session.command = ""
        for name, value in stop.items():
            setattr(session, name, value)
        session.save()
    return session.sequence


def debug_session_take_command(*, cluster_id: int, sequence: int) -> str:
    """The command given for stop ``sequence``, taken once (the cycle then runs on)."""
    row = (
        DebugSession.objects.filter(cluster_id=cluster_id, sequence=sequence)
        .exclude(command="")
        .values_list("command", flat=True)
        .first()
    )
    if row is None:
        return ""
    taken = DebugSession.objects.filter(
        cluster_id=cluster_id, sequence=sequence, command=row
    ).update(command="", state=DebugSession.State.RUNNING)
    return row if taken == 1 else ""


def debug_session_orphaned(*, cluster_id: int) -> None:
    """A new runner found a cycle that a dead runner held in the debugger: given up."""
    message = "The runner holding this cycle stopped; the cycle was abandoned and its pod is "
    message += "still pending."
    DebugSession.objects.filter(
        cluster_id=cluster_id,
        state__in=(DebugSession.State.RUNNING, DebugSession.State.STOPPED),
    ).update(
        state=DebugSession.State.ABANDONED,
        command="",
        outcome={"result": "", "node": None, "message": message},
    )


def debug_session_end(*, cluster_id: int, state: str, fields: Mapping[str, Any]) -> None:
    """The cycle is over (``finished``) or was given up (``abandoned``)."""
    DebugSession.objects.filter(cluster_id=cluster_id).update(state=state, command="", **fields)
