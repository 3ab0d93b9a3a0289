"""Every lesson walked as a learner walks it: loaded paused, at each step the guess the lesson
holds to be right (the node its claims give, the node preemption nominates, or "nowhere"),
one step, and the guess revealed against the cycle the engine actually ran. A lesson whose
claims disagree with the engine, or a checker that marks the lesson's own answer wrong, fails
here; so does a text that gives a pod another CPU request than its manifest."""

from __future__ import annotations

import re
from typing import Any

import pytest

from schedviz.cluster import lessons, services
from schedviz.cluster.lessons import LessonStep
from schedviz.cluster.models import Cluster, Cycle
from schedviz.cluster.predictions import prediction_create, predictions_reveal
from schedviz.kube.load import load_manifests
from schedviz.kube.objects import RESOURCE_CPU, Pod
from schedviz.kube.resources import pod_requests
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


def _cpu_claims(text: str, pod: str) -> list[int]:
    """Millicores the text says the pod needs, uses, asks for or requests."""
    claims = re.finditer(
        rf"\b{re.escape(pod)}\b[^.;]*?\b(?:needs?|uses|asks? for|requests?)\s+"
        r"(?P<amount>\d+(?:\.\d+)?)(?P<milli>m)? CPUs?\b",
        " ".join(text.split()),
    )
    return [int(m["amount"]) if m["milli"] else round(float(m["amount"]) * 1000) for m in claims]


@pytest.mark.parametrize("slug", SLUGS)
def test_every_cpu_figure_the_text_gives_a_pod_is_its_manifests(slug: str) -> None:
    lesson = lessons.lesson_get(slug)
    info = lesson.info
    texts = [info.explanation, info.learnt, *(step.reveal for step in info.steps)]
    pods = [o for o in load_manifests(lesson.manifests, slug).objects if isinstance(o, Pod)]
    for pod in pods:
        requested = int(pod_requests(pod).get(RESOURCE_CPU, 0) * 1000)
        for text in texts:
            for claimed in _cpu_claims(text, pod.name):
                assert claimed == requested, (slug, pod.name, claimed, requested)


def test_the_cpu_check_catches_the_text_that_gave_polite_1_5_cpus() -> None:
    # The preemption lesson's text before it was fixed; its manifest asks 1 CPU for polite.
    said = """Here node-a has 2 CPUs and low-1 (priority 0) uses 1.5 of them. **polite** (priority
    1000, `preemptionPolicy: Never`) and **web-2** (priority 1000, may preempt) both need 1.5
    CPUs; polite was created first."""
    assert _cpu_claims(said, "polite") == [1500]
    assert _cpu_claims(said, "web-2") == [1500]
    manifests = load_manifests(lessons.lesson_get("priority-and-preemption").manifests, "p")
    (polite,) = [o for o in manifests.objects if isinstance(o, Pod) and o.name == "polite"]
    assert pod_requests(polite)[RESOURCE_CPU] == 1
