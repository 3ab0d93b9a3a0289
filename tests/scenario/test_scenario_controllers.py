"""A scenario with the controllers acting over time: a Deployment spread over zones, a pod of
higher priority preempting one replica that its ReplicaSet replaces, a cordon, and a deleted node
whose pod PodGC collects and its ReplicaSet replaces; step by step as a v1.34 cluster does it."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import yaml

from schedviz.scenario.runner import run_scenario
from schedviz.scenario.spec import parse_scenario

SCENARIO = Path(__file__).parent / "data" / "deployment-zones-preemption-cordon-delete.yaml"


def _events(run: Any, step: int) -> list[dict[str, Any]]:
    return list(run.timeline[str(step)])


def _kinds(events: list[dict[str, Any]]) -> list[str]:
    out = []
    for event in events:
        verb = next(k for k in ("create", "patch", "delete", "podScheduled", "done") if k in event)
        body = event[verb]
        if verb == "podScheduled":
            out.append(f"bind {body['pod']['name'].rsplit('-', 1)[0]} {body['node']}")
            continue
        obj = (body or {}).get("result") or {}
        kind = obj.get("kind") or (body or {}).get("operation", {}).get("typeMeta", {}).get("kind")
        extra = " preemption" if (body or {}).get("preemption") else ""
        extra += " disruption" if (body or {}).get("disruption") else ""
        out.append(f"{verb} {kind}{extra}")
    return out


def test_a_deployment_is_spread_preempted_replaced_cordoned_and_collected_step_by_step() -> None:
    run = run_scenario(parse_scenario(yaml.safe_load(SCENARIO.read_text())))
    step1 = _events(run, 1)
    nodes = [e["podScheduled"]["node"] for e in step1 if "podScheduled" in e]
    assert sorted(nodes) == ["a1", "b1", "c1"]  # one replica per zone (maxSkew 1)
    assert _kinds(step1)[:5] == [
        "create Deployment",
        "create ReplicaSet",
        "create Pod",
        "create Pod",
        "create Pod",
    ]

    step2 = _kinds(_events(run, 2))
    # The victim on a1 is deleted as a preemption, its ReplicaSet makes a replacement, and the
    # preemptor binds to the node it was nominated to.
    assert "delete Pod preemption" in step2
    assert step2.index("delete Pod preemption") < step2.index("create Pod", 1)
    assert step2[-1] == "bind urgent a1"

    assert _kinds(_events(run, 3)) == ["patch Node"]

    step4 = _events(run, 4)
    kinds = _kinds(step4)
    assert kinds[:2] == ["delete Node", "patch Pod"]
    gone = next(e for e in step4 if "delete" in e and e["delete"].get("disruption"))
    assert gone["delete"]["disruption"]["reason"] == "DeletionByPodGC"
    assert gone["step"]["major"] == 4 and "create Pod" in kinds
    # No node is left for the two replicas without a home: a1 holds urgent, b1 is cordoned.
    final = [p for p in run.simulation.store.pods() if not p.node_name]
    assert len(final) == 2
