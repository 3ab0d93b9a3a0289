"""Every lesson walked as a learner walks it: loaded paused, at each step the guess the lesson
holds to be right (the node its claims give, the node preemption nominates, or "nowhere"),
one step, and the guess revealed against the cycle the engine actually ran. A lesson whose
text, manifests and claims disagree with the engine, or a checker that marks the lesson's own
answer wrong, fails here."""

from __future__ import annotations

from typing import Any

import pytest

from schedviz.cluster import lessons, services
from schedviz.cluster.lessons import LessonStep
from schedviz.cluster.models import Cluster, Cycle
from schedviz.cluster.predictions import prediction_create, predictions_reveal
from schedviz.scheduler.prediction import UNSCHEDULABLE, Verdict, reveal
from worker.runner import run_cluster

SLUGS = [info.slug for info in lessons.lesson_list()]


def right_guess(step: LessonStep) -> str:
    """The answer the lesson's step gives: where the pod lands or is nominated, else nowhere."""
    expect = step.expect
    return str(expect.get("nominated") or expect.get("node") or UNSCHEDULABLE)


@pytest.mark.django_db(transaction=True)
@pytest.mark.parametrize("slug", SLUGS)
def test_the_lessons_answer_at_every_step_is_revealed_right(slug: str, settings: Any) -> None:
    settings.SCHEDVIZ_START_RUNNERS = False
    settings.SCHEDVIZ_RUNNER_IDLE_SECONDS = 0
    info = lessons.lesson_get(slug).info
    cluster = lessons.lesson_load(slug=slug, paused=True)
    run_cluster(cluster.pk)
    assert not Cycle.objects.filter(cluster=cluster).exists(), "a paused lesson ran a cycle"
    for index, step in enumerate(info.steps, start=1):
        namespace, _, name = step.pod.partition("/")
        guess = right_guess(step)
        prediction_create(cluster=cluster, namespace=namespace, name=name, node=guess)
        services.cluster_step(cluster=Cluster.objects.get(pk=cluster.pk))
        run_cluster(cluster.pk)
        (revealed,) = predictions_reveal(cluster=cluster)
        cycle = Cycle.objects.get(cluster=cluster, number=revealed.revealed_cycle)
        verdict = reveal(cycle.trace(), guess).verdict
        tied = len(step.expect.get("tie") or ()) > 1
        where = f"{slug} step {index} ({step.pod}, guessed {guess or 'nowhere'!r})"
        if tied:
            # Decided at random among the tied nodes: the lesson's node may lose the coin.
            assert verdict in (Verdict.RIGHT, Verdict.LOST_TIE), (where, verdict)
        else:
            assert revealed.correct, (where, verdict, cycle.trace().get("message"))
    assert lessons.lesson_progress(cluster=cluster, info=info).next is None
