"""The step debugger's services: who may step into a cycle, and commands answering one stop."""

from __future__ import annotations

from typing import Any

import pytest

from schedviz.cluster import services
from schedviz.cluster.models import Cluster, DebugSession

pytestmark = pytest.mark.django_db


@pytest.fixture(autouse=True)
def _no_runners(settings: Any) -> None:
    settings.SCHEDVIZ_START_RUNNERS = False


def paused() -> Cluster:
    return services.cluster_create(name="c", run_state=Cluster.RunState.PAUSED)


def test_stepping_into_a_running_cluster_is_refused() -> None:
    cluster = services.cluster_create(name="c")
    with pytest.raises(services.Conflict, match="must be paused"):
        services.debug_step_into(cluster=cluster)


def test_a_second_step_into_while_one_is_active_is_refused() -> None:
    cluster = paused()
    services.debug_step_into(cluster=cluster)
    with pytest.raises(services.Conflict, match="already being stepped through"):
        services.debug_step_into(cluster=cluster)


def test_a_command_needs_a_stopped_cycle() -> None:
    cluster = paused()
    services.debug_step_into(cluster=cluster)
    with pytest.raises(services.Conflict, match="no cycle is stopped"):
        services.debug_command(cluster=cluster, command="continue")


def test_a_command_answers_the_current_stop_once() -> None:
    cluster = paused()
    services.debug_step_into(cluster=cluster)
    assert services.debug_session_claim(cluster_id=cluster.pk)
    sequence = services.debug_session_stop(cluster_id=cluster.pk, stop={"point": "PreFilter"})
    with pytest.raises(services.Conflict, match="stop 7 is over"):
        services.debug_command(cluster=cluster, command="continue", sequence=7)
    services.debug_command(cluster=cluster, command="continue", sequence=sequence)
    with pytest.raises(services.Conflict, match="has its command already"):
        services.debug_command(cluster=cluster, command="finish", sequence=sequence)
    assert services.debug_session_take_command(cluster_id=cluster.pk, sequence=sequence) == (
        "continue"
    )
    assert services.debug_session_take_command(cluster_id=cluster.pk, sequence=sequence) == ""


def test_an_unknown_command_is_refused_with_the_supported_values() -> None:
    with pytest.raises(services.ServiceError, match='supported values: "continue", "finish"'):
        services.debug_command(cluster=paused(), command="jump")


def test_resuming_drops_a_request_no_runner_took_and_reset_forgets_the_session() -> None:
    cluster = paused()
    services.debug_step_into(cluster=cluster)
    services.cluster_set_run_state(cluster=cluster, run_state=Cluster.RunState.RUNNING)
    assert not DebugSession.objects.filter(cluster=cluster).exists()
    services.cluster_set_run_state(cluster=cluster, run_state=Cluster.RunState.PAUSED)
    services.debug_step_into(cluster=cluster)
    services.cluster_reset(cluster=cluster)
    assert not DebugSession.objects.filter(cluster=cluster).exists()
