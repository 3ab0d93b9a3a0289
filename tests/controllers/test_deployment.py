"""The Deployment controller: rolling.go's tables (rolling_test.go), and rollouts, scaling,
Recreate and revision history over a store."""

from __future__ import annotations

from typing import Any

import pytest

from schedviz.controllers.deployment import (
    DeploymentController,
    equal_ignore_hash,
    new_rs_new_replicas,
    resolve_fenceposts,
)
from schedviz.controllers.manager import ControllerContext
from schedviz.kube.decode import decode_object
from schedviz.kube.objects import Deployment, KubeObject, ReplicaSet
from schedviz.scheduler.store import ClusterStore
from tests.controllers.harness import NODE, start

TEMPLATE = {
    "metadata": {"labels": {"foo": "bar"}},
    "spec": {"containers": [{"name": "c", "image": "nginx"}]},
}


def deployment(replicas: int, max_surge: Any = 0, max_unavailable: Any = 0) -> Deployment:
    d = decode_object(
        {
            "apiVersion": "apps/v1",
            "kind": "Deployment",
            "metadata": {"name": "foo"},
            "spec": {
                "replicas": replicas,
                "selector": {"matchLabels": {"foo": "bar"}},
                "template": TEMPLATE,
                "strategy": {
                    "type": "RollingUpdate",
                    "rollingUpdate": {"maxSurge": max_surge, "maxUnavailable": max_unavailable},
                },
            },
        }
    )
    assert isinstance(d, Deployment)
    return d


def replica_set(name: str, replicas: int, owner: Deployment) -> ReplicaSet:
    rs = decode_object(
        {
            "apiVersion": "apps/v1",
            "kind": "ReplicaSet",
            "metadata": {
                "name": name,
                "labels": {"foo": "bar"},
                "ownerReferences": [
                    {
                        "apiVersion": "apps/v1",
                        "kind": "Deployment",
                        "name": owner.name,
                        "uid": owner.uid,
                        "controller": True,
                    }
                ],
            },
            "spec": {
                "replicas": replicas,
                "selector": {"matchLabels": {"foo": "bar", "v": name}},
                "template": {
                    **TEMPLATE,
                    "metadata": {"labels": {"foo": "bar", "v": name}},
                },
            },
        }
    )
    assert isinstance(rs, ReplicaSet)
    return rs


def ready_pods(rs: ReplicaSet, count: int) -> list[KubeObject]:
    """``count`` running, ready pods of ``rs`` (its status.availableReplicas)."""
    return [
        decode_object(
            {
                "apiVersion": "v1",
                "kind": "Pod",
                "metadata": {
                    "name": f"{rs.name}-{i}",
                    "ownerReferences": [
                        {
                            "apiVersion": "apps/v1",
                            "kind": "ReplicaSet",
                            "name": rs.name,
                            "uid": rs.uid,
                            "controller": True,
                        }
                    ],
                },
                "spec": {"nodeName": "n1", "containers": [{"name": "c", "image": "nginx"}]},
            }
        )
        for i in range(count)
    ]


def controller(objects: list[KubeObject]) -> DeploymentController:
    ctx = ControllerContext(seed=0)
    ctx.store = ClusterStore(objects)
    ctx.reindex()
    return DeploymentController(ctx)


@pytest.mark.parametrize(
    ("deployment_replicas", "max_surge", "old_replicas", "new_replicas", "expected"),
    [
        (10, 0, 10, 0, None),  # should not scale up
        (10, 2, 10, 0, 2),
        (10, 2, 5, 0, 7),
        (10, 2, 10, 2, None),
        (10, 2, 2, 11, 10),  # should scale down
    ],
)
def test_reconcile_new_replica_set(
    deployment_replicas: int,
    max_surge: int,
    old_replicas: int,
    new_replicas: int,
    expected: int | None,
) -> None:
    d = deployment(deployment_replicas, max_surge, 0)
    new_rs = replica_set("foo-v2", new_replicas, d)
    old_rs = replica_set("foo-v1", old_replicas, d)
    dc = controller([d, new_rs, old_rs])
    scaled = dc._reconcile_new(d, [new_rs, old_rs], new_rs)
    assert scaled == (expected is not None)
    if expected is not None:
        assert dc.ctx.get("ReplicaSet", new_rs.key).replicas == expected


@pytest.mark.parametrize(
    ("replicas", "max_unavailable", "old", "new", "ready_old", "ready_new", "expected_old"),
    [
        (10, 0, 10, 0, 10, 0, 9),
        (10, 2, 10, 0, 10, 0, 8),
        (10, 2, 10, 0, 8, 0, 8),  # unhealthy replicas of old ReplicaSets cleaned up
        (10, 2, 10, 0, 9, 0, 8),  # one unhealthy cleaned up, one ready scaled down
        (10, 2, 8, 2, 8, 0, None),  # the new set's unavailable pods block a further step
    ],
)
def test_reconcile_old_replica_sets(
    replicas: int,
    max_unavailable: int,
    old: int,
    new: int,
    ready_old: int,
    ready_new: int,
    expected_old: int | None,
) -> None:
    d = deployment(replicas, 0, max_unavailable)
    new_rs = replica_set("foo-new", new, d)
    old_rs = replica_set("foo-old", old, d)
    dc = controller(
        [d, new_rs, old_rs, *ready_pods(old_rs, ready_old), *ready_pods(new_rs, ready_new)]
    )
    scaled = dc._reconcile_old(d, [old_rs, new_rs], [old_rs], new_rs)
    assert scaled == (expected_old is not None)
    if expected_old is not None:
        assert dc.ctx.get("ReplicaSet", old_rs.key).replicas == expected_old


@pytest.mark.parametrize(
    ("old", "ready", "max_cleanup", "expected"),
    [(10, 8, 1, 1), (10, 8, 3, 2), (10, 8, 0, 0), (10, 10, 3, 0)],
)
def test_cleanup_unhealthy_replicas(old: int, ready: int, max_cleanup: int, expected: int) -> None:
    d = deployment(10, 2, 2)
    old_rs = replica_set("foo-v2", old, d)
    dc = controller([d, old_rs, *ready_pods(old_rs, ready)])
    _, cleaned = dc._cleanup_unhealthy(d, [old_rs], max_cleanup)
    assert cleaned == expected


@pytest.mark.parametrize(
    ("replicas", "max_unavailable", "ready", "old", "expected_old"),
    [
        (10, 0, 10, 10, 9),
        (10, 2, 10, 10, 8),
        (10, 2, 8, 10, None),
        (10, 2, 10, 0, None),
        (10, 2, 1, 10, None),
    ],
)
def test_scale_down_old_replica_sets_for_rolling_update(
    replicas: int, max_unavailable: int, ready: int, old: int, expected_old: int | None
) -> None:
    d = deployment(replicas, 0, max_unavailable)
    old_rs = replica_set("foo-v2", old, d)
    dc = controller([d, old_rs, *ready_pods(old_rs, ready)])
    scaled = dc._scale_down_old(d, [old_rs], [old_rs])
    assert (scaled != 0) == (expected_old is not None)
    if expected_old is not None:
        assert dc.ctx.get("ReplicaSet", old_rs.key).replicas == expected_old


@pytest.mark.parametrize(
    ("max_surge", "max_unavailable", "replicas", "expected"),
    [
        ("25%", "25%", 10, (3, 2)),
        (0, 0, 10, (0, 1)),
        ("0%", "5%", 10, (0, 1)),
        (1, "50%", 3, (1, 1)),
    ],
)
def test_resolve_fenceposts(
    max_surge: Any, max_unavailable: Any, replicas: int, expected: Any
) -> None:
    assert resolve_fenceposts(deployment(replicas, max_surge, max_unavailable)) == expected


def test_new_rs_new_replicas_grows_by_the_surge_left() -> None:
    d = deployment(10, 3, 0)
    old = replica_set("foo-v1", 10, d)
    assert new_rs_new_replicas(d, [old], 0) == 3


def test_equal_ignore_hash_ignores_only_the_hash_label() -> None:
    hashed = {**TEMPLATE, "metadata": {"labels": {"foo": "bar", "pod-template-hash": "x"}}}
    assert equal_ignore_hash(TEMPLATE, hashed)
    assert not equal_ignore_hash(TEMPLATE, {**TEMPLATE, "spec": {}})


WEB = """
apiVersion: apps/v1
kind: Deployment
metadata: {name: web}
spec:
  replicas: %(replicas)d
  revisionHistoryLimit: %(history)d
  strategy: %(strategy)s
  selector: {matchLabels: {app: web}}
  template:
    metadata: {labels: {app: web}}
    spec: {containers: [{name: c, image: %(image)s}]}
"""


def web(replicas: int = 4, image: str = "nginx:1", strategy: str = "{}", history: int = 10) -> str:
    return WEB % {"replicas": replicas, "image": image, "strategy": strategy, "history": history}


def replica_sets(cluster: Any) -> dict[str, int]:
    return {rs.name: rs.replicas for rs in cluster.store.list_objects("ReplicaSet")}


def test_a_template_change_rolls_out_a_new_replica_set_within_surge_and_unavailability() -> None:
    cluster = start(NODE % "n1" + "---\n" + web())
    cluster.bind_all()
    (first,) = replica_sets(cluster)
    cluster.apply(web(image="nginx:2"))
    # 25% of 4: one pod more may exist (surge 1), one may be unavailable: the new set starts
    # at 1, the old one goes to 3, which leaves room for a second new pod (5 in all).
    sets = replica_sets(cluster)
    (second,) = set(sets) - {first}
    assert sets == {first: 3, second: 2}
    assert len(cluster.pods()) == 5
    steps = 0
    while replica_sets(cluster)[first] and steps < 10:
        cluster.bind_all()
        steps += 1
    cluster.bind_all()
    assert replica_sets(cluster) == {first: 0, second: 4}
    assert all(p.labels["pod-template-hash"] in second for p in cluster.pods())
    new = cluster.get("ReplicaSet", second)
    assert new.annotations["deployment.kubernetes.io/revision"] == "2"


def test_recreate_scales_the_old_set_to_zero_before_the_new_one_starts() -> None:
    cluster = start(NODE % "n1" + "---\n" + web(strategy="{type: Recreate}"))
    cluster.bind_all()
    (first,) = replica_sets(cluster)
    cluster.apply(web(image="nginx:2", strategy="{type: Recreate}"))
    sets = replica_sets(cluster)
    assert sets[first] == 0
    assert len(sets) == 2
    assert all(p.labels["pod-template-hash"] not in first for p in cluster.pods())
    assert len(cluster.pods()) == 4


def test_a_scale_event_resizes_the_only_active_replica_set() -> None:
    cluster = start(NODE % "n1" + "---\n" + web())
    cluster.bind_all()
    cluster.apply(web(replicas=2))
    assert list(replica_sets(cluster).values()) == [2]
    assert len(cluster.pods()) == 2
    cluster.apply(web(replicas=6))
    assert len(cluster.pods()) == 6


def test_old_replica_sets_beyond_the_revision_history_limit_are_deleted() -> None:
    cluster = start(NODE % "n1" + "---\n" + web(replicas=1, history=1))
    for image in ("nginx:2", "nginx:3", "nginx:4"):
        cluster.bind_all()
        cluster.apply(web(replicas=1, image=image, history=1))
        for _ in range(4):
            cluster.bind_all()
    assert len(replica_sets(cluster)) == 2
