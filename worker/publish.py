"""What a runner tells the browsers watching its cluster, through the channel layer.

Messages go to the group ``cluster-<id>`` (webui/consumers.py forwards them as they are):
``cluster.cycles`` (cycle summaries, batched), ``cluster.queue`` (the scheduling queue, at most
one message per ``QUEUE_INTERVAL``; intermediate states are dropped, the latest is kept) and
``cluster.status`` (the runner's state). A fast run never floods the layer: sending is paced by
the runner's loop and nothing waits in a backlog.

In embedded mode the channel layer lives in memory, in the server's event loop; a runner thread
hands its sends to that loop (``loop``) instead of running them in a loop of its own, since the
in-memory layer's queues belong to the loop that reads them. Otherwise the publisher keeps one
private event loop, so a Redis layer reuses its connections between sends.
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Callable
from typing import Any

from channels.layers import get_channel_layer

from schedviz.scheduler.trace import CycleTrace
from webui.consumers import group_name

logger = logging.getLogger(__name__)

QUEUE_INTERVAL = 0.25
CYCLES_INTERVAL = 0.25
# Summaries kept per cycles message; older ones in the same interval are counted, not sent.
CYCLES_PER_MESSAGE = 200
# Entries kept per queue list in a queue message (the counts still count every pod).
QUEUE_LIST_LIMIT = 50

QueueState = Callable[[], tuple[dict[str, Any], int]]


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


class Publisher:
    def __init__(
        self,
        cluster_id: int,
        *,
        layer: Any = None,
        loop: asyncio.AbstractEventLoop | None = None,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.group = group_name(cluster_id)
        self._layer = layer if layer is not None else get_channel_layer()
        self._main_loop = loop
        self._own_loop: asyncio.AbstractEventLoop | None = None
        self._clock = clock
        self._cycles: list[dict[str, Any]] = []
        self._dropped_cycles = 0
        self._cycles_sent_at = float("-inf")
        self._queue_state: QueueState | None = None
        self._queue_sent_at = float("-inf")

    # ------------------------------------------------------------------ what the runner offers

    def cycle(self, summary: dict[str, Any]) -> None:
        self._cycles.append(summary)
        if len(self._cycles) > CYCLES_PER_MESSAGE:
            del self._cycles[0]
            self._dropped_cycles += 1

    def drop_cycles(self) -> None:
        """Forgets the summaries not sent yet (cycles whose records were not written)."""
        self._cycles, self._dropped_cycles = [], 0

    def queue(self, state: QueueState) -> None:
        """Offers the queue; ``state`` is only called when a message goes out, so the latest
        state offered is the one sent."""
        self._queue_state = state

    def status(self, runner: str, **extra: Any) -> None:
        self._send({"type": "cluster.status", "runner": runner, **extra})

    def flush(self, *, force: bool = False) -> None:
        """Sends what is due (everything with ``force``)."""
        now = self._clock()
        if self._cycles and (force or now - self._cycles_sent_at >= CYCLES_INTERVAL):
            message: dict[str, Any] = {"type": "cluster.cycles", "cycles": self._cycles}
            if self._dropped_cycles:
                message["dropped"] = self._dropped_cycles
            self._cycles, self._dropped_cycles = [], 0
            self._cycles_sent_at = now
            self._send(message)
        if self._queue_state is not None and (force or now - self._queue_sent_at >= QUEUE_INTERVAL):
            queue, pending = self._queue_state()
            self._queue_state = None
            self._queue_sent_at = now
            self._send({"type": "cluster.queue", "queue": queue, "pending": pending})

    def close(self) -> None:
        if self._own_loop is not None:
            self._own_loop.close()
            self._own_loop = None

    # ------------------------------------------------------------------ sending

    def _send(self, message: dict[str, Any]) -> None:
        if self._layer is None:
            return
        coroutine = self._layer.group_send(self.group, message)
        try:
            if self._main_loop is not None and self._main_loop.is_running():
                # Fire and forget: the runner never waits for a browser.
                asyncio.run_coroutine_threadsafe(coroutine, self._main_loop)
                return
            if self._own_loop is None:
                self._own_loop = asyncio.new_event_loop()
            self._own_loop.run_until_complete(coroutine)
        except Exception:
            # Watching is best effort; scheduling goes on without an audience.
            logger.exception("publishing to %s failed", self.group)
