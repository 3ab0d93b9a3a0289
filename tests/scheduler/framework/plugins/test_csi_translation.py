"""CSI migration's topology translation of in-tree PVs, as VolumeBinding's checkBoundClaims
sees it.

Ports k8s.io/csi-translation-lib plugins/in_tree_volume_test.go ``TestAddTopology`` and the
topology half of gce_pd_test.go / aws_ebs_test.go ``TestTranslateInTreePVToCSI``, plus
binder.go's ``isPluginMigratedToCSIOnNode`` conditions.
"""

from __future__ import annotations

from typing import Any

import pytest

from schedviz.kube.decode import decode_object
from schedviz.kube.objects import (
    CSINode,
    NodeSelector,
    NodeSelectorRequirement,
    NodeSelectorTerm,
    PersistentVolume,
)
from schedviz.scheduler.framework.plugins.volumebinding.csi_translation import (
    TranslationError,
    _add_topology,
    try_translate_pv_to_csi,
)

GCE_KEY = "topology.gke.io/zone"
EBS_KEY = "topology.ebs.csi.aws.com/zone"
GA_ZONE = "topology.kubernetes.io/zone"
BETA_ZONE = "failure-domain.beta.kubernetes.io/zone"
BETA_REGION = "failure-domain.beta.kubernetes.io/region"
GA_REGION = "topology.kubernetes.io/region"


def _pv(
    source: dict[str, Any], labels: dict[str, str] | None = None, affinity: Any = None
) -> PersistentVolume:
    spec: dict[str, Any] = {
        "capacity": {"storage": "1Gi"},
        "accessModes": ["ReadWriteOnce"],
        **source,
    }
    if affinity is not None:
        spec["nodeAffinity"] = {"required": {"nodeSelectorTerms": affinity}}
    obj = decode_object(
        {
            "apiVersion": "v1",
            "kind": "PersistentVolume",
            "metadata": {"name": "pv", "labels": labels or {}},
            "spec": spec,
        }
    )
    assert isinstance(obj, PersistentVolume)
    return obj


def _csi_node(migrated: str | None) -> CSINode:
    annotations = {"storage.alpha.kubernetes.io/migrated-plugins": migrated} if migrated else {}
    obj = decode_object(
        {
            "apiVersion": "storage.k8s.io/v1",
            "kind": "CSINode",
            "metadata": {"name": "node-a", "annotations": annotations},
            "spec": {"drivers": []},
        }
    )
    assert isinstance(obj, CSINode)
    return obj


def _selector(*terms: tuple[tuple[str, tuple[str, ...]], ...]) -> NodeSelector:
    return NodeSelector(
        tuple(
            NodeSelectorTerm(tuple(NodeSelectorRequirement(k, "In", v) for k, v in term))
            for term in terms
        )
    )


GCE = {"gcePersistentDisk": {"pdName": "pd-1"}}
EBS = {"awsElasticBlockStore": {"volumeID": "vol-1"}}


def _expr(key: str, *values: str) -> dict[str, Any]:
    return {"key": key, "operator": "In", "values": list(values)}


@pytest.mark.parametrize(
    ("name", "pv", "migrated", "want"),
    [
        (
            "gce pd zone label becomes the driver's topology",
            _pv(GCE, {GA_ZONE: "zone-a"}),
            "kubernetes.io/gce-pd",
            _selector(((GCE_KEY, ("zone-a",)),)),
        ),
        (
            "multi-zone label gives every zone, sorted",
            _pv(GCE, {BETA_ZONE: "us-central1-c__us-central1-a"}),
            "kubernetes.io/gce-pd",
            _selector(((GCE_KEY, ("us-central1-a", "us-central1-c")),)),
        ),
        (
            "ga zone in node affinity is renamed, region kept",
            _pv(EBS, {}, [{"matchExpressions": [_expr(GA_ZONE, "z1"), _expr(GA_REGION, "r1")]}]),
            "kubernetes.io/aws-ebs,kubernetes.io/gce-pd",
            _selector(((EBS_KEY, ("z1",)), (GA_REGION, ("r1",)))),
        ),
        (
            "beta zone and region in node affinity become the driver's zone and ga region",
            _pv(
                GCE, {}, [{"matchExpressions": [_expr(BETA_ZONE, "z1"), _expr(BETA_REGION, "r1")]}]
            ),
            "kubernetes.io/gce-pd",
            _selector(((GCE_KEY, ("z1",)), (GA_REGION, ("r1",)))),
        ),
        (
            "no zone anywhere keeps the affinity as written",
            _pv(GCE, {}, [{"matchExpressions": [_expr("rack", "r1")]}]),
            "kubernetes.io/gce-pd",
            _selector((("rack", ("r1",)),)),
        ),
    ],
)
def test_it_translates_a_migrated_pvs_topology(
    name: str, pv: PersistentVolume, migrated: str, want: NodeSelector
) -> None:
    assert try_translate_pv_to_csi(pv, _csi_node(migrated)).node_affinity == want


@pytest.mark.parametrize(
    ("name", "pv", "csi_node"),
    [
        ("no CSINode", _pv(GCE, {GA_ZONE: "zone-a"}), None),
        ("CSINode without the annotation", _pv(GCE, {GA_ZONE: "zone-a"}), _csi_node(None)),
        (
            "another plugin migrated",
            _pv(GCE, {GA_ZONE: "zone-a"}),
            _csi_node("kubernetes.io/aws-ebs"),
        ),
        (
            "a CSI volume",
            _pv({"csi": {"driver": "d", "volumeHandle": "h"}}, {GA_ZONE: "z"}),
            _csi_node("kubernetes.io/gce-pd"),
        ),
        (
            "azure disk keeps its topology",
            _pv({"azureDisk": {"diskName": "d", "diskURI": "u"}}, {GA_ZONE: "z"}),
            _csi_node("kubernetes.io/azure-disk"),
        ),
    ],
)
def test_it_leaves_a_pv_not_migrated_on_the_node_as_written(
    name: str, pv: PersistentVolume, csi_node: CSINode | None
) -> None:
    assert try_translate_pv_to_csi(pv, csi_node) is pv


@pytest.mark.parametrize(
    ("name", "zones", "want"),
    [
        ("empty zones", [], None),
        ("only whitespace-named zones", [" ", "\n", "\t", "  "], None),
        ("including whitespace-named zones", [" ", "us-central1-a"], ("us-central1-a",)),
        (
            "unsorted zones",
            ["us-central1-f", "us-central1-a", "us-central1-c", "us-central1-b"],
            ("us-central1-a", "us-central1-b", "us-central1-c", "us-central1-f"),
        ),
    ],
)
def test_add_topology(name: str, zones: list[str], want: tuple[str, ...] | None) -> None:
    if want is None:
        with pytest.raises(TranslationError, match="there are no valid zones to add to pv"):
            _add_topology(None, GCE_KEY, zones)
    else:
        assert _add_topology(None, GCE_KEY, zones) == _selector(((GCE_KEY, want),))


def test_an_empty_zone_label_leaves_the_pv_as_written() -> None:
    # translateTopologyFromInTreeToCSI ignores addTopology's error.
    pv = _pv(GCE, {GA_ZONE: ""})
    assert try_translate_pv_to_csi(pv, _csi_node("kubernetes.io/gce-pd")).node_affinity is None
