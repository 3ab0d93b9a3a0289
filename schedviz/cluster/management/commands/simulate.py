"""``manage.py simulate FILE... [--seed N] [--output json|table]``: the engine alone.

No database, no Redis: the manifests are loaded, the scheduler runs in virtual time until no pod
can progress without a new cluster event (``Scheduler.run_until_idle``), the trace is printed
(with JSON, followed by what the controllers and admission did: ``objects`` and ``changes``),
and why it stopped goes to stderr ("stopped: 3 pods unschedulable, no event can change that",
"stopped: every pod placed"), with the FailedCreate of every controller's pod that admission
refused. A pod of the input that admission refuses refuses the input like any invalid
document ("document 4 of pods.yaml: pods \"web\" is forbidden: exceeded quota: ...").
The cycles are kept encoded (``trace_codec``, as the live system stores them) and decoded
one at a time as they are written. Bad input exits with status 2
and the loader's message on stderr; so does an extender on a host outside
``SCHEDVIZ_EXTENDER_ALLOWED_HOSTS``.
"""

from __future__ import annotations

import json
import sys
from collections.abc import Iterable
from typing import Any

from django.conf import settings
from django.core.management.base import BaseCommand, CommandParser

from schedviz.controllers.persistentvolume import start_persistent_volume_controller
from schedviz.kube.errors import ManifestError
from schedviz.kube.load import load_files
from schedviz.outoftree.registry import new_registry
from schedviz.scheduler.apis.config.validation import ConfigError
from schedviz.scheduler.collector import scheduling_collector
from schedviz.scheduler.extender import ExtenderConfigError
from schedviz.scheduler.framework.runtime.framework import FrameworkError
from schedviz.scheduler.trace import SCHEMA_VERSION
from schedviz.scheduler.trace_table import render_table
from schedviz.simulation.changes import ChangeLog
from schedviz.simulation.simulator import (
    EncodedTraceLog,
    Simulation,
    SimulationInputError,
    TraceLog,
    new_simulation,
)


class Command(BaseCommand):
    help = "Schedule the pods of the given manifests in virtual time and print every cycle's trace."
    requires_system_checks: list[str] = []
    requires_migrations_checks = False

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("files", nargs="+", metavar="FILE", help="YAML or JSON manifests")
        parser.add_argument(
            "--seed", type=int, default=0, help="seed of the tie-breaks and generated names (0)"
        )
        parser.add_argument("--output", choices=("json", "table"), default="json")
        parser.add_argument(
            "--max-cycles", type=int, default=1_000_000, help="stop after this many cycles"
        )

    def handle(self, *args: Any, **options: Any) -> None:
        try:
            manifests = load_files(list(options["files"]), seed=options["seed"], lenient_names=True)
            simulation = new_simulation(
                manifests,
                seed=options["seed"],
                registry=new_registry(),
                extender_allowed_hosts=settings.SCHEDVIZ_EXTENDER_ALLOWED_HOSTS,
                encoded_traces=True,
                controllers=[start_persistent_volume_controller],
                lenient_runtime_classes=True,
            )
        except (
            ManifestError,
            ConfigError,
            FrameworkError,
            SimulationInputError,
            ExtenderConfigError,
        ) as error:
            sys.stderr.write(f"{error}\n")
            sys.exit(2)
        if manifests.skipped_notice:
            sys.stderr.write(f"{manifests.skipped_notice}\n")
        for warning in manifests.name_warnings:
            sys.stderr.write(f"warning: {warning} (a v1.34 API server refuses this name)\n")
        self._write_admission(simulation, 0, 0)
        created_before_run = len(simulation.failed_creates)
        warned_before_run = len(simulation.admission_warnings)
        with scheduling_collector():
            simulation.run(options["max_cycles"])
        sys.stderr.write(f"{simulation.outcome()}\n")
        self._write_admission(simulation, created_before_run, warned_before_run)
        if options["output"] == "json":
            self._write_json(simulation.log, simulation.changes)
        else:
            self.stdout.write(render_table(simulation.log, simulation.store.pods()))

    @staticmethod
    def _write_admission(simulation: Simulation, failed_from: int, warned_from: int) -> None:
        """The controllers' FailedCreate events and the RuntimeClass refusals let through,
        from the given positions on."""
        for failed in simulation.failed_creates[failed_from:]:
            sys.stderr.write(f"{failed}\n")
        for warning in simulation.admission_warnings[warned_from:]:
            sys.stderr.write(
                f"warning: {warning} (a v1.34 API server refuses this create; "
                "simulated as stored)\n"
            )

    def _write_json(self, traces: EncodedTraceLog | TraceLog, changes: ChangeLog | None) -> None:
        """The trace document with one cycle per line, each decoded and converted only when
        written: a 5000-node run's trace is hundreds of megabytes, too much to hold at once.
        Then what the controllers and admission did: ``objects`` and ``changes``, one per line
        (docs/trace-format.md)."""
        write = self.stdout.write
        write(f'{{"schemaVersion": {SCHEMA_VERSION}, "cycles": [\n', ending="")
        self._write_lines((trace.to_json() for trace in traces), len(traces))
        if changes is not None:
            for key, items in changes.document().items():
                write(f'], "{key}": [\n', ending="")
                self._write_lines(items, len(items))
        write("]}\n", ending="")

    def _write_lines(self, items: Iterable[Any], count: int) -> None:
        for index, item in enumerate(items):
            separator = ",\n" if index < count - 1 else "\n"
            self.stdout.write(json.dumps(item, separators=(",", ":")) + separator, ending="")
