"""Upstream-derived fidelity cases, judged the way the independent fidelity suite judges them.

Each case is one multi-document YAML file: a FidelityCase header (not a Kubernetes object), then
the manifests. The header is stripped, the rest goes to ``manage.py simulate --output json
--seed 1``, and the first cycle of the pod under test is compared with the expectation.

Beyond ../shared/fidelity's format, a placement case may also expect ``eventMessage`` (the
cycle's FailedScheduling event text, exactly) and ``preFilterNodes`` (the cycle's
``preFilter.nodes``, as a set), for what the oracle reports beside the decision.

One point goes beyond ../shared/fidelity's format: ``queue`` compares every attempt of the run,
in order, with the attempts of upstream's own queue (the qoracle's answer): ``expect.attempts``
lists them, each with ``pod``, ``attempt``, ``result`` and, where given, ``node``,
``nominatedNode`` and ``time``; ``Waiting`` cycles (held at Permit) are not attempts. The pod
under test is the one the case is about; the whole sequence is judged.
"""

from __future__ import annotations

import io
import json
from pathlib import Path
from typing import Any

import pytest
import yaml
from django.core.management import call_command

CASES_DIR = Path(__file__).resolve().parent / "cases"
CASES = sorted(CASES_DIR.glob("*/*.yaml"))
UNDER_TEST = "fidelity.schedviz/under-test"


def _strip_header(text: str) -> str:
    """The case's text from its second document on, byte for byte: document 0 stripped, the
    manifests handed over exactly as written (not re-serialised, which would reorder keys and
    re-quote scalars)."""
    starts = [
        event.start_mark.index
        for event in yaml.parse(text)
        if isinstance(event, yaml.DocumentStartEvent) and event.start_mark is not None
    ]
    assert len(starts) >= 2, "a case needs a header and at least one manifest"
    return text[starts[1] :]


def _split_case(path: Path) -> tuple[dict[str, Any], str, str]:
    text = path.read_text()
    header = next(yaml.safe_load_all(text))
    assert header["kind"] == "FidelityCase"
    manifests = _strip_header(text)
    under_test = next(
        f"{d['metadata'].get('namespace', 'default')}/{d['metadata']['name']}"
        for d in yaml.safe_load_all(manifests)
        if d
        and d.get("kind") == "Pod"
        and (d["metadata"].get("annotations") or {}).get(UNDER_TEST) == "true"
    )
    return header, manifests, under_test


def _simulate(tmp_path: Path, manifests: str) -> dict[str, Any]:
    path = tmp_path / "case.yaml"
    path.write_text(manifests)
    out = io.StringIO()
    call_command("simulate", str(path), "--output", "json", "--seed", "1", stdout=out)
    document: dict[str, Any] = json.loads(out.getvalue())
    return document


def _verdict(entries: list[dict[str, Any]]) -> dict[str, Any]:
    for entry in entries:
        if entry["code"] != "Success":
            return {"code": entry["code"], "reasons": entry.get("reasons", [])}
    return {"code": "Success"}


@pytest.mark.parametrize("path", CASES, ids=[f"{p.parent.name}/{p.stem}" for p in CASES])
def test_simulate_matches_upstream(path: Path, tmp_path: Path) -> None:
    header, manifests, pod = _split_case(path)
    document = _simulate(tmp_path, manifests)
    cycles = [c for c in document["cycles"] if c["pod"] == pod]
    assert cycles, f"no cycle for {pod}"
    cycle = cycles[0]
    expect = header["expect"]
    point = header["point"]
    if point == "score":
        key = "raw" if "rawScores" in expect else "normalized"
        wanted = expect.get("rawScores", expect.get("scores"))
        plugin = header["plugin"]
        got = {node: cycle["scores"][node][plugin][key] for node in wanted}
        assert got == wanted
    elif point == "filter":
        got = {node: _verdict(cycle["filter"][node]) for node in expect["filter"]}
        wanted = {
            node: {
                "code": v["code"],
                **({"reasons": v["reasons"]} if v["code"] != "Success" else {}),
            }
            for node, v in expect["filter"].items()
        }
        assert got == wanted
    elif point == "placement":
        if expect.get("unschedulable"):
            assert cycle["result"] != "Scheduled"
            if "message" in expect:
                assert expect["message"] in cycle["message"]
            if "eventMessage" in expect:
                failed = [e for e in cycle["events"] if e["reason"] == "FailedScheduling"]
                assert failed[-1]["message"] == expect["eventMessage"]
        else:
            assert cycle["node"] == expect["node"]
        if "preFilterNodes" in expect:
            assert sorted(cycle["preFilter"]["nodes"] or []) == sorted(expect["preFilterNodes"])
    elif point == "preemption":
        with_preemption = [c for c in cycles if c["preemption"] is not None]
        assert with_preemption, "no cycle ran preemption"
        preemption = with_preemption[0]["preemption"]
        assert (preemption["nominatedNode"] or "") == (expect.get("nominatedNode") or "")
        assert sorted(preemption["victims"]) == sorted(expect.get("victims") or [])
    elif point == "queue":
        assert _attempts(document, expect["attempts"]) == expect["attempts"]
    else:
        pytest.fail(f"unknown point {point}")


# An attempt's fields as a queue case names them, and where a cycle holds each.
_ATTEMPT_FIELDS = {
    "pod": lambda c: c["pod"],
    "attempt": lambda c: c["attempt"],
    "result": lambda c: c["result"],
    "node": lambda c: c["node"],
    "nominatedNode": lambda c: c["nominatedNode"],
    "time": lambda c: round(c["time"], 3),
}


def _attempts(document: dict[str, Any], wanted: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The run's attempts in order, each with the fields its expected counterpart names (all
    of them past the expected ones, so that an extra attempt shows)."""
    cycles = [c for c in document["cycles"] if c["result"] != "Waiting"]
    got = []
    for i, cycle in enumerate(cycles):
        fields = wanted[i].keys() if i < len(wanted) else _ATTEMPT_FIELDS.keys()
        got.append({f: _ATTEMPT_FIELDS[f](cycle) for f in fields})
    return got
