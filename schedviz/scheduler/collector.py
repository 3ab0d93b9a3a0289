"""The garbage collector while a process schedules: not in upstream (Go's equivalent is GOGC).

A scheduling cycle allocates thousands of short-lived objects (statuses, lists, trace records)
and few cycles of references. At CPython's default first threshold (700 allocations) the cyclic
collector ran hundreds of times per thousand pods, promoting live objects into the older
generations, whose collections walk the whole cluster (a full one took 0.4 s at 5000 nodes and
25000 pods). While anything schedules (``scheduling_collector``: a live runner, ``simulate``,
the benchmark), the youngest generation is collected every ``GC_THRESHOLD0`` allocations; the
older generations' thresholds are left as they are. Process-wide, as the collector is: counted,
so that runners of several clusters in one process share it, and restored when the last ends.
"""

from __future__ import annotations

import gc
import threading
from collections.abc import Iterator
from contextlib import contextmanager

# The collector's first threshold while scheduling (CPython's default is 700).
GC_THRESHOLD0 = 50_000

_lock = threading.Lock()
_users = 0
_restore: tuple[int, ...] = ()


@contextmanager
def scheduling_collector() -> Iterator[None]:
    """The youngest generation collected every ``GC_THRESHOLD0`` allocations while inside;
    the thresholds found on the first entry are put back when the last one leaves."""
    global _users, _restore
    with _lock:
        if _users == 0:
            _restore = gc.get_threshold()
            gc.set_threshold(max(GC_THRESHOLD0, _restore[0]), *_restore[1:])
        _users += 1
    try:
        yield
    finally:
        with _lock:
            _users -= 1
            if _users == 0:
                gc.set_threshold(*_restore)
