"""Ports pkg/scheduler/framework/plugins/volumerestrictions/volume_restrictions_test.go."""

from __future__ import annotations

from typing import Any

import pytest

from schedviz.kube.objects import Node, PersistentVolumeClaim, Pod, Volume
from schedviz.scheduler.framework.cycle_state import CycleState
from schedviz.scheduler.framework.interface import Code, Status, new_status
from schedviz.scheduler.framework.plugins.volumerestrictions import (
    ERR_REASON_DISK_CONFLICT,
    ERR_REASON_READ_WRITE_ONCE_POD_CONFLICT,
    NAME,
    PRE_FILTER_STATE_KEY,
    VolumeRestrictions,
    new,
)
from schedviz.scheduler.framework.types import (
    ActionType,
    ClusterEvent,
    EventResource,
    NodeInfo,
    PodInfo,
    QueueingHint,
)
from schedviz.scheduler.testing.framework_helpers import FakeHandle
from schedviz.scheduler.testing.wrappers import make_node, make_pod

SKIP = Status(Code.Skip)
DISK_CONFLICT = new_status(Code.Unschedulable, ERR_REASON_DISK_CONFLICT)
RWOP_CONFLICT = new_status(Code.Unschedulable, ERR_REASON_READ_WRITE_ONCE_POD_CONFLICT)


def inline(kind: str, **source: Any) -> Volume:
    return Volume(name=f"{kind}-vol", source_kind=kind, source=source)


def pod_with(*volumes: Volume) -> Pod:
    wrapper = make_pod().name("p")
    for volume in volumes:
        wrapper = wrapper.volume(volume)
    return wrapper.obj()


def node_info(*pods: Pod) -> NodeInfo:
    return NodeInfo(make_node().name("node-1").obj(), list(pods))


def run(
    plugin: VolumeRestrictions, pod: Pod, info: NodeInfo
) -> tuple[Status | None, Status | None]:
    state = CycleState()
    _, pre_filter_status = plugin.pre_filter(state, pod, [])
    if pre_filter_status is not None:
        return pre_filter_status, None
    return None, plugin.filter(state, pod, info)


def disk_cases(kind: str, same: Volume, other: Volume) -> list[Any]:
    """The four cases each in-tree disk test of upstream shares."""
    return [
        pytest.param(Pod(name="p"), node_info(), SKIP, None, id=f"{kind}: nothing"),
        pytest.param(Pod(name="p"), node_info(pod_with(same)), SKIP, None, id=f"{kind}: one"),
        pytest.param(
            pod_with(same), node_info(pod_with(same)), None, DISK_CONFLICT, id=f"{kind}: same"
        ),
        pytest.param(
            pod_with(other), node_info(pod_with(same)), None, None, id=f"{kind}: different"
        ),
    ]


DISK_CASES = [
    *disk_cases(
        "gce",
        inline("gcePersistentDisk", pdName="foo"),
        inline("gcePersistentDisk", pdName="bar"),
    ),
    pytest.param(
        pod_with(Volume(name="volume with no restriction")),
        node_info(),
        SKIP,
        None,
        id="gce: pod with a volume that doesn't have restrictions",
    ),
    *disk_cases(
        "aws",
        inline("awsElasticBlockStore", volumeID="foo"),
        inline("awsElasticBlockStore", volumeID="bar"),
    ),
    *disk_cases(
        "rbd",
        inline("rbd", monitors=["a", "b"], pool="foo", image="bar", fsType="ext4"),
        inline("rbd", monitors=["c", "d"], pool="foo", image="bar", fsType="ext4"),
    ),
    *disk_cases(
        "iscsi",
        inline("iscsi", targetPortal="127.0.0.1:3260", iqn="iqn.2016-12.server:storage.target01"),
        inline("iscsi", targetPortal="127.0.0.1:3260", iqn="iqn.2017-12.server:storage.target01"),
    ),
]


@pytest.mark.parametrize(("pod", "info", "want_pre_filter", "want_filter"), DISK_CASES)
def test_it_rejects_a_node_with_the_same_in_tree_disk(
    pod: Pod, info: NodeInfo, want_pre_filter: Status | None, want_filter: Status | None
) -> None:
    pre_filter_status, filter_status = run(new(None, FakeHandle()), pod, info)
    assert pre_filter_status == want_pre_filter
    assert filter_status == want_filter


@pytest.mark.parametrize(
    ("volume", "existing", "conflict"),
    [
        (
            inline("gcePersistentDisk", pdName="foo", readOnly=True),
            inline("gcePersistentDisk", pdName="foo", readOnly=True),
            False,
        ),
        (
            inline("gcePersistentDisk", pdName="foo", readOnly=True),
            inline("gcePersistentDisk", pdName="foo"),
            True,
        ),
        (
            inline("awsElasticBlockStore", volumeID="foo", readOnly=True),
            inline("awsElasticBlockStore", volumeID="foo", readOnly=True),
            True,
        ),
        (
            inline("iscsi", iqn="iqn.a", readOnly=True),
            inline("iscsi", iqn="iqn.a", readOnly=True),
            False,
        ),
        # The pool defaults to "rbd" on both sides.
        (inline("rbd", monitors=["a"], image="x"), inline("rbd", monitors=["a"], image="x"), True),
        (
            inline("rbd", monitors=["a"], image="x", readOnly=True),
            inline("rbd", monitors=["b", "a"], image="x", readOnly=True),
            False,
        ),
    ],
)
def test_it_lets_read_only_mounts_share_a_disk_where_upstream_does(
    volume: Volume, existing: Volume, conflict: bool
) -> None:
    _, filter_status = run(new(None, FakeHandle()), pod_with(volume), node_info(pod_with(existing)))
    assert filter_status == (DISK_CONFLICT if conflict else None)


# TestAccessModeConflicts
NODE = make_node().name("node-1").obj()
RWOP_1 = PersistentVolumeClaim("claim-with-rwop-1", access_modes=("ReadWriteOncePod",))
RWOP_2 = PersistentVolumeClaim("claim-with-rwop-2", access_modes=("ReadWriteOncePod",))
RWX = PersistentVolumeClaim("claim-with-rwx", access_modes=("ReadWriteMany",))
POD_WITH_ONE_PVC = make_pod().name("pod-with-one-pvc").pvc("claim-with-rwop-1").node("node-1").obj()
POD_WITH_TWO_PVCS = (
    make_pod()
    .name("pod-with-two-pvcs")
    .pvc("claim-with-rwop-1")
    .pvc("claim-with-rwop-2")
    .node("node-1")
    .obj()
)
POD_WITH_ONE_CONFLICT = (
    make_pod().name("pod-with-one-conflict").pvc("claim-with-rwop-1").node("node-1").obj()
)
POD_WITH_TWO_CONFLICTS = (
    make_pod()
    .name("pod-with-two-conflicts")
    .pvc("claim-with-rwop-1")
    .pvc("claim-with-rwop-2")
    .node("node-1")
    .obj()
)
POD_WITH_RWX = make_pod().name("pod-with-rwx").pvc("claim-with-rwx").node("node-1").obj()

ACCESS_MODE_CASES = [
    pytest.param(Pod(name="p"), [], [], [], SKIP, None, id="nothing"),
    pytest.param(
        POD_WITH_ONE_PVC,
        [],
        [],
        [],
        new_status(
            Code.UnschedulableAndUnresolvable,
            'persistentvolumeclaim "claim-with-rwop-1" not found',
        ),
        None,
        id="failed to get PVC",
    ),
    pytest.param(
        POD_WITH_ONE_PVC,
        [POD_WITH_RWX],
        [NODE],
        [RWOP_1, RWX],
        SKIP,
        None,
        id="no access mode conflict",
    ),
    pytest.param(
        POD_WITH_ONE_CONFLICT,
        [POD_WITH_ONE_PVC, POD_WITH_RWX],
        [NODE],
        [RWOP_1, RWX],
        None,
        RWOP_CONFLICT,
        id="access mode conflict, unschedulable",
    ),
    pytest.param(
        POD_WITH_TWO_CONFLICTS,
        [POD_WITH_TWO_PVCS, POD_WITH_RWX],
        [NODE],
        [RWOP_1, RWOP_2, RWX],
        None,
        RWOP_CONFLICT,
        id="two conflicts, unschedulable",
    ),
]


@pytest.mark.parametrize(
    ("pod", "existing_pods", "nodes", "pvcs", "want_pre_filter", "want_filter"),
    ACCESS_MODE_CASES,
)
def test_it_rejects_a_read_write_once_pod_claim_in_use(
    pod: Pod,
    existing_pods: list[Pod],
    nodes: list[Node],
    pvcs: list[PersistentVolumeClaim],
    want_pre_filter: Status | None,
    want_filter: Status | None,
) -> None:
    plugin = new(None, FakeHandle(existing_pods, nodes, pvcs))
    pre_filter_status, filter_status = run(plugin, pod, NodeInfo(NODE, existing_pods))
    assert pre_filter_status == want_pre_filter
    assert filter_status == want_filter


def test_preemption_removing_the_claim_holder_clears_the_conflict() -> None:
    handle = FakeHandle([POD_WITH_ONE_PVC], [NODE], [RWOP_1])
    plugin = new(None, handle)
    state = CycleState()
    assert plugin.pre_filter(state, POD_WITH_ONE_CONFLICT, []) == (None, None)
    info = NodeInfo(NODE, [POD_WITH_ONE_PVC])
    copy = state.clone()
    assert plugin.remove_pod(copy, POD_WITH_ONE_CONFLICT, PodInfo(POD_WITH_ONE_PVC), info) is None
    assert plugin.filter(copy, POD_WITH_ONE_CONFLICT, NodeInfo(NODE)) is None
    # The original state is untouched by the dry run.
    assert plugin.filter(state, POD_WITH_ONE_CONFLICT, info) == RWOP_CONFLICT
    assert plugin.add_pod(copy, POD_WITH_ONE_CONFLICT, PodInfo(POD_WITH_ONE_PVC), info) is None
    assert plugin.filter(copy, POD_WITH_ONE_CONFLICT, info) == RWOP_CONFLICT


def test_filter_without_pre_filter_state_is_an_error() -> None:
    plugin = new(None, FakeHandle())
    status = plugin.filter(CycleState(), POD_WITH_ONE_PVC, node_info())
    assert status is not None and status.code == Code.Error
    assert PRE_FILTER_STATE_KEY in status.message()


def test_it_registers_pod_delete_node_add_and_pvc_add() -> None:
    plugin = new(None, FakeHandle())
    assert plugin.name() == NAME
    events = [e.event for e in plugin.events_to_register()]
    assert events == [
        ClusterEvent(EventResource.Pod, ActionType.Delete),
        ClusterEvent(EventResource.Node, ActionType.Add),
        ClusterEvent(EventResource.PersistentVolumeClaim, ActionType.Add),
    ]


GCE_FOO = inline("gcePersistentDisk", pdName="foo")


@pytest.mark.parametrize(
    ("pod", "deleted", "want"),
    [
        pytest.param(pod_with(GCE_FOO), pod_with(GCE_FOO), QueueingHint.Queue, id="same disk"),
        pytest.param(
            pod_with(GCE_FOO),
            pod_with(inline("gcePersistentDisk", pdName="bar")),
            QueueingHint.QueueSkip,
            id="other disk",
        ),
        pytest.param(
            pod_with(GCE_FOO),
            make_pod().name("q").namespace("other").volume(GCE_FOO).obj(),
            QueueingHint.QueueSkip,
            id="other namespace",
        ),
        pytest.param(POD_WITH_ONE_CONFLICT, POD_WITH_ONE_PVC, QueueingHint.Queue, id="same claim"),
        pytest.param(POD_WITH_ONE_CONFLICT, POD_WITH_RWX, QueueingHint.QueueSkip, id="other claim"),
    ],
)
def test_pod_deleted_hint(pod: Pod, deleted: Pod, want: QueueingHint) -> None:
    plugin = new(None, FakeHandle())
    assert plugin.is_schedulable_after_pod_deleted(pod, deleted, None) == want


@pytest.mark.parametrize(
    ("pvc", "want"),
    [
        (RWOP_1, QueueingHint.Queue),
        (RWX, QueueingHint.QueueSkip),
        (PersistentVolumeClaim("claim-with-rwop-1", namespace="other"), QueueingHint.QueueSkip),
    ],
)
def test_pvc_added_hint(pvc: PersistentVolumeClaim, want: QueueingHint) -> None:
    plugin = new(None, FakeHandle())
    assert (
        plugin.is_schedulable_after_persistent_volume_claim_added(POD_WITH_ONE_PVC, None, pvc)
        == want
    )
