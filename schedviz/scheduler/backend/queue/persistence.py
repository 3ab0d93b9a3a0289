"""The scheduling queue as data, and back: what lets a queue outlive the process that holds it.

Upstream has no counterpart: kube-scheduler's queue lives as long as its process, and a new
process lists the cluster and queues every pending pod afresh. schedviz's runner stops when its
cluster has nothing to do and another process resumes it later (docs/live-system.md), so the
queue is saved as data between runners, and a new runner goes on with it as if it had never
stopped: the same pods in activeQ, backoffQ (with their expiries) and unschedulablePods (with
their rejecting plugins and timestamps), the same attempts, the pods in flight with the events
seen while they were, and the nominations.

``queue_to_data`` gives JSON-able values only; ``queue_from_data`` fills an empty queue built
with the same profiles (the heaps keep their storage order, so pods leave in the same order, ties
included). Pods are saved by key and taken back from the cache the queue is restored next to
(the caller restores the cache at the change-log position the queue was saved at); the objects
of in-flight events go through the caller's ``encode``/``decode``.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

from schedviz.kube.objects import Pod
from schedviz.scheduler.backend.queue.active_queue import InFlightEvent
from schedviz.scheduler.backend.queue.nominator import PodRef
from schedviz.scheduler.backend.queue.scheduling_queue import PriorityQueue
from schedviz.scheduler.framework.types import (
    ActionType,
    ClusterEvent,
    PodInfo,
    QueuedPodInfo,
)

# Bumped when the layout changes; data of another version is not restored (a fresh list is).
FORMAT_VERSION = 3

PodLookup = Callable[[str], Pod | None]
EncodeObject = Callable[[object], Any]
DecodeObject = Callable[[Any], object]


class QueueDataError(ValueError):
    """Saved queue data that cannot be restored (another format, a malformed document)."""


def queue_to_data(queue: PriorityQueue, *, encode: EncodeObject) -> dict[str, Any]:
    """The queue as JSON-able values (``encode`` turns an in-flight event's object into one)."""
    active_heap, next_arrival = queue.active_q.storage()
    regular, errors = queue.backoff_q.storage()
    log: list[dict[str, Any]] = []
    for value in queue.active_q.in_flight_storage():
        if isinstance(value, InFlightEvent):
            log.append(
                {
                    "event": _event_to_data(value.event),
                    "old": None if value.old_obj is None else encode(value.old_obj),
                    "new": None if value.new_obj is None else encode(value.new_obj),
                }
            )
        else:
            log.append({"inFlight": _pod_to_data(value)})
    nominator = queue.nominator
    return {
        "version": FORMAT_VERSION,
        "activeQ": [[_pod_to_data(p), arrival] for p, arrival in active_heap],
        "activeQNextArrival": next_arrival,
        "backoffQ": [_pod_to_data(p) for p, _ in regular],
        "errorBackoffQ": [_pod_to_data(p) for p, _ in errors],
        "unschedulablePods": [_pod_to_data(p) for p in queue.unschedulable_pods],
        "inFlightLog": log,
        "schedulingCycle": queue.active_q.scheduling_cycle,
        "lastPoppedFromBackoffQ": queue.active_q.last_popped_from_backoff_q,
        "moveRequestCycle": queue.move_request_cycle,
        "nominations": [
            [node, [[r.name, r.namespace, r.uid] for r in refs]]
            for node, refs in nominator.nominated_pods.items()
        ],
    }


def queue_from_data(
    queue: PriorityQueue, data: dict[str, Any], *, pods: PodLookup, decode: DecodeObject
) -> list[str]:
    """Fills the empty ``queue`` from ``queue_to_data``'s values. A pod ``pods`` does not know
    any more is left out (and out of the nominations); returns their keys. Raises
    QueueDataError for data this version cannot read."""
    if not isinstance(data, dict) or data.get("version") != FORMAT_VERSION:
        raise QueueDataError("the saved queue has another format")
    missing: list[str] = []

    def restore(entry: Any) -> QueuedPodInfo | None:
        key = str(entry[0])
        pod = pods(key)
        if pod is None:
            missing.append(key)
            return None
        return _pod_from_data(entry, pod)

    try:
        active = [
            (pinfo, int(arrival))
            for entry, arrival in data["activeQ"]
            if (pinfo := restore(entry)) is not None
        ]
        regular = [(p, 0) for e in data["backoffQ"] if (p := restore(e)) is not None]
        errors = [(p, 0) for e in data["errorBackoffQ"] if (p := restore(e)) is not None]
        pool = [p for e in data["unschedulablePods"] if (p := restore(e)) is not None]
        log: list[QueuedPodInfo | InFlightEvent] = []
        for entry in data["inFlightLog"]:
            if "inFlight" in entry:
                pinfo = restore(entry["inFlight"])
                if pinfo is not None:
                    log.append(pinfo)
                continue
            old, new = entry["old"], entry["new"]
            log.append(
                InFlightEvent(
                    _event_from_data(entry["event"]),
                    None if old is None else decode(old),
                    None if new is None else decode(new),
                )
            )
        nominations = [
            (str(node), [PodRef(str(n), str(ns), str(uid)) for n, ns, uid in refs])
            for node, refs in data["nominations"]
        ]
        queue.active_q.load(
            active,
            int(data["activeQNextArrival"]),
            log,
            int(data["schedulingCycle"]),
            bool(data["lastPoppedFromBackoffQ"]),
        )
        queue.backoff_q.load(regular, errors)
        for pinfo in pool:
            queue.unschedulable_pods.add_or_update(pinfo)
        queue.move_request_cycle = int(data["moveRequestCycle"])
        stamps = [p.stamp for p, _ in active + regular + errors]
        stamps += [p.stamp for p in pool]
        stamps += [p.stamp for p in log if isinstance(p, QueuedPodInfo)]
        queue.last_stamp = max(stamps, default=0)
    except (KeyError, IndexError, TypeError, ValueError) as error:
        raise QueueDataError(f"the saved queue is malformed: {error!r}") from error
    gone = set(missing)
    nominator = queue.nominator
    for node, refs in nominations:
        kept = [ref for ref in refs if ref.key not in gone]
        if kept:
            nominator.nominated_pods[node] = kept
            for ref in kept:
                nominator.nominated_pod_to_node[ref.key] = node
    return missing


# A queued pod's entry: a list of these fields, in this order (a list rather than an object: a
# queue of 10000 pods is saved every second of a live run, and names repeated per pod would be
# most of its bytes and of the time spent writing them).
POD_FIELDS = (
    "pod",
    "timestamp",
    "attempts",
    "unschedulableCount",
    "consecutiveErrorsCount",
    "initialAttemptTimestamp",
    "unschedulablePlugins",
    "pendingPlugins",
    "gatingPlugin",
    "gatingPluginEvents",
    "backoffExpiration",
    "stamp",
)


# The empty plugin and event lists of every entry that has none (most of them): one list, never
# changed, rather than three new ones per pod per save.
_NONE: list[Any] = []


def _pod_to_data(pinfo: QueuedPodInfo) -> list[Any]:
    unschedulable, pending, events, expiry = (
        pinfo.unschedulable_plugins,
        pinfo.pending_plugins,
        pinfo.gating_plugin_events,
        pinfo.backoff_expiration,
    )
    return [
        pinfo.pod_info.pod.key,
        pinfo.timestamp,
        pinfo.attempts,
        pinfo.unschedulable_count,
        pinfo.consecutive_errors_count,
        pinfo.initial_attempt_timestamp,
        sorted(unschedulable) if unschedulable else _NONE,
        sorted(pending) if pending else _NONE,
        pinfo.gating_plugin,
        [_event_to_data(e) for e in events] if events else _NONE,
        # -inf (Go's zero time) is not JSON: a cached "no backoff" is worked out again.
        None if expiry is None or not math.isfinite(expiry) else expiry,
        pinfo.stamp,
    ]


def _pod_from_data(entry: list[Any], pod: Pod) -> QueuedPodInfo:
    (
        _,
        timestamp,
        attempts,
        unschedulable_count,
        consecutive_errors_count,
        initial,
        unschedulable_plugins,
        pending_plugins,
        gating_plugin,
        gating_plugin_events,
        expiry,
        stamp,
    ) = entry
    return QueuedPodInfo(
        pod_info=PodInfo(pod),
        timestamp=float(timestamp),
        attempts=int(attempts),
        unschedulable_count=int(unschedulable_count),
        consecutive_errors_count=int(consecutive_errors_count),
        initial_attempt_timestamp=None if initial is None else float(initial),
        unschedulable_plugins={str(p) for p in unschedulable_plugins},
        pending_plugins={str(p) for p in pending_plugins},
        gating_plugin=str(gating_plugin),
        gating_plugin_events=[_event_from_data(e) for e in gating_plugin_events],
        backoff_expiration=None if expiry is None else float(expiry),
        stamp=int(stamp),
    )


def _event_to_data(event: ClusterEvent) -> list[Any]:
    return [event.resource, int(event.action_type), event.custom_label]


def _event_from_data(data: list[Any]) -> ClusterEvent:
    resource, action, label = data
    return ClusterEvent(str(resource), ActionType(int(action)), str(label))
