"""The column-wise Filter and Score decide exactly as the per-node plugins do.

Each cluster is scheduled twice, with the snapshot's node columns in use and with them turned
off (every plugin then runs node by node, as upstream does), and every cycle's trace must be
the same, durations and wall-clock times aside. The clusters mix what the column-wise plugins
read: allocatable amounts (some nodes without memory or ephemeral storage), existing pods,
taints of every effect, unschedulable nodes, images, best-effort pods, tolerations, nodeName,
topology spread constraints (nodes without the key, inclusion policies, node selectors); and
the scoring strategies and resource lists they support or leave to the per-node code.
"""

from __future__ import annotations

import random
from typing import Any

import pytest
import yaml

from schedviz.bench.runner import place_init_pods
from schedviz.bench.workloads import WORKLOADS, Workload
from schedviz.kube.load import Manifests, load_manifests
from schedviz.kube.objects import Pod
from schedviz.scheduler.backend.cache.columns import NodeColumns
from schedviz.scheduler.framework.plugins.interpodaffinity import filtering as ipa_filtering
from schedviz.scheduler.framework.plugins.interpodaffinity import plugin as ipa_plugin
from schedviz.scheduler.framework.plugins.interpodaffinity import scoring as ipa_scoring
from schedviz.scheduler.framework.types import PodInfo
from schedviz.simulation.simulator import new_simulation

_VARYING = ("durationMs", "wallTime")


def _without_durations(value: Any) -> Any:
    if isinstance(value, dict):
        return {
            k: _without_durations(v)
            for k, v in value.items()
            if k not in ("durationMs", "wallTime")
        }
    if isinstance(value, list):
        return [_without_durations(v) for v in value]
    return value


def _traces(manifests: Manifests, seed: int, **options: Any) -> list[Any]:
    simulation = new_simulation(manifests, seed=seed, **options)
    simulation.run()
    return [_without_durations(trace.to_json()) for trace in simulation.traces]


def _both_ways(
    monkeypatch: pytest.MonkeyPatch, manifests: Manifests, seed: int = 0, **options: Any
) -> tuple[list[Any], list[Any]]:
    with_columns = _traces(manifests, seed, **options)
    with monkeypatch.context() as patch:
        patch.setattr(NodeColumns, "exact", property(lambda self: False))
        node_by_node = _traces(manifests, seed, **options)
    return with_columns, node_by_node


_STRATEGIES = {
    "LeastAllocated": {"type": "LeastAllocated"},
    "MostAllocated": {
        "type": "MostAllocated",
        "resources": [
            {"name": "cpu", "weight": 2},
            {"name": "memory", "weight": 1},
            {"name": "ephemeral-storage", "weight": 3},
        ],
    },
    "RequestedToCapacityRatio": {
        "type": "RequestedToCapacityRatio",
        "resources": [{"name": "cpu", "weight": 1}, {"name": "memory", "weight": 1}],
        "requestedToCapacityRatio": {
            "shape": [{"utilization": 0, "score": 10}, {"utilization": 100, "score": 0}]
        },
    },
}


def _configuration(strategy: str) -> dict[str, Any]:
    return {
        "apiVersion": "kubescheduler.config.k8s.io/v1",
        "kind": "KubeSchedulerConfiguration",
        "profiles": [
            {
                "schedulerName": "default-scheduler",
                "pluginConfig": [
                    {
                        "name": "NodeResourcesFit",
                        "args": {"scoringStrategy": _STRATEGIES[strategy]},
                    },
                    {
                        "name": "NodeResourcesBalancedAllocation",
                        "args": {
                            "resources": [
                                {"name": "cpu", "weight": 1},
                                {"name": "memory", "weight": 1},
                                {"name": "ephemeral-storage", "weight": 1},
                            ]
                        },
                    },
                ],
            }
        ],
    }


_TAINTS = [
    {"key": "dedicated", "value": "gpu", "effect": "NoSchedule"},
    {"key": "spot", "effect": "PreferNoSchedule"},
    {"key": "maintenance", "value": "soon", "effect": "PreferNoSchedule"},
    {"key": "drain", "effect": "NoExecute"},
]


def _node_labels(rng: random.Random, index: int) -> dict[str, str]:
    labels = {"kubernetes.io/hostname": f"node-{index:03d}"}
    if rng.random() > 0.05:  # a few nodes lack the zone label, a few have it empty
        labels["zone"] = f"z{index % 4}" if rng.random() > 0.03 else ""
    if rng.random() < 0.5:
        labels["disk"] = "ssd"
    return labels


def _spread(rng: random.Random) -> list[dict[str, Any]]:
    keys = rng.sample(["zone", "kubernetes.io/hostname", "disk"], rng.randint(1, 2))
    when = rng.choice(["DoNotSchedule", "ScheduleAnyway"])
    constraints = []
    for key in keys:
        constraint: dict[str, Any] = {
            "maxSkew": rng.choice([1, 2]),
            "topologyKey": key,
            "whenUnsatisfiable": when,
            "labelSelector": {"matchLabels": {"app": "web"}},
        }
        if rng.random() < 0.3:
            constraint["nodeTaintsPolicy"] = "Honor"
        if rng.random() < 0.2:
            constraint["nodeAffinityPolicy"] = "Ignore"
        constraints.append(constraint)
    return constraints


_AFFINITY_KEYS = ["kubernetes.io/hostname", "zone"]


def _affinity_term(rng: random.Random) -> dict[str, Any]:
    term: dict[str, Any] = {
        "topologyKey": rng.choice(_AFFINITY_KEYS),
        "labelSelector": {"matchLabels": {"app": rng.choice(["web", "db", "cache"])}},
    }
    draw = rng.random()
    if draw < 0.2:
        term["namespaces"] = rng.sample(["default", "team"], rng.randint(1, 2))
    elif draw < 0.35:
        term["namespaceSelector"] = {}  # every namespace
    elif draw < 0.5:
        term["namespaceSelector"] = {"matchLabels": {"tier": "team"}}
    return term


def _pod_affinity(rng: random.Random) -> dict[str, Any]:
    """Required and preferred pod (anti-)affinity over hostnames and zones."""
    affinity: dict[str, Any] = {}
    for kind in ("podAffinity", "podAntiAffinity"):
        if rng.random() < 0.5:
            continue
        rules: dict[str, Any] = {}
        if rng.random() < 0.5:
            rules["requiredDuringSchedulingIgnoredDuringExecution"] = [
                _affinity_term(rng) for _ in range(rng.randint(1, 2))
            ]
        if rng.random() < 0.6:
            rules["preferredDuringSchedulingIgnoredDuringExecution"] = [
                {"weight": rng.choice([1, 10, 50]), "podAffinityTerm": _affinity_term(rng)}
                for _ in range(rng.randint(1, 2))
            ]
        if rules:
            affinity[kind] = rules
    return affinity


def _node(rng: random.Random, index: int) -> dict[str, Any]:
    allocatable = {"cpu": rng.choice(["2", "4", "8", "3500m"]), "pods": rng.choice(["3", "110"])}
    if rng.random() > 0.1:
        allocatable["memory"] = rng.choice(["4Gi", "16Gi", "32Gi"])
    if rng.random() > 0.5:
        allocatable["ephemeral-storage"] = rng.choice(["10Gi", "100Gi"])
    node: dict[str, Any] = {
        "apiVersion": "v1",
        "kind": "Node",
        "metadata": {"name": f"node-{index:03d}", "labels": _node_labels(rng, index)},
        "status": {"allocatable": allocatable, "capacity": dict(allocatable)},
        "spec": {},
    }
    if rng.random() < 0.3:
        node["spec"]["taints"] = rng.sample(_TAINTS, rng.randint(1, 2))
    if rng.random() < 0.05:
        node["spec"]["unschedulable"] = True
    if rng.random() < 0.2:
        node["status"]["images"] = [
            {"names": [rng.choice(["nginx:1.27", "redis:7"])], "sizeBytes": 200_000_000}
        ]
    return node


def _pod(rng: random.Random, index: int, node_count: int, *, affinity_pods: bool) -> dict[str, Any]:
    requests: dict[str, str] = {}
    if rng.random() > 0.15:  # some pods are best-effort
        requests["cpu"] = rng.choice(["100m", "500m", "1", "3", "12"])
        if rng.random() > 0.2:
            requests["memory"] = rng.choice(["128Mi", "1Gi", "6Gi"])
        if rng.random() < 0.3:
            requests["ephemeral-storage"] = rng.choice(["1Gi", "20Gi"])
    spec: dict[str, Any] = {
        "containers": [
            {
                "name": "c",
                "image": rng.choice(["nginx:1.27", "redis:7", "busybox"]),
                "resources": {"requests": requests},
            }
        ]
    }
    if rng.random() < 0.3:
        spec["tolerations"] = rng.sample(
            [
                {"key": "dedicated", "operator": "Exists", "effect": "NoSchedule"},
                {"key": "spot", "operator": "Exists"},
                {"key": "node.kubernetes.io/unschedulable", "operator": "Exists"},
                {"operator": "Exists"},
            ],
            rng.randint(1, 2),
        )
    if rng.random() < 0.03:
        spec["nodeName"] = f"node-{rng.randrange(node_count):03d}"
    labels = {"app": rng.choice(["web", "db"])}
    if rng.random() < 0.4:
        spec["topologySpreadConstraints"] = _spread(rng)
        if rng.random() < 0.3:
            spec["nodeSelector"] = {"disk": "ssd"}
    namespace = "default"
    if affinity_pods and rng.random() < 0.5:
        labels["app"] = rng.choice(["web", "db", "cache"])
        if rng.random() < 0.3:
            namespace = "team"
        affinity = _pod_affinity(rng)
        if rng.random() < 0.1:
            # The first pod of its group: required affinity to itself alone, over a key some
            # nodes lack (Filter lets it onto any node with the key).
            labels["app"] = f"solo-{index}"
            term = {
                "topologyKey": rng.choice(_AFFINITY_KEYS),
                "labelSelector": {"matchLabels": {"app": labels["app"]}},
            }
            affinity = {"podAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": [term]}}
        if affinity:
            spec["affinity"] = affinity
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": f"pod-{index:03d}", "namespace": namespace, "labels": labels},
        "spec": spec,
    }


_NODE_REQUIREMENTS: list[dict[str, Any]] = [
    {"key": "zone", "operator": "In", "values": ["z0", "z1"]},
    {"key": "zone", "operator": "In", "values": [""]},
    {"key": "zone", "operator": "NotIn", "values": ["z2"]},
    {"key": "zone", "operator": "Exists"},
    {"key": "zone", "operator": "DoesNotExist"},
    {"key": "disk", "operator": "Exists"},
    {"key": "disk", "operator": "NotIn", "values": ["ssd"]},
    {"key": "rack", "operator": "Gt", "values": ["3"]},
    {"key": "rack", "operator": "Lt", "values": ["5"]},
    {"key": "kubernetes.io/hostname", "operator": "NotIn", "values": ["node-001", "node-007"]},
]


def _node_affinity(rng: random.Random) -> dict[str, Any]:
    """Required (and sometimes preferred) node affinity: terms ORed of requirements ANDed,
    now and then a matchFields term (which labels alone do not decide) or an empty one."""
    terms: list[dict[str, Any]] = []
    for _ in range(rng.randint(1, 2)):
        term: dict[str, Any] = {
            "matchExpressions": rng.sample(_NODE_REQUIREMENTS, rng.randint(1, 2))
        }
        draw = rng.random()
        if draw < 0.1:
            term["matchFields"] = [
                {"key": "metadata.name", "operator": "NotIn", "values": ["node-003"]}
            ]
        elif draw < 0.15:
            term = {}  # an empty term matches no node
        terms.append(term)
    affinity: dict[str, Any] = {
        "requiredDuringSchedulingIgnoredDuringExecution": {"nodeSelectorTerms": terms}
    }
    if rng.random() < 0.3:
        preference = {"matchExpressions": [rng.choice(_NODE_REQUIREMENTS)]}
        affinity["preferredDuringSchedulingIgnoredDuringExecution"] = [
            {"weight": rng.choice([1, 50]), "preference": preference}
        ]
    return {"nodeAffinity": affinity}


def _with_node_affinity(rng: random.Random, pod: dict[str, Any]) -> None:
    spec = pod["spec"]
    draw = rng.random()
    if draw < 0.25:
        spec["nodeSelector"] = rng.choice([{"disk": "ssd"}, {"zone": "z1", "disk": "ssd"}])
    elif draw < 0.7:
        spec.setdefault("affinity", {}).update(_node_affinity(rng))
        if rng.random() < 0.2:
            spec["nodeSelector"] = {"zone": "z0"}


def _cluster(
    seed: int,
    strategy: str,
    nodes: int,
    pods: int,
    *,
    affinity_pods: bool = False,
    node_affinity: bool = False,
) -> Manifests:
    rng = random.Random(seed)
    documents: list[dict[str, Any]] = [_configuration(strategy)]
    if affinity_pods:
        documents += [
            {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "default"}},
            {
                "apiVersion": "v1",
                "kind": "Namespace",
                "metadata": {"name": "team", "labels": {"tier": "team"}},
            },
        ]
    node_documents = [_node(rng, i) for i in range(nodes)]
    pod_documents = [_pod(rng, i, nodes, affinity_pods=affinity_pods) for i in range(pods)]
    if node_affinity:
        # A generator of its own, so that the other tests' clusters stay as they were.
        affinity_rng = random.Random(seed + 1000)
        for node in node_documents:
            if affinity_rng.random() < 0.7:
                node["metadata"]["labels"]["rack"] = affinity_rng.choice(["1", "4", "9", "x"])
        for pod in pod_documents:
            _with_node_affinity(affinity_rng, pod)
        # The profile enforces an affinity of its own on every pod (addedAffinity).
        documents[0]["profiles"][0]["pluginConfig"].append(
            {
                "name": "NodeAffinity",
                "args": {
                    "addedAffinity": {
                        "requiredDuringSchedulingIgnoredDuringExecution": {
                            "nodeSelectorTerms": [
                                {
                                    "matchExpressions": [
                                        {"key": "zone", "operator": "NotIn", "values": ["z3"]}
                                    ]
                                }
                            ]
                        }
                    }
                },
            }
        )
    documents += node_documents + pod_documents
    return load_manifests(yaml.safe_dump_all(documents))


@pytest.mark.parametrize("strategy", sorted(_STRATEGIES))
@pytest.mark.parametrize("seed", [1, 2])
def test_column_wise_filter_and_score_give_the_node_by_node_traces(
    monkeypatch: pytest.MonkeyPatch, strategy: str, seed: int
) -> None:
    # 260 nodes: more than upstream's minimum of 100 feasible nodes to find, so the walk stops
    # early and goes round the node list from a moving start.
    manifests = _cluster(seed, strategy, nodes=260, pods=160)
    with_columns, node_by_node = _both_ways(monkeypatch, manifests, seed=seed)
    assert len(with_columns) >= 150  # pods naming a node skip the scheduler
    assert any(trace["result"] == "Unschedulable" for trace in with_columns)
    assert any(len(trace["scores"]) > 1 for trace in with_columns)
    assert with_columns == node_by_node


def _checking_inter_pod_affinity_maps(monkeypatch: pytest.MonkeyPatch) -> dict[str, int]:
    """Makes the column-wise PreFilter and PreScore of InterPodAffinity also count node by node
    and compare (the maps themselves, which a trace only shows through Filter and Score);
    returns how often each was checked and how often they differed (an assertion raised here
    would only fail the cycle, and the pod would be retried)."""
    checked = {"pre_filter": 0, "pre_score": 0, "differed": 0}
    pre_filter_counts = ipa_plugin.pre_filter_counts
    topology_score = ipa_plugin.column_topology_score

    def checked_pre_filter_counts(
        pod_info: PodInfo, namespace_labels: dict[str, str], columns: NodeColumns
    ) -> Any:
        result = pre_filter_counts(pod_info, namespace_labels, columns)
        existing = ipa_filtering.get_existing_anti_affinity_counts(
            pod_info.pod, namespace_labels, columns.infos
        )
        affinity, anti = ipa_filtering.get_incoming_affinity_anti_affinity_counts(
            pod_info, columns.infos
        )
        checked["differed"] += result[:3] != (existing, affinity, anti)
        checked["pre_filter"] += 1
        return result

    def checked_topology_score(
        state: ipa_scoring.PreScoreState, columns: NodeColumns, has_constraints: bool, hard: int
    ) -> Any:
        result = topology_score(state, columns, has_constraints, hard)
        expected = ipa_scoring.compute_topology_score(state, columns.infos, has_constraints, hard)
        checked["differed"] += result != expected
        checked["pre_score"] += 1
        return result

    monkeypatch.setattr(ipa_plugin, "pre_filter_counts", checked_pre_filter_counts)
    monkeypatch.setattr(ipa_plugin, "column_topology_score", checked_topology_score)
    return checked


@pytest.mark.parametrize("seed", [3, 4, 5])
def test_column_wise_inter_pod_affinity_gives_the_node_by_node_traces(
    monkeypatch: pytest.MonkeyPatch, seed: int
) -> None:
    # Half the pods carry required and preferred pod (anti-)affinity over hostnames and zones
    # (some nodes lack the zone, some have it empty), in two namespaces, with namespace lists
    # and selectors.
    manifests = _cluster(seed, "LeastAllocated", nodes=120, pods=200, affinity_pods=True)
    checked = _checking_inter_pod_affinity_maps(monkeypatch)
    with_columns, node_by_node = _both_ways(monkeypatch, manifests, seed=seed)
    assert checked["pre_filter"] >= 150 and checked["pre_score"] >= 100
    assert checked["differed"] == 0
    assert len(with_columns) >= 180
    reasons = {
        reason
        for trace in with_columns
        for statuses in (trace["filter"] or {}).values()
        for status in statuses
        if status["plugin"] == "InterPodAffinity"
        for reason in status.get("reasons", ())
    }
    assert len(reasons) == 3, reasons  # each of Filter's three checks rejects some node
    assert any(
        "InterPodAffinity" in scores and scores["InterPodAffinity"]["raw"] != 0
        for trace in with_columns
        for scores in (trace["scores"] or {}).values()
    )
    assert with_columns == node_by_node


@pytest.mark.parametrize("seed", [3, 4])
def test_column_wise_node_affinity_gives_the_node_by_node_traces(
    monkeypatch: pytest.MonkeyPatch, seed: int
) -> None:
    # Pods with nodeSelectors and required node affinity of every operator (matchFields and
    # invalid terms among them), under a profile's scheduler-enforced affinity.
    manifests = _cluster(seed, "LeastAllocated", nodes=260, pods=160, node_affinity=True)
    with_columns, node_by_node = _both_ways(monkeypatch, manifests, seed=seed)
    reasons = {
        reason
        for trace in with_columns
        for plugins in (trace["filter"] or {}).values()
        for entry in plugins
        if entry["plugin"] == "NodeAffinity"
        for reason in entry.get("reasons", ())
    }
    assert reasons == {
        "node(s) didn't match Pod's node affinity/selector",
        "node(s) didn't match scheduler-enforced node affinity",
    }
    assert with_columns == node_by_node


@pytest.mark.parametrize("name", sorted(WORKLOADS))
def test_each_benchmark_workload_schedules_the_same_with_and_without_columns(
    monkeypatch: pytest.MonkeyPatch, name: str
) -> None:
    workload = WORKLOADS[name].build(150, 60, 40, 0)
    manifests = Manifests(objects=[*workload.init_objects, *workload.measured_pods])
    with_columns, node_by_node = _both_ways(monkeypatch, manifests, config=workload.config)
    assert len(with_columns) >= 100
    assert with_columns == node_by_node


def _traces_after_init_pods(workload: Workload, later: list[Pod]) -> list[Any]:
    """The traces of ``later``'s pods, created once the init pods are placed."""
    simulation = new_simulation(
        Manifests(objects=list(workload.init_objects)), config=workload.config
    )
    place_init_pods(simulation)
    for pod in later:
        simulation.store.apply(pod)
    simulation.run()
    return [_without_durations(trace.to_json()) for trace in simulation.traces]


def test_nodes_with_nominated_pods_are_filtered_with_them_beside_the_columns(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # PreemptionAsync's shape on 120 nodes filled with low-priority pods: the high-priority
    # churn pods preempt and are nominated, and the other pods are scheduled meanwhile (the
    # nominated nodes filtered with their nominated pods, the rest column-wise).
    workload = WORKLOADS["PreemptionAsync"].build(120, 480, 40, 0)
    assert workload.churn is not None
    later = [workload.churn(i) for i in range(12)] + workload.measured_pods
    with_columns = _traces_after_init_pods(workload, later)
    with monkeypatch.context() as patch:
        patch.setattr(NodeColumns, "exact", property(lambda self: False))
        node_by_node = _traces_after_init_pods(workload, later)
    assert sum(1 for trace in with_columns if trace["nominatedNode"]) >= 5
    assert with_columns == node_by_node
