"""``manage.py scenario FILE [--config FILE ...] [--seed N] [--output json|table]``.

Runs a KEP-140 Scenario (docs/scenarios.md) on the engine alone, from an empty cluster, and
prints its result: the Scenario with ``status`` (phase, stepStatus, scenarioResult.timeline)
and schedviz's per-step figures. With one ``--config``, that KubeSchedulerConfiguration is the
scheduler's; with several, the scenario runs under each and the comparison is printed (where
the placements part, the figures side by side). Bad input exits with status 2 and the error
on stderr; a scenario the API fails (phase Failed) exits with status 1 after printing.
"""

from __future__ import annotations

import json
import sys
from typing import Any

from django.conf import settings
from django.core.management.base import BaseCommand, CommandParser

from schedviz.controllers.persistentvolume import start_persistent_volume_controller
from schedviz.kube.errors import ManifestError
from schedviz.kube.load import load_files
from schedviz.outoftree.registry import new_registry
from schedviz.scenario.compare import Variant, compare_runs
from schedviz.scenario.runner import PHASE_FAILED, ScenarioRun, run_scenario
from schedviz.scenario.spec import ScenarioError, load_scenario
from schedviz.scenario.table import render_comparison, render_run
from schedviz.scheduler.apis.config.types import KubeSchedulerConfiguration
from schedviz.scheduler.apis.config.validation import ConfigError
from schedviz.scheduler.collector import scheduling_collector
from schedviz.scheduler.extender import ExtenderConfigError
from schedviz.scheduler.framework.runtime.framework import FrameworkError
from schedviz.scheduler.framework.runtime.registry import Registry
from schedviz.simulation.simulator import SimulationInputError, configuration_from


def load_configuration(path: str, registry: Registry) -> KubeSchedulerConfiguration:
    """The one KubeSchedulerConfiguration of the file."""
    manifests = load_files([path])
    if len(manifests.scheduler_configs) != 1 or manifests.objects:
        raise SimulationInputError(
            f"{path}: expected exactly one KubeSchedulerConfiguration and nothing else"
        )
    return configuration_from(manifests, registry)


class Command(BaseCommand):
    help = "Run a KEP-140 Scenario in virtual time and print its timeline and figures."
    requires_system_checks: list[str] = []
    requires_migrations_checks = False

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("file", metavar="FILE", help="the Scenario, YAML or JSON")
        parser.add_argument(
            "--config",
            action="append",
            default=[],
            metavar="FILE",
            help="a KubeSchedulerConfiguration; several compare them on the scenario",
        )
        parser.add_argument("--seed", type=int, default=0, help="seed of the tie-breaks (0)")
        parser.add_argument("--output", choices=("json", "table"), default="json")
        parser.add_argument(
            "--max-cycles", type=int, default=1_000_000, help="cycles at most per step"
        )

    def handle(self, *args: Any, **options: Any) -> None:
        registry = new_registry()
        try:
            with open(options["file"], encoding="utf-8") as handle:
                text = handle.read()
            scenario = load_scenario(text, options["file"])
            configs = [load_configuration(path, registry) for path in options["config"]]
        except OSError as error:
            sys.stderr.write(f"open {options['file']}: {error.strerror}\n")
            sys.exit(2)
        except (ScenarioError, ManifestError, ConfigError, SimulationInputError) as error:
            sys.stderr.write(f"{error}\n")
            sys.exit(2)
        runs: list[tuple[str, ScenarioRun]] = []
        for index, config in enumerate(configs or [None]):
            name = options["config"][index] if configs else "default"
            try:
                with scheduling_collector():
                    run = run_scenario(
                        scenario,
                        seed=options["seed"],
                        config=config,
                        registry=registry,
                        controllers=[start_persistent_volume_controller],
                        keep_cards=len(configs) > 1,
                        max_cycles=options["max_cycles"],
                        extender_allowed_hosts=settings.SCHEDVIZ_EXTENDER_ALLOWED_HOSTS,
                    )
            except (FrameworkError, ExtenderConfigError, SimulationInputError) as error:
                sys.stderr.write(f"{error}\n")
                sys.exit(2)
            runs.append((name, run))
        if len(runs) > 1:
            comparison = compare_runs([Variant(name, run.document()) for name, run in runs])
            if options["output"] == "json":
                self.stdout.write(json.dumps(comparison, ensure_ascii=False, separators=(",", ":")))
            else:
                self.stdout.write(render_comparison(comparison), ending="")
        else:
            run = runs[0][1]
            if options["output"] == "json":
                self.stdout.write(run.to_json(), ending="")
            else:
                self.stdout.write(render_run(run), ending="")
        if any(run.phase == PHASE_FAILED for _, run in runs):
            sys.exit(1)
