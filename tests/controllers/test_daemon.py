"""The DaemonSet controller: NodeShouldRunDaemonPod's answers (daemon_controller_test.go
TestNodeShouldRunDaemonPod's cases) and, over a store, pods for nodes added later, removed for
nodes gone or tainted as upstream decides, and the controller's labels."""

from __future__ import annotations

import pytest

from schedviz.controllers.daemon import target_node_name
from schedviz.controllers.workloads import (
    CONTROLLER_REVISION_HASH_LABEL,
    POD_TEMPLATE_GENERATION_LABEL,
    daemon_template_pod,
    node_should_run_daemon_pod,
)
from schedviz.kube.load import load_manifests
from schedviz.kube.objects import DaemonSet, Node
from tests.controllers.harness import NODE, Cluster, start

DS = """
apiVersion: apps/v1
kind: DaemonSet
metadata: {name: agent, generation: 3}
spec:
  selector: {matchLabels: {app: agent}}
  template:
    metadata: {labels: {app: agent}}
    spec:
      containers: [{name: c, image: agent, resources: {requests: {cpu: "64"}}}]
      %s
"""
NODE_WITH = """
apiVersion: v1
kind: Node
metadata: {name: n1, labels: {zone: a}}
spec: %s
status: {allocatable: {cpu: "1"}}
"""


def answer(ds_spec: str, node_spec: str) -> tuple[bool, bool]:
    objects = load_manifests(DS % ds_spec + "---\n" + NODE_WITH % node_spec).objects
    ds = next(o for o in objects if isinstance(o, DaemonSet))
    node = next(o for o in objects if isinstance(o, Node))
    return node_should_run_daemon_pod(ds, daemon_template_pod(ds), node)


@pytest.mark.parametrize(
    ("ds_spec", "node_spec", "expected"),
    [
        pytest.param("", "{}", (True, True), id="simple daemon set, resources not considered"),
        pytest.param("nodeName: n1", "{}", (True, True), id="pod with its node's name"),
        pytest.param("nodeName: n2", "{}", (False, False), id="pod with another node's name"),
        pytest.param("nodeSelector: {zone: a}", "{}", (True, True), id="node selector matches"),
        pytest.param("nodeSelector: {zone: b}", "{}", (False, False), id="node selector misses"),
        pytest.param(
            "affinity: {nodeAffinity: {requiredDuringSchedulingIgnoredDuringExecution: "
            "{nodeSelectorTerms: [{matchExpressions: [{key: zone, operator: In, values: [b]}]}]}}}",
            "{}",
            (False, False),
            id="required node affinity misses",
        ),
        pytest.param(
            "",
            "{taints: [{key: k, value: v, effect: NoSchedule}]}",
            (False, True),
            id="untolerated NoSchedule taint: keeps a running pod",
        ),
        pytest.param(
            "",
            "{taints: [{key: k, value: v, effect: NoExecute}]}",
            (False, False),
            id="untolerated NoExecute taint",
        ),
        pytest.param(
            "tolerations: [{key: k, operator: Exists}]",
            "{taints: [{key: k, value: v, effect: NoExecute}]}",
            (True, True),
            id="tolerated taint",
        ),
        pytest.param(
            "",
            "{unschedulable: true, taints: [{key: node.kubernetes.io/unschedulable, "
            "effect: NoSchedule}]}",
            (True, True),
            id="cordoned node: the daemon tolerations include unschedulable",
        ),
        pytest.param(
            "",
            "{taints: [{key: node.kubernetes.io/not-ready, effect: NoExecute}]}",
            (True, True),
            id="not-ready node: tolerated NoExecute",
        ),
    ],
)
def test_node_should_run_daemon_pod(
    ds_spec: str, node_spec: str, expected: tuple[bool, bool]
) -> None:
    assert answer(ds_spec, node_spec) == expected


TAINTED = (
    "apiVersion: v1\nkind: Node\nmetadata: {name: %s}\nspec: {taints: [{key: k, effect: %s}]}\n"
)


def nodes_of(cluster: Cluster) -> list[str]:
    return sorted(target_node_name(p) for p in cluster.pods())


def test_a_node_added_later_gets_a_daemon_pod_and_a_deleted_one_loses_its_unbound_pod() -> None:
    cluster = start(NODE % "n1" + "---\n" + DS % "")
    assert nodes_of(cluster) == ["n1"]
    cluster.apply(NODE % "n2")
    assert nodes_of(cluster) == ["n1", "n2"]
    cluster.store.delete("Node", "n2")
    assert nodes_of(cluster) == ["n1"]


def test_a_new_no_execute_taint_removes_the_pod_a_no_schedule_one_does_not() -> None:
    cluster = start(NODE % "n1" + "---\n" + NODE % "n2" + "---\n" + DS % "")
    cluster.bind_all()
    cluster.apply(TAINTED % ("n1", "NoSchedule"))
    assert len(cluster.pods()) == 2
    cluster.apply(TAINTED % ("n2", "NoExecute"))
    assert len(cluster.pods()) == 1


def test_daemon_pods_carry_the_revision_hash_and_template_generation() -> None:
    cluster = start(NODE % "n1" + "---\n" + DS % "")
    (pod,) = cluster.pods()
    assert pod.labels[POD_TEMPLATE_GENERATION_LABEL] == "3"
    assert pod.labels[CONTROLLER_REVISION_HASH_LABEL]


def test_a_template_change_replaces_the_pods_max_unavailable_at_a_time() -> None:
    three = "---\n".join(NODE % n for n in ("n1", "n2", "n3"))
    cluster = start(three + "---\n" + DS % "")
    cluster.bind_all()
    old = {p.name for p in cluster.pods()}
    cluster.apply((DS % "").replace("image: agent", "image: agent:2"))
    assert len(old - set(cluster.names())) == 1  # maxUnavailable 1
    assert len(cluster.pods()) == 3  # its node's new pod made at once
    for _ in range(3):
        cluster.bind_all()
    assert not old & set(cluster.names())
    assert len({p.labels[CONTROLLER_REVISION_HASH_LABEL] for p in cluster.pods()}) == 1


DUMPED_DAEMON_POD = """
apiVersion: v1
kind: Pod
metadata:
  name: agent-x
  labels: {app: agent, controller-revision-hash: 6d4cf56db6, pod-template-generation: "3"}
  ownerReferences:
  - {apiVersion: apps/v1, kind: DaemonSet, name: agent, uid: ds-uid, controller: true}
spec:
  nodeName: n1
  containers: [{name: c, image: agent}]
"""


def test_a_dumped_daemon_set_keeps_its_pods_labelled_by_the_real_hash() -> None:
    dumped = (DS % "").replace("generation: 3}", "generation: 3, uid: ds-uid}")
    cluster = start(NODE % "n1" + "---\n" + dumped + "---\n" + DUMPED_DAEMON_POD)
    assert cluster.names() == ["agent-x"]
