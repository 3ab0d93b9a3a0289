"""Live updates of a cluster over a websocket.

Mirrors the django/channels tutorial shape: one consumer, one group per cluster
(``cluster-<id>``, schedviz/cluster/live.py: the group and the messages are a contract below
both). The runner publishes to the group (worker/publish.py). The dashboard connects
with htmx's ws extension: every group message becomes ``hx-swap-oob`` fragments rendered from
the same partials the dashboard page renders (webui/templates/webui/dashboard/page.html):

- ``cluster.cycles``: the cycle feed (kept here, newest first), then the node cards and the
  pending pods, re-read from the database at most every ``REFRESH_INTERVAL`` seconds (less
  often when a read takes long); only what changed goes out (webui/live_frames.py);
- ``cluster.queue``: the scheduling queue, from the message alone; then the same refresh;
- ``cluster.status``: the runner's status, and the controls (the run state may have been
  changed in another browser), and the step debugger panel;
- ``cluster.debug``: the step debugger panel (webui/debugger_panel.py), re-read from the
  database: the runner stopped before a point, took a command or ended the cycle;
- ``cluster.workloads``: the Workloads panel, re-read from the database with the next refresh
  (also after a ``cluster.status``: a runner that starts has listed what was applied while none
  ran); only what changed goes out.

A runner that dies says nothing, so the consumer also reads the cluster's lease every
``RUNNER_WATCH_INTERVAL`` seconds: a lease held but not renewed in time is "offline", and when a
runner has it again the status says the scheduler is back. Both go out as ``cluster.status``
(to API clients too).

API clients connect with ``?format=json`` and get each message as a JSON text frame instead.
On connect they get ``hello``, then the current state as the same three messages the runner
sends: ``cluster.status`` (the runner), ``cluster.queue`` (the queue the runner last wrote, with
``pending``, the pods not bound, ``time``, the scheduler time then, and ``asOf``) and
``cluster.cycles`` (the newest cycles, oldest first, as the browser's feed starts with them).
Who may watch is decided by the same check as the pages' reads (webui/access.py): the owner, an
ownerless cluster, or a read-only share link the session opened.

With the channel layer unreachable (Redis down, in the distributed mode) a socket is refused
cleanly: accepted and closed at once with 4503 (as 4403 says forbidden, an HTTP status in the
application's range of close codes: service unavailable, try again later), one line in the log,
no traceback; the pages and the API go on answering from the database.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
import time
from collections import deque
from typing import Any
from urllib.parse import parse_qs

from channels.db import database_sync_to_async
from channels.generic.websocket import AsyncWebsocketConsumer
from django.template.loader import render_to_string
from redis.exceptions import RedisError

from schedviz.cluster import live, selectors
from schedviz.cluster.models import Cluster, Pod
from schedviz.cluster.services import ObjectNotFound
from webui import access, debugger_panel, prediction_panel, presenters
from webui.live_frames import LiveFrames

DASHBOARD = "webui/dashboard/page.html"
# The node cards and pending pods are re-read at most this often (seconds) per browser, and
# never more than a third of the time: a big page that takes long to render is re-read less often.
REFRESH_INTERVAL = 0.5
REFRESH_DUTY = 3
# How often each connection reads the lease, to notice a runner that stopped without a word.
RUNNER_WATCH_INTERVAL = 2.0
BACK_ONLINE = "back: a runner has taken over"
# The close code of a socket refused for want of the channel layer: 503 in the application's
# range (RFC 6455's own 1013, "Try Again Later", is not one a server may send through Daphne).
CLOSE_UNAVAILABLE = 4503
# What an unreachable channel layer raises (channels_redis over redis-py; a timeout).
LAYER_ERRORS = (RedisError, OSError, asyncio.TimeoutError)

logger = logging.getLogger(__name__)


@database_sync_to_async
def _may_watch(user: Any, session: Any, cluster_id: int) -> bool:
    """Watching is reading: the owner, an ownerless cluster, or a share link the session opened
    and that is not revoked (webui/access.py)."""
    try:
        selectors.cluster_get(
            cluster_id=cluster_id, user=user, share_link_ids=access.shared_link_ids(session)
        )
    except ObjectNotFound:
        return False
    return True


@database_sync_to_async
def _initial_state(
    cluster_id: int,
) -> tuple[list[dict[str, Any]], dict[str, list[str]], float, dict[str, Any]]:
    """The feed, the plugins' requeue events, the scheduler time and the queue as the page
    shows them before the runner says more."""
    cluster = Cluster.objects.get(pk=cluster_id)
    queue, now, as_of = presenters.latest_queue(cluster=cluster)
    events = presenters.requeue_events(cluster=cluster)
    queue_view = presenters.queue_view(
        cluster_id=cluster_id, queue=queue, pending=None, now=now, events=events, as_of=as_of
    )
    return presenters.recent_cycles(cluster=cluster), events, now, queue_view


@database_sync_to_async
def _initial_json_state(cluster_id: int) -> list[dict[str, Any]]:
    """The queue and the newest cycles as the ``cluster.queue`` and ``cluster.cycles`` messages
    a runner sends (a JSON client's equivalent of the page's first render)."""
    cluster = Cluster.objects.get(pk=cluster_id)
    queue, now, as_of = presenters.latest_queue(cluster=cluster)
    pending = Pod.objects.filter(cluster=cluster, node_name="").count()
    cycles = presenters.recent_cycles(cluster=cluster)
    # A JSON client's queue message says when that queue was: the scheduler time, the cycle.
    queue_state = {**live.queue_message(queue, pending), "time": now, "asOf": as_of}
    return [queue_state, live.cycles_message(cycles[::-1])]


@database_sync_to_async
def _render_live(
    cluster_id: int,
    page: str | None,
    colour_by: str | None,
    query: presenters.NodeQuery,
    frames: LiveFrames,
) -> str:
    """What changed in the node grid and the pending pods since ``frames`` last sent them."""
    cluster = Cluster.objects.filter(pk=cluster_id).first()
    if cluster is None:
        return ""
    context = presenters.live_context(
        cluster=cluster, page=page, colour_by=colour_by, oob=True, query=query
    )
    return frames.live(context)


@database_sync_to_async
def _render_workloads(cluster_id: int, frames: LiveFrames) -> str:
    """What changed in the Workloads panel since ``frames`` last sent it."""
    cluster = Cluster.objects.filter(pk=cluster_id).first()
    if cluster is None:
        return ""
    return frames.workloads(
        {"cluster": cluster, "workloads": selectors.workload_list(cluster=cluster)}
    )


_runner_state = database_sync_to_async(presenters.runner_state)


_newest_cycle = database_sync_to_async(selectors.cycle_newest_number)


# "Predict, then reveal" (webui/prediction_panel.py): the panel follows the cycles (reveals), the
# head of activeQ (the pod to guess about) and the run state.
_render_predict = database_sync_to_async(prediction_panel.predict_fragment)
_render_debugger = database_sync_to_async(debugger_panel.debugger_fragment)


@database_sync_to_async
def _render_controls(cluster_id: int, *, only_paused: bool = False) -> str:
    cluster = Cluster.objects.filter(pk=cluster_id).first()
    if cluster is None or (only_paused and cluster.run_state != Cluster.RunState.PAUSED):
        return ""
    # No request here, so no CSRF field: htmx sends the page's token in a header.
    return render_to_string(f"{DASHBOARD}#controls", {"cluster": cluster, "oob": True})


class ClusterConsumer(AsyncWebsocketConsumer):
    cluster_id: int
    group: str
    as_json: bool
    page: str | None
    colour_by: str | None
    node_query: presenters.NodeQuery
    frames: LiveFrames
    feed: deque[dict[str, Any]]
    requeue_events: dict[str, list[str]]
    scheduler_time: float
    _refresh: asyncio.Task[None] | None
    # The Workloads panel is read again with the next refresh.
    _workloads_due = False
    _refreshed_at: float
    _refresh_interval: float
    _watch: asyncio.Task[None] | None = None
    runner_shown: str | None = None
    # The cycles (number: result) a JSON client got on connect, not to be sent twice.
    sent_cycles: dict[int, str] = {}
    active_head: str | None = None
    paused: bool | None = None
    # JSON clients: the newest cycle number accounted for (delivered or counted as dropped).
    last_cycle = 0

    _accepted = False

    async def __call__(self, scope: Any, receive: Any, send: Any) -> None:
        try:
            await super().__call__(scope, receive, send)
        except LAYER_ERRORS as error:
            # Joining the group or listening on the channel failed: no live updates to give.
            logger.warning(
                "websocket %s refused: the channel layer is unreachable (%s: %s)",
                scope.get("path", ""),
                type(error).__name__,
                error,
            )
            self._stop_tasks()
            with contextlib.suppress(Exception):  # the client may be gone already
                if not self._accepted:
                    await send({"type": "websocket.accept"})
                await send({"type": "websocket.close", "code": CLOSE_UNAVAILABLE})

    async def accept(self, subprotocol: str | None = None, headers: Any = None) -> None:
        await super().accept(subprotocol, headers)
        self._accepted = True

    def _stop_tasks(self) -> None:
        if getattr(self, "_refresh", None) is not None:
            self._refresh.cancel()  # type: ignore[union-attr]
        if self._watch is not None:
            self._watch.cancel()

    async def connect(self) -> None:
        self.cluster_id = int(self.scope["url_route"]["kwargs"]["cluster_id"])
        if not await _may_watch(self.scope.get("user"), self.scope.get("session"), self.cluster_id):
            await self.close(code=4403)
            return
        query = parse_qs(self.scope.get("query_string", b"").decode())
        self.as_json = query.get("format") == ["json"]
        self.page = (query.get("page") or [None])[0]
        self.colour_by = (query.get("colour") or [None])[0]
        self.node_query = presenters.NodeQuery.of({k: v[0] for k, v in query.items() if v})
        self.frames = LiveFrames()
        self._refresh, self._refreshed_at = None, float("-inf")
        self._refresh_interval = REFRESH_INTERVAL
        self.group = live.group_name(self.cluster_id)
        await self.channel_layer.group_add(self.group, self.channel_name)
        await self.accept()
        runner = await _runner_state(cluster_id=self.cluster_id)
        self.runner_shown = runner["runner"]
        self._watch = asyncio.create_task(self._watch_runner())
        if self.as_json:
            # Cycles stored before this connection are the state's (or the API's) to give.
            self.last_cycle = await _newest_cycle(cluster_id=self.cluster_id)
            await self.send(text_data=json.dumps({"type": "hello", "cluster": self.cluster_id}))
            await self._forward(live.status_message(**runner))
            for message in await _initial_json_state(self.cluster_id):
                if message["type"] == live.CYCLES:
                    self.sent_cycles = {c["cycle"]: c["result"] for c in message["cycles"]}
                    self.last_cycle = max([self.last_cycle, *self.sent_cycles])
                await self._forward(message)
            return
        # What happened between the page's render and this connection was published to nobody:
        # read the state now (after joining the group, so nothing falls in between) and send it.
        feed, self.requeue_events, self.scheduler_time, queue = await _initial_state(
            self.cluster_id
        )
        self.feed = deque(feed, maxlen=presenters.FEED_LENGTH)
        self._workloads_due = True
        await self.send(
            text_data=self.frames.feed(self.feed)
            + render_to_string(f"{DASHBOARD}#queue", {"queue": queue, "oob": True})
            + render_to_string(f"{DASHBOARD}#status", {"runner": runner, "oob": True})
        )
        self._refresh_soon()

    async def disconnect(self, code: int) -> None:
        self._stop_tasks()
        if hasattr(self, "group"):
            await self.channel_layer.group_discard(self.group, self.channel_name)

    async def receive(self, text_data: str | None = None, bytes_data: bytes | None = None) -> None:
        """Clients only listen; anything they send is answered with an error, never acted on."""
        await self.send(
            text_data=json.dumps({"type": "error", "error": "this socket only sends updates"})
        )

    # ------------------------------------------------------------------ group messages

    async def cluster_cycles(self, event: dict[str, Any]) -> None:
        if self.as_json:
            event = self._account_for_gap(self._not_sent_yet(event))
            if event["cycles"] or event.get("dropped"):
                await self._forward(event)
            return
        for summary in event.get("cycles") or []:
            # A cycle held at Permit comes again with its outcome: it replaces its first entry.
            held = [e for e in self.feed if e["cycle"] == summary["cycle"]]
            for entry in held:
                self.feed.remove(entry)
            self.feed.appendleft(presenters.feed_entry(self.cluster_id, summary))
            self.scheduler_time = max(self.scheduler_time, float(summary.get("time") or 0.0))
        # While paused a cycle is a step the runner took: the controls' "N steps asked" follows.
        await self.send(
            text_data=self.frames.feed(self.feed)
            + await _render_controls(self.cluster_id, only_paused=True)
            + await _render_predict(cluster_id=self.cluster_id, active_head=self.active_head)
        )
        self._refresh_soon()

    async def cluster_queue(self, event: dict[str, Any]) -> None:
        if self.as_json:
            await self._forward(event)
            return
        queue = presenters.queue_view(
            cluster_id=self.cluster_id,
            queue=event.get("queue"),
            pending=event.get("pending"),
            now=self.scheduler_time,
            events=self.requeue_events,
            as_of="live",
        )
        head = prediction_panel.active_head(event.get("queue"))
        fragment = ""
        if head != self.active_head:
            self.active_head = head
            fragment = await _render_predict(cluster_id=self.cluster_id, active_head=head)
        await self.send(
            text_data=render_to_string(f"{DASHBOARD}#queue", {"queue": queue, "oob": True})
            + fragment
        )
        self._refresh_soon()

    async def cluster_status(self, event: dict[str, Any]) -> None:
        event = self._note_runner(event)
        if self.as_json:
            await self._forward(event)
            return
        # The run state may have changed in another browser: the controls follow.
        await self.send(
            text_data=render_to_string(f"{DASHBOARD}#status", {"runner": event, "oob": True})
            + await _render_controls(self.cluster_id)
            + await self._predict_on_status(event)
            + await _render_debugger(cluster_id=self.cluster_id)
        )
        self._workloads_due = True
        self._refresh_soon()

    async def cluster_workloads(self, event: dict[str, Any]) -> None:
        if self.as_json:
            await self._forward(event)
            return
        self._workloads_due = True
        self._refresh_soon()

    async def cluster_debug(self, event: dict[str, Any]) -> None:
        if self.as_json:
            await self._forward(event)
            return
        await self.send(text_data=await _render_debugger(cluster_id=self.cluster_id))

    def _not_sent_yet(self, event: dict[str, Any]) -> dict[str, Any]:
        """A cycles message without what the state on connect already gave a JSON client: the
        cycles it listed (a cycle held at Permit that comes again with its outcome passes), and
        in ``dropped`` only cycles after them. Once the messages are past those cycles, as is."""
        if not self.sent_cycles:
            return event
        newest = max(self.sent_cycles)
        cycles = event.get("cycles") or []
        fresh = [c for c in cycles if self.sent_cycles.get(c["cycle"]) != c.get("result")]
        dropped = int(event.get("dropped") or 0)
        if dropped and cycles:
            # The dropped ones are the numbers just before the first summary.
            dropped = max(0, min(dropped, int(cycles[0]["cycle"]) - 1 - newest))
        if cycles and max(int(c["cycle"]) for c in cycles) > newest:
            self.sent_cycles = {}  # the messages that follow are past the state on connect
        return live.cycles_message(fresh, dropped=dropped)

    def _note_runner(self, event: dict[str, Any]) -> dict[str, Any]:
        """The status as shown: a runner running after one went offline is "back"."""
        runner = event.get("runner")
        if self.runner_shown == selectors.RUNNER_OFFLINE and runner == selectors.RUNNER_RUNNING:
            event = {**event, "note": BACK_ONLINE}
        self.runner_shown = runner if isinstance(runner, str) else None
        return event

    async def _watch_runner(self) -> None:
        """Reads the lease now and then; a change the runner did not announce (it died, or one
        took over from a dead one) goes out as a ``cluster.status`` of the consumer's own."""
        while True:
            await asyncio.sleep(RUNNER_WATCH_INTERVAL)
            runner = await _runner_state(cluster_id=self.cluster_id)
            if runner["runner"] != self.runner_shown:
                await self.cluster_status(live.status_message(**runner))

    async def _predict_on_status(self, event: dict[str, Any]) -> str:
        """The prediction panel when the run state changed (its form shows while paused only);
        "" otherwise, so that a guess being picked is not reset by a runner going idle."""
        paused = event.get("paused")
        if not isinstance(paused, bool) or paused == self.paused:
            return ""
        self.paused = paused
        fragment: str = await _render_predict(
            cluster_id=self.cluster_id, active_head=self.active_head, always=True
        )
        return fragment

    def _account_for_gap(self, event: dict[str, Any]) -> dict[str, Any]:
        """The cycles message with ``dropped`` also counting the cycles that no message brought
        since the last one: a runner killed after writing cycles and before publishing them, or
        one that took over from it. A JSON client so accounts for every stored cycle number."""
        cycles = event.get("cycles") or []
        if not cycles:
            return event
        first = int(cycles[0]["cycle"]) - int(event.get("dropped") or 0)
        unaccounted = first - (self.last_cycle + 1)
        self.last_cycle = max(self.last_cycle, int(cycles[-1]["cycle"]))
        if unaccounted <= 0:
            return event
        return {**event, "dropped": int(event.get("dropped") or 0) + unaccounted}

    async def _forward(self, event: dict[str, Any]) -> None:
        await self.send(text_data=json.dumps(event, separators=(",", ":")))

    # ------------------------------------------------------------------ node cards, pending pods

    def _refresh_soon(self) -> None:
        """Re-reads the node cards and pending pods once the interval since the last read has
        passed; messages meanwhile share that one read, so the last state is always shown."""
        if self._refresh is not None and not self._refresh.done():
            return
        delay = max(0.0, self._refreshed_at + self._refresh_interval - time.monotonic())
        self._refresh = asyncio.create_task(self._refresh_after(delay))

    async def _refresh_after(self, delay: float) -> None:
        await asyncio.sleep(delay)
        started = time.monotonic()
        html = await _render_live(
            self.cluster_id, self.page, self.colour_by, self.node_query, self.frames
        )
        if self._workloads_due:
            self._workloads_due = False
            html += await _render_workloads(self.cluster_id, self.frames)
        self._refreshed_at = time.monotonic()
        took = self._refreshed_at - started
        self._refresh_interval = max(REFRESH_INTERVAL, REFRESH_DUTY * took)
        if html:
            await self.send(text_data=html)
