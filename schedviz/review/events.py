"""The scheduler's events, as ``kubectl get events -o yaml`` (or ``-o json``) gives them.

Both APIs are read: core/v1 ``Event`` (``involvedObject``, ``message``, ``firstTimestamp``,
``lastTimestamp``, ``count``) and events.k8s.io/v1 ``Event`` (``regarding``, ``note``,
``related``, ``eventTime``, ``series``, the ``deprecated*`` fields), in a ``List``/``EventList``
or as single documents. Only what the scheduler reports is kept: FailedScheduling, Scheduled
(``Successfully assigned ns/name to node``) and Preempted (``Preempted by pod UID on node N``,
sent for the victim, the preemptor in ``related``). The API server cuts a message at 1024
bytes, ending it with `` ...`` (``truncated`` says so); an aggregated event (``count`` > 1)
stands for several attempts with the same message.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, replace
from typing import Any

import yaml

from schedviz.review.logs import parse_rfc3339

SCHEDULER_REASONS = ("FailedScheduling", "Scheduled", "Preempted")
# The API server's limit on an event's message (validation.NoteLengthLimit), and the suffix it
# leaves where it cut.
MESSAGE_LIMIT = 1024
TRUNCATED_SUFFIX = " ..."

_SCHEDULED = re.compile(r"Successfully assigned (?P<pod>\S+/\S+) to (?P<node>\S+)")
_PREEMPTED = re.compile(r"Preempted by (?:pod )?(?P<uid>\S+)? ?on node (?P<node>\S+)")


class EventsError(ValueError):
    """Events that cannot be read; the message names the document and the field."""


@dataclass(frozen=True, slots=True)
class SchedulerEvent:
    reason: str
    pod: str  # namespace/name of the pod it is about
    pod_uid: str
    message: str
    time: float  # the last time it was seen (seconds since the epoch; 0: not given)
    first_time: float
    count: int
    type: str
    truncated: bool
    # Scheduled: the node; Preempted: the preemptor's node.
    node: str = ""
    # Preempted: the preemptor, as the event names it (its uid, or namespace/name from related).
    preemptor_uid: str = ""
    preemptor: str = ""


def read_events(texts: Iterable[tuple[str, str]]) -> list[SchedulerEvent]:
    """The scheduler's events in ``(name, text)`` files, oldest first."""
    events: list[SchedulerEvent] = []
    for name, text in texts:
        try:
            documents = list(yaml.safe_load_all(text))
        except yaml.YAMLError as error:
            raise EventsError(f"{name}: not YAML or JSON: {error}") from error
        for index, document in enumerate(documents):
            for path, item in _items(document, f"{name}: document {index + 1}"):
                event = _event(item, path)
                if event is not None:
                    events.append(event)
    events.sort(key=lambda event: event.first_time)
    return events


def _items(document: Any, path: str) -> Iterator[tuple[str, dict[str, Any]]]:
    if document is None:
        return
    if not isinstance(document, dict):
        raise EventsError(f"{path}: expected an object, got {type(document).__name__}")
    items = document.get("items")
    if isinstance(items, list):
        for index, item in enumerate(items):
            if not isinstance(item, dict):
                raise EventsError(f"{path}: items[{index}]: expected an object")
            yield f"{path}: items[{index}]", item
    elif document.get("kind") == "Event":
        yield path, document


def _event(item: dict[str, Any], path: str) -> SchedulerEvent | None:
    reason = item.get("reason")
    if reason not in SCHEDULER_REASONS:
        return None
    core = "involvedObject" in item
    regarding = item.get("involvedObject" if core else "regarding")
    if not isinstance(regarding, dict):
        field = "involvedObject" if core else "regarding"
        raise EventsError(f"{path}: {field}: Required value")
    if regarding.get("kind", "Pod") != "Pod":
        return None
    name = regarding.get("name")
    if not isinstance(name, str) or not name:
        raise EventsError(f"{path}: {'involvedObject' if core else 'regarding'}.name: Required")
    namespace = str(regarding.get("namespace") or "default")
    message = str(item.get("message" if core else "note") or "")
    series = item.get("series") if isinstance(item.get("series"), dict) else {}
    assert isinstance(series, dict)
    first = _time(item, path, ("firstTimestamp", "deprecatedFirstTimestamp", "eventTime"))
    last = _time(
        item,
        path,
        ("lastTimestamp", "deprecatedLastTimestamp", "eventTime", "firstTimestamp"),
        series.get("lastObservedTime"),
    )
    count = item.get("count", item.get("deprecatedCount", series.get("count", 1)))
    event = SchedulerEvent(
        reason=str(reason),
        pod=f"{namespace}/{name}",
        pod_uid=str(regarding.get("uid") or ""),
        message=message,
        time=last or first,
        first_time=first or last,
        count=count if isinstance(count, int) and count > 0 else 1,
        type=str(item.get("type") or ""),
        truncated=is_cut(message),
    )
    if reason == "Scheduled":
        match = _SCHEDULED.search(message)
        if match is not None:
            return replace(event, node=match.group("node"))
    elif reason == "Preempted":
        related = item.get("related") if isinstance(item.get("related"), dict) else {}
        assert isinstance(related, dict)
        match = _PREEMPTED.search(message)
        preemptor = ""
        if related.get("name"):
            preemptor = f"{related.get('namespace') or namespace}/{related['name']}"
        return replace(
            event,
            node=match.group("node") if match else "",
            preemptor_uid=(match.group("uid") or "") if match else str(related.get("uid", "")),
            preemptor=preemptor,
        )
    return event


def _time(item: dict[str, Any], path: str, fields: tuple[str, ...], extra: Any = None) -> float:
    candidates = [("series.lastObservedTime", extra)] if extra else []
    candidates += [(field, item.get(field)) for field in fields]
    for field, value in candidates:
        if not value:
            continue
        try:
            return parse_rfc3339(str(value))
        except ValueError as error:
            raise EventsError(f"{path}: {field}: {error}") from error
    return 0.0


def is_cut(message: str) -> bool:
    """Whether a message was cut by the API server (it ends with `` ...`` at the limit)."""
    return message.endswith(TRUNCATED_SUFFIX) and len(message.encode()) >= MESSAGE_LIMIT


def same_message(full: str, maybe_cut: str) -> bool:
    """Whether ``maybe_cut`` is ``full``, or ``full`` cut by the API server."""
    if full == maybe_cut:
        return True
    if is_cut(maybe_cut):
        return full.startswith(maybe_cut[: -len(TRUNCATED_SUFFIX)])
    return False
