"""In-tree PVs seen as their CSI drivers see them, for VolumeBinding's bound claims.

Mirrors ``tryTranslatePVToCSI`` and ``isPluginMigratedToCSIOnNode`` of
pkg/scheduler/framework/plugins/volumebinding/binder.go, over k8s.io/csi-translation-lib
(``translate.go`` ``IsPVMigratable``, ``GetInTreePluginNameFromSpec``, and
``plugins/in_tree_volume.go`` ``translateTopologyFromInTreeToCSI``): when the node's CSINode lists
a PV's in-tree plugin in ``storage.alpha.kubernetes.io/migrated-plugins``, the PV's node affinity
is checked as its CSI translation has it, with the zone under the CSI driver's own topology key
(a GCE PD in ``topology.kubernetes.io/zone: zone-a`` requires ``topology.gke.io/zone: zone-a``).

Only the topology matters to the scheduler, so only it is translated. The plugins whose
translation rewrites it are GCE PD, AWS EBS and Cinder; the other migratable sources (Azure Disk,
Azure File, vSphere, Portworx) keep their node affinity as written, as their translators do
(vSphere's own zone and region keys are not modelled).
"""

from __future__ import annotations

import contextlib
from collections.abc import Mapping
from dataclasses import replace

from schedviz.kube.objects import (
    LABEL_TOPOLOGY_REGION,
    LABEL_TOPOLOGY_ZONE,
    CSINode,
    NodeSelector,
    NodeSelectorRequirement,
    NodeSelectorTerm,
    PersistentVolume,
)
from schedviz.scheduler.framework.plugins.volumebinding.storage import (
    MIGRATED_PLUGINS_ANNOTATION,
    manifest_annotations,
)
from schedviz.scheduler.framework.plugins.volumezone import (
    LABEL_FAILURE_DOMAIN_BETA_REGION,
    LABEL_FAILURE_DOMAIN_BETA_ZONE,
)

# cloud-provider volume.LabelMultiZoneDelimiter: a PV label naming several zones.
LABEL_MULTI_ZONE_DELIMITER = "__"

# PV source field -> (in-tree plugin name, the CSI driver's zone key; "" when the translator
# leaves the topology alone).
_MIGRATABLE_SOURCES: dict[str, tuple[str, str]] = {
    "gcePersistentDisk": ("kubernetes.io/gce-pd", "topology.gke.io/zone"),
    "awsElasticBlockStore": ("kubernetes.io/aws-ebs", "topology.ebs.csi.aws.com/zone"),
    "cinder": ("kubernetes.io/cinder", "topology.cinder.csi.openstack.org/zone"),
    "azureDisk": ("kubernetes.io/azure-disk", ""),
    "azureFile": ("kubernetes.io/azure-file", ""),
    "vsphereVolume": ("kubernetes.io/vsphere-volume", ""),
    "portworxVolume": ("kubernetes.io/portworx-volume", ""),
}


class TranslationError(ValueError):
    """addTopology found no zone to add."""


def _in_tree_source(pv: PersistentVolume) -> tuple[str, str] | None:
    spec = pv.manifest.get("spec")
    if not isinstance(spec, Mapping):
        return None
    for source, plugin in _MIGRATABLE_SOURCES.items():
        if spec.get(source) is not None:
            return plugin
    return None


def is_plugin_migrated_to_csi_on_node(plugin_name: str, csi_node: CSINode | None) -> bool:
    if csi_node is None:
        return False
    migrated = manifest_annotations(csi_node.manifest).get(MIGRATED_PLUGINS_ANNOTATION)
    if not isinstance(migrated, str) or not migrated:
        return False
    return plugin_name in migrated.split(",")


def try_translate_pv_to_csi(pv: PersistentVolume, csi_node: CSINode | None) -> PersistentVolume:
    """The PV with the node affinity of its CSI translation when its plugin is migrated on the
    node, else the PV itself."""
    source = _in_tree_source(pv)
    if source is None:
        return pv
    plugin_name, topology_key = source
    if not is_plugin_migrated_to_csi_on_node(plugin_name, csi_node) or not topology_key:
        return pv
    return replace(pv, node_affinity=_translate_topology(pv, topology_key))


def _terms(affinity: NodeSelector | None) -> tuple[NodeSelectorTerm, ...]:
    return affinity.node_selector_terms if affinity is not None else ()


def _has_key(affinity: NodeSelector | None, key: str) -> bool:
    return any(r.key == key for term in _terms(affinity) for r in term.match_expressions)


def _topology_label(pv: PersistentVolume) -> tuple[str, str]:
    """getTopologyLabel: GA or beta zone and region labels, node affinity first, then labels."""
    if _has_key(pv.node_affinity, LABEL_TOPOLOGY_ZONE):
        return LABEL_TOPOLOGY_ZONE, LABEL_TOPOLOGY_REGION
    if _has_key(pv.node_affinity, LABEL_FAILURE_DOMAIN_BETA_ZONE):
        return LABEL_FAILURE_DOMAIN_BETA_ZONE, LABEL_FAILURE_DOMAIN_BETA_REGION
    if LABEL_TOPOLOGY_ZONE in pv.labels:
        return LABEL_TOPOLOGY_ZONE, LABEL_TOPOLOGY_REGION
    if LABEL_FAILURE_DOMAIN_BETA_ZONE in pv.labels:
        return LABEL_FAILURE_DOMAIN_BETA_ZONE, LABEL_FAILURE_DOMAIN_BETA_REGION
    return LABEL_TOPOLOGY_ZONE, LABEL_TOPOLOGY_REGION


def _topology_values(affinity: NodeSelector | None, key: str) -> list[str]:
    requirements = (r for term in _terms(affinity) for r in term.match_expressions)
    return sorted({v for r in requirements if r.key == key for v in r.values})


def _replace_topology(affinity: NodeSelector | None, old: str, new: str) -> NodeSelector | None:
    if affinity is None or not affinity.node_selector_terms:
        return affinity
    return NodeSelector(
        tuple(
            NodeSelectorTerm(
                tuple(
                    NodeSelectorRequirement(new, r.operator, r.values) if r.key == old else r
                    for r in term.match_expressions
                ),
                term.match_fields,
            )
            for term in affinity.node_selector_terms
        )
    )


def _add_topology(affinity: NodeSelector | None, key: str, zones: list[str]) -> NodeSelector:
    """addTopology: ``key In zones`` appended to every term (one empty term when there are
    none)."""
    values = tuple(sorted({z.strip() for z in zones if z.strip()}))
    if not values:
        raise TranslationError("there are no valid zones to add to pv")
    terms = _terms(affinity) or (NodeSelectorTerm(),)
    requirement = NodeSelectorRequirement(key, "In", values)
    return NodeSelector(
        tuple(
            NodeSelectorTerm((*term.match_expressions, requirement), term.match_fields)
            for term in terms
        )
    )


def _translate_topology(pv: PersistentVolume, csi_topology_key: str) -> NodeSelector | None:
    """translateTopologyFromInTreeToCSI: the zone requirement moves to the driver's key (or is
    made from the PV's zone label), a beta region requirement to the GA region label."""
    zone_label, region_label = _topology_label(pv)
    affinity = pv.node_affinity
    if _topology_values(affinity, zone_label):
        affinity = _replace_topology(affinity, zone_label, csi_topology_key)
    elif zone_label in pv.labels:
        zones = pv.labels[zone_label].split(LABEL_MULTI_ZONE_DELIMITER)
        # Upstream ignores addTopology's error: a label with no zone leaves the PV as it was.
        with contextlib.suppress(TranslationError):
            affinity = _add_topology(affinity, csi_topology_key, zones)
    if region_label == LABEL_FAILURE_DOMAIN_BETA_REGION and _topology_values(
        affinity, region_label
    ):
        affinity = _replace_topology(affinity, region_label, LABEL_TOPOLOGY_REGION)
    return affinity
