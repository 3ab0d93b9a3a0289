"""Running a benchmark workload through the whole live system (``manage.py bench --mode e2e``).

The same workloads and the same measured phase as the engine mode (schedviz.bench.runner), but
every step goes the way it goes when people use schedviz (docs/live-system.md); it lives in the
worker app because it waits for the runner of this process (worker/dispatch.py):

- a new cluster in the configured database (SQLite by default, ``DATABASE_URL`` when set), live
  clock at speed 1 (the wall clock, as upstream's), named uniquely and deleted afterwards;
- the nodes and init pods, then the measured pods in batches of ``MEASURED_BATCH`` and the churn
  pods every 200 ms, are sent as JSON ``kind: List`` text to ``services.manifests_apply`` (what
  ``POST /api/clusters/<id>/apply`` calls): parsed, validated, admitted, stored with their
  Change rows. The calls are made from the server's event loop through ``sync_to_async``, as
  the ASGI server runs a request, so the runner is started the way a request starts it
  (worker/dispatch.py: a thread of this process holding the loop, or with ``REDIS_URL`` a Celery
  task, which a running worker must take);
- the runner (worker/runner.py ``run_cluster``) follows the change log, binds through the
  services (compare-and-set), writes Cycle rows (trace_codec bodies) in batches and publishes to
  the cluster's channel-layer group;
- ``CLIENTS`` websocket clients are connected to the ASGI application (schedviz/asgi.py: origin
  check, session auth, routing, webui/consumers.py), in this process, with ``?format=json`` as
  scripts connect; only the TCP socket and its framing are left out. They count every message.

Timing, as in engine mode: from sending the first batch of measured pods until no measured pod
is left unbound (the database is polled every ``POLL_SECONDS``); a measured pod deleted after
being bound (a preemption victim) counts as scheduled, as in engine mode. When no measured pod
has been bound for ``STALL_SECONDS`` and each one left has failed a cycle, the rest cannot be
placed and the phase ends at the last bind; measured pods that never get a cycle (starved by
higher-priority churn) end the phase at ``time_limit`` (``ended`` in the JSON says which).
Cycle latency is ``Cycle.duration_seconds`` (the runner's wall time of the attempt, pop to end
of binding) of the cycles that started during the phase, churn cycles included as in engine
mode; encoding the trace happens at the batch write, outside it. Trace bytes are the stored
body per cycle plus the node orders the bodies refer to, each counted once over the cycles, as
engine mode counts them; ``traceJsonBytesPerCycle`` is the documented JSON a stored body reads
back as, sampled on every ``JSON_SAMPLE_EVERY``th cycle. Peak RSS is this process's: server loop,
runner thread, clients (in distributed mode the runner's memory is the worker's, not counted).

At the end the cluster is paused (the pause button's service), the runner writes what it holds
and exits once idle (``SCHEDVIZ_RUNNER_IDLE_SECONDS``), the clients are checked: each must have
had every stored cycle, as a summary or counted as coalesced by the publisher (``dropped``).
"""

from __future__ import annotations

import asyncio
import json
import statistics
import threading
import time
import uuid
from collections import Counter
from collections.abc import Callable, Sequence
from concurrent.futures import Future
from typing import Any, TypeVar

from asgiref.sync import sync_to_async
from channels.routing import get_default_application
from django.conf import settings
from django.db import connection

from schedviz.bench.manifests import UnsupportedObjectError, to_list_json
from schedviz.bench.runner import JSON_SAMPLE_EVERY, BenchResult, measured_result
from schedviz.bench.workloads import Workload
from schedviz.cluster import selectors, services
from schedviz.cluster.models import Cluster, Cycle, NodeOrder
from schedviz.cluster.models import Pod as PodRow
from schedviz.kube.objects import KubeObject, Pod
from schedviz.scheduler.trace import RESULT_SCHEDULED
from worker import dispatch

CLIENTS = 10
MEASURED_BATCH = 500
POLL_SECONDS = 0.05
# No measured pod bound for this long, and each one left has failed a cycle: they cannot be placed.
STALL_SECONDS = 10.0
# The measured phase ends after this long in any case (measured pods starved by churn).
TIME_LIMIT_SECONDS = 600.0
# How the measured phase ended (the JSON's "ended").
ENDED_ALL_BOUND = "all bound"
ENDED_UNSCHEDULABLE = "the rest unschedulable"
ENDED_TIME_LIMIT = "time limit"
# Before the first bind: time for a runner to start and list the cluster.
START_SECONDS = 120.0
# How long the clients may take to connect, and to get the last messages once the runner is gone.
CLIENT_SECONDS = 10.0
DRAIN_SECONDS = 0.5

T = TypeVar("T")


class E2EError(RuntimeError):
    """The live system did not run the workload (no runner, a refused apply)."""


class ServerLoop:
    """The event loop an ASGI server runs, in a thread: the consumers live on it, and blocking
    work (services) runs from it through ``sync_to_async``, as a request's does."""

    def __init__(self) -> None:
        self.loop = asyncio.new_event_loop()
        self._thread = threading.Thread(
            target=self.loop.run_forever, name="schedviz-bench-server", daemon=True
        )
        self._thread.start()

    def run(self, coroutine: Any, timeout: float | None = None) -> Any:
        """Runs a coroutine on the loop and waits for its result."""
        return asyncio.run_coroutine_threadsafe(coroutine, self.loop).result(timeout)

    def call(self, function: Callable[..., T], **kwargs: Any) -> Future[T]:
        """Calls a blocking function the way a request handler does, without waiting."""
        future: Future[T] = asyncio.run_coroutine_threadsafe(
            sync_to_async(function)(**kwargs), self.loop
        )
        return future

    def close(self) -> None:
        self.call(_close_connection).result()
        self.loop.call_soon_threadsafe(self.loop.stop)
        self._thread.join()
        self.loop.close()


def _close_connection() -> None:
    """Closes the calling thread's database connection (called in sync_to_async's thread)."""
    connection.close()


class WebsocketClient:
    """A script watching the cluster: ``/ws/clusters/<id>/?format=json`` through the ASGI
    application, every JSON message decoded and counted."""

    def __init__(self, application: Any, cluster_id: int, origin: str) -> None:
        self.scope = {
            "type": "websocket",
            "asgi": {"version": "3.0"},
            "path": f"/ws/clusters/{cluster_id}/",
            "raw_path": f"/ws/clusters/{cluster_id}/".encode(),
            "query_string": b"format=json",
            "headers": [(b"host", origin.encode()), (b"origin", f"http://{origin}".encode())],
            "subprotocols": [],
            "client": ("127.0.0.1", 50000),
            "server": ("127.0.0.1", 8000),
        }
        self.application = application
        # What was received, counted rather than kept: the clients' memory is not the system's.
        self.updates = 0
        self.kinds: Counter[str] = Counter()
        self.cycles: set[int] = set()
        self.coalesced = 0
        self.refused = False
        self.close_timed_out = False
        self._incoming: asyncio.Queue[dict[str, Any]] | None = None
        self._accepted: asyncio.Event | None = None
        self._task: asyncio.Task[None] | None = None

    async def connect(self) -> None:
        self._incoming, self._accepted = asyncio.Queue(), asyncio.Event()
        self._task = asyncio.create_task(
            self.application(self.scope, self._incoming.get, self._send)
        )
        await self._incoming.put({"type": "websocket.connect"})
        await self._accepted.wait()
        if self.refused:
            raise E2EError(f"the websocket {self.scope['path']} refused the connection")

    async def close(self) -> None:
        """Disconnects; a consumer that has not ended within CLIENT_SECONDS is cancelled and
        counted (``close_timed_out``) rather than failing a run whose measures are taken: with
        the Redis layer, a consumer's pending receive can hold its end up."""
        if self._incoming is None or self._task is None:
            return
        await self._incoming.put({"type": "websocket.disconnect", "code": 1000})
        try:
            await asyncio.wait_for(asyncio.shield(self._task), CLIENT_SECONDS)
        except TimeoutError:
            self.close_timed_out = True
            self._task.cancel()

    async def _send(self, message: dict[str, Any]) -> None:
        assert self._accepted is not None
        if message["type"] == "websocket.accept":
            self._accepted.set()
        elif message["type"] == "websocket.close":
            self.refused = not self._accepted.is_set()
            self._accepted.set()
        elif message["type"] == "websocket.send" and message.get("text"):
            self._count(json.loads(message["text"]))

    def _count(self, update: dict[str, Any]) -> None:
        kind = str(update.get("type"))
        if kind == "hello":
            return
        self.updates += 1
        self.kinds[kind] += 1
        if kind == "cluster.cycles":
            self.cycles.update(int(summary["cycle"]) for summary in update.get("cycles") or [])
            self.coalesced += int(update.get("dropped") or 0)

    def cycles_missed(self, stored: set[int]) -> int:
        """Stored cycles this client had neither a summary of nor a count of as coalesced."""
        return max(0, len(stored - self.cycles) - self.coalesced)


def _origin() -> str:
    host = next((h for h in settings.ALLOWED_HOSTS if h not in ("*",) and h[0] != "."), "")
    return host or "127.0.0.1"


def _list_text(objects: Sequence[KubeObject]) -> str:
    return json.dumps(to_list_json(list(objects)), separators=(",", ":"))


def _namespaces(pods: Sequence[Pod]) -> set[str]:
    return {pod.namespace for pod in pods}


class _E2ERun:
    def __init__(
        self,
        workload: Workload,
        server: ServerLoop,
        cluster: Cluster,
        clients: int,
        time_limit: float,
    ) -> None:
        self.workload = workload
        self.time_limit = time_limit
        self.ended = ""
        self.server = server
        self.cluster = cluster
        self.client_count = clients
        self.clients: list[WebsocketClient] = []
        self.measured_namespaces = _namespaces(workload.measured_pods)
        init_pods = [o for o in workload.init_objects if isinstance(o, Pod)]
        self.init_namespaces = _namespaces(init_pods)
        if self.measured_namespaces & self.init_namespaces:
            # Unbound pods are counted by namespace.
            raise UnsupportedObjectError("init and measured pods share a namespace")
        self.churn_futures: list[Future[Any]] = []

    # ------------------------------------------------------------------ phases

    def connect_clients(self) -> None:
        # The deployment's ASGI application (settings.ASGI_APPLICATION, schedviz/asgi.py), as
        # the server loads it: the worker names no page or consumer of the web UI.
        application = get_default_application()
        self.clients = [
            WebsocketClient(application, self.cluster.pk, _origin())
            for _ in range(self.client_count)
        ]

        async def connect_all() -> None:
            await asyncio.gather(*(client.connect() for client in self.clients))

        self.server.run(connect_all(), timeout=CLIENT_SECONDS)

    def apply(self, objects: Sequence[KubeObject], source: str) -> Future[Any]:
        return self.server.call(
            services.manifests_apply, cluster=self.cluster, text=_list_text(objects), source=source
        )

    def place_init_pods(self) -> None:
        self.apply(self.workload.init_objects, "init objects").result()
        self._wait_bound(self.init_namespaces, self.workload.init_pod_count)

    def measured_phase(self) -> tuple[float, float, float, int, int]:
        """Creates the measured pods (and churn) and waits for them to be bound: the wall
        start (epoch), the end (epoch), the seconds, the pods scheduled and the churn pods."""
        workload = self.workload
        batches = [
            workload.measured_pods[i : i + MEASURED_BATCH]
            for i in range(0, len(workload.measured_pods), MEASURED_BATCH)
        ]
        total = len(workload.measured_pods)
        started_wall = time.time()
        started = time.perf_counter()
        inflight: Future[Any] | None = None
        inflight_count = created = 0
        churn_pods = 0
        next_churn = started + workload.churn_interval
        remaining = total
        last_progress = ended = started
        bound_any = False
        self.ended = ENDED_ALL_BOUND
        while True:
            now = time.perf_counter()
            if inflight is not None and inflight.done():
                inflight.result()  # a refused apply is raised here
                created += inflight_count
                inflight = None
            if inflight is None and batches:
                batch = batches.pop(0)
                inflight, inflight_count = self.apply(batch, "measured pods"), len(batch)
            if workload.churn is not None and now >= next_churn:
                self._create_churn_pod(workload.churn(churn_pods))
                churn_pods += 1
                next_churn += workload.churn_interval
            unbound = self._unbound(self.measured_namespaces)
            left = unbound + max(0, total - created) if (batches or inflight) else unbound
            if left < remaining:
                remaining, last_progress, bound_any = left, now, True
            if left == 0 and not batches and inflight is None:
                ended = now
                break
            quiet = now - last_progress
            if not bound_any and quiet > START_SECONDS and not self._cycles_since(started_wall):
                raise E2EError(f"no runner scheduled the cluster within {START_SECONDS:.0f} s")
            created_all = not batches and inflight is None
            if quiet > STALL_SECONDS and created_all and self._unbound_all_failed(started_wall):
                self.ended, ended = ENDED_UNSCHEDULABLE, last_progress
                break
            if now - started > self.time_limit:
                self.ended, ended = ENDED_TIME_LIMIT, now
                break
            time.sleep(POLL_SECONDS)
        for future in self.churn_futures:
            future.result()
        seconds = ended - started
        return started_wall, started_wall + seconds, seconds, total - remaining, churn_pods

    def stop_runner(self) -> None:
        """The pause button; the runner writes what it holds and exits once idle."""
        self.server.call(
            services.cluster_set_run_state, cluster=self.cluster, run_state=Cluster.RunState.PAUSED
        ).result()
        deadline = time.monotonic() + float(settings.SCHEDVIZ_RUNNER_IDLE_SECONDS) + 60
        while dispatch.runner_thread(self.cluster.pk) is not None or selectors.lease_held(
            cluster_id=self.cluster.pk
        ):
            if time.monotonic() > deadline:
                raise E2EError("the runner did not stop after the cluster was paused")
            time.sleep(POLL_SECONDS)

    def close_clients(self) -> dict[str, Any]:
        """Disconnects the clients and reports what they received."""
        stored = set(Cycle.objects.filter(cluster=self.cluster).values_list("number", flat=True))

        async def close_all() -> None:
            await asyncio.sleep(DRAIN_SECONDS)
            await asyncio.gather(*(client.close() for client in self.clients))

        self.server.run(close_all(), timeout=2 * CLIENT_SECONDS + DRAIN_SECONDS)
        per_client = [client.updates for client in self.clients]
        coalesced = [client.coalesced for client in self.clients]
        return {
            "wsClients": len(self.clients),
            "wsMessages": sum(per_client),
            "wsMessagesPerClientMin": min(per_client, default=0),
            "wsMessagesPerClientMax": max(per_client, default=0),
            "wsCyclesStored": len(stored),
            "wsCyclesCoalesced": max(coalesced, default=0),
            "wsCyclesLost": max((c.cycles_missed(stored) for c in self.clients), default=0),
            "wsCloseTimeouts": sum(client.close_timed_out for client in self.clients),
        }

    # ------------------------------------------------------------------ reading the database

    def _unbound(self, namespaces: set[str]) -> int:
        return PodRow.objects.filter(
            cluster=self.cluster, namespace__in=namespaces, node_name=""
        ).count()

    def _unbound_all_failed(self, since_wall: float) -> bool:
        """Whether every measured pod left unbound has had a failed cycle in the phase (rather
        than waiting for one behind other pods)."""
        unbound = set(
            PodRow.objects.filter(
                cluster=self.cluster, namespace__in=self.measured_namespaces, node_name=""
            ).values_list("namespace", "name")
        )
        failed = set(
            Cycle.objects.filter(
                cluster=self.cluster,
                pod_namespace__in=self.measured_namespaces,
                wall_time__gte=since_wall,
            )
            .exclude(result=RESULT_SCHEDULED)
            .values_list("pod_namespace", "pod_name")
        )
        return unbound <= failed

    def _cycles_since(self, wall: float) -> bool:
        return Cycle.objects.filter(cluster=self.cluster, wall_time__gte=wall).exists()

    def _wait_bound(self, namespaces: set[str], count: int) -> None:
        """Until every pod of the namespaces is bound, or none was for ``STALL_SECONDS``."""
        remaining, last_progress = count, time.monotonic()
        while remaining:
            unbound = self._unbound(namespaces)
            now = time.monotonic()
            if unbound < remaining:
                remaining, last_progress = unbound, now
            elif now - last_progress > (START_SECONDS if remaining == count else STALL_SECONDS):
                if remaining == count and count and not self._cycles_since(0.0):
                    raise E2EError("no runner scheduled the cluster's init pods")
                return
            time.sleep(POLL_SECONDS)

    def _create_churn_pod(self, pod: Pod) -> None:
        if pod.namespace in self.measured_namespaces:
            raise UnsupportedObjectError("churn pods share the measured pods' namespace")
        self.churn_futures.append(self.apply([pod], "churn pod"))

    def phase_cycles(
        self, started_wall: float, ended_wall: float
    ) -> tuple[list[float], list[int], int, list[int]]:
        """Of the cycles that started in the phase: their durations, the sizes of their bodies
        as stored, the stored size of the node orders they refer to, and the size of the JSON
        of every ``JSON_SAMPLE_EVERY``th one."""
        cycles = Cycle.objects.filter(
            cluster=self.cluster, wall_time__gte=started_wall, wall_time__lte=ended_wall
        ).order_by("number")
        durations: list[float] = []
        stored: list[int] = []
        order_ids: set[int] = set()
        rows = cycles.values_list("duration_seconds", "body", "node_order_id")
        for duration, body, order_id in rows.iterator(chunk_size=200):
            if duration is not None:
                durations.append(duration)
            stored.append(len(body))
            if order_id is not None:
                order_ids.add(order_id)
        orders = NodeOrder.objects.filter(id__in=order_ids).values_list("names", flat=True)
        json_bytes = [
            len(json.dumps(row.trace(), separators=(",", ":")))
            for row in cycles[::JSON_SAMPLE_EVERY]
        ]
        return durations, stored, sum(len(names) for names in orders), json_bytes


def run_e2e(
    workload: Workload,
    *,
    seed: int = 0,
    threshold: int | None = None,
    clients: int = CLIENTS,
    time_limit: float = TIME_LIMIT_SECONDS,
) -> BenchResult:
    if workload.config is not None:
        raise UnsupportedObjectError("workloads with their own scheduler configuration")
    if not settings.SCHEDVIZ_START_RUNNERS:
        raise E2EError("SCHEDVIZ_START_RUNNERS is off: nothing would start the cluster's runner")
    server = ServerLoop()
    try:
        cluster = services.cluster_create(
            name=f"bench-e2e-{workload.name}-{uuid.uuid4().hex[:8]}",
            clock_mode=Cluster.ClockMode.LIVE,
            speed=1.0,
            seed=seed,
        )
        try:
            run = _E2ERun(workload, server, cluster, clients, time_limit)
            run.connect_clients()
            run.place_init_pods()
            started_wall, ended_wall, seconds, scheduled, churn_pods = run.measured_phase()
            run.stop_runner()
            durations, stored_bytes, order_bytes, json_bytes = run.phase_cycles(
                started_wall, ended_wall
            )
            extra = {"ended": run.ended, **run.close_clients()}
        finally:
            services.cluster_delete(cluster=cluster)
    finally:
        server.close()
    result = measured_result(
        workload,
        mode="e2e",
        scheduled=scheduled,
        seconds=seconds,
        cycle_seconds=durations,
        trace_bytes=stored_bytes,
        shared_trace_bytes=order_bytes,
        churn_pods=churn_pods,
        threshold=threshold,
    )
    target = result.threshold / 2
    result.extra = {
        "target": target,
        "meetsTarget": result.pods_per_second >= target,
        "traceJsonBytesPerCycle": round(statistics.fmean(json_bytes)) if json_bytes else 0,
        "database": connection.vendor,
        **extra,
    }
    return result
