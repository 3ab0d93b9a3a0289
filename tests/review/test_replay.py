"""schedviz.review.replay: the state before each attempt is the dump carried forward by the
log's decisions, never the replay's."""

from __future__ import annotations

from pathlib import Path

from schedviz.kube.load import load_files
from schedviz.kube.objects import Pod
from schedviz.outoftree.registry import new_registry
from schedviz.review.logs import read_logs
from schedviz.review.replay import Replay
from schedviz.review.timeline import build_timeline
from schedviz.scheduler.apis.config.v1 import default_configuration

DATA = Path(__file__).parent / "data"


def _replay(cluster: str) -> tuple[Replay, list]:  # type: ignore[type-arg]
    reading = read_logs([("v2", (DATA / "scheduler-v2.log").read_text())], year=2026)
    attempts = build_timeline(reading.records).attempts
    objects = load_files([str(DATA / cluster)], lenient_names=True).objects
    return Replay(objects, attempts, default_configuration(), new_registry()), attempts


def _pod(replay: Replay, key: str) -> Pod | None:
    pod = replay.store.get("Pod", key)
    return pod if isinstance(pod, Pod) else None


def test_pods_a_later_dump_has_bound_start_unbound() -> None:
    replay, _ = _replay("cluster-after.yaml")
    assert replay.unbound == {
        "default/web-1": "node-a",
        "default/web-2": "node-b",
        "default/fast-1": "node-a",
        "prod/urgent-1": "node-b",
    }
    assert all(not _pod(replay, key).node_name for key in replay.unbound)  # type: ignore[union-attr]


def test_the_log_not_the_replay_decides_where_a_pod_goes() -> None:
    replay, attempts = _replay("cluster.yaml")
    steps = {(s.attempt.pod, s.attempt.number): s for s in replay.run(attempts)}
    web2 = steps[("default/web-2", 1)]
    assert web2.cycle is not None and web2.cycle.node == "node-a"  # the replay's pick of the tie
    assert _pod(replay, "default/web-2").node_name == "node-b"  # type: ignore[union-attr]


def test_the_logged_victims_go_and_the_preemptor_keeps_its_logged_nomination() -> None:
    replay, attempts = _replay("cluster.yaml")
    first = replay.step(attempts[0])
    assert first.cycle is not None
    assert first.cycle.victims == ["default/batch-1"]  # decided by the replay, deleted by the log
    assert _pod(replay, "default/batch-1") is None
    urgent = _pod(replay, "prod/urgent-1")
    assert urgent is not None and urgent.nominated_node_name == "node-b"
    assert not replay.scheduler.queue.has("prod/urgent-1")
    assert replay.scheduler.queue.nominator.nominated_pod_to_node == {"prod/urgent-1": "node-b"}


def test_an_attempt_of_a_pod_the_dump_lacks_is_not_replayed() -> None:
    replay, attempts = _replay("cluster.yaml")
    replay.store.delete("Pod", "default/huge-1")
    steps = [s for s in replay.run(attempts) if s.attempt.pod == "default/huge-1"]
    assert steps[0].cycle is None
    assert steps[0].skipped == "the dump lacks pod default/huge-1: the replay cannot run its cycle"
