"""Guesses as a service: kept in one transaction with the newest cycle number, refused whole
with the field named, revealed once against the pod's next cycle, counted, and gone with a
reset."""

from __future__ import annotations

from typing import Any

import pytest

from schedviz.cluster import lessons, predictions, services
from schedviz.cluster.models import Cluster, Cycle, Prediction
from schedviz.scheduler.prediction import UNSCHEDULABLE
from worker.runner import run_cluster

pytestmark = pytest.mark.django_db(transaction=True)


@pytest.fixture(autouse=True)
def _quiet(settings: Any) -> None:
    settings.SCHEDVIZ_START_RUNNERS = False
    settings.SCHEDVIZ_RUNNER_IDLE_SECONDS = 0


@pytest.fixture
def cluster() -> Cluster:
    return lessons.lesson_load(slug="resource-fit", paused=True)


def _step(cluster: Cluster) -> None:
    services.cluster_step(cluster=cluster)
    run_cluster(cluster.pk)


def test_a_guess_remembers_the_newest_cycle_and_is_revealed_against_the_pods_next(
    cluster: Cluster,
) -> None:
    guess = predictions.prediction_create(
        cluster=cluster, namespace="default", name="spread-me", node="node-b"
    )
    assert (guess.after_cycle, guess.revealed_cycle, guess.correct) == (0, None, None)
    assert predictions.predictions_reveal(cluster=cluster) == []
    _step(cluster)
    (revealed,) = predictions.predictions_reveal(cluster=cluster)
    assert (revealed.revealed_cycle, revealed.correct) == (1, True)
    # Revealed once: asking again changes nothing.
    assert predictions.predictions_reveal(cluster=cluster) == []
    later = predictions.prediction_create(
        cluster=cluster, namespace="default", name="pack-me", node=UNSCHEDULABLE
    )
    assert later.after_cycle == 1
    _step(cluster)
    predictions.predictions_reveal(cluster=cluster)
    assert predictions.prediction_tally(cluster=cluster) == predictions.Tally(right=1, wrong=1)
    history = predictions.predictions_history(cluster=cluster)
    assert [p.pod_name for p in history] == ["pack-me", "spread-me"]
    shown = predictions.prediction_reveal_get(prediction=history[0])
    assert shown.reveal is not None and shown.reveal.landed == "node-a"


@pytest.mark.parametrize(
    ("namespace", "name", "node", "field"),
    [
        ("default", "nope", "node-a", "pod: "),
        ("other", "spread-me", "node-a", "pod: "),
        ("default", "batch-0", "node-a", "pod: "),
        ("default", "spread-me", "node-z", "node: "),
    ],
)
def test_a_bad_guess_is_refused_whole(
    cluster: Cluster, namespace: str, name: str, node: str, field: str
) -> None:
    with pytest.raises(services.ServiceError) as refused:
        predictions.prediction_create(cluster=cluster, namespace=namespace, name=name, node=node)
    assert [e[: len(field)] for e in refused.value.errors] == [field]
    assert not Prediction.objects.exists()


def test_no_guess_while_running_or_while_a_step_is_pending(cluster: Cluster) -> None:
    services.cluster_step(cluster=cluster)
    with pytest.raises(services.ServiceError, match="cluster: a step is still running"):
        predictions.prediction_create(
            cluster=cluster, namespace="default", name="spread-me", node="node-a"
        )
    services.cluster_set_run_state(cluster=cluster, run_state=Cluster.RunState.RUNNING)
    with pytest.raises(services.ServiceError, match="cluster: pause the scheduler first"):
        predictions.prediction_create(
            cluster=cluster, namespace="default", name="spread-me", node="node-a"
        )
    assert not Prediction.objects.exists()


def test_a_cycle_waiting_at_permit_is_not_revealed_yet(cluster: Cluster) -> None:
    predictions.prediction_create(
        cluster=cluster, namespace="default", name="spread-me", node="node-b"
    )
    services.cycles_create(
        cluster=cluster,
        traces=[
            {
                "cycle": 1,
                "pod": "default/spread-me",
                "profile": "default-scheduler",
                "attempt": 1,
                "time": 0.0,
                "wallTime": 0.0,
                "result": "Waiting",
                "node": "node-b",
                "message": "",
            }
        ],
    )
    assert Cycle.objects.filter(cluster=cluster).exists()
    assert predictions.predictions_reveal(cluster=cluster) == []


def test_a_reset_takes_the_guesses_with_the_cycles(cluster: Cluster) -> None:
    predictions.prediction_create(
        cluster=cluster, namespace="default", name="spread-me", node="node-b"
    )
    services.cluster_reset(cluster=cluster)
    assert not Prediction.objects.filter(cluster=cluster).exists()
