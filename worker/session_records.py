"""The runner session's records: Cycle and Event rows written in batches, with the queue now and
then, and what is published of them (docs/live-system.md)."""

from __future__ import annotations

import time
from typing import Any

from schedviz.cluster import live, services
from schedviz.cluster.models import Cluster, Cycle
from schedviz.cluster.queue_state import queue_state_save
from schedviz.scheduler.clock import ScaledWallClock, VirtualClock
from schedviz.scheduler.trace import RESULT_SCHEDULED, RESULT_WAITING, CycleTrace
from worker.binding import GroupBindingScheduler
from worker.db_store import DatabaseStore, LeaseLostError
from worker.publish import QUEUE_LIST_LIMIT, Publisher
from worker.run_result import RunResult

# The queue is saved with a batch of Cycle rows at most every STATE_SAVE_INTERVAL seconds (and
# always when the runner stops), and no sooner after a save than STATE_SAVE_COST times the wall
# time that save took: a queue of thousands of pods (tens of milliseconds to save) then costs the
# loop at most about 1/STATE_SAVE_COST of its time. A runner killed loses at most that much of
# its queue's history.
STATE_SAVE_INTERVAL = 1.0
STATE_SAVE_COST = 20


class SessionRecords:
    """The records part of a runner's session (worker/session.py)."""

    cluster_id: int
    result: RunResult
    publisher: Publisher
    store: DatabaseStore
    scheduler: GroupBindingScheduler
    clock: VirtualClock | ScaledWallClock
    digest: str
    # The traces finished and not written yet, by cycle number.
    pending: dict[int, CycleTrace]
    # Cycle numbers written while their pod waited at Permit (re-emitted with the outcome).
    written_waiting: set[int]
    last_flush: float
    # When the queue may be saved again (time.monotonic).
    next_state_save: float
    # Pods placed in the session (worker/session.py, FUTILE_SLICE).
    placed: int

    def _on_trace(self, trace: CycleTrace) -> None:
        if self.store.connection_failed is not None:
            return  # its bind may or may not have committed: the next list tells
        # A cycle held at Permit is emitted again with its outcome: the latest one is kept.
        self.pending[trace.cycle] = trace
        if trace.result == RESULT_SCHEDULED:
            self.placed += 1
        self.publisher.cycle(live.cycle_summary(trace))

    def _offer_queue(self) -> None:
        queue = self.scheduler.queue
        self.publisher.queue(
            lambda: (queue.snapshot_state(limit=QUEUE_LIST_LIMIT), len(queue.pending_pods()[0]))
        )

    def _queue_counts(self) -> dict[str, int]:
        """The queue's size by sub-queue, as upstream's scheduler_pending_pods counts it."""
        queue = self.scheduler.queue
        gated = sum(1 for pod in queue.unschedulable_pods if pod.gated)
        return {
            "active": len(queue.active_q),
            "backoff": len(queue.backoff_q),
            "unschedulable": len(queue.unschedulable_pods) - gated,
            "gated": gated,
        }

    def _flush(self, *, final: bool = False) -> None:
        """Writes the cycles and events finished, with the queue now and then; ``final``: the
        queue and the wake-up in any case (the runner stops)."""
        try:
            self._write_pending(final=final)
        finally:
            # From the end of the write: a write that took longer than FLUSH_INTERVAL (a big
            # queue saved, a loaded machine) leaves the next cycles time to run before another,
            # rather than one write after every cycle.
            self.last_flush = time.monotonic()

    def _write_pending(self, *, final: bool) -> None:
        now = time.monotonic()
        traces = list(self.pending.values())
        self.pending = {}
        events = self.store.take_events()
        save_state = final or (traces and now >= self.next_state_save)
        if traces or events or save_state:
            try:
                self._write_records(traces, events, bool(save_state))
            except LeaseLostError:
                # Another runner numbers the cycles now: these are not written, nor shown.
                self.publisher.drop_cycles()
                return
            self.written_waiting.update(t.cycle for t in traces if t.result == RESULT_WAITING)
        self.publisher.flush()

    def _write_records(
        self, traces: list[CycleTrace], events: list[Any], save_state: bool = False
    ) -> None:
        cluster = self.store.cluster
        with self.store.write():
            rewritten = [t.cycle for t in traces if t.cycle in self.written_waiting]
            if rewritten:
                Cycle.objects.filter(cluster=cluster, number__in=rewritten).delete()
                self.written_waiting.difference_update(rewritten)
            if traces:
                services.cycles_create(cluster=cluster, traces=traces)
            if events:
                services.events_create(cluster=cluster, events=events)
            services.pending_pods_record(
                cluster=cluster,
                counts=self._queue_counts(),
                queue=self.scheduler.queue.snapshot_state(limit=QUEUE_LIST_LIMIT),
                scheduler_time=self.clock.now(),
                last_cycle=self.scheduler.cycle_count,
            )
            Cluster.objects.filter(pk=self.cluster_id).update(scheduler_time=self.clock.now())
            if save_state:
                # The queue as it stands after every change followed so far: the next runner
                # lists the cluster as of that change and goes on from here.
                started = time.monotonic()
                queue_state_save(
                    cluster=cluster,
                    state=self.scheduler.state_to_data(),
                    change_id=self.store.last_change_id,
                    config_digest=self.digest,
                    wake_at=self.result.wake_at,
                )
                ended = time.monotonic()
                self.next_state_save = ended + max(
                    STATE_SAVE_INTERVAL, STATE_SAVE_COST * (ended - started)
                )
