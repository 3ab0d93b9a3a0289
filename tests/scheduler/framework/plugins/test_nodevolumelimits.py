"""Ports pkg/scheduler/framework/plugins/nodevolumelimits/csi_test.go.

Left out: the VolumeAttachment cases and the ephemeral-claim ownership case, none of which
this port models (see the plugin's docstring). Upstream's fake listers word NotFound with the
plural resource; the real listers, which these tests follow, use the singular.
"""

from __future__ import annotations

import pytest

from schedviz.kube.objects import (
    CSINode,
    CSINodeDriver,
    PersistentVolume,
    PersistentVolumeClaim,
    Pod,
    StorageClass,
    Volume,
)
from schedviz.scheduler.framework.cycle_state import CycleState
from schedviz.scheduler.framework.interface import Code, Status, new_status
from schedviz.scheduler.framework.plugins.nodevolumelimits import (
    ERR_REASON_MAX_VOLUME_COUNT_EXCEEDED,
    NAME,
    new,
)
from schedviz.scheduler.framework.plugins.nodevolumelimits.csi import translate_in_tree_volume
from schedviz.scheduler.framework.types import (
    ActionType,
    ClusterEvent,
    EventResource,
    NodeInfo,
    QueueingHint,
)
from schedviz.scheduler.testing.framework_helpers import FakeHandle
from schedviz.scheduler.testing.wrappers import make_node, make_pod

EBS = "ebs.csi.aws.com"
GCE = "pd.csi.storage.gke.io"
HOSTPATH_IN_TREE = "kubernetes.io/hostpath"
AWS_EBS_IN_TREE = "kubernetes.io/aws-ebs"
SC_NAME = "csi-sc"
NODE_NAME = "node-for-max-pd-test-1"
EXCEEDED = new_status(Code.Unschedulable, ERR_REASON_MAX_VOLUME_COUNT_EXCEEDED)
SKIP = Status(Code.Skip)


def pod_with_claims(*claims: str, name: str = "p") -> Pod:
    wrapper = make_pod().name(name)
    for claim in claims:
        wrapper = wrapper.pvc(claim)
    return wrapper.obj()


def ephemeral_pod(name: str, namespace: str, *volumes: str) -> Pod:
    wrapper = make_pod().name(name).namespace(namespace)
    for volume in volumes:
        wrapper = wrapper.volume(Volume(name=volume, source_kind="ephemeral"))
    return wrapper.obj()


def fake_objects(driver_names: list[str]) -> list[object]:
    """getFakeCSIPVLister, getFakeCSIPVCLister and getFakeCSIStorageClassLister."""
    objects: list[object] = []
    for driver in driver_names:
        for j in range(4):
            handle = f"csi-{driver}-{j}"
            if driver == HOSTPATH_IN_TREE:
                pv = PersistentVolume(handle)
            elif driver == AWS_EBS_IN_TREE:
                pv = PersistentVolume(
                    handle, manifest={"spec": {"awsElasticBlockStore": {"volumeID": handle}}}
                )
            else:
                pv = PersistentVolume(
                    handle,
                    csi_driver=driver,
                    manifest={"spec": {"csi": {"driver": driver, "volumeHandle": handle}}},
                )
            objects += [pv, PersistentVolumeClaim(handle, volume_name=handle)]
    objects += [
        PersistentVolumeClaim("csi-4", storage_class_name=SC_NAME),
        PersistentVolumeClaim("csi-5"),
        # A claim whose PV is missing, with a class that exists.
        PersistentVolumeClaim("csi-6", storage_class_name=SC_NAME, volume_name="missing-in-action"),
        StorageClass(SC_NAME, provisioner=driver_names[0]),
    ]
    return objects


def csi_node(limit_source: str, limit: int, driver_names: list[str]) -> CSINode | None:
    """getNodeWithPodAndVolumeLimits' CSINode."""
    if limit_source == "csinode":
        drivers = tuple(CSINodeDriver(d, NODE_NAME, limit) for d in driver_names)
    elif limit_source == "csinode-with-no-limit":
        drivers = tuple(CSINodeDriver(d, NODE_NAME) for d in driver_names)
    elif limit_source == "no-csi-driver":
        drivers = ()
    else:
        return None
    # enableMigrationOnNode(csiNode, AWSEBSInTreePluginName)
    annotations = {"storage.alpha.kubernetes.io/migrated-plugins": AWS_EBS_IN_TREE}
    return CSINode(NODE_NAME, drivers, manifest={"metadata": {"annotations": annotations}})


RUNNING_POD = pod_with_claims("csi-ebs.csi.aws.com-3")
PENDING_VOLUME_POD = pod_with_claims("csi-4")
UNBOUND_PVC_POD_2 = pod_with_claims("csi-4", name="q")
MISSING_PV_POD = pod_with_claims("csi-6")
NO_SC_PVC_POD = pod_with_claims("csi-5")
GCE_TWO_VOL_POD = pod_with_claims("csi-pd.csi.storage.gke.io-1", "csi-pd.csi.storage.gke.io-2")
CSI_EBS_ONE_VOL_POD = pod_with_claims("csi-ebs.csi.aws.com-0")
CSI_EBS_TWO_VOL_POD = pod_with_claims("csi-ebs.csi.aws.com-1", "csi-ebs.csi.aws.com-2")
IN_TREE_NON_MIGRATABLE_POD = pod_with_claims("csi-kubernetes.io/hostpath-0")
IN_TREE_ONE_VOL_POD = pod_with_claims("csi-kubernetes.io/aws-ebs-0")
IN_TREE_TWO_VOL_POD = pod_with_claims("csi-kubernetes.io/aws-ebs-1", "csi-kubernetes.io/aws-ebs-2")
IN_TREE_INLINE_POD_WITH_SAME_CSI_VOLUME_ID = (
    make_pod()
    .name("p")
    .volume(
        Volume(
            name="aws",
            source_kind="awsElasticBlockStore",
            source={"volumeID": "csi-ebs.csi.aws.com-1"},
        )
    )
    .obj()
)
INLINE_MIGRATABLE_POD_WITH_CONFIG_MAP_AND_SECRET = (
    make_pod()
    .name("p")
    .volume(Volume(name="cm", source_kind="configMap"))
    .volume(Volume(name="secret", source_kind="secret"))
    .volume(
        Volume(name="aws", source_kind="awsElasticBlockStore", source={"volumeID": "aws-inline1"})
    )
    .obj()
)
IN_TREE_INLINE_POD = (
    make_pod()
    .name("p")
    .volume(
        Volume(name="aws", source_kind="awsElasticBlockStore", source={"volumeID": "aws-inline1"})
    )
    .obj()
)
EPHEMERAL_POD = ephemeral_pod("abc", "test", "xyz")
EPHEMERAL_TWO_VOLUME_POD = ephemeral_pod("abc", "test", "x", "y")
EPHEMERAL_CLAIM = PersistentVolumeClaim("abc-xyz", namespace="test", storage_class_name=SC_NAME)
EPHEMERAL_CLAIM_X = PersistentVolumeClaim("abc-x", namespace="test", storage_class_name=SC_NAME)
EPHEMERAL_CLAIM_Y = PersistentVolumeClaim("abc-y", namespace="test", storage_class_name=SC_NAME)
CONFIG_MAP = Volume(name="cm", source_kind="configMap")
SECRET = Volume(name="secret", source_kind="secret")
ONLY_CONFIG_MAP_AND_SECRET_POD = make_pod().name("p").volume(CONFIG_MAP).volume(SECRET).obj()
PVC_POD_WITH_CONFIG_MAP_AND_SECRET = (
    make_pod().name("p").volume(CONFIG_MAP).volume(SECRET).pvc("csi-ebs.csi.aws.com-0").obj()
)
EPHEMERAL_POD_WITH_CONFIG_MAP_AND_SECRET = (
    make_pod()
    .name("abc")
    .namespace("test")
    .volume(CONFIG_MAP)
    .volume(SECRET)
    .volume(Volume(name="xyz", source_kind="ephemeral"))
    .obj()
)
EPHEMERAL_MISSING = new_status(
    Code.UnschedulableAndUnresolvable,
    'looking up PVC test/abc-xyz: persistentvolumeclaim "abc-xyz" not found',
)

# (test, new pod, existing pods, extra claims, max vols, drivers, limit source, want filter,
#  want pre-filter)
CASES = [
    pytest.param(
        CSI_EBS_ONE_VOL_POD, [RUNNING_POD, CSI_EBS_TWO_VOL_POD], [], 4, [EBS], "csinode",
        None, None, id="fits when node volume limit >= new pods CSI volume",
    ),
    pytest.param(
        CSI_EBS_ONE_VOL_POD, [RUNNING_POD, CSI_EBS_TWO_VOL_POD], [], 2, [EBS], "csinode",
        EXCEEDED, None, id="doesn't when node volume limit <= pods CSI volume",
    ),
    pytest.param(
        CSI_EBS_ONE_VOL_POD, [RUNNING_POD, CSI_EBS_TWO_VOL_POD], [], 2, [EBS],
        "csinode-with-no-limit", None, None, id="should when driver does not support volume limits",
    ),
    pytest.param(
        CSI_EBS_ONE_VOL_POD, [PENDING_VOLUME_POD, CSI_EBS_TWO_VOL_POD], [], 2, [EBS], "csinode",
        EXCEEDED, None, id="count pending PVCs towards volume limit <= pods CSI volume",
    ),
    pytest.param(
        CSI_EBS_ONE_VOL_POD, [PENDING_VOLUME_POD, UNBOUND_PVC_POD_2, CSI_EBS_TWO_VOL_POD], [], 4,
        [EBS], "csinode", None, None,
        id="count multiple pending pvcs towards volume limit >= pods CSI volume",
    ),
    pytest.param(
        CSI_EBS_ONE_VOL_POD, [MISSING_PV_POD, CSI_EBS_TWO_VOL_POD], [], 2, [EBS], "csinode",
        EXCEEDED, None, id="should count PVCs with invalid PV name but valid SC",
    ),
    pytest.param(
        CSI_EBS_ONE_VOL_POD, [RUNNING_POD, NO_SC_PVC_POD], [], 2, [EBS], "csinode", None, None,
        id="don't count pvcs with missing SC towards volume limit",
    ),
    pytest.param(
        CSI_EBS_ONE_VOL_POD, [GCE_TWO_VOL_POD, CSI_EBS_TWO_VOL_POD], [], 2, [EBS, GCE],
        "csinode", EXCEEDED, None, id="count pvcs with the same type towards volume limit",
    ),
    pytest.param(
        GCE_TWO_VOL_POD, [CSI_EBS_TWO_VOL_POD, RUNNING_POD], [], 2, [EBS, GCE], "csinode", None,
        None, id="don't count pvcs with different type towards volume limit",
    ),
    pytest.param(
        IN_TREE_INLINE_POD, [], [], 0, ["kubernetes.io/aws-ebs", EBS], "", None, None,
        id="nil csi node",
    ),
    pytest.param(
        IN_TREE_ONE_VOL_POD, [IN_TREE_TWO_VOL_POD], [], 2, [AWS_EBS_IN_TREE, EBS], "csinode",
        EXCEEDED, None, id="should count in-tree volumes if migration is enabled",
    ),
    pytest.param(
        PENDING_VOLUME_POD, [IN_TREE_TWO_VOL_POD], [], 2, [AWS_EBS_IN_TREE, EBS], "csinode",
        EXCEEDED, None, id="should count unbound in-tree volumes if migration is enabled",
    ),
    pytest.param(
        IN_TREE_ONE_VOL_POD, [IN_TREE_TWO_VOL_POD], [], 2, [AWS_EBS_IN_TREE, EBS],
        "csinode-with-no-limit", None, None,
        id="should not limit pod if volume used does not report limits",
    ),
    pytest.param(
        IN_TREE_NON_MIGRATABLE_POD, [CSI_EBS_TWO_VOL_POD], [], 2, [HOSTPATH_IN_TREE, EBS],
        "csinode", None, None, id="should not count non-migratable in-tree volumes",
    ),
    pytest.param(
        IN_TREE_INLINE_POD, [IN_TREE_TWO_VOL_POD], [], 2, [AWS_EBS_IN_TREE, EBS], "csinode",
        EXCEEDED, None, id="should count in-tree inline volumes if migration is enabled",
    ),
    pytest.param(
        IN_TREE_ONE_VOL_POD, [CSI_EBS_TWO_VOL_POD], [], 2, [AWS_EBS_IN_TREE, EBS], "csinode",
        EXCEEDED, None,
        id="should count in-tree and csi volumes if migration is enabled (when scheduling "
        "in-tree volumes)",
    ),
    pytest.param(
        IN_TREE_INLINE_POD, [CSI_EBS_TWO_VOL_POD, IN_TREE_ONE_VOL_POD], [], 3,
        [AWS_EBS_IN_TREE, EBS], "csinode", EXCEEDED, None,
        id="should count in-tree, inline and csi volumes if migration is enabled (when "
        "scheduling in-tree volumes)",
    ),
    pytest.param(
        IN_TREE_INLINE_POD_WITH_SAME_CSI_VOLUME_ID, [CSI_EBS_TWO_VOL_POD, IN_TREE_ONE_VOL_POD],
        [], 3, [AWS_EBS_IN_TREE, EBS], "csinode", None, None,
        id="should not count in-tree, inline and csi volumes if migration is enabled (when "
        "scheduling in-tree volumes)",
    ),
    pytest.param(
        CSI_EBS_ONE_VOL_POD, [IN_TREE_TWO_VOL_POD], [], 2, [AWS_EBS_IN_TREE, EBS], "csinode",
        EXCEEDED, None,
        id="should count in-tree and csi volumes if migration is enabled (when scheduling csi "
        "volumes)",
    ),
    pytest.param(
        INLINE_MIGRATABLE_POD_WITH_CONFIG_MAP_AND_SECRET, [IN_TREE_TWO_VOL_POD], [], 2,
        [AWS_EBS_IN_TREE, EBS], "csinode", EXCEEDED, None,
        id="don't skip Filter when the pod has inline migratable volumes",
    ),
    pytest.param(
        EPHEMERAL_POD, [], [], 0, [EBS], "csinode-with-no-limit", EPHEMERAL_MISSING, None,
        id="ephemeral volume missing",
    ),
    pytest.param(
        EPHEMERAL_POD, [], [EPHEMERAL_CLAIM], 0, [EBS], "csinode-with-no-limit", None, None,
        id="ephemeral volume unbound",
    ),
    pytest.param(
        EPHEMERAL_POD, [RUNNING_POD, CSI_EBS_TWO_VOL_POD], [EPHEMERAL_CLAIM], 2, [EBS],
        "csinode", EXCEEDED, None,
        id="ephemeral doesn't when node volume limit <= pods CSI volume",
    ),
    pytest.param(
        CSI_EBS_ONE_VOL_POD, [RUNNING_POD, EPHEMERAL_TWO_VOLUME_POD],
        [EPHEMERAL_CLAIM_X, EPHEMERAL_CLAIM_Y], 2, [EBS], "csinode", EXCEEDED, None,
        id="ephemeral doesn't when node volume limit <= pods ephemeral CSI volume",
    ),
    pytest.param(
        CSI_EBS_ONE_VOL_POD, [RUNNING_POD, EPHEMERAL_POD, CSI_EBS_TWO_VOL_POD],
        [EPHEMERAL_CLAIM], 3, [EBS], "csinode", EXCEEDED, None,
        id="persistent doesn't when node volume limit <= pods ephemeral CSI volume + "
        "persistent volume",
    ),
    pytest.param(
        CSI_EBS_ONE_VOL_POD, [RUNNING_POD, EPHEMERAL_POD, CSI_EBS_TWO_VOL_POD],
        [EPHEMERAL_CLAIM], 5, [EBS], "csinode", None, None,
        id="persistent okay when node volume limit > pods ephemeral CSI volume + "
        "persistent volume",
    ),
    pytest.param(
        ONLY_CONFIG_MAP_AND_SECRET_POD, [], [], 2, [EBS], "csinode", None, SKIP,
        id="skip Filter when the pod only uses secrets and configmaps",
    ),
    pytest.param(
        PVC_POD_WITH_CONFIG_MAP_AND_SECRET, [], [], 2, [EBS], "csinode", None, None,
        id="don't skip Filter when the pod has pvcs",
    ),
    pytest.param(
        EPHEMERAL_POD_WITH_CONFIG_MAP_AND_SECRET, [], [], 0, [EBS], "csinode-with-no-limit",
        EPHEMERAL_MISSING, None, id="don't skip Filter when the pod has ephemeral volumes",
    ),
]  # fmt: skip


@pytest.mark.parametrize(
    (
        "pod",
        "existing_pods",
        "extra_claims",
        "max_vols",
        "driver_names",
        "limit_source",
        "want_filter",
        "want_pre_filter",
    ),
    CASES,
)
def test_csi_limits(
    pod: Pod,
    existing_pods: list[Pod],
    extra_claims: list[PersistentVolumeClaim],
    max_vols: int,
    driver_names: list[str],
    limit_source: str,
    want_filter: Status | None,
    want_pre_filter: Status | None,
) -> None:
    objects = [*fake_objects(driver_names), *extra_claims]
    node = csi_node(limit_source, max_vols, driver_names)
    if node is not None:
        objects.append(node)
    plugin = new(None, FakeHandle(objects=objects))
    state = CycleState()
    _, pre_filter_status = plugin.pre_filter(state, pod, [])
    assert pre_filter_status == want_pre_filter
    if pre_filter_status is None:
        info = NodeInfo(make_node().name(NODE_NAME).obj(), existing_pods)
        assert plugin.filter(state, pod, info) == want_filter


def test_an_unbound_claim_of_a_migrated_in_tree_class_counts_under_its_csi_driver() -> None:
    objects: list[object] = [
        StorageClass("gp2", provisioner="kubernetes.io/aws-ebs"),
        PersistentVolumeClaim("a", storage_class_name="gp2"),
        PersistentVolumeClaim("b", storage_class_name="gp2"),
        CSINode(NODE_NAME, (CSINodeDriver(EBS, NODE_NAME, 1),)),
    ]
    plugin = new(None, FakeHandle(objects=objects))
    info = NodeInfo(make_node().name(NODE_NAME).obj(), [pod_with_claims("a", name="q")])
    assert plugin.filter(CycleState(), pod_with_claims("b"), info) == EXCEEDED


def test_it_registers_its_events() -> None:
    plugin = new(None, FakeHandle())
    assert plugin.name() == NAME
    assert [e.event for e in plugin.events_to_register()] == [
        ClusterEvent(EventResource.CSINode, ActionType.Add),
        ClusterEvent(EventResource.CSINode, ActionType.Update),
        ClusterEvent(EventResource.Pod, ActionType.Delete),
        ClusterEvent(EventResource.PersistentVolumeClaim, ActionType.Add),
    ]


POD_EBS = pod_with_claims("csi-ebs.csi.aws.com-2")


@pytest.mark.parametrize(
    ("deleted", "want"),
    [
        pytest.param(
            make_pod().name("d").pvc("placeholder").node("n").obj(),
            QueueingHint.Queue,
            id="return a Queue when a deleted pod has a PVC",
        ),
        pytest.param(
            make_pod()
            .name("d")
            .volume(Volume(name="aws", source_kind="awsElasticBlockStore"))
            .node("n")
            .obj(),
            QueueingHint.Queue,
            id="return a Queue when a deleted pod has a inline migratable volume",
        ),
        pytest.param(
            make_pod().name("d").node("n").obj(),
            QueueingHint.QueueSkip,
            id="return a QueueSkip when a deleted pod doesn't have any volume",
        ),
        pytest.param(
            make_pod().name("d").pvc("csi-ebs.csi.aws.com-0").obj(),
            QueueingHint.QueueSkip,
            id="return a QueueSkip when a deleted pod is not scheduled.",
        ),
    ],
)
def test_pod_deleted_hint(deleted: Pod, want: QueueingHint) -> None:
    plugin = new(None, FakeHandle())
    assert plugin.is_schedulable_after_pod_deleted(POD_EBS, deleted, None) == want


def claim_volume(name: str) -> Volume:
    return Volume(name="v", pvc_claim_name=name, source_kind="persistentVolumeClaim")


@pytest.mark.parametrize(
    ("pod", "added", "want"),
    [
        pytest.param(
            make_pod().name("p").namespace("ns1").obj(),
            PersistentVolumeClaim("pvc", namespace="ns2"),
            QueueingHint.QueueSkip,
            id="a pod isn't in the same namespace as an added PVC",
        ),
        pytest.param(
            make_pod().name("p").namespace("ns1").volume(claim_volume("pvc1")).obj(),
            PersistentVolumeClaim("pvc1", namespace="ns1"),
            QueueingHint.Queue,
            id="a pod is in the same namespace as an added PVC",
        ),
        pytest.param(
            ephemeral_pod("pod1", "ns1", "ephemeral"),
            PersistentVolumeClaim("pod1-ephemeral", namespace="ns1"),
            QueueingHint.Queue,
            id="a pod has an ephemeral volume related to an added PVC",
        ),
        pytest.param(
            make_pod().name("p").namespace("ns1").volume(claim_volume("pvc1")).obj(),
            PersistentVolumeClaim("pvc2", namespace="ns1"),
            QueueingHint.QueueSkip,
            id="a pod doesn't have the same PVC as an added PVC",
        ),
        pytest.param(
            make_pod().name("p").namespace("ns1").obj(),
            PersistentVolumeClaim("pvc2", namespace="ns1"),
            QueueingHint.QueueSkip,
            id="a pod doesn't have any PVC attached",
        ),
    ],
)
def test_pvc_added_hint(pod: Pod, added: PersistentVolumeClaim, want: QueueingHint) -> None:
    plugin = new(None, FakeHandle())
    assert plugin.is_schedulable_after_pvc_added(pod, None, added) == want


@pytest.mark.parametrize(
    ("old_count", "new_count", "want"),
    [
        (1, 2, QueueingHint.Queue),
        (2, 2, QueueingHint.QueueSkip),
        (2, 1, QueueingHint.QueueSkip),
        (None, 1, QueueingHint.Queue),
    ],
)
def test_csi_node_updated_hint(
    old_count: int | None, new_count: int | None, want: QueueingHint
) -> None:
    plugin = new(None, FakeHandle())
    old = CSINode(NODE_NAME, (CSINodeDriver(EBS, NODE_NAME, old_count),))
    updated = CSINode(NODE_NAME, (CSINodeDriver(EBS, NODE_NAME, new_count),))
    assert plugin.is_schedulable_after_csi_node_updated(POD_EBS, old, updated) == want


@pytest.mark.parametrize(
    ("kind", "source", "labels", "want"),
    [
        ("awsElasticBlockStore", {"volumeID": "vol-1"}, None, "vol-1"),
        ("awsElasticBlockStore", {"volumeID": "aws://us-east-1a/vol-2"}, {}, "vol-2"),
        ("awsElasticBlockStore", {"volumeID": "aws:///vol-3"}, None, "vol-3"),
        (
            "gcePersistentDisk",
            {"pdName": "pd"},
            None,
            "projects/UNSPECIFIED/zones/UNSPECIFIED/disks/pd",
        ),
        (
            "gcePersistentDisk",
            {"pdName": "pd"},
            {"topology.kubernetes.io/zone": "us-central1-a"},
            "projects/UNSPECIFIED/zones/us-central1-a/disks/pd",
        ),
        (
            "gcePersistentDisk",
            {"pdName": "pd"},
            {"topology.kubernetes.io/zone": "us-central1-a__us-central1-b"},
            "projects/UNSPECIFIED/regions/us-central1/disks/pd",
        ),
        ("azureDisk", {"diskName": "d", "diskURI": "uri"}, None, "uri"),
        ("cinder", {"volumeID": "c"}, None, "c"),
    ],
)
def test_translate_in_tree_volume(
    kind: str, source: dict[str, str], labels: dict[str, str] | None, want: str
) -> None:
    """csi-translation-lib's volume handles (aws_ebs.go, gce_pd.go, azure_disk.go, cinder.go)."""
    assert translate_in_tree_volume(kind, source, labels) == want


def test_an_in_tree_inline_volume_with_a_malformed_aws_id_is_an_error() -> None:
    pod = (
        make_pod()
        .name("p")
        .volume(
            Volume(name="aws", source_kind="awsElasticBlockStore", source={"volumeID": "aws://z/x"})
        )
        .obj()
    )
    node = csi_node("csinode", 2, [EBS])
    plugin = new(None, FakeHandle(objects=[node]))
    status = plugin.filter(CycleState(), pod, NodeInfo(make_node().name(NODE_NAME).obj(), []))
    assert status is not None and status.code == Code.Error
    assert "converting volume(aws) from inline to csi" in status.message()
