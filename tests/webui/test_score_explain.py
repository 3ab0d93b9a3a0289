"""The trace page's explanations: the decision sentence, and each score cell's computation
(upstream's NormalizeScore tables for the normalization; a lesson's cycles for the inputs)."""

from __future__ import annotations

from typing import Any

import pytest

from schedviz.cluster import lessons
from schedviz.cluster.models import Cycle, Pod
from webui.score_explain import (
    M,
    X,
    decision,
    normalize_steps,
    round_for_people,
    score_computation,
)
from worker.runner import run_cluster


def _cell(raw: int, normalized: int, weight: int) -> dict[str, int]:
    return {"raw": raw, "normalized": normalized, "weight": weight, "weighted": normalized * weight}


def scheduled_trace() -> dict[str, Any]:
    scores = {
        "node-c": {
            "NodeResourcesFit": _cell(81, 81, 1),
            "NodeResourcesBalancedAllocation": _cell(93, 93, 1),
            "TaintToleration": _cell(0, 100, 3),
        },
        "node-b": {
            "NodeResourcesFit": _cell(62, 62, 1),
            "NodeResourcesBalancedAllocation": _cell(87, 87, 1),
            "TaintToleration": _cell(0, 100, 3),
        },
        "node-a": {
            "NodeResourcesFit": _cell(90, 90, 1),
            "NodeResourcesBalancedAllocation": _cell(50, 50, 1),
            "TaintToleration": _cell(1, 0, 3),
        },
    }
    totals = {n: sum(c["weighted"] for c in s.values()) for n, s in scores.items()}
    return {
        "result": "Scheduled",
        "node": "node-c",
        "totalNodes": 4,
        "feasibleNodes": 3,
        "scores": scores,
        "totals": totals,
        "selected": {"node": "node-c", "tieSet": ["node-c"]},
    }


def test_the_sentence_names_the_winner_the_margin_and_the_plugins_that_decided_it() -> None:
    said = decision(scheduled_trace())
    assert said.sentence == (
        "node-c won with 474, 25 ahead of node-b (449), out of 3 nodes scored; decided by "
        "NodeResourcesFit (+19) and NodeResourcesBalancedAllocation (+6)."
    )
    assert said.decisive_plugins == {"NodeResourcesFit", "NodeResourcesBalancedAllocation"}
    assert (said.winner, said.runner_up, said.margin) == ("node-c", "node-b", 25)


def test_the_sentence_says_which_plugin_favoured_the_runner_up() -> None:
    trace = scheduled_trace()
    trace["scores"]["node-b"]["TaintToleration"] = _cell(0, 100, 3)
    trace["scores"]["node-c"]["TaintToleration"] = _cell(0, 95, 3)
    trace["totals"]["node-c"] = 81 + 93 + 285
    said = decision(trace)
    assert "10 ahead of node-b (449)" in said.sentence
    assert said.sentence.endswith("; TaintToleration favoured node-b (-15).")


def test_a_tie_is_said_to_be_a_tie_decided_at_random() -> None:
    trace = scheduled_trace()
    trace["totals"]["node-b"] = trace["totals"]["node-c"]
    trace["selected"]["tieSet"] = ["node-b", "node-c"]
    said = decision(trace)
    assert said.sentence == (
        "node-c won with 474, tied with node-b: among the 2 nodes with the top score the "
        "scheduler picks one at random."
    )
    assert said.tie == ("node-b", "node-c") and not said.decisive


def test_one_feasible_node_is_not_scored() -> None:
    trace = {"result": "Scheduled", "node": "node-a", "totalNodes": 3, "feasibleNodes": 1}
    assert decision(trace).sentence == (
        "node-a was the only one of 3 nodes that passed every filter, so nothing was scored."
    )


def test_a_pod_that_fit_nowhere_gets_its_fit_error_in_words() -> None:
    reason = "node(s) didn't match pod topology spread constraints"
    trace = {
        "result": "Unschedulable",
        "totalNodes": 3,
        "filter": {
            "node-a": [
                {"plugin": "PodTopologySpread", "code": "Unschedulable", "reasons": [reason]}
            ],
            "node-b": [
                {"plugin": "PodTopologySpread", "code": "Unschedulable", "reasons": [reason]}
            ],
            "node-c": [
                {
                    "plugin": "NodeResourcesFit",
                    "code": "Unschedulable",
                    "reasons": ["Insufficient cpu"],
                }
            ],
        },
        "nominatedNode": "node-c",
        "preemption": {"victims": ["default/low-1"]},
    }
    assert decision(trace).sentence == (
        f"No node fit: of 3 nodes, rejected 2 by PodTopologySpread ({reason}) and 1 by "
        "NodeResourcesFit (Insufficient cpu). Preemption then nominated node-c, evicting "
        "default/low-1: the pod is bound in a later cycle."
    )
    trace["nominatedNode"] = None
    assert decision(trace).sentence.endswith(
        "Preemption found no node where evicting pods would help."
    )


# Upstream's helper/normalize_score_test.go: scores 1..5, max 5.
@pytest.mark.parametrize(("raw", "normalized"), [(1, 80), (2, 60), (3, 40), (4, 20), (5, 0)])
def test_taint_toleration_normalizes_in_reverse_with_the_numbers(raw: int, normalized: int) -> None:
    raws = {f"n{i}": i for i in range(1, 6)}
    steps = normalize_steps("TaintToleration", raws, f"n{raw}", normalized)
    assert steps[-1] == (
        f"normalized = 100 {M} 100 {X} raw / max = 100 {M} 100 {X} {raw} / 5 = "
        f"100 {M} {100 - normalized} = {normalized}"
    )


@pytest.mark.parametrize(("raw", "normalized"), [(1, 20), (3, 60), (5, 100)])
def test_node_affinity_normalizes_by_the_highest_score(raw: int, normalized: int) -> None:
    raws = {f"n{i}": i for i in range(1, 6)}
    steps = normalize_steps("NodeAffinity", raws, f"n{raw}", normalized)
    assert steps[-1] == f"normalized = 100 {X} raw / max = 100 {X} {raw} / 5 = {normalized}"


def test_all_zero_scores_normalize_as_upstream() -> None:
    raws = {"a": 0, "b": 0}
    assert "every node gets 100" in normalize_steps("TaintToleration", raws, "a", 100)[0]
    assert "they stay 0" in normalize_steps("NodeAffinity", raws, "a", 0)[0]
    assert "all get 100" in normalize_steps("PodTopologySpread", raws, "a", 100)[0]
    assert "all normalized to 0" in normalize_steps("InterPodAffinity", raws, "a", 0)[0]


def test_topology_spread_and_inter_pod_affinity_show_their_own_normalization() -> None:
    raws = {"a": 0, "b": 1, "c": 2}
    assert normalize_steps("PodTopologySpread", raws, "b", 50)[-1] == (
        f"normalized = 100 {X} (max + min {M} raw) / max = 100 {X} (2 + 0 {M} 1) / 2 = 50"
    )
    raws = {"a": 0, "b": 5, "c": 10}
    assert normalize_steps("InterPodAffinity", raws, "b", 50)[-1] == (
        f"normalized = 100 {X} (raw {M} min) / (max {M} min) = 100 {X} (5 {M} 0) / (10 {M} 0) = 50"
    )
    # A node the plugin set apart (ignored by PodTopologySpread) is said to be.
    assert "set this node apart" in normalize_steps("PodTopologySpread", raws, "a", 0)[-1]


def test_plugins_without_normalize_keep_their_raw_score() -> None:
    assert normalize_steps("NodeResourcesFit", {"a": 75}, "a", 75) == [
        "NodeResourcesFit has no NormalizeScore: normalized = raw = 75"
    ]


def test_floats_are_rounded_for_people() -> None:
    assert round_for_people({"since": 0.352087435000044, "n": [2.0, 1234.5678]}) == {
        "since": 0.352,
        "n": [2.0, 1234.6],
    }


@pytest.fixture
def lesson_run(settings: Any) -> Any:
    settings.SCHEDVIZ_START_RUNNERS = False
    settings.SCHEDVIZ_RUNNER_IDLE_SECONDS = 0
    cluster = lessons.lesson_load(slug="resource-fit")
    run_cluster(cluster.pk)
    return cluster


def _computation(cluster: Any, pod: str, node: str, plugin: str) -> Any:
    cycle = Cycle.objects.get(cluster=cluster, pod_name=pod)
    return score_computation(cluster=cluster, trace=cycle.trace(), node=node, plugin=plugin)


@pytest.mark.django_db(transaction=True)
def test_node_resources_fit_shows_requested_allocatable_and_the_strategys_formula(
    lesson_run: Any,
) -> None:
    fit = _computation(lesson_run, "spread-me", "node-a", "NodeResourcesFit")
    assert (fit.raw, fit.normalized, fit.weight, fit.weighted) == (25, 25, 1, 25)
    assert ("strategy", "LeastAllocated") in fit.inputs
    assert ("cpu", "requested 6 (this pod 2) of allocatable 8, weight 1") in fit.inputs
    assert ("memory", "requested 12Gi (this pod 4Gi) of allocatable 16Gi, weight 1") in fit.inputs
    assert fit.raw_steps == [
        f"cpu: (allocatable {M} requested) {X} 100 / allocatable = (8 {M} 6) {X} 100 / 8 = 25",
        f"memory: (allocatable {M} requested) {X} 100 / allocatable "
        f"= (16Gi {M} 12Gi) {X} 100 / 16Gi = 25",
        f"raw = (25 {X} 1 + 25 {X} 1) / (1 + 1) = 25 (integer division)",
    ]
    assert fit.weighted_step == f"weighted = normalized {X} weight = 25 {X} 1 = 25"
    pack = _computation(lesson_run, "pack-me", "node-a", "NodeResourcesFit")
    assert ("strategy", "MostAllocated") in pack.inputs
    assert pack.raw_steps[0] == f"cpu: requested {X} 100 / allocatable = 6 {X} 100 / 8 = 75"


@pytest.mark.django_db(transaction=True)
def test_balanced_allocation_shows_the_fractions_and_their_deviation(lesson_run: Any) -> None:
    balanced = _computation(lesson_run, "spread-me", "node-b", "NodeResourcesBalancedAllocation")
    assert balanced.raw == 100
    assert balanced.raw_steps == [
        "cpu fraction = requested / allocatable = 0.250",
        "memory fraction = requested / allocatable = 0.250",
        f"std = |0.250 {M} 0.250| / 2 = 0.000",
        f"raw = (1 {M} std) {X} 100 = (1 {M} 0.000) {X} 100 = 100 (truncated)",
    ]


@pytest.mark.django_db(transaction=True)
def test_a_node_whose_pods_changed_since_says_so_instead_of_wrong_inputs(lesson_run: Any) -> None:
    Pod.objects.filter(cluster=lesson_run, name__startswith="batch-").delete()
    fit = _computation(lesson_run, "spread-me", "node-a", "NodeResourcesFit")
    assert fit.inputs == [] and fit.raw_steps == []
    assert "have changed since" in fit.notes[0] and "not the 25 the cycle gave" in fit.notes[0]


@pytest.mark.django_db(transaction=True)
def test_taint_toleration_counts_the_intolerable_prefer_no_schedule_taints(settings: Any) -> None:
    settings.SCHEDVIZ_START_RUNNERS = False
    settings.SCHEDVIZ_RUNNER_IDLE_SECONDS = 0
    cluster = lessons.lesson_load(slug="taints-and-tolerations")
    run_cluster(cluster.pk)
    tainted = _computation(cluster, "web", "node-b", "TaintToleration")
    assert (tainted.raw, tainted.normalized, tainted.weighted) == (1, 0, 0)
    assert ("not tolerated by the pod", "maintenance=soon:PreferNoSchedule") in tainted.inputs
    assert tainted.normalize_steps[-1] == (
        f"normalized = 100 {M} 100 {X} raw / max = 100 {M} 100 {X} 1 / 1 = 100 {M} 100 = 0"
    )
    clean = _computation(cluster, "web", "node-a", "TaintToleration")
    assert (clean.raw, clean.normalized, clean.weighted) == (0, 100, 300)


@pytest.mark.django_db(transaction=True)
def test_node_affinity_names_the_matched_preferred_terms(settings: Any) -> None:
    settings.SCHEDVIZ_START_RUNNERS = False
    settings.SCHEDVIZ_RUNNER_IDLE_SECONDS = 0
    cluster = lessons.lesson_load(slug="node-affinity")
    run_cluster(cluster.pk)
    ssd = _computation(cluster, "db", "node-c", "NodeAffinity")
    assert ("matched by the node's labels", "term 1 (weight 50)") in ssd.inputs
    assert ssd.raw_steps == ["raw = the sum of the matched terms' weights = 50 = 50"]
    assert ssd.normalize_steps[-1] == f"normalized = 100 {X} raw / max = 100 {X} 50 / 50 = 100"
    assert ssd.weighted == 200


@pytest.mark.django_db(transaction=True)
def test_a_score_cell_opens_as_a_fragment_for_htmx_and_as_a_page(lesson_run: Any) -> None:
    from django.test import Client
    from django.urls import reverse

    number = Cycle.objects.get(cluster=lesson_run, pod_name="spread-me").number
    url = reverse("webui:score_cell", args=[lesson_run.pk, number, "node-a", "NodeResourcesFit"])
    client = Client()
    fragment = client.get(url, headers={"HX-Request": "true"}).content.decode()
    assert fragment.lstrip().startswith('<section class="score-computation"')
    assert "raw 25 → normalized 25 → weighted 25" in fragment
    assert f"(8 {M} 6) {X} 100 / 8 = 25" in fragment
    page = client.get(url).content.decode()
    assert "<!doctype html>" in page.lower() and "<h1>How NodeResourcesFit scored" in page
    missing = reverse("webui:score_cell", args=[lesson_run.pk, number, "node-small", "X"])
    assert client.get(missing).status_code == 404


IMAGES = """
apiVersion: v1
kind: Node
metadata: {name: node-a}
status:
  allocatable: {cpu: "4", memory: 8Gi, pods: "110"}
  images: [{names: ["docker.io/library/nginx:1.25", "nginx:1.25"], sizeBytes: 524288000}]
---
apiVersion: v1
kind: Node
metadata: {name: node-b}
status:
  allocatable: {cpu: "4", memory: 8Gi, pods: "110"}
---
apiVersion: v1
kind: Pod
metadata: {name: web, namespace: default}
spec:
  containers: [{name: c, image: "nginx:1.25", resources: {requests: {cpu: 100m}}}]
"""


@pytest.mark.django_db(transaction=True)
def test_image_locality_shows_each_image_scaled_by_its_spread(settings: Any) -> None:
    from schedviz.cluster import services

    settings.SCHEDVIZ_START_RUNNERS = False
    settings.SCHEDVIZ_RUNNER_IDLE_SECONDS = 0
    cluster = services.cluster_create(name="images")
    services.manifests_apply(cluster=cluster, text=IMAGES)
    run_cluster(cluster.pk)
    held = _computation(cluster, "web", "node-a", "ImageLocality")
    # 500 MB on 1 of 2 nodes: 250 MB; 100 * (250 - 23) / (1000 - 23) = 23.
    assert held.raw == 23
    assert ("on the node", "nginx:1.25") in held.inputs
    assert held.raw_steps[0] == f"nginx:1.25: 500.0 MB {X} 1/2 nodes = 250.0 MB"
    assert held.raw_steps[-1].endswith(f"= 100 {X} 227.0 MB / 977.0 MB = 23")
    bare = _computation(cluster, "web", "node-b", "ImageLocality")
    assert bare.raw == 0 and ("on the node", "none of them") in bare.inputs


# ---------------------------------------------------------------- PodTopologySpread's inputs


def _spread_cluster(
    nodes: dict[str, str | None], pods: dict[str, int], constraints: list[tuple[int, str]]
) -> Any:
    """A cluster of ``nodes`` (name -> zone or None) with ``pods[node]`` pods labelled foo on
    each, and the unbound pod p with ScheduleAnyway ``constraints`` (maxSkew, key) on foo."""
    from schedviz.cluster import services

    docs: list[str] = []
    for name, zone in nodes.items():
        labels = f"kubernetes.io/hostname: {name}" + (f", zone: {zone}" if zone else "")
        docs.append(
            f"apiVersion: v1\nkind: Node\nmetadata: {{name: {name}, labels: {{{labels}}}}}\n"
            'status: {allocatable: {cpu: "4", memory: 8Gi, pods: "110"}}'
        )
    for node, count in pods.items():
        for i in range(count):
            docs.append(
                f"apiVersion: v1\nkind: Pod\nmetadata: {{name: p-{node[-1]}{i}, namespace: "
                f'default, labels: {{foo: ""}}}}\nspec: {{nodeName: {node}, containers: '
                "[{name: c, image: pause}]}"
            )
    spread = ", ".join(
        f"{{maxSkew: {skew}, topologyKey: {key}, whenUnsatisfiable: ScheduleAnyway, "
        "labelSelector: {matchExpressions: [{key: foo, operator: Exists}]}}"
        for skew, key in constraints
    )
    docs.append(
        'apiVersion: v1\nkind: Pod\nmetadata: {name: p, namespace: default, labels: {foo: ""}}\n'
        f"spec: {{topologySpreadConstraints: [{spread}], containers: [{{name: c, image: pause}}]}}"
    )
    cluster = services.cluster_create(name="spread")
    services.manifests_apply(cluster=cluster, text="\n---\n".join(docs))
    return cluster


def _spread_trace(raws: dict[str, int], normalized: dict[str, int]) -> dict[str, Any]:
    return {
        "cycle": 1,
        "pod": "default/p",
        "profile": "default-scheduler",
        "scores": {
            node: {"PodTopologySpread": _cell(raw, normalized[node], 2)}
            for node, raw in raws.items()
        },
    }


@pytest.mark.django_db(transaction=True)
def test_topology_spread_shows_the_count_per_hostname_domain_and_its_weight(settings: Any) -> None:
    settings.SCHEDVIZ_START_RUNNERS = False
    # Upstream's "one constraint on node, all 4 nodes are candidates": 2, 1, 0 and 3 matching
    # pods, each counted log(4 + 2) = 1.7918; normalized 20, 60, 100, 0.
    nodes: dict[str, str | None] = {n: None for n in ("node-a", "node-b", "node-c", "node-d")}
    cluster = _spread_cluster(
        nodes, {"node-a": 2, "node-b": 1, "node-d": 3}, [(1, "kubernetes.io/hostname")]
    )
    raws = {"node-a": 4, "node-b": 2, "node-c": 0, "node-d": 5}
    trace = _spread_trace(raws, {"node-a": 20, "node-b": 60, "node-c": 100, "node-d": 0})
    a = score_computation(cluster=cluster, trace=trace, node="node-a", plugin="PodTopologySpread")
    assert a.notes[-1].startswith("Domains are those of the nodes that passed the filters")
    assert ("constraints", "1, the pod's ScheduleAnyway constraints") in a.inputs
    assert (
        "kubernetes.io/hostname, maxSkew 1",
        "domain node-a: 2 matching pods (selector foo); 4 domains among the scored nodes",
    ) in a.inputs
    assert a.raw_steps == [
        f"kubernetes.io/hostname: count {X} log(domains + 2) + (maxSkew {M} 1) = 2 {X} "
        f"log(4 + 2) + (1 {M} 1) = 2 {X} 1.7918 + 0 = 3.5835",
        "raw = round(3.5835) = 4",
    ]
    assert a.normalize_steps[-1] == (
        f"normalized = 100 {X} (max + min {M} raw) / max = 100 {X} (5 + 0 {M} 4) / 5 = 20"
    )
    assert a.weighted_step == f"weighted = normalized {X} weight = 20 {X} 2 = 40"


@pytest.mark.django_db(transaction=True)
def test_topology_spread_counts_zones_over_every_node_and_hosts_over_the_candidates(
    settings: Any,
) -> None:
    settings.SCHEDVIZ_START_RUNNERS = False
    # Upstream's "two Constraints on zone and node, 2 out of 4 nodes are candidates": zone1
    # holds 2 + 1 matching pods, zone2 2 + 4; node-b and node-y did not pass the filters.
    nodes = {"node-a": "zone1", "node-b": "zone1", "node-x": "zone2", "node-y": "zone2"}
    cluster = _spread_cluster(
        nodes,
        {"node-a": 2, "node-b": 1, "node-x": 2, "node-y": 4},
        [(1, "zone"), (1, "kubernetes.io/hostname")],
    )
    trace = _spread_trace({"node-a": 7, "node-x": 11}, {"node-a": 100, "node-x": 63})
    x = score_computation(cluster=cluster, trace=trace, node="node-x", plugin="PodTopologySpread")
    assert (
        "zone, maxSkew 1",
        "domain zone2: 6 matching pods (selector foo); 2 domains among the scored nodes",
    ) in x.inputs
    assert (
        "kubernetes.io/hostname, maxSkew 1",
        "domain node-x: 2 matching pods (selector foo); 2 domains among the scored nodes",
    ) in x.inputs
    assert x.raw_steps[-1] == "raw = round(8.3178 + 2.7726) = round(11.0904) = 11"
    assert x.normalize_steps[-1].endswith(f"= 100 {X} (11 + 7 {M} 11) / 11 = 63")


@pytest.mark.django_db(transaction=True)
def test_topology_spread_says_the_cluster_changed_when_the_counts_do_not_reproduce(
    settings: Any,
) -> None:
    settings.SCHEDVIZ_START_RUNNERS = False
    nodes: dict[str, str | None] = {"node-a": None, "node-b": None}
    cluster = _spread_cluster(nodes, {"node-a": 2}, [(1, "kubernetes.io/hostname")])
    # The cycle saw 3 matching pods on node-a (log(4) * 3 = 4.16 -> 4); 2 are left.
    trace = _spread_trace({"node-a": 4, "node-b": 0}, {"node-a": 0, "node-b": 100})
    a = score_computation(cluster=cluster, trace=trace, node="node-a", plugin="PodTopologySpread")
    assert a.inputs == [] and a.raw_steps == []
    assert "would be 3, not the 4 the cycle gave" in a.notes[-1]


@pytest.mark.django_db(transaction=True)
def test_a_topology_spread_cell_of_a_real_cycle_opens_with_its_counts(settings: Any) -> None:
    from django.test import Client
    from django.urls import reverse

    settings.SCHEDVIZ_START_RUNNERS = False
    settings.SCHEDVIZ_RUNNER_IDLE_SECONDS = 0
    nodes: dict[str, str | None] = {n: None for n in ("node-a", "node-b", "node-c", "node-d")}
    cluster = _spread_cluster(
        nodes, {"node-a": 2, "node-b": 1, "node-d": 3}, [(1, "kubernetes.io/hostname")]
    )
    run_cluster(cluster.pk)
    cycle = Cycle.objects.get(cluster=cluster, pod_name="p")
    assert cycle.trace()["scores"]["node-d"]["PodTopologySpread"]["raw"] == 5
    url = reverse(
        "webui:score_cell", args=[cluster.pk, cycle.number, "node-d", "PodTopologySpread"]
    )
    fragment = Client().get(url, headers={"HX-Request": "true"}).content.decode()
    assert "domain node-d: 3 matching pods (selector foo); 4 domains among the scored nodes" in (
        fragment
    )
    assert f"3 {X} log(4 + 2) + (1 {M} 1) = 3 {X} 1.7918 + 0 = 5.3753" in fragment
    assert "raw = round(5.3753) = 5" in fragment
    assert "have changed since" not in fragment


# ---------------------------------------------------------------- InterPodAffinity's inputs


def _term(weight: int, key: str, security: str) -> str:
    return (
        f"{{weight: {weight}, podAffinityTerm: {{topologyKey: {key}, labelSelector: "
        f"{{matchExpressions: [{{key: security, operator: In, values: [{security}]}}]}}}}}}"
    )


# Upstream's "Affinity and Anti Affinity and symmetry" (interpodaffinity/scoring_test.go): the
# pod (S1) prefers S1 pods in its region (8) and avoids S2 pods in its az (5); an existing pod
# prefers S1 pods in its region, another avoids them in its az.
BOTH = (
    f"podAffinity: {{preferredDuringSchedulingIgnoredDuringExecution: "
    f"[{_term(8, 'region', 'S1')}]}}, "
    "podAntiAffinity: {preferredDuringSchedulingIgnoredDuringExecution: "
    f"[{_term(5, 'az', 'S2')}]}}"
)
AWAY_FROM_S1 = (
    f"podAntiAffinity: {{preferredDuringSchedulingIgnoredDuringExecution: "
    f"[{_term(5, 'az', 'S1')}]}}"
)
SYMMETRY = "\n---\n".join(
    [
        *(
            f"apiVersion: v1\nkind: Node\nmetadata: {{name: {name}, labels: {{{labels}}}}}\n"
            'status: {allocatable: {cpu: "4", memory: 8Gi, pods: "110"}}'
            for name, labels in (
                ("node1", "region: China"),
                ("node2", "az: az1"),
                ("node3", "region: India"),
                ("node4", "az: az2"),
            )
        ),
        *(
            f"apiVersion: v1\nkind: Pod\nmetadata: {{name: {name}, namespace: default, "
            f"labels: {{{labels}}}}}\nspec: {{nodeName: {node}, affinity: {{{affinity}}}, "
            "containers: [{name: c, image: pause}]}"
            for name, node, labels, affinity in (
                ("p1", "node1", "security: S1", ""),
                ("p2", "node2", "security: S2", ""),
                ("p3", "node3", "", BOTH),
                ("p4", "node4", "", AWAY_FROM_S1),
            )
        ),
        "apiVersion: v1\nkind: Pod\nmetadata: {name: p, namespace: default, labels: "
        f"{{security: S1}}}}\nspec: {{affinity: {{{BOTH}}}, "
        "containers: [{name: c, image: pause}]}",
    ]
)


def _affinity_trace(raws: dict[str, int], normalized: dict[str, int]) -> dict[str, Any]:
    return {
        "cycle": 1,
        "pod": "default/p",
        "profile": "default-scheduler",
        "scores": {
            node: {"InterPodAffinity": _cell(raw, normalized[node], 2)}
            for node, raw in raws.items()
        },
    }


@pytest.fixture
def symmetry_cluster(settings: Any) -> Any:
    from schedviz.cluster import services

    settings.SCHEDVIZ_START_RUNNERS = False
    settings.SCHEDVIZ_RUNNER_IDLE_SECONDS = 0
    cluster = services.cluster_create(name="symmetry")
    services.manifests_apply(cluster=cluster, text=SYMMETRY)
    return cluster


@pytest.mark.django_db(transaction=True)
def test_inter_pod_affinity_names_the_terms_of_the_pod_and_of_existing_pods(
    symmetry_cluster: Any,
) -> None:
    # Raw 8, -5, 8, -5; normalized 100, 0, 100, 0 as upstream's table says.
    trace = _affinity_trace(
        {"node1": 8, "node2": -5, "node3": 8, "node4": -5},
        {"node1": 100, "node2": 0, "node3": 100, "node4": 0},
    )

    def of(node: str) -> Any:
        return score_computation(
            cluster=symmetry_cluster, trace=trace, node=node, plugin="InterPodAffinity"
        )

    one = of("node1")
    assert ("the pod's preferred terms", "1 affinity, 1 anti-affinity") in one.inputs
    assert ("hardPodAffinityWeight", "1") in one.inputs
    assert one.raw_steps == [
        "the pod's preferred affinity term 1 (weight 8, region) in the node's domain "
        f"region=China: 1 match (default/p1) {X} 8 = 8",
        "raw = 8",
    ]
    two = of("node2")
    assert two.raw_steps[0] == (
        "the pod's preferred anti-affinity term 1 (weight -5, az) in the node's domain "
        f"az=az1: 1 match (default/p2) {X} -5 = -5"
    )
    three = of("node3")
    assert three.raw_steps[0] == (
        "existing pods' preferred affinity terms matching the pod (weight 8, region) in the "
        f"node's domain region=India: 1 match (default/p3) {X} 8 = 8"
    )
    four = of("node4")
    assert four.raw_steps[0].startswith(
        "existing pods' preferred anti-affinity terms matching the pod (weight -5, az)"
    )
    assert four.normalize_steps[-1] == (
        f"normalized = 100 {X} (raw {M} min) / (max {M} min) = 100 {X} (-5 {M} -5) / (8 {M} -5) = 0"
    )


@pytest.mark.django_db(transaction=True)
def test_inter_pod_affinity_says_the_cluster_changed_when_the_sum_does_not_reproduce(
    symmetry_cluster: Any,
) -> None:
    Pod.objects.filter(cluster=symmetry_cluster, name="p1").delete()
    trace = _affinity_trace({"node1": 8, "node2": -5}, {"node1": 100, "node2": 0})
    one = score_computation(
        cluster=symmetry_cluster, trace=trace, node="node1", plugin="InterPodAffinity"
    )
    assert one.inputs == [] and one.raw_steps == []
    assert "would be 0, not the 8 the cycle gave" in one.notes[-1]


@pytest.mark.django_db(transaction=True)
def test_an_inter_pod_affinity_cell_of_a_real_cycle_opens_with_its_terms(
    symmetry_cluster: Any,
) -> None:
    from django.test import Client
    from django.urls import reverse

    run_cluster(symmetry_cluster.pk)
    cycle = Cycle.objects.get(cluster=symmetry_cluster, pod_name="p")
    assert cycle.trace()["scores"]["node3"]["InterPodAffinity"]["raw"] == 8
    url = reverse(
        "webui:score_cell", args=[symmetry_cluster.pk, cycle.number, "node3", "InterPodAffinity"]
    )
    fragment = Client().get(url, headers={"HX-Request": "true"}).content.decode()
    assert "existing pods&#x27; preferred affinity terms matching the pod (weight 8, region)" in (
        fragment
    )
    assert f"region=India: 1 match (default/p3) {X} 8 = 8" in fragment
    assert "have changed since" not in fragment


@pytest.mark.django_db(transaction=True)
def test_inter_pod_affinity_counts_existing_pods_required_terms_at_the_hard_weight(
    settings: Any,
) -> None:
    # Upstream's "Affinity symmetry: considered RequiredDuringSchedulingIgnoredDuringExecution
    # in pod affinity symmetry": the pod (S1, no affinity) matches both required terms of the
    # pods on node1 (China) and node2 (India); node3 has no region. Normalized 100, 100, 0.
    from schedviz.cluster import services

    settings.SCHEDVIZ_START_RUNNERS = False
    required = (
        "podAffinity: {requiredDuringSchedulingIgnoredDuringExecution: ["
        "{topologyKey: region, labelSelector: {matchExpressions: "
        "[{key: security, operator: In, values: [S1, value2]}]}}, "
        "{topologyKey: region, labelSelector: {matchExpressions: "
        "[{key: security, operator: Exists}, {key: wrongkey, operator: DoesNotExist}]}}]}"
    )
    docs = [
        f"apiVersion: v1\nkind: Node\nmetadata: {{name: {name}, labels: {{{labels}}}}}\n"
        'status: {allocatable: {cpu: "4", memory: 8Gi, pods: "110"}}'
        for name, labels in (
            ("node1", "region: China"),
            ("node2", "region: India"),
            ("node3", "az: az1"),
        )
    ]
    docs += [
        f"apiVersion: v1\nkind: Pod\nmetadata: {{name: {name}, namespace: default, "
        f"labels: {{security: {security}}}}}\nspec: {{nodeName: {node}, affinity: "
        f"{{{required}}}, containers: [{{name: c, image: pause}}]}}"
        for name, node, security in (("p1", "node1", "S1"), ("p2", "node2", "S2"))
    ]
    docs.append(
        "apiVersion: v1\nkind: Pod\nmetadata: {name: p, namespace: default, labels: "
        "{security: S1}}\nspec: {containers: [{name: c, image: pause}]}"
    )
    cluster = services.cluster_create(name="required")
    services.manifests_apply(cluster=cluster, text="\n---\n".join(docs))
    trace = _affinity_trace(
        {"node1": 2, "node2": 2, "node3": 0}, {"node1": 100, "node2": 100, "node3": 0}
    )
    two = score_computation(cluster=cluster, trace=trace, node="node2", plugin="InterPodAffinity")
    assert ("the pod's preferred terms", "0 affinity, 0 anti-affinity") in two.inputs
    assert two.raw_steps == [
        "existing pods' required affinity terms matching the pod (at hardPodAffinityWeight) "
        f"(weight 1, region) in the node's domain region=India: 2 matches (default/p2) {X} 1 = 2",
        "raw = 2",
    ]
    three = score_computation(cluster=cluster, trace=trace, node="node3", plugin="InterPodAffinity")
    assert three.raw_steps == ["raw = 0: no term matched a pod in the node's domains"]
