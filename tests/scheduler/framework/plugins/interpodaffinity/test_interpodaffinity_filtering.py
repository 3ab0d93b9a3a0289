"""InterPodAffinity PreFilter/Filter: upstream's filtering_test.go tables.

Upstream's pods default to namespace "" and ours to "default"; both sides of every case use the
default, so the cases keep their meaning. The two "invalid label syntax" cases are not ported: the
manifest loader rejects such selectors before a pod reaches the scheduler.
"""

from __future__ import annotations

import dataclasses

import pytest

from schedviz.kube.objects import (
    Affinity,
    LabelSelector,
    Namespace,
    Node,
    Pod,
    PodAffinity,
    PodAffinityTerm,
)
from schedviz.scheduler.apis.config.types_pluginargs import InterPodAffinityArgs
from schedviz.scheduler.framework.cycle_state import CycleState
from schedviz.scheduler.framework.interface import Code, Status, as_status, new_status
from schedviz.scheduler.framework.plugins.interpodaffinity import (
    ERR_REASON_AFFINITY_RULES_NOT_MATCH,
    ERR_REASON_ANTI_AFFINITY_RULES_NOT_MATCH,
    ERR_REASON_EXISTING_ANTI_AFFINITY_RULES_NOT_MATCH,
    InterPodAffinity,
    new,
)
from schedviz.scheduler.framework.plugins.interpodaffinity.filtering import (
    PreFilterState,
    get_incoming_affinity_anti_affinity_counts,
    get_pre_filter_state,
)
from schedviz.scheduler.framework.types import NodeInfo, PodInfo
from schedviz.scheduler.testing.framework_helpers import FakeHandle
from schedviz.scheduler.testing.wrappers import PodWrapper, label_selector, make_pod

NAMESPACES = [
    Namespace("subteam1.team1", labels={"team": "team1"}),
    Namespace("subteam2.team1", labels={"team": "team1"}),
    Namespace("subteam1.team2", labels={"team": "team2"}),
    Namespace("subteam2.team2", labels={"team": "team2"}),
]

SKIP = new_status(Code.Skip)
AFFINITY_REJECTED = new_status(
    Code.UnschedulableAndUnresolvable, ERR_REASON_AFFINITY_RULES_NOT_MATCH
)
ANTI_AFFINITY_REJECTED = new_status(Code.Unschedulable, ERR_REASON_ANTI_AFFINITY_RULES_NOT_MATCH)
EXISTING_ANTI_AFFINITY_REJECTED = new_status(
    Code.Unschedulable, ERR_REASON_EXISTING_ANTI_AFFINITY_RULES_NOT_MATCH
)


def expr(key: str, op: str, values: list[str] | None = None) -> tuple[str, str, list[str]]:
    return (key, op, values or [])


def selector(*expressions: tuple[str, str, list[str]]) -> LabelSelector:
    return label_selector(expressions=list(expressions))


def required(w: PodWrapper, *, anti: bool, term: PodAffinityTerm) -> PodWrapper:
    """Appends a required term, as st.MakePod().PodAffinityIn(..., PodAffinityWithRequiredReq)."""
    affinity = w.obj().affinity
    current = None
    if affinity is not None:
        current = affinity.pod_anti_affinity if anti else affinity.pod_affinity
    current = current or PodAffinity()
    updated = dataclasses.replace(current, required=(*current.required, term))
    return w.pod_anti_affinity(updated) if anti else w.pod_affinity(updated)


def aff(w: PodWrapper, key: str, topology_key: str, op: str, values: list[str]) -> PodWrapper:
    return required(
        w, anti=False, term=PodAffinityTerm(topology_key, selector(expr(key, op, values)))
    )


def anti(w: PodWrapper, key: str, topology_key: str, op: str, values: list[str]) -> PodWrapper:
    return required(
        w, anti=True, term=PodAffinityTerm(topology_key, selector(expr(key, op, values)))
    )


def with_terms(
    namespace: str,
    node_name: str,
    labels: dict[str, str],
    affinity: list[PodAffinityTerm],
    anti_affinity: list[PodAffinityTerm],
) -> Pod:
    """Upstream's createPodWithAffinityTerms."""
    return Pod(
        name="",
        namespace=namespace,
        labels=labels,
        node_name=node_name,
        affinity=Affinity(
            pod_affinity=PodAffinity(required=tuple(affinity)),
            pod_anti_affinity=PodAffinity(required=tuple(anti_affinity)),
        ),
    )


def node(name: str, labels: dict[str, str]) -> Node:
    return Node(name=name, labels=dict(labels))


def setup(
    pods: list[Pod], nodes: list[Node], objects: list[object] | None = None
) -> tuple[InterPodAffinity, FakeHandle]:
    handle = FakeHandle(pods, nodes, objects=NAMESPACES if objects is None else objects)
    return new(InterPodAffinityArgs(), handle), handle


def node_info(handle: FakeHandle, name: str) -> NodeInfo:
    info = handle.snapshot.get(name)
    assert info is not None
    return info


# ---------------------------------------------------------------------------------------------
# TestRequiredAffinitySingleNode

POD_LABEL = {"service": "securityscan"}
POD_LABEL2 = {"security": "S1"}
EXISTING = make_pod().labels(POD_LABEL).node("node1").obj()
NODE1 = node("node1", {"region": "r1", "zone": "z11"})
SECURITYSCAN_IN = selector(expr("service", "In", ["securityscan", "value2"]))
TEAM1 = selector(expr("team", "In", ["team1"]))

SINGLE_NODE_CASES: list[tuple[str, Pod, list[Pod], Status | None, Status | None]] = [
    (
        "A pod that has no required pod affinity scheduling rules can schedule onto a node "
        "with no existing pods",
        Pod(name=""),
        [],
        SKIP,
        None,
    ),
    (
        "satisfies with requiredDuringSchedulingIgnoredDuringExecution in PodAffinity using In "
        "operator that matches the existing pod",
        aff(
            make_pod().labels(POD_LABEL2), "service", "region", "In", ["securityscan", "value2"]
        ).obj(),
        [EXISTING],
        None,
        None,
    ),
    (
        "satisfies the pod with requiredDuringSchedulingIgnoredDuringExecution in PodAffinity "
        "using not in operator in labelSelector that matches the existing pod",
        aff(
            make_pod().labels(POD_LABEL2), "service", "region", "NotIn", ["securityscan3", "value3"]
        ).obj(),
        [EXISTING],
        None,
        None,
    ),
    (
        "Does not satisfy the PodAffinity with labelSelector because of diff Namespace",
        with_terms(
            "default",
            "",
            POD_LABEL2,
            [PodAffinityTerm("", SECURITYSCAN_IN, namespaces=("DiffNameSpace",))],
            [],
        ),
        [make_pod().namespace("ns").label("service", "securityscan").node("node1").obj()],
        None,
        AFFINITY_REJECTED,
    ),
    (
        "Doesn't satisfy the PodAffinity because of unmatching labelSelector with the existing pod",
        aff(make_pod().labels(POD_LABEL), "service", "", "In", ["antivirusscan", "value2"]).obj(),
        [EXISTING],
        None,
        AFFINITY_REJECTED,
    ),
    (
        "satisfies the PodAffinity with different label Operators in multiple "
        "RequiredDuringSchedulingIgnoredDuringExecution ",
        with_terms(
            "default",
            "",
            POD_LABEL2,
            [
                PodAffinityTerm(
                    "region", selector(expr("service", "Exists"), expr("wrongkey", "DoesNotExist"))
                ),
                PodAffinityTerm(
                    "region",
                    selector(
                        expr("service", "In", ["securityscan"]),
                        expr("service", "NotIn", ["WrongValue"]),
                    ),
                ),
            ],
            [],
        ),
        [EXISTING],
        None,
        None,
    ),
    (
        "The labelSelector requirements(items of matchExpressions) are ANDed, the pod cannot "
        "schedule onto the node because one of the matchExpression item don't match.",
        with_terms(
            "default",
            "",
            POD_LABEL2,
            [
                PodAffinityTerm(
                    "region", selector(expr("service", "Exists"), expr("wrongkey", "DoesNotExist"))
                ),
                PodAffinityTerm(
                    "region",
                    selector(
                        expr("service", "In", ["securityscan2"]),
                        expr("service", "NotIn", ["WrongValue"]),
                    ),
                ),
            ],
            [],
        ),
        [EXISTING],
        None,
        AFFINITY_REJECTED,
    ),
    (
        "satisfies the PodAffinity and PodAntiAffinity with the existing pod",
        anti(
            aff(
                make_pod().labels(POD_LABEL2), "service", "region", "In", ["securityscan", "value2"]
            ),
            "service",
            "node",
            "In",
            ["antivirusscan", "value2"],
        ).obj(),
        [EXISTING],
        None,
        None,
    ),
    (
        "satisfies the PodAffinity and PodAntiAffinity and PodAntiAffinity symmetry with the "
        "existing pod",
        anti(
            aff(
                make_pod().labels(POD_LABEL2), "service", "region", "In", ["securityscan", "value2"]
            ),
            "service",
            "node",
            "In",
            ["antivirusscan", "value2"],
        ).obj(),
        [
            anti(
                make_pod().node("node1").labels(POD_LABEL),
                "service",
                "node",
                "In",
                ["antivirusscan", "value2"],
            ).obj()
        ],
        None,
        None,
    ),
    (
        "satisfies the PodAffinity but doesn't satisfy the PodAntiAffinity with the existing pod",
        anti(
            aff(
                make_pod().labels(POD_LABEL2), "service", "region", "In", ["securityscan", "value2"]
            ),
            "service",
            "zone",
            "In",
            ["securityscan", "value2"],
        ).obj(),
        [EXISTING],
        None,
        ANTI_AFFINITY_REJECTED,
    ),
    (
        "satisfies the PodAffinity and PodAntiAffinity but doesn't satisfy PodAntiAffinity "
        "symmetry with the existing pod",
        anti(
            aff(
                make_pod().labels(POD_LABEL), "service", "region", "In", ["securityscan", "value2"]
            ),
            "service",
            "node",
            "In",
            ["antivirusscan", "value2"],
        ).obj(),
        [
            anti(
                make_pod().labels(POD_LABEL).node("node1"),
                "service",
                "zone",
                "In",
                ["securityscan", "value2"],
            ).obj()
        ],
        None,
        EXISTING_ANTI_AFFINITY_REJECTED,
    ),
    (
        "pod matches its own Label in PodAffinity and that matches the existing pod Labels",
        aff(
            make_pod().labels(POD_LABEL), "service", "region", "NotIn", ["securityscan", "value2"]
        ).obj(),
        [make_pod().label("service", "securityscan").node("node2").obj()],
        None,
        AFFINITY_REJECTED,
    ),
    (
        "verify that PodAntiAffinity from existing pod is respected when pod has no "
        "AntiAffinity constraints. doesn't satisfy PodAntiAffinity symmetry with the existing pod",
        make_pod().labels(POD_LABEL).obj(),
        [
            anti(
                make_pod().node("node1").labels(POD_LABEL),
                "service",
                "zone",
                "In",
                ["securityscan", "value2"],
            ).obj()
        ],
        None,
        EXISTING_ANTI_AFFINITY_REJECTED,
    ),
    (
        "verify that PodAntiAffinity from existing pod is respected when pod has no "
        "AntiAffinity constraints. satisfy PodAntiAffinity symmetry with the existing pod",
        make_pod().labels(POD_LABEL).obj(),
        [
            anti(
                make_pod().node("node1").labels(POD_LABEL),
                "service",
                "zone",
                "NotIn",
                ["securityscan", "value2"],
            ).obj()
        ],
        SKIP,
        None,
    ),
    (
        "satisfies the PodAntiAffinity with existing pod but doesn't satisfy PodAntiAffinity "
        "symmetry with incoming pod",
        make_pod()
        .labels(POD_LABEL)
        .pod_anti_affinity_exists("service", "region")
        .pod_anti_affinity_exists("security", "region")
        .obj(),
        [
            make_pod()
            .node("node1")
            .labels(POD_LABEL2)
            .pod_anti_affinity_exists("security", "zone")
            .obj()
        ],
        None,
        ANTI_AFFINITY_REJECTED,
    ),
    (
        "PodAntiAffinity symmetry check a1: incoming pod and existing pod partially match each "
        "other on AffinityTerms",
        make_pod()
        .labels(POD_LABEL)
        .pod_anti_affinity_exists("service", "zone")
        .pod_anti_affinity_exists("security", "zone")
        .obj(),
        [
            make_pod()
            .node("node1")
            .labels(POD_LABEL2)
            .pod_anti_affinity_exists("security", "zone")
            .obj()
        ],
        None,
        ANTI_AFFINITY_REJECTED,
    ),
    (
        "PodAntiAffinity symmetry check a2: incoming pod and existing pod partially match each "
        "other on AffinityTerms",
        make_pod().labels(POD_LABEL2).pod_anti_affinity_exists("security", "zone").obj(),
        [
            make_pod()
            .node("node1")
            .labels(POD_LABEL)
            .pod_anti_affinity_exists("service", "zone")
            .pod_anti_affinity_exists("security", "zone")
            .obj()
        ],
        None,
        EXISTING_ANTI_AFFINITY_REJECTED,
    ),
    (
        "PodAntiAffinity symmetry check b1: incoming pod and existing pod partially match each "
        "other on AffinityTerms",
        make_pod()
        .labels({"abc": "", "xyz": ""})
        .pod_anti_affinity_exists("abc", "zone")
        .pod_anti_affinity_exists("def", "zone")
        .obj(),
        [
            make_pod()
            .node("node1")
            .labels({"def": "", "xyz": ""})
            .pod_anti_affinity_exists("abc", "zone")
            .pod_anti_affinity_exists("def", "zone")
            .obj()
        ],
        None,
        ANTI_AFFINITY_REJECTED,
    ),
    (
        "PodAntiAffinity symmetry check b2: incoming pod and existing pod partially match each "
        "other on AffinityTerms",
        make_pod()
        .labels({"def": "", "xyz": ""})
        .pod_anti_affinity_exists("abc", "zone")
        .pod_anti_affinity_exists("def", "zone")
        .obj(),
        [
            make_pod()
            .node("node1")
            .labels({"abc": "", "xyz": ""})
            .pod_anti_affinity_exists("abc", "zone")
            .pod_anti_affinity_exists("def", "zone")
            .obj()
        ],
        None,
        ANTI_AFFINITY_REJECTED,
    ),
    (
        "affinity with NamespaceSelector",
        with_terms(
            "default",
            "",
            POD_LABEL2,
            [PodAffinityTerm("region", SECURITYSCAN_IN, namespace_selector=TEAM1)],
            [],
        ),
        [Pod(name="", namespace="subteam1.team1", labels=POD_LABEL, node_name="node1")],
        None,
        None,
    ),
    (
        "affinity with non-matching NamespaceSelector",
        with_terms(
            "default",
            "",
            POD_LABEL2,
            [PodAffinityTerm("region", SECURITYSCAN_IN, namespace_selector=TEAM1)],
            [],
        ),
        [Pod(name="", namespace="subteam1.team2", labels=POD_LABEL, node_name="node1")],
        None,
        AFFINITY_REJECTED,
    ),
    (
        "anti-affinity with matching NamespaceSelector",
        with_terms(
            "subteam1.team1",
            "",
            POD_LABEL2,
            [],
            [PodAffinityTerm("zone", SECURITYSCAN_IN, namespace_selector=TEAM1)],
        ),
        [Pod(name="", namespace="subteam2.team1", labels=POD_LABEL, node_name="node1")],
        None,
        ANTI_AFFINITY_REJECTED,
    ),
    (
        "anti-affinity with matching all NamespaceSelector",
        with_terms(
            "subteam1.team1",
            "",
            POD_LABEL2,
            [],
            [PodAffinityTerm("zone", SECURITYSCAN_IN, namespace_selector=LabelSelector())],
        ),
        [Pod(name="", namespace="subteam2.team1", labels=POD_LABEL, node_name="node1")],
        None,
        ANTI_AFFINITY_REJECTED,
    ),
    (
        "anti-affinity with non-matching NamespaceSelector",
        with_terms(
            "subteam1.team1",
            "",
            POD_LABEL2,
            [],
            [PodAffinityTerm("zone", SECURITYSCAN_IN, namespace_selector=TEAM1)],
        ),
        [Pod(name="", namespace="subteam1.team2", labels=POD_LABEL, node_name="node1")],
        None,
        None,
    ),
]


@pytest.mark.parametrize(
    ("pod", "pods", "want_pre_filter", "want_filter"),
    [case[1:] for case in SINGLE_NODE_CASES],
    ids=[case[0] for case in SINGLE_NODE_CASES],
)
def test_required_affinity_single_node(
    pod: Pod, pods: list[Pod], want_pre_filter: Status | None, want_filter: Status | None
) -> None:
    plugin, handle = setup(pods, [NODE1])
    state = CycleState()
    result, status = plugin.pre_filter(state, pod, handle.snapshot.list())
    assert result is None
    assert status == want_pre_filter
    if status is not None:
        return
    assert plugin.filter(state, pod, node_info(handle, "node1")) == want_filter


# ---------------------------------------------------------------------------------------------
# TestRequiredAffinityMultipleNodes

RG_CHINA = {"region": "China"}
RG_CHINA_AZ1 = {"region": "China", "az": "az1"}
RG_INDIA = {"region": "India"}


def rzh(name: str, region: str, zone: str) -> Node:
    return node(name, {"region": region, "zone": zone, "hostname": name})


MULTI_NODE_CASES: list[
    tuple[str, Pod, list[Pod], list[Node], Status | None, list[Status | None]]
] = [
    (
        "A pod can be scheduled onto all the nodes that have the same topology key & label value "
        "with one of them has an existing pod that matches the affinity rules",
        aff(make_pod(), "foo", "region", "In", ["bar"]).obj(),
        [make_pod().name("p1").node("node1").labels({"foo": "bar"}).obj()],
        [node("node1", RG_CHINA), node("node2", RG_CHINA_AZ1), node("node3", RG_INDIA)],
        None,
        [None, None, AFFINITY_REJECTED],
    ),
    (
        "The affinity rule is to schedule all of the pods of this collection to the same zone. "
        "The first pod of the collection should not be blocked from being scheduled onto any "
        "node, even there's no existing pod that matches the rule anywhere.",
        aff(
            aff(
                make_pod().labels({"foo": "bar", "service": "securityscan"}),
                "foo",
                "zone",
                "In",
                ["bar"],
            ),
            "service",
            "zone",
            "In",
            ["securityscan"],
        ).obj(),
        [make_pod().name("p1").node("nodeA").labels({"foo": "bar"}).obj()],
        [
            node("nodeA", {"zone": "az1", "hostname": "h1"}),
            node("nodeB", {"zone": "az2", "hostname": "h2"}),
        ],
        None,
        [None, None],
    ),
    (
        "The first pod of the collection can only be scheduled on nodes labelled with the "
        "requested topology keys",
        aff(
            aff(
                make_pod().labels({"foo": "bar", "service": "securityscan"}),
                "foo",
                "zone",
                "In",
                ["bar"],
            ),
            "service",
            "zone",
            "In",
            ["securityscan"],
        ).obj(),
        [make_pod().name("p1").node("nodeA").labels({"foo": "bar"}).obj()],
        [
            node("nodeA", {"zoneLabel": "az1", "hostname": "h1"}),
            node("nodeB", {"zoneLabel": "az2", "hostname": "h2"}),
        ],
        None,
        [AFFINITY_REJECTED, AFFINITY_REJECTED],
    ),
    (
        "NodeA and nodeB have same topologyKey and label value. NodeA has an existing pod that "
        "matches the inter pod affinity rule. The pod can not be scheduled onto nodeA and nodeB.",
        anti(make_pod(), "foo", "region", "In", ["abc"]).obj(),
        [make_pod().node("nodeA").labels({"foo": "abc"}).obj()],
        [
            node("nodeA", {"region": "r1", "hostname": "nodeA"}),
            node("nodeB", {"region": "r1", "hostname": "nodeB"}),
        ],
        None,
        [ANTI_AFFINITY_REJECTED, ANTI_AFFINITY_REJECTED],
    ),
    (
        "This test ensures that anti-affinity matches a pod when any term of the anti-affinity "
        "rule matches a pod.",
        anti(
            anti(make_pod(), "foo", "region", "In", ["abc"]),
            "service",
            "zone",
            "In",
            ["securityscan"],
        ).obj(),
        [make_pod().node("nodeA").labels({"foo": "abc", "service": "securityscan"}).obj()],
        [rzh("nodeA", "r1", "z1"), rzh("nodeB", "r1", "z2")],
        None,
        [ANTI_AFFINITY_REJECTED, ANTI_AFFINITY_REJECTED],
    ),
    (
        "NodeA and nodeB have same topologyKey and label value. NodeA has an existing pod that "
        "matches the inter pod affinity rule. The pod can not be scheduled onto nodeA and nodeB "
        "but can be scheduled onto nodeC",
        anti(make_pod(), "foo", "region", "In", ["abc"]).obj(),
        [make_pod().node("nodeA").labels({"foo": "abc"}).obj()],
        [node("nodeA", RG_CHINA), node("nodeB", RG_CHINA_AZ1), node("nodeC", RG_INDIA)],
        None,
        [ANTI_AFFINITY_REJECTED, ANTI_AFFINITY_REJECTED, None],
    ),
    (
        "NodeA and nodeB have same topologyKey and label value. NodeA has an existing pod that "
        "matches the inter pod affinity rule. The pod can not be scheduled onto nodeA, nodeB, but "
        "can be scheduled onto nodeC (NodeC has an existing pod that match the inter pod affinity "
        "rule but in different namespace)",
        anti(
            make_pod().namespace("NS1").labels({"foo": "123"}), "foo", "region", "In", ["bar"]
        ).obj(),
        [
            make_pod().node("nodeA").namespace("NS1").labels({"foo": "bar"}).obj(),
            anti(make_pod().node("nodeC").namespace("NS2"), "foo", "region", "In", ["123"]).obj(),
        ],
        [node("nodeA", RG_CHINA), node("nodeB", RG_CHINA_AZ1), node("nodeC", RG_INDIA)],
        None,
        [ANTI_AFFINITY_REJECTED, ANTI_AFFINITY_REJECTED, None],
    ),
    (
        "Test existing pod's anti-affinity: if an existing pod has a term with invalid "
        "topologyKey, labelSelector of the term is firstly checked, and then topologyKey of the "
        "term is also checked",
        make_pod().label("foo", "").obj(),
        [make_pod().node("nodeA").pod_anti_affinity_exists("foo", "invalid-node-label").obj()],
        [rzh("nodeA", "r1", "z1"), rzh("nodeB", "r1", "z1")],
        SKIP,
        [None, None],
    ),
    (
        "Test incoming pod's anti-affinity: even if labelSelector matches, we still check if "
        "topologyKey matches",
        make_pod().node("nodeA").pod_anti_affinity_exists("foo", "invalid-node-label").obj(),
        [make_pod().node("nodeA").labels({"foo": ""}).obj()],
        [rzh("nodeA", "r1", "z1"), rzh("nodeB", "r1", "z1")],
        None,
        [None, None],
    ),
    (
        "Test existing pod's anti-affinity: incoming pod wouldn't considered as a fit as it "
        "violates each existingPod's terms on all nodes",
        make_pod().label("foo", "").label("bar", "").obj(),
        [
            make_pod().node("nodeA").pod_anti_affinity_exists("foo", "zone").obj(),
            make_pod().node("nodeA").pod_anti_affinity_exists("bar", "region").obj(),
        ],
        [rzh("nodeA", "r1", "z1"), rzh("nodeB", "r1", "z2")],
        None,
        [EXISTING_ANTI_AFFINITY_REJECTED, EXISTING_ANTI_AFFINITY_REJECTED],
    ),
    (
        "Test incoming pod's anti-affinity: incoming pod wouldn't considered as a fit as it at "
        "least violates one anti-affinity rule of existingPod",
        make_pod()
        .pod_anti_affinity_exists("foo", "zone")
        .pod_anti_affinity_exists("bar", "region")
        .obj(),
        [
            make_pod().node("nodeA").labels({"foo": ""}).obj(),
            make_pod().node("nodeB").labels({"bar": ""}).obj(),
        ],
        [rzh("nodeA", "r1", "z1"), rzh("nodeB", "r1", "z2")],
        None,
        [ANTI_AFFINITY_REJECTED, ANTI_AFFINITY_REJECTED],
    ),
    (
        "Test existing pod's anti-affinity: only when labelSelector and topologyKey both match, "
        "it's counted as a single term match - case when one term has invalid topologyKey",
        make_pod().label("foo", "").label("bar", "").obj(),
        [
            make_pod()
            .node("nodeA")
            .pod_anti_affinity_exists("foo", "invalid-node-label")
            .pod_anti_affinity_exists("bar", "zone")
            .obj()
        ],
        [rzh("nodeA", "r1", "z1"), rzh("nodeB", "r1", "z2")],
        None,
        [EXISTING_ANTI_AFFINITY_REJECTED, None],
    ),
    (
        "Test incoming pod's anti-affinity: only when labelSelector and topologyKey both match, "
        "it's counted as a single term match - case when one term has invalid topologyKey",
        make_pod()
        .pod_anti_affinity_exists("foo", "invalid-node-label")
        .pod_anti_affinity_exists("bar", "zone")
        .obj(),
        [make_pod().name("podA").node("nodeA").labels({"foo": "", "bar": ""}).obj()],
        [rzh("nodeA", "r1", "z1"), rzh("nodeB", "r1", "z2")],
        None,
        [ANTI_AFFINITY_REJECTED, None],
    ),
    (
        "Test existing pod's anti-affinity: only when labelSelector and topologyKey both match, "
        "it's counted as a single term match - case when all terms have valid topologyKey",
        make_pod().label("foo", "").label("bar", "").obj(),
        [
            make_pod()
            .node("nodeA")
            .pod_anti_affinity_exists("foo", "region")
            .pod_anti_affinity_exists("bar", "zone")
            .obj()
        ],
        [rzh("nodeA", "r1", "z1"), rzh("nodeB", "r1", "z2")],
        None,
        [EXISTING_ANTI_AFFINITY_REJECTED, EXISTING_ANTI_AFFINITY_REJECTED],
    ),
    (
        "Test incoming pod's anti-affinity: only when labelSelector and topologyKey both match, "
        "it's counted as a single term match - case when all terms have valid topologyKey",
        make_pod()
        .pod_anti_affinity_exists("foo", "region")
        .pod_anti_affinity_exists("bar", "zone")
        .obj(),
        [make_pod().node("nodeA").labels({"foo": "", "bar": ""}).obj()],
        [rzh("nodeA", "r1", "z1"), rzh("nodeB", "r1", "z2")],
        None,
        [ANTI_AFFINITY_REJECTED, ANTI_AFFINITY_REJECTED],
    ),
    (
        "Test existing pod's anti-affinity: existingPod on nodeA and nodeB has at least one "
        "anti-affinity term matches incoming pod, so incoming pod can only be scheduled to nodeC",
        make_pod().label("foo", "").label("bar", "").obj(),
        [
            make_pod()
            .node("nodeA")
            .pod_anti_affinity_exists("foo", "zone")
            .pod_anti_affinity_exists("labelA", "zone")
            .obj(),
            make_pod()
            .node("nodeB")
            .pod_anti_affinity_exists("bar", "zone")
            .pod_anti_affinity_exists("labelB", "zone")
            .obj(),
        ],
        [rzh("nodeA", "r1", "z1"), rzh("nodeB", "r1", "z2"), rzh("nodeC", "r1", "z3")],
        None,
        [EXISTING_ANTI_AFFINITY_REJECTED, EXISTING_ANTI_AFFINITY_REJECTED, None],
    ),
    (
        "Test incoming pod's affinity: firstly check if all affinityTerms match, and then check "
        "if all topologyKeys match",
        make_pod().pod_affinity_exists("foo", "region").pod_affinity_exists("bar", "zone").obj(),
        [make_pod().name("pod1").labels({"foo": "", "bar": ""}).node("nodeA").obj()],
        [rzh("nodeA", "r1", "z1"), rzh("nodeB", "r1", "z1")],
        None,
        [None, None],
    ),
    (
        "Test incoming pod's affinity: firstly check if all affinityTerms match, and then check "
        "if all topologyKeys match, and the match logic should be satisfied on the same pod",
        make_pod().pod_affinity_exists("foo", "region").pod_affinity_exists("bar", "zone").obj(),
        [
            make_pod().node("nodeA").name("pod1").labels({"foo": ""}).obj(),
            make_pod().node("nodeB").name("pod2").labels({"bar": ""}).obj(),
        ],
        [rzh("nodeA", "r1", "z1"), rzh("nodeB", "r1", "z2")],
        None,
        [AFFINITY_REJECTED, AFFINITY_REJECTED],
    ),
]


@pytest.mark.parametrize(
    ("pod", "pods", "nodes", "want_pre_filter", "want_filters"),
    [case[1:] for case in MULTI_NODE_CASES],
    ids=[case[0] for case in MULTI_NODE_CASES],
)
def test_required_affinity_multiple_nodes(
    pod: Pod,
    pods: list[Pod],
    nodes: list[Node],
    want_pre_filter: Status | None,
    want_filters: list[Status | None],
) -> None:
    plugin, handle = setup(pods, nodes, objects=[Namespace("NS1")])
    state = CycleState()
    _, status = plugin.pre_filter(state, pod, handle.snapshot.list())
    assert status == want_pre_filter
    if status is not None and status.is_skip():
        return
    got = [plugin.filter(state, pod, node_info(handle, n.name)) for n in nodes]
    assert got == want_filters


# ---------------------------------------------------------------------------------------------
# TestPreFilterDisabled


def test_filter_without_pre_filter_state_is_an_error() -> None:
    plugin, _ = setup([], [])
    info = NodeInfo(Node(name=""))
    got = plugin.filter(CycleState(), Pod(name=""), info)
    assert got == as_status('error reading "PreFilterInterPodAffinity" from cycleState: not found')


# ---------------------------------------------------------------------------------------------
# TestPreFilterStateAddRemovePod

LABEL1 = {"region": "r1", "zone": "z11"}
LABEL2 = {"region": "r1", "zone": "z12"}
LABEL3 = {"region": "r2", "zone": "z21"}
FOO_BAR = {"foo": "bar"}
ANTI_FOO_BAR = PodAffinity(
    required=(PodAffinityTerm("region", selector(expr("foo", "In", ["bar"]))),)
)
COMPLEX_TERMS = (
    PodAffinityTerm("region", selector(expr("foo", "In", ["bar", "buzz"]))),
    PodAffinityTerm("zone", selector(expr("service", "NotIn", ["bar", "security", "test"]))),
)
ANTI_COMPLEX = PodAffinity(required=COMPLEX_TERMS)
AFFINITY_COMPLEX = PodAffinity(required=COMPLEX_TERMS)
ADD_REMOVE_NODES = [node("nodeA", LABEL1), node("nodeB", LABEL2), node("nodeC", LABEL3)]


def pod_with(
    name: str,
    node_name: str = "",
    labels: dict[str, str] | None = None,
    affinity: PodAffinity | None = None,
    anti_affinity: PodAffinity | None = None,
) -> Pod:
    spec = None
    if affinity is not None or anti_affinity is not None:
        spec = Affinity(pod_affinity=affinity, pod_anti_affinity=anti_affinity)
    return Pod(name=name, labels=dict(labels or {}), node_name=node_name, affinity=spec)


ADD_REMOVE_CASES = [
    (
        "preFilterState anti-affinity terms are updated correctly after adding and removing a pod",
        pod_with("pending", labels=FOO_BAR, anti_affinity=ANTI_FOO_BAR),
        [
            pod_with("p1", "nodeA", FOO_BAR),
            pod_with("p2", "nodeC", anti_affinity=ANTI_FOO_BAR),
        ],
        pod_with("addedPod", "nodeB", FOO_BAR, anti_affinity=ANTI_FOO_BAR),
        {("region", "r1"): 2},
        {},
    ),
    (
        "preFilterState anti-affinity terms are updated correctly after adding and removing a pod "
        "(complex terms)",
        pod_with("pending", labels=FOO_BAR, anti_affinity=ANTI_COMPLEX),
        [
            pod_with("p1", "nodeA", FOO_BAR),
            pod_with("p2", "nodeC", anti_affinity=ANTI_FOO_BAR),
        ],
        pod_with("addedPod", "nodeA", FOO_BAR, anti_affinity=ANTI_COMPLEX),
        {("region", "r1"): 2, ("zone", "z11"): 2, ("zone", "z21"): 1},
        {},
    ),
    (
        "preFilterState matching pod affinity and anti-affinity are updated correctly after "
        "adding and removing a pod",
        pod_with("pending", labels=FOO_BAR, affinity=AFFINITY_COMPLEX),
        [
            pod_with("p1", "nodeA", FOO_BAR),
            pod_with("p2", "nodeC", affinity=AFFINITY_COMPLEX, anti_affinity=ANTI_FOO_BAR),
        ],
        pod_with("addedPod", "nodeA", FOO_BAR, anti_affinity=ANTI_COMPLEX),
        {},
        {("region", "r1"): 2, ("zone", "z11"): 2},
    ),
]


def counts_of(state: PreFilterState) -> tuple[object, ...]:
    return (
        state.existing_anti_affinity_counts,
        state.affinity_counts,
        state.anti_affinity_counts,
    )


@pytest.mark.parametrize(
    ("pending", "existing", "added", "want_anti_affinity", "want_affinity"),
    [case[1:] for case in ADD_REMOVE_CASES],
    ids=[case[0] for case in ADD_REMOVE_CASES],
)
def test_pre_filter_state_add_remove_pod(
    pending: Pod,
    existing: list[Pod],
    added: Pod,
    want_anti_affinity: dict[tuple[str, str], int],
    want_affinity: dict[tuple[str, str], int],
) -> None:
    def pre_filtered(pods: list[Pod]) -> tuple[InterPodAffinity, CycleState, FakeHandle]:
        plugin, handle = setup(pods, ADD_REMOVE_NODES, objects=[])
        state = CycleState()
        _, status = plugin.pre_filter(state, pending, handle.snapshot.list())
        assert status is None
        return plugin, state, handle

    _, all_pods_cycle, _ = pre_filtered([*existing, added])
    all_pods_state = get_pre_filter_state(all_pods_cycle)
    plugin, cycle_state, handle = pre_filtered(existing)
    state = get_pre_filter_state(cycle_state)
    original = state.clone()

    info = node_info(handle, added.node_name)
    assert plugin.add_pod(cycle_state, pending, PodInfo(added), info) is None
    assert state.anti_affinity_counts == want_anti_affinity
    assert state.affinity_counts == want_affinity
    assert counts_of(state) == counts_of(all_pods_state)

    assert plugin.remove_pod(cycle_state, pending, PodInfo(added), info) is None
    assert counts_of(state) == counts_of(original)


def test_add_pod_without_pre_filter_state_is_an_error() -> None:
    plugin, handle = setup([], [node("nodeA", LABEL1)])
    info = node_info(handle, "nodeA")
    got = plugin.add_pod(CycleState(), Pod(name="p"), PodInfo(Pod(name="q")), info)
    assert got == as_status('error reading "PreFilterInterPodAffinity" from cycleState: not found')


# ---------------------------------------------------------------------------------------------
# TestPreFilterStateClone


def test_pre_filter_state_clone_copies_the_counts() -> None:
    source = PreFilterState(
        existing_anti_affinity_counts={("name", "node1"): 1, ("name", "node2"): 1},
        affinity_counts={("name", "nodeA"): 1, ("name", "nodeC"): 2},
        anti_affinity_counts={("name", "nodeN"): 3, ("name", "nodeM"): 1},
        pod_info=PodInfo(Pod(name="p")),
        namespace_labels={},
    )
    clone = source.clone()
    assert clone is not source
    assert counts_of(clone) == counts_of(source)
    clone.affinity_counts[("name", "nodeA")] = 5
    assert source.affinity_counts[("name", "nodeA")] == 1


# ---------------------------------------------------------------------------------------------
# TestGetTPMapMatchingIncomingAffinityAntiAffinity


def normal_pod(*labels: str) -> Pod:
    w = make_pod().name("normal").node("nodeA")
    for label in labels:
        w = w.label(label, "")
    return w.obj()


NODE_A = node("nodeA", {"hostname": "nodeA"})
HOST_A = ("hostname", "nodeA")

TP_MAP_CASES = [
    ("nil test", [], make_pod().name("aaa-normal").obj(), {}, {}),
    (
        "incoming pod without affinity/anti-affinity causes a no-op",
        [normal_pod("aaa")],
        make_pod().name("aaa-normal").obj(),
        {},
        {},
    ),
    (
        "no pod has label that violates incoming pod's affinity and anti-affinity",
        [normal_pod("bbb")],
        make_pod()
        .name("aaa-anti")
        .pod_affinity_exists("aaa", "hostname")
        .pod_anti_affinity_exists("aaa", "hostname")
        .obj(),
        {},
        {},
    ),
    (
        "existing pod matches incoming pod's affinity and anti-affinity - single term case",
        [normal_pod("aaa")],
        make_pod()
        .name("affi-antiaffi")
        .pod_affinity_exists("aaa", "hostname")
        .pod_anti_affinity_exists("aaa", "hostname")
        .obj(),
        {HOST_A: 1},
        {HOST_A: 1},
    ),
    (
        "existing pod matches incoming pod's affinity and anti-affinity - multiple terms case",
        [normal_pod("aaa", "bbb")],
        make_pod()
        .name("affi-antiaffi")
        .pod_affinity_exists("aaa", "hostname")
        .pod_affinity_exists("bbb", "hostname")
        .pod_anti_affinity_exists("aaa", "hostname")
        .obj(),
        {HOST_A: 2},  # one for each term
        {HOST_A: 1},
    ),
    (
        "existing pod not match incoming pod's affinity but matches anti-affinity",
        [normal_pod("aaa")],
        make_pod()
        .name("affi-antiaffi")
        .pod_affinity_exists("aaa", "hostname")
        .pod_affinity_exists("bbb", "hostname")
        .pod_anti_affinity_exists("aaa", "hostname")
        .pod_anti_affinity_exists("bbb", "hostname")
        .obj(),
        {},
        {HOST_A: 1},
    ),
    (
        "incoming pod's anti-affinity has more than one term - existing pod violates partial "
        "term - case 1",
        [normal_pod("aaa", "bbb")],
        make_pod()
        .name("anaffi-antiaffiti")
        .pod_affinity_exists("aaa", "hostname")
        .pod_affinity_exists("ccc", "hostname")
        .pod_anti_affinity_exists("aaa", "hostname")
        .pod_anti_affinity_exists("ccc", "hostname")
        .obj(),
        {},
        {HOST_A: 1},
    ),
    (
        "incoming pod's anti-affinity has more than one term - existing pod violates partial "
        "term - case 2",
        [normal_pod("bbb")],
        make_pod()
        .name("affi-antiaffi")
        .pod_affinity_exists("aaa", "hostname")
        .pod_affinity_exists("bbb", "hostname")
        .pod_anti_affinity_exists("aaa", "hostname")
        .pod_anti_affinity_exists("bbb", "hostname")
        .obj(),
        {},
        {HOST_A: 1},
    ),
]


@pytest.mark.parametrize(
    ("existing", "pod", "want_affinity", "want_anti_affinity"),
    [case[1:] for case in TP_MAP_CASES],
    ids=[case[0] for case in TP_MAP_CASES],
)
def test_get_incoming_affinity_anti_affinity_counts(
    existing: list[Pod],
    pod: Pod,
    want_affinity: dict[tuple[str, str], int],
    want_anti_affinity: dict[tuple[str, str], int],
) -> None:
    _, handle = setup(existing, [NODE_A], objects=[])
    affinity, anti_affinity = get_incoming_affinity_anti_affinity_counts(
        PodInfo(pod), handle.snapshot.list()
    )
    assert affinity == want_affinity
    assert anti_affinity == want_anti_affinity
