"""What a runner tells the browsers watching its cluster, through the channel layer.

Messages go to the cluster's group (schedviz/cluster/live.py, the contract the consumer of
webui/consumers.py reads):
``cluster.cycles`` (cycle summaries, batched), ``cluster.queue`` (the scheduling queue, at most
one message per ``QUEUE_INTERVAL``; intermediate states are dropped, the latest is kept),
``cluster.status`` (the runner's state), ``cluster.debug`` (the step debugger moved) and
``cluster.workloads`` (a workload or a pod it controls changed, at most one per
``WORKLOADS_INTERVAL``: the runner's store calls ``object_changed`` for every object it follows).
A fast run never floods the layer: sending is paced by the runner's loop and nothing waits in a
backlog.

In embedded mode the channel layer lives in memory, in the server's event loop; a runner thread
hands its sends to that loop (``loop``) instead of running them in a loop of its own, since the
in-memory layer's queues belong to the loop that reads them. A runner started before the server
knew its loop (at boot, by the watch) asks ``loop_source`` at each send, so it reaches the
browsers as soon as the first one connects, not only after it restarts. Otherwise the publisher
keeps one private event loop, so a Redis layer reuses its connections between sends.

Redis may go away (restarted, unreachable): a send that fails or takes longer than
``PUBLISH_TIMEOUT`` is logged once, and for ``PUBLISH_RETRY_SECONDS`` nothing more is tried
(messages are skipped, counted), so the runner schedules on at full speed without an audience.
The first send that goes through again is logged, followed by the last status, which the
browsers may have missed; queue and cycle messages carry current state and need no replay.
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Callable
from typing import Any

from channels.layers import get_channel_layer

from schedviz.cluster import live
from schedviz.kube.objects import Pod, Workload

logger = logging.getLogger(__name__)

QUEUE_INTERVAL = 0.25
WORKLOADS_INTERVAL = 0.5
CYCLES_INTERVAL = 0.25
# Summaries kept per cycles message; older ones in the same interval are counted, not sent.
CYCLES_PER_MESSAGE = 200
# Entries kept per queue list in a queue message (the counts still count every pod).
QUEUE_LIST_LIMIT = 50
# A send may take this long (seconds) before it counts as failed.
PUBLISH_TIMEOUT = 2.0
# After a failed send, messages are skipped for this long before sending is tried again.
PUBLISH_RETRY_SECONDS = 1.0

QueueState = Callable[[], tuple[dict[str, Any], int]]


class Publisher:
    def __init__(
        self,
        cluster_id: int,
        *,
        layer: Any = None,
        loop: asyncio.AbstractEventLoop | None = None,
        loop_source: Callable[[], asyncio.AbstractEventLoop | None] | None = None,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.group = live.group_name(cluster_id)
        self._layer = layer if layer is not None else get_channel_layer()
        self._main_loop = loop
        self._loop_source = loop_source
        self._own_loop: asyncio.AbstractEventLoop | None = None
        self._clock = clock
        self._cycles: list[dict[str, Any]] = []
        self._dropped_cycles = 0
        self._cycles_sent_at = float("-inf")
        self._queue_state: QueueState | None = None
        self._queue_sent_at = float("-inf")
        self._last_status: dict[str, Any] | None = None
        self._workloads_changed = False
        self._workloads_sent_at = float("-inf")
        # While sending fails: when to try again, and how many messages were skipped.
        self._retry_at: float | None = None
        self._skipped = 0

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

    def object_changed(self, event_type: str, old: Any, new: Any) -> None:
        """A store watcher: notes a change the Workloads panel shows (a workload itself, a pod
        a controller owns added, deleted or bound), sent with the next ``flush`` that is due."""
        obj = new if new is not None else old
        if isinstance(obj, Workload):
            self._workloads_changed = True
        elif isinstance(obj, Pod) and any(o.controller for o in obj.owner_references):
            moved = old is None or new is None or old.node_name != new.node_name
            self._workloads_changed = self._workloads_changed or moved

    def status(self, runner: str, **extra: Any) -> None:
        self._last_status = live.status_message(runner, **extra)
        self._send(self._last_status)

    def debug(self, **fields: Any) -> None:
        """The step debugger moved (a stop, a command taken, the cycle's end): sent at once,
        since the runner then waits for a person who reads it."""
        self._send(live.debug_message(**fields))

    def flush(self, *, force: bool = False) -> None:
        """Sends what is due (everything with ``force``)."""
        now = self._clock()
        if self._cycles and (force or now - self._cycles_sent_at >= CYCLES_INTERVAL):
            message = live.cycles_message(self._cycles, dropped=self._dropped_cycles)
            self._cycles, self._dropped_cycles = [], 0
            self._cycles_sent_at = now
            self._send(message)
        if self._queue_state is not None and (force or now - self._queue_sent_at >= QUEUE_INTERVAL):
            queue, pending = self._queue_state()
            self._queue_state = None
            self._queue_sent_at = now
            self._send(live.queue_message(queue, pending))
        if self._workloads_changed and (
            force or now - self._workloads_sent_at >= WORKLOADS_INTERVAL
        ):
            self._workloads_changed = False
            self._workloads_sent_at = now
            self._send(live.workloads_message())

    def close(self) -> None:
        if self._own_loop is not None:
            self._own_loop.close()
            self._own_loop = None

    # ------------------------------------------------------------------ sending

    def _send(self, message: dict[str, Any]) -> None:
        if self._layer is None:
            return
        if self._retry_at is not None and self._clock() < self._retry_at:
            self._skipped += 1
            return
        if not self._deliver(message):
            self._skipped += 1
            self._retry_at = self._clock() + PUBLISH_RETRY_SECONDS
            return
        if self._retry_at is not None:
            logger.warning(
                "publishing to %s works again; %d message(s) were skipped",
                self.group,
                self._skipped,
            )
            self._retry_at, self._skipped = None, 0
            if self._last_status is not None and message is not self._last_status:
                self._deliver(self._last_status)

    def _deliver(self, message: dict[str, Any]) -> bool:
        """Sends one message; False (logged once per outage) when the layer failed."""
        coroutine = self._layer.group_send(self.group, message)
        main_loop = self._main_loop
        if main_loop is None and self._loop_source is not None:
            main_loop = self._main_loop = self._loop_source()
        try:
            if main_loop is not None and main_loop.is_running():
                # Fire and forget: the runner never waits for a browser.
                asyncio.run_coroutine_threadsafe(coroutine, main_loop)
                return True
            if self._own_loop is None:
                self._own_loop = asyncio.new_event_loop()
            self._own_loop.run_until_complete(asyncio.wait_for(coroutine, PUBLISH_TIMEOUT))
            return True
        except Exception as error:
            # Watching is best effort; scheduling goes on without an audience.
            if self._retry_at is None:
                logger.warning(
                    "publishing to %s failed (%r); skipping messages, trying again every %s s",
                    self.group,
                    error,
                    PUBLISH_RETRY_SECONDS,
                )
            return False
