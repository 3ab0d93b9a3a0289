"""The live stream's contract (schedviz/cluster/live.py): the group and the message shapes the
runner sends and the consumer reads."""

from __future__ import annotations

from schedviz.cluster import live
from schedviz.scheduler.trace import CycleTrace


def test_each_cluster_has_its_own_group() -> None:
    assert live.group_name(7) == "cluster-7"
    assert live.group_name(7) != live.group_name(8)


def _trace(*, selected_node: str, result: str) -> CycleTrace:
    return CycleTrace(
        cycle=3,
        pod="default/p3",
        profile="default-scheduler",
        attempt=1,
        time=0.5000004,
        wall_time=0.0,
        selected_node=selected_node,
        result=result,
        message="ok",
    )


def test_a_summary_has_the_fields_a_live_list_shows() -> None:
    assert live.cycle_summary(_trace(selected_node="n1", result="Scheduled")) == {
        "cycle": 3,
        "pod": "default/p3",
        "result": "Scheduled",
        "node": "n1",
        "message": "ok",
        "attempt": 1,
        "time": 0.5,
    }


def test_a_cycle_without_a_node_has_none_for_node() -> None:
    summary = live.cycle_summary(_trace(selected_node="", result="Unschedulable"))
    assert summary["node"] is None


def test_messages_are_typed_for_the_consumers_handlers() -> None:
    assert live.cycles_message([{"cycle": 1}]) == {
        "type": "cluster.cycles",
        "cycles": [{"cycle": 1}],
    }
    assert live.cycles_message([], dropped=2) == {
        "type": "cluster.cycles",
        "cycles": [],
        "dropped": 2,
    }
    assert live.queue_message({"activeQ": []}, 3) == {
        "type": "cluster.queue",
        "queue": {"activeQ": []},
        "pending": 3,
    }
    assert live.status_message("idle", stopped="idle") == {
        "type": "cluster.status",
        "runner": "idle",
        "stopped": "idle",
    }
    assert live.debug_message(state="stopped") == {"type": "cluster.debug", "state": "stopped"}
