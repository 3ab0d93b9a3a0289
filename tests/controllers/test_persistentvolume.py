"""The PV controller's part (schedviz/controllers/persistentvolume.py): which volume an
Immediate claim is bound to (the cases of pkg/controller/volume/persistentvolume/index_test.go
TestMatchVolume), dynamic provisioning, a WaitForFirstConsumer claim provisioned in the
scheduler's selected node's topology, and pre-binding (binder_test.go TestSync, sets 1 and 2;
the tensorflow-serving example of kubernetes/examples)."""

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


# Pre-binding: pkg/controller/volume/persistentvolume/binder_test.go TestSync, unit test sets 1
# (a volume whose claimRef names the claim) and 2 (a claim that names its volume); and
# checkVolumeSatisfyClaim's refusals. Upstream's UIDs have no counterpart (claims are known by
# namespace/name), so the rows about a claimRef with another claim's UID are left out.
BIND_COMPLETED = "pv.kubernetes.io/bind-completed"
BOUND_BY_CONTROLLER = "pv.kubernetes.io/bound-by-controller"


def claim_ref(name: str = "claim") -> dict[str, str]:
    return {"kind": "PersistentVolumeClaim", "namespace": "default", "name": name}


def synced(objects: list[dict[str, Any]]) -> tuple[ClusterStore, PersistentVolumeClaim]:
    store = ClusterStore(load_manifests(json.dumps(objects)).objects)
    start_persistent_volume_controller(store)
    claim = store.get("PersistentVolumeClaim", "default/claim")
    assert isinstance(claim, PersistentVolumeClaim)
    return store, claim


@pytest.mark.parametrize(
    ("name", "volumes", "claim", "want_volume", "want_annotations"),
    [
        (
            "1-5 - prebound volume by name - success",
            [pv("volume1-5-1", "10Gi", claimRef=claim_ref()), pv("volume1-5-2", "1Gi")],
            pvc("1Gi"),
            "volume1-5-1",
            {BOUND_BY_CONTROLLER, BIND_COMPLETED},
        ),
        (
            "1-8 - complete bind after crash - PV bound",
            [pv("volume1-8", "1Gi", claimRef=claim_ref())],
            pvc("1Gi"),
            "volume1-8",
            {BOUND_BY_CONTROLLER, BIND_COMPLETED},
        ),
        (
            "2-1 - claim prebound to non-existing volume - noop",
            [],
            pvc("10Gi", volumeName="volume2-1"),
            "",
            set(),
        ),
        (
            "2-3 - claim prebound to unbound volume",
            [pv("volume2-3", "1Gi")],
            pvc("1Gi", volumeName="volume2-3"),
            "volume2-3",
            {BIND_COMPLETED},
        ),
        (
            "2-4 - claim prebound to prebound volume by name",
            [pv("volume2-4", "1Gi", claimRef=claim_ref())],
            pvc("1Gi", volumeName="volume2-4"),
            "volume2-4",
            {BIND_COMPLETED},
        ),
        (
            "2-6 - claim prebound to already bound volume",
            [pv("volume2-6", "1Gi", claimRef=claim_ref("claim2-6-1"))],
            pvc("1Gi", volumeName="volume2-6"),
            "",
            set(),
        ),
        (
            "2-8 - claim prebound to unbound volume that does not match the selector",
            [pv("volume2-3", "1Gi")],
            pvc("1Gi", volumeName="volume2-3", selector={"matchLabels": {"foo": "true"}}),
            "volume2-3",
            {BIND_COMPLETED},
        ),
        (
            "checkVolumeSatisfyClaim: requested PV is too small",
            [pv("small", "1Gi")],
            pvc("5Gi", volumeName="small"),
            "",
            set(),
        ),
        (
            "checkVolumeSatisfyClaim: storageClassName does not match",
            [pv("gold", "1Gi", storageClassName="gold")],
            pvc("1Gi", volumeName="gold", storageClassName="silver"),
            "",
            set(),
        ),
        (
            "checkVolumeSatisfyClaim: incompatible volumeMode",
            [pv("block", "1Gi", volumeMode="Block")],
            pvc("1Gi", volumeName="block"),
            "",
            set(),
        ),
        (
            "checkVolumeSatisfyClaim: incompatible accessMode",
            [pv("rox", "1Gi", accessModes=["ReadOnlyMany"])],
            pvc("1Gi", volumeName="rox", accessModes=["ReadWriteMany"]),
            "",
            set(),
        ),
    ],
)
def test_pre_bound_claims_and_volumes(
    name: str,
    volumes: list[dict[str, Any]],
    claim: dict[str, Any],
    want_volume: str,
    want_annotations: set[str],
) -> None:
    store, synced_claim = synced([*volumes, claim])
    assert set(synced_claim.annotations) == want_annotations
    if not want_volume:
        assert synced_claim.phase == "Pending"
        assert synced_claim.volume_name == claim["spec"].get("volumeName", "")
        assert all(v.claim_ref != "default/claim" for v in store.list_objects("PersistentVolume"))
        return
    assert synced_claim.phase == "Bound" and synced_claim.volume_name == want_volume
    volume = store.get("PersistentVolume", want_volume)
    assert isinstance(volume, PersistentVolume)
    assert volume.claim_ref == "default/claim" and volume.phase == "Bound"


def test_2_2_a_claim_prebound_to_a_missing_volume_is_reset_to_pending() -> None:
    claim = pvc("10Gi", volumeName="volume2-2")
    claim["status"] = {"phase": "Bound"}
    _, synced_claim = synced([claim])
    assert synced_claim.phase == "Pending" and synced_claim.volume_name == "volume2-2"


def test_a_claim_prebound_to_a_volume_created_later_binds_when_it_comes() -> None:
    store, synced_claim = synced([pvc("1Gi", volumeName="late")])
    assert synced_claim.phase == "Pending"
    store.apply(load_manifests(json.dumps(pv("late", "1Gi"))).objects[0])
    claim = store.get("PersistentVolumeClaim", "default/claim")
    assert claim.phase == "Bound" and claim.annotations == {BIND_COMPLETED: "yes"}


def test_a_wait_for_first_consumer_claim_binds_its_pre_bound_volume_at_once() -> None:
    # findBestMatchForClaim returns a volume pre-bound to the claim before it skips the others
    # for delayed binding.
    wait = {
        "apiVersion": "storage.k8s.io/v1",
        "kind": "StorageClass",
        "metadata": {"name": "local"},
        "provisioner": "kubernetes.io/no-provisioner",
        "volumeBindingMode": "WaitForFirstConsumer",
    }
    volumes = [
        pv("free", "1Gi", storageClassName="local"),
        pv("reserved", "1Gi", storageClassName="local", claimRef=claim_ref()),
    ]
    store, synced_claim = synced([wait, *volumes, pvc("1Gi", storageClassName="local")])
    assert synced_claim.volume_name == "reserved" and synced_claim.phase == "Bound"
    free = store.get("PersistentVolume", "free")
    assert isinstance(free, PersistentVolume) and free.claim_ref is None


# kubernetes/examples ai/model-serving-tensorflow: pv.yaml, pvc.yaml and deployment.yaml as
# published (the claim names its volume; neither names a class), on one node.
TENSORFLOW_SERVING = """
apiVersion: v1
kind: Node
metadata: {name: node-1, labels: {kubernetes.io/hostname: node-1}}
status: {allocatable: {cpu: "4", memory: 8Gi, pods: "110"}}
---
apiVersion: v1
kind: PersistentVolume
metadata:
  name: my-model-pv
spec:
  capacity:
    storage: 1Gi
  accessModes:
    - ReadOnlyMany
  persistentVolumeReclaimPolicy: Retain
  hostPath:
    path: /mnt/models/my_model
---
apiVersion: v1
kind: PersistentVolumeClaim
metadata:
  name: my-model-pvc
spec:
  accessModes:
    - ReadOnlyMany
  resources:
    requests:
      storage: 1Gi
  volumeName: my-model-pv
---
apiVersion: apps/v1
kind: Deployment
metadata:
  name: tf-serving
  labels:
    app: tf-serving
spec:
  replicas: 1
  selector:
    matchLabels:
      app: tf-serving
  template:
    metadata:
      labels:
        app: tf-serving
    spec:
      containers:
        - name: tensorflow-serving
          image: tensorflow/serving:2.19.0
          args:
            - "--model_name=my_model"
            - "--port=8500"
            - "--rest_api_port=8501"
            - "--model_base_path=/models/my_model"
          ports:
            - containerPort: 8500  # gRPC
            - containerPort: 8501  # REST
          volumeMounts:
            - name: model-volume
              mountPath: /models/my_model
      volumes:
        - name: model-volume
          persistentVolumeClaim:
            claimName: my-model-pvc
"""


def test_the_tensorflow_serving_claim_that_names_its_volume_is_bound_and_its_pod_scheduled() -> (
    None
):
    simulation = new_simulation(
        load_manifests(TENSORFLOW_SERVING), seed=1, controllers=[start_persistent_volume_controller]
    )
    simulation.run()
    claim = simulation.store.get("PersistentVolumeClaim", "default/my-model-pvc")
    assert isinstance(claim, PersistentVolumeClaim)
    assert claim.phase == "Bound" and claim.annotations == {BIND_COMPLETED: "yes"}
    volume = simulation.store.get("PersistentVolume", "my-model-pv")
    assert isinstance(volume, PersistentVolume)
    assert volume.claim_ref == "default/my-model-pvc" and volume.phase == "Bound"
    (cycle,) = simulation.traces
    assert cycle.result == "Scheduled" and cycle.selected_node == "node-1"


@pytest.mark.parametrize(
    ("name", "volume", "objects", "want_phase"),
    [
        ("unused volume", pv("v", "1Gi"), [], "Available"),
        (
            "pre-bound to a claim that cannot take it",
            pv("v", "1Gi", claimRef=claim_ref()),
            [pvc("5Gi")],
            "Available",
        ),
        (
            "pre-bound to a claim that binds to it",
            pv("v", "1Gi", claimRef=claim_ref()),
            [pvc("1Gi")],
            "Bound",
        ),
    ],
)
def test_sync_volume_moves_a_pending_volume_on(
    name: str, volume: dict[str, Any], objects: list[dict[str, Any]], want_phase: str
) -> None:
    store = ClusterStore(load_manifests(json.dumps([volume, *objects])).objects)
    assert store.get("PersistentVolume", "v").phase == "Pending"
    start_persistent_volume_controller(store)
    assert store.get("PersistentVolume", "v").phase == want_phase


@pytest.mark.parametrize(
    ("name", "volumes", "want"),
    [
        (
            "fewest access modes first, though larger",
            [
                pv("rwo-rox-10", "10Gi", accessModes=["ReadWriteOnce", "ReadOnlyMany"]),
                pv("all-1", "1Gi", accessModes=["ReadWriteOnce", "ReadOnlyMany", "ReadWriteMany"]),
            ],
            "rwo-rox-10",
        ),
        (
            "a pre-bound volume in a set of more modes loses to a match in a set of fewer",
            [
                pv("rwo-3", "3Gi"),
                pv(
                    "reserved",
                    "5Gi",
                    accessModes=["ReadWriteOnce", "ReadWriteMany"],
                    claimRef=claim_ref(),
                ),
            ],
            "rwo-3",
        ),
        (
            "the next set when the first has no match",
            [
                pv("rwo-1", "1Gi"),
                pv("rwo-rwx-5", "5Gi", accessModes=["ReadWriteOnce", "ReadWriteMany"]),
            ],
            "rwo-rwx-5",
        ),
    ],
)
def test_find_by_claim_searches_access_mode_sets_fewest_modes_first(
    name: str, volumes: list[dict[str, Any]], want: str
) -> None:
    # pv_index.go findByClaim / allPossibleMatchingAccessModes.
    assert bound_volume([*volumes, pvc("2Gi")]) == want
