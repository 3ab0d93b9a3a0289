"""Soak: 50 websocket clients watch one cluster of a real server while pods are created through
the JSON API at a steady rate; every cycle reaches every client (or is counted as coalesced),
every client hears from the server throughout, every pod is bound once, memory stays flat.

All on loopback, embedded mode (SQLite, in-memory channel layer, the runner a thread of the
server). ``SCHEDVIZ_SOAK_SECONDS`` sets how long pods are created (default 45; 300 for a real
soak). What "delivered or coalesced" means comes from worker/publish.py: a ``cluster.cycles``
message carries the summaries of the cycles since the previous one, oldest first, and counts in
``dropped`` the older ones it left out; so, per client, the numbers of the summaries and the
``dropped`` counts together must step through 1..N once each, in order.

The in-memory channel layer keeps at most 100 messages per connection and drops any more
without a word (``group_send`` ignores ``ChannelFull``): a publisher that sent every cycle and
every queue state on its own would lose cycles there once the server cannot forward them all,
which the accounting notices. The bursts (``BURST``) make that happen within the default run.
"""

from __future__ import annotations

import asyncio
import http.cookiejar
import itertools
import json
import os
import re
import sqlite3
import time
import urllib.parse
import urllib.request
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest
from live_server import LiveServer, api_token, serve, server_env
from websockets.asyncio.client import connect
from websockets.exceptions import ConnectionClosed
from websockets.typing import Origin

pytestmark = pytest.mark.slow

SOAK_SECONDS = float(os.environ.get("SCHEDVIZ_SOAK_SECONDS") or 45)
CLIENTS = 50
NODES = 10
PODS_PER_SECOND = 5.0
# Besides, every BURST_EVERY seconds one request creates BURST pods at once: the runner then
# schedules faster than one message per cycle could be forwarded to 50 clients. (At 5 pods/s
# alone, a publisher sending every cycle and queue state on its own loses nothing: it takes the
# bursts to show what the coalescing protects.)
BURST, BURST_EVERY = 100, 10.0
# RSS is first read once this much of the run is over: imports, caches, the connections made.
WARM_UP_SECONDS = min(15.0, SOAK_SECONDS / 3)
# Liveness, not speed: bounds a loaded 2-core machine meets many times over.
CONNECT_SECONDS = 60.0
MAX_GAP_SECONDS = 10.0
SETTLE_SECONDS = 60.0
REQUEST_SECONDS = 30.0
# What the server may grow by between the warm-up and the end: the pods themselves, which stay,
# and no more. Measured 2026-11-26 (2-core machine, load 8-9): 3.0 and 4.9 MB for 625 pods in
# 45 s, 10.1 MB for 1350 in 90 s; 7-9 kB a pod created after the warm-up (about 450 and 1174),
# the same at both lengths. Of that, Python objects are about 3 kB a pod (object counts in the
# server: one Pod, Container, PodInfo, Resource and cache _PodState each, no more): the decoded
# pod in the informer cache about 1.4 kB, its PodInfo with the requests derived and kept by
# identity (scheduler/framework/types.py, at most 4096 entries, ~1.5 kB each) about 1 kB, the
# scheduler cache and its NodeInfo the rest. The other 4-6 kB are the C heap: free memory the
# allocator keeps (malloc_trim gives back 2.7 of the 10.1 MB at 90 s) and SQLite's page caches
# growing with the database (a pod's row, its change rows, its cycle). The bound is 12 kB a pod
# plus 12 MB for the page caches and the allocator settling: a backlog of messages, or state
# kept per message sent (some 90,000 frames in 300 s) or per runner session, grows past it.
# Before, each runner session's listed cluster was kept by the next one's gc.freeze() and the
# runner started a session every 2-3 s while pods streamed in: 27-43 MB in 45 s.
RSS_BASE_BOUND_KB = 12_000
RSS_PER_POD_KB = 12

NODE = """
apiVersion: v1
kind: Node
metadata: {name: soak-node-%(i)d}
status: {allocatable: {cpu: "64", memory: 256Gi, pods: "1000"}}
"""
POD = """
apiVersion: v1
kind: Pod
metadata: {name: soak-%(i)05d, namespace: default}
spec: {containers: [{name: c, image: busybox, resources: {requests: {cpu: 10m, memory: 16Mi}}}]}
"""


@dataclass
class Client:
    """What one websocket client received: (arrival time, message) pairs."""

    number: int
    messages: list[tuple[float, dict[str, Any]]] = field(default_factory=list)
    closed: str | None = None
    # Cycle numbers accounted for so far (summaries received plus those counted as dropped).
    accounted: int = 0
    pending: int | None = None

    def note(self, message: dict[str, Any]) -> None:
        self.messages.append((time.monotonic(), message))
        if message.get("type") == "cluster.cycles":
            self.accounted += int(message.get("dropped") or 0) + len(message["cycles"])
        elif message.get("type") == "cluster.queue":
            self.pending = message["pending"]


@pytest.fixture
def soak_server(tmp_path: Path) -> Iterator[tuple[LiveServer, str]]:
    """A live server of its own, with its API token: writes are not rate-limited here, since the
    test makes more than a person may (the limit has its own tests)."""
    env = server_env(tmp_path, SCHEDVIZ_WRITE_RATE_PER_MINUTE="0")
    with serve(env) as server:
        yield server, api_token(env, "soak")


def _request(
    server: LiveServer, token: str, method: str, path: str, body: str | None = None
) -> Any:
    request = urllib.request.Request(
        server.url + path,
        method=method,
        data=None if body is None else body.encode(),
        headers={"Authorization": f"Token {token}", "Content-Type": "application/yaml"},
    )
    with urllib.request.urlopen(request, timeout=REQUEST_SECONDS) as response:
        return json.loads(response.read())


def _create_watchable_cluster(server: LiveServer) -> int:
    """A cluster made with the page's form, as an anonymous visitor does: it has no owner, so
    the anonymous websocket clients may watch it and the token's user may write to it (the
    websocket authenticates by session only; a cluster made through the API is its user's)."""
    opener = urllib.request.build_opener(
        urllib.request.HTTPCookieProcessor(http.cookiejar.CookieJar())
    )
    with opener.open(server.url + "/", timeout=REQUEST_SECONDS) as response:
        page = response.read().decode()
    token = re.search(r'name="csrfmiddlewaretoken" value="([^"]+)"', page)
    assert token is not None, "no CSRF token on the cluster list"
    form = {
        "csrfmiddlewaretoken": token.group(1),
        "name": "soak",
        "clock_mode": "live",
        "source": "empty",
    }
    request = urllib.request.Request(
        server.url + "/",
        data=urllib.parse.urlencode(form).encode(),
        headers={"Referer": server.url + "/"},
    )
    with opener.open(request, timeout=REQUEST_SECONDS) as response:
        found = re.search(r"/clusters/(\d+)/$", response.geturl())
    assert found is not None, f"the form did not lead to a dashboard: {response.geturl()}"
    return int(found.group(1))


def _rss_kb(pid: int) -> int:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1])
    raise AssertionError(f"no VmRSS for process {pid}")


async def _watch(url: str, origin: str, client: Client, stop: asyncio.Event) -> None:
    try:
        async with connect(url, origin=Origin(origin), open_timeout=CONNECT_SECONDS) as socket:
            while not stop.is_set():
                try:
                    frame = await asyncio.wait_for(socket.recv(), timeout=0.5)
                except TimeoutError:
                    continue
                client.note(json.loads(frame))
    except (ConnectionClosed, OSError, TimeoutError) as error:
        client.closed = repr(error)


async def _until(condition: Callable[[], bool], timeout: float) -> bool:
    """Whether the condition came true within the timeout."""
    deadline = time.monotonic() + timeout
    while not condition():
        if time.monotonic() > deadline:
            return False
        await asyncio.sleep(0.2)
    return True


def _creation_plan(seconds: float) -> list[tuple[float, int]]:
    """(seconds after the start, pods) per request: one pod every 1/rate seconds, and every
    BURST_EVERY seconds BURST more in one request."""
    steady = [(i / PODS_PER_SECOND, 1) for i in range(int(seconds * PODS_PER_SECOND))]
    bursts = [(BURST_EVERY * (k + 0.5), BURST) for k in range(int(seconds / BURST_EVERY)) if BURST]
    return sorted(steady + bursts)


async def test_50_websocket_clients_get_every_cycle_or_its_count_while_pods_stream_in(
    soak_server: tuple[LiveServer, str],
) -> None:
    server, token = soak_server
    cluster = _create_watchable_cluster(server)
    nodes = "\n---\n".join(NODE % {"i": i} for i in range(NODES))
    _request(server, token, "POST", f"/api/clusters/{cluster}/apply", nodes)

    origin = server.url
    ws_url = origin.replace("http://", "ws://") + f"/ws/clusters/{cluster}/?format=json"
    clients = [Client(number) for number in range(CLIENTS)]
    stop = asyncio.Event()
    watchers = [asyncio.create_task(_watch(ws_url, origin, c, stop)) for c in clients]
    try:
        await _until(lambda: all(c.messages or c.closed for c in clients), CONNECT_SECONDS)
        assert all(c.messages and c.messages[0][1]["type"] == "hello" for c in clients), [
            c.closed for c in clients if c.closed
        ]

        plan = _creation_plan(SOAK_SECONDS)
        total = sum(size for _, size in plan)
        created = 0
        started = time.monotonic()
        hard_deadline = started + 3 * SOAK_SECONDS + SETTLE_SECONDS
        rss_warm: int | None = None
        rss_peak = 0
        for offset, size in plan:
            await asyncio.sleep(max(0.0, started + offset - time.monotonic()))
            assert time.monotonic() < hard_deadline, "the server stopped taking pods"
            body = "\n---\n".join(POD % {"i": i} for i in range(created, created + size))
            created += size
            await asyncio.to_thread(
                _request, server, token, "POST", f"/api/clusters/{cluster}/apply", body
            )
            rss_peak = max(rss_peak, _rss_kb(server.process.pid))
            if rss_warm is None and time.monotonic() - started >= WARM_UP_SECONDS:
                rss_warm = _rss_kb(server.process.pid)
        created_until = time.monotonic()
        assert rss_warm is not None

        # Every client hears of the last cycle and of an empty queue; if one never does, the
        # checks below say what it missed.
        await _until(
            lambda: all((c.accounted >= total and c.pending == 0) or c.closed for c in clients),
            SETTLE_SECONDS,
        )
        rss_end = _rss_kb(server.process.pid)
    finally:
        stop.set()
        await asyncio.gather(*watchers)

    # -- the pods, the traces and the change log agree: each pod bound once, one cycle each
    pods = _request(server, token, "GET", f"/api/clusters/{cluster}/pods")
    placed = {f"{p['namespace']}/{p['name']}": p["nodeName"] for p in pods}
    assert len(placed) == total and all(placed.values())
    traces: list[dict[str, Any]] = []
    while len(traces) < total + 1:
        after = traces[-1]["cycle"] if traces else 0
        page = _request(
            server, token, "GET", f"/api/clusters/{cluster}/cycles?after={after}&limit=5000"
        )
        if not page["cycles"]:
            break
        traces += page["cycles"]
    assert [t["cycle"] for t in traces] == list(range(1, total + 1))
    assert {t["result"] for t in traces} == {"Scheduled"}
    assert {t["pod"]: t["node"] for t in traces} == placed
    binds = _binds_in_change_log(server, cluster)
    assert binds == {name: 1 for name in placed}

    # -- every client: connected throughout, never starved, every cycle delivered or coalesced
    by_number = {t["cycle"]: (t["pod"], t["node"]) for t in traces}
    gaps = []
    for client in clients:
        assert client.closed is None, f"client {client.number} was disconnected: {client.closed}"
        arrivals = [at for at, _ in client.messages if started <= at <= created_until]
        edges = [started, *arrivals, created_until]
        gaps.append(max(b - a for a, b in itertools.pairwise(edges)))
        _assert_delivered_or_coalesced(client, by_number, total)
    assert max(gaps) <= MAX_GAP_SECONDS, f"a client waited {max(gaps):.1f} s for a message"

    # -- memory flat, no backlog and no error in the server
    bound = RSS_BASE_BOUND_KB + RSS_PER_POD_KB * total
    log = server.log.read_text(errors="replace")
    assert "over capacity" not in log
    assert "Traceback" not in log, log[-5000:]
    counts = [len(c.messages) for c in clients]
    dropped = [
        sum(int(m.get("dropped") or 0) for _, m in c.messages if m["type"] == "cluster.cycles")
        for c in clients
    ]
    print(
        f"\nsoak: {SOAK_SECONDS:.0f} s, {total} pods in {len(plan)} requests, "
        f"{CLIENTS} clients; messages per client {min(counts)}..{max(counts)}, "
        f"cycles counted as dropped {min(dropped)}..{max(dropped)}, longest gap "
        f"{max(gaps):.2f} s; RSS warm {rss_warm} kB, peak {rss_peak} kB, end {rss_end} kB "
        f"(growth {rss_end - rss_warm} kB, bound {bound} kB)"
    )
    assert rss_end - rss_warm < bound


def _assert_delivered_or_coalesced(
    client: Client, by_number: dict[int, tuple[str, str]], total: int
) -> None:
    """Cycle numbers step through 1..total exactly once, in order: each one in a summary that
    names the pod and node the trace names, or counted in a message's ``dropped``; and the last
    queue message says no pod is pending."""
    expected = 1
    for _, message in client.messages:
        if message["type"] != "cluster.cycles":
            continue
        expected += int(message.get("dropped") or 0)
        for summary in message["cycles"]:
            assert summary["cycle"] == expected, (
                f"client {client.number}: cycle {summary['cycle']} where {expected} was due"
            )
            assert (summary["pod"], summary["node"]) == by_number[expected]
            expected += 1
    assert expected == total + 1, f"client {client.number}: cycles up to {expected - 1} only"
    queues = [m for _, m in client.messages if m["type"] == "cluster.queue"]
    assert queues, f"client {client.number} got no queue message"
    last = queues[-1]
    assert last["pending"] == 0
    assert not any(last["queue"][key] for key in ("activeQ", "backoffQ", "unschedulablePods"))


def _binds_in_change_log(server: LiveServer, cluster: int) -> dict[str, int]:
    """Per pod, how many change-log rows bind it (MODIFIED with a node: the bind is the only
    update of a pod here), read from the server's database file, read-only."""
    database = server.log.parent / "db.sqlite3"
    connection = sqlite3.connect(f"file:{database}?mode=ro", uri=True, timeout=30)
    try:
        rows = connection.execute(
            "SELECT namespace, name, type, manifest FROM cluster_change "
            "WHERE cluster_id = ? AND kind = 'Pod' ORDER BY id",
            (cluster,),
        ).fetchall()
    finally:
        connection.close()
    binds: dict[str, int] = {}
    for namespace, name, kind, manifest in rows:
        if kind == "MODIFIED" and json.loads(manifest).get("spec", {}).get("nodeName"):
            key = f"{namespace or 'default'}/{name}"
            binds[key] = binds.get(key, 0) + 1
    return binds
