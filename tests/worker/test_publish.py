"""The publisher: batched cycle summaries, at most one queue message per interval."""

from __future__ import annotations

import asyncio
import dataclasses
import threading
import time
from typing import Any

from schedviz.cluster.live import cycle_summary
from schedviz.scheduler.trace import CycleTrace
from worker.publish import (
    CYCLES_PER_MESSAGE,
    PUBLISH_RETRY_SECONDS,
    QUEUE_INTERVAL,
    WORKLOADS_INTERVAL,
    Publisher,
    QueueState,
)


class RecordingLayer:
    def __init__(self) -> None:
        self.sent: list[tuple[str, dict[str, Any]]] = []

    async def group_send(self, group: str, message: dict[str, Any]) -> None:
        self.sent.append((group, message))


class FakeClock:
    def __init__(self) -> None:
        self.now = 100.0

    def __call__(self) -> float:
        return self.now


def trace(number: int) -> CycleTrace:
    return CycleTrace(
        cycle=number,
        pod=f"default/p{number}",
        profile="default-scheduler",
        attempt=1,
        time=0.5,
        wall_time=0.0,
        selected_node="n1",
        result="Scheduled",
        message="ok",
    )


def publisher() -> tuple[Publisher, RecordingLayer, FakeClock]:
    layer, clock = RecordingLayer(), FakeClock()
    return Publisher(7, layer=layer, clock=clock), layer, clock


def types(layer: RecordingLayer) -> list[str]:
    return [message["type"] for _, message in layer.sent]


def test_it_sends_to_the_clusters_group() -> None:
    pub, layer, _ = publisher()
    pub.status("running")
    assert layer.sent == [("cluster-7", {"type": "cluster.status", "runner": "running"})]


def test_queue_states_offered_within_an_interval_become_one_message_with_the_latest() -> None:
    pub, layer, clock = publisher()
    computed: list[int] = []

    def state(n: int) -> QueueState:
        def make() -> tuple[dict[str, Any], int]:
            computed.append(n)
            return {"activeQ": [n]}, n

        return make

    for n in range(1, 101):  # 100 states offered over a little more than 3 intervals
        pub.queue(state(n))
        pub.flush()
        clock.now += QUEUE_INTERVAL / 32
    assert computed == [1, 33, 65, 97]
    clock.now += QUEUE_INTERVAL
    pub.flush()
    assert computed == [1, 33, 65, 97, 100]
    queue_messages = [m for _, m in layer.sent if m["type"] == "cluster.queue"]
    assert [m["pending"] for m in queue_messages] == computed
    assert queue_messages[-1] == {
        "type": "cluster.queue",
        "queue": {"activeQ": [100]},
        "pending": 100,
    }


def test_only_the_latest_queue_state_is_ever_computed() -> None:
    pub, layer, _ = publisher()
    computed: list[str] = []
    pub.queue(lambda: (computed.append("old"), ({}, 0))[1])
    pub.queue(lambda: (computed.append("new"), ({}, 1))[1])
    pub.flush()
    assert computed == ["new"]
    pub.flush()
    assert types(layer) == ["cluster.queue"]


def test_cycles_are_batched_per_interval() -> None:
    pub, layer, clock = publisher()
    for n in range(1, 31):
        pub.cycle(cycle_summary(trace(n)))
        pub.flush()
        clock.now += 0.02
    messages = [m for _, m in layer.sent]
    assert all(m["type"] == "cluster.cycles" for m in messages)
    assert len(messages) <= 3
    sent = [c["cycle"] for m in messages for c in m["cycles"]]
    pub.flush(force=True)
    sent += [c["cycle"] for _, m in layer.sent[len(messages) :] for c in m["cycles"]]
    assert sent == list(range(1, 31))


def test_a_burst_keeps_the_latest_summaries_and_counts_the_rest() -> None:
    pub, layer, _ = publisher()
    for n in range(1, CYCLES_PER_MESSAGE + 51):
        pub.cycle(cycle_summary(trace(n)))
    pub.flush(force=True)
    ((_, message),) = layer.sent
    assert message["dropped"] == 50
    assert [c["cycle"] for c in message["cycles"]] == list(range(51, CYCLES_PER_MESSAGE + 51))


def test_with_the_servers_loop_it_hands_sends_to_that_loop() -> None:
    layer = RecordingLayer()
    loop = asyncio.new_event_loop()
    thread = threading.Thread(target=loop.run_forever, daemon=True)
    thread.start()
    try:
        Publisher(3, layer=layer, loop=loop).status("idle")
        for _ in range(200):
            if layer.sent:
                break
            time.sleep(0.01)
        assert layer.sent == [("cluster-3", {"type": "cluster.status", "runner": "idle"})]
    finally:
        loop.call_soon_threadsafe(loop.stop)
        thread.join()
        loop.close()


class LoopRecordingLayer(RecordingLayer):
    """Records the event loop each send ran in."""

    def __init__(self) -> None:
        super().__init__()
        self.loops: list[asyncio.AbstractEventLoop] = []

    async def group_send(self, group: str, message: dict[str, Any]) -> None:
        self.loops.append(asyncio.get_running_loop())
        await super().group_send(group, message)


def test_a_runner_started_before_the_server_knew_its_loop_sends_through_it_once_known() -> None:
    # A runner resumed at boot starts before any request has shown the serving loop: its sends
    # went to a loop of its own (no browser listens there) until the runner restarted.
    layer = LoopRecordingLayer()
    serving: list[asyncio.AbstractEventLoop] = []
    publisher = Publisher(3, layer=layer, loop_source=lambda: serving[0] if serving else None)
    loop = asyncio.new_event_loop()
    thread = threading.Thread(target=loop.run_forever, daemon=True)
    thread.start()
    try:
        publisher.status("running")
        assert layer.loops and layer.loops[0] is not loop
        serving.append(loop)  # a browser connected: the server's loop is known now
        publisher.status("idle")
        for _ in range(200):
            if len(layer.sent) == 2:
                break
            time.sleep(0.01)
        assert [message["runner"] for _, message in layer.sent] == ["running", "idle"]
        assert layer.loops[1] is loop
    finally:
        publisher.close()
        loop.call_soon_threadsafe(loop.stop)
        thread.join()
        loop.close()


class FlakyLayer(RecordingLayer):
    """A channel layer whose Redis can be down."""

    def __init__(self) -> None:
        super().__init__()
        self.down = False
        self.attempts = 0

    async def group_send(self, group: str, message: dict[str, Any]) -> None:
        self.attempts += 1
        if self.down:
            raise ConnectionError("Error 111 connecting to 127.0.0.1:6379. Connection refused.")
        await super().group_send(group, message)


def test_while_the_layer_is_down_messages_are_skipped_then_sending_resumes_with_the_status(
    caplog: Any,
) -> None:
    layer, clock = FlakyLayer(), FakeClock()
    sender = Publisher(1, layer=layer, clock=clock)
    sender.status("running", paused=False)
    layer.down = True
    for number in range(1, 4):
        sender.cycle(cycle_summary(trace(number)))
        sender.flush(force=True)
        clock.now += 0.1
    # One failed attempt, then nothing tried until the retry interval is over; logged once.
    assert layer.attempts == 2
    assert len([r for r in caplog.records if "failed" in r.getMessage()]) == 1
    layer.down = False
    clock.now += PUBLISH_RETRY_SECONDS
    sender.cycle(cycle_summary(trace(4)))
    sender.flush(force=True)
    kinds = [message["type"] for _, message in layer.sent]
    assert kinds == ["cluster.status", "cluster.cycles", "cluster.status"]
    assert layer.sent[-1][1] == {"type": "cluster.status", "runner": "running", "paused": False}
    assert any("works again; 3 message(s) were skipped" in r.getMessage() for r in caplog.records)
    sender.close()


def test_a_workload_or_a_pod_it_controls_changing_becomes_one_workloads_message() -> None:
    from schedviz.kube.objects import Deployment, OwnerReference, Pod

    pub, layer, clock = publisher()
    owned = (OwnerReference(kind="ReplicaSet", name="web-1", uid="u", controller=True),)
    pending = Pod(name="web-1-a", owner_references=owned)
    bound = dataclasses.replace(pending, node_name="n1")
    alone = Pod(name="alone")
    # A pod of no controller, and a controlled pod changed but not moved: nothing to show.
    pub.object_changed("ADDED", None, alone)
    pub.object_changed("MODIFIED", pending, dataclasses.replace(pending, labels={"a": "b"}))
    pub.flush()
    assert types(layer) == []
    pub.object_changed("ADDED", None, Deployment(name="web"))
    pub.object_changed("ADDED", None, pending)
    pub.object_changed("MODIFIED", pending, bound)
    pub.flush()
    assert types(layer) == ["cluster.workloads"]
    assert layer.sent[-1] == ("cluster-7", {"type": "cluster.workloads"})
    # Within the interval it waits (one message for many changes), then goes out.
    pub.object_changed("DELETED", bound, None)
    pub.flush()
    assert types(layer) == ["cluster.workloads"]
    clock.now += WORKLOADS_INTERVAL
    pub.flush()
    assert types(layer) == ["cluster.workloads", "cluster.workloads"]
