"""Compare profiles pages: the form, refusals shown with nothing started, the run page polling
its progress, then the side-by-side tables with alice data escaped."""

from __future__ import annotations

import pytest
from django.contrib.auth.models import User
from django.test import Client

from schedviz.cluster.models import Cluster
from schedviz.compare.models import CompareRun
from worker import compare

pytestmark = pytest.mark.django_db

PACKING = """apiVersion: kubescheduler.config.k8s.io/v1
kind: KubeSchedulerConfiguration
profiles:
- schedulerName: default-scheduler
  pluginConfig:
  - name: NodeResourcesFit
    args: {scoringStrategy: {type: MostAllocated}}
- schedulerName: packer
"""


@pytest.fixture
def signed_in(client: Client, alice: User) -> Client:
    client.force_login(alice)
    return client


def test_the_form_offers_the_clusters_profiles_and_is_linked_from_the_dashboard(
    signed_in: Client, two_profile_cluster: Cluster
) -> None:
    page = signed_in.get(f"/clusters/{two_profile_cluster.id}/compare/").content.decode()
    assert 'value="default-scheduler"' in page and 'value="packer"' in page
    dashboard = signed_in.get(f"/clusters/{two_profile_cluster.id}/").content.decode()
    assert f'href="/clusters/{two_profile_cluster.id}/compare/"' in dashboard
    profiles = signed_in.get(f"/clusters/{two_profile_cluster.id}/profiles/").content.decode()
    assert f'href="/clusters/{two_profile_cluster.id}/compare/"' in profiles


def test_starting_a_comparison_redirects_to_its_page_which_polls_until_done(
    signed_in: Client, two_profile_cluster: Cluster
) -> None:
    response = signed_in.post(
        f"/clusters/{two_profile_cluster.id}/compare/",
        {"source": "cluster", "profiles": ["default-scheduler", "packer"]},
    )
    run = CompareRun.objects.get()
    assert response.status_code == 302
    assert response["Location"] == f"/compare/{run.id}/"
    page = signed_in.get(f"/compare/{run.id}/").content.decode()
    assert f'hx-get="/compare/{run.id}/state/"' in page and 'hx-trigger="every 1s"' in page
    assert '<progress max="100" value="0"' in page
    # Before a worker has loaded the cluster: no "0 / 0 pods", and a worker said in words.
    assert "0 / 0 pods" not in page and "starting…" in page
    run.variants.update(worker="vm:15407")
    claimed = signed_in.get(f"/compare/{run.id}/state/").content.decode()
    assert "by worker process 15407 on vm" in claimed and "on vm:15407" not in claimed
    for variant in run.variants.all():
        compare.execute_variant(variant.id)
    state = signed_in.get(f"/compare/{run.id}/state/").content.decode()
    assert "hx-trigger" not in state
    assert state.count('value="100"') == 2
    assert "Pods that land differently" in state and "Utilisation per node" in state


def test_a_refused_comparison_shows_why_and_starts_nothing(
    signed_in: Client, two_profile_cluster: Cluster
) -> None:
    response = signed_in.post(
        f"/clusters/{two_profile_cluster.id}/compare/",
        {"source": "cluster", "profiles": ["packer"], "configuration_1": "kind: <script>"},
    )
    assert response.status_code == 400
    page = response.content.decode()
    assert "Nothing was started" in page
    assert "variants[1].configuration" in page
    assert "<script>" not in page
    assert not CompareRun.objects.exists()


def test_variant_names_are_escaped_in_the_results(
    signed_in: Client, two_profile_cluster: Cluster
) -> None:
    signed_in.post(
        f"/clusters/{two_profile_cluster.id}/compare/",
        {
            "source": "cluster",
            "profiles": ["packer"],
            "name_1": "<b>mine</b>",
            "configuration_1": PACKING,
        },
    )
    run = CompareRun.objects.get()
    for variant in run.variants.all():
        compare.execute_variant(variant.id)
    page = signed_in.get(f"/compare/{run.id}/").content.decode()
    assert "&lt;b&gt;mine&lt;/b&gt;" in page and "<b>mine</b>" not in page


def test_someone_elses_comparison_is_not_found(
    signed_in: Client, two_profile_cluster: Cluster
) -> None:
    signed_in.post(
        f"/clusters/{two_profile_cluster.id}/compare/",
        {"source": "cluster", "profiles": ["default-scheduler", "packer"]},
    )
    run = CompareRun.objects.get()
    other = Client()
    other.force_login(User.objects.create_user("bob"))
    assert other.get(f"/compare/{run.id}/").status_code == 404
    assert other.get(f"/compare/{run.id}/state/").status_code == 404
    assert other.get(f"/clusters/{two_profile_cluster.id}/compare/").status_code == 404


def test_pasted_manifests_may_name_their_own_profiles(
    signed_in: Client, two_profile_cluster: Cluster
) -> None:
    workload = """
apiVersion: v1
kind: Node
metadata: {name: n1}
status: {allocatable: {cpu: "4", memory: 8Gi, pods: "110"}}
---
apiVersion: v1
kind: Pod
metadata: {name: p1}
spec: {containers: [{name: c, image: i}]}
---
apiVersion: kubescheduler.config.k8s.io/v1
kind: KubeSchedulerConfiguration
profiles: [{schedulerName: left}, {schedulerName: right}]
"""
    response = signed_in.post(
        f"/clusters/{two_profile_cluster.id}/compare/",
        {"source": "manifests", "manifests": workload, "other_profiles": "left, right"},
    )
    assert response.status_code == 302, response.content.decode()
    run = CompareRun.objects.get()
    assert list(run.variants.values_list("profile", flat=True)) == ["left", "right"]
