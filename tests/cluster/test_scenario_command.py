"""``manage.py scenario``: KEP-140's result as JSON, the table, comparisons, bad input."""

from __future__ import annotations

import io
import json
import sys
from pathlib import Path
from typing import Any

import pytest
from django.core.management import call_command

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "scenario"))
from scenario_builders import create, done, node, pod, scenario

SCENARIO = scenario(
    create("a", 0, node("a", cpu="2")),
    create("b", 0, node("b", cpu="2")),
    create("p1", 1, pod("p1", "500m")),
    create("p2", 1, pod("p2", "500m")),
    done("done", 2),
)

MOST_ALLOCATED = """
apiVersion: kubescheduler.config.k8s.io/v1
kind: KubeSchedulerConfiguration
profiles:
- schedulerName: default-scheduler
  pluginConfig:
  - name: NodeResourcesFit
    args:
      scoringStrategy:
        type: MostAllocated
        resources: [{name: cpu, weight: 1}]
"""

DEFAULT = """
apiVersion: kubescheduler.config.k8s.io/v1
kind: KubeSchedulerConfiguration
"""


def run(*args: str) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    code = 0
    saved = sys.stderr
    sys.stderr = err
    try:
        call_command("scenario", *args, stdout=out)
    except SystemExit as exit_:
        code = int(exit_.code or 0)
    finally:
        sys.stderr = saved
    return code, out.getvalue(), err.getvalue()


def write(tmp_path: Path, name: str, content: Any) -> str:
    path = tmp_path / name
    path.write_text(content if isinstance(content, str) else json.dumps(content))
    return str(path)


def test_it_prints_the_scenario_with_its_status_and_timeline(tmp_path: Path) -> None:
    code, out, _ = run(write(tmp_path, "s.json", SCENARIO))
    assert code == 0
    document = json.loads(out)
    assert document["status"]["phase"] == "Succeeded"
    events = document["status"]["scenarioResult"]["timeline"]["1"]
    assert [e["step"] for e in events] == [{"major": 1, "minor": m} for m in range(4)]
    assert events[2]["podScheduled"]["pod"] == {"namespace": "default", "name": "p1"}
    assert document["schedviz"]["steps"][1]["bindings"] == 2


def test_the_same_file_and_seed_print_the_same_bytes(tmp_path: Path) -> None:
    path = write(tmp_path, "s.json", SCENARIO)
    assert run(path, "--seed", "3")[1] == run(path, "--seed", "3")[1]


def test_the_table_lists_the_steps_and_the_events(tmp_path: Path) -> None:
    code, out, _ = run(write(tmp_path, "s.json", SCENARIO), "--output", "table")
    assert code == 0
    assert out.startswith("phase: Succeeded (stopped: every pod placed)\n")
    assert "podScheduled default/p1 -> " in out


def test_several_configurations_are_compared_where_their_placements_part(tmp_path: Path) -> None:
    path = write(tmp_path, "s.json", SCENARIO)
    most = write(tmp_path, "most.yaml", MOST_ALLOCATED)
    default = write(tmp_path, "default.yaml", DEFAULT)
    code, out, _ = run(path, "--config", default, "--config", most)
    assert code == 0
    comparison = json.loads(out)
    assert [v["name"] for v in comparison["variants"]] == [default, most]
    first = comparison["firstDifference"]
    assert first["step"] == 1
    # LeastAllocated spreads the two pods; MostAllocated packs them on one node.
    spread = {p["nodes"][default] for p in first["pods"]} | {
        p["nodes"][most] for p in first["pods"]
    }
    assert spread == {"a", "b"}
    step1 = next(s for s in comparison["steps"] if s["step"] == 1)
    cpu = {
        name: row["resources"]["cpu"]["spread"]["max"] for name, row in step1["variants"].items()
    }
    assert cpu == {default: 0.25, most: 0.5}


def test_an_invalid_scenario_exits_2_naming_the_field(tmp_path: Path) -> None:
    bad = scenario(
        {
            "id": "x",
            "step": 0,
            "patchOperation": {
                "typeMeta": {"apiVersion": "v1", "kind": "Node"},
                "objectMeta": {"name": "a"},
                "patch": "{}",
                "patchType": "text/plain",
            },
        }
    )
    code, out, err = run(write(tmp_path, "bad.json", bad))
    assert (code, out) == (2, "")
    assert 'spec.operations[0].patchOperation.patchType: Unsupported value: "text/plain"' in err


def test_a_failed_scenario_prints_its_result_and_exits_1(tmp_path: Path) -> None:
    failing = scenario(create("a", 0, node("a")), create("again", 1, node("a")))
    code, out, _ = run(write(tmp_path, "f.json", failing))
    assert code == 1
    assert json.loads(out)["status"]["message"] == 'nodes "a" already exists'


@pytest.mark.parametrize("content", [DEFAULT + "---\n" + DEFAULT, json.dumps(node("x"))])
def test_a_config_file_must_hold_one_configuration_only(tmp_path: Path, content: str) -> None:
    code, _, err = run(
        write(tmp_path, "s.json", SCENARIO), "--config", write(tmp_path, "c.yaml", content)
    )
    assert code == 2
    assert "expected exactly one KubeSchedulerConfiguration and nothing else" in err
