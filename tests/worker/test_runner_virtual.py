"""The runner in virtual time: pods bound in the database, cycles and events recorded."""

from __future__ import annotations

from typing import Any

import pytest

from schedviz.cluster import services
from schedviz.cluster.models import Change, Cluster, Cycle, Event, Lease, Pod
from schedviz.kube.load import load_manifests
from schedviz.simulation.simulator import new_simulation
from worker.publish import Publisher
from worker.runner import STOP_IDLE, run_cluster

pytestmark = pytest.mark.django_db(transaction=True)

NODES = """
apiVersion: v1
kind: Node
metadata: {name: node-%(i)d, labels: {kubernetes.io/hostname: node-%(i)d}}
status:
  allocatable: {cpu: "2", memory: 4Gi, pods: "110"}
  capacity: {cpu: "2", memory: 4Gi, pods: "110"}
"""

POD = """
apiVersion: v1
kind: Pod
metadata: {name: %(name)s, namespace: default}
spec:
  containers:
  - name: c
    image: busybox
    resources: {requests: {cpu: "%(cpu)s"}}
"""


def docs(*texts: str) -> str:
    return "\n---\n".join(texts)


def nodes(count: int) -> str:
    return docs(*(NODES % {"i": i} for i in range(count)))


def pods(count: int, cpu: str = "500m", prefix: str = "pod") -> str:
    return docs(*(POD % {"name": f"{prefix}-{i}", "cpu": cpu} for i in range(count)))


@pytest.fixture(autouse=True)
def _quiet(settings: pytest.FixtureRequest) -> None:
    settings.SCHEDVIZ_START_RUNNERS = False  # type: ignore[attr-defined]
    settings.SCHEDVIZ_RUNNER_IDLE_SECONDS = 0  # type: ignore[attr-defined]


def virtual_cluster(text: str, name: str = "c") -> Cluster:
    cluster = services.cluster_create(name=name, clock_mode=Cluster.ClockMode.VIRTUAL, seed=7)
    services.manifests_apply(cluster=cluster, text=text)
    return cluster


def test_it_binds_every_pod_that_fits_and_records_each_cycle() -> None:
    cluster = virtual_cluster(docs(nodes(2), pods(6)))
    result = run_cluster(cluster.pk)
    assert result.acquired and result.stopped == STOP_IDLE
    assert result.cycles == 6
    bound = dict(Pod.objects.filter(cluster=cluster).values_list("name", "node_name"))
    assert all(bound.values()), bound
    assert sorted(Cycle.objects.filter(cluster=cluster).values_list("number", flat=True)) == list(
        range(1, 7)
    )
    assert Event.objects.filter(cluster=cluster, reason="Scheduled").count() == 6
    assert Lease.objects.get(cluster=cluster).holder == ""


def test_cycle_bodies_are_the_documented_trace_format() -> None:
    cluster = virtual_cluster(docs(nodes(1), pods(1)))
    run_cluster(cluster.pk)
    cycle = Cycle.objects.get(cluster=cluster)
    trace = cycle.trace()
    assert trace["cycle"] == cycle.number == 1
    assert trace["pod"] == "default/pod-0"
    assert trace["result"] == "Scheduled" == cycle.result
    assert trace["node"] == "node-0" == cycle.node
    assert trace["message"] == "Successfully assigned default/pod-0 to node-0"
    assert {"filter", "scores", "points", "queue", "events", "selected"} <= trace.keys()


def test_each_bind_is_one_modified_change_of_the_pod() -> None:
    cluster = virtual_cluster(docs(nodes(2), pods(3)))
    before = Change.objects.filter(cluster=cluster).order_by("-id")[0].id
    run_cluster(cluster.pk)
    binds = Change.objects.filter(cluster=cluster, id__gt=before)
    assert sorted(c.name for c in binds) == ["pod-0", "pod-1", "pod-2"]
    assert all(c.type == Change.Type.MODIFIED and c.kind == "Pod" for c in binds)
    assert all(c.manifest["spec"]["nodeName"] for c in binds)


def test_a_pod_that_fits_nowhere_stays_pending_with_upstreams_message() -> None:
    cluster = virtual_cluster(docs(nodes(1), pods(1, cpu="3")))
    run_cluster(cluster.pk)
    pod = Pod.objects.get(cluster=cluster)
    assert pod.node_name == ""
    cycle = Cycle.objects.get(cluster=cluster)
    assert cycle.result == "Unschedulable"
    assert cycle.message.startswith("0/1 nodes are available: 1 Insufficient cpu.")
    assert Event.objects.get(cluster=cluster).reason == "FailedScheduling"


def test_a_second_run_continues_the_cycle_numbers_and_schedules_only_new_pods() -> None:
    cluster = virtual_cluster(docs(nodes(2), pods(2)))
    run_cluster(cluster.pk)
    services.manifests_apply(cluster=cluster, text=pods(2, prefix="more"))
    result = run_cluster(cluster.pk)
    assert result.cycles == 2
    numbers = list(Cycle.objects.filter(cluster=cluster).values_list("number", "pod_name"))
    assert [n for n, _ in numbers] == [1, 2, 3, 4]
    assert {p for n, p in numbers if n > 2} == {"more-0", "more-1"}


PRIORITY = """
apiVersion: scheduling.k8s.io/v1
kind: PriorityClass
metadata: {name: high}
value: 1000
"""
HIGH_POD = """
apiVersion: v1
kind: Pod
metadata: {name: important, namespace: default}
spec:
  priorityClassName: high
  containers:
  - name: c
    image: busybox
    resources: {requests: {cpu: "1"}}
"""


@pytest.mark.parametrize(
    "text",
    [
        pytest.param(
            docs(nodes(4), pods(10, cpu="300m"), pods(1, cpu="5", prefix="big")), id="ties"
        ),
        pytest.param(docs(PRIORITY, nodes(2), pods(4, cpu="1")), id="fill"),
    ],
)
def test_it_places_pods_as_the_simulator_does(text: str) -> None:
    simulation = new_simulation(load_manifests(text), seed=7)
    simulation.run()
    cluster = virtual_cluster(text)
    run_cluster(cluster.pk)
    assert bound_pods(cluster) == {key: node for key, node in simulation.placements().items()}
    db_results = list(
        Cycle.objects.filter(cluster=cluster).values_list("pod_name", "result", "node")
    )
    sim_results = [(t.pod.split("/")[1], t.result, t.selected_node) for t in simulation.traces]
    assert db_results == sim_results


def test_preemption_deletes_the_victim_in_the_database_and_binds_the_preemptor() -> None:
    cluster = virtual_cluster(docs(PRIORITY, nodes(1), pods(4, cpu="500m")))
    run_cluster(cluster.pk)
    services.manifests_apply(cluster=cluster, text=HIGH_POD)
    run_cluster(cluster.pk)
    placements = bound_pods(cluster)
    assert placements["default/important"] == "node-0"
    assert len(placements) == 3  # two of the four 500m pods made room for 1 cpu
    preempted = Event.objects.filter(cluster=cluster, reason="Preempted").count()
    assert preempted == 2
    results = list(
        Cycle.objects.filter(cluster=cluster, pod_name="important").values_list("result", flat=True)
    )
    assert results == ["Unschedulable", "Scheduled"]


def bound_pods(cluster: Cluster) -> dict[str, str]:
    return {
        f"{ns}/{name}": node
        for ns, name, node in Pod.objects.filter(cluster=cluster).values_list(
            "namespace", "name", "node_name"
        )
    }


TWO_PROFILES = """
apiVersion: kubescheduler.config.k8s.io/v1
kind: KubeSchedulerConfiguration
profiles:
- schedulerName: default-scheduler
- schedulerName: second-scheduler
"""
SECOND_POD = """
apiVersion: v1
kind: Pod
metadata: {name: %(name)s, namespace: default}
spec:
  schedulerName: %(scheduler)s
  containers: [{name: c, image: busybox}]
"""


def test_it_runs_the_clusters_profiles_and_leaves_pods_of_other_schedulers() -> None:
    cluster = virtual_cluster(
        docs(
            TWO_PROFILES,
            nodes(1),
            SECOND_POD % {"name": "mine", "scheduler": "second-scheduler"},
            SECOND_POD % {"name": "theirs", "scheduler": "elsewhere"},
        )
    )
    run_cluster(cluster.pk)
    assert list(Cycle.objects.filter(cluster=cluster).values_list("pod_name", "profile")) == [
        ("mine", "second-scheduler")
    ]
    assert bound_pods(cluster) == {"default/mine": "node-0", "default/theirs": ""}


class RecordingLayer:
    def __init__(self) -> None:
        self.sent: list[dict[str, Any]] = []

    async def group_send(self, group: str, message: dict[str, Any]) -> None:
        assert group == f"cluster-{self.cluster_id}"
        self.sent.append(message)

    cluster_id = 0


def test_it_publishes_its_status_cycles_and_queue_to_the_clusters_group() -> None:
    cluster = virtual_cluster(docs(nodes(2), pods(5)))
    layer = RecordingLayer()
    layer.cluster_id = cluster.pk
    run_cluster(cluster.pk, publisher=Publisher(cluster.pk, layer=layer))
    kinds = [m["type"] for m in layer.sent]
    assert kinds[0] == "cluster.status" and layer.sent[0]["runner"] == "running"
    assert layer.sent[-1] == {"type": "cluster.status", "runner": "idle", "stopped": "idle"}
    cycles = [c for m in layer.sent if m["type"] == "cluster.cycles" for c in m["cycles"]]
    assert [c["cycle"] for c in cycles] == [1, 2, 3, 4, 5]
    assert set(cycles[0]) == {"cycle", "pod", "result", "node", "message", "attempt", "time"}
    queues = [m for m in layer.sent if m["type"] == "cluster.queue"]
    assert queues and set(queues[0]["queue"]) >= {"activeQ", "backoffQ", "unschedulablePods"}
