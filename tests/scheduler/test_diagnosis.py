"""Why is this pod Pending: diagnoses of real engine traces, one scenario per rejecting plugin."""

from __future__ import annotations

from typing import Any

import yaml

from schedviz.kube.load import load_manifests
from schedviz.kube.objects import KubeObject
from schedviz.scheduler.diagnosis import (
    VERDICT_CUT,
    VERDICT_NEW,
    VERDICT_REJECTED,
    PendingDiagnosis,
    aggregate,
    diagnose,
    format_amount,
    registered_events,
)
from schedviz.simulation.simulator import Simulation, new_simulation

KINDS = ("Node", "Pod", "Namespace", "PersistentVolume", "PersistentVolumeClaim", "StorageClass")


def node(name: str, cpu: str = "2", **extra: Any) -> dict[str, Any]:
    resources = {"cpu": cpu, "memory": "4Gi", "pods": "110"}
    labels = {"kubernetes.io/hostname": name, **extra.pop("labels", {})}
    return {
        "apiVersion": "v1",
        "kind": "Node",
        "metadata": {"name": name, "labels": labels},
        "spec": extra.pop("spec", {}),
        "status": {"capacity": resources, "allocatable": resources},
    }


def pod(name: str, cpu: str = "100m", *, on: str = "", **spec: Any) -> dict[str, Any]:
    labels = spec.pop("labels", {})
    ports = spec.pop("ports", [])
    container: dict[str, Any] = {
        "name": "c",
        "image": "pause",
        "resources": {"requests": {"cpu": cpu}},
    }
    if ports:
        container["ports"] = ports
    body: dict[str, Any] = {"containers": [container], **spec}
    if on:
        body["nodeName"] = on
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": name, "namespace": "default", "labels": labels},
        "spec": body,
    }


def simulate(*documents: dict[str, Any]) -> Simulation:
    simulation = new_simulation(load_manifests(yaml.safe_dump_all(documents)), seed=1)
    simulation.run()
    return simulation


def objects(simulation: Simulation) -> list[KubeObject]:
    return [obj for kind in KINDS for obj in simulation.store.list_objects(kind)]


def last_trace(simulation: Simulation, key: str = "default/p") -> dict[str, Any]:
    return [t for t in simulation.traces if t.pod == key][-1].to_json()


def diagnosis_of(
    simulation: Simulation, key: str = "default/p", extra: tuple[KubeObject, ...] = ()
) -> PendingDiagnosis:
    framework = simulation.scheduler.profiles["default-scheduler"]
    return diagnose(
        last_trace(simulation, key),
        objects=[*objects(simulation), *extra],
        plugin_events=registered_events(framework),
    )


def advice(diagnosis: PendingDiagnosis, plugin: str) -> list[str]:
    (found,) = [a for a in diagnosis.advice if a.plugin == plugin]
    return found.suggestions


def test_aggregation_rebuilds_the_engine_message_and_groups_reasons_by_plugin() -> None:
    taint = {"key": "dedicated", "value": "gpu", "effect": "NoSchedule"}
    simulation = simulate(
        node("n1", "1"), node("n2", "1"), node("n3", "4", spec={"taints": [taint]}), pod("p", "2")
    )
    diagnosis = diagnosis_of(simulation)
    assert diagnosis.aggregate.matches_message
    assert diagnosis.aggregate.fit_error == (
        "0/3 nodes are available: 1 node(s) had untolerated taint {dedicated: gpu}, "
        "2 Insufficient cpu."
    )
    assert diagnosis.message.startswith(diagnosis.aggregate.fit_error + " ")
    assert diagnosis.aggregate.post_filter_message.endswith(
        "Preemption is not helpful for scheduling."
    )
    assert [(r.text, r.plugins, r.nodes) for r in diagnosis.aggregate.reasons] == [
        ("1 node(s) had untolerated taint {dedicated: gpu}", ("TaintToleration",), ("n3",)),
        ("2 Insufficient cpu", ("NodeResourcesFit",), ("n1", "n2")),
    ]


def test_per_node_drill_down_lists_each_filter_plugin_until_the_rejection() -> None:
    simulation = simulate(node("n1", "1"), pod("p", "2"))
    (n1,) = diagnosis_of(simulation).nodes
    assert (n1.verdict, n1.rejected_by, n1.reasons) == (
        VERDICT_REJECTED,
        "NodeResourcesFit",
        ("Insufficient cpu",),
    )
    assert [(v.plugin, v.code) for v in n1.plugins] == [
        ("NodeUnschedulable", "Success"),
        ("NodeName", "Success"),
        ("TaintToleration", "Success"),
        ("NodeResourcesFit", "UnschedulableAndUnresolvable"),
    ]


def test_node_resources_fit_names_the_closest_node_and_its_shortfall() -> None:
    simulation = simulate(
        node("n1", "1"),
        node("n2", "2"),
        pod("a", "500m", on="n1"),
        pod("b", "1800m", on="n2"),
        pod("p", "1"),
    )
    diagnosis = diagnosis_of(simulation)
    assert diagnosis.aggregate.fit_error == "0/2 nodes are available: 2 Insufficient cpu."
    assert advice(diagnosis, "NodeResourcesFit") == [
        "n1 needs 500m more cpu: free it (its pods request 500m of 1) or add a node with at "
        "least 1 cpu allocatable"
    ]
    (fit,) = [a for a in diagnosis.advice if a.plugin == "NodeResourcesFit"]
    assert [(e.resource, e.actions) for e in fit.events if e.resource == "Node"] == [
        ("Node", ("UpdateNodeTaint",)),
        ("Node", ("Add", "UpdateNodeAllocatable")),
    ]
    assert ("Pod", ("Delete", "UpdatePodScaleDown")) in [
        (e.resource, e.actions) for e in fit.events
    ]


def test_node_resources_fit_says_when_the_request_exceeds_every_node() -> None:
    simulation = simulate(node("n1", "1"), node("n2", "2"), pod("p", "3"))
    assert advice(diagnosis_of(simulation), "NodeResourcesFit") == [
        "the request of 3 cpu exceeds every node's allocatable (the largest is n2 with 2 cpu): "
        "no deletion or preemption can make room; add a node with at least 3 cpu allocatable "
        "or lower the request"
    ]


def test_a_node_added_since_the_attempt_is_shown_and_its_room_noticed() -> None:
    simulation = simulate(node("n1", "1"), pod("p", "3"))
    (big,) = load_manifests(yaml.safe_dump(node("n9", "4"))).objects
    diagnosis = diagnosis_of(simulation, extra=(big,))
    assert [(n.node, n.verdict) for n in diagnosis.nodes][-1] == ("n9", VERDICT_NEW)
    assert advice(diagnosis, "NodeResourcesFit")[-1] == (
        "now n9 has room for the pod's requests (the cluster changed since this attempt)"
    )


def test_taint_toleration_names_the_taint_its_nodes_and_the_toleration() -> None:
    taint = {"key": "dedicated", "value": "gpu", "effect": "NoSchedule"}
    simulation = simulate(
        node("n1", spec={"taints": [taint]}), node("n2", spec={"taints": [taint]}), pod("p")
    )
    diagnosis = diagnosis_of(simulation)
    assert diagnosis.aggregate.fit_error == (
        "0/2 nodes are available: 2 node(s) had untolerated taint {dedicated: gpu}."
    )
    assert advice(diagnosis, "TaintToleration") == [
        "untolerated taint {dedicated: gpu} (NoSchedule) on n1, n2: add the toleration "
        "{key: dedicated, operator: Equal, value: gpu, effect: NoSchedule} to the pod, or remove "
        "the taint (kubectl taint nodes n1 dedicated=gpu:NoSchedule-)"
    ]
    (taints,) = [a for a in diagnosis.advice if a.plugin == "TaintToleration"]
    assert ("Node", ("Add", "UpdateNodeTaint")) in [(e.resource, e.actions) for e in taints.events]


def test_node_selector_lists_the_labels_each_node_lacks() -> None:
    simulation = simulate(
        node("n1", labels={"disktype": "hdd"}),
        node("n2"),
        pod("p", nodeSelector={"disktype": "ssd"}),
    )
    diagnosis = diagnosis_of(simulation)
    assert diagnosis.aggregate.fit_error == (
        "0/2 nodes are available: 2 node(s) didn't match Pod's node affinity/selector."
    )
    assert advice(diagnosis, "NodeAffinity") == [
        "nodeSelector: a node needs the labels disktype=ssd (n1 has disktype=hdd; n2 has no "
        "disktype); e.g. kubectl label nodes n1 disktype=ssd --overwrite"
    ]


def test_required_node_affinity_names_the_closest_node_and_its_failing_requirements() -> None:
    affinity = {
        "nodeAffinity": {
            "requiredDuringSchedulingIgnoredDuringExecution": {
                "nodeSelectorTerms": [
                    {
                        "matchExpressions": [
                            {"key": "zone", "operator": "In", "values": ["c"]},
                            {"key": "gpu", "operator": "Exists"},
                        ]
                    }
                ]
            }
        }
    }
    simulation = simulate(
        node("n1", labels={"zone": "a", "gpu": "yes"}),
        node("n2", labels={"zone": "b"}),
        pod("p", affinity=affinity),
    )
    assert advice(diagnosis_of(simulation), "NodeAffinity") == [
        "required node affinity: a node needs labels matching one of the terms: term 1: "
        "zone In (c) and gpu Exists (closest: n1, failing zone In (c))"
    ]


def test_node_unschedulable_says_which_nodes_to_uncordon() -> None:
    simulation = simulate(node("n1", spec={"unschedulable": True}), pod("p"))
    diagnosis = diagnosis_of(simulation)
    assert diagnosis.aggregate.fit_error == "0/1 nodes are available: 1 node(s) were unschedulable."
    assert advice(diagnosis, "NodeUnschedulable") == [
        "uncordon n1 (kubectl uncordon n1), or tolerate node.kubernetes.io/unschedulable:NoSchedule"
    ]


def test_node_ports_names_the_conflicting_port_and_the_pod_holding_it() -> None:
    port = [{"containerPort": 80, "hostPort": 8080}]
    simulation = simulate(node("n1"), pod("web", on="n1", ports=port), pod("p", ports=port))
    diagnosis = diagnosis_of(simulation)
    assert diagnosis.aggregate.fit_error == (
        "0/1 nodes are available: 1 node(s) didn't have free ports for the requested pod ports."
    )
    assert advice(diagnosis, "NodePorts")[0] == "hostPort 8080/TCP is taken on n1 by default/web"


def test_pod_topology_spread_shows_the_domain_counts_and_where_the_pod_could_go() -> None:
    spread = [
        {
            "maxSkew": 1,
            "topologyKey": "zone",
            "whenUnsatisfiable": "DoNotSchedule",
            "labelSelector": {"matchLabels": {"app": "web"}},
        }
    ]
    web = {"app": "web"}
    simulation = simulate(
        node("a1", labels={"zone": "a"}),
        node("b1", "100m", labels={"zone": "b"}),
        pod("w1", "10m", on="a1", labels=web),
        pod("w2", "10m", on="a1", labels=web),
        pod("p", "500m", labels=web, topologySpreadConstraints=spread),
    )
    diagnosis = diagnosis_of(simulation)
    assert diagnosis.aggregate.fit_error == (
        "0/2 nodes are available: 1 Insufficient cpu, "
        "1 node(s) didn't match pod topology spread constraints."
    )
    assert advice(diagnosis, "PodTopologySpread") == [
        "topologyKey zone, maxSkew 1: matching pods per domain a=2, b=0; global minimum 0; "
        "placing the pod in a would exceed maxSkew: it needs a node in b, or fewer matching pods "
        "in the others"
    ]


def test_inter_pod_anti_affinity_names_the_blocking_pod_and_domain() -> None:
    anti = {
        "podAntiAffinity": {
            "requiredDuringSchedulingIgnoredDuringExecution": [
                {
                    "labelSelector": {"matchLabels": {"app": "db"}},
                    "topologyKey": "kubernetes.io/hostname",
                }
            ]
        }
    }
    simulation = simulate(
        node("n1"), pod("db", on="n1", labels={"app": "db"}), pod("p", affinity=anti)
    )
    diagnosis = diagnosis_of(simulation)
    assert diagnosis.aggregate.fit_error == (
        "0/1 nodes are available: 1 node(s) didn't match pod anti-affinity rules."
    )
    assert advice(diagnosis, "InterPodAffinity") == [
        "anti-affinity (topologyKey kubernetes.io/hostname) is blocked by default/db in "
        "kubernetes.io/hostname=n1"
    ]


def test_a_prefilter_rejection_is_the_whole_message_and_names_the_missing_claim() -> None:
    volume = [{"name": "data", "persistentVolumeClaim": {"claimName": "data"}}]
    simulation = simulate(node("n1"), node("n2"), pod("p", volumes=volume))
    diagnosis = diagnosis_of(simulation)
    assert diagnosis.aggregate.pre_filter_message == 'persistentvolumeclaim "data" not found'
    assert diagnosis.aggregate.fit_error == (
        '0/2 nodes are available: persistentvolumeclaim "data" not found.'
    )
    assert diagnosis.aggregate.matches_message
    assert {n.verdict for n in diagnosis.nodes} == {VERDICT_CUT}
    # VolumeRestrictions runs first at PreFilter and finds the claim missing.
    assert advice(diagnosis, "VolumeRestrictions") == [
        "claim default/data does not exist: create it"
    ]


def test_nodes_cut_by_prefilter_count_with_the_shared_status() -> None:
    affinity = {
        "nodeAffinity": {
            "requiredDuringSchedulingIgnoredDuringExecution": {
                "nodeSelectorTerms": [
                    {"matchFields": [{"key": "metadata.name", "operator": "In", "values": ["n1"]}]}
                ]
            }
        }
    }
    simulation = simulate(node("n1", "1"), node("n2"), pod("p", "2", affinity=affinity))
    trace = last_trace(simulation)
    rebuilt = aggregate(trace)
    assert rebuilt.matches_message
    assert rebuilt.fit_error == (
        "0/2 nodes are available: 1 Insufficient cpu, "
        "1 node(s) didn't satisfy plugin(s) [NodeAffinity]."
    )
    diagnosis = diagnosis_of(simulation)
    verdicts = {n.node: n.verdict for n in diagnosis.nodes}
    assert verdicts == {"n1": VERDICT_REJECTED, "n2": VERDICT_CUT}
    assert {a.plugin: a.nodes for a in diagnosis.advice} == {
        "NodeResourcesFit": ("n1",),
        "NodeAffinity": ("n2",),
    }


def test_preemption_outcome_is_reported_when_postfilter_ran() -> None:
    priority = {
        "apiVersion": "scheduling.k8s.io/v1",
        "kind": "PriorityClass",
        "metadata": {"name": "high"},
        "value": 1000,
    }
    simulation = simulate(
        priority,
        node("n1", "1"),
        pod("low", "800m", on="n1"),
        pod("p", "500m", priorityClassName="high"),
    )
    first = next(t for t in simulation.traces if t.pod == "default/p").to_json()
    diagnosis = diagnose(
        first,
        objects=objects(simulation),
        plugin_events=registered_events(simulation.scheduler.profiles["default-scheduler"]),
    )
    assert diagnosis.preemption is not None
    assert diagnosis.preemption["nominatedNode"] == "n1"
    assert diagnosis.preemption["victims"] == ["default/low"]


def test_format_amount_writes_cpu_and_bytes_as_people_do() -> None:
    assert format_amount("cpu", 1500) == "1500m"
    assert format_amount("cpu", 2000) == "2"
    assert format_amount("memory", 3 * 2**30) == "3Gi"
    assert format_amount("memory", 1000) == "1000"


def test_diagnosis_json_uses_camel_case_keys() -> None:
    simulation = simulate(node("n1", "1"), pod("p", "2"))
    data = diagnosis_of(simulation).to_json()
    assert data["aggregate"]["fitError"] == "0/1 nodes are available: 1 Insufficient cpu."
    assert data["aggregate"]["reasons"][0]["text"] == "1 Insufficient cpu"
    assert data["nodes"][0]["rejectedBy"] == "NodeResourcesFit"


def _required_pod_term(labels: dict[str, str]) -> list[dict[str, Any]]:
    return [{"labelSelector": {"matchLabels": labels}, "topologyKey": "kubernetes.io/hostname"}]


def test_inter_pod_affinity_with_no_matching_pod_says_the_pod_waits_for_one() -> None:
    affinity = {
        "podAffinity": {
            "requiredDuringSchedulingIgnoredDuringExecution": _required_pod_term({"app": "cache"})
        }
    }
    simulation = simulate(node("n1"), pod("p", affinity=affinity))
    diagnosis = diagnosis_of(simulation)
    assert diagnosis.aggregate.fit_error == (
        "0/1 nodes are available: 1 node(s) didn't match pod affinity rules."
    )
    assert advice(diagnosis, "InterPodAffinity") == [
        "affinity (topologyKey kubernetes.io/hostname): no running pod matches the term; the pod "
        "does not match it itself, so it waits for one"
    ]


def test_an_existing_pods_anti_affinity_is_named_as_what_excludes_the_node() -> None:
    anti = {
        "podAntiAffinity": {
            "requiredDuringSchedulingIgnoredDuringExecution": _required_pod_term({"app": "web"})
        }
    }
    simulation = simulate(
        node("n1"), pod("loner", on="n1", affinity=anti), pod("p", labels={"app": "web"})
    )
    diagnosis = diagnosis_of(simulation)
    assert diagnosis.aggregate.fit_error == (
        "0/1 nodes are available: 1 node(s) didn't satisfy existing pods anti-affinity rules."
    )
    assert advice(diagnosis, "InterPodAffinity") == [
        "default/loner's anti-affinity (topologyKey kubernetes.io/hostname) excludes the pod "
        "from kubernetes.io/hostname=n1"
    ]


def test_volume_zone_says_where_the_bound_volume_is_and_which_nodes_are_there() -> None:
    zone = "topology.kubernetes.io/zone"
    volume = {
        "apiVersion": "v1",
        "kind": "PersistentVolume",
        "metadata": {"name": "pv-a", "labels": {zone: "a"}},
        "spec": {
            "capacity": {"storage": "1Gi"},
            "accessModes": ["ReadWriteOnce"],
            "claimRef": {"namespace": "default", "name": "data"},
            "hostPath": {"path": "/data"},
        },
        "status": {"phase": "Bound"},
    }
    claim = {
        "apiVersion": "v1",
        "kind": "PersistentVolumeClaim",
        "metadata": {"name": "data", "namespace": "default"},
        "spec": {
            "accessModes": ["ReadWriteOnce"],
            "resources": {"requests": {"storage": "1Gi"}},
            "volumeName": "pv-a",
            "storageClassName": "",
        },
        "status": {"phase": "Bound"},
    }
    mount = [{"name": "data", "persistentVolumeClaim": {"claimName": "data"}}]
    simulation = simulate(volume, claim, node("b1", labels={zone: "b"}), pod("p", volumes=mount))
    diagnosis = diagnosis_of(simulation)
    assert diagnosis.aggregate.fit_error == (
        "0/1 nodes are available: 1 node(s) had no available volume zone."
    )
    assert advice(diagnosis, "VolumeZone") == [
        "claim default/data is bound to PersistentVolume pv-a: topology.kubernetes.io/zone in "
        "(a), where no node is; the pod can only run where the volume is (add a node there, or "
        "give the pod a claim on a volume where the nodes are)"
    ]
