"""``manage.py review --log FILE... [--events FILE] --cluster FILE... [--config FILE]
[--output json|table]``: a real scheduler's decisions reconciled with the engine's replay.

No database: the logs, events and dump are read, every attempt is replayed on the dump
(``schedviz.review``), and each is printed with the real and the replayed verdict and, where
they differ, why (docs/review.md). Bad input exits with status 2 and the reason on stderr.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import yaml
from django.core.management.base import BaseCommand, CommandParser

from schedviz.kube.errors import ManifestError
from schedviz.kube.load import load_files
from schedviz.outoftree.registry import new_registry
from schedviz.review.events import EventsError
from schedviz.review.logs import LogFormatError
from schedviz.review.review import Review, ReviewInputError, review, rfc3339
from schedviz.scheduler.apis.config.validation import ConfigError
from schedviz.scheduler.framework.runtime.framework import FrameworkError

WHY_WIDTH = 160


class Command(BaseCommand):
    help = "Reconcile a real kube-scheduler's logs and events with a replay on a dump."
    requires_system_checks: list[str] = []
    requires_migrations_checks = False

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument(
            "--log", action="append", required=True, metavar="FILE", help="kube-scheduler log"
        )
        parser.add_argument("--events", action="append", default=[], metavar="FILE")
        parser.add_argument(
            "--cluster", action="append", required=True, metavar="FILE", help="the dump"
        )
        parser.add_argument("--config", metavar="FILE", help="KubeSchedulerConfiguration")
        parser.add_argument("--output", choices=("json", "table"), default="json")

    def handle(self, *args: Any, **options: Any) -> None:
        try:
            logs = [(path, _read(path)) for path in options["log"]]
            events = [(path, _read(path)) for path in options["events"]]
            config_doc = _config(options["config"]) if options["config"] else None
            manifests = load_files(list(options["cluster"]), lenient_names=True)
            result = review(
                logs=logs,
                events=events,
                manifests=manifests,
                registry=new_registry(),
                config_doc=config_doc,
            )
        except (
            OSError,
            ManifestError,
            ConfigError,
            FrameworkError,
            EventsError,
            LogFormatError,
            ReviewInputError,
        ) as error:
            sys.stderr.write(f"{error}\n")
            sys.exit(2)
        if options["output"] == "json":
            self.stdout.write(json.dumps(result.to_json(), indent=1))
        else:
            self.stdout.write(render_table(result))


def _read(path: str) -> str:
    try:
        return Path(path).read_text(encoding="utf-8")
    except UnicodeDecodeError as error:
        raise LogFormatError(f"{path}: not UTF-8 text ({error.reason})") from error


def _config(path: str) -> dict[str, Any]:
    try:
        document = yaml.safe_load(_read(path))
    except yaml.YAMLError as error:
        raise ReviewInputError(f"{path}: not YAML: {error}") from error
    if not isinstance(document, dict):
        raise ReviewInputError(f"{path}: expected a KubeSchedulerConfiguration object")
    return document


def render_table(result: Review) -> str:
    rows = [("time", "pod", "try", "log", "replay", "verdict")]
    whys: list[str] = []
    for reviewed in result.attempts:
        attempt, cycle, verdict = reviewed.step.attempt, reviewed.step.cycle, reviewed.verdict
        logged = attempt.result + (f" {attempt.node}" if attempt.node else "")
        replayed = "-" if cycle is None else cycle.result + (f" {cycle.node}" if cycle.node else "")
        clock = rfc3339(attempt.time)[11:23]
        rows.append((clock, attempt.pod, str(attempt.number), logged, replayed, verdict.kind))
        if not verdict.agree:
            whys.append(f"{attempt.pod} #{attempt.number}: {verdict.why}"[: WHY_WIDTH * 4])
    widths = [max(len(row[i]) for row in rows) for i in range(len(rows[0]))]
    lines = [
        "  ".join(cell.ljust(widths[i]) for i, cell in enumerate(row)).rstrip() for row in rows
    ]
    summary = result.summary()
    lines.append("")
    lines.append(
        f"{summary['attempts']} attempts: {summary['agree']} agree ({summary['ties']} ties), "
        f"{summary['disagree']} disagree; configuration: {summary['configuration']['source']}; "
        f"{summary['skippedLines']} unreadable lines skipped"
    )
    if whys:
        lines.append("")
        lines.append("Why")
        lines.extend(whys)
    return "\n".join(lines) + "\n"
