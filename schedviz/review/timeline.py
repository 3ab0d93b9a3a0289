"""Every attempt of every pod, from the scheduler's log records and its events.

The lines read (upstream v1.34.1 texts and levels):

- pkg/scheduler/schedule_one.go: V(3) "Attempting to schedule pod" opens an attempt; V(2)
  "Successfully bound pod to node" (node, evaluatedNodes, feasibleNodes), V(2) "Unable to
  schedule pod; no fit; waiting" (err: the FitError text, "0/N nodes are available: ..."), V(2)
  "Unable to schedule pod; no nodes are registered to the cluster; waiting" and the error
  "Error scheduling pod; retrying" close it; V(10) "Plugin scored node for pod" (the weighted
  score of one plugin on one node) and "Calculated node's final score for pod" (the node's sum).
  Binding runs in a goroutine, so a bind line may follow the next pod's "Attempting": outcomes
  are matched by pod and scheduler process, not by position. Without V(3) an outcome line is an
  attempt of its own.
- pkg/scheduler/framework/preemption/preemption.go: V(2) "the target node for the preemption
  is determined" (node, pod), "Start the preemption asynchronously" (preemptor, node),
  "Preemptor Pod preempted victim Pod" (preemptor, victim, node),
  "Victim Pod is already being deleted, skipping the API call for it" and "Victim Pod is already
  deleted" (a victim that was terminating), "No preemption candidate is found; preemption is not
  helpful for scheduling". The asynchronous preemption (SchedulerAsyncPreemption, on in v1.34)
  logs its victims after the attempt's outcome: they go to the preemptor's last attempt.
- pkg/scheduler/backend/queue/scheduling_queue.go: V(3) "Pod moved to an internal scheduling
  queue" (pod, event, queue), kept as the moves before each attempt.
- startup: "Starting Kubernetes Scheduler" (version), V(2) "Using component config" (the
  configuration as YAML, cmd/kube-scheduler/app/options/configfile.go) and V(2) "the scheduler
  starts to work with those plugins" (each profile's plugins and weights,
  framework/runtime/framework.go).

Events add what the log lacks: attempts of pods the log never names (a log at V(0)), the
FailedScheduling message as the API server kept it, and victims named by Preempted events.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import Any

from schedviz.review.events import SchedulerEvent
from schedviz.review.logs import STARTUP_MESSAGE, LogRecord

RESULT_SCHEDULED = "Scheduled"
RESULT_UNSCHEDULABLE = "Unschedulable"
RESULT_ERROR = "Error"
# An attempt whose outcome no line records (the log ends, or the process stopped meanwhile).
RESULT_UNKNOWN = "Unknown"

MSG_ATTEMPTING = "Attempting to schedule pod"
MSG_BOUND = "Successfully bound pod to node"
MSG_NO_FIT = "Unable to schedule pod; no fit; waiting"
MSG_NO_NODES = "Unable to schedule pod; no nodes are registered to the cluster; waiting"
MSG_ERROR = "Error scheduling pod; retrying"
MSG_PLUGIN_SCORE = "Plugin scored node for pod"
MSG_NODE_SCORE = "Calculated node's final score for pod"
MSG_TARGET_NODE = "the target node for the preemption is determined"
MSG_ASYNC_PREEMPTION = "Start the preemption asynchronously"
MSG_PREEMPTED = "Preemptor Pod preempted victim Pod"
MSG_VICTIM_DELETING = "Victim Pod is already being deleted, skipping the API call for it"
MSG_VICTIM_DELETED = "Victim Pod is already deleted"
MSG_NO_CANDIDATE = "No preemption candidate is found; preemption is not helpful for scheduling"
MSG_QUEUE_MOVE = "Pod moved to an internal scheduling queue"
MSG_PLUGINS = "the scheduler starts to work with those plugins"
MSG_CONFIG = "Using component config"
# upstream's ErrNoNodesAvailable text
NO_NODES_MESSAGE = "no nodes available to schedule pods"

_NODES_AVAILABLE = re.compile(r"^0/(\d+) nodes are available")


@dataclass
class Attempt:
    """One scheduling attempt of one pod, as the real scheduler recorded it."""

    pod: str
    time: float
    instance: str
    result: str = RESULT_UNKNOWN
    node: str = ""
    message: str = ""
    evaluated: int | None = None
    feasible: int | None = None
    total_nodes: int | None = None
    victims: list[str] = field(default_factory=list)
    # Victims that were already terminating (no delete call was made for them).
    terminating_victims: list[str] = field(default_factory=list)
    nominated_node: str = ""
    # "": not logged; "none": no candidate, preemption does not help.
    preemption: str = ""
    # node -> plugin -> weighted score, and node -> total (V(10) only)
    scores: dict[str, dict[str, int]] = field(default_factory=dict)
    totals: dict[str, int] = field(default_factory=dict)
    # The queue moves logged since the pod's previous attempt.
    queue: list[dict[str, Any]] = field(default_factory=list)
    # The FailedScheduling or Scheduled event that matches it, as the API server kept it.
    event_message: str = ""
    # "log" or "events": where the attempt itself was read.
    origin: str = "log"
    # How many attempts an aggregated event stands for (events only).
    repeated: int = 1
    number: int = 0  # this pod's attempts so far, this one included
    sources: list[str] = field(default_factory=list)  # "file:line" of the lines read

    def done(self) -> bool:
        return self.result != RESULT_UNKNOWN


@dataclass
class Startup:
    """What a scheduler process said of itself when it started."""

    instance: str
    time: float
    version: str = ""
    config_yaml: str = ""
    # Each profile's plugins as the startup line lists them, in the order they were logged.
    profiles_plugins: list[dict[str, Any]] = field(default_factory=list)


@dataclass
class Timeline:
    attempts: list[Attempt] = field(default_factory=list)
    startups: list[Startup] = field(default_factory=list)
    # Structured lines of a kind the review does not use (known format, other messages).
    unused_lines: int = 0

    def pods(self) -> list[str]:
        return list(dict.fromkeys(attempt.pod for attempt in self.attempts))

    def config_yaml(self) -> str:
        """The last configuration a startup logged ("" when none did)."""
        for startup in reversed(self.startups):
            if startup.config_yaml:
                return startup.config_yaml
        return ""

    def profiles_plugins(self) -> list[dict[str, Any]]:
        for startup in reversed(self.startups):
            if startup.profiles_plugins:
                return startup.profiles_plugins
        return []


def _text(values: dict[str, Any], key: str) -> str:
    value = values.get(key)
    return value if isinstance(value, str) else "" if value is None else str(value)


def _int(values: dict[str, Any], key: str) -> int | None:
    value = values.get(key)
    if isinstance(value, bool):
        return None
    if isinstance(value, int):
        return value
    if isinstance(value, str) and re.fullmatch(r"-?\d+", value):
        return int(value)
    return None


def counts_of_message(message: str) -> int | None:
    """The N of "0/N nodes are available: ..." (None when the message is not a FitError's)."""
    match = _NODES_AVAILABLE.match(message)
    return int(match.group(1)) if match else None


class _Builder:
    def __init__(self) -> None:
        self.timeline = Timeline()
        self.open: dict[tuple[str, str], Attempt] = {}
        self.last: dict[str, Attempt] = {}
        self.moves: dict[str, list[dict[str, Any]]] = {}
        self.startups: dict[str, Startup] = {}

    def attempt(self, record: LogRecord, pod: str, *, opening: bool = False) -> Attempt:
        key = (record.instance, pod)
        current = self.open.get(key)
        if current is not None and not (opening and current.sources):
            return current
        attempt = Attempt(pod=pod, time=record.time, instance=record.instance)
        attempt.queue = self.moves.pop(pod, [])
        self.open[key] = attempt
        self.last[pod] = attempt
        self.timeline.attempts.append(attempt)
        return attempt

    def close(self, record: LogRecord, pod: str) -> Attempt:
        attempt = self.attempt(record, pod)
        del self.open[(record.instance, pod)]
        attempt.sources.append(f"{record.source}:{record.line}")
        return attempt

    def preemptor_attempt(self, record: LogRecord, pod: str) -> Attempt:
        """The attempt preemption lines belong to: the open one, else the pod's last one."""
        attempt = self.open.get((record.instance, pod)) or self.last.get(pod)
        if attempt is None:
            attempt = self.attempt(record, pod)
        attempt.sources.append(f"{record.source}:{record.line}")
        return attempt

    def startup(self, record: LogRecord) -> Startup:
        startup = self.startups.get(record.instance)
        if startup is None:
            startup = Startup(instance=record.instance, time=record.time)
            self.startups[record.instance] = startup
            self.timeline.startups.append(startup)
        return startup

    def add(self, record: LogRecord) -> None:
        handler = _HANDLERS.get(record.message)
        if handler is None:
            self.timeline.unused_lines += 1
            return
        handler(self, record, record.values)


def _on_attempting(builder: _Builder, record: LogRecord, values: dict[str, Any]) -> None:
    pod = _text(values, "pod")
    stale = builder.open.get((record.instance, pod))
    if stale is not None and stale.sources:
        del builder.open[(record.instance, pod)]  # its outcome was never logged
    attempt = builder.attempt(record, pod, opening=True)
    attempt.sources.append(f"{record.source}:{record.line}")


def _on_bound(builder: _Builder, record: LogRecord, values: dict[str, Any]) -> None:
    attempt = builder.close(record, _text(values, "pod"))
    attempt.result = RESULT_SCHEDULED
    attempt.node = _text(values, "node")
    attempt.evaluated = _int(values, "evaluatedNodes")
    attempt.feasible = _int(values, "feasibleNodes")


def _on_no_fit(builder: _Builder, record: LogRecord, values: dict[str, Any]) -> None:
    attempt = builder.close(record, _text(values, "pod"))
    attempt.result = RESULT_UNSCHEDULABLE
    attempt.message = _text(values, "err")
    total = counts_of_message(attempt.message)
    if total is not None:
        attempt.total_nodes = attempt.evaluated = total
        attempt.feasible = 0


def _on_no_nodes(builder: _Builder, record: LogRecord, values: dict[str, Any]) -> None:
    attempt = builder.close(record, _text(values, "pod"))
    attempt.result = RESULT_UNSCHEDULABLE
    attempt.message = _text(values, "err") or NO_NODES_MESSAGE
    attempt.total_nodes = attempt.evaluated = attempt.feasible = 0


def _on_error(builder: _Builder, record: LogRecord, values: dict[str, Any]) -> None:
    attempt = builder.close(record, _text(values, "pod"))
    attempt.result = RESULT_ERROR
    attempt.message = _text(values, "err")


def _on_plugin_score(builder: _Builder, record: LogRecord, values: dict[str, Any]) -> None:
    attempt = builder.attempt(record, _text(values, "pod"))
    score = _int(values, "score")
    if score is not None:
        node = _text(values, "node")
        attempt.scores.setdefault(node, {})[_text(values, "plugin")] = score


def _on_node_score(builder: _Builder, record: LogRecord, values: dict[str, Any]) -> None:
    attempt = builder.attempt(record, _text(values, "pod"))
    score = _int(values, "score")
    if score is not None:
        attempt.totals[_text(values, "node")] = score


def _on_target_node(builder: _Builder, record: LogRecord, values: dict[str, Any]) -> None:
    attempt = builder.preemptor_attempt(record, _text(values, "pod"))
    attempt.nominated_node = _text(values, "node")


def _on_async_preemption(builder: _Builder, record: LogRecord, values: dict[str, Any]) -> None:
    attempt = builder.preemptor_attempt(record, _text(values, "preemptor"))
    attempt.nominated_node = _text(values, "node") or attempt.nominated_node


def _on_victim(builder: _Builder, record: LogRecord, values: dict[str, Any]) -> None:
    attempt = builder.preemptor_attempt(record, _text(values, "preemptor"))
    victim = _text(values, "victim")
    if victim and victim not in attempt.victims:
        attempt.victims.append(victim)
    if record.message != MSG_PREEMPTED and victim not in attempt.terminating_victims:
        attempt.terminating_victims.append(victim)
    if _text(values, "node") and not attempt.nominated_node:
        attempt.nominated_node = _text(values, "node")


def _on_no_candidate(builder: _Builder, record: LogRecord, values: dict[str, Any]) -> None:
    builder.preemptor_attempt(record, _text(values, "pod")).preemption = "none"


def _on_queue_move(builder: _Builder, record: LogRecord, values: dict[str, Any]) -> None:
    pod = _text(values, "pod")
    move = {"time": record.time, "event": _text(values, "event"), "queue": _text(values, "queue")}
    builder.moves.setdefault(pod, []).append(move)


def _on_startup(builder: _Builder, record: LogRecord, values: dict[str, Any]) -> None:
    builder.startup(record).version = _text(values, "version")


def _on_config(builder: _Builder, record: LogRecord, values: dict[str, Any]) -> None:
    builder.startup(record).config_yaml = _text(values, "config")


def _on_plugins(builder: _Builder, record: LogRecord, values: dict[str, Any]) -> None:
    plugins = values.get("Plugins")
    if isinstance(plugins, dict):
        builder.startup(record).profiles_plugins.append(plugins)


_HANDLERS: dict[str, Callable[[_Builder, LogRecord, dict[str, Any]], None]] = {
    MSG_ATTEMPTING: _on_attempting,
    MSG_BOUND: _on_bound,
    MSG_NO_FIT: _on_no_fit,
    MSG_NO_NODES: _on_no_nodes,
    MSG_ERROR: _on_error,
    MSG_PLUGIN_SCORE: _on_plugin_score,
    MSG_NODE_SCORE: _on_node_score,
    MSG_TARGET_NODE: _on_target_node,
    MSG_ASYNC_PREEMPTION: _on_async_preemption,
    MSG_PREEMPTED: _on_victim,
    MSG_VICTIM_DELETING: _on_victim,
    MSG_VICTIM_DELETED: _on_victim,
    MSG_NO_CANDIDATE: _on_no_candidate,
    MSG_QUEUE_MOVE: _on_queue_move,
    STARTUP_MESSAGE: _on_startup,
    MSG_CONFIG: _on_config,
    MSG_PLUGINS: _on_plugins,
}


def build_timeline(
    records: Iterable[LogRecord],
    events: Iterable[SchedulerEvent] = (),
    *,
    pod_of_uid: Callable[[str], str] = lambda uid: "",
) -> Timeline:
    """The attempts the records and events describe, in the order they started.
    ``pod_of_uid`` names a pod from its uid (Preempted events name the preemptor by uid)."""
    builder = _Builder()
    for record in records:
        builder.add(record)
    timeline = builder.timeline
    _merge_events(timeline, list(events), pod_of_uid)
    timeline.attempts.sort(key=lambda attempt: attempt.time)
    numbers: dict[str, int] = {}
    for attempt in timeline.attempts:
        numbers[attempt.pod] = numbers.get(attempt.pod, 0) + attempt.repeated
        attempt.number = numbers[attempt.pod]
    return timeline


# A log line and the event it caused are written within this long of each other.
EVENT_SLACK = 2.0


def _merge_events(
    timeline: Timeline, events: list[SchedulerEvent], pod_of_uid: Callable[[str], str]
) -> None:
    by_pod: dict[str, list[Attempt]] = {}
    for attempt in timeline.attempts:
        by_pod.setdefault(attempt.pod, []).append(attempt)
    for event in events:
        if event.reason == "Preempted":
            _merge_preempted(timeline, event, pod_of_uid)
            continue
        result = RESULT_SCHEDULED if event.reason == "Scheduled" else RESULT_UNSCHEDULABLE
        attempts = by_pod.get(event.pod)
        if not attempts:
            attempt = Attempt(
                pod=event.pod,
                time=event.first_time,
                instance="events",
                result=result,
                node=event.node,
                message=event.message if result == RESULT_UNSCHEDULABLE else "",
                origin="events",
                repeated=event.count,
            )
            total = counts_of_message(event.message)
            if total is not None:
                attempt.total_nodes = attempt.evaluated = total
                attempt.feasible = 0
            attempt.event_message = event.message
            timeline.attempts.append(attempt)
            continue
        for attempt in attempts:
            if (
                attempt.result == result
                and not attempt.event_message
                and event.first_time - EVENT_SLACK <= attempt.time <= event.time + EVENT_SLACK
            ):
                attempt.event_message = event.message
                if not attempt.message and result == RESULT_UNSCHEDULABLE:
                    attempt.message = event.message
                if not attempt.node:
                    attempt.node = event.node


def _merge_preempted(
    timeline: Timeline, event: SchedulerEvent, pod_of_uid: Callable[[str], str]
) -> None:
    preemptor = event.preemptor or pod_of_uid(event.preemptor_uid)
    candidates = [
        attempt
        for attempt in timeline.attempts
        if attempt.result != RESULT_SCHEDULED
        and (attempt.pod == preemptor if preemptor else attempt.nominated_node == event.node)
        and attempt.time <= event.time + EVENT_SLACK
    ]
    if not candidates:
        return
    attempt = max(candidates, key=lambda candidate: candidate.time)
    if event.pod not in attempt.victims:
        attempt.victims.append(event.pod)
    if not attempt.nominated_node:
        attempt.nominated_node = event.node
