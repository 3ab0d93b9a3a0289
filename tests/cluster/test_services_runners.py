"""The services start runners after commit, and only then; concurrent binds bind once."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any
from unittest import mock

import pytest
from django.db import transaction
from services_helpers import a_trace, docs, node, pod

from schedviz.cluster import ports, services
from schedviz.cluster.models import (
    Change,
    Cluster,
    Node,
    Pod,
)
from schedviz.cluster.services import (
    BindConflict,
)

pytestmark = pytest.mark.django_db


@pytest.fixture(autouse=True)
def _no_runners(settings: Any) -> None:
    settings.SCHEDVIZ_START_RUNNERS = False


@pytest.fixture
def cluster() -> Cluster:
    return services.cluster_create(name="test")


# --------------------------------------------------------------------------------- runners


@pytest.fixture
def runner_starter() -> Iterator[mock.Mock]:
    """A runner starter registered in the port in place of the worker's."""
    starter = mock.Mock()
    previous = ports.register_runner_starter(starter)
    yield starter
    ports.register_runner_starter(previous)


def test_runner_is_started_after_commit_only(
    cluster: Cluster,
    settings: Any,
    django_capture_on_commit_callbacks: Any,
    runner_starter: mock.Mock,
) -> None:
    settings.SCHEDVIZ_START_RUNNERS = True
    with django_capture_on_commit_callbacks(execute=True) as callbacks:
        services.manifests_apply(cluster=cluster, text=node("n1"))
        services.cluster_step(cluster=cluster)
        runner_starter.assert_not_called()
    assert len(callbacks) == 2
    assert runner_starter.call_args_list == [mock.call(cluster.id)] * 2


def test_without_a_registered_runner_starter_a_write_still_commits(
    cluster: Cluster, settings: Any, django_capture_on_commit_callbacks: Any
) -> None:
    settings.SCHEDVIZ_START_RUNNERS = True
    previous = ports.register_runner_starter(None)
    try:
        with django_capture_on_commit_callbacks(execute=True) as callbacks:
            services.manifests_apply(cluster=cluster, text=node("n1"))
    finally:
        ports.register_runner_starter(previous)
    assert len(callbacks) == 1
    assert Node.objects.filter(cluster=cluster, name="n1").exists()


def test_the_worker_app_registers_its_runner_starter() -> None:
    from worker import dispatch

    previous = ports.register_runner_starter(None)
    ports.register_runner_starter(previous)
    assert previous is dispatch.ensure_runner


def test_scheduler_writes_do_not_start_runners(cluster: Cluster, settings: Any) -> None:
    services.manifests_apply(cluster=cluster, text=docs(node("n1"), pod("p1")))
    settings.SCHEDVIZ_START_RUNNERS = True
    with mock.patch.object(transaction, "on_commit") as on_commit:
        services.pod_bind(cluster=cluster, namespace="default", name="p1", node_name="n1")
        services.cycles_create(cluster=cluster, traces=[a_trace(1, "default/p1", "n1")])
    on_commit.assert_not_called()


@pytest.mark.django_db(transaction=True)
def test_concurrent_binds_of_one_pod_bind_it_once(settings: Any) -> None:
    """Two binds that both read the pod unbound: the compare-and-set lets one through."""
    from django.db import connection

    if connection.vendor != "postgresql":
        pytest.skip("needs a database with concurrent writers")
    import threading

    settings.SCHEDVIZ_START_RUNNERS = False
    cluster = services.cluster_create(name="race")
    services.manifests_apply(cluster=cluster, text=docs(node("n1"), node("n2"), pod("p1")))
    both_read = threading.Barrier(2, timeout=10)
    read = services.updates._pod_for_update

    def read_then_wait(*args: Any) -> Pod:
        row = read(*args)
        both_read.wait()
        return row

    outcomes: dict[str, str] = {}

    def bind(node_name: str) -> None:
        from django.db import connections

        try:
            services.pod_bind(cluster=cluster, namespace="default", name="p1", node_name=node_name)
            outcomes[node_name] = "bound"
        except BindConflict as error:
            outcomes[node_name] = str(error)
        finally:
            connections.close_all()

    with mock.patch.object(services.updates, "_pod_for_update", read_then_wait):
        threads = [threading.Thread(target=bind, args=(n,)) for n in ("n1", "n2")]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join(20)
    winner = Pod.objects.get(cluster=cluster, name="p1").node_name
    loser = "n2" if winner == "n1" else "n1"
    assert outcomes == {
        winner: "bound",
        loser: 'Operation cannot be fulfilled on pods/binding "p1": '
        f'pod p1 is already assigned to node "{winner}"',
    }
    binds = Change.objects.filter(cluster=cluster, type="MODIFIED", name="p1")
    assert binds.count() == 1
