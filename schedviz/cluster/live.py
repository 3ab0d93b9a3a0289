"""The live stream's contract: the channel-layer group of a cluster and the messages sent to it.

The runner publishes (worker/publish.py) and the consumer forwards (webui/consumers.py); both
import the group name and the message shapes from here, so neither knows the other. A message
is a dict whose ``type`` names the consumer's handler (Channels turns ``cluster.cycles`` into
``cluster_cycles``):

- ``cluster.cycles``: ``cycles``, a list of ``cycle_summary`` dicts, oldest first, and
  ``dropped``, how many older summaries of the same interval were left out (absent when none);
- ``cluster.queue``: ``queue``, the scheduling queue as a trace records it
  (docs/trace-format.md; null to a websocket client connecting before any runner wrote one),
  and ``pending``, the number of pods not bound;
- ``cluster.status``: ``runner`` (``running``, ``idle`` or ``offline``) and what else is known
  (``clock`` and ``paused`` while running, ``stopped`` and the run's figures once idle);
- ``cluster.debug``: the step debugger moved; its fields are the debugger's (docs/live-system.md);
- ``cluster.workloads``: a workload, or a pod one controls, was added, changed (bound) or
  deleted; no fields: the watcher reads the workloads (``GET .../workloads``, the dashboard's
  panel) again.
"""

from __future__ import annotations

from typing import Any

from schedviz.scheduler.trace import CycleTrace

CYCLES = "cluster.cycles"
QUEUE = "cluster.queue"
STATUS = "cluster.status"
DEBUG = "cluster.debug"
WORKLOADS = "cluster.workloads"


def group_name(cluster_id: int) -> str:
    """The channel-layer group of one cluster: every watcher of it joins, its runner sends."""
    return f"cluster-{cluster_id}"


def cycle_summary(trace: CycleTrace) -> dict[str, Any]:
    """The fields of a cycle (named as in docs/trace-format.md) a live list shows."""
    return {
        "cycle": trace.cycle,
        "pod": trace.pod,
        "result": trace.result,
        "node": trace.selected_node or None,
        "message": trace.message,
        "attempt": trace.attempt,
        "time": round(trace.time, 6),
    }


def cycles_message(cycles: list[dict[str, Any]], *, dropped: int = 0) -> dict[str, Any]:
    message: dict[str, Any] = {"type": CYCLES, "cycles": cycles}
    if dropped:
        message["dropped"] = dropped
    return message


def queue_message(queue: dict[str, Any] | None, pending: int) -> dict[str, Any]:
    return {"type": QUEUE, "queue": queue, "pending": pending}


def status_message(runner: str, **extra: Any) -> dict[str, Any]:
    return {"type": STATUS, "runner": runner, **extra}


def debug_message(**fields: Any) -> dict[str, Any]:
    return {"type": DEBUG, **fields}


def workloads_message() -> dict[str, Any]:
    return {"type": WORKLOADS}
