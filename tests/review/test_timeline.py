"""schedviz.review.timeline: every attempt of every pod, from upstream's own lines."""

from __future__ import annotations

from pathlib import Path

from schedviz.review.events import read_events
from schedviz.review.logs import read_logs
from schedviz.review.timeline import build_timeline, counts_of_message

DATA = Path(__file__).parent / "data"


def _timeline(name: str, events: str = ""):  # type: ignore[no-untyped-def]
    reading = read_logs([(name, (DATA / name).read_text())], year=2026)
    scheduler_events = read_events([("e", (DATA / events).read_text())]) if events else []
    return build_timeline(reading.records, scheduler_events)


def test_v10_gives_every_attempt_with_counts_victims_and_scores() -> None:
    timeline = _timeline("scheduler-v10.log")
    summary = [(a.pod, a.number, a.result, a.node, a.feasible) for a in timeline.attempts]
    assert summary == [
        ("prod/urgent-1", 1, "Unschedulable", "", 0),
        ("default/web-1", 1, "Scheduled", "node-a", 2),
        ("default/web-2", 1, "Scheduled", "node-b", 2),
        ("default/fast-1", 1, "Scheduled", "node-a", 1),
        ("default/huge-1", 1, "Unschedulable", "", 0),
        ("prod/urgent-1", 2, "Scheduled", "node-b", 1),
    ]
    urgent = timeline.attempts[0]
    assert (urgent.victims, urgent.nominated_node, urgent.total_nodes) == (
        ["default/batch-1"],
        "node-b",
        3,
    )
    web = timeline.attempts[1]
    assert web.scores["node-a"]["TaintToleration"] == 300
    assert web.totals == {"node-a": 486, "node-b": 474}
    assert web.queue[0]["queue"] == "Active"
    assert timeline.attempts[4].preemption == "none"
    assert timeline.profiles_plugins()[0]["Score"]["Enabled"][0]["Weight"] == 3


def test_v2_gives_the_same_attempts_without_scores() -> None:
    full = _timeline("scheduler-v10.log")
    short = _timeline("scheduler-v2.log")
    assert [(a.pod, a.result, a.node) for a in short.attempts] == [
        (a.pod, a.result, a.node) for a in full.attempts
    ]
    assert all(not a.scores for a in short.attempts)


def test_events_add_the_pods_the_log_never_names_and_victims() -> None:
    timeline = _timeline("scheduler-json.log", "events.yaml")
    huge = [a for a in timeline.attempts if a.pod == "default/huge-1"]
    assert [(a.origin, a.repeated, a.result) for a in huge] == [("events", 4, "Unschedulable")]
    urgent = next(a for a in timeline.attempts if a.pod == "prod/urgent-1")
    assert urgent.victims == ["default/batch-1"]
    assert urgent.event_message == urgent.message


def test_an_outcome_logged_after_the_next_attempt_goes_to_its_own_pod() -> None:
    lines = [
        'I1128 13:00:00.000001 1 s.go:1] "Attempting to schedule pod" pod="a/one"',
        'I1128 13:00:00.000002 1 s.go:1] "Attempting to schedule pod" pod="a/two"',
        'I1128 13:00:00.000003 1 s.go:1] "Successfully bound pod to node" pod="a/one" node="n1"',
        'I1128 13:00:00.000004 1 s.go:1] "Successfully bound pod to node" pod="a/two" node="n2"',
    ]
    reading = read_logs([("a", "\n".join(lines))], year=2026)
    timeline = build_timeline(reading.records)
    assert [(a.pod, a.node) for a in timeline.attempts] == [("a/one", "n1"), ("a/two", "n2")]


def test_counts_of_message_reads_the_node_count() -> None:
    assert counts_of_message("0/5000 nodes are available: 5000 Insufficient cpu.") == 5000
    assert counts_of_message("no nodes available to schedule pods") is None


def test_a_container_runtime_log_from_a_public_issue_reads_as_attempts() -> None:
    # An excerpt a kueue issue pasted (containerd's "<time> stderr F " prefix, v1.31 lines).
    timeline = _timeline("cri-excerpt.log")
    assert [(a.pod, a.number, a.result, a.total_nodes) for a in timeline.attempts] == [
        ("e2e-tas-pytorchjob-qbdbb/ranks-pytorch-worker-0", 1, "Scheduled", None),
        ("e2e-tas-sts-fpmn5/sts-0", 1, "Unschedulable", 9),
        ("e2e-tas-sts-fpmn5/sts-0", 2, "Unschedulable", 9),
    ]


def test_a_leader_change_leaves_the_old_leaders_open_attempt_without_outcome() -> None:
    old = "\n".join(
        [
            'I1128 13:00:00.000000 1 s.go:1] "Starting Kubernetes Scheduler" version="v1.34.1"',
            'I1128 13:00:01.000000 1 s.go:1] "Attempting to schedule pod" pod="a/one"',
        ]
    )
    new = "\n".join(
        [
            'I1128 13:00:05.000000 1 s.go:1] "Starting Kubernetes Scheduler" version="v1.34.1"',
            'I1128 13:00:06.000000 1 s.go:1] "Attempting to schedule pod" pod="a/one"',
            'I1128 13:00:06.100000 1 s.go:1] "Successfully bound pod to node" pod="a/one" node="n"',
        ]
    )
    reading = read_logs([("old.log", old), ("new.log", new)], year=2026)
    timeline = build_timeline(reading.records)
    assert [(a.instance, a.result, a.number) for a in timeline.attempts] == [
        ("old.log pid 1", "Unknown", 1),
        ("new.log pid 1", "Scheduled", 2),
    ]
    assert [s.version for s in timeline.startups] == ["v1.34.1", "v1.34.1"]
