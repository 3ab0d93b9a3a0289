"""decode_object on nodes and the other kinds, their versions and quantities, after
pkg/apis/core/validation/validation_test.go."""

from typing import Any

import pytest
import yaml
from decode_helpers import (
    LABEL_KEY_NAME_MSG,
    QUANTITY_MSG,
    errors_of,
    node,
)

from schedviz.kube.decode import decode_object
from schedviz.kube.decode.quantities import canonical_quantity
from schedviz.kube.errors import DocumentError, InvalidObjectError
from schedviz.kube.objects import (
    CSINode,
    Namespace,
    Node,
    PersistentVolume,
    PersistentVolumeClaim,
    Pod,
    PodDisruptionBudget,
    PriorityClass,
    StorageClass,
)
from schedviz.kube.quantity import Quantity

# --- Nodes. -----------------------------------------------------------------------------------


def test_node_decodes_scheduling_fields() -> None:
    doc = node(
        capacity={"cpu": "4", "memory": "8Gi", "pods": "110"},
        allocatable={"cpu": "3800m", "memory": "7Gi", "pods": "110"},
        images=[{"names": ["nginx:1.25", "docker.io/nginx@sha256:abc"], "sizeBytes": 1000}],
        conditions=[{"type": "Ready", "status": "True"}],
    )
    doc["metadata"]["labels"] = {"kubernetes.io/hostname": "n1"}
    doc["spec"] = {
        "unschedulable": True,
        "taints": [{"key": "gpu", "value": "yes", "effect": "NoSchedule"}],
    }
    n = decode_object(doc)
    assert isinstance(n, Node)
    assert n.unschedulable
    assert str(n.taints[0]) == "gpu=yes:NoSchedule"
    assert n.allocatable["cpu"] == Quantity.parse("3.8")
    assert n.images[0].size_bytes == 1000
    assert n.conditions[0].type == "Ready"
    assert n.labels == {"kubernetes.io/hostname": "n1"}


def test_node_allocatable_defaults_to_capacity() -> None:
    n = decode_object(node(capacity={"cpu": "4"}))
    assert isinstance(n, Node)
    assert n.allocatable == {"cpu": Quantity.parse("4")}


NODE_ERROR_CASES = [
    (
        "taint effect",
        {"taints": [{"key": "a", "effect": "Foo"}]},
        'metadata.taints[0].effect: Unsupported value: "Foo": supported values: "NoSchedule", '
        '"PreferNoSchedule", "NoExecute"',
    ),
    (
        "taint without effect",
        {"taints": [{"key": "a"}]},
        "metadata.taints[0].effect: Required value",
    ),
    (
        "taint key",
        {"taints": [{"key": "a b", "effect": "NoSchedule"}]},
        f'metadata.taints[0].key: Invalid value: "a b": {LABEL_KEY_NAME_MSG}',
    ),
    (
        "duplicate taint",
        {
            "taints": [
                {"key": "a", "effect": "NoSchedule"},
                {"key": "a", "value": "x", "effect": "NoSchedule"},
            ]
        },
        'metadata.taints[1]: Duplicate value: core.Taint{Key:"a", Value:"x", Effect:"NoSchedule", '
        "TimeAdded:(*v1.Time)(nil)}: taints must be unique by key and effect pair",
    ),
]


@pytest.mark.parametrize(
    ("name", "spec", "expected"), NODE_ERROR_CASES, ids=[c[0] for c in NODE_ERROR_CASES]
)
def test_it_rejects_invalid_node_taints(name: str, spec: dict[str, Any], expected: str) -> None:
    doc = node()
    doc["spec"] = spec
    assert errors_of(doc) == [expected]


def test_it_rejects_invalid_node_capacity() -> None:
    assert errors_of(node(capacity={"cpu": "-1", "pods": "1.5", "memory": "lots"})) == [
        f'status.capacity.memory: Invalid value: "lots": {QUANTITY_MSG}',
        'status.capacity.cpu: Invalid value: "-1": must be greater than or equal to 0',
        "status.capacity.pods: Invalid value: 1500m: must be an integer",
    ]


# --- Other kinds. -----------------------------------------------------------------------------


def test_namespace_gets_its_name_label_and_a_label_name() -> None:
    ns = decode_object({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "team-a"}})
    assert isinstance(ns, Namespace)
    assert ns.labels == {"kubernetes.io/metadata.name": "team-a"}
    bad = {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "team.a"}}
    assert errors_of(bad) == ['metadata.name: Invalid value: "team.a": must not contain dots']


def priority_class(name: str = "high", value: int = 1000, **extra: Any) -> dict[str, Any]:
    return {
        "apiVersion": "scheduling.k8s.io/v1",
        "kind": "PriorityClass",
        "metadata": {"name": name},
        "value": value,
        **extra,
    }


def test_priority_class_defaults_preemption_policy() -> None:
    pc = decode_object(priority_class(globalDefault=True))
    assert isinstance(pc, PriorityClass)
    assert (pc.value, pc.global_default, pc.preemption_policy) == (
        1000,
        True,
        "PreemptLowerPriority",
    )


@pytest.mark.parametrize(
    ("doc", "expected"),
    [
        (
            priority_class(value=2_000_000_000),
            "value: Forbidden: maximum allowed value of a user defined priority is 1000000000",
        ),
        (
            priority_class(name="system-high"),
            "metadata.name: Forbidden: priority class names with 'system-' prefix are reserved "
            "for system "
            "use only. error: system-high is not a known system priority class",
        ),
        (
            priority_class(name="system-node-critical", value=5),
            "metadata.name: Forbidden: priority class names with 'system-' prefix are reserved "
            "for system "
            "use only. error: value of system-node-critical PriorityClass must be 2000001000",
        ),
        (
            priority_class(preemptionPolicy="Always"),
            'preemptionPolicy: Unsupported value: "Always": supported values: '
            '"PreemptLowerPriority", "Never"',
        ),
        (
            priority_class(value=2**40),
            "value: Invalid value: 1099511627776: must be between -2147483648 and 2147483647, "
            "inclusive",
        ),
    ],
)
def test_it_rejects_invalid_priority_classes(doc: dict[str, Any], expected: str) -> None:
    assert errors_of(doc) == [expected]


def test_priority_class_error_names_its_group() -> None:
    with pytest.raises(InvalidObjectError) as info:
        decode_object(priority_class(value=2_000_000_000))
    assert str(info.value).startswith('PriorityClass.scheduling.k8s.io "high" is invalid: ')


def pdb(**spec: Any) -> dict[str, Any]:
    return {
        "apiVersion": "policy/v1",
        "kind": "PodDisruptionBudget",
        "metadata": {"name": "web"},
        "spec": spec,
    }


def test_pdb_decodes() -> None:
    budget = decode_object(pdb(minAvailable="50%", selector={"matchLabels": {"app": "web"}}))
    assert isinstance(budget, PodDisruptionBudget)
    assert (budget.namespace, budget.min_available, budget.max_unavailable) == (
        "default",
        "50%",
        None,
    )
    assert budget.selector is not None and budget.selector.match_labels == {"app": "web"}


@pytest.mark.parametrize(
    ("doc", "expected"),
    [
        (
            pdb(minAvailable=1, maxUnavailable=1),
            "spec: Invalid value: policy.PodDisruptionBudgetSpec{MinAvailable:1, "
            "MaxUnavailable:1}: "
            "minAvailable and maxUnavailable cannot be both set",
        ),
        (
            pdb(minAvailable=-1),
            "spec.minAvailable: Invalid value: -1: must be greater than or equal to 0",
        ),
        (
            pdb(maxUnavailable="150%"),
            'spec.maxUnavailable: Invalid value: "150%": must not be greater than 100%',
        ),
        (
            pdb(minAvailable="half"),
            "spec.minAvailable: Invalid value: half: a valid percent string must be a numeric "
            "string followed "
            "by an ending '%' (e.g. '1%',  or '93%', regex used for validation is '[0-9]+%')",
        ),
    ],
)
def test_it_rejects_invalid_pdbs(doc: dict[str, Any], expected: str) -> None:
    assert errors_of(doc) == [expected]


def pv(**spec: Any) -> dict[str, Any]:
    return {
        "apiVersion": "v1",
        "kind": "PersistentVolume",
        "metadata": {"name": "pv-1"},
        "spec": spec,
    }


def test_pv_decodes_with_pending_phase() -> None:
    volume = decode_object(
        pv(
            capacity={"storage": "10Gi"},
            accessModes=["ReadWriteOnce"],
            storageClassName="fast",
            csi={"driver": "ebs.csi.aws.com", "volumeHandle": "vol-1"},
            claimRef={"namespace": "default", "name": "data"},
            nodeAffinity={
                "required": {
                    "nodeSelectorTerms": [
                        {"matchExpressions": [{"key": "zone", "operator": "In", "values": ["a"]}]}
                    ]
                }
            },
        )
    )
    assert isinstance(volume, PersistentVolume)
    assert volume.phase == "Pending"
    assert volume.csi_driver == "ebs.csi.aws.com"
    assert volume.claim_ref == "default/data"
    assert volume.node_affinity is not None and len(volume.node_affinity.node_selector_terms) == 1


def test_pv_without_source_modes_or_capacity_is_refused() -> None:
    assert errors_of(pv()) == [
        "spec.accessModes: Required value",
        "spec.capacity: Required value",
        'spec.capacity: Unsupported value: core.ResourceList{}: supported values: "storage"',
        "spec: Required value: must specify a volume type",
    ]


def test_pvc_decodes_and_requires_storage() -> None:
    claim = {
        "apiVersion": "v1",
        "kind": "PersistentVolumeClaim",
        "metadata": {"name": "data", "namespace": "apps"},
        "spec": {"accessModes": ["ReadWriteOnce"], "resources": {"requests": {"storage": "1Gi"}}},
    }
    decoded = decode_object(claim)
    assert isinstance(decoded, PersistentVolumeClaim)
    assert (decoded.key, decoded.phase, decoded.storage_class_name) == (
        "apps/data",
        "Pending",
        None,
    )
    claim["spec"] = {"accessModes": ["ReadWriteSometimes"]}
    assert errors_of(claim) == [
        'spec.accessModes: Unsupported value: "ReadWriteSometimes": supported values: '
        '"ReadOnlyMany", '
        '"ReadWriteMany", "ReadWriteOnce", "ReadWriteOncePod"',
        "spec.resources[storage]: Required value",
    ]


def test_storage_class_defaults_binding_mode_and_reads_topologies() -> None:
    sc = decode_object(
        {
            "apiVersion": "storage.k8s.io/v1",
            "kind": "StorageClass",
            "metadata": {"name": "fast"},
            "provisioner": "ebs.csi.aws.com",
            "allowedTopologies": [
                {"matchLabelExpressions": [{"key": "zone", "values": ["a", "b"]}]}
            ],
        }
    )
    assert isinstance(sc, StorageClass)
    assert sc.volume_binding_mode == "Immediate"
    assert sc.allowed_topologies[0].match_expressions[0].values == ("a", "b")
    bad = {
        "apiVersion": "storage.k8s.io/v1",
        "kind": "StorageClass",
        "metadata": {"name": "slow"},
        "provisioner": "x",
        "volumeBindingMode": "Later",
    }
    assert errors_of(bad) == [
        'volumeBindingMode: Unsupported value: "Later": supported values: "Immediate", '
        '"WaitForFirstConsumer"'
    ]


def test_csi_node_decodes_drivers() -> None:
    csi = decode_object(
        {
            "apiVersion": "storage.k8s.io/v1",
            "kind": "CSINode",
            "metadata": {"name": "n1"},
            "spec": {
                "drivers": [
                    {"name": "ebs.csi.aws.com", "nodeID": "i-1", "allocatable": {"count": 25}}
                ]
            },
        }
    )
    assert isinstance(csi, CSINode)
    assert csi.drivers[0].allocatable_count == 25


# --- Kinds and versions. ----------------------------------------------------------------------


@pytest.mark.parametrize(
    ("doc", "message"),
    [
        ({"apiVersion": "v1", "kind": "Foo"}, 'no matches for kind "Foo" in version "v1"'),
        (
            {"apiVersion": "apps/v1", "kind": "Pod"},
            'no matches for kind "Pod" in version "apps/v1"',
        ),
        (
            {"apiVersion": "policy/v1beta1", "kind": "PodDisruptionBudget"},
            'no matches for kind "PodDisruptionBudget" in version "policy/v1beta1"',
        ),
        ({"apiVersion": "v1"}, "Object 'Kind' is missing"),
        ({"kind": "Pod"}, "Object 'apiVersion' is missing"),
    ],
)
def test_unknown_kinds_and_versions_are_refused(doc: dict[str, Any], message: str) -> None:
    with pytest.raises(DocumentError) as info:
        decode_object(doc)
    assert str(info.value) == message


@pytest.mark.parametrize(
    ("text", "canonical"),
    [
        ("1", "1"),
        ("1000m", "1"),
        ("1.5", "1500m"),
        ("2000", "2k"),
        ("1500", "1500"),
        ("0.1", "100m"),
        ("1024Mi", "1Gi"),
        ("1.5Gi", "1536Mi"),
        ("512Ki", "512Ki"),
        ("0.5Ki", "512"),
        ("1e3", "1e3"),
        ("1.5e3", "1500"),
        ("-1", "-1"),
        ("-100m", "-100m"),
        ("0", "0"),
        ("1.5n", "2n"),
    ],
)
def test_canonical_quantity_is_upstreams_string_form(text: str, canonical: str) -> None:
    assert canonical_quantity(Quantity.parse(text)) == canonical


def test_a_kubectl_style_manifest_decodes() -> None:
    doc = yaml.safe_load(
        """
apiVersion: v1
kind: Pod
metadata:
  name: web-7d4b9c-x2x9z
  namespace: shop
  uid: 0b8a6c4e-1111-2222-3333-444455556666
  labels: {app: web, pod-template-hash: 7d4b9c}
  creationTimestamp: "2024-05-01T10:00:00Z"
spec:
  containers:
  - name: web
    image: nginx:1.25
    imagePullPolicy: IfNotPresent
    terminationMessagePolicy: File
    resources:
      requests: {cpu: 250m, memory: 64Mi}
  dnsPolicy: ClusterFirst
  restartPolicy: Always
  schedulerName: default-scheduler
  priority: 0
  preemptionPolicy: PreemptLowerPriority
  enableServiceLinks: true
  terminationGracePeriodSeconds: 30
status:
  phase: Pending
"""
    )
    p = decode_object(doc)
    assert isinstance(p, Pod)
    assert (p.key, p.uid, p.creation_timestamp) == (
        "shop/web-7d4b9c-x2x9z",
        "0b8a6c4e-1111-2222-3333-444455556666",
        "2024-05-01T10:00:00Z",
    )
