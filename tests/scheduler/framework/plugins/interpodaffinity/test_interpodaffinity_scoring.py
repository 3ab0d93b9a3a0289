"""InterPodAffinity PreScore/Score/NormalizeScore: upstream's scoring_test.go tables.

Upstream's pods default to namespace "" and ours to "default", so the "" in upstream's
``namespaces`` lists is "default" here. The two "invalid label syntax" cases are not ported: the
manifest loader rejects such selectors before a pod reaches the scheduler.
"""

from __future__ import annotations

import pytest

from schedviz.kube.objects import (
    Affinity,
    LabelSelector,
    Namespace,
    Node,
    Pod,
    PodAffinity,
    PodAffinityTerm,
    WeightedPodAffinityTerm,
)
from schedviz.scheduler.apis.config.types_pluginargs import InterPodAffinityArgs
from schedviz.scheduler.framework.cycle_state import CycleState
from schedviz.scheduler.framework.interface import (
    MAX_NODE_SCORE,
    Code,
    NodeScore,
    Status,
    as_status,
    new_status,
)
from schedviz.scheduler.framework.plugins.interpodaffinity import new
from schedviz.scheduler.framework.plugins.interpodaffinity.scoring import (
    PRE_SCORE_STATE_KEY,
    PreScoreState,
)
from schedviz.scheduler.framework.types import NodeInfo, PodInfo
from schedviz.scheduler.testing.framework_helpers import FakeHandle
from schedviz.scheduler.testing.wrappers import label_selector

NAMESPACES = [
    Namespace("subteam1.team1", labels={"team": "team1"}),
    Namespace("subteam2.team1", labels={"team": "team1"}),
    Namespace("subteam1.team2", labels={"team": "team2"}),
    Namespace("subteam2.team2", labels={"team": "team2"}),
]
SKIP = new_status(Code.Skip)
MAX = MAX_NODE_SCORE

RG_CHINA = {"region": "China"}
RG_INDIA = {"region": "India"}
AZ1 = {"az": "az1"}
AZ2 = {"az": "az2"}
RG_CHINA_AZ1 = {"region": "China", "az": "az1"}
S1 = {"security": "S1"}
S2 = {"security": "S2"}


def expr(key: str, op: str, values: list[str] | None = None) -> tuple[str, str, list[str]]:
    return (key, op, values or [])


def selector(*expressions: tuple[str, str, list[str]]) -> LabelSelector:
    return label_selector(expressions=list(expressions))


def preferred(
    weight: int,
    topology_key: str,
    sel: LabelSelector,
    namespaces: tuple[str, ...] = (),
    namespace_selector: LabelSelector | None = None,
) -> WeightedPodAffinityTerm:
    term = PodAffinityTerm(topology_key, sel, namespaces, namespace_selector)
    return WeightedPodAffinityTerm(weight, term)


SECURITY_S1 = selector(expr("security", "In", ["S1"]))
SECURITY_S2 = selector(expr("security", "In", ["S2"]))
TEAM1 = selector(expr("team", "In", ["team1"]))

# Preferred affinity to S1 pods in the region, weight 5.
STAY_WITH_S1_IN_REGION = Affinity(
    pod_affinity=PodAffinity(preferred=(preferred(5, "region", SECURITY_S1),))
)
STAY_WITH_S2_IN_REGION = Affinity(
    pod_affinity=PodAffinity(preferred=(preferred(6, "region", SECURITY_S2),))
)
AFFINITY3 = Affinity(
    pod_affinity=PodAffinity(
        preferred=(
            preferred(
                8,
                "region",
                selector(expr("security", "NotIn", ["S1"]), expr("security", "In", ["S2"])),
            ),
            preferred(
                2,
                "region",
                selector(expr("security", "Exists"), expr("wrongkey", "DoesNotExist")),
            ),
        )
    )
)
HARD_AFFINITY = Affinity(
    pod_affinity=PodAffinity(
        required=(
            PodAffinityTerm("region", selector(expr("security", "In", ["S1", "value2"]))),
            PodAffinityTerm(
                "region", selector(expr("security", "Exists"), expr("wrongkey", "DoesNotExist"))
            ),
        )
    )
)
AWAY_FROM_S1_IN_AZ = Affinity(
    pod_anti_affinity=PodAffinity(preferred=(preferred(5, "az", SECURITY_S1),))
)
AWAY_FROM_S2_IN_AZ = Affinity(
    pod_anti_affinity=PodAffinity(preferred=(preferred(5, "az", SECURITY_S2),))
)
STAY_WITH_S1_IN_REGION_AWAY_FROM_S2_IN_AZ = Affinity(
    pod_affinity=PodAffinity(preferred=(preferred(8, "region", SECURITY_S1),)),
    pod_anti_affinity=PodAffinity(preferred=(preferred(5, "az", SECURITY_S2),)),
)
AFFINITY_NAMESPACE_SELECTOR = Affinity(
    pod_affinity=PodAffinity(
        preferred=(
            preferred(
                5,
                "region",
                SECURITY_S1,
                namespaces=("subteam2.team2",),
                namespace_selector=TEAM1,
            ),
        )
    )
)
ANTI_AFFINITY_NAMESPACE_SELECTOR = Affinity(
    pod_anti_affinity=PodAffinity(
        preferred=(
            preferred(
                5,
                "region",
                SECURITY_S1,
                namespaces=("subteam2.team2",),
                namespace_selector=TEAM1,
            ),
        )
    )
)


def pod(
    node_name: str = "",
    labels: dict[str, str] | None = None,
    affinity: Affinity | None = None,
    namespace: str = "default",
) -> Pod:
    return Pod(
        name="",
        namespace=namespace,
        labels=dict(labels or {}),
        node_name=node_name,
        affinity=affinity,
    )


def node(name: str, labels: dict[str, str]) -> Node:
    return Node(name=name, labels=dict(labels))


def scores(*values: int) -> list[NodeScore]:
    return [NodeScore(f"node{i}", value) for i, value in enumerate(values, start=1)]


def run_scoring(
    args: InterPodAffinityArgs, incoming: Pod, pods: list[Pod], nodes: list[Node]
) -> tuple[Status | None, list[NodeScore]]:
    """PreScore, then Score every node and NormalizeScore, as upstream's test loop does."""
    handle = FakeHandle(pods, nodes, objects=NAMESPACES)
    plugin = new(args, handle)
    state = CycleState()
    status = plugin.pre_score(state, incoming, handle.snapshot.list())
    if status is not None:
        return status, []
    got: list[NodeScore] = []
    for n in nodes:
        info = handle.snapshot.get(n.name)
        assert info is not None
        score, score_status = plugin.score(state, incoming, info)
        assert score_status is None
        got.append(NodeScore(n.name, score))
    assert plugin.normalize_score(state, incoming, got) is None
    return None, got


# ---------------------------------------------------------------------------------------------
# TestPreferredAffinity

PREFERRED_CASES: list[tuple[str, Pod, list[Pod], list[Node], list[NodeScore], bool, Status | None]]
PREFERRED_CASES = [
    (
        "all nodes are same priority as Affinity is nil",
        pod(labels=S1),
        [],
        [node("node1", RG_CHINA), node("node2", RG_INDIA), node("node3", AZ1)],
        [],
        False,
        SKIP,
    ),
    (
        "Affinity: pod that matches topology key & pods in nodes will get high score comparing to "
        "otherswhich doesn't match either pods in nodes or in topology key",
        pod(labels=S1, affinity=STAY_WITH_S1_IN_REGION),
        [pod("node1", S1), pod("node2", S2), pod("node3", S1)],
        [node("node1", RG_CHINA), node("node2", RG_INDIA), node("node3", AZ1)],
        scores(MAX, 0, 0),
        False,
        None,
    ),
    (
        "All the nodes that have the same topology key & label value with one of them has an "
        "existing pod that match the affinity rules, have the same score",
        pod(affinity=STAY_WITH_S1_IN_REGION),
        [pod("node1", S1)],
        [node("node1", RG_CHINA), node("node2", RG_CHINA_AZ1), node("node3", RG_INDIA)],
        scores(MAX, MAX, 0),
        False,
        None,
    ),
    (
        "Affinity: nodes in one region has more matching pods comparing to other region, so the "
        "region which has more matches will get high score",
        pod(labels=S1, affinity=STAY_WITH_S2_IN_REGION),
        [
            pod("node1", S2),
            pod("node1", S2),
            pod("node2", S2),
            pod("node3", S2),
            pod("node4", S2),
            pod("node5", S2),
        ],
        [
            node("node1", RG_CHINA),
            node("node2", RG_INDIA),
            node("node3", RG_CHINA),
            node("node4", RG_CHINA),
            node("node5", RG_INDIA),
        ],
        scores(MAX, 0, MAX, MAX, 0),
        False,
        None,
    ),
    (
        "Affinity: different Label operators and values for pod affinity scheduling preference, "
        "including some match failures ",
        pod(labels=S1, affinity=AFFINITY3),
        [pod("node1", S1), pod("node2", S2), pod("node3", S1)],
        [node("node1", RG_CHINA), node("node2", RG_INDIA), node("node3", AZ1)],
        scores(20, MAX, 0),
        False,
        None,
    ),
    (
        "Affinity symmetry: considered only the preferredDuringSchedulingIgnoredDuringExecution "
        "in pod affinity symmetry",
        pod(labels=S2),
        [
            pod("node1", S1, STAY_WITH_S1_IN_REGION),
            pod("node2", S2, STAY_WITH_S2_IN_REGION),
        ],
        [node("node1", RG_CHINA), node("node2", RG_INDIA), node("node3", AZ1)],
        scores(0, MAX, 0),
        False,
        None,
    ),
    (
        "Affinity symmetry with namespace selector",
        pod(labels=S1, namespace="subteam1.team1"),
        [
            pod("node1", S1, AFFINITY_NAMESPACE_SELECTOR),
            pod("node2", S2, STAY_WITH_S2_IN_REGION),
        ],
        [node("node1", RG_CHINA), node("node2", RG_INDIA), node("node3", AZ1)],
        scores(MAX, 0, 0),
        False,
        None,
    ),
    (
        "AntiAffinity symmetry with namespace selector",
        pod(labels=S1, namespace="subteam1.team1"),
        [
            pod("node1", S1, ANTI_AFFINITY_NAMESPACE_SELECTOR),
            pod("node2", S2, STAY_WITH_S2_IN_REGION),
        ],
        [node("node1", RG_CHINA), node("node2", RG_INDIA), node("node3", AZ1)],
        scores(0, MAX, MAX),
        False,
        None,
    ),
    (
        "Affinity symmetry: considered RequiredDuringSchedulingIgnoredDuringExecution in pod "
        "affinity symmetry",
        pod(labels=S1),
        [pod("node1", S1, HARD_AFFINITY), pod("node2", S2, HARD_AFFINITY)],
        [node("node1", RG_CHINA), node("node2", RG_INDIA), node("node3", AZ1)],
        scores(MAX, MAX, 0),
        False,
        None,
    ),
    (
        "Anti Affinity: pod that does not match existing pods in node will get high score ",
        pod(labels=S1, affinity=AWAY_FROM_S1_IN_AZ),
        [pod("node1", S1), pod("node2", S2)],
        [node("node1", AZ1), node("node2", RG_CHINA)],
        scores(0, MAX),
        False,
        None,
    ),
    (
        "Anti Affinity: pod that does not match topology key & match the pods in nodes will get "
        "higher score comparing to others ",
        pod(labels=S1, affinity=AWAY_FROM_S1_IN_AZ),
        [pod("node1", S1), pod("node2", S1)],
        [node("node1", AZ1), node("node2", RG_CHINA)],
        scores(0, MAX),
        False,
        None,
    ),
    (
        "Anti Affinity: one node has more matching pods comparing to other node, so the node "
        "which has more unmatches will get high score",
        pod(labels=S1, affinity=AWAY_FROM_S1_IN_AZ),
        [pod("node1", S1), pod("node1", S1), pod("node2", S2)],
        [node("node1", AZ1), node("node2", RG_INDIA)],
        scores(0, MAX),
        False,
        None,
    ),
    (
        "Anti Affinity symmetry: the existing pods in node which has anti affinity match will "
        "get high score",
        pod(labels=S2),
        [pod("node1", S1, AWAY_FROM_S2_IN_AZ), pod("node2", S2, AWAY_FROM_S1_IN_AZ)],
        [node("node1", AZ1), node("node2", AZ2)],
        scores(0, MAX),
        False,
        None,
    ),
    (
        "Affinity and Anti Affinity: considered only "
        "preferredDuringSchedulingIgnoredDuringExecution in both pod affinity & anti affinity",
        pod(labels=S1, affinity=STAY_WITH_S1_IN_REGION_AWAY_FROM_S2_IN_AZ),
        [pod("node1", S1), pod("node2", S1)],
        [node("node1", RG_CHINA), node("node2", AZ1)],
        scores(MAX, 0),
        False,
        None,
    ),
    (
        "Affinity and Anti Affinity: considering both affinity and anti-affinity, the pod to "
        "schedule and existing pods have the same labels",
        pod(labels=S1, affinity=STAY_WITH_S1_IN_REGION_AWAY_FROM_S2_IN_AZ),
        [
            pod("node1", S1),
            pod("node1", S1),
            pod("node2", S1),
            pod("node3", S1),
            pod("node3", S1),
            pod("node4", S1),
            pod("node5", S1),
        ],
        [
            node("node1", RG_CHINA_AZ1),
            node("node2", RG_INDIA),
            node("node3", RG_CHINA),
            node("node4", RG_CHINA),
            node("node5", RG_INDIA),
        ],
        scores(MAX, 0, MAX, MAX, 0),
        False,
        None,
    ),
    # Weights: affinity 8,0,0,0; anti-affinity 0,-5,0,0; affinity symmetry 0,0,8,0;
    # anti-affinity symmetry 0,0,0,-5.
    (
        "Affinity and Anti Affinity and symmetry: considered only "
        "preferredDuringSchedulingIgnoredDuringExecution in both pod affinity & anti affinity & "
        "symmetry",
        pod(labels=S1, affinity=STAY_WITH_S1_IN_REGION_AWAY_FROM_S2_IN_AZ),
        [
            pod("node1", S1),
            pod("node2", S2),
            pod("node3", affinity=STAY_WITH_S1_IN_REGION_AWAY_FROM_S2_IN_AZ),
            pod("node4", affinity=AWAY_FROM_S1_IN_AZ),
        ],
        [node("node1", RG_CHINA), node("node2", AZ1), node("node3", RG_INDIA), node("node4", AZ2)],
        scores(MAX, 0, MAX, 0),
        False,
        None,
    ),
    # kubernetes/kubernetes#82796: some nodes of a topology have pods with affinity, others not,
    # and the incoming pod has none.
    (
        "Avoid panic when partial nodes in a topology don't have pods with affinity",
        pod(labels=S1),
        [pod("node1", S1), pod("node2", affinity=STAY_WITH_S1_IN_REGION_AWAY_FROM_S2_IN_AZ)],
        [node("node1", RG_CHINA), node("node2", RG_CHINA)],
        scores(0, 0),
        False,
        None,
    ),
    (
        "Affinity with pods matching NamespaceSelector",
        pod(labels=S1, affinity=AFFINITY_NAMESPACE_SELECTOR, namespace="subteam1.team1"),
        [
            pod("node1", S1, namespace="subteam1.team1"),
            pod("node1", S1, namespace="subteam1.team1"),
            pod("node1", S1, namespace="subteam1.team2"),
            pod("node2", S1, namespace="subteam2.team1"),
        ],
        [node("node1", RG_CHINA), node("node2", RG_INDIA)],
        scores(MAX, 0),
        False,
        None,
    ),
    (
        "Affinity with pods matching both NamespaceSelector and Namespaces fields",
        pod(labels=S1, affinity=AFFINITY_NAMESPACE_SELECTOR, namespace="subteam1.team1"),
        [
            pod("node1", S1, namespace="subteam1.team1"),
            pod("node1", S1, namespace="subteam1.team1"),
            pod("node1", S1, namespace="subteam2.team2"),
            pod("node2", S1, namespace="subteam2.team1"),
        ],
        [node("node1", RG_CHINA), node("node2", RG_INDIA)],
        scores(MAX, 0),
        False,
        None,
    ),
    (
        "Anti-affinity with pods matching NamespaceSelector",
        pod(labels=S1, affinity=ANTI_AFFINITY_NAMESPACE_SELECTOR, namespace="subteam1.team1"),
        [
            pod("node1", S1, namespace="subteam1.team1"),
            pod("node1", S1, namespace="subteam1.team1"),
            pod("node1", S1, namespace="subteam1.team2"),
            pod("node2", S1, namespace="subteam2.team1"),
        ],
        [node("node1", RG_CHINA), node("node2", RG_INDIA)],
        scores(0, MAX),
        False,
        None,
    ),
    (
        "Anti-affinity with pods matching both NamespaceSelector and Namespaces fields",
        pod(labels=S1, affinity=ANTI_AFFINITY_NAMESPACE_SELECTOR, namespace="subteam1.team1"),
        [
            pod("node1", S1, namespace="subteam1.team1"),
            pod("node1", S1, namespace="subteam1.team1"),
            pod("node1", S1, namespace="subteam2.team2"),
            pod("node2", S1, namespace="subteam2.team1"),
        ],
        [node("node1", RG_CHINA), node("node2", RG_INDIA)],
        scores(0, MAX),
        False,
        None,
    ),
    (
        "Ignore preferred terms of existing pods",
        pod(labels=S2),
        [
            pod("node1", S1, STAY_WITH_S1_IN_REGION_AWAY_FROM_S2_IN_AZ),
            pod("node2", S2, STAY_WITH_S2_IN_REGION),
        ],
        [node("node1", RG_CHINA), node("node2", RG_INDIA)],
        [],
        True,
        SKIP,
    ),
    (
        "Do not ignore preferred terms of existing pods",
        pod(labels=S2),
        [
            pod("node1", S1, STAY_WITH_S1_IN_REGION_AWAY_FROM_S2_IN_AZ),
            pod("node2", S2, STAY_WITH_S2_IN_REGION),
        ],
        [node("node1", RG_CHINA), node("node2", RG_INDIA)],
        scores(0, MAX),
        False,
        None,
    ),
    ("No nodes to score", pod(labels=S2), [], [], [], False, SKIP),
]


@pytest.mark.parametrize(
    ("incoming", "pods", "nodes", "want_scores", "ignore_existing", "want_status"),
    [case[1:] for case in PREFERRED_CASES],
    ids=[case[0] for case in PREFERRED_CASES],
)
def test_preferred_affinity(
    incoming: Pod,
    pods: list[Pod],
    nodes: list[Node],
    want_scores: list[NodeScore],
    ignore_existing: bool,
    want_status: Status | None,
) -> None:
    args = InterPodAffinityArgs(
        hard_pod_affinity_weight=1, ignore_preferred_terms_of_existing_pods=ignore_existing
    )
    status, got = run_scoring(args, incoming, pods, nodes)
    assert status == want_status
    assert got == want_scores


# ---------------------------------------------------------------------------------------------
# TestPreferredAffinityWithHardPodAffinitySymmetricWeight

SERVICE_S1 = {"service": "S1"}
HARD_POD_AFFINITY = Affinity(
    pod_affinity=PodAffinity(
        required=(
            PodAffinityTerm(
                "region",
                selector(expr("service", "In", ["S1"])),
                namespaces=("default", "subteam2.team2"),
                namespace_selector=TEAM1,
            ),
        )
    )
)
SYMMETRIC_NODES = [node("node1", RG_CHINA), node("node2", RG_INDIA), node("node3", AZ1)]
SYMMETRIC_PODS = [
    pod("node1", affinity=HARD_POD_AFFINITY),
    pod("node2", affinity=HARD_POD_AFFINITY),
]

HARD_WEIGHT_CASES = [
    ("with default weight", "default", 1, scores(MAX, MAX, 0), None),
    ("with zero weight", "default", 0, [], SKIP),
    ("with no matching namespace", "subteam1.team2", 1, [], SKIP),
    ("with matching NamespaceSelector", "subteam1.team1", 1, scores(MAX, MAX, 0), None),
    ("with matching Namespaces", "subteam2.team2", 1, scores(MAX, MAX, 0), None),
]


@pytest.mark.parametrize(
    ("namespace", "weight", "want_scores", "want_status"),
    [case[1:] for case in HARD_WEIGHT_CASES],
    ids=[case[0] for case in HARD_WEIGHT_CASES],
)
def test_preferred_affinity_with_hard_pod_affinity_symmetric_weight(
    namespace: str, weight: int, want_scores: list[NodeScore], want_status: Status | None
) -> None:
    incoming = pod(labels=SERVICE_S1, namespace=namespace)
    args = InterPodAffinityArgs(hard_pod_affinity_weight=weight)
    status, got = run_scoring(args, incoming, SYMMETRIC_PODS, SYMMETRIC_NODES)
    assert status == want_status
    assert got == want_scores


# ---------------------------------------------------------------------------------------------
# Score and NormalizeScore details


def test_normalize_score_uses_float_math_and_truncates() -> None:
    # 100 * (1/3) = 33.33.. -> 33; 100 * (2/3) = 66.66.. -> 66 (truncated, not rounded).
    state = CycleState()
    state.write(PRE_SCORE_STATE_KEY, PreScoreState({"zone": {"a": 1}}, PodInfo(Pod(name="p")), {}))
    plugin = new(None, FakeHandle())
    got = [NodeScore("a", -1), NodeScore("b", 0), NodeScore("c", 1), NodeScore("d", 2)]
    assert plugin.normalize_score(state, Pod(name="p"), got) is None
    assert [s.score for s in got] == [0, 33, 66, 100]


def test_normalize_score_leaves_scores_when_no_topology_scored() -> None:
    state = CycleState()
    state.write(PRE_SCORE_STATE_KEY, PreScoreState({}, PodInfo(Pod(name="p")), {}))
    plugin = new(None, FakeHandle())
    got = [NodeScore("a", 7)]
    assert plugin.normalize_score(state, Pod(name="p"), got) is None
    assert got == [NodeScore("a", 7)]


def test_equal_scores_normalize_to_zero() -> None:
    state = CycleState()
    state.write(PRE_SCORE_STATE_KEY, PreScoreState({"zone": {"a": 3}}, PodInfo(Pod(name="p")), {}))
    plugin = new(None, FakeHandle())
    got = [NodeScore("a", 3), NodeScore("b", 3)]
    assert plugin.normalize_score(state, Pod(name="p"), got) is None
    assert [s.score for s in got] == [0, 0]


def test_score_without_pre_score_state_is_an_error() -> None:
    plugin = new(None, FakeHandle())
    info = NodeInfo(Node(name="n"))
    score, status = plugin.score(CycleState(), Pod(name="p"), info)
    assert (score, status) == (
        0,
        as_status('failed to read "PreScoreInterPodAffinity" from cycleState: not found'),
    )


def test_raw_score_is_signed_sum_of_the_node_topology_values() -> None:
    state = CycleState()
    topology = {"region": {"China": 8, "India": 3}, "az": {"az1": -5}}
    state.write(PRE_SCORE_STATE_KEY, PreScoreState(topology, PodInfo(Pod(name="p")), {}))
    plugin = new(None, FakeHandle())
    info = NodeInfo(node("n", RG_CHINA_AZ1))
    assert plugin.score(state, Pod(name="p"), info) == (3, None)
