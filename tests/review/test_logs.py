"""schedviz.review.logs: klog text and JSON, prefixes, multi-line values, instances."""

from __future__ import annotations

from pathlib import Path

import pytest

from schedviz.review.logs import LogFormatError, parse_rfc3339, read_logs

DATA = Path(__file__).parent / "data"

BOUND = (
    'I1128 13:11:30.123456    1234 schedule_one.go:314] "Successfully bound pod to node" '
    'pod="default/web-1" node="node-a" evaluatedNodes=3 feasibleNodes=2'
)


@pytest.mark.parametrize(
    ("line", "values"),
    [
        (BOUND, {"pod": "default/web-1", "node": "node-a", "evaluatedNodes": 3}),
        (f"2026-11-28T13:11:30.123456789Z {BOUND}", {"feasibleNodes": 2}),
        (f"2026-11-28T13:11:30.123456789Z stderr F {BOUND}", {"node": "node-a"}),
        (f"Nov 28 13:11:30 cp-1 kube-scheduler[1234]: {BOUND}", {"pod": "default/web-1"}),
        (
            'I1128 13:11:30.1 1 x.go:1] "m" err="a \\"quoted\\" \\u00e9\\ttab" zone=":\\x00:z"',
            {"err": 'a "quoted" \u00e9\ttab', "zone": ":\x00:z"},
        ),
        (
            'I1128 13:11:30.1 1 x.go:1] "m" Plugins={"Score":{"Enabled":[{"Name":"A"}]}} c=[]',
            {"Plugins": {"Score": {"Enabled": [{"Name": "A"}]}}, "c": []},
        ),
    ],
)
def test_it_reads_a_klog_line_with_any_prefix(line: str, values: dict[str, object]) -> None:
    reading = read_logs([("a.log", line)], year=2026)
    assert reading.skipped == 0
    (record,) = reading.records
    assert {key: record.values[key] for key in values} == values
    assert record.time == pytest.approx(parse_rfc3339("2026-11-28T13:11:30Z"), abs=1)


def test_it_reads_a_multi_line_value() -> None:
    text = (
        'I1128 13:11:30.100000       1 configfile.go:94] "Using component config" config=<\n'
        "\tapiVersion: kubescheduler.config.k8s.io/v1\n"
        "\tkind: KubeSchedulerConfiguration\n"
        " >\n"
        f"{BOUND}\n"
    )
    reading = read_logs([("a.log", text)], year=2026)
    assert [r.message for r in reading.records] == [
        "Using component config",
        "Successfully bound pod to node",
    ]
    assert reading.records[0].values["config"] == (
        "apiVersion: kubescheduler.config.k8s.io/v1\nkind: KubeSchedulerConfiguration"
    )


def test_it_skips_and_counts_lines_it_cannot_read() -> None:
    text = "\n".join(
        [
            "I1128 13:11:30.1 1 feature_gate.go:385] feature gates: {map[]}",
            "garbage",
            'I1128 13:11:30.2 1 x.go:1] "unterminated',
            BOUND,
        ]
    )
    reading = read_logs([("a.log", text)], year=2026)
    assert reading.skipped == 3
    assert len(reading.records) == 1
    assert reading.skipped_examples[0].startswith("a.log:1: ")


def test_it_reads_json_lines_with_kobj_values() -> None:
    reading = read_logs([("j.log", (DATA / "scheduler-json.log").read_text())], year=2026)
    assert reading.skipped == 1
    bound = [r for r in reading.records if r.message == "Successfully bound pod to node"]
    assert bound[0].values["pod"] == "default/web-1"
    assert bound[0].verbosity == 2
    assert bound[0].time == pytest.approx(1795872556.318483)


def test_it_tells_scheduler_processes_apart_and_merges_them_by_time() -> None:
    first = BOUND.replace("13:11:30.123456", "13:11:31.000000")
    second = BOUND.replace("    1234 ", "    99 ").replace("web-1", "web-2")
    reading = read_logs([("old.log", first), ("new.log", second)], year=2026)
    assert [r.values["pod"] for r in reading.records] == ["default/web-2", "default/web-1"]
    assert reading.instances == ["old.log pid 1234", "new.log pid 99"]


def test_a_klog_year_moves_on_at_new_year() -> None:
    text = f"{BOUND.replace('I1128', 'I1231')}\n{BOUND.replace('I1128', 'I0101')}"
    reading = read_logs([("a.log", text)], year=2026)
    assert reading.records[1].time - reading.records[0].time == pytest.approx(86400)


def test_it_refuses_a_binary_file() -> None:
    with pytest.raises(LogFormatError, match=r"b\.log"):
        read_logs([("b.log", "\x00\x01")], year=2026)


def test_genuine_upstream_output_reads_without_loss() -> None:
    text = (DATA / "scheduler-v10.log").read_text()
    reading = read_logs([("v10.log", text)], year=2026)
    # The one line skipped is feature_gate.go's printf-style line.
    assert reading.skipped == 1
    assert len(reading.records) == len(text.splitlines()) - 1
