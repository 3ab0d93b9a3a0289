"""The snapshot's node columns follow the cache: rows rewritten for refreshed node infos only,
rebuilt when nodes come or go, taint lists grouped, huge amounts left to the per-node code."""

from __future__ import annotations

import numpy as np
import pytest

from schedviz.kube.objects import Taint
from schedviz.scheduler.backend.cache.cache import Cache
from schedviz.scheduler.backend.cache.columns import distinct
from schedviz.scheduler.backend.cache.snapshot import Snapshot, new_snapshot
from schedviz.scheduler.framework.types import NodeInfo
from schedviz.scheduler.testing.wrappers import make_node, make_pod


def _cache_with(*nodes: str) -> tuple[Cache, Snapshot]:
    cache = Cache()
    for name in nodes:
        cache.add_node(make_node().name(name).capacity({"cpu": "4", "memory": "8Gi"}).obj())
    snapshot = Snapshot()
    cache.update_snapshot(snapshot)
    return cache, snapshot


def test_columns_hold_each_nodes_allocatable_and_requests_in_walking_order() -> None:
    cache, snapshot = _cache_with("a", "b")
    cache.add_pod(make_pod().name("p").node("b").req({"cpu": "1500m", "memory": "1Gi"}).obj())
    cache.update_snapshot(snapshot)

    columns = snapshot.node_columns()

    rows = [columns.index[info.name] for info in snapshot.list()]
    assert rows == [0, 1]
    b = columns.index["b"]
    assert columns.alloc_cpu.tolist() == [4000, 4000]
    assert columns.requested_cpu[b] == 1500
    assert columns.requested_memory[b] == 1024**3
    assert columns.pod_count.tolist()[b] == 1
    assert columns.exact


def test_a_refreshed_node_info_rewrites_its_row_and_keeps_the_columns_object() -> None:
    cache, snapshot = _cache_with("a", "b")
    columns = snapshot.node_columns()

    cache.assume_pod(make_pod().name("p").node("a").req({"cpu": "1"}).obj())
    cache.update_snapshot(snapshot)

    assert snapshot.node_columns() is columns
    assert columns.requested_cpu[columns.index["a"]] == 1000
    assert columns.non_zero_memory[columns.index["a"]] == 200 * 1024 * 1024  # the default


def test_a_node_added_or_removed_rebuilds_the_columns() -> None:
    cache, snapshot = _cache_with("a", "b")
    before = snapshot.node_columns()

    cache.add_node(make_node().name("c").capacity({"cpu": "2"}).obj())
    cache.update_snapshot(snapshot)
    after = snapshot.node_columns()

    assert after is not before
    assert sorted(after.index) == ["a", "b", "c"]
    assert after.alloc_cpu[after.index["c"]] == 2000


def test_nodes_with_equal_taint_lists_share_a_group() -> None:
    taint = Taint(key="dedicated", effect="NoSchedule", value="gpu")
    nodes = [
        make_node().name("a").taints([taint]).obj(),
        make_node().name("b").obj(),
        make_node().name("c").taints([Taint(key="dedicated", effect="NoSchedule", value="gpu")]),
    ]
    snapshot = new_snapshot([], [nodes[0], nodes[1], nodes[2].obj()])

    columns = snapshot.node_columns()

    groups = columns.taint_group.tolist()
    assert groups[1] == 0  # no taints
    assert groups[0] == groups[2] != 0
    assert list(columns.taints_of_group()[groups[0]]) == [taint]


def test_amounts_beyond_exact_integer_arithmetic_turn_the_columns_off() -> None:
    snapshot = new_snapshot([], [make_node().name("a").capacity({"memory": "100Ei"}).obj()])

    assert not snapshot.node_columns().exact


def test_derived_figures_are_worked_out_again_only_for_changed_rows() -> None:
    cache, snapshot = _cache_with("a", "b", "c")
    asked: list[str] = []

    def pods_on(node_info: NodeInfo) -> int:
        asked.append(node_info.name)
        return len(node_info.pods)

    first = snapshot.node_columns().derived("pods", pods_on).tolist()
    cache.add_pod(make_pod().name("p").node("b").obj())
    cache.update_snapshot(snapshot)
    columns = snapshot.node_columns()
    second = columns.derived("pods", pods_on).tolist()

    assert first == [0, 0, 0]
    assert second[columns.index["b"]] == 1
    assert sorted(asked) == ["a", "b", "b", "c"]


@pytest.mark.parametrize(
    "values", [[], [3], [2, 2, 2], [5, 1, 5, 0, 1], [-1, 7, -1], list(range(9, -1, -1))]
)
def test_distinct_gives_the_values_np_unique_gives(values: list[int]) -> None:
    column = np.array(values, dtype=np.int64)
    assert distinct(column) == np.unique(column).tolist()
    assert all(type(value) is int for value in distinct(column))
