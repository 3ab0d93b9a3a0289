"""The step debugger in the runner: a cycle that really stops, until the user says go on.

The runner attaches a ``RunnerDebugger`` to its scheduler for the one cycle a user stepped
into (``DebugSession``, schedviz/cluster/models.py). Before each extension point the engine
calls ``stop``: the stop is written through the services (point, plugins about to run, the cycle
state in words, what the previous point decided), announced to the cluster's channel group as
``cluster.debug``, and the runner's thread waits, polling the database as the loop polls
``pending_steps``, renewing the lease, until a command comes: ``continue`` (to the next point)
or ``finish`` (the rest of the cycle without stopping). Resuming the cluster finishes the cycle
too. The cluster's deletion or reset, a lost lease or ``SCHEDVIZ_DEBUG_WAIT_SECONDS`` without a
command abandon the cycle (``DebugAbandoned``): nothing of it is kept, and its pod, assumed only
in this runner's memory, is still pending in the database for the next runner.

While the thread waits, the scheduler's clock stands still: the virtual clock moves only when
the loop moves it, and the live clock runs at speed 0 while the cluster is paused.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any

from django.conf import settings

from schedviz.cluster import services
from schedviz.cluster.models import Cluster, DebugSession
from schedviz.scheduler.debugger import END, Stop
from schedviz.scheduler.framework.describe import describe_state
from worker.publish import Publisher

# How often a stopped runner looks for the user's command.
COMMAND_POLL = 0.05

ABANDON_GONE = "cluster deleted"
ABANDON_LEASE_LOST = "lease lost"
ABANDON_NO_ANSWER = "no command came"


class DebugAbandoned(Exception):
    """The stopped cycle cannot go on; the runner's session must end without keeping it."""

    def __init__(self, reason: str, cycle: int) -> None:
        super().__init__(reason)
        self.reason = reason
        self.cycle = cycle


class RunnerDebugger:
    """Writes each stop, then waits for the user's command (the engine's ``Debugger``)."""

    def __init__(
        self,
        cluster_id: int,
        publisher: Publisher,
        renew_lease: Callable[[], bool],
        lease_renew_every: float,
    ) -> None:
        self.cluster_id = cluster_id
        self.publisher = publisher
        self.renew_lease = renew_lease
        self.lease_renew_every = lease_renew_every
        self.wait_seconds = float(settings.SCHEDVIZ_DEBUG_WAIT_SECONDS)
        self.finishing = False
        self.reached: list[str] = []
        self.cycle = 0

    def stop(self, stop: Stop) -> None:
        self.cycle = stop.cycle
        self.reached.append(stop.point)
        if stop.point == END:
            self._end(stop)
            return
        if self.finishing:
            return
        sequence = services.debug_session_stop(cluster_id=self.cluster_id, stop=self._seen(stop))
        self.publisher.debug(state=DebugSession.State.STOPPED, sequence=sequence, point=stop.point)
        if self.wait_for_command(sequence) == DebugSession.Command.FINISH:
            self.finishing = True

    def nothing_to_step_into(self) -> None:
        """The queue held no pod to schedule: the request is answered all the same."""
        outcome = {"result": "", "node": None, "message": "No pod was waiting to be scheduled."}
        services.debug_session_end(
            cluster_id=self.cluster_id,
            state=DebugSession.State.FINISHED,
            fields={"point": END, "plugins": [], "outcome": outcome},
        )
        self.publisher.debug(state=DebugSession.State.FINISHED, point=END)

    # ------------------------------------------------------------------ stops

    def _seen(self, stop: Stop) -> dict[str, Any]:
        entries = describe_state(stop.state, stop.pod, stop.framework.plugins_map)
        return {
            "cycle": stop.cycle,
            "pod": stop.pod.key,
            "point": stop.point,
            "plugins": list(stop.plugins),
            "reached": list(self.reached),
            "state_entries": [entry.to_json() for entry in entries],
            "previous": [outcome.to_json() for outcome in stop.previous],
        }

    def _end(self, stop: Stop) -> None:
        trace = stop.trace
        fields = self._seen(stop)
        fields["outcome"] = {
            "result": trace.result,
            "node": trace.selected_node or None,
            "message": trace.message,
        }
        services.debug_session_end(
            cluster_id=self.cluster_id, state=DebugSession.State.FINISHED, fields=fields
        )
        self.publisher.debug(state=DebugSession.State.FINISHED, point=END, cycle=stop.cycle)

    def wait_for_command(self, sequence: int) -> str:
        """Blocks until the stop's command; resuming the cluster means ``finish``."""
        give_up = time.monotonic() + self.wait_seconds
        next_renew = time.monotonic() + self.lease_renew_every
        while True:
            row = (
                Cluster.objects.filter(pk=self.cluster_id)
                .values("run_state", "debug_session__sequence", "debug_session__command")
                .first()
            )
            if row is None:
                raise DebugAbandoned(ABANDON_GONE, self.cycle)
            if row["debug_session__sequence"] != sequence:
                # Reset (the session is gone) or another runner's session: not ours any more.
                raise DebugAbandoned(ABANDON_LEASE_LOST, self.cycle)
            if row["debug_session__command"]:
                command = services.debug_session_take_command(
                    cluster_id=self.cluster_id, sequence=sequence
                )
                if command:
                    self.publisher.debug(state=DebugSession.State.RUNNING, sequence=sequence)
                    return command
            if row["run_state"] != Cluster.RunState.PAUSED:
                return DebugSession.Command.FINISH
            now = time.monotonic()
            if now >= next_renew:
                next_renew = now + self.lease_renew_every
                if not self.renew_lease():
                    raise DebugAbandoned(ABANDON_LEASE_LOST, self.cycle)
            if now >= give_up:
                raise DebugAbandoned(ABANDON_NO_ANSWER, self.cycle)
            time.sleep(COMMAND_POLL)


def debug_session_abandon(cluster_id: int, publisher: Publisher, reason: str) -> None:
    """Says why the stopped cycle was given up; its pod is still pending."""
    message = f"The cycle was abandoned ({reason}); its pod is still pending."
    services.debug_session_end(
        cluster_id=cluster_id,
        state=DebugSession.State.ABANDONED,
        fields={"outcome": {"result": "", "node": None, "message": message}},
    )
    publisher.debug(state=DebugSession.State.ABANDONED)
