"""schedviz.compare.services: a run created whole or refused naming the field; executions' writes
owned by their attempt."""

from __future__ import annotations

from typing import Any
from unittest import mock

import pytest
from django.contrib.auth.models import User
from django.core.exceptions import ImproperlyConfigured

from schedviz.cluster import services as cluster_services
from schedviz.cluster.models import Cluster
from schedviz.cluster.services import ServiceError
from schedviz.compare import ports, services
from schedviz.compare.models import CompareRun, CompareVariant
from schedviz.compare.services import VariantSpec

pytestmark = pytest.mark.django_db

PACKER_CONFIG = """
apiVersion: kubescheduler.config.k8s.io/v1
kind: KubeSchedulerConfiguration
profiles:
- schedulerName: default-scheduler
  pluginConfig:
  - name: NodeResourcesFit
    args: {scoringStrategy: {type: MostAllocated}}
- schedulerName: packer
- schedulerName: orphan
"""
WORKLOAD = """
apiVersion: v1
kind: Node
metadata: {name: n1}
status: {allocatable: {cpu: "4", memory: 8Gi, pods: "110"}}
---
apiVersion: v1
kind: Pod
metadata: {name: p1}
spec: {containers: [{name: c, image: i, resources: {requests: {cpu: "1"}}}]}
"""


def _errors(**kwargs: Any) -> list[str]:
    with pytest.raises(ServiceError) as raised:
        services.compare_run_create(**kwargs)
    assert not CompareRun.objects.exists()
    assert not CompareVariant.objects.exists()
    return raised.value.errors


def test_a_run_of_two_profiles_is_saved_with_each_variants_configuration(
    two_profile_cluster: Cluster, alice: User, django_capture_on_commit_callbacks: Any
) -> None:
    with django_capture_on_commit_callbacks() as callbacks:
        run = services.compare_run_create(
            cluster=two_profile_cluster,
            variants=[
                VariantSpec(name="spread", profile="default-scheduler"),
                VariantSpec(name="pack", profile="packer"),
            ],
            created_by=alice,
        )
    assert len(callbacks) == 1  # the tasks go out once committed
    variants = list(run.variants.order_by("position"))
    assert [(v.name, v.profile, v.status) for v in variants] == [
        ("spread", "default-scheduler", "pending"),
        ("pack", "packer", "pending"),
    ]
    assert [p["schedulerName"] for p in variants[1].configuration["profiles"]] == ["packer"]
    assert run.seed == two_profile_cluster.seed
    kinds = [m["kind"] for m in run.manifests]
    assert kinds.count("Node") == 2 and kinds.count("Pod") == 6  # the lesson's, agent included


def test_a_committed_run_is_handed_to_the_registered_run_starter(
    two_profile_cluster: Cluster, django_capture_on_commit_callbacks: Any
) -> None:
    starter = mock.Mock()
    previous = ports.register_run_starter(starter)
    try:
        with django_capture_on_commit_callbacks(execute=True):
            run = services.compare_run_create(
                cluster=two_profile_cluster,
                variants=[
                    VariantSpec(name="spread", profile="default-scheduler"),
                    VariantSpec(name="pack", profile="packer"),
                ],
            )
            starter.assert_not_called()
    finally:
        ports.register_run_starter(previous)
    assert starter.call_args_list == [mock.call(run.id)]


def test_without_a_run_starter_no_run_is_created(two_profile_cluster: Cluster) -> None:
    previous = ports.register_run_starter(None)
    try:
        with pytest.raises(ImproperlyConfigured, match="worker app"):
            services.compare_run_create(
                cluster=two_profile_cluster,
                variants=[
                    VariantSpec(name="spread", profile="default-scheduler"),
                    VariantSpec(name="pack", profile="packer"),
                ],
            )
    finally:
        ports.register_run_starter(previous)
    assert not CompareRun.objects.exists()


def test_the_worker_app_registers_its_run_starter() -> None:
    from worker import compare

    previous = ports.register_run_starter(None)
    ports.register_run_starter(previous)
    assert previous is compare.start_run


def test_pods_the_scheduler_placed_are_pending_again_and_pods_created_bound_stay(
    two_profile_cluster: Cluster,
) -> None:
    cluster_services.manifests_apply(
        cluster=two_profile_cluster,
        text="""
apiVersion: v1
kind: Pod
metadata: {name: pinned}
spec: {nodeName: node-a, containers: [{name: c, image: i}]}
""",
    )
    cluster_services.pod_bind(
        cluster=two_profile_cluster, namespace="default", name="web-1", node_name="node-b"
    )
    run = services.compare_run_create(
        cluster=two_profile_cluster,
        variants=[
            VariantSpec(name="a", profile="default-scheduler"),
            VariantSpec(name="b", profile="packer"),
        ],
    )
    pods = {m["metadata"]["name"]: m for m in run.manifests if m["kind"] == "Pod"}
    assert "nodeName" not in pods["web-1"]["spec"]
    assert "status" not in pods["web-1"] or not pods["web-1"]["status"].get("conditions")
    assert pods["pinned"]["spec"]["nodeName"] == "node-a"


def test_a_configuration_variant_is_decoded_from_yaml(two_profile_cluster: Cluster) -> None:
    run = services.compare_run_create(
        cluster=two_profile_cluster,
        variants=[
            VariantSpec(name="as is", profile="default-scheduler"),
            VariantSpec(name="most allocated", configuration=PACKER_CONFIG),
        ],
    )
    variant = run.variants.get(name="most allocated")
    assert variant.profile == ""
    assert len(variant.configuration["profiles"]) == 3


@pytest.mark.parametrize(
    ("variants", "expected"),
    [
        (
            [VariantSpec(name="one", profile="packer")],
            "variants: Invalid value: 1: between 2 and 8",
        ),
        (
            [VariantSpec(name="a", profile="packer"), VariantSpec(name="b", profile="nope")],
            'variants[1].profile: Not found: "nope"',
        ),
        (
            [VariantSpec(name="a", profile="packer"), VariantSpec(name="a", profile="packer")],
            'variants[1].name: Duplicate value: "a"',
        ),
        (
            [VariantSpec(name="", profile="packer"), VariantSpec(name="b", profile="packer")],
            "variants[0].name: Required value",
        ),
        (
            [
                VariantSpec(name="a", profile="packer", configuration=PACKER_CONFIG),
                VariantSpec(name="b", profile="packer"),
            ],
            "variants[0]: Invalid value: give exactly one of profile and configuration",
        ),
        (
            [
                VariantSpec(name="a", profile="packer"),
                VariantSpec(
                    name="b",
                    configuration="apiVersion: kubescheduler.config.k8s.io/v1\n"
                    "kind: KubeSchedulerConfiguration\npercentageOfNodesToScore: 300\n",
                ),
            ],
            "variants[1].configuration: percentageOfNodesToScore: Invalid value: 300",
        ),
        (
            [
                VariantSpec(name="a", profile="packer"),
                VariantSpec(
                    name="b",
                    configuration="apiVersion: kubescheduler.config.k8s.io/v1\n"
                    "kind: KubeSchedulerConfiguration\nprofiles: [{schedulerName: x}]\n",
                ),
            ],
            "variants[1].configuration.profiles: Invalid value: no profile serves any pending "
            'pod: they name "default-scheduler" (2 pods), "my-custom-scheduler" (1 pods), '
            '"packer" (2 pods)',
        ),
        (
            [VariantSpec(name="a", profile="packer"), VariantSpec(name="b", configuration="{: x")],
            "document 1 of variants[1].configuration: json:",
        ),
    ],
)
def test_bad_variants_are_refused_naming_the_field_and_nothing_is_saved(
    two_profile_cluster: Cluster, variants: list[VariantSpec], expected: str
) -> None:
    errors = _errors(cluster=two_profile_cluster, variants=variants)
    assert any(error.startswith(expected) for error in errors), errors


def test_every_bad_variant_is_reported_at_once(two_profile_cluster: Cluster) -> None:
    errors = _errors(
        cluster=two_profile_cluster,
        variants=[VariantSpec(name="a", profile="x"), VariantSpec(name="b", profile="y")],
    )
    assert [e.split(":")[0] for e in errors] == ["variants[0].profile", "variants[1].profile"]


def test_pasted_manifests_are_the_workload_and_their_configuration_the_profiles(
    two_profile_cluster: Cluster,
) -> None:
    run = services.compare_run_create(
        cluster=two_profile_cluster,
        source="manifests",
        manifests=WORKLOAD + "---\n" + PACKER_CONFIG,
        variants=[
            VariantSpec(name="a", profile="default-scheduler"),
            VariantSpec(name="b", profile="orphan"),
        ],
        seed=7,
    )
    assert run.source == "manifests" and run.seed == 7
    assert [m["metadata"]["name"] for m in run.manifests] == ["n1", "p1"]


@pytest.mark.parametrize(
    ("source", "manifests", "expected"),
    [
        ("manifests", "", "manifests: Required value"),
        (
            "manifests",
            "kind: Pod\napiVersion: v1\nmetadata: {name: p}\nspec: {containers: 3}",
            'document 1 of manifests: Pod "p" is invalid',
        ),
        (
            "manifests",
            PACKER_CONFIG + "---\n" + PACKER_CONFIG,
            "manifests: Invalid value: at most one",
        ),
        ("elsewhere", "", 'source: Unsupported value: "elsewhere"'),
    ],
)
def test_a_bad_workload_is_refused_naming_the_field(
    two_profile_cluster: Cluster, source: str, manifests: str, expected: str
) -> None:
    errors = _errors(
        cluster=two_profile_cluster,
        source=source,
        manifests=manifests,
        variants=[
            VariantSpec(name="a", profile="default-scheduler"),
            VariantSpec(name="b", profile="default-scheduler"),
        ],
    )
    assert any(error.startswith(expected) for error in errors), errors


def test_pasted_manifests_over_the_node_limit_are_refused(
    two_profile_cluster: Cluster, settings: Any
) -> None:
    settings.SCHEDVIZ_MAX_NODES_PER_CLUSTER = 0
    errors = _errors(
        cluster=two_profile_cluster,
        source="manifests",
        manifests=WORKLOAD,
        variants=[
            VariantSpec(name="a", profile="default-scheduler"),
            VariantSpec(name="b", profile="default-scheduler"),
        ],
    )
    assert errors[0].startswith("manifests: Too many: 1 nodes; the limit is 0")


def _variant(two_profile_cluster: Cluster) -> CompareVariant:
    run = services.compare_run_create(
        cluster=two_profile_cluster,
        variants=[
            VariantSpec(name="a", profile="default-scheduler"),
            VariantSpec(name="b", profile="packer"),
        ],
    )
    return run.variants.get(position=0)


def test_a_new_claim_supersedes_the_old_attempt_whose_writes_are_then_ignored(
    two_profile_cluster: Cluster,
) -> None:
    variant = _variant(two_profile_cluster)
    first = services.variant_claim(variant_id=variant.id)
    assert first is not None
    assert services.variant_progress(variant_id=variant.id, attempt=first, done=3, total=5)
    second = services.variant_claim(variant_id=variant.id)
    assert second is not None and second != first
    variant.refresh_from_db()
    assert (variant.status, variant.pods_done) == ("running", 0)
    assert not services.variant_progress(variant_id=variant.id, attempt=first, done=5, total=5)
    assert not services.variant_finish(variant_id=variant.id, attempt=first, result={"pods": {}})
    assert services.variant_progress(variant_id=variant.id, attempt=second, done=2, total=5)
    variant.refresh_from_db()
    assert (variant.pods_done, variant.pods_total) == (2, 5)


def test_a_finished_variant_cannot_be_claimed_again(two_profile_cluster: Cluster) -> None:
    variant = _variant(two_profile_cluster)
    attempt = services.variant_claim(variant_id=variant.id)
    assert attempt is not None
    assert services.variant_progress(variant_id=variant.id, attempt=attempt, done=1, total=2)
    assert services.variant_finish(variant_id=variant.id, attempt=attempt, result={"pods": {}})
    assert services.variant_claim(variant_id=variant.id) is None
    variant.refresh_from_db()
    assert (variant.status, variant.pods_done, variant.pods_total) == ("succeeded", 2, 2)


def test_a_failed_variant_keeps_its_error(two_profile_cluster: Cluster) -> None:
    variant = _variant(two_profile_cluster)
    attempt = services.variant_claim(variant_id=variant.id)
    assert attempt is not None
    assert services.variant_fail(variant_id=variant.id, attempt=attempt, error="RuntimeError: boom")
    variant.refresh_from_db()
    assert (variant.status, variant.error) == ("failed", "RuntimeError: boom")
    assert services.variant_claim(variant_id=variant.id) is None
