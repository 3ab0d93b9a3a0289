"""A review, end to end: logs, events, a dump and a configuration in, attempts reconciled out.

The configuration the replay runs with is, in this order: the one given (``--config``, or a
KubeSchedulerConfiguration in the dump), the one the startup log printed at V(2) ("Using
component config"), a profile made from the startup line that lists the plugins and weights
("the scheduler starts to work with those plugins": its Score plugins and weights), or
the v1 defaults. The output is the contract of ``manage.py review --output json``
(docs/review.md).
"""

from __future__ import annotations

import time
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any

import yaml

from schedviz.kube.load import Manifests
from schedviz.kube.objects import Pod
from schedviz.review.events import read_events
from schedviz.review.logs import read_logs
from schedviz.review.reconcile import KIND_TIE, Reconciler, Verdict
from schedviz.review.replay import Replay, ReplayStep
from schedviz.review.timeline import Timeline, build_timeline
from schedviz.scheduler.apis.config.types import KubeSchedulerConfiguration
from schedviz.scheduler.apis.config.v1 import (
    API_VERSION,
    KIND,
    decode_configuration,
    default_configuration,
)
from schedviz.scheduler.apis.config.validation import ConfigError
from schedviz.scheduler.framework.runtime.registry import Registry
from schedviz.scheduler.trace import CycleTrace

CONFIG_GIVEN = "given"
CONFIG_STARTUP = "startup log (Using component config)"
CONFIG_PLUGINS = "startup log (the scheduler starts to work with those plugins)"
CONFIG_DEFAULT = "v1 defaults"


class ReviewInputError(ValueError):
    """The review's input cannot be used (no log records an attempt, a bad configuration)."""


@dataclass
class ReviewedAttempt:
    step: ReplayStep
    verdict: Verdict

    def to_json(self) -> dict[str, Any]:
        attempt, cycle = self.step.attempt, self.step.cycle
        return {
            "pod": attempt.pod,
            "time": rfc3339(attempt.time),
            "attempt": attempt.number,
            "instance": attempt.instance,
            "origin": attempt.origin,
            "log": {
                "result": attempt.result,
                "node": attempt.node or None,
                "message": attempt.message or attempt.event_message or None,
                "eventMessage": attempt.event_message or None,
                "victims": list(attempt.victims),
                "nominatedNode": attempt.nominated_node or None,
                "feasibleNodes": attempt.feasible,
                "evaluatedNodes": attempt.evaluated,
                "scores": attempt.scores,
                "totals": attempt.totals,
                "queue": [{**move, "time": rfc3339(move["time"])} for move in attempt.queue],
                "sources": list(attempt.sources),
            },
            "replay": None
            if cycle is None
            else {
                "result": cycle.result,
                "node": cycle.node or None,
                "message": cycle.message,
                "cycle": cycle.cycle,
                "tieSet": cycle.tie_set,
                "feasibleNodes": cycle.feasible,
                "evaluatedNodes": cycle.evaluated,
                "victims": cycle.victims,
                "nominatedNode": cycle.nominated_node or None,
            },
            **self.verdict.to_json(),
        }


@dataclass
class Review:
    attempts: list[ReviewedAttempt]
    timeline: Timeline
    config_source: str
    config_note: str = ""
    skipped_lines: int = 0
    skipped_examples: list[str] = field(default_factory=list)
    instances: list[str] = field(default_factory=list)
    unbound_from_dump: int = 0
    seconds: float = 0.0
    # The configuration document replayed (None: the v1 defaults).
    config_document: dict[str, Any] | None = None

    def summary(self) -> dict[str, Any]:
        kinds = Counter(reviewed.verdict.kind for reviewed in self.attempts)
        disagreeing = {r.step.attempt.pod for r in self.attempts if not r.verdict.agree}
        return {
            "attempts": len(self.attempts),
            "agree": sum(1 for r in self.attempts if r.verdict.agree),
            "ties": kinds.get(KIND_TIE, 0),
            "disagree": sum(1 for r in self.attempts if not r.verdict.agree),
            "byKind": dict(sorted(kinds.items())),
            "pods": len(self.timeline.pods()),
            "podsWithDisagreements": sorted(disagreeing),
            "skippedLines": self.skipped_lines,
            "skippedExamples": list(self.skipped_examples),
            "unusedLines": self.timeline.unused_lines,
            "instances": list(self.instances),
            "configuration": {"source": self.config_source, "note": self.config_note or None},
            "podsUnboundFromDump": self.unbound_from_dump,
        }

    def to_json(self) -> dict[str, Any]:
        return {
            "attempts": [reviewed.to_json() for reviewed in self.attempts],
            "summary": self.summary(),
        }

    def pods_disagreeing_first(self) -> list[tuple[str, list[ReviewedAttempt]]]:
        """Each pod with its attempts, pods with a disagreement first (then in log order)."""
        by_pod: dict[str, list[ReviewedAttempt]] = {}
        for reviewed in self.attempts:
            by_pod.setdefault(reviewed.step.attempt.pod, []).append(reviewed)
        return sorted(by_pod.items(), key=lambda item: all(r.verdict.agree for r in item[1]))


def rfc3339(seconds: float) -> str:
    return (
        datetime.fromtimestamp(seconds, UTC)
        .isoformat(timespec="microseconds")
        .replace("+00:00", "Z")
    )


def review(
    *,
    logs: Sequence[tuple[str, str]],
    events: Sequence[tuple[str, str]],
    manifests: Manifests,
    registry: Registry,
    config_doc: dict[str, Any] | None = None,
    year: int | None = None,
    emit: Callable[[CycleTrace], None] | None = None,
) -> Review:
    """Reads, replays and reconciles. Raises ReviewInputError, EventsError, LogFormatError,
    ConfigError (bad given configuration)."""
    started = time.perf_counter()
    scheduler_events = read_events(events)
    if year is None:
        times = [event.first_time for event in scheduler_events if event.first_time]
        year = datetime.fromtimestamp(min(times), UTC).year if times else datetime.now(UTC).year
    reading = read_logs(logs, year=year)
    uids = {obj.uid: obj.key for obj in manifests.objects if isinstance(obj, Pod) and obj.uid}
    timeline = build_timeline(
        reading.records, scheduler_events, pod_of_uid=lambda uid: uids.get(uid, "")
    )
    if not timeline.attempts:
        raise ReviewInputError(
            "no scheduling attempt found: the log needs kube-scheduler's V(2) lines "
            '("Successfully bound pod to node", "Unable to schedule pod; no fit; waiting") '
            "or the events FailedScheduling/Scheduled"
        )
    config, source, note, document = _configuration(timeline, manifests, registry, config_doc)
    replay = Replay(manifests.objects, timeline.attempts, config, registry, emit=emit)
    reconciler = Reconciler(replay.store)
    reviewed = [
        ReviewedAttempt(step, reconciler.reconcile(step)) for step in replay.run(timeline.attempts)
    ]
    return Review(
        attempts=reviewed,
        timeline=timeline,
        config_source=source,
        config_note=note,
        skipped_lines=reading.skipped,
        skipped_examples=reading.skipped_examples,
        instances=reading.instances,
        unbound_from_dump=len(replay.unbound),
        seconds=time.perf_counter() - started,
        config_document=document,
    )


def _configuration(
    timeline: Timeline,
    manifests: Manifests,
    registry: Registry,
    config_doc: dict[str, Any] | None,
) -> tuple[KubeSchedulerConfiguration, str, str, dict[str, Any] | None]:
    known = set(registry)
    if config_doc is None and len(manifests.scheduler_configs) > 1:
        raise ReviewInputError("at most one KubeSchedulerConfiguration may be given")
    given = config_doc if config_doc is not None else next(iter(manifests.scheduler_configs), None)
    if given is not None:
        return decode_configuration(given, known_plugins=known), CONFIG_GIVEN, "", given
    notes: list[str] = []
    logged = timeline.config_yaml()
    if logged:
        try:
            document = yaml.safe_load(logged)
            if isinstance(document, dict):
                config = decode_configuration(document, known_plugins=known)
                return config, CONFIG_STARTUP, "", document
            notes.append("the logged configuration is not a YAML object")
        except (yaml.YAMLError, ConfigError) as error:
            notes.append(f"the logged configuration cannot be used: {error}")
    plugins = timeline.profiles_plugins()
    if plugins:
        made = _profile_document(plugins[0])
        try:
            config = decode_configuration(made, known_plugins=known)
        except ConfigError as error:
            notes.append(f"the logged plugins cannot be used: {error}")
        else:
            if len(plugins) > 1:
                notes.append(
                    f"the startup log lists {len(plugins)} profiles without their names: the "
                    "first is replayed as default-scheduler; give --config for the others"
                )
            return config, CONFIG_PLUGINS, "; ".join(notes), made
    return default_configuration(), CONFIG_DEFAULT, "; ".join(notes), None


def _profile_document(plugins: dict[str, Any]) -> dict[str, Any]:
    """A v1 configuration whose one profile scores with exactly the plugins and weights the
    startup line lists (the other extension points keep the v1 defaults: the line lists some
    plugins at points where v1.34 registers them only through multiPoint)."""
    points: dict[str, Any] = {}
    entry = plugins.get("Score")
    if isinstance(entry, dict):
        enabled = []
        for plugin in entry.get("Enabled") or []:
            if isinstance(plugin, dict) and isinstance(plugin.get("Name"), str):
                item: dict[str, Any] = {"name": plugin["Name"]}
                if isinstance(plugin.get("Weight"), int) and plugin["Weight"] > 0:
                    item["weight"] = plugin["Weight"]
                enabled.append(item)
        points["score"] = {"enabled": enabled, "disabled": [{"name": "*"}]}
    return {
        "apiVersion": API_VERSION,
        "kind": KIND,
        "profiles": [{"schedulerName": "default-scheduler", "plugins": points}],
    }
