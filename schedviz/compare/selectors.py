"""Reads of comparison runs: a run the user may see, its state, and the side-by-side results."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from django.contrib.auth.models import AnonymousUser, User

from schedviz.cluster import selectors as cluster_selectors
from schedviz.cluster.models import Cluster
from schedviz.cluster.services import ObjectNotFound, scheduler_config_document
from schedviz.compare import engine, results, scenarios
from schedviz.compare.models import CompareRun, CompareVariant
from schedviz.kube.errors import go_quote

RUNNING, SUCCEEDED, FAILED = "running", "succeeded", "failed"


def compare_run_get(*, run_id: int, user: User | AnonymousUser | None) -> CompareRun:
    """The run, if the user may see its cluster; ObjectNotFound otherwise."""
    run = CompareRun.objects.select_related("cluster").filter(id=run_id).first()
    if run is None:
        raise ObjectNotFound([f"comparisons {go_quote(str(run_id))} not found"])
    try:
        cluster_selectors.cluster_get(cluster_id=run.cluster_id, user=user)
    except ObjectNotFound:
        raise ObjectNotFound([f"comparisons {go_quote(str(run_id))} not found"]) from None
    return run


def compare_run_list(*, cluster: Cluster) -> list[CompareRun]:
    return list(CompareRun.objects.filter(cluster=cluster).order_by("-id"))


def profile_choices(*, cluster: Cluster) -> list[str]:
    """The schedulerNames a profile variant of the cluster may name."""
    return engine.profile_names(scheduler_config_document(cluster=cluster))


@dataclass(frozen=True)
class RunState:
    run: CompareRun
    variants: list[CompareVariant]
    status: str
    # The comparison of the variants that succeeded, once none is still running and at least
    # two succeeded.
    comparison: results.Comparison | None
    # A scenario run's: where its succeeded variants part (schedviz.scenario.compare).
    scenario_comparison: dict[str, Any] | None = None

    @property
    def finished(self) -> bool:
        return self.status != RUNNING

    def to_json(self) -> dict[str, Any]:
        return {
            "id": self.run.id,
            "cluster": self.run.cluster_id,
            "source": self.run.source,
            "seed": self.run.seed,
            "status": self.status,
            "variants": [
                {
                    "name": v.name,
                    "profile": v.profile or None,
                    "status": v.status,
                    "podsDone": v.pods_done,
                    "podsTotal": v.pods_total,
                    "error": v.error or None,
                    "worker": v.worker or None,
                    "configuration": v.configuration,
                }
                for v in self.variants
            ],
            "comparison": self.comparison.to_json() if self.comparison is not None else None,
            **(self._scenario_json() if self.run.source == CompareRun.Source.SCENARIO else {}),
        }

    def _scenario_json(self) -> dict[str, Any]:
        """A scenario run's scenario, each finished variant's result, and the comparison."""
        return {
            "scenario": self.run.scenario,
            "results": {v.name: v.result for v in self.variants if v.result is not None},
            "scenarioComparison": self.scenario_comparison,
        }


def _status(variants: list[CompareVariant]) -> str:
    states = {v.status for v in variants}
    if states & {CompareVariant.Status.PENDING, CompareVariant.Status.RUNNING}:
        return RUNNING
    return FAILED if CompareVariant.Status.FAILED in states else SUCCEEDED


def compare_run_state(*, run: CompareRun, with_results: bool = True) -> RunState:
    variants = list(run.variants.order_by("position"))
    status = _status(variants)
    comparison = None
    succeeded = [v for v in variants if v.status == CompareVariant.Status.SUCCEEDED]
    if run.source == CompareRun.Source.SCENARIO:
        finished = with_results and status != RUNNING
        scenario_comparison = scenarios.scenario_comparison(variants) if finished else None
        return RunState(run, variants, status, None, scenario_comparison)
    if with_results and status != RUNNING and len(succeeded) >= 2:
        comparison = results.compare(
            [results.VariantResult.from_json(v.name, v.result or {}) for v in succeeded]
        )
    return RunState(run=run, variants=variants, status=status, comparison=comparison)
