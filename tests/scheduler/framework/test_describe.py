"""The cycle state in words: one readable sentence per plugin's state, as a table."""

from __future__ import annotations

from dataclasses import dataclass

import pytest

from schedviz.kube.load import load_manifests
from schedviz.scheduler.debugger import END, Stop
from schedviz.scheduler.framework.cycle_state import CycleState, StateData
from schedviz.scheduler.framework.describe import StateEntry, describe_state, split_key
from schedviz.scheduler.framework.plugins import volumerestrictions, volumezone
from schedviz.scheduler.testing.wrappers import make_pod
from schedviz.simulation.simulator import new_simulation

NODES = """
apiVersion: v1
kind: Node
metadata:
  name: node-a
  labels: {kubernetes.io/hostname: node-a, topology.kubernetes.io/zone: zone-a, disk: ssd}
status: {allocatable: {cpu: "4", memory: 8Gi, pods: "110"}}
---
apiVersion: v1
kind: Node
metadata:
  name: node-b
  labels: {kubernetes.io/hostname: node-b, topology.kubernetes.io/zone: zone-b, disk: ssd}
status: {allocatable: {cpu: "4", memory: 8Gi, pods: "110"}}
---
apiVersion: v1
kind: Node
metadata:
  name: node-c
  labels: {kubernetes.io/hostname: node-c, topology.kubernetes.io/zone: zone-b, disk: ssd}
status: {allocatable: {cpu: "4", memory: 8Gi, pods: "110"}}
---
apiVersion: v1
kind: Pod
metadata: {name: running, namespace: default, labels: {app: web}}
spec: {nodeName: node-a, containers: [{name: c, image: busybox}]}
"""


def entries_at_end(pod_spec: str) -> dict[str, StateEntry]:
    """The cycle state of the pod's cycle, described once every point has written to it."""
    simulation = new_simulation(load_manifests(NODES + "\n---\n" + pod_spec), seed=1)
    described: list[StateEntry] = []

    class AtEnd:
        def stop(self, stop: Stop) -> None:
            if stop.point == END:
                described.extend(describe_state(stop.state, stop.pod, stop.framework.plugins_map))

    simulation.scheduler.debugger = AtEnd()
    simulation.scheduler.schedule_one()
    return {entry.key: entry for entry in described}


POD = """
apiVersion: v1
kind: Pod
metadata: {name: incoming, namespace: default, labels: {app: web}}
spec:
%s
  containers:
  - name: c
    image: busybox
    resources: {requests: {cpu: 500m, memory: 1Gi}}
    ports: [{containerPort: 80, hostPort: 8080}]
"""

SPREAD = """  topologySpreadConstraints:
  - {maxSkew: 1, topologyKey: topology.kubernetes.io/zone, whenUnsatisfiable: DoNotSchedule,
     labelSelector: {matchLabels: {app: web}}}
  - {maxSkew: 2, topologyKey: kubernetes.io/hostname, whenUnsatisfiable: ScheduleAnyway,
     labelSelector: {matchLabels: {app: web}}}"""
AFFINITY = """  nodeSelector: {disk: ssd}
  affinity:
    nodeAffinity:
      requiredDuringSchedulingIgnoredDuringExecution:
        nodeSelectorTerms: [{matchExpressions: [{key: topology.kubernetes.io/zone, operator: In,
                             values: [zone-a, zone-b]}]}]
      preferredDuringSchedulingIgnoredDuringExecution:
      - {weight: 5, preference: {matchExpressions: [{key: disk, operator: Exists}]}}
    podAntiAffinity:
      requiredDuringSchedulingIgnoredDuringExecution:
      - {topologyKey: kubernetes.io/hostname, labelSelector: {matchLabels: {app: web}}}
    podAffinity:
      preferredDuringSchedulingIgnoredDuringExecution:
      - weight: 10
        podAffinityTerm:
          topologyKey: topology.kubernetes.io/zone
          labelSelector: {matchLabels: {app: web}}"""
TOLERATION = """  tolerations:
  - {key: dedicated, operator: Equal, value: db, effect: PreferNoSchedule}"""


@dataclass(frozen=True)
class Case:
    name: str
    spec: str
    key: str
    text: str


CASES = [
    Case(
        "resources",
        "",
        "PreFilterNodeResourcesFit",
        "PreFilter NodeResourcesFit computed requests cpu=500m memory=1Gi",
    ),
    Case(
        "scoring requests",
        "",
        "PreScoreNodeResourcesFit",
        "PreScore NodeResourcesFit computed the requests it scores with: cpu=500m memory=1Gi "
        "(a container that requests no cpu or memory counts as cpu=100m memory=200Mi)",
    ),
    Case(
        "balanced allocation",
        "",
        "PreScoreNodeResourcesBalancedAllocation",
        "PreScore NodeResourcesBalancedAllocation computed the requests it scores with: "
        "cpu=500m memory=1Gi (as requested)",
    ),
    Case("ports", "", "PreFilterNodePorts", "PreFilter NodePorts: host ports wanted 8080/TCP"),
    Case(
        "node affinity",
        AFFINITY,
        "PreFilterNodeAffinity",
        "PreFilter NodeAffinity: required node selector disk=ssd; required node affinity "
        "[topology.kubernetes.io/zone In (zone-a, zone-b)]",
    ),
    Case(
        "preferred node affinity",
        AFFINITY,
        "PreScoreNodeAffinity",
        "PreScore NodeAffinity: 1 preferred term: weight 5 for [disk Exists]",
    ),
    Case(
        "tolerations",
        TOLERATION,
        "PreScoreTaintToleration",
        "PreScore TaintToleration: 1 toleration with effect PreferNoSchedule (dedicated Equal db)",
    ),
    Case(
        "spread filter",
        SPREAD,
        "PreFilterPodTopologySpread",
        "PreFilter PodTopologySpread: constraint 1: maxSkew 1 over topology.kubernetes.io/zone "
        "(DoNotSchedule) for pods matching app=web; matching pods per domain: zone-a: 1, "
        "zone-b: 0 (minimum 0)",
    ),
    Case(
        "spread score",
        SPREAD,
        "PreScorePodTopologySpread",
        "PreScore PodTopologySpread: constraint 1: maxSkew 2 over kubernetes.io/hostname "
        "(ScheduleAnyway) for pods matching app=web; matching pods counted per node at Score",
    ),
    Case(
        "inter-pod affinity counts",
        AFFINITY,
        "PreFilterInterPodAffinity",
        "PreFilter InterPodAffinity: existing pods whose anti-affinity rejects this pod, per "
        "domain: no domain; pods matching all its affinity terms: no domain; pods matching its "
        "anti-affinity terms: kubernetes.io/hostname=node-a: 1",
    ),
    Case(
        "inter-pod affinity scores",
        AFFINITY,
        "PreScoreInterPodAffinity",
        "PreScore InterPodAffinity: score per domain from preferred (anti-)affinity terms: "
        "topology.kubernetes.io/zone=zone-a: 10",
    ),
    Case(
        "volume binding",
        "",
        "VolumeBinding",
        "PreFilter VolumeBinding: the pod has no PersistentVolumeClaim",
    ),
    Case(
        "dynamic resources",
        "",
        "DynamicResources",
        "PreFilter DynamicResources: the pod uses no ResourceClaim",
    ),
]


@pytest.mark.parametrize("case", CASES, ids=[case.name for case in CASES])
def test_it_describes_each_plugins_state_in_words(case: Case) -> None:
    entries = entries_at_end(POD % case.spec)
    assert entries[case.key].text == case.text


def test_every_state_a_default_cycle_writes_has_words_of_its_own() -> None:
    entries = entries_at_end(POD % (SPREAD + "\n" + AFFINITY + "\n" + TOLERATION))
    assert entries
    for entry in entries.values():
        assert "(" not in entry.text.split(":")[0], entry.text
        assert "State(" not in entry.text and "_StateData" not in entry.text, entry.text


class _Unknown:
    def __init__(self) -> None:
        self.count = 3

    def clone(self) -> _Unknown:
        return self


def test_a_state_without_a_describer_is_shown_as_it_is() -> None:
    state = CycleState()
    state.write("PreFilterMyPlugin", _Unknown())
    (entry,) = describe_state(state, make_pod().name("p").obj())
    assert (entry.point, entry.plugin) == ("PreFilter", "MyPlugin")
    assert entry.text == "PreFilter MyPlugin: Unknown(count=3)"


@pytest.mark.parametrize(
    ("key", "value", "text"),
    [
        (
            "PreFilterVolumeRestrictions",
            volumerestrictions._PreFilterState(frozenset({"data"}), 1),
            "PreFilter VolumeRestrictions: ReadWriteOncePod claims data, used by 1 scheduled pod",
        ),
        (
            "PreFilterVolumeZone",
            volumezone._StateData(
                (volumezone.PVTopology("pv-1", "topology.kubernetes.io/zone", frozenset({"a"})),)
            ),
            "PreFilter VolumeZone: volume pv-1 needs topology.kubernetes.io/zone in (a)",
        ),
    ],
)
def test_it_describes_volume_states_the_default_cluster_never_reaches(
    key: str, value: StateData, text: str
) -> None:
    state = CycleState()
    state.write(key, value)
    (entry,) = describe_state(state, make_pod().name("p").obj())
    assert entry.text == text


@pytest.mark.parametrize(
    ("key", "split"),
    [
        ("PreFilterNodePorts", ("PreFilter", "NodePorts")),
        ("PreScoreTaintToleration", ("PreScore", "TaintToleration")),
        ("VolumeBinding", ("", "VolumeBinding")),
        ("PreFilter", ("", "PreFilter")),
    ],
)
def test_it_reads_the_point_and_plugin_from_the_key(key: str, split: tuple[str, str]) -> None:
    assert split_key(key) == split
