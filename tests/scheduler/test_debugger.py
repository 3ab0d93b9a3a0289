"""The step debugger's hook: where a cycle stops, in upstream's order, and what each stop sees."""

from __future__ import annotations

import pytest

from schedviz.kube.load import load_manifests
from schedviz.scheduler.debugger import END, EXPLANATIONS, POINTS, Stop
from schedviz.simulation.simulator import Simulation, new_simulation

NODE = """
apiVersion: v1
kind: Node
metadata: {name: node-%(i)d, labels: {kubernetes.io/hostname: node-%(i)d}}
status: {allocatable: {cpu: "2", memory: 4Gi, pods: "110"}}
"""
POD = """
apiVersion: v1
kind: Pod
metadata: {name: %(name)s, namespace: default}
spec:
  containers: [{name: c, image: busybox, resources: {requests: {cpu: "%(cpu)s", memory: 1Gi}}}]
"""


def cluster(nodes: int, *pods: tuple[str, str]) -> str:
    documents = [NODE % {"i": i} for i in range(nodes)]
    documents += [POD % {"name": name, "cpu": cpu} for name, cpu in pods]
    return "\n---\n".join(documents)


class Recorder:
    def __init__(self) -> None:
        self.stops: list[Stop] = []
        # The state is one object for the whole cycle: what it held at each stop.
        self.keys: list[list[str]] = []

    def stop(self, stop: Stop) -> None:
        self.stops.append(stop)
        self.keys.append(stop.state.keys())

    @property
    def points(self) -> list[str]:
        return [stop.point for stop in self.stops]


def debugged(text: str) -> tuple[Simulation, Recorder]:
    simulation = new_simulation(load_manifests(text), seed=1)
    recorder = Recorder()
    simulation.scheduler.debugger = recorder
    return simulation, recorder


def test_a_scheduled_pod_stops_before_each_point_in_upstreams_order_then_at_the_end() -> None:
    simulation, recorder = debugged(cluster(2, ("web", "500m")))
    trace = simulation.scheduler.schedule_one()
    assert trace is not None and trace.result == "Scheduled"
    assert recorder.points == [
        "PreFilter",
        "Filter",
        "PreScore",
        "Score",
        "Reserve",
        "Permit",
        "PreBind",
        "Bind",
        "PostBind",
        END,
    ]
    assert {stop.cycle for stop in recorder.stops} == {trace.cycle}


def test_a_pod_rejected_at_filter_goes_to_postfilter_and_ends_there() -> None:
    simulation, recorder = debugged(cluster(2, ("huge", "3")))
    trace = simulation.scheduler.schedule_one()
    assert trace is not None and trace.result == "Unschedulable"
    assert recorder.points == ["PreFilter", "Filter", "PostFilter", END]
    post_filter = recorder.stops[2]
    assert post_filter.plugins == ("DynamicResources", "DefaultPreemption")
    (filter_outcome,) = post_filter.previous
    fit = next(p for p in filter_outcome.plugins if p.plugin == "NodeResourcesFit")
    assert filter_outcome.point == "Filter"
    assert (fit.code, fit.rejected, fit.calls) == ("Unschedulable", 2, 2)
    # The nodes rejected are named, with the reasons they were rejected for.
    assert sorted(fit.rejected_nodes) == ["node-0", "node-1"]
    assert fit.reasons == ("Insufficient cpu",)
    assert fit.to_json()["rejectedNodes"] == list(fit.rejected_nodes)
    others = [p for p in filter_outcome.plugins if p.plugin != "NodeResourcesFit"]
    assert others and all(p.rejected_nodes == () and p.reasons == () for p in others)


def test_one_feasible_node_is_not_scored_so_there_is_no_score_stop() -> None:
    simulation, recorder = debugged(cluster(1, ("web", "500m")))
    simulation.scheduler.schedule_one()
    assert "PreScore" not in recorder.points and "Score" not in recorder.points
    assert recorder.points[-1] == END


def test_each_stop_names_the_plugins_about_to_run_and_what_the_previous_point_did() -> None:
    simulation, recorder = debugged(cluster(2, ("web", "500m")))
    simulation.scheduler.schedule_one()
    by_point = {stop.point: stop for stop in recorder.stops}
    assert "NodeResourcesFit" in by_point["PreFilter"].plugins
    assert by_point["PreFilter"].previous == ()
    assert [o.point for o in by_point["Filter"].previous] == ["PreFilter"]
    assert by_point["Bind"].plugins == ("DefaultBinder",)
    assert by_point["Bind"].pod.node_name  # the assumed pod, on its node
    ended = by_point[END]
    assert ended.plugins == ()
    assert [o.point for o in ended.previous] == ["PostBind"] or ended.previous == ()


def test_the_state_grows_as_the_cycle_goes_on() -> None:
    simulation, recorder = debugged(cluster(2, ("web", "500m")))
    simulation.scheduler.schedule_one()
    sizes = {
        stop.point: len(keys) for stop, keys in zip(recorder.stops, recorder.keys, strict=True)
    }
    # Before PreFilter only the scheduler's reserved PodsToActivate entry is there.
    assert sizes["PreFilter"] == 1
    assert sizes["Filter"] > 1
    assert sizes["Score"] > sizes["Filter"]


def test_stepping_through_changes_no_decision() -> None:
    text = cluster(3, *((f"pod-{i}", "700m") for i in range(8)))
    plain = new_simulation(load_manifests(text), seed=3)
    plain.run()
    watched = new_simulation(load_manifests(text), seed=3)
    recorder = Recorder()
    watched.scheduler.debugger = recorder
    watched.run()
    assert watched.placements() == plain.placements()
    assert [t.message for t in watched.traces] == [t.message for t in plain.traces]
    assert recorder.points.count(END) == len(plain.traces)


@pytest.mark.parametrize("point", [*POINTS, END])
def test_every_point_has_a_one_line_explanation(point: str) -> None:
    assert EXPLANATIONS[point] and "\n" not in EXPLANATIONS[point]
