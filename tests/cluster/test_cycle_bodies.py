"""Cycle rows: the scheduler's traces stored compactly against node orders kept once, and every
body, old or new, read back as the documented JSON."""

from __future__ import annotations

import json
import zlib
from typing import Any

import pytest

from schedviz.cluster import services
from schedviz.cluster.metrics import _points
from schedviz.cluster.models import Cluster, Cycle, NodeOrder, _node_order_names
from schedviz.demo import DEMO_CLUSTER
from schedviz.kube.load import load_manifests
from schedviz.scheduler import trace_codec
from schedviz.scheduler.framework.interface import Code, Status
from schedviz.scheduler.trace import RESULT_SCHEDULED, CycleTrace, PointRecord
from schedviz.simulation.simulator import new_simulation

pytestmark = pytest.mark.django_db

THREE = ("n1", "n2", "n3")
FOUR = ("n1", "n2", "n3", "n4")


@pytest.fixture(autouse=True)
def _no_runners(settings: Any) -> None:
    settings.SCHEDVIZ_START_RUNNERS = False


@pytest.fixture
def cluster() -> Cluster:
    return services.cluster_create(name="bodies")


@pytest.fixture(autouse=True)
def _fresh_node_order_cache() -> None:
    _node_order_names.cache_clear()


def _trace(number: int, nodes: tuple[str, ...] = THREE) -> CycleTrace:
    return CycleTrace(
        cycle=number,
        pod=f"default/p{number}",
        profile="default-scheduler",
        attempt=1,
        time=number / 3,
        wall_time=1_764_000_000.0 + number / 7,
        all_nodes=nodes,
        filter_plugins=("NodeResourcesFit",),
        filter_results={
            nodes[0]: (1, None),
            nodes[1]: (0, Status(Code.Unschedulable, ("Insufficient cpu",), "NodeResourcesFit")),
        },
        score_nodes=[nodes[0]],
        score_plugins=[("NodeResourcesFit", 1)],
        raw_scores=[[number]],
        normalized_scores=[[number]],
        totals=[number],
        selected_node=nodes[0],
        tie_set=[nodes[0]],
        feasible_nodes=1,
        evaluated_nodes=2,
        result=RESULT_SCHEDULED,
        message=f"Successfully assigned default/p{number} to {nodes[0]}",
        points=[PointRecord("Filter", "NodeResourcesFit", Code.Unschedulable, (), 0.00025, 2, 1)],
        duration=0.004,
    )


def test_a_stored_trace_reads_back_as_its_json_with_the_summary_columns(cluster: Cluster) -> None:
    trace = _trace(1)
    services.cycles_create(cluster=cluster, traces=[trace])
    row = Cycle.objects.get(cluster=cluster)
    assert trace_codec.is_encoded(bytes(row.body))
    assert row.trace() == trace.to_json()
    summary = (row.pod_name, row.node, row.result, row.scheduler_time, row.wall_time)
    assert summary == ("p1", "n1", RESULT_SCHEDULED, round(1 / 3, 6), round(trace.wall_time, 6))
    assert row.duration_seconds == 0.004


def test_every_cycle_of_the_demo_cluster_reads_back_as_its_json(cluster: Cluster) -> None:
    simulation = new_simulation(load_manifests(DEMO_CLUSTER.read_text()), seed=1)
    simulation.run()
    services.cycles_create(cluster=cluster, traces=simulation.traces)
    rows = Cycle.objects.filter(cluster=cluster).order_by("number")
    assert [row.trace() for row in rows] == [trace.to_json() for trace in simulation.traces]


def test_a_node_order_is_stored_once_and_shared_by_the_cycles_that_walked_it(
    cluster: Cluster,
) -> None:
    services.cycles_create(cluster=cluster, traces=[_trace(1), _trace(2)])
    services.cycles_create(cluster=cluster, traces=[_trace(3), _trace(4, FOUR), _trace(5, FOUR)])
    orders = {
        trace_codec.decode_node_order(bytes(order.names)): order.pk
        for order in NodeOrder.objects.filter(cluster=cluster)
    }
    assert set(orders) == {THREE, FOUR}
    by_number = dict(Cycle.objects.filter(cluster=cluster).values_list("number", "node_order"))
    assert by_number == {1: orders[THREE], 2: orders[THREE], 3: orders[THREE]} | {
        4: orders[FOUR],
        5: orders[FOUR],
    }


def test_each_cluster_keeps_its_own_node_orders(cluster: Cluster) -> None:
    other = services.cluster_create(name="other")
    services.cycles_create(cluster=cluster, traces=[_trace(1)])
    services.cycles_create(cluster=other, traces=[_trace(1)])
    assert NodeOrder.objects.filter(cluster=cluster).count() == 1
    assert NodeOrder.objects.filter(cluster=other).count() == 1
    services.cluster_delete(cluster=other)
    assert Cycle.objects.get(cluster=cluster).trace() == _trace(1).to_json()


def test_a_page_of_cycles_reads_its_node_order_once(
    cluster: Cluster, django_assert_num_queries: Any
) -> None:
    services.cycles_create(cluster=cluster, traces=[_trace(n) for n in range(1, 11)])
    rows = list(Cycle.objects.filter(cluster=cluster))
    with django_assert_num_queries(1):
        traces = [row.trace() for row in rows]
    assert traces == [_trace(n).to_json() for n in range(1, 11)]


def test_rows_stored_as_zlib_json_still_read(cluster: Cluster) -> None:
    document = _trace(1).to_json()
    Cycle.objects.create(
        cluster=cluster,
        number=1,
        pod_namespace="default",
        pod_name="p1",
        profile="default-scheduler",
        attempt=1,
        result=RESULT_SCHEDULED,
        scheduler_time=0.0,
        wall_time=0.0,
        body=zlib.compress(json.dumps(document, separators=(",", ":")).encode(), 6),
    )
    row = Cycle.objects.get(cluster=cluster)
    assert row.trace() == document
    assert _points(bytes(row.body)) == (
        ("Filter", "NodeResourcesFit", "Unschedulable", 0.000125, 2, 1),
    )


def test_imported_traces_are_stored_as_json_without_a_node_order(cluster: Cluster) -> None:
    document = {**_trace(1).to_json(), "imported": "kube-scheduler-simulator"}
    services.cycles_create(cluster=cluster, traces=[document])
    row = Cycle.objects.get(cluster=cluster)
    assert (row.node_order, row.trace()) == (None, document)
    assert not NodeOrder.objects.exists()


def test_metrics_read_the_points_of_an_encoded_body(cluster: Cluster) -> None:
    services.cycles_create(cluster=cluster, traces=[_trace(1)])
    body = bytes(Cycle.objects.get(cluster=cluster).body)
    assert _points(body) == (("Filter", "NodeResourcesFit", "Unschedulable", 0.000125, 2, 1),)


def test_reset_deletes_the_node_orders_with_the_cycles(cluster: Cluster) -> None:
    services.cycles_create(cluster=cluster, traces=[_trace(1), _trace(2, FOUR)])
    services.cluster_reset(cluster=cluster)
    assert not NodeOrder.objects.filter(cluster=cluster).exists()
    services.cycles_create(cluster=cluster, traces=[_trace(1)])
    assert Cycle.objects.get(cluster=cluster).trace() == _trace(1).to_json()


def test_deleting_the_cluster_deletes_its_node_orders(cluster: Cluster) -> None:
    services.cycles_create(cluster=cluster, traces=[_trace(1)])
    services.cluster_delete(cluster=cluster)
    assert not NodeOrder.objects.exists()


def test_pruning_deletes_node_orders_no_kept_cycle_refers_to(
    cluster: Cluster, settings: Any
) -> None:
    settings.SCHEDVIZ_MAX_CYCLES_KEPT = 2
    services.cycles_create(cluster=cluster, traces=[_trace(1), _trace(2)])
    services.cycles_create(cluster=cluster, traces=[_trace(3, FOUR)])
    assert NodeOrder.objects.filter(cluster=cluster).count() == 2
    services.cycles_create(cluster=cluster, traces=[_trace(4, FOUR)])
    (order,) = NodeOrder.objects.filter(cluster=cluster)
    assert trace_codec.decode_node_order(bytes(order.names)) == FOUR
    assert [row.trace() for row in Cycle.objects.filter(cluster=cluster)] == [
        _trace(3, FOUR).to_json(),
        _trace(4, FOUR).to_json(),
    ]


def test_pruning_every_cycle_keeps_the_node_order_the_new_ones_refer_to(
    cluster: Cluster, settings: Any
) -> None:
    settings.SCHEDVIZ_MAX_CYCLES_KEPT = 1
    services.cycles_create(cluster=cluster, traces=[_trace(1)])
    services.cycles_create(cluster=cluster, traces=[_trace(2)])
    assert Cycle.objects.get(cluster=cluster).trace() == _trace(2).to_json()
