"""The in-memory API and what the scheduler's informers make of it.

The pod informer's field selector (``status.phase!=Succeeded,status.phase!=Failed``, upstream's
scheduler.go ``newPodInformer``): terminal pods are never listed, and a pod that turns terminal
is a delete carrying its last matching state, as the API server's cacher sends it.
"""

from __future__ import annotations

import dataclasses

import pytest

from schedviz.kube.objects import POD_FAILED, POD_RUNNING, POD_SUCCEEDED
from schedviz.scheduler.apis.config.v1 import default_configuration
from schedviz.scheduler.clock import VirtualClock
from schedviz.scheduler.framework.plugins.registry import new_in_tree_registry
from schedviz.scheduler.scheduler import Scheduler
from schedviz.scheduler.store import (
    ADDED,
    DELETED,
    MODIFIED,
    ClusterStore,
    InformerView,
    pod_informer_event,
)
from schedviz.scheduler.testing.wrappers import make_node, make_pod
from schedviz.scheduler.trace import RESULT_SCHEDULED, RESULT_UNSCHEDULABLE

RUNNING = make_pod().name("p").phase(POD_RUNNING).obj()
DONE = dataclasses.replace(RUNNING, phase=POD_SUCCEEDED)
FAILED = dataclasses.replace(RUNNING, phase=POD_FAILED)


@pytest.mark.parametrize(
    ("event", "expected"),
    [
        pytest.param((ADDED, None, RUNNING), (ADDED, None, RUNNING), id="running pod added"),
        pytest.param((ADDED, None, DONE), None, id="terminal pod added: not seen"),
        pytest.param((MODIFIED, RUNNING, RUNNING), (MODIFIED, RUNNING, RUNNING), id="update"),
        pytest.param((MODIFIED, RUNNING, DONE), (DELETED, RUNNING, None), id="turns Succeeded"),
        pytest.param((MODIFIED, RUNNING, FAILED), (DELETED, RUNNING, None), id="turns Failed"),
        pytest.param((MODIFIED, DONE, FAILED), None, id="terminal to terminal: not seen"),
        pytest.param((DELETED, DONE, None), None, id="terminal pod deleted: not seen"),
        pytest.param((DELETED, RUNNING, None), (DELETED, RUNNING, None), id="deleted"),
    ],
)
def test_pod_informer_event_applies_the_terminal_phase_field_selector(
    event: tuple[str, object, object], expected: tuple[str, object, object] | None
) -> None:
    assert pod_informer_event(*event) == expected


def test_informer_view_lists_and_gets_no_terminal_pod() -> None:
    done = dataclasses.replace(DONE, name="done")
    node = make_node().name("n1").obj()
    view = InformerView(ClusterStore([RUNNING, done, node]))
    assert [p.name for p in view.pods()] == ["p"]
    assert [p.name for p in view.list_objects("Pod")] == ["p"]  # type: ignore[attr-defined]
    assert view.get("Pod", done.key) is None
    assert view.get("Pod", RUNNING.key) is RUNNING
    assert view.get("Node", "n1") is node


def _scheduler(store: ClusterStore, clock: VirtualClock) -> Scheduler:
    return Scheduler(default_configuration(), new_in_tree_registry(), store, clock)


def test_terminal_pods_on_a_node_hold_none_of_its_resources() -> None:
    node = make_node().name("n1").capacity({"cpu": "1", "memory": "1Gi", "pods": 10}).obj()
    finished = make_pod().name("job").node("n1").req({"cpu": "1"}).phase(POD_SUCCEEDED).obj()
    failed = make_pod().name("crashed").node("n1").req({"cpu": "1"}).phase(POD_FAILED).obj()
    pending = make_pod().name("web").req({"cpu": "1"}).obj()
    clock = VirtualClock()
    store = ClusterStore([node, finished, failed, pending], now=clock.now)
    scheduler = _scheduler(store, clock)
    assert scheduler.cache.pod_count() == 0
    trace = scheduler.schedule_one()
    assert trace is not None and trace.result == RESULT_SCHEDULED


def test_a_pod_turning_terminal_leaves_the_cache_and_frees_its_node() -> None:
    node = make_node().name("n1").capacity({"cpu": "1", "memory": "1Gi", "pods": 10}).obj()
    job = make_pod().name("job").node("n1").req({"cpu": "1"}).phase(POD_RUNNING).obj()
    pending = make_pod().name("web").req({"cpu": "1"}).obj()
    clock = VirtualClock()
    store = ClusterStore([node, job, pending], now=clock.now)
    scheduler = _scheduler(store, clock)
    first = scheduler.schedule_one()
    assert first is not None and first.result == RESULT_UNSCHEDULABLE
    store.apply(dataclasses.replace(job, phase=POD_SUCCEEDED))
    assert scheduler.cache.pod_count() == 0
    scheduler.run_until_idle(clock.set)
    bound = store.get("Pod", pending.key)
    assert bound.node_name == "n1"


def test_a_watcher_added_first_hears_each_write_before_the_reactions_to_it() -> None:
    store = ClusterStore()
    heard: list[tuple[str, str]] = []

    def react(event_type: str, old: object, new: object) -> None:
        if event_type == ADDED and getattr(new, "name", "") == "a":
            store.apply(make_pod().name("reaction").obj())

    store.watch(react)
    store.watch(lambda t, old, new: heard.append((t, (new or old).name)), first=True)
    store.apply(make_pod().name("a").obj())
    assert heard == [(ADDED, "a"), (ADDED, "reaction")]
