"""What a runner's run came to: ``RunResult`` and the reasons a runner stops."""

from __future__ import annotations

from dataclasses import dataclass

STOP_IDLE = "idle"
STOP_HELD = "held by another runner"
STOP_UP_TO_DATE = "a later runner saw the change"
STOP_LEASE_LOST = "lease lost"
STOP_GONE = "cluster deleted"
STOP_MAX_SECONDS = "max_seconds"
STOP_MAX_CYCLES = "max_cycles"
STOP_CONFIG = "configuration error"
STOP_RESTART = "clock mode or scheduler configuration changed"
STOP_DEBUG_ABANDONED = "a cycle stopped in the debugger was abandoned"
STOP_DATABASE = "database connection lost"


@dataclass
class RunResult:
    cluster_id: int
    holder: str
    # Whether this runner held the lease at all.
    acquired: bool = False
    cycles: int = 0
    stopped: str = ""
    scheduler_time: float = 0.0
    error: str = ""
    # The last Change row the runner followed.
    last_change_id: int = 0
    # Stopped with work due later (a backoff ending, a queue flush of a live cluster): in how
    # many wall seconds, and at what Unix time, a runner is to start again (dispatch wakes it).
    wake_in: float | None = None
    wake_at: float | None = None
