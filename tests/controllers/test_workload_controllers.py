"""The workload controllers' pods (schedviz/controllers/workloads.py): names, labels,
ownerReferences, counts, the DaemonSet's tolerations and node affinity, StatefulSet order."""

from __future__ import annotations

import json
import re
from typing import Any

import pytest

from schedviz.controllers.manager import ControllerManager
from schedviz.controllers.workloads import (
    POD_TEMPLATE_HASH_LABEL,
    daemon_pod_tolerations,
    fnv32a,
    pod_template_hash,
    safe_encode_string,
)
from schedviz.kube.load import load_manifests
from schedviz.kube.objects import KubeObject, Pod, ReplicaSet
from tests.controllers.harness import NODE, start

SUFFIX = "[bcdfghjklmnpqrstvwxz2456789]{5}"
TEMPLATE = """
  selector: {matchLabels: {app: web}}
  template:
    metadata: {labels: {app: web}, annotations: {note: x}}
    spec: {containers: [{name: c, image: nginx}]}
"""


def expand(text: str) -> list[KubeObject]:
    return ControllerManager(seed=1).expand(load_manifests(text).objects)


def pods_of(objects: list[KubeObject]) -> list[Pod]:
    return [o for o in objects if isinstance(o, Pod)]


@pytest.mark.parametrize(
    ("data", "expected"),
    # hash/fnv's test vectors for FNV-1a 32.
    [(b"", 0x811C9DC5), (b"a", 0xE40C292C), (b"foobar", 0xBF9CF968)],
)
def test_fnv32a_matches_the_reference_vectors(data: bytes, expected: int) -> None:
    assert fnv32a(data) == expected


def test_safe_encode_string_maps_digits_into_the_alphabet_without_vowels() -> None:
    # '0' is 48: 48 % 27 = 21 -> '4'; '9' is 57: 57 % 27 = 3 -> 'f'.
    assert safe_encode_string("09") == "4f"


def test_the_template_hash_is_stable_and_changes_with_the_collision_count() -> None:
    template: dict[str, Any] = {"metadata": {"labels": {"app": "web"}}, "spec": {}}
    assert pod_template_hash(template) == pod_template_hash(dict(template))
    assert pod_template_hash(template) != pod_template_hash(template, 1)
    assert re.fullmatch("[bcdfghjklmnpqrstvwxz2456789]+", pod_template_hash(template))


def test_a_deployment_gets_a_replica_set_named_by_its_template_hash_and_its_pods() -> None:
    objects = expand(
        "apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: web}\n"
        f"spec:\n  replicas: 3{TEMPLATE}"
    )
    (replica_set,) = [o for o in objects if isinstance(o, ReplicaSet)]
    template_hash = replica_set.labels[POD_TEMPLATE_HASH_LABEL]
    assert replica_set.name == f"web-{template_hash}"
    assert replica_set.owner_references[0].kind == "Deployment"
    assert replica_set.owner_references[0].controller
    pods = pods_of(objects)
    assert len(pods) == 3
    for pod in pods:
        assert re.fullmatch(f"web-{template_hash}-{SUFFIX}", pod.name)
        assert pod.labels == {"app": "web", POD_TEMPLATE_HASH_LABEL: template_hash}
        assert pod.annotations == {"note": "x"}
        (owner,) = pod.owner_references
        assert (owner.kind, owner.name, owner.controller) == ("ReplicaSet", replica_set.name, True)


@pytest.mark.parametrize(
    ("kind", "api_version", "replicas"),
    [("ReplicaSet", "apps/v1", 2), ("ReplicationController", "v1", 0)],
)
def test_replica_sets_and_replication_controllers_make_their_replicas(
    kind: str, api_version: str, replicas: int
) -> None:
    text = (
        f"apiVersion: {api_version}\nkind: {kind}\nmetadata: {{name: rs}}\n"
        f"spec:\n  replicas: {replicas}{TEMPLATE}"
    )
    if kind == "ReplicationController":
        text = text.replace("selector: {matchLabels: {app: web}}", "selector: {app: web}")
    pods = pods_of(expand(text))
    assert len(pods) == replicas
    assert all(re.fullmatch(f"rs-{SUFFIX}", p.name) for p in pods)


STATEFUL_SET = f"""apiVersion: apps/v1
kind: StatefulSet
metadata: {{name: db}}
spec:
  replicas: 3
  serviceName: db
  podManagementPolicy: %s
  volumeClaimTemplates:
  - metadata: {{name: data}}
    spec: {{accessModes: [ReadWriteOnce], resources: {{requests: {{storage: 1Gi}}}}}}
{TEMPLATE}"""


def test_a_parallel_stateful_set_creates_every_ordinal_with_its_claim() -> None:
    objects = expand(STATEFUL_SET % "Parallel")
    assert [p.name for p in pods_of(objects)] == ["db-0", "db-1", "db-2"]
    claims = [o.key for o in objects if type(o).__name__ == "PersistentVolumeClaim"]
    assert claims == ["default/data-db-0", "default/data-db-1", "default/data-db-2"]
    pod = pods_of(objects)[1]
    assert pod.labels["statefulset.kubernetes.io/pod-name"] == "db-1"
    assert pod.labels["apps.kubernetes.io/pod-index"] == "1"
    assert [v.name for v in pod.volumes] == ["data"]


def test_an_ordered_ready_stateful_set_creates_the_next_ordinal_when_the_last_is_bound() -> None:
    cluster = start(NODE % "n1" + "---\n" + STATEFUL_SET % "OrderedReady")
    assert cluster.names() == ["db-0"]
    cluster.bind_all()
    assert cluster.names() == ["db-0", "db-1"]
    cluster.bind_all()
    assert cluster.names() == ["db-0", "db-1", "db-2"]
    cluster.bind_all()
    assert cluster.names() == ["db-0", "db-1", "db-2"]


def test_daemon_pods_get_the_controllers_tolerations_in_upstreams_order() -> None:
    tolerations = daemon_pod_tolerations(
        [
            {
                "key": "node.kubernetes.io/unschedulable",
                "operator": "Exists",
                "effect": "NoSchedule",
                "tolerationSeconds": 5,
            }
        ],
        host_network=True,
    )
    assert [(t["key"], t["effect"]) for t in tolerations] == [
        ("node.kubernetes.io/unschedulable", "NoSchedule"),
        ("node.kubernetes.io/not-ready", "NoExecute"),
        ("node.kubernetes.io/unreachable", "NoExecute"),
        ("node.kubernetes.io/disk-pressure", "NoSchedule"),
        ("node.kubernetes.io/memory-pressure", "NoSchedule"),
        ("node.kubernetes.io/pid-pressure", "NoSchedule"),
        ("node.kubernetes.io/network-unavailable", "NoSchedule"),
    ]
    assert "tolerationSeconds" not in tolerations[0]  # a matching one is replaced
    assert len(daemon_pod_tolerations([], host_network=False)) == 6


NODES = """
apiVersion: v1
kind: Node
metadata: {name: n1, labels: {disk: ssd}}
---
apiVersion: v1
kind: Node
metadata: {name: n2, labels: {disk: ssd}}
spec: {taints: [{key: dedicated, value: x, effect: NoSchedule}]}
---
apiVersion: v1
kind: Node
metadata: {name: n3, labels: {disk: hdd}}
---
apiVersion: v1
kind: Node
metadata: {name: n4, labels: {disk: ssd}}
spec: {unschedulable: true, taints: [{key: node.kubernetes.io/unschedulable, effect: NoSchedule}]}
---
"""


def test_a_daemon_set_runs_one_pod_per_eligible_node_pinned_by_node_name_affinity() -> None:
    text = NODES + (
        "apiVersion: apps/v1\nkind: DaemonSet\nmetadata: {name: agent}\nspec:\n"
        "  selector: {matchLabels: {app: a}}\n  template:\n    metadata: {labels: {app: a}}\n"
        "    spec: {nodeSelector: {disk: ssd}, containers: [{name: c, image: x}]}\n"
    )
    pods = pods_of(expand(text))
    # n2's taint is not tolerated, n3 does not match; n4's unschedulable taint is tolerated.
    pinned = []
    for pod in pods:
        assert re.fullmatch(f"agent-{SUFFIX}", pod.name)
        assert pod.affinity is not None and pod.affinity.node_affinity is not None
        required = pod.affinity.node_affinity.required
        assert required is not None
        (term,) = required.node_selector_terms
        (field,) = term.match_fields
        assert (field.key, field.operator) == ("metadata.name", "In")
        pinned.extend(field.values)
    assert pinned == ["n1", "n4"]


@pytest.mark.parametrize(
    ("counts", "active"),
    [
        ({}, 1),
        ({"parallelism": 2, "completions": 5}, 2),
        ({"parallelism": 4, "completions": 3}, 3),
        ({"parallelism": 3}, 3),
        ({"completions": 4}, 1),
        ({"parallelism": 0}, 0),
    ],
)
def test_a_job_runs_min_of_parallelism_and_completions(counts: dict[str, int], active: int) -> None:
    template = {"spec": {"restartPolicy": "Never", "containers": [{"name": "c", "image": "x"}]}}
    job = {
        "apiVersion": "batch/v1",
        "kind": "Job",
        "metadata": {"name": "j"},
        "spec": {**counts, "template": template},
    }
    pods = pods_of(expand(json.dumps(job)))
    assert len(pods) == active
    for pod in pods:
        assert re.fullmatch(f"j-{SUFFIX}", pod.name)
        assert pod.labels["batch.kubernetes.io/job-name"] == "j"
        assert pod.owner_references[0].kind == "Job"


def test_an_indexed_job_names_and_annotates_each_pod_with_its_index() -> None:
    text = (
        "apiVersion: batch/v1\nkind: Job\nmetadata: {name: j}\nspec:\n"
        "  completionMode: Indexed\n  completions: 3\n  parallelism: 2\n"
        "  template:\n    spec: {restartPolicy: Never, containers: [{name: c, image: x}]}\n"
    )
    pods = pods_of(expand(text))
    assert [p.annotations["batch.kubernetes.io/job-completion-index"] for p in pods] == ["0", "1"]
    assert re.fullmatch(f"j-1-{SUFFIX}", pods[1].name)


def test_a_workload_given_with_what_it_controls_creates_nothing_more() -> None:
    """An exported cluster holds the Deployment, its ReplicaSet and the pods: loading it again
    must not make a second set of pods."""
    first = expand(
        "apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: web}\n"
        f"spec:\n  replicas: 3{TEMPLATE}"
    )
    assert len(pods_of(first)) == 3
    again = ControllerManager(seed=2).expand(first)
    assert [(type(o).__name__, o.name) for o in again] == [
        (type(o).__name__, o.name) for o in first
    ]
