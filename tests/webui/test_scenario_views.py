"""The scenario pages: the form (written, uploaded, the example), refusals with nothing
started, the run page polling, then charts as inline SVG, the step slider's fragment with the
node cards and events, bindings linked to their cycles, user data escaped; and the lesson run
as a scenario."""

from __future__ import annotations

import json

import pytest
from django.contrib.auth.models import User
from django.core.files.uploadedfile import SimpleUploadedFile
from django.test import Client

from schedviz.cluster import lessons
from schedviz.cluster.models import Cluster
from schedviz.compare.models import CompareRun
from worker import compare

pytestmark = pytest.mark.django_db

LESSON = "priority-and-preemption"


@pytest.fixture
def signed_in(client: Client, alice: User) -> Client:
    client.force_login(alice)
    return client


@pytest.fixture
def cluster(alice: User) -> Cluster:
    from schedviz.cluster import services

    return services.cluster_create(name="scenarios", owner=alice)


def _run_all(run: CompareRun) -> None:
    for variant in run.variants.all():
        compare.execute_variant(variant.id)


def test_the_form_is_linked_from_the_dashboard_and_offers_the_lessons_example(
    signed_in: Client, cluster: Cluster
) -> None:
    dashboard = signed_in.get(f"/clusters/{cluster.id}/").content.decode()
    assert f'href="/clusters/{cluster.id}/scenario/"' in dashboard
    page = signed_in.get(f"/clusters/{cluster.id}/scenario/?example=1").content.decode()
    assert "id: web-2" in page and "kind: Scenario" in page


def test_running_a_scenario_redirects_to_its_page_which_polls_until_done(
    signed_in: Client, cluster: Cluster
) -> None:
    text = lessons.lesson_get(LESSON).scenario
    response = signed_in.post(f"/clusters/{cluster.id}/scenario/", {"scenario": text})
    run = CompareRun.objects.get()
    assert response.status_code == 302 and response["Location"] == f"/scenarios/{run.id}/"
    page = signed_in.get(f"/scenarios/{run.id}/").content.decode()
    assert f'hx-get="/scenarios/{run.id}/state/"' in page and "every 1s" in page
    _run_all(run)
    page = signed_in.get(f"/scenarios/{run.id}/").content.decode()
    assert 'hx-trigger="every 1s"' not in page
    assert 'id="scenario-phase">Succeeded<' in page
    # Charts drawn on the server: inline SVG, no script.
    assert page.count("<svg viewBox") == 4 and "<polyline" in page and "<rect" in page
    # The slider starts at the last step: node-a cordoned, polite on node-b.
    assert 'type="range" id="step-slider" name="step" min="0" max="5" value="5"' in page
    assert 'data-node="node-a"' in page and "cordoned" in page
    stored = run.variants.get().result["schedviz"]["cluster"]
    step3 = signed_in.get(
        f"/scenarios/{run.id}/step/?step=3", headers={"HX-Request": "true"}
    ).content.decode()
    assert '<div id="scenario-step" data-step="3">' in step3
    assert "<html" not in step3
    assert "preempted: default-scheduler: preempting to accommodate a higher priority pod" in step3
    assert f'href="/clusters/{stored}/cycles/5/">cycle 5</a>' in step3
    cycle = signed_in.get(f"/clusters/{stored}/cycles/5/")
    assert cycle.status_code == 200 and "web-2" in cycle.content.decode()


def test_an_uploaded_file_is_the_scenario(signed_in: Client, cluster: Cluster) -> None:
    upload = SimpleUploadedFile("s.yaml", lessons.lesson_get(LESSON).scenario.encode())
    response = signed_in.post(f"/clusters/{cluster.id}/scenario/", {"upload": upload})
    assert response.status_code == 302
    assert CompareRun.objects.get().scenario["metadata"]["name"] == LESSON


def test_a_refused_scenario_shows_why_escaped_and_starts_nothing(
    signed_in: Client, cluster: Cluster
) -> None:
    bad = {
        "apiVersion": "simulation.kube-scheduler-simulator.x-k8s.io/v1alpha1",
        "kind": "Scenario",
        "spec": {"operations": [{"id": "<b>x</b>", "step": 0, "doneOperation": {}}] * 2},
    }
    response = signed_in.post(f"/clusters/{cluster.id}/scenario/", {"scenario": json.dumps(bad)})
    assert response.status_code == 400
    page = response.content.decode()
    assert "Nothing was started" in page
    assert "spec.operations[1].id: Duplicate value: &quot;&lt;b&gt;x&lt;/b&gt;&quot;" in page
    assert "<b>x</b>" not in page
    assert not CompareRun.objects.exists()


def test_a_comparison_run_is_not_a_scenario_page(signed_in: Client, cluster: Cluster) -> None:
    run = CompareRun.objects.create(cluster=cluster, source=CompareRun.Source.CLUSTER)
    assert signed_in.get(f"/scenarios/{run.id}/").status_code == 404


def test_another_users_scenario_run_is_not_found(client: Client, cluster: Cluster) -> None:
    run = CompareRun.objects.create(cluster=cluster, source=CompareRun.Source.SCENARIO)
    client.force_login(User.objects.create_user("mallory"))
    assert client.get(f"/scenarios/{run.id}/").status_code == 404


def test_a_lesson_with_a_scenario_runs_it_over_time(signed_in: Client) -> None:
    page = signed_in.get(f"/lessons/{LESSON}/").content.decode()
    assert f'action="/lessons/{LESSON}/scenario/"' in page
    response = signed_in.post(f"/lessons/{LESSON}/scenario/")
    run = CompareRun.objects.get()
    assert response.status_code == 302 and response["Location"] == f"/scenarios/{run.id}/"
    assert run.cluster.lesson == LESSON
    other = signed_in.get("/lessons/resource-fit/").content.decode()
    assert "/scenario/" not in other


def test_a_scenario_run_asked_for_as_a_comparison_goes_to_its_scenario_page(
    signed_in: Client, cluster: Cluster
) -> None:
    run = CompareRun.objects.create(cluster=cluster, source=CompareRun.Source.SCENARIO)
    response = signed_in.get(f"/compare/{run.id}/")
    assert response.status_code == 302 and response["Location"] == f"/scenarios/{run.id}/"
