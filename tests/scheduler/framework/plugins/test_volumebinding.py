"""Ports pkg/scheduler/framework/plugins/volumebinding/volume_binding_test.go (TestVolumeBinding
and the queueing hint tables), with representative binder_test.go cases.

Differences from upstream's expectations, all deliberate (see the plugin's docstrings):
- PreFilter returns no PreFilterResult: ``GetEligibleNodes`` is gone from v1.35's PreFilter;
- scoring is on exactly when ``args.shape`` is set (the StorageCapacityScoring stand-in), so the
  cases without a shape expect PreScore to Skip, and those with one expect it to run.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace

import pytest

from schedviz.kube.objects import (
    CSINode,
    Node,
    NodeSelector,
    NodeSelectorRequirement,
    NodeSelectorTerm,
    PersistentVolume,
    PersistentVolumeClaim,
    Pod,
    StorageClass,
    Volume,
)
from schedviz.kube.quantity import Quantity
from schedviz.scheduler.apis.config.types_pluginargs import (
    UtilizationShapePoint,
    VolumeBindingArgs,
)
from schedviz.scheduler.apis.config.validation import ConfigError
from schedviz.scheduler.framework.cycle_state import CycleState
from schedviz.scheduler.framework.interface import Code, Status, new_status
from schedviz.scheduler.framework.plugins.volumebinding import (
    ERR_REASON_BIND_CONFLICT,
    ERR_REASON_NODE_CONFLICT,
    ERR_REASON_PV_NOT_EXIST,
    ERR_REASON_UNBOUND_IMMEDIATE,
    NAME,
    STATE_KEY,
    VolumeBinding,
    new,
)
from schedviz.scheduler.framework.plugins.volumebinding.binder import (
    ANN_BIND_COMPLETED,
    ANN_SELECTED_NODE,
    find_matching_volume,
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

HOSTNAME = "kubernetes.io/hostname"
REGION = "topology.kubernetes.io/region"
ZONE = "topology.kubernetes.io/zone"

IMMEDIATE_SC = StorageClass("immediate-sc", volume_binding_mode="Immediate")
WAIT_SC = StorageClass("wait-sc", volume_binding_mode="WaitForFirstConsumer")
WAIT_HDD_SC = StorageClass("wait-hdd-sc", volume_binding_mode="WaitForFirstConsumer")
CLASSES = [IMMEDIATE_SC, WAIT_SC, WAIT_HDD_SC]

SKIP = Status(Code.Skip)
DEFAULT_SHAPE = [UtilizationShapePoint(0, 0), UtilizationShapePoint(100, 10)]


def unresolvable(*reasons: str) -> Status:
    return new_status(Code.UnschedulableAndUnresolvable, *reasons)


BIND_CONFLICT = unresolvable(ERR_REASON_BIND_CONFLICT)


def make_pod_with(name: str, *claims: str) -> Pod:
    wrapper = make_pod().name(name)
    for claim in claims:
        wrapper = wrapper.pvc(claim)
    return wrapper.obj()


def make_node_named(name: str, **labels: str) -> Node:
    """test_utils.go makeNode: the hostname label is the node's name."""
    return make_node().name(name).labels({HOSTNAME: name, **labels}).obj()


def make_pvc(
    name: str,
    class_name: str,
    bound_pv: str = "",
    request: str | None = None,
    phase: str = "Pending",
    annotations: dict[str, str] | None = None,
) -> PersistentVolumeClaim:
    annotations = dict(annotations or {})
    if bound_pv:
        annotations[ANN_BIND_COMPLETED] = "yes"
    return PersistentVolumeClaim(
        name,
        storage_class_name=class_name,
        volume_name=bound_pv,
        requests={"storage": Quantity.parse(request)} if request else {},
        phase=phase,
        annotations=annotations,
    )


def node_affinity(requirements: dict[str, list[str]]) -> NodeSelector:
    expressions = tuple(
        NodeSelectorRequirement(key, "In", tuple(values)) for key, values in requirements.items()
    )
    return NodeSelector((NodeSelectorTerm(expressions),))


def make_pv(
    name: str,
    class_name: str,
    phase: str = "Available",
    capacity: str | None = None,
    on: dict[str, list[str]] | None = None,
    claim_ref: str | None = None,
    access_modes: tuple[str, ...] = (),
) -> PersistentVolume:
    return PersistentVolume(
        name,
        storage_class_name=class_name,
        phase=phase,
        capacity={"storage": Quantity.parse(capacity)} if capacity else {},
        node_affinity=node_affinity(on) if on else None,
        claim_ref=claim_ref,
        access_modes=access_modes,
    )


@dataclass
class Case:
    pod: Pod
    nodes: list[Node]
    pvcs: list[PersistentVolumeClaim] = field(default_factory=list)
    pvs: list[PersistentVolume] = field(default_factory=list)
    args: VolumeBindingArgs | None = None
    want_pre_filter: Status | None = None
    want_bound: list[str] | None = None
    want_delayed: list[str] | None = None
    want_filter: list[Status | None] = field(default_factory=list)
    want_pre_score: Status | None = SKIP
    want_scores: list[int] = field(default_factory=list)


def local_pvs(*specs: tuple[str, str, str, str]) -> list[PersistentVolume]:
    return [
        make_pv(name, cls, capacity=capacity, on={HOSTNAME: [node]})
        for name, cls, capacity, node in specs
    ]


def zonal_pvs() -> list[PersistentVolume]:
    return [
        make_pv(name, WAIT_SC.name, capacity=capacity, on={REGION: [region], ZONE: [zone]})
        for name, capacity, region, zone in [
            ("pv-a-0", "200Gi", "region-a", "zone-a"),
            ("pv-a-1", "200Gi", "region-a", "zone-a"),
            ("pv-b-0", "100Gi", "region-b", "zone-b"),
            ("pv-b-1", "100Gi", "region-b", "zone-b"),
        ]
    ]


def zonal_nodes() -> list[Node]:
    return [
        make_node_named(f"zone-{z}-node-{n}", **{REGION: f"region-{z}", ZONE: f"zone-{z}"})
        for z in "abc"
        for n in "ab"
    ]


CASES = [
    pytest.param(
        Case(make_pod_with("pod-a"), [make_node_named("node-a")], want_pre_filter=SKIP),
        id="pod has not pvcs",
    ),
    pytest.param(
        Case(
            make_pod_with("pod-a", "pvc-a"),
            [make_node_named("node-a")],
            pvcs=[make_pvc("pvc-a", WAIT_SC.name, bound_pv="pv-a")],
            pvs=[make_pv("pv-a", WAIT_SC.name)],
            want_bound=["pvc-a"],
            want_delayed=[],
            want_filter=[None],
        ),
        id="all bound",
    ),
    pytest.param(
        Case(
            make_pod_with("pod-a", "pvc-a", "pvc-b"),
            [make_node_named("node-a")],
            pvcs=[
                make_pvc("pvc-a", WAIT_SC.name, bound_pv="pv-a"),
                make_pvc("pvc-b", WAIT_SC.name, bound_pv="pv-b"),
            ],
            pvs=[
                make_pv("pv-a", WAIT_SC.name, phase="Bound", on={HOSTNAME: ["node-a"]}),
                make_pv("pv-b", WAIT_SC.name, phase="Bound", on={HOSTNAME: ["node-a"]}),
            ],
            want_bound=["pvc-a", "pvc-b"],
            want_delayed=[],
            want_filter=[None],
        ),
        id="all bound with local volumes",
    ),
    pytest.param(
        Case(
            make_pod_with("pod-a", "pvc-a"),
            [make_node_named("node-a")],
            want_pre_filter=unresolvable('persistentvolumeclaim "pvc-a" not found'),
        ),
        id="PVC does not exist",
    ),
    pytest.param(
        Case(
            make_pod_with("pod-a", "pvc-a", "pvc-b"),
            [make_node_named("node-a")],
            pvcs=[make_pvc("pvc-a", WAIT_SC.name, bound_pv="pv-a")],
            want_pre_filter=unresolvable('persistentvolumeclaim "pvc-b" not found'),
        ),
        id="Part of PVCs do not exist",
    ),
    pytest.param(
        Case(
            make_pod_with("pod-a", "pvc-a"),
            [make_node_named("node-a")],
            pvcs=[make_pvc("pvc-a", IMMEDIATE_SC.name)],
            want_pre_filter=unresolvable(ERR_REASON_UNBOUND_IMMEDIATE),
        ),
        id="immediate claims not bound",
    ),
    pytest.param(
        Case(
            make_pod_with("pod-a", "pvc-a"),
            [make_node_named("node-a")],
            pvcs=[make_pvc("pvc-a", WAIT_SC.name)],
            want_bound=[],
            want_delayed=["pvc-a"],
            want_filter=[BIND_CONFLICT],
        ),
        id="unbound claims no matches",
    ),
    pytest.param(
        Case(
            make_pod_with("pod-a", "pvc-a", "pvc-b"),
            [make_node_named("node-a", foo="barbar")],
            pvcs=[
                make_pvc("pvc-a", WAIT_SC.name, bound_pv="pv-a"),
                make_pvc("pvc-b", WAIT_SC.name),
            ],
            pvs=[make_pv("pv-a", WAIT_SC.name, on={"foo": ["bar"]})],
            want_bound=["pvc-a"],
            want_delayed=["pvc-b"],
            want_filter=[unresolvable(ERR_REASON_NODE_CONFLICT, ERR_REASON_BIND_CONFLICT)],
        ),
        id="bound and unbound unsatisfied",
    ),
    pytest.param(
        Case(
            make_pod_with("pod-a", "pvc-a"),
            [make_node_named("node-a")],
            want_pre_filter=unresolvable('persistentvolumeclaim "pvc-a" not found'),
        ),
        id="pvc not found",
    ),
    pytest.param(
        Case(
            make_pod_with("pod-a", "pvc-a"),
            [make_node_named("node-a")],
            pvcs=[make_pvc("pvc-a", WAIT_SC.name, bound_pv="pv-a")],
            want_bound=["pvc-a"],
            want_delayed=[],
            want_filter=[unresolvable(ERR_REASON_PV_NOT_EXIST)],
        ),
        id="pv not found",
    ),
    pytest.param(
        Case(
            make_pod_with("pod-a", "pvc-a"),
            [make_node_named("node-a")],
            pvcs=[make_pvc("pvc-a", WAIT_SC.name, bound_pv="pv-a", phase="Lost")],
            want_pre_filter=unresolvable(
                'persistentvolumeclaim "pvc-a" bound to non-existent persistentvolume "pv-a"'
            ),
        ),
        id="pv not found claim lost",
    ),
    pytest.param(
        Case(
            make_pod_with("pod-a", "pvc-a"),
            [make_node_named("node-a"), make_node_named("node-b"), make_node_named("node-c")],
            pvcs=[make_pvc("pvc-a", WAIT_SC.name, request="50Gi")],
            pvs=local_pvs(
                ("pv-a-0", WAIT_SC.name, "200Gi", "node-a"),
                ("pv-a-1", WAIT_SC.name, "200Gi", "node-a"),
                ("pv-b-0", WAIT_SC.name, "100Gi", "node-b"),
                ("pv-b-1", WAIT_SC.name, "100Gi", "node-b"),
            ),
            args=VolumeBindingArgs(300, DEFAULT_SHAPE),
            want_bound=[],
            want_delayed=["pvc-a"],
            want_filter=[None, None, BIND_CONFLICT],
            want_pre_score=None,
            want_scores=[25, 50, 0],
        ),
        id="local volumes with close capacity are preferred",
    ),
    pytest.param(
        Case(
            make_pod_with("pod-a", "pvc-0", "pvc-1"),
            [make_node_named("node-a"), make_node_named("node-b"), make_node_named("node-c")],
            pvcs=[
                make_pvc("pvc-0", WAIT_SC.name, request="50Gi"),
                make_pvc("pvc-1", WAIT_HDD_SC.name, request="100Gi"),
            ],
            pvs=local_pvs(
                ("pv-a-0", WAIT_SC.name, "200Gi", "node-a"),
                ("pv-a-1", WAIT_SC.name, "200Gi", "node-a"),
                ("pv-a-2", WAIT_HDD_SC.name, "200Gi", "node-a"),
                ("pv-a-3", WAIT_HDD_SC.name, "200Gi", "node-a"),
                ("pv-b-0", WAIT_SC.name, "100Gi", "node-b"),
                ("pv-b-1", WAIT_SC.name, "100Gi", "node-b"),
                ("pv-b-2", WAIT_HDD_SC.name, "100Gi", "node-b"),
                ("pv-b-3", WAIT_HDD_SC.name, "100Gi", "node-b"),
            ),
            args=VolumeBindingArgs(300, DEFAULT_SHAPE),
            want_bound=[],
            want_delayed=["pvc-0", "pvc-1"],
            want_filter=[None, None, BIND_CONFLICT],
            want_pre_score=None,
            want_scores=[38, 75, 0],
        ),
        id="local volumes with close capacity are preferred (multiple pvcs)",
    ),
    pytest.param(
        Case(
            make_pod_with("pod-a", "pvc-a"),
            zonal_nodes(),
            pvcs=[make_pvc("pvc-a", WAIT_SC.name, request="50Gi")],
            pvs=zonal_pvs(),
            args=VolumeBindingArgs(300, DEFAULT_SHAPE),
            want_bound=[],
            want_delayed=["pvc-a"],
            want_filter=[None, None, None, None, BIND_CONFLICT, BIND_CONFLICT],
            want_pre_score=None,
            want_scores=[25, 25, 50, 50, 0, 0],
        ),
        id="zonal volumes with close capacity are preferred",
    ),
    pytest.param(
        Case(
            make_pod_with("pod-a", "pvc-a"),
            zonal_nodes(),
            pvcs=[make_pvc("pvc-a", WAIT_SC.name, request="50Gi")],
            pvs=zonal_pvs(),
            args=VolumeBindingArgs(
                300,
                [
                    UtilizationShapePoint(0, 0),
                    UtilizationShapePoint(50, 3),
                    UtilizationShapePoint(100, 5),
                ],
            ),
            want_bound=[],
            want_delayed=["pvc-a"],
            want_filter=[None, None, None, None, BIND_CONFLICT, BIND_CONFLICT],
            want_pre_score=None,
            want_scores=[15, 15, 30, 30, 0, 0],
        ),
        id="zonal volumes with close capacity are preferred (custom shape)",
    ),
]


@pytest.mark.parametrize("case", CASES)
def test_volume_binding(case: Case) -> None:
    handle = FakeHandle(objects=[*CLASSES, *case.pvcs, *case.pvs])
    plugin = new(case.args or VolumeBindingArgs(300), handle)
    state = CycleState()

    result, status = plugin.pre_filter(state, case.pod, [])
    assert result is None
    assert status == case.want_pre_filter
    if status is not None and status.code != Code.Skip:
        return

    if case.want_bound is not None:
        claims = state.read(STATE_KEY).pod_volume_claims  # type: ignore[attr-defined]
        assert [c.name for c in claims.bound_claims] == case.want_bound
        assert [c.name for c in claims.unbound_claims_delay_binding] == case.want_delayed

    infos = [NodeInfo(node) for node in case.nodes]
    if status is None:
        assert [plugin.filter(state, case.pod, info) for info in infos] == case.want_filter

    assert plugin.pre_score(state, case.pod, infos) == case.want_pre_score
    if case.want_pre_score is None:
        scores = [plugin.score(state, case.pod, info) for info in infos]
        assert scores == [(score, None) for score in case.want_scores]


# --- FindMatchingVolume and the binder (binder_test.go, pv_helpers' findMatchingVolume)

NODE_1 = make_node_named("node1", zone="z1")


@pytest.mark.parametrize(
    ("pvc", "pvs", "want"),
    [
        pytest.param(
            make_pvc("c", "sc", request="5Gi"),
            [make_pv("big", "sc", capacity="10Gi"), make_pv("small", "sc", capacity="6Gi")],
            "small",
            id="smallest volume that fits",
        ),
        pytest.param(
            make_pvc("c", "sc", request="5Gi"),
            [make_pv("tiny", "sc", capacity="1Gi")],
            None,
            id="too small",
        ),
        pytest.param(
            make_pvc("c", "sc"),
            [make_pv("other-class", "gold"), make_pv("ok", "sc")],
            "ok",
            id="class must match",
        ),
        pytest.param(
            make_pvc("c", "sc"),
            [make_pv("taken", "sc", claim_ref="default/other"), make_pv("free", "sc")],
            "free",
            id="a volume bound to another claim is skipped",
        ),
        pytest.param(
            make_pvc("c", "sc"),
            [make_pv("released", "sc", phase="Released")],
            None,
            id="only available volumes",
        ),
        pytest.param(
            make_pvc("c", "sc"),
            [make_pv("new", "sc", phase="Pending")],
            "new",
            id="a new unclaimed volume counts as available (no PV controller)",
        ),
        pytest.param(
            make_pvc("c", "sc", request="1Gi"),
            [
                make_pv("small", "sc", capacity="1Gi"),
                make_pv("prebound", "other", capacity="9Gi", claim_ref="default/c"),
            ],
            "prebound",
            id="a volume pre-bound to the claim wins",
        ),
        pytest.param(
            make_pvc("c", "sc"),
            [make_pv("prebound", "sc", claim_ref="default/c", on={"zone": ["z2"]})],
            None,
            id="a pre-bound volume on another node is no match",
        ),
        pytest.param(
            make_pvc("c", "sc"),
            [make_pv("elsewhere", "sc", on={"zone": ["z2"]}), make_pv("here", "sc")],
            "here",
            id="node affinity",
        ),
        pytest.param(
            PersistentVolumeClaim("c", storage_class_name="sc", access_modes=("ReadWriteMany",)),
            [
                make_pv("rwo", "sc", access_modes=("ReadWriteOnce",)),
                make_pv("rwx", "sc", access_modes=("ReadWriteOnce", "ReadWriteMany")),
            ],
            "rwx",
            id="access modes",
        ),
    ],
)
def test_find_matching_volume(
    pvc: PersistentVolumeClaim, pvs: list[PersistentVolume], want: str | None
) -> None:
    got = find_matching_volume(pvc, pvs, NODE_1, {})
    assert (got.name if got else None) == want


def test_find_matching_volume_skips_excluded_volumes() -> None:
    pvs = [make_pv("a", "sc"), make_pv("b", "sc")]
    got = find_matching_volume(make_pvc("c", "sc"), pvs, NODE_1, {"a": pvs[0]})
    assert got is not None and got.name == "b"


def filter_one(objects: list[object], pod: Pod, node: Node) -> Status | None:
    plugin = new(None, FakeHandle(objects=objects))
    state = CycleState()
    assert plugin.pre_filter(state, pod, []) == (None, None)
    return plugin.filter(state, pod, NodeInfo(node))


@pytest.mark.parametrize(
    ("storage_class", "want"),
    [
        pytest.param(
            StorageClass("wait", "csi.example.com", "WaitForFirstConsumer"),
            None,
            id="provisioner, no topology",
        ),
        pytest.param(
            StorageClass("wait", "", "WaitForFirstConsumer"), BIND_CONFLICT, id="no provisioner"
        ),
        pytest.param(
            StorageClass("wait", "kubernetes.io/no-provisioner", "WaitForFirstConsumer"),
            BIND_CONFLICT,
            id="not supported provisioner",
        ),
        pytest.param(
            StorageClass(
                "wait",
                "csi.example.com",
                "WaitForFirstConsumer",
                (
                    NodeSelectorTerm(
                        (NodeSelectorRequirement("zone", "In", ("z1", "z3")),),
                    ),
                ),
            ),
            None,
            id="allowed topology matches",
        ),
        pytest.param(
            StorageClass(
                "wait",
                "csi.example.com",
                "WaitForFirstConsumer",
                (NodeSelectorTerm((NodeSelectorRequirement("zone", "In", ("z2",)),)),),
            ),
            BIND_CONFLICT,
            id="allowed topology does not match",
        ),
    ],
)
def test_dynamic_provisioning(storage_class: StorageClass, want: Status | None) -> None:
    objects: list[object] = [storage_class, make_pvc("c", "wait")]
    assert filter_one(objects, make_pod_with("p", "c"), NODE_1) == want


def test_a_claim_selected_for_another_node_cannot_bind_here() -> None:
    claim = make_pvc("c", "wait", annotations={ANN_SELECTED_NODE: "node2"})
    objects: list[object] = [StorageClass("wait", "csi.example.com", "WaitForFirstConsumer"), claim]
    assert filter_one(objects, make_pod_with("p", "c"), NODE_1) == BIND_CONFLICT


def test_a_claim_of_a_missing_class_waits_for_the_pv_controller() -> None:
    # Without its class the claim cannot be delayed, so it is an unbound immediate claim.
    plugin = new(None, FakeHandle(objects=[make_pvc("c", "missing")]))
    got = plugin.pre_filter(CycleState(), make_pod_with("p", "c"), [])
    assert got == (None, unresolvable(ERR_REASON_UNBOUND_IMMEDIATE))


def test_a_pre_bound_claim_waits_for_the_pv_controller() -> None:
    claim = PersistentVolumeClaim("c", storage_class_name=WAIT_SC.name, volume_name="pv")
    plugin = new(None, FakeHandle(objects=[WAIT_SC, claim, make_pv("pv", WAIT_SC.name)]))
    got = plugin.pre_filter(CycleState(), make_pod_with("p", "c"), [])
    assert got == (None, unresolvable(ERR_REASON_UNBOUND_IMMEDIATE))


def test_a_class_without_binding_mode_is_an_error() -> None:
    objects: list[object] = [StorageClass("odd", volume_binding_mode=""), make_pvc("c", "odd")]
    plugin = new(None, FakeHandle(objects=objects))
    _, status = plugin.pre_filter(CycleState(), make_pod_with("p", "c"), [])
    assert status is not None and status.code == Code.Error
    assert status.message() == 'VolumeBindingMode not set for StorageClass "odd"'


# --- Reserve, PreBind, Unreserve


def schedule(plugin: VolumeBinding, pod: Pod, node: Node) -> CycleState:
    state = CycleState()
    assert plugin.pre_filter(state, pod, []) == (None, None)
    assert plugin.filter(state, pod, NodeInfo(node)) is None
    assert plugin.reserve(state, pod, node.name) is None
    return state


def test_pre_bind_binds_the_chosen_volume_through_the_api() -> None:
    handle = FakeHandle(objects=[WAIT_SC, make_pvc("c", WAIT_SC.name), make_pv("pv", WAIT_SC.name)])
    plugin = new(None, handle)
    pod = make_pod_with("p", "c")
    state = schedule(plugin, pod, NODE_1)
    assert plugin.pre_bind(state, pod, NODE_1.name) is None

    pv = handle.objects.get("PersistentVolume", "pv")
    pvc = handle.objects.get("PersistentVolumeClaim", "default/c")
    assert isinstance(pv, PersistentVolume) and isinstance(pvc, PersistentVolumeClaim)
    assert (pv.claim_ref, pv.phase) == ("default/c", "Bound")
    assert (pvc.volume_name, pvc.phase) == ("pv", "Bound")
    assert ANN_BIND_COMPLETED in pvc.annotations
    # The next pod using the claim finds it bound.
    state = CycleState()
    assert plugin.pre_filter(state, make_pod_with("q", "c"), []) == (None, None)
    assert plugin.reserve(state, make_pod_with("q", "c"), NODE_1.name) is None
    assert plugin.pre_bind(state, make_pod_with("q", "c"), NODE_1.name) is None


def test_pre_bind_asks_for_provisioning_on_the_chosen_node() -> None:
    storage_class = StorageClass("wait", "csi.example.com", "WaitForFirstConsumer")
    handle = FakeHandle(objects=[storage_class, make_pvc("c", "wait")])
    plugin = new(None, handle)
    pod = make_pod_with("p", "c")
    state = schedule(plugin, pod, NODE_1)
    assert plugin.pre_bind(state, pod, NODE_1.name) is None
    pvc = handle.objects.get("PersistentVolumeClaim", "default/c")
    assert isinstance(pvc, PersistentVolumeClaim)
    assert pvc.annotations[ANN_SELECTED_NODE] == NODE_1.name
    assert pvc.volume_name == ""


def test_a_reserved_volume_is_not_offered_to_the_next_pod_until_unreserved() -> None:
    objects: list[object] = [
        WAIT_SC,
        make_pvc("c1", WAIT_SC.name),
        make_pvc("c2", WAIT_SC.name),
        make_pv("only", WAIT_SC.name),
    ]
    plugin = new(None, FakeHandle(objects=objects))
    first = make_pod_with("p1", "c1")
    state = schedule(plugin, first, NODE_1)

    second = make_pod_with("p2", "c2")
    other = CycleState()
    assert plugin.pre_filter(other, second, []) == (None, None)
    assert plugin.filter(other, second, NodeInfo(NODE_1)) == BIND_CONFLICT

    plugin.unreserve(state, first, NODE_1.name)
    other = CycleState()
    assert plugin.pre_filter(other, second, []) == (None, None)
    assert plugin.filter(other, second, NodeInfo(NODE_1)) is None


def test_pre_bind_on_a_node_filter_did_not_see_is_an_error() -> None:
    objects: list[object] = [WAIT_SC, make_pvc("c", WAIT_SC.name), make_pv("pv", WAIT_SC.name)]
    plugin = new(None, FakeHandle(objects=objects))
    pod = make_pod_with("p", "c")
    state = schedule(plugin, pod, NODE_1)
    status = plugin.pre_bind(state, pod, "elsewhere")
    assert status is not None and status.code == Code.Error
    assert status.message() == 'no pod volumes found for node "elsewhere"'


def test_reserve_on_a_node_filter_did_not_see_counts_as_all_bound() -> None:
    objects: list[object] = [WAIT_SC, make_pvc("c", WAIT_SC.name), make_pv("pv", WAIT_SC.name)]
    plugin = new(None, FakeHandle(objects=objects))
    pod = make_pod_with("p", "c")
    state = CycleState()
    plugin.pre_filter(state, pod, [])
    assert plugin.reserve(state, pod, "elsewhere") is None
    assert plugin.pre_bind(state, pod, "elsewhere") is None


def test_filter_without_pre_filter_is_an_error() -> None:
    plugin = new(None, FakeHandle())
    status = plugin.filter(CycleState(), make_pod_with("p", "c"), NodeInfo(NODE_1))
    assert status is not None and status.code == Code.Error


# --- new()


def test_new_refuses_other_args() -> None:
    with pytest.raises(TypeError, match="want args to be of type VolumeBindingArgs, got str"):
        new("nope", FakeHandle())


def test_new_validates_the_bind_timeout() -> None:
    with pytest.raises(ConfigError, match="bindTimeoutSeconds"):
        new(VolumeBindingArgs(bind_timeout_seconds=-1), FakeHandle())


# --- events and queueing hints


def test_it_registers_its_events() -> None:
    plugin = new(None, FakeHandle())
    assert plugin.name() == NAME
    add_update = ActionType.Add | ActionType.Update
    assert [e.event for e in plugin.events_to_register()] == [
        ClusterEvent(EventResource.StorageClass, add_update),
        ClusterEvent(EventResource.PersistentVolumeClaim, add_update),
        ClusterEvent(EventResource.PersistentVolume, add_update),
        ClusterEvent(EventResource.Node, ActionType.Add | ActionType.UpdateNodeLabel),
        ClusterEvent(EventResource.CSINode, add_update),
        ClusterEvent(EventResource.CSIDriver, ActionType.Update),
        ClusterEvent(EventResource.CSIStorageCapacity, add_update),
    ]


TWO_CLAIMS_POD = make_pod_with("pod-a", "pvc-a", "pvc-b")
EPHEMERAL_POD = (
    make_pod().name("pod-a").volume(Volume("ephemeral-a", source_kind="ephemeral")).obj()
)
EMPTY_DIR_POD = make_pod().name("pod-a").volume(Volume("empty", source_kind="emptyDir")).obj()


@pytest.mark.parametrize(
    ("pod", "old", "new_obj", "want"),
    [
        pytest.param(
            make_pod_with("pod-a"), None, make_pvc("pvc-b", "sc-a"), QueueingHint.QueueSkip,
            id="pod has no pvcs",
        ),
        pytest.param(
            EMPTY_DIR_POD, make_pvc("pvc-b", "sc-a"), make_pvc("pvc-b", "sc-a"),
            QueueingHint.QueueSkip, id="pod has no pvc or ephemeral volumes",
        ),
        pytest.param(
            TWO_CLAIMS_POD, None, make_pvc("pvc-b", "sc-b"), QueueingHint.Queue,
            id="pod has a newly added pvc",
        ),
        pytest.param(
            TWO_CLAIMS_POD, make_pvc("pvc-a", "sc-b"), make_pvc("pvc-a", "sc-b", phase="Bound"),
            QueueingHint.Queue, id="pod has pvcs with changed status.phase",
        ),
        pytest.param(
            EPHEMERAL_POD, make_pvc("pod-a-ephemeral-a", "sc-a"),
            make_pvc("pod-a-ephemeral-a", "sc-a", phase="Bound"), QueueingHint.Queue,
            id="pod has ephemeral volume with changed status.phase",
        ),
        pytest.param(
            TWO_CLAIMS_POD, None,
            PersistentVolumeClaim("pvc-a", namespace="other"), QueueingHint.QueueSkip,
            id="a claim of the same name in another namespace",
        ),
        pytest.param(TWO_CLAIMS_POD, None, object(), QueueingHint.Queue, id="type conversion"),
    ],
)  # fmt: skip
def test_pvc_change_hint(pod: Pod, old: object, new_obj: object, want: QueueingHint) -> None:
    plugin = new(None, FakeHandle())
    assert plugin.is_schedulable_after_persistent_volume_claim_change(pod, old, new_obj) == want


def hostname_topology(*values: str) -> tuple[NodeSelectorTerm, ...]:
    return (NodeSelectorTerm((NodeSelectorRequirement(HOSTNAME, "In", values),)),)


@pytest.mark.parametrize(
    ("old", "new_obj", "want"),
    [
        pytest.param(None, StorageClass("sc-b"), QueueingHint.Queue, id="newly added class"),
        pytest.param(
            StorageClass("sc-b"), StorageClass("sc-b"), QueueingHint.QueueSkip, id="unchanged"
        ),
        pytest.param(
            StorageClass("sc-b", allowed_topologies=hostname_topology("node1", "node2")),
            StorageClass("sc-b", allowed_topologies=hostname_topology("node1", "node3")),
            QueueingHint.Queue,
            id="changed AllowedTopologies",
        ),
        pytest.param(object(), object(), QueueingHint.Queue, id="type conversion error"),
    ],
)
def test_storage_class_change_hint(old: object, new_obj: object, want: QueueingHint) -> None:
    plugin = new(None, FakeHandle())
    assert plugin.is_schedulable_after_storage_class_change(TWO_CLAIMS_POD, old, new_obj) == want


def csi_node(migrated: str | None) -> CSINode:
    annotations = (
        {} if migrated is None else {"storage.alpha.kubernetes.io/migrated-plugins": migrated}
    )
    return CSINode("n", manifest={"metadata": {"annotations": annotations}})


@pytest.mark.parametrize(
    ("old", "new_obj", "want"),
    [
        pytest.param(None, csi_node(None), QueueingHint.Queue, id="CSINode created"),
        pytest.param(
            csi_node("kubernetes.io/aws-ebs"),
            csi_node("kubernetes.io/aws-ebs"),
            QueueingHint.QueueSkip,
            id="migrated plugins unchanged",
        ),
        pytest.param(
            csi_node(None),
            csi_node("kubernetes.io/aws-ebs"),
            QueueingHint.Queue,
            id="migrated plugins annotation changed",
        ),
    ],
)
def test_csi_node_change_hint(old: object, new_obj: object, want: QueueingHint) -> None:
    plugin = new(None, FakeHandle())
    assert plugin.is_schedulable_after_csi_node_change(TWO_CLAIMS_POD, old, new_obj) == want


# --- binder_test.go: TestFindPodVolumesWithoutProvisioning / WithProvisioning

NODE_LABEL_KEY = "nodeKey"
WAIT_CLASS = StorageClass("waitClass", "kubernetes.io/no-provisioner", "WaitForFirstConsumer")
WAIT_CLASS_WITH_PROVISIONER = StorageClass(
    "waitClassWithProvisioner",
    "test-provisioner",
    "WaitForFirstConsumer",
    (
        NodeSelectorTerm(
            (NodeSelectorRequirement(NODE_LABEL_KEY, "In", ("node1", "reference-value")),)
        ),
    ),
)
IMMEDIATE_CLASS = StorageClass("immediateClass", volume_binding_mode="Immediate")
TOPO_MISMATCH_CLASS = StorageClass(
    "topoMismatchClass",
    "test-provisioner",
    "WaitForFirstConsumer",
    (NodeSelectorTerm((NodeSelectorRequirement(NODE_LABEL_KEY, "In", ("reference-value",)),)),),
)
BINDER_CLASSES = [WAIT_CLASS, WAIT_CLASS_WITH_PROVISIONER, IMMEDIATE_CLASS, TOPO_MISMATCH_CLASS]


def binder_pvc(
    name: str, size: str, class_name: str, *, bound: str = "", prebound: str = "", node: str = ""
) -> PersistentVolumeClaim:
    """makeTestPVC: bound (with bind-completed), pre-bound, or with a selected node."""
    claim = make_pvc(
        name,
        class_name,
        bound_pv=bound,
        request=size,
        annotations={ANN_SELECTED_NODE: node} if node else None,
    )
    return replace(claim, namespace="testns", volume_name=bound or prebound)


def binder_pv(
    name: str, node: str, size: str, class_name: str, claim: PersistentVolumeClaim | None = None
) -> PersistentVolume:
    """makeTestPV: a volume on one node, bound to ``claim`` if given."""
    return make_pv(
        name,
        class_name,
        phase="Bound" if claim else "Available",
        capacity=size,
        on={NODE_LABEL_KEY: [node]},
        claim_ref=claim.key if claim else None,
    )


UNBOUND_PVC = binder_pvc("unbound-pvc", "1G", "waitClass")
UNBOUND_PVC_2 = binder_pvc("unbound-pvc2", "5G", "waitClass")
PREBOUND_PVC = binder_pvc("prebound-pvc", "1G", "waitClass", prebound="pv-node1a")
BOUND_PVC = binder_pvc("bound-pvc", "1G", "waitClass", bound="pv-bound")
IMMEDIATE_UNBOUND_PVC = binder_pvc("immediate-unbound-pvc", "1G", "immediateClass")
IMMEDIATE_BOUND_PVC = binder_pvc(
    "immediate-bound-pvc", "1G", "immediateClass", bound="pv-bound-immediate"
)
PROVISIONED_PVC = binder_pvc("provisioned-pvc", "1Gi", "waitClassWithProvisioner")
SELECTED_NODE_PVC = binder_pvc("provisioned-pvc", "1Gi", "waitClassWithProvisioner", node="node1")
NO_PROVISIONER_PVC = binder_pvc("no-provisioner-pvc", "1Gi", "waitClass")
TOPO_MISMATCH_PVC = binder_pvc("topo-mismatch-pvc", "1Gi", "topoMismatchClass")

PV_NODE_1A = binder_pv("pv-node1a", "node1", "5G", "waitClass")
PV_NODE_1B = binder_pv("pv-node1b", "node1", "10G", "waitClass")
PV_NODE_2 = binder_pv("pv-node2", "node2", "1G", "waitClass")
PV_BOUND = binder_pv("pv-bound", "node1", "1G", "waitClass", BOUND_PVC)
PV_NODE_1A_BOUND = binder_pv("pv-node1a", "node1", "5G", "waitClass", UNBOUND_PVC)
PV_BOUND_IMMEDIATE = binder_pv(
    "pv-bound-immediate", "node1", "1G", "immediateClass", IMMEDIATE_BOUND_PVC
)
PV_BOUND_IMMEDIATE_NODE_2 = binder_pv(
    "pv-bound-immediate", "node2", "1G", "immediateClass", IMMEDIATE_BOUND_PVC
)
BINDER_NODE = make_node().name("node1").label(NODE_LABEL_KEY, "node1").obj()
FAIL = "fail"

# (pvcs, pvs, bindings as (claim, volume), provisions, reasons or FAIL)
FIND_POD_VOLUMES_CASES = [
    pytest.param([], [], [], [], [], id="no-volumes"),
    pytest.param([BOUND_PVC], [PV_BOUND], [], [], [], id="bound-pvc"),
    pytest.param([BOUND_PVC], [], [], [], [ERR_REASON_PV_NOT_EXIST], id="bound-pvc,pv-not-exists"),
    pytest.param([PREBOUND_PVC], [PV_NODE_1A_BOUND], [], [], FAIL, id="prebound-pvc"),
    pytest.param(
        [UNBOUND_PVC], [PV_NODE_2, PV_NODE_1A, PV_NODE_1B],
        [("unbound-pvc", "pv-node1a")], [], [], id="unbound-pvc,pv-same-node",
    ),
    pytest.param(
        [UNBOUND_PVC], [PV_NODE_2], [], [], [ERR_REASON_BIND_CONFLICT],
        id="unbound-pvc,pv-different-node",
    ),
    pytest.param(
        [UNBOUND_PVC, UNBOUND_PVC_2], [PV_NODE_1A, PV_NODE_1B],
        [("unbound-pvc", "pv-node1a"), ("unbound-pvc2", "pv-node1b")], [], [],
        id="two-unbound-pvcs",
    ),
    pytest.param(
        [UNBOUND_PVC_2, UNBOUND_PVC], [PV_NODE_1A, PV_NODE_1B],
        [("unbound-pvc", "pv-node1a"), ("unbound-pvc2", "pv-node1b")], [], [],
        id="two-unbound-pvcs,order-by-size",
    ),
    pytest.param(
        [UNBOUND_PVC, UNBOUND_PVC_2], [PV_NODE_1A], [("unbound-pvc", "pv-node1a")], [],
        [ERR_REASON_BIND_CONFLICT], id="two-unbound-pvcs,partial-match",
    ),
    pytest.param(
        [UNBOUND_PVC, BOUND_PVC], [PV_BOUND, PV_NODE_1A], [("unbound-pvc", "pv-node1a")], [], [],
        id="one-bound,one-unbound",
    ),
    pytest.param(
        [UNBOUND_PVC, BOUND_PVC], [PV_BOUND, PV_NODE_2], [], [], [ERR_REASON_BIND_CONFLICT],
        id="one-bound,one-unbound,no-match",
    ),
    pytest.param(
        [UNBOUND_PVC, PREBOUND_PVC], [PV_NODE_1A, PV_NODE_1B], [], [], FAIL,
        id="one-prebound,one-unbound",
    ),
    pytest.param(
        [IMMEDIATE_BOUND_PVC], [PV_BOUND_IMMEDIATE], [], [], [], id="immediate-bound-pvc"
    ),
    pytest.param(
        [IMMEDIATE_BOUND_PVC], [PV_BOUND_IMMEDIATE_NODE_2], [], [], [ERR_REASON_NODE_CONFLICT],
        id="immediate-bound-pvc-wrong-node",
    ),
    pytest.param([IMMEDIATE_UNBOUND_PVC], [], [], [], FAIL, id="immediate-unbound-pvc"),
    pytest.param(
        [IMMEDIATE_UNBOUND_PVC, BOUND_PVC], [PV_BOUND], [], [], FAIL,
        id="immediate-unbound-pvc,delayed-mode-bound",
    ),
    pytest.param(
        [IMMEDIATE_UNBOUND_PVC, UNBOUND_PVC], [], [], [], FAIL,
        id="immediate-unbound-pvc,delayed-mode-unbound",
    ),
    # TestFindPodVolumesWithProvisioning ("no CSIDriver": capacity is not checked)
    pytest.param(
        [PROVISIONED_PVC], [], [], ["provisioned-pvc"], [], id="one-provisioned"
    ),
    pytest.param(
        [UNBOUND_PVC, PROVISIONED_PVC], [PV_NODE_1A], [("unbound-pvc", "pv-node1a")],
        ["provisioned-pvc"], [], id="two-unbound-pvcs,one-matched,one-provisioned",
    ),
    pytest.param(
        [BOUND_PVC, PROVISIONED_PVC], [PV_BOUND], [], ["provisioned-pvc"], [],
        id="one-bound,one-provisioned",
    ),
    pytest.param(
        [BOUND_PVC, SELECTED_NODE_PVC], [PV_BOUND], [], ["provisioned-pvc"], [],
        id="one-binding,one-selected-node",
    ),
    pytest.param(
        [IMMEDIATE_BOUND_PVC, PROVISIONED_PVC], [PV_BOUND_IMMEDIATE], [], ["provisioned-pvc"], [],
        id="one-immediate-bound,one-provisioned",
    ),
    pytest.param(
        [NO_PROVISIONER_PVC], [], [], [], [ERR_REASON_BIND_CONFLICT], id="invalid-provisioner"
    ),
    pytest.param(
        [TOPO_MISMATCH_PVC], [], [], [], [ERR_REASON_BIND_CONFLICT],
        id="volume-topology-unsatisfied",
    ),
]  # fmt: skip


@pytest.mark.parametrize(
    ("pvcs", "pvs", "bindings", "provisions", "reasons"), FIND_POD_VOLUMES_CASES
)
def test_find_pod_volumes(
    pvcs: list[PersistentVolumeClaim],
    pvs: list[PersistentVolume],
    bindings: list[tuple[str, str]],
    provisions: list[str],
    reasons: list[str] | str,
) -> None:
    plugin = new(None, FakeHandle(objects=[*BINDER_CLASSES, *pvcs, *pvs]))
    wrapper = make_pod().name("test-pod").namespace("testns").node("node1")
    for pvc in pvcs:
        wrapper = wrapper.pvc(pvc.name)
    pod = wrapper.obj()
    claims = plugin.binder.get_pod_volume_claims(pod)
    if claims.unbound_claims_immediate:
        assert reasons == FAIL
        return
    pod_volumes, got_reasons = plugin.binder.find_pod_volumes(pod, claims, BINDER_NODE)
    assert sorted(got_reasons) == sorted(reasons)
    assert [(b.pvc.name, b.pv.name) for b in pod_volumes.static_bindings] == bindings
    assert [c.name for c in pod_volumes.dynamic_provisions] == provisions
