"""The lesson pages, loading a lesson from the browser, the dashboard's lesson panel, and
"Predict, then reveal": a guess kept, refused with the field named, and revealed once the pod's
cycle has run (the runner runs in the test's thread)."""

from __future__ import annotations

from typing import Any

import pytest
from django.contrib.auth.models import User
from django.test import Client
from django.urls import reverse
from django.utils.html import escape

from schedviz.cluster import lessons, services
from schedviz.cluster.models import Cluster, Pod, Prediction
from worker.runner import run_cluster

HTMX = {"HX-Request": "true", "HX-Target": "predict"}


@pytest.fixture(autouse=True)
def _quiet(settings: Any) -> None:
    settings.SCHEDVIZ_START_RUNNERS = False
    settings.SCHEDVIZ_RUNNER_IDLE_SECONDS = 0
    settings.SCHEDVIZ_WRITE_RATE_PER_MINUTE = 0


@pytest.fixture
def user(db: None) -> User:
    return User.objects.create_user("learner")


@pytest.fixture
def signed_in(client: Client, user: User) -> Client:
    client.force_login(user)
    return client


@pytest.mark.django_db
def test_the_lessons_page_lists_every_lesson_with_what_it_teaches(signed_in: Client) -> None:
    html = signed_in.get(reverse("webui:lessons")).content.decode()
    for info in lessons.lesson_list():
        assert reverse("webui:lesson", args=[info.slug]) in html
        assert info.title in html
        assert escape(info.teaches[0]) in html
    assert html.count("What it teaches") == len(lessons.lesson_list())


@pytest.mark.django_db
def test_a_lesson_page_shows_its_explanation_things_to_try_and_the_load_form(
    signed_in: Client,
) -> None:
    html = signed_in.get(reverse("webui:lesson", args=["resource-fit"])).content.decode()
    info = lessons.lesson_get("resource-fit").info
    assert "<strong>Filter.</strong>" in html
    assert "<code>Insufficient cpu</code>" in html
    assert html.count("<li>") >= len(info.things_to_try)
    assert 'action="/lessons/resource-fit/load/"' in html
    assert 'name="csrfmiddlewaretoken"' in html
    assert '<input type="checkbox" name="paused" id="id_paused" checked>' in html


@pytest.mark.django_db
def test_an_unknown_lesson_is_not_found(signed_in: Client) -> None:
    assert signed_in.get("/lessons/no-such-lesson/").status_code == 404
    assert signed_in.post("/lessons/no-such-lesson/load/").status_code == 404


@pytest.mark.django_db
def test_loading_a_lesson_makes_the_users_cluster_and_opens_its_dashboard(
    signed_in: Client, user: User
) -> None:
    response = signed_in.post(
        reverse("webui:lesson_load", args=["taints-and-tolerations"]), {"paused": "on"}
    )
    cluster = Cluster.objects.get(owner=user)
    assert response.status_code == 302
    assert response["Location"] == reverse("webui:dashboard", args=[cluster.pk])
    assert cluster.lesson == "taints-and-tolerations"
    assert cluster.run_state == Cluster.RunState.PAUSED
    assert cluster.clock_mode == Cluster.ClockMode.VIRTUAL
    dashboard = signed_in.get(response["Location"]).content.decode()
    assert 'id="lesson-panel"' in dashboard
    assert "Taints and tolerations" in dashboard
    assert 'href="/lessons/taints-and-tolerations/"' in dashboard
    assert "Things to try" in dashboard


@pytest.mark.django_db
def test_a_lesson_loaded_without_pausing_runs(signed_in: Client, user: User) -> None:
    signed_in.post(reverse("webui:lesson_load", args=["node-affinity"]))
    assert Cluster.objects.get(owner=user).run_state == Cluster.RunState.RUNNING


@pytest.mark.django_db
def test_loading_a_lesson_needs_a_post_with_the_csrf_token(user: User) -> None:
    client = Client(enforce_csrf_checks=True)
    client.force_login(user)
    url = reverse("webui:lesson_load", args=["resource-fit"])
    assert client.get(url).status_code == 405
    assert client.post(url).status_code == 403
    assert not Cluster.objects.exists()


@pytest.mark.django_db
def test_a_cluster_not_loaded_from_a_lesson_has_no_lesson_panel(
    signed_in: Client, user: User
) -> None:
    cluster = services.cluster_create(name="plain", owner=user)
    html = signed_in.get(reverse("webui:dashboard", args=[cluster.pk])).content.decode()
    assert 'id="lesson-panel"' not in html
    assert 'id="predict"' in html
    assert "Pause the scheduler to guess" in html


@pytest.mark.django_db
def test_the_nav_and_the_clusters_page_link_the_lessons(signed_in: Client) -> None:
    html = signed_in.get(reverse("webui:index")).content.decode()
    assert html.count('href="/lessons/"') >= 2


# ---------------------------------------------------------------------------------------------
# Predict, then reveal


@pytest.fixture
def lesson_cluster(user: User) -> Cluster:
    return lessons.lesson_load(slug="resource-fit", owner=user, paused=True)


@pytest.mark.django_db
def test_the_paused_dashboard_offers_the_next_pod_and_every_node(
    signed_in: Client, lesson_cluster: Cluster
) -> None:
    html = signed_in.get(reverse("webui:dashboard", args=[lesson_cluster.pk])).content.decode()
    assert 'id="predict-pod"' in html
    # Nothing ran yet: the queue pops the first-created of the equal-priority pods first.
    assert '<option value="default/spread-me" selected>' in html
    for node in ("node-a", "node-b", "node-small"):
        assert f'type="radio" name="node" value="{node}"' in html
    assert 'value="/unschedulable"' in html


@pytest.mark.django_db
def test_a_guess_is_kept_with_the_newest_cycle_number(
    signed_in: Client, lesson_cluster: Cluster
) -> None:
    url = reverse("webui:predict", args=[lesson_cluster.pk])
    response = signed_in.post(url, {"pod": "default/spread-me", "node": "node-a"}, headers=HTMX)
    assert response.status_code == 200
    html = response.content.decode()
    assert 'id="predict"' in html and "Your guess" in html
    (prediction,) = Prediction.objects.filter(cluster=lesson_cluster)
    assert (prediction.pod_namespace, prediction.pod_name, prediction.node) == (
        "default",
        "spread-me",
        "node-a",
    )
    assert prediction.after_cycle == 0 and prediction.revealed_cycle is None
    # A second guess about the same pod before its cycle replaces the first.
    signed_in.post(url, {"pod": "default/spread-me", "node": "/unschedulable"}, headers=HTMX)
    (prediction,) = Prediction.objects.filter(cluster=lesson_cluster)
    assert prediction.node == ""


@pytest.mark.django_db
@pytest.mark.parametrize(
    ("data", "field"),
    [
        ({"pod": "default/no-such-pod", "node": "node-a"}, "pod:"),
        ({"pod": "spread-me", "node": "node-a"}, "pod:"),
        ({"pod": "default/batch-0", "node": "node-a"}, "pod:"),
        ({"pod": "default/spread-me", "node": "node-z"}, "node:"),
        ({"pod": "default/spread-me"}, "node:"),
    ],
)
def test_a_bad_guess_is_refused_naming_the_field(
    signed_in: Client, lesson_cluster: Cluster, data: dict[str, str], field: str
) -> None:
    response = signed_in.post(
        reverse("webui:predict", args=[lesson_cluster.pk]), data, headers=HTMX
    )
    assert response.status_code == 400
    assert field in response.content.decode()
    assert not Prediction.objects.exists()


@pytest.mark.django_db
def test_no_guess_while_the_scheduler_runs(signed_in: Client, user: User) -> None:
    cluster = lessons.lesson_load(slug="resource-fit", owner=user)
    response = signed_in.post(
        reverse("webui:predict", args=[cluster.pk]),
        {"pod": "default/spread-me", "node": "node-a"},
        headers=HTMX,
    )
    assert response.status_code == 400
    assert "cluster: pause the scheduler first" in response.content.decode()
    assert not Prediction.objects.exists()


@pytest.mark.django_db
def test_someone_elses_cluster_takes_no_guess(client: Client, lesson_cluster: Cluster) -> None:
    other = User.objects.create_user("other")
    client.force_login(other)
    response = client.post(
        reverse("webui:predict", args=[lesson_cluster.pk]),
        {"pod": "default/spread-me", "node": "node-a"},
    )
    assert response.status_code == 404
    assert not Prediction.objects.exists()


@pytest.mark.django_db
def test_a_plain_form_post_goes_back_to_the_dashboard(
    signed_in: Client, lesson_cluster: Cluster
) -> None:
    response = signed_in.post(
        reverse("webui:predict", args=[lesson_cluster.pk]),
        {"pod": "default/spread-me", "node": "node-b"},
    )
    assert response.status_code == 302
    assert response["Location"].startswith(reverse("webui:dashboard", args=[lesson_cluster.pk]))
    refused = signed_in.post(
        reverse("webui:predict", args=[lesson_cluster.pk]),
        {"pod": "default/spread-me", "node": "node-z"},
    )
    assert refused.status_code == 400 and b"node:" in refused.content
    assert b"<!doctype html>" in refused.content and b"Back to the dashboard" in refused.content
    page = signed_in.get(reverse("webui:predict", args=[lesson_cluster.pk]))
    assert page.status_code == 200 and b'id="predict"' in page.content
    assert b"<!doctype html>" in page.content


def _step(cluster: Cluster) -> None:
    services.cluster_step(cluster=cluster)
    run_cluster(cluster.pk)


@pytest.mark.django_db(transaction=True)
def test_a_wrong_guess_is_revealed_with_the_scores_that_made_the_difference(
    signed_in: Client, lesson_cluster: Cluster
) -> None:
    url = reverse("webui:predict", args=[lesson_cluster.pk])
    signed_in.post(url, {"pod": "default/spread-me", "node": "node-a"}, headers=HTMX)
    _step(lesson_cluster)
    html = signed_in.get(url, headers=HTMX).content.decode()
    assert 'data-verdict="scored-lower"' in html
    assert "Wrong" in html and 'href="/clusters/' in html
    assert '<tr class="decisive"><th scope="row">NodeResourcesFit' in html
    assert "0 right" in html and "1 wrong" in html
    prediction = Prediction.objects.get(cluster=lesson_cluster)
    assert prediction.revealed_cycle == 1 and prediction.correct is False

    # The next pod: pack-me, in the bin-packing profile, packs onto node-a.
    dashboard = signed_in.get(reverse("webui:dashboard", args=[lesson_cluster.pk]))
    assert '<option value="default/pack-me" selected>' in dashboard.content.decode()
    signed_in.post(url, {"pod": "default/pack-me", "node": "node-a"}, headers=HTMX)
    _step(lesson_cluster)
    html = signed_in.get(url, headers=HTMX).content.decode()
    assert 'data-verdict="right"' in html and "Right" in html
    assert "1 right" in html and "1 wrong" in html
    assert "Earlier guesses" in html


@pytest.mark.django_db(transaction=True)
def test_a_filtered_guess_quotes_the_plugins_reason(
    signed_in: Client, lesson_cluster: Cluster
) -> None:
    url = reverse("webui:predict", args=[lesson_cluster.pk])
    signed_in.post(url, {"pod": "default/spread-me", "node": "node-small"}, headers=HTMX)
    _step(lesson_cluster)
    html = signed_in.get(url, headers=HTMX).content.decode()
    assert 'data-verdict="filtered"' in html
    assert "<strong>NodeResourcesFit</strong>" in html
    assert '<q class="reason-text">Insufficient cpu</q>' in html


@pytest.mark.django_db(transaction=True)
def test_a_guess_stays_open_until_its_pods_cycle_has_run(user: User, signed_in: Client) -> None:
    cluster = lessons.lesson_load(slug="resource-fit", owner=user, paused=True)
    url = reverse("webui:predict", args=[cluster.pk])
    # pack-me is popped second: the first step runs spread-me's cycle.
    signed_in.post(url, {"pod": "default/pack-me", "node": "node-b"}, headers=HTMX)
    _step(cluster)
    html = signed_in.get(url, headers=HTMX).content.decode()
    assert 'id="reveal"' not in html and "Your guess" in html
    _step(cluster)
    html = signed_in.get(url, headers=HTMX).content.decode()
    assert 'data-verdict="scored-lower"' in html
    assert Prediction.objects.get(cluster=cluster).revealed_cycle == 2


@pytest.mark.django_db(transaction=True)
def test_preemption_is_revealed_with_its_victims(user: User, signed_in: Client) -> None:
    cluster = lessons.lesson_load(slug="priority-and-preemption", owner=user, paused=True)
    url = reverse("webui:predict", args=[cluster.pk])
    # polite is popped first and stays unschedulable; web-2 preempts low-1 on node-a.
    signed_in.post(url, {"pod": "default/polite", "node": "/unschedulable"}, headers=HTMX)
    signed_in.post(url, {"pod": "default/web-2", "node": "/unschedulable"}, headers=HTMX)
    services.cluster_step(cluster=cluster)
    _step(cluster)
    html = signed_in.get(url, headers=HTMX).content.decode()
    assert 'data-verdict="preemption"' in html
    assert "default/low-1" in html and "0/1 nodes are available" in html
    polite = Prediction.objects.get(cluster=cluster, pod_name="polite")
    assert (polite.revealed_cycle, polite.correct) == (1, True)
    assert "1 right" in html and "1 wrong" in html
    assert "is bound in a later cycle" in html
    # The victim goes, polite is tried again (and fails), then web-2 is bound where nominated.
    services.cluster_step(cluster=cluster)
    services.cluster_step(cluster=cluster)
    _step(cluster)
    html = signed_in.get(url, headers=HTMX).content.decode()
    assert 'data-verdict="preemption"' in html
    assert f'and bound to <bdi>node-a</bdi> in <a href="/clusters/{cluster.pk}/cycles/4/">' in html


@pytest.mark.django_db(transaction=True)
def test_the_lesson_panel_tells_each_step_only_once_its_cycle_has_run_and_then_its_end(
    signed_in: Client, user: User
) -> None:
    signed_in.post(reverse("webui:lesson_load", args=["topology-spread"]), {"paused": "on"})
    cluster = Cluster.objects.get(owner=user)
    url = reverse("webui:dashboard", args=[cluster.pk])
    before = signed_in.get(url).content.decode()
    assert "Step 1 of 2" in before and "Next, step 1:" in before
    # The outcome is not on the page before the learner steps: no step text, no node named.
    assert "lands on" not in before and 'id="lesson-step-1"' not in before
    services.cluster_step(cluster=cluster)
    run_cluster(cluster.pk)
    after_one = signed_in.get(url).content.decode()
    assert "Step 2 of 2" in after_one and 'id="lesson-step-1"' in after_one
    assert "web-3 lands on <strong>node-c</strong>" in after_one
    assert 'id="lesson-step-2"' not in after_one and "Lesson complete" not in after_one
    services.cluster_step(cluster=cluster)
    run_cluster(cluster.pk)
    done = signed_in.get(url).content.decode()
    assert 'id="lesson-complete"' in done and "Lesson complete" in done
    assert "To spread over nodes too" in done  # what was learnt
    assert 'id="lesson-step-1"' in done and 'id="lesson-step-2"' in done


@pytest.mark.django_db(transaction=True)
@pytest.mark.parametrize("route", ["webui:lesson_restart", "webui:cluster_reset"])
def test_restarting_or_resetting_a_lesson_cluster_loads_the_lesson_again_paused(
    signed_in: Client, user: User, route: str
) -> None:
    signed_in.post(reverse("webui:lesson_load", args=["node-affinity"]))
    cluster = Cluster.objects.get(owner=user)
    run_cluster(cluster.pk)
    assert cluster.cycles.count() == 2
    # Reset asks first (webui/views.py): the confirmation field is what its page posts.
    response = signed_in.post(reverse(route, args=[cluster.pk]), {"confirm": "yes"})
    assert response.status_code == 302
    cluster.refresh_from_db()
    assert cluster.lesson == "node-affinity" and cluster.run_state == Cluster.RunState.PAUSED
    assert cluster.cycles.count() == 0
    pods = Pod.objects.filter(cluster=cluster).values_list("name", "node_name")
    assert set(pods) == {("db", ""), ("lost", "")}
    page = signed_in.get(response["Location"]).content.decode()
    assert "Step 1 of 2" in page
    assert "restarted" in page or "starts again" in page


@pytest.mark.django_db
def test_restarting_a_cluster_that_holds_no_lesson_is_refused(
    signed_in: Client, user: User
) -> None:
    cluster = services.cluster_create(name="plain", owner=user)
    response = signed_in.post(reverse("webui:lesson_restart", args=[cluster.pk]), follow=True)
    assert "holds no lesson" in response.content.decode()


@pytest.mark.django_db
def test_restarting_from_htmx_sends_the_browser_to_the_dashboard(
    signed_in: Client, user: User
) -> None:
    signed_in.post(reverse("webui:lesson_load", args=["node-affinity"]), {"paused": "on"})
    cluster = Cluster.objects.get(owner=user)
    response = signed_in.post(
        reverse("webui:lesson_restart", args=[cluster.pk]), headers={"HX-Request": "true"}
    )
    assert response["HX-Redirect"] == reverse("webui:dashboard", args=[cluster.pk])


@pytest.mark.django_db
def test_restarting_a_lesson_puts_back_the_profiles_it_was_loaded_with(
    signed_in: Client, user: User
) -> None:
    from schedviz.cluster.models import Profile

    signed_in.post(reverse("webui:lesson_load", args=["node-affinity"]), {"paused": "on"})
    cluster = Cluster.objects.get(owner=user)
    assert not Profile.objects.filter(cluster=cluster).exists()  # the default profile
    services.manifests_apply(
        cluster=cluster,
        text="apiVersion: kubescheduler.config.k8s.io/v1\nkind: KubeSchedulerConfiguration\n"
        "profiles: [{schedulerName: default-scheduler, plugins: {score: {disabled: "
        "[{name: NodeAffinity}]}}}]\n",
    )
    assert Profile.objects.filter(cluster=cluster).exists()
    signed_in.post(reverse("webui:lesson_restart", args=[cluster.pk]))
    assert not Profile.objects.filter(cluster=cluster).exists()
    # A lesson with its own configuration gets it back.
    signed_in.post(reverse("webui:lesson_load", args=["several-profiles"]), {"paused": "on"})
    profiled = Cluster.objects.filter(owner=user).order_by("-pk").first()
    assert profiled is not None
    names = list(Profile.objects.filter(cluster=profiled).values_list("scheduler_name", flat=True))
    signed_in.post(reverse("webui:lesson_restart", args=[profiled.pk]))
    again = Profile.objects.filter(cluster=profiled).values_list("scheduler_name", flat=True)
    assert list(again) == names == ["default-scheduler", "packer"]
