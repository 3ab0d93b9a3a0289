"""Ports pkg/scheduler/framework/plugins/volumezone/volume_zone_test.go.

Upstream's fake listers word NotFound with the plural resource ("storageclasses..."); the real
informer listers, which these tests follow, use the singular ("storageclass.storage.k8s.io").
"""

from __future__ import annotations

import pytest

from schedviz.kube.objects import (
    Node,
    PersistentVolume,
    PersistentVolumeClaim,
    Pod,
    StorageClass,
)
from schedviz.scheduler.framework.cycle_state import CycleState
from schedviz.scheduler.framework.interface import Code, Status, new_status
from schedviz.scheduler.framework.plugins.volumezone import (
    ERR_REASON_CONFLICT,
    LABEL_FAILURE_DOMAIN_BETA_REGION,
    LABEL_FAILURE_DOMAIN_BETA_ZONE,
    LABEL_TOPOLOGY_REGION,
    LABEL_TOPOLOGY_ZONE,
    NAME,
    new,
)
from schedviz.scheduler.framework.types import (
    ActionType,
    ClusterEvent,
    EventResource,
    NodeInfo,
    QueueingHint,
)
from schedviz.scheduler.testing.framework_helpers import FakeHandle
from schedviz.scheduler.testing.wrappers import make_node, make_pod

SKIP = Status(Code.Skip)
CONFLICT = new_status(Code.UnschedulableAndUnresolvable, ERR_REASON_CONFLICT)
BETA_ZONE = LABEL_FAILURE_DOMAIN_BETA_ZONE
BETA_REGION = LABEL_FAILURE_DOMAIN_BETA_REGION
ZONE = LABEL_TOPOLOGY_ZONE
REGION = LABEL_TOPOLOGY_REGION


def pod_with_volume(pod: str, pvc: str) -> Pod:
    return make_pod().name(pod).pvc(pvc).obj()


def pv(name: str, **labels: str) -> PersistentVolume:
    return PersistentVolume(name, labels=dict(labels))


def pvc(
    name: str, volume_name: str = "", storage_class: str | None = None
) -> PersistentVolumeClaim:
    return PersistentVolumeClaim(name, volume_name=volume_name, storage_class_name=storage_class)


def host(labels: dict[str, str] | None = None) -> Node:
    return make_node().name("host1").labels(labels or {}).obj()


def useless(**labels: str) -> dict[str, str]:
    return {**labels, "uselessLabel": "none"}


def run(objects: list[object], pod: Pod, node: Node) -> tuple[Status | None, Status | None]:
    plugin = new(None, FakeHandle(objects=objects))
    state = CycleState()
    _, pre_filter_status = plugin.pre_filter(state, pod, [])
    return pre_filter_status, plugin.filter(state, pod, NodeInfo(node))


SINGLE_ZONE_OBJECTS: list[object] = [
    pv("Vol_1", **{BETA_ZONE: "us-west1-a"}),
    pv("Vol_2", **useless(**{BETA_REGION: "us-west1"})),
    pv("Vol_3", **{BETA_REGION: "us-west1"}),
    pv("Vol_Stable_1", **{ZONE: "us-west1-a"}),
    pv("Vol_Stable_2", **useless(**{REGION: "us-west1"})),
    pv("Vol_Stable_3", **{ZONE: "us-west1-a", REGION: "us-west1-a"}),
    pvc("PVC_1", "Vol_1"),
    pvc("PVC_2", "Vol_2"),
    pvc("PVC_3", "Vol_3"),
    pvc("PVC_4", "Vol_not_exist"),
    pvc("PVC_Stable_1", "Vol_Stable_1"),
    pvc("PVC_Stable_2", "Vol_Stable_2"),
    pvc("PVC_Stable_3", "Vol_Stable_3"),
]

SINGLE_ZONE_CASES = [
    pytest.param(
        make_pod().name("pod_1").obj(),
        host({BETA_ZONE: "us-west1-a"}),
        SKIP,
        None,
        id="pod without volume",
    ),
    pytest.param(pod_with_volume("pod_1", "PVC_1"), host(), None, None, id="node without labels"),
    pytest.param(
        pod_with_volume("pod_1", "PVC_1"),
        host(useless(**{BETA_ZONE: "us-west1-a"})),
        None,
        None,
        id="beta zone label matched",
    ),
    pytest.param(
        pod_with_volume("pod_1", "PVC_2"),
        host(useless(**{BETA_REGION: "us-west1"})),
        None,
        None,
        id="beta region label matched",
    ),
    pytest.param(
        pod_with_volume("pod_1", "PVC_2"),
        host(useless(**{BETA_REGION: "no_us-west1"})),
        None,
        CONFLICT,
        id="beta region label doesn't match",
    ),
    pytest.param(
        pod_with_volume("pod_1", "PVC_1"),
        host(useless(**{BETA_ZONE: "no_us-west1-a"})),
        None,
        CONFLICT,
        id="beta zone label doesn't match",
    ),
    pytest.param(
        pod_with_volume("pod_1", "PVC_Stable_1"),
        host(useless(**{ZONE: "us-west1-a"})),
        None,
        None,
        id="zone label matched",
    ),
    pytest.param(
        pod_with_volume("pod_1", "PVC_Stable_2"),
        host(useless(**{REGION: "us-west1"})),
        None,
        None,
        id="region label matched",
    ),
    pytest.param(
        pod_with_volume("pod_1", "PVC_Stable_2"),
        host(useless(**{REGION: "no_us-west1"})),
        None,
        CONFLICT,
        id="region label doesn't match",
    ),
    pytest.param(
        pod_with_volume("pod_1", "PVC_Stable_1"),
        host(useless(**{ZONE: "no_us-west1-a"})),
        None,
        CONFLICT,
        id="zone label doesn't match",
    ),
    pytest.param(
        pod_with_volume("pod_1", "PVC_Stable_3"),
        host({ZONE: "us-west1-a"}),
        None,
        CONFLICT,
        id="pv with zone and region, node with only zone",
    ),
    pytest.param(
        pod_with_volume("pod_1", "PVC_Stable_1"),
        host({BETA_ZONE: "us-west1-a"}),
        None,
        CONFLICT,
        id="pv with zone,node with beta zone",
    ),
    pytest.param(
        pod_with_volume("pod_1", "PVC_1"),
        host({ZONE: "us-west1-a"}),
        None,
        None,
        id="pv with beta label,node with ga label, matched",
    ),
    pytest.param(
        pod_with_volume("pod_1", "PVC_1"),
        host({ZONE: "us-west1-b"}),
        None,
        CONFLICT,
        id="pv with beta label,node with ga label, don't match",
    ),
]


@pytest.mark.parametrize(("pod", "node", "want_pre_filter", "want_filter"), SINGLE_ZONE_CASES)
def test_single_zone(
    pod: Pod, node: Node, want_pre_filter: Status | None, want_filter: Status | None
) -> None:
    assert run(SINGLE_ZONE_OBJECTS, pod, node) == (want_pre_filter, want_filter)


MULTI_ZONE_OBJECTS: list[object] = [
    pv("Vol_1", **{BETA_ZONE: "us-west1-a"}),
    pv("Vol_2", **useless(**{BETA_ZONE: "us-west1-b"})),
    pv("Vol_3", **{BETA_ZONE: "us-west1-c__us-west1-a"}),
    pv("Vol_Stable_1", **{ZONE: "us-west1-a"}),
    pv("Vol_Stable_2", **{ZONE: "us-west1-c__us-west1-a"}),
    pvc("PVC_1", "Vol_1"),
    pvc("PVC_2", "Vol_2"),
    pvc("PVC_3", "Vol_3"),
    pvc("PVC_4", "Vol_not_exist"),
    pvc("PVC_Stable_1", "Vol_Stable_1"),
    pvc("PVC_Stable_2", "Vol_Stable_2"),
]

MULTI_ZONE_CASES = [
    pytest.param(pod_with_volume("pod_1", "PVC_3"), host(), None, None, id="node without labels"),
    pytest.param(
        pod_with_volume("pod_1", "PVC_3"),
        host(useless(**{BETA_ZONE: "us-west1-a"})),
        None,
        None,
        id="beta zone label matched",
    ),
    pytest.param(
        pod_with_volume("pod_1", "PVC_1"),
        host(useless(**{BETA_ZONE: "us-west1-b"})),
        None,
        CONFLICT,
        id="beta zone label doesn't match",
    ),
    pytest.param(
        pod_with_volume("pod_1", "PVC_Stable_2"),
        host(useless(**{ZONE: "us-west1-a"})),
        None,
        None,
        id="zone label matched",
    ),
    pytest.param(
        pod_with_volume("pod_1", "PVC_Stable_1"),
        host(useless(**{ZONE: "us-west1-b"})),
        None,
        CONFLICT,
        id="zone label doesn't match",
    ),
]


@pytest.mark.parametrize(("pod", "node", "want_pre_filter", "want_filter"), MULTI_ZONE_CASES)
def test_multi_zone(
    pod: Pod, node: Node, want_pre_filter: Status | None, want_filter: Status | None
) -> None:
    assert run(MULTI_ZONE_OBJECTS, pod, node) == (want_pre_filter, want_filter)


def unresolvable(reason: str) -> Status:
    return new_status(Code.UnschedulableAndUnresolvable, reason)


WITH_BINDING_OBJECTS: list[object] = [
    StorageClass("Class_Immediate", volume_binding_mode=""),
    StorageClass("Class_Wait", volume_binding_mode="WaitForFirstConsumer"),
    pv("Vol_1", **{BETA_ZONE: "us-west1-a"}),
    pvc("PVC_1", "Vol_1"),
    pvc("PVC_NoSC", storage_class="Class_0"),
    pvc("PVC_EmptySC"),
    pvc("PVC_WaitSC", storage_class="Class_Wait"),
    pvc("PVC_ImmediateSC", storage_class="Class_Immediate"),
]
NO_PV_NAME = unresolvable("PersistentVolumeClaim had no pv name and storageClass name")
NO_CLASS = unresolvable('storageclass.storage.k8s.io "Class_0" not found')
NO_MODE = unresolvable('VolumeBindingMode not set for StorageClass "Class_Immediate"')

WITH_BINDING_CASES = [
    pytest.param("PVC_1", None, None, id="label zone failure domain matched"),
    pytest.param("PVC_EmptySC", NO_PV_NAME, NO_PV_NAME, id="unbound volume empty storage class"),
    pytest.param("PVC_NoSC", NO_CLASS, NO_CLASS, id="unbound volume no storage class"),
    pytest.param("PVC_ImmediateSC", NO_MODE, NO_MODE, id="unbound volume immediate binding mode"),
    pytest.param("PVC_WaitSC", SKIP, None, id="unbound volume wait binding mode"),
]


@pytest.mark.parametrize(("claim", "want_pre_filter", "want_filter"), WITH_BINDING_CASES)
def test_with_binding(
    claim: str, want_pre_filter: Status | None, want_filter: Status | None
) -> None:
    node = host(useless(**{BETA_ZONE: "us-west1-a"}))
    got = run(WITH_BINDING_OBJECTS, pod_with_volume("pod_1", claim), node)
    assert got == (want_pre_filter, want_filter)


def test_an_immediate_class_claim_without_a_volume_is_unresolvable() -> None:
    objects: list[object] = [StorageClass("fast"), pvc("claim", storage_class="fast")]
    got, _ = run(objects, pod_with_volume("pod_1", "claim"), host())
    assert got == unresolvable("PersistentVolume had no name")


@pytest.mark.parametrize(
    ("objects", "claim", "want"),
    [
        ([], "missing", unresolvable('persistentvolumeclaim "missing" not found')),
        ([pvc("claim", "gone")], "claim", unresolvable('persistentvolume "gone" not found')),
        # A label that does not parse (an empty zone) is ignored.
        ([pvc("claim", "v"), pv("v", **{ZONE: "a__"})], "claim", SKIP),
    ],
)
def test_pre_filter_lookups(objects: list[object], claim: str, want: Status) -> None:
    got, _ = run(objects, pod_with_volume("pod_1", claim), host())
    assert got == want


def test_it_registers_its_events() -> None:
    plugin = new(None, FakeHandle())
    assert plugin.name() == NAME
    add_update = ActionType.Add | ActionType.Update
    assert [e.event for e in plugin.events_to_register()] == [
        ClusterEvent(EventResource.StorageClass, ActionType.Add),
        ClusterEvent(EventResource.Node, ActionType.Add | ActionType.UpdateNodeLabel),
        ClusterEvent(EventResource.PersistentVolumeClaim, add_update),
        ClusterEvent(EventResource.PersistentVolume, add_update),
    ]


POD_1 = pod_with_volume("pod_1", "PVC_1")
NO_CLAIM_POD = make_pod().name("pod_1").obj()


@pytest.mark.parametrize(
    ("pod", "old", "new_obj", "want"),
    [
        pytest.param(POD_1, None, "not-a-pvc", QueueingHint.Queue, id="error-wrong-new-object"),
        pytest.param(
            NO_CLAIM_POD,
            None,
            pvc("PVC_1", "Vol_1"),
            QueueingHint.QueueSkip,
            id="pvc-was-added-but-pod-refers-no-pvc",
        ),
        pytest.param(
            pod_with_volume("pod_1", "PVC_2"),
            None,
            pvc("PVC_1", "Vol_1"),
            QueueingHint.QueueSkip,
            id="pvc-was-added-and-pod-was-bound-to-different-pvc",
        ),
        pytest.param(
            POD_1,
            None,
            PersistentVolumeClaim("PVC_1", namespace="ns1", volume_name="Vol_1"),
            QueueingHint.QueueSkip,
            id="pvc-was-added-and-pod-was-bound-to-pvc-but-different-ns",
        ),
        pytest.param(
            POD_1,
            None,
            pvc("PVC_1", "Vol_1"),
            QueueingHint.Queue,
            id="pvc-was-added-and-pod-was-bound-to-the-pvc",
        ),
        pytest.param(
            POD_1,
            pvc("PVC_1"),
            pvc("PVC_1", "Vol_1"),
            QueueingHint.Queue,
            id="pvc-was-updated-and-pod-was-bound-to-the-pvc",
        ),
        pytest.param(
            NO_CLAIM_POD,
            pvc("PVC_1"),
            pvc("PVC_1", "Vol_1"),
            QueueingHint.QueueSkip,
            id="pvc-was-updated-but-pod-refers-no-pvc",
        ),
    ],
)
def test_pvc_change_hint(pod: Pod, old: object, new_obj: object, want: QueueingHint) -> None:
    plugin = new(None, FakeHandle())
    assert plugin.is_schedulable_after_persistent_volume_claim_change(pod, old, new_obj) == want


@pytest.mark.parametrize(
    ("new_obj", "want"),
    [
        pytest.param("not-a-storageclass", QueueingHint.Queue, id="error-wrong-new-object"),
        pytest.param(
            StorageClass("SC_1", volume_binding_mode=""),
            QueueingHint.QueueSkip,
            id="sc-doesn't-have-volume-binding-mode",
        ),
        pytest.param(
            StorageClass("SC_1", volume_binding_mode="WaitForFirstConsumer"),
            QueueingHint.Queue,
            id="new-sc-is-wait-for-first-consumer-mode",
        ),
    ],
)
def test_storage_class_added_hint(new_obj: object, want: QueueingHint) -> None:
    plugin = new(None, FakeHandle())
    assert plugin.is_schedulable_after_storage_class_added(POD_1, None, new_obj) == want


@pytest.mark.parametrize(
    ("old", "new_obj", "want"),
    [
        pytest.param(None, "not-a-pv", QueueingHint.Queue, id="error-wrong-new-object"),
        pytest.param("not-a-pv", pv("Vol_1"), QueueingHint.Queue, id="error-wrong-old-object"),
        pytest.param(
            None, pv("Vol_1", **{BETA_ZONE: "us-west1-b"}), QueueingHint.Queue, id="new-pv"
        ),
        pytest.param(
            pv("Vol_1", **{BETA_ZONE: "us-west1-a"}),
            pv("Vol_1", **{BETA_ZONE: "us-west1-b"}),
            QueueingHint.Queue,
            id="pv-was-updated-and-changed-topology",
        ),
        pytest.param(
            pv("Vol_1", **{BETA_ZONE: "us-west1-a"}),
            pv("Vol_1", **{BETA_ZONE: "us-west1-a", ZONE: "zone"}),
            QueueingHint.Queue,
            id="pv-was-updated-and-added-topology-label",
        ),
        pytest.param(
            pv("Vol_1", **{BETA_ZONE: "us-west1-a", ZONE: "zone"}),
            pv("Vol_1", **{BETA_ZONE: "us-west1-a", ZONE: "zone"}),
            QueueingHint.QueueSkip,
            id="pv-was-updated-but-no-topology-is-changed",
        ),
    ],
)
def test_pv_change_hint(old: object, new_obj: object, want: QueueingHint) -> None:
    plugin = new(None, FakeHandle())
    assert plugin.is_schedulable_after_persistent_volume_change(POD_1, old, new_obj) == want
