"""The PV controller's part (schedviz/controllers/persistentvolume.py): which volume an
Immediate claim is bound to (the cases of pkg/controller/volume/persistentvolume/index_test.go
TestMatchVolume), dynamic provisioning, and a WaitForFirstConsumer claim provisioned in the
scheduler's selected node's topology."""

from __future__ import annotations

import json
from typing import Any

import pytest

from schedviz.controllers.persistentvolume import start_persistent_volume_controller
from schedviz.kube.load import load_manifests
from schedviz.kube.objects import PersistentVolume, PersistentVolumeClaim
from schedviz.scheduler.store import ClusterStore
from schedviz.simulation.simulator import new_simulation


def pv(name: str, size: str, **spec: Any) -> dict[str, Any]:
    labels = spec.pop("labels", {})
    return {
        "apiVersion": "v1",
        "kind": "PersistentVolume",
        "metadata": {"name": name, "labels": labels},
        "spec": {
            "capacity": {"storage": size},
            "accessModes": spec.pop("accessModes", ["ReadWriteOnce"]),
            "hostPath": {"path": f"/{name}"},
            **spec,
        },
    }


def pvc(size: str, **spec: Any) -> dict[str, Any]:
    return {
        "apiVersion": "v1",
        "kind": "PersistentVolumeClaim",
        "metadata": {"name": "claim", "namespace": "default"},
        "spec": {
            "accessModes": spec.pop("accessModes", ["ReadWriteOnce"]),
            "resources": {"requests": {"storage": size}},
            **spec,
        },
    }


def bound_volume(objects: list[dict[str, Any]]) -> str:
    store = ClusterStore(load_manifests(json.dumps(objects)).objects)
    start_persistent_volume_controller(store)
    claim = store.get("PersistentVolumeClaim", "default/claim")
    assert isinstance(claim, PersistentVolumeClaim)
    if claim.volume_name:
        volume = store.get("PersistentVolume", claim.volume_name)
        assert isinstance(volume, PersistentVolume)
        assert volume.claim_ref == "default/claim" and volume.phase == "Bound"
        assert claim.phase == "Bound"
    return claim.volume_name


VOLUMES = [
    pv("gce-pd-1", "1G", accessModes=["ReadWriteOnce", "ReadOnlyMany"]),
    pv("gce-pd-5", "5G", accessModes=["ReadWriteOnce", "ReadOnlyMany"]),
    pv("gce-pd-10", "10G", accessModes=["ReadWriteOnce", "ReadOnlyMany"]),
    pv("nfs-1", "1G", accessModes=["ReadWriteOnce", "ReadOnlyMany", "ReadWriteMany"]),
    pv("nfs-5", "5G", accessModes=["ReadWriteOnce", "ReadOnlyMany", "ReadWriteMany"]),
    pv("gold", "1G", storageClassName="gold", labels={"tier": "gold"}),
    pv("block", "1G", volumeMode="Block"),
]


@pytest.mark.parametrize(
    ("claim", "expected"),
    [
        # the smallest that is large enough
        (pvc("8G"), "gce-pd-10"),
        (pvc("3G"), "gce-pd-5"),
        # access modes: only NFS offers ReadWriteMany
        (pvc("3G", accessModes=["ReadWriteMany"]), "nfs-5"),
        (pvc("1G", accessModes=["ReadWriteMany", "ReadOnlyMany"]), "nfs-1"),
        # too large for any
        (pvc("100G"), ""),
        # the class must be the same
        (pvc("1G", storageClassName="gold"), "gold"),
        (pvc("1G", storageClassName="silver"), ""),
        # the selector must match the volume's labels
        (pvc("1G", storageClassName="gold", selector={"matchLabels": {"tier": "gold"}}), "gold"),
        (pvc("1G", storageClassName="gold", selector={"matchLabels": {"tier": "x"}}), ""),
        # volume modes must agree
        (pvc("1G", volumeMode="Block"), "block"),
    ],
    ids=[
        "smallest large enough 8G",
        "smallest large enough 3G",
        "ReadWriteMany",
        "two modes",
        "too large",
        "class gold",
        "class nobody has",
        "selector matches",
        "selector does not match",
        "block mode",
    ],
)
def test_an_immediate_claim_is_bound_to_the_smallest_matching_volume(
    claim: dict[str, Any], expected: str
) -> None:
    assert bound_volume([*VOLUMES, claim]) == expected


def test_a_volume_bound_to_another_claim_is_not_taken() -> None:
    taken = pv("gce-pd-5", "5G", claimRef={"namespace": "default", "name": "other"})
    assert bound_volume([taken, pv("gce-pd-10", "10G"), pvc("3G")]) == "gce-pd-10"


def test_an_immediate_claim_of_a_provisioning_class_gets_a_new_volume() -> None:
    fast = {
        "apiVersion": "storage.k8s.io/v1",
        "kind": "StorageClass",
        "metadata": {"name": "fast"},
        "provisioner": "ebs.csi.aws.com",
    }
    name = bound_volume([fast, pvc("3G", storageClassName="fast")])
    assert name.startswith("pvc-")


WAIT_FOR_FIRST_CONSUMER = """
apiVersion: v1
kind: Node
metadata: {name: n1, labels: {topology.kubernetes.io/zone: a}}
status: {allocatable: {cpu: "4", memory: 8Gi, pods: "110"}}
---
apiVersion: v1
kind: Node
metadata: {name: n2, labels: {topology.kubernetes.io/zone: b}}
status: {allocatable: {cpu: "4", memory: 8Gi, pods: "110"}}
---
apiVersion: storage.k8s.io/v1
kind: StorageClass
metadata: {name: fast}
provisioner: ebs.csi.aws.com
volumeBindingMode: WaitForFirstConsumer
allowedTopologies: [{matchLabelExpressions: [{key: topology.kubernetes.io/zone, values: [a, b]}]}]
---
apiVersion: v1
kind: PersistentVolumeClaim
metadata: {name: scratch}
spec: {storageClassName: fast, accessModes: [ReadWriteOnce], resources: {requests: {storage: 5Gi}}}
---
apiVersion: v1
kind: Pod
metadata: {name: first}
spec:
  containers: [{name: c, image: x}]
  volumes: [{name: s, persistentVolumeClaim: {claimName: scratch}}]
---
apiVersion: v1
kind: Pod
metadata: {name: second}
spec:
  containers: [{name: c, image: x}]
  volumes: [{name: s, persistentVolumeClaim: {claimName: scratch}}]
"""


def test_a_wait_for_first_consumer_claim_is_provisioned_in_the_selected_nodes_zone() -> None:
    simulation = new_simulation(
        load_manifests(WAIT_FOR_FIRST_CONSUMER),
        seed=1,
        controllers=[start_persistent_volume_controller],
    )
    claim = simulation.store.get("PersistentVolumeClaim", "default/scratch")
    assert isinstance(claim, PersistentVolumeClaim) and not claim.volume_name
    simulation.run()
    placements = simulation.placements()
    node = placements["default/first"]
    claim = simulation.store.get("PersistentVolumeClaim", "default/scratch")
    assert claim.annotations["volume.kubernetes.io/selected-node"] == node
    volume = simulation.store.get("PersistentVolume", claim.volume_name)
    assert isinstance(volume, PersistentVolume) and volume.claim_ref == "default/scratch"
    (term,) = volume.node_affinity.node_selector_terms
    zone = {"n1": "a", "n2": "b"}[node]
    assert [(e.key, e.values) for e in term.match_expressions] == [
        ("topology.kubernetes.io/zone", (zone,))
    ]
    # The second pod follows the volume into its zone.
    assert placements["default/second"] == node
