"""``manage.py review``: the JSON contract of docs/review.md, the table, and bad input."""

from __future__ import annotations

import io
import json
from pathlib import Path

import pytest
from django.core.management import call_command

DATA = Path(__file__).resolve().parents[1] / "review" / "data"


def _run(*args: str) -> str:
    out = io.StringIO()
    call_command("review", *args, stdout=out)
    return out.getvalue()


def test_it_prints_every_attempt_as_json_in_log_order() -> None:
    document = json.loads(
        _run(
            "--log",
            str(DATA / "scheduler-v2.log"),
            "--cluster",
            str(DATA / "cluster-after.yaml"),
            "--output",
            "json",
        )
    )
    pods = [attempt["pod"] for attempt in document["attempts"]]
    assert pods == [
        "prod/urgent-1",
        "default/web-1",
        "default/web-2",
        "default/fast-1",
        "default/huge-1",
        "prod/urgent-1",
    ]
    first = document["attempts"][0]
    assert first["log"]["result"] == "Unschedulable"
    assert first["log"]["victims"] == ["default/batch-1"]
    assert first["agree"] is False
    assert "default/batch-1" in first["why"]
    assert document["summary"]["podsWithDisagreements"] == ["prod/urgent-1"]


def test_it_prints_a_table_with_the_reasons() -> None:
    table = _run(
        "--log",
        str(DATA / "scheduler-v10.log"),
        "--cluster",
        str(DATA / "cluster-drifted.yaml"),
        "--output",
        "table",
    )
    assert "default/fast-1 #1: node-a fails NodeAffinity in the replay" in table
    assert "6 attempts: 4 agree (1 ties), 2 disagree" in table


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--log", "missing.log", "--cluster", str(DATA / "cluster.yaml")], "missing.log"),
        (
            ["--log", str(DATA / "cluster.yaml"), "--cluster", str(DATA / "cluster.yaml")],
            "no scheduling attempt found",
        ),
        (
            [
                "--log",
                str(DATA / "scheduler-v2.log"),
                "--cluster",
                str(DATA / "cluster.yaml"),
                "--events",
                str(DATA / "scheduler-v2.log"),
            ],
            "not YAML",
        ),
    ],
)
def test_bad_input_exits_2_with_the_reason(
    args: list[str], message: str, capsys: pytest.CaptureFixture[str]
) -> None:
    with pytest.raises(SystemExit) as exit_info:
        _run(*args)
    assert exit_info.value.code == 2
    assert message in capsys.readouterr().err
