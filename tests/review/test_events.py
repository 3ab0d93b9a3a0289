"""schedviz.review.events: both Event APIs, truncation at 1024 bytes."""

from __future__ import annotations

from pathlib import Path

import pytest

from schedviz.review.events import EventsError, is_cut, read_events, same_message

DATA = Path(__file__).parent / "data"


def test_it_reads_core_and_events_k8s_io_events() -> None:
    events = read_events([("e.yaml", (DATA / "events.yaml").read_text())])
    by_reason = {(e.reason, e.pod): e for e in events}
    preempted = by_reason[("Preempted", "default/batch-1")]
    assert (preempted.node, preempted.preemptor, preempted.preemptor_uid) == (
        "node-b",
        "prod/urgent-1",
        "6f1c-urgent",
    )
    assert by_reason[("Scheduled", "default/web-1")].node == "node-a"
    assert by_reason[("FailedScheduling", "default/huge-1")].count == 4


def test_a_cut_message_matches_the_full_one() -> None:
    full = "0/5000 nodes are available: " + ", ".join(f"1 reason {i}" for i in range(200)) + "."
    cut = full.encode()[: 1024 - 4].decode() + " ..."
    assert is_cut(cut)
    assert same_message(full, cut)
    assert not same_message(full.replace("reason 3", "other 3"), cut)


@pytest.mark.parametrize(
    ("text", "field"),
    [
        ("kind: Event\nreason: Scheduled\n", "regarding"),
        ("kind: Event\nreason: Scheduled\ninvolvedObject: {kind: Pod}\n", "involvedObject.name"),
        (
            "kind: Event\nreason: Scheduled\ninvolvedObject: {name: a}\nfirstTimestamp: x\n",
            "firstTimestamp",
        ),
    ],
)
def test_bad_events_are_refused_naming_the_field(text: str, field: str) -> None:
    with pytest.raises(EventsError, match=field):
        read_events([("bad.yaml", text)])
