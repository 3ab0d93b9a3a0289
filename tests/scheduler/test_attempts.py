"""The difference between two attempts of a pod, from real engine traces."""

from __future__ import annotations

from typing import Any

import pytest
import yaml
from test_diagnosis import node, pod, simulate

from schedviz.kube.load import load_manifests
from schedviz.scheduler.attempts import AttemptMismatch, diff_attempts, queue_facts
from schedviz.simulation.simulator import Simulation, admitted_objects


def apply(simulation: Simulation, *documents: dict[str, Any]) -> None:
    for obj in admitted_objects(load_manifests(yaml.safe_dump_all(documents)).objects):
        simulation.store.apply(obj)
    simulation.run()


def attempts(simulation: Simulation, key: str = "default/p") -> list[dict[str, Any]]:
    return [t.to_json() for t in simulation.traces if t.pod == key]


def test_a_node_rejected_for_cpu_passes_once_a_pod_is_deleted() -> None:
    simulation = simulate(node("n1", "1"), pod("a", "800m", on="n1"), pod("p", "500m"))
    simulation.store.delete("Pod", "default/a")
    simulation.run()
    first, second = attempts(simulation)
    diff = diff_attempts(first, second, changes=[{"kind": "Pod", "name": "a", "type": "DELETED"}])
    changed = {c.field: (c.before, c.after) for c in diff.fields}
    assert changed["result"] == ("Unschedulable", "Scheduled")
    assert changed["node"] == (None, "n1")
    assert changed["attempt"] == (1, 2)
    assert [(v.node, v.before, v.after) for v in diff.verdicts] == [
        ("n1", "rejected by NodeResourcesFit: Insufficient cpu", "passed")
    ]
    assert diff.changes == [{"kind": "Pod", "name": "a", "type": "DELETED"}]


def test_a_node_added_between_attempts_appears_as_a_new_verdict() -> None:
    simulation = simulate(node("n1", "1"), pod("p", "2"))
    apply(simulation, node("n2", "4"))
    first, second = attempts(simulation)
    diff = diff_attempts(first, second)
    assert [(v.node, v.before, v.after) for v in diff.verdicts] == [("n2", "", "passed")]
    assert {c.field for c in diff.fields} >= {"result", "node", "totalNodes", "feasibleNodes"}


def test_queue_facts_say_where_the_pod_waited_and_after_how_many_attempts() -> None:
    simulation = simulate(node("n1", "1"), pod("p", "2"))
    apply(simulation, node("n2", "4"))
    first, second = attempts(simulation)
    facts_before, facts_after = queue_facts(first), queue_facts(second)
    assert facts_before is not None and facts_after is not None
    assert (facts_before.subqueue, facts_before.details["attempts"]) == ("activeQ", 0)
    # The node event moved it to backoffQ; with activeQ empty, v1.34 pops from backoffQ
    # (SchedulerPopFromBackoffQ) before its backoff of 1 s has run out.
    assert facts_after.subqueue == "backoffQ"
    assert facts_after.details == {"attempts": 1, "backoffExpiration": 1.0}
    diff = diff_attempts(first, second)
    assert diff.queue_before == facts_before and diff.queue_after == facts_after


def test_score_changes_are_listed_per_plugin_on_nodes_both_attempts_scored() -> None:
    simulation = simulate(node("n1", "4"), node("n2", "4"), pod("p", "1"))
    (first,) = attempts(simulation)
    chosen = first["node"]
    # The same pod again, after load arrives on the node it chose.
    simulation.store.delete("Pod", "default/p")
    apply(simulation, pod("load", "3", on=chosen), pod("p", "1"))
    _, second = attempts(simulation)
    diff = diff_attempts(first, second)
    fit = [s for s in diff.scores if s.plugin == "NodeResourcesFit" and s.node == chosen]
    assert len(fit) == 1
    assert fit[0].raw_after < fit[0].raw_before
    assert any(t.field == chosen and t.after < t.before for t in diff.totals)
    assert not any(s.node != chosen and s.plugin == "NodeResourcesFit" for s in diff.scores)


def test_attempts_of_different_pods_are_refused() -> None:
    simulation = simulate(node("n1", "1"), pod("p", "2"), pod("q", "2"))
    with pytest.raises(AttemptMismatch, match="different pods"):
        diff_attempts(attempts(simulation)[0], attempts(simulation, "default/q")[0])


def test_diff_json_uses_camel_case_keys() -> None:
    simulation = simulate(node("n1", "1"), pod("p", "2"))
    apply(simulation, node("n2", "4"))
    data = diff_attempts(*attempts(simulation)).to_json()
    assert data["cycleBefore"] == 1 and data["cycleAfter"] == 2
    assert data["queueAfter"]["subqueue"] == "backoffQ"


def test_preemption_victims_change_only_when_someone_was_evicted() -> None:
    simulation = simulate(node("n1", "1"), pod("p", "2"))
    apply(simulation, node("n2", "4"))
    fields = {c.field for c in diff_attempts(*attempts(simulation)).fields}
    # The first attempt's PostFilter found no victim; the second needed no PostFilter.
    assert "preemptionVictims" not in fields
