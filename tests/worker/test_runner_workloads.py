"""The runner with workloads and volumes: the System default spreading from the stored
workloads, and the PV controller binding and provisioning claims live."""

from __future__ import annotations

from typing import Any

import pytest

from schedviz.cluster import services
from schedviz.cluster.models import (
    Change,
    Cluster,
    PersistentVolume,
    PersistentVolumeClaim,
    Pod,
)
from worker.runner import STOP_IDLE, run_cluster

pytestmark = pytest.mark.django_db(transaction=True)

NODE = """
apiVersion: v1
kind: Node
metadata: {name: %(name)s, labels: {kubernetes.io/hostname: %(name)s}}
status:
  allocatable: {cpu: "%(cpu)s", memory: 64Gi, pods: "110"}
  capacity: {cpu: "%(cpu)s", memory: 64Gi, pods: "110"}
"""
DEPLOYMENT = """
apiVersion: apps/v1
kind: Deployment
metadata: {name: web}
spec:
  replicas: 4
  selector: {matchLabels: {app: web}}
  template:
    metadata: {labels: {app: web}}
    spec: {containers: [{name: c, image: nginx}]}
"""
LONE_PODS = """
apiVersion: v1
kind: Pod
metadata: {name: web-%(i)d, labels: {app: web}}
spec: {containers: [{name: c, image: nginx}]}
"""
CLAIM_POD = """
apiVersion: v1
kind: Pod
metadata: {name: %(name)s}
spec:
  containers: [{name: c, image: nginx}]
  volumes: [{name: data, persistentVolumeClaim: {claimName: %(claim)s}}]
---
apiVersion: v1
kind: PersistentVolumeClaim
metadata: {name: %(claim)s}
spec:
  storageClassName: %(class)s
  accessModes: [ReadWriteOnce]
  resources: {requests: {storage: 1Gi}}
"""
CLASSES = """
apiVersion: storage.k8s.io/v1
kind: StorageClass
metadata: {name: fast}
provisioner: ebs.csi.aws.com
volumeBindingMode: Immediate
---
apiVersion: storage.k8s.io/v1
kind: StorageClass
metadata: {name: local}
provisioner: ebs.csi.aws.com
volumeBindingMode: WaitForFirstConsumer
---
apiVersion: storage.k8s.io/v1
kind: StorageClass
metadata: {name: static}
provisioner: kubernetes.io/no-provisioner
volumeBindingMode: Immediate
---
apiVersion: v1
kind: PersistentVolume
metadata: {name: pv-static}
spec:
  storageClassName: static
  capacity: {storage: 5Gi}
  accessModes: [ReadWriteOnce]
  hostPath: {path: /data}
"""


@pytest.fixture(autouse=True)
def _quiet(settings: Any) -> None:
    settings.SCHEDVIZ_START_RUNNERS = False
    settings.SCHEDVIZ_RUNNER_IDLE_SECONDS = 0


def virtual_cluster(*texts: str) -> Cluster:
    cluster = services.cluster_create(name="c", clock_mode=Cluster.ClockMode.VIRTUAL, seed=7)
    services.manifests_apply(cluster=cluster, text="\n---\n".join(texts))
    return cluster


def nodes_used(cluster: Cluster) -> dict[str, int]:
    used: dict[str, int] = {}
    for node in Pod.objects.filter(cluster=cluster).values_list("node_name", flat=True):
        used[node] = used.get(node, 0) + 1
    return used


BIG_AND_SMALL = (NODE % {"name": "big", "cpu": "64"}, NODE % {"name": "small", "cpu": "4"})


def test_the_system_default_spreading_spreads_a_deployments_pods_live() -> None:
    lone = virtual_cluster(*BIG_AND_SMALL, *(LONE_PODS % {"i": i} for i in range(4)))
    assert run_cluster(lone.pk).stopped == STOP_IDLE
    # Without an owner the default spreading has no selector: the roomier node takes them all.
    assert nodes_used(lone) == {"big": 4}
    Cluster.objects.filter(pk=lone.pk).update(name="lone")
    cluster = virtual_cluster(*BIG_AND_SMALL, DEPLOYMENT)
    assert run_cluster(cluster.pk).stopped == STOP_IDLE
    assert nodes_used(cluster) == {"big": 2, "small": 2}


def test_pods_with_immediate_and_delayed_claims_schedule_live() -> None:
    cluster = virtual_cluster(
        NODE % {"name": "n1", "cpu": "4"},
        CLASSES,
        CLAIM_POD % {"name": "p-static", "claim": "c-static", "class": "static"},
        CLAIM_POD % {"name": "p-fast", "claim": "c-fast", "class": "fast"},
        CLAIM_POD % {"name": "p-local", "claim": "c-local", "class": "local"},
    )
    assert run_cluster(cluster.pk).stopped == STOP_IDLE
    assert dict(Pod.objects.filter(cluster=cluster).values_list("name", "node_name")) == {
        "p-static": "n1",
        "p-fast": "n1",
        "p-local": "n1",
    }
    claims = {c.name: c.manifest for c in PersistentVolumeClaim.objects.filter(cluster=cluster)}
    assert claims["c-static"]["spec"]["volumeName"] == "pv-static"
    volumes = {v.name: v.manifest for v in PersistentVolume.objects.filter(cluster=cluster)}
    for claim in ("c-fast", "c-local"):
        volume = volumes[claims[claim]["spec"]["volumeName"]]
        assert volume["spec"]["claimRef"]["name"] == claim
        assert claims[claim]["status"]["phase"] == "Bound"
    local = volumes[claims["c-local"]["spec"]["volumeName"]]
    terms = local["spec"]["nodeAffinity"]["required"]["nodeSelectorTerms"]
    assert terms[0]["matchExpressions"][0]["values"] == ["n1"]


PRE_BOUND = """
apiVersion: v1
kind: PersistentVolume
metadata: {name: my-model-pv}
spec:
  capacity: {storage: 1Gi}
  accessModes: [ReadOnlyMany]
  hostPath: {path: /mnt/models/my_model}
---
apiVersion: v1
kind: PersistentVolumeClaim
metadata: {name: my-model-pvc}
spec:
  accessModes: [ReadOnlyMany]
  resources: {requests: {storage: 1Gi}}
  volumeName: my-model-pv
---
apiVersion: v1
kind: Pod
metadata: {name: serving}
spec:
  containers: [{name: c, image: tensorflow/serving:2.19.0}]
  volumes: [{name: model, persistentVolumeClaim: {claimName: my-model-pvc}}]
"""


def test_a_claim_that_names_its_volume_is_bound_to_it_live() -> None:
    cluster = virtual_cluster(NODE % {"name": "n1", "cpu": "4"}, PRE_BOUND)
    assert run_cluster(cluster.pk).stopped == STOP_IDLE
    assert Pod.objects.get(cluster=cluster, name="serving").node_name == "n1"
    claim = PersistentVolumeClaim.objects.get(cluster=cluster, name="my-model-pvc").manifest
    assert claim["status"]["phase"] == "Bound"
    assert claim["metadata"]["annotations"] == {"pv.kubernetes.io/bind-completed": "yes"}
    volume = PersistentVolume.objects.get(cluster=cluster, name="my-model-pv").manifest
    assert volume["spec"]["claimRef"]["name"] == "my-model-pvc"
    assert volume["status"]["phase"] == "Bound"


STATEFUL_SET = """
apiVersion: apps/v1
kind: StatefulSet
metadata: {name: db}
spec:
  replicas: 3
  serviceName: db
  selector: {matchLabels: {app: db}}
  template:
    metadata: {labels: {app: db}}
    spec: {containers: [{name: c, image: nginx}]}
"""


def test_an_ordered_ready_statefulset_is_created_ordinal_by_ordinal_live() -> None:
    cluster = virtual_cluster(NODE % {"name": "n1", "cpu": "4"}, STATEFUL_SET)
    assert list(Pod.objects.filter(cluster=cluster).values_list("name", flat=True)) == ["db-0"]
    assert run_cluster(cluster.pk).stopped == STOP_IDLE
    placed = Pod.objects.filter(cluster=cluster).order_by("id").values_list("name", "node_name")
    assert list(placed) == [("db-0", "n1"), ("db-1", "n1"), ("db-2", "n1")]
    created = Change.objects.filter(cluster=cluster, kind="Pod", type=Change.Type.ADDED)
    assert [c.name for c in created] == ["db-0", "db-1", "db-2"]
