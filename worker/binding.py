"""The runner's binding cycles, bound several at a time in one transaction (group commit).

Upstream's scheduler runs each pod's binding cycle in a goroutine of its own once the scheduling
cycle has assumed the pod (pkg/scheduler/schedule_one.go, ``ScheduleOne``): the next pod's
scheduling cycle does not wait for the API server. Here, on the live clock, a pod's binding cycle
waits in ``deferred`` while the next pods are scheduled against the cache, where it is assumed;
``bind_deferred`` then runs the waiting binding cycles (PreBind, Bind, PostBind, each outcome as
upstream's bindingCycle and handleBindingCycleError have it) inside one database transaction that
the runner's lease fences once. A bind that fails (the compare-and-set lost, the pod or node
gone) is a savepoint of its own: it takes back nothing of the others, and its pod goes through
the same error path as before (forgotten, unreserved, requeued, its trace an Error).

Traces are emitted when their binding cycle has run, and in cycle order: while a binding cycle
waits, the traces of the cycles after it wait too. A runner that stops before the group commits
(killed, its lease lost, its connection dropped) has bound none of its pods: they were assumed
only in its memory, and the database still has them pending.

Virtual time binds at once, as the simulator does, so a virtual cluster's traces stay the
simulator's; so does a paused cluster's step, and a cycle stepped through in the debugger.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from contextlib import AbstractContextManager
from dataclasses import dataclass
from typing import Any

from schedviz.kube.objects import Pod
from schedviz.scheduler.framework.cycle_state import CycleState
from schedviz.scheduler.framework.runtime.framework import Framework
from schedviz.scheduler.framework.types import QueuedPodInfo
from schedviz.scheduler.schedule_one import ScheduleResult
from schedviz.scheduler.scheduler import Scheduler
from schedviz.scheduler.trace import CycleTrace


@dataclass(slots=True)
class DeferredBinding:
    """A binding cycle waiting for the next group commit."""

    framework: Framework
    state: CycleState
    assumed_info: QueuedPodInfo
    result: ScheduleResult
    trace: CycleTrace


class GroupBindingScheduler(Scheduler):
    """A Scheduler whose binding cycles wait for ``bind_deferred`` while ``bind_later`` is set."""

    bind_later = False

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        self.deferred: list[DeferredBinding] = []
        # When the oldest binding cycle in ``deferred`` was deferred (time.monotonic).
        self.deferred_since = 0.0
        self._held: list[CycleTrace] = []
        super().__init__(*args, **kwargs)

    def run_binding_cycle(
        self,
        framework: Framework,
        state: CycleState,
        assumed_info: QueuedPodInfo,
        result: ScheduleResult,
        trace: CycleTrace,
    ) -> None:
        if not self.bind_later:
            super().run_binding_cycle(framework, state, assumed_info, result, trace)
            return
        if not self.deferred:
            self.deferred_since = time.monotonic()
        self.deferred.append(DeferredBinding(framework, state, assumed_info, result, trace))

    def emit(self, trace: CycleTrace) -> None:
        if self.deferred or self._held:
            self._held.append(trace)  # after a binding cycle still to run: in cycle order
            return
        super().emit(trace)

    def bind_deferred(self, group: Callable[[list[Pod]], AbstractContextManager[None]]) -> bool:
        """Runs the deferred binding cycles inside ``group`` (one transaction, told the pods it
        binds), then emits the traces held meanwhile in cycle order; whether there were any.
        When ``group`` raises (the lease lost, the connection dropped) nothing of them is kept:
        the runner stops."""
        bindings, self.deferred = self.deferred, []
        held, self._held = self._held, []
        if bindings:
            with group([binding.assumed_info.pod for binding in bindings]):
                for binding in bindings:
                    started = time.perf_counter()
                    super().run_binding_cycle(
                        binding.framework,
                        binding.state,
                        binding.assumed_info,
                        binding.result,
                        binding.trace,
                    )
                    binding.trace.duration += time.perf_counter() - started
        for trace in sorted({id(t): t for t in held}.values(), key=lambda t: t.cycle):
            super().emit(trace)
        return bool(bindings)
