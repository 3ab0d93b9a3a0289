"""Ports pkg/scheduler/framework/plugins/nodeaffinity/node_affinity_test.go."""

from __future__ import annotations

from dataclasses import dataclass, field

import pytest

from schedviz.kube.objects import (
    Affinity,
    Node,
    NodeAffinity,
    NodeSelector,
    NodeSelectorRequirement,
    NodeSelectorTerm,
    Pod,
    PreferredSchedulingTerm,
)
from schedviz.scheduler.apis.config.types_pluginargs import NodeAffinityArgs
from schedviz.scheduler.framework.cycle_state import CycleState
from schedviz.scheduler.framework.interface import (
    MAX_NODE_SCORE,
    Code,
    NodeScore,
    PreFilterResult,
    Status,
    code_of,
    new_status,
)
from schedviz.scheduler.framework.plugins import nodeaffinity
from schedviz.scheduler.framework.plugins.nodeaffinity import (
    ERR_REASON_CONFLICT,
    ERR_REASON_ENFORCED,
    ERR_REASON_POD,
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

NAME_FIELD = "metadata.name"


def req(key: str, operator: str, *values: str) -> NodeSelectorRequirement:
    return NodeSelectorRequirement(key, operator, values)


def term(
    expressions: tuple[NodeSelectorRequirement, ...] = (),
    fields: tuple[NodeSelectorRequirement, ...] = (),
) -> NodeSelectorTerm:
    return NodeSelectorTerm(expressions, fields)


def required(*terms: NodeSelectorTerm) -> NodeAffinity:
    return NodeAffinity(required=NodeSelector(terms))


def pod_with(
    node_affinity: NodeAffinity | None = None, node_selector: dict[str, str] | None = None
) -> Pod:
    affinity = Affinity(node_affinity=node_affinity) if node_affinity is not None else None
    return Pod(name="p", affinity=affinity, node_selector=dict(node_selector or {}))


def unresolvable(reason: str) -> Status:
    return new_status(Code.UnschedulableAndUnresolvable, reason)


def names(*node_names: str) -> PreFilterResult:
    return PreFilterResult(frozenset(node_names))


@dataclass
class FilterCase:
    name: str
    pod: Pod
    labels: dict[str, str] = field(default_factory=dict)
    node_name: str = ""
    want_status: Status | None = None
    want_pre_filter_status: Status | None = None
    want_pre_filter_result: PreFilterResult | None = None
    args: NodeAffinityArgs = field(default_factory=NodeAffinityArgs)
    run_pre_filter: bool = True


NODE1_FIELD = req(NAME_FIELD, "In", "node1")
ZONE_FOO = required(term((req("zone", "In", "foo"),)))
ADDED_NODE2 = NodeAffinityArgs(required(term(fields=(req(NAME_FIELD, "In", "node2"),))))
GPU_NOT_AMD = required(term((req("GPU", "Exists"), req("GPU", "NotIn", "AMD", "INTER"))))

FILTER_CASES = [
    FilterCase(
        "missing labels",
        pod_with(node_selector={"foo": "bar"}),
        want_status=unresolvable(ERR_REASON_POD),
    ),
    FilterCase("same labels", pod_with(node_selector={"foo": "bar"}), {"foo": "bar"}),
    FilterCase(
        "node labels are superset",
        pod_with(node_selector={"foo": "bar"}),
        {"foo": "bar", "baz": "blah"},
    ),
    FilterCase(
        "node labels are subset",
        pod_with(node_selector={"foo": "bar", "baz": "blah"}),
        {"foo": "bar"},
        want_status=unresolvable(ERR_REASON_POD),
    ),
    FilterCase(
        "matchExpressions using In operator that matches the existing node",
        pod_with(required(term((req("foo", "In", "bar", "value2"),)))),
        {"foo": "bar"},
    ),
    FilterCase(
        "matchExpressions using Gt operator that matches the existing node",
        pod_with(required(term((req("kernel-version", "Gt", "0204"),)))),
        {"kernel-version": "0206"},
    ),
    FilterCase(
        "matchExpressions using NotIn operator that matches the existing node",
        pod_with(required(term((req("mem-type", "NotIn", "DDR", "DDR2"),)))),
        {"mem-type": "DDR3"},
    ),
    FilterCase(
        "matchExpressions using Exists operator that matches the existing node",
        pod_with(required(term((req("GPU", "Exists"),)))),
        {"GPU": "NVIDIA-GRID-K1"},
    ),
    FilterCase(
        "affinity that doesn't match node's labels won't schedule onto the node",
        pod_with(required(term((req("foo", "In", "value1", "value2"),)))),
        {"foo": "bar"},
        want_status=unresolvable(ERR_REASON_POD),
    ),
    FilterCase(
        "empty MatchExpressions match no objects",
        pod_with(required(term())),
        {"foo": "bar"},
        want_status=unresolvable(ERR_REASON_POD),
    ),
    FilterCase(
        "no Affinity will schedule onto a node",
        pod_with(),
        {"foo": "bar"},
        want_pre_filter_status=Status(Code.Skip),
    ),
    FilterCase(
        "Affinity but nil NodeSelector will schedule onto a node",
        pod_with(NodeAffinity()),
        {"foo": "bar"},
        want_pre_filter_status=Status(Code.Skip),
    ),
    FilterCase(
        "multiple matchExpressions ANDed that matches the existing node",
        pod_with(GPU_NOT_AMD),
        {"GPU": "NVIDIA-GRID-K1"},
    ),
    FilterCase(
        "multiple matchExpressions ANDed that doesn't match the existing node",
        pod_with(required(term((req("GPU", "Exists"), req("GPU", "In", "AMD", "INTER"))))),
        {"GPU": "NVIDIA-GRID-K1"},
        want_status=unresolvable(ERR_REASON_POD),
    ),
    FilterCase(
        "multiple NodeSelectorTerms ORed in affinity",
        pod_with(
            required(
                term((req("foo", "In", "bar", "value2"),)),
                term((req("diffkey", "In", "wrong", "value2"),)),
            )
        ),
        {"foo": "bar"},
    ),
    FilterCase(
        "an Affinity and a PodSpec.NodeSelector both satisfied",
        pod_with(required(term((req("foo", "Exists"),))), {"foo": "bar"}),
        {"foo": "bar"},
    ),
    FilterCase(
        "an Affinity matches node's labels but the PodSpec.NodeSelector is not satisfied",
        pod_with(required(term((req("foo", "Exists"),))), {"foo": "bar"}),
        {"foo": "barrrrrr"},
        want_status=unresolvable(ERR_REASON_POD),
    ),
    FilterCase(
        "an invalid value in Affinity term won't be scheduled onto the node",
        pod_with(required(term((req("foo", "NotIn", "invalid value: ___@#$%^"),)))),
        {"foo": "bar"},
        want_status=unresolvable(ERR_REASON_POD),
    ),
    FilterCase(
        "matchFields using In operator that matches the existing node",
        pod_with(required(term(fields=(NODE1_FIELD,)))),
        node_name="node1",
        want_pre_filter_result=names("node1"),
    ),
    FilterCase(
        "matchFields using In operator that does not match the existing node",
        pod_with(required(term(fields=(NODE1_FIELD,)))),
        node_name="node2",
        want_status=unresolvable(ERR_REASON_POD),
        want_pre_filter_result=names("node1"),
    ),
    FilterCase(
        "two terms: matchFields does not match, but matchExpressions matches",
        pod_with(
            required(
                term(fields=(NODE1_FIELD, req(NAME_FIELD, "In", "node2"))),
                term((req("foo", "In", "bar"),)),
            )
        ),
        {"foo": "bar"},
        "node2",
    ),
    FilterCase(
        "one term: matchFields does not match, but matchExpressions matches",
        pod_with(required(term((req("foo", "In", "bar"),), (NODE1_FIELD,)))),
        {"foo": "bar"},
        "node2",
        want_status=unresolvable(ERR_REASON_POD),
        want_pre_filter_result=names("node1"),
    ),
    FilterCase(
        "one term: both matchFields and matchExpressions match",
        pod_with(required(term((req("foo", "In", "bar"),), (NODE1_FIELD,)))),
        {"foo": "bar"},
        "node1",
        want_pre_filter_result=names("node1"),
    ),
    FilterCase(
        "two terms: both matchFields and matchExpressions do not match",
        pod_with(
            required(term(fields=(NODE1_FIELD,)), term((req("foo", "In", "not-match-to-bar"),)))
        ),
        {"foo": "bar"},
        "node2",
        want_status=unresolvable(ERR_REASON_POD),
    ),
    FilterCase(
        "two terms of node.Name affinity",
        pod_with(
            required(term(fields=(NODE1_FIELD,)), term(fields=(req(NAME_FIELD, "In", "node2"),)))
        ),
        node_name="node2",
        want_pre_filter_result=names("node1", "node2"),
    ),
    FilterCase(
        "two conflicting match field requirements",
        pod_with(required(term(fields=(NODE1_FIELD, req(NAME_FIELD, "In", "node2"))))),
        {"foo": "bar"},
        "node2",
        want_pre_filter_status=unresolvable(ERR_REASON_CONFLICT),
        want_status=unresolvable(ERR_REASON_POD),
    ),
    FilterCase(
        "matches added affinity and Pod's node affinity",
        pod_with(ZONE_FOO),
        {"zone": "foo"},
        "node2",
        args=ADDED_NODE2,
    ),
    FilterCase(
        "matches added affinity but not Pod's node affinity",
        pod_with(required(term((req("zone", "In", "bar"),)))),
        {"zone": "foo"},
        "node2",
        args=ADDED_NODE2,
        want_status=unresolvable(ERR_REASON_POD),
    ),
    FilterCase(
        "doesn't match added affinity",
        pod_with(),
        {"zone": "foo"},
        "node2",
        args=NodeAffinityArgs(required(term((req("zone", "In", "bar"),)))),
        want_status=unresolvable(ERR_REASON_ENFORCED),
    ),
    FilterCase(
        "matches node selector correctly even if PreFilter is not called",
        pod_with(node_selector={"foo": "bar"}),
        {"foo": "bar", "baz": "blah"},
        run_pre_filter=False,
    ),
    FilterCase(
        "matches node affinity correctly even if PreFilter is not called",
        pod_with(GPU_NOT_AMD),
        {"GPU": "NVIDIA-GRID-K1"},
        run_pre_filter=False,
    ),
]


@pytest.mark.parametrize("case", FILTER_CASES, ids=[c.name for c in FILTER_CASES])
def test_node_affinity(case: FilterCase) -> None:
    node_info = NodeInfo(Node(name=case.node_name, labels=case.labels))
    plugin = new(case.args, FakeHandle())
    state = CycleState()
    if case.run_pre_filter:
        result, status = plugin.pre_filter(state, case.pod, [node_info])
        assert status == case.want_pre_filter_status
        assert result == case.want_pre_filter_result
    assert plugin.filter(state, case.pod, node_info) == case.want_status


LABEL1 = {"foo": "bar"}
LABEL2 = {"key": "value"}
LABEL3 = {"az": "az1"}
LABEL4 = {"abc": "az11", "def": "az22"}
LABEL5 = {"foo": "bar", "key": "value", "az": "az1"}

AFFINITY1 = NodeAffinity(preferred=(PreferredSchedulingTerm(2, term((req("foo", "In", "bar"),))),))
AFFINITY2 = NodeAffinity(
    preferred=(
        PreferredSchedulingTerm(2, term((req("foo", "In", "bar"),))),
        PreferredSchedulingTerm(4, term((req("key", "In", "value"),))),
        PreferredSchedulingTerm(
            5,
            term((req("foo", "In", "bar"), req("key", "In", "value"), req("az", "In", "az1"))),
        ),
    )
)


@dataclass
class ScoreCase:
    name: str
    pod: Pod
    nodes: list[tuple[str, dict[str, str]]]
    expected: list[int] = field(default_factory=list)
    args: NodeAffinityArgs = field(default_factory=NodeAffinityArgs)
    run_pre_score: bool = False
    want_pre_score_status: Status | None = None


SCORE_CASES = [
    ScoreCase(
        "all nodes are same priority as NodeAffinity is nil",
        pod_with(),
        [("node1", LABEL1), ("node2", LABEL2), ("node3", LABEL3)],
        [0, 0, 0],
    ),
    ScoreCase(
        "Skip is returned in PreScore when NodeAffinity is nil",
        pod_with(),
        [("node1", LABEL1)],
        run_pre_score=True,
        want_pre_score_status=Status(Code.Skip),
    ),
    ScoreCase(
        "PreScore returns error when an incoming Pod has a broken affinity",
        pod_with(
            NodeAffinity(
                preferred=(PreferredSchedulingTerm(2, term((req("invalid key", "In", "bar"),))),)
            )
        ),
        [("node1", LABEL1)],
        run_pre_score=True,
        want_pre_score_status=Status(
            Code.Error,
            (
                '[0].matchExpressions[0].key: Invalid value: "invalid key": name part must '
                "consist of alphanumeric characters, '-', '_' or '.', and must start and end "
                "with an alphanumeric character (e.g. 'MyName',  or 'my.name',  or '123-abc', "
                "regex used for validation is '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]')",
            ),
        ),
    ),
    ScoreCase(
        "no node matches preferred scheduling requirements so all priorities are zero",
        pod_with(AFFINITY1),
        [("node1", LABEL4), ("node2", LABEL2), ("node3", LABEL3)],
        [0, 0, 0],
        run_pre_score=True,
    ),
    ScoreCase(
        "only node1 matches the preferred scheduling requirements of pod",
        pod_with(AFFINITY1),
        [("node1", LABEL1), ("node2", LABEL2), ("node3", LABEL3)],
        [MAX_NODE_SCORE, 0, 0],
        run_pre_score=True,
    ),
    ScoreCase(
        "all nodes match the preferred scheduling requirements with different priorities",
        pod_with(AFFINITY2),
        [("node1", LABEL1), ("node5", LABEL5), ("node2", LABEL2)],
        [18, MAX_NODE_SCORE, 36],
        run_pre_score=True,
    ),
    ScoreCase(
        "added affinity",
        pod_with(),
        [("node1", LABEL1), ("node2", LABEL2)],
        [MAX_NODE_SCORE, 0],
        args=NodeAffinityArgs(AFFINITY1),
        run_pre_score=True,
    ),
    ScoreCase(
        "added affinity and pod has default affinity",
        pod_with(AFFINITY1),
        [("node1", LABEL1), ("node2", LABEL2), ("node3", LABEL5)],
        [40, 60, MAX_NODE_SCORE],
        args=NodeAffinityArgs(
            NodeAffinity(
                preferred=(PreferredSchedulingTerm(3, term((req("key", "In", "value"),))),)
            )
        ),
        run_pre_score=True,
    ),
    ScoreCase(
        "calculate the priorities correctly even if PreScore is not called",
        pod_with(AFFINITY2),
        [("node1", LABEL1), ("node5", LABEL5), ("node2", LABEL2)],
        [18, MAX_NODE_SCORE, 36],
    ),
]


@pytest.mark.parametrize("case", SCORE_CASES, ids=[c.name for c in SCORE_CASES])
def test_node_affinity_priority(case: ScoreCase) -> None:
    nodes = [Node(name=name, labels=labels) for name, labels in case.nodes]
    handle = FakeHandle(nodes=nodes)
    plugin = new(case.args, handle)
    state = CycleState()
    infos = list(handle.snapshot.list())
    if case.run_pre_score:
        status = plugin.pre_score(state, case.pod, infos)
        want = case.want_pre_score_status
        # As upstream, compare the code and the message.
        assert code_of(status) == code_of(want)
        assert (status.message() if status else "") == (want.message() if want else "")
        if status is not None:
            return
    scores = []
    for info in infos:
        score, score_status = plugin.score(state, case.pod, info)
        assert score_status is None
        scores.append(NodeScore(info.name, score))
    assert plugin.normalize_score(state, case.pod, scores) is None
    assert scores == [NodeScore(n.name, s) for n, s in zip(nodes, case.expected, strict=True)]


def test_reasons_name_and_events() -> None:
    assert ERR_REASON_POD == "node(s) didn't match Pod's node affinity/selector"
    assert ERR_REASON_ENFORCED == "node(s) didn't match scheduler-enforced node affinity"
    assert ERR_REASON_CONFLICT == "pod affinity terms conflict"
    plugin = new(None, FakeHandle())
    assert plugin.name() == NAME == "NodeAffinity"
    assert [e.event for e in plugin.events_to_register()] == [
        ClusterEvent(EventResource.Node, ActionType.Add | ActionType.UpdateNodeLabel)
    ]


def test_new_refuses_other_arguments() -> None:
    with pytest.raises(TypeError, match="args are not of type NodeAffinityArgs"):
        nodeaffinity.new(object(), FakeHandle())


def test_new_refuses_an_invalid_added_affinity() -> None:
    args = NodeAffinityArgs(required(term(fields=(req(NAME_FIELD, "In", "a", "b"),))))
    with pytest.raises(ValueError, match=r"^parsing addedAffinity\.requiredDuring"):
        new(args, FakeHandle())


FOO_BAR_POD = make_pod().node_affinity_in("foo", ["bar"]).obj()
ENFORCED_FOO_BAR = NodeAffinityArgs(required(term((req("foo", "In", "bar"),))))

HINT_CASES = [
    ("backoff-wrong-new-object", NodeAffinityArgs(), None, "not-a-node", QueueingHint.Queue),
    (
        "backoff-wrong-old-object",
        NodeAffinityArgs(),
        "not-a-node",
        make_node().obj(),
        QueueingHint.Queue,
    ),
    ("skip-queue-on-add", NodeAffinityArgs(), None, make_node().obj(), QueueingHint.QueueSkip),
    (
        "queue-on-add",
        NodeAffinityArgs(),
        None,
        make_node().label("foo", "bar").obj(),
        QueueingHint.Queue,
    ),
    (
        "skip-unrelated-changes",
        NodeAffinityArgs(),
        make_node().obj(),
        make_node().capacity({}).obj(),
        QueueingHint.QueueSkip,
    ),
    (
        "skip-unrelated-changes-on-labels",
        NodeAffinityArgs(),
        make_node().obj(),
        make_node().label("k", "v").obj(),
        QueueingHint.QueueSkip,
    ),
    (
        "skip-labels-changes-on-node-from-suitable-to-unsuitable",
        NodeAffinityArgs(),
        make_node().label("foo", "bar").obj(),
        make_node().label("k", "v").obj(),
        QueueingHint.QueueSkip,
    ),
    (
        "queue-on-labels-change-makes-pod-schedulable",
        NodeAffinityArgs(),
        make_node().obj(),
        make_node().label("foo", "bar").obj(),
        QueueingHint.Queue,
    ),
    (
        "skip-queue-on-add-scheduler-enforced-node-affinity",
        ENFORCED_FOO_BAR,
        None,
        make_node().obj(),
        QueueingHint.QueueSkip,
    ),
    (
        "queue-on-add-scheduler-enforced-node-affinity",
        ENFORCED_FOO_BAR,
        None,
        make_node().label("foo", "bar").obj(),
        QueueingHint.Queue,
    ),
]


@pytest.mark.parametrize(
    ("args", "old_obj", "new_obj", "expected"),
    [c[1:] for c in HINT_CASES],
    ids=[c[0] for c in HINT_CASES],
)
def test_is_schedulable_after_node_change(
    args: NodeAffinityArgs, old_obj: object, new_obj: object, expected: QueueingHint
) -> None:
    plugin = new(args, FakeHandle())
    assert plugin.is_schedulable_after_node_change(FOO_BAR_POD, old_obj, new_obj) == expected
