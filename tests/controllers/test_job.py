"""The Job controller over a store: parallelism and completions, pods that finish by a status
patch or by their run time (the kubelet's ``schedviz.io/run-seconds``), Complete and Failed,
backoffLimit with the pod failure backoff, and finished Jobs that get no new pods (issue 22)."""

from __future__ import annotations

import pytest

from schedviz.controllers.job import format_indexes, parse_indexes
from schedviz.controllers.kubelet import run_error
from schedviz.controllers.workloads import job_active_count
from schedviz.kube.load import load_manifests
from schedviz.kube.objects import POD_FAILED, POD_SUCCEEDED, Job
from tests.controllers.harness import NODE, Cluster, start

JOB = """
apiVersion: batch/v1
kind: Job
metadata: {name: j}
spec:
  %s
  template:
    metadata: {annotations: {%s}}
    spec:
      restartPolicy: Never
      containers: [{name: c, image: busybox}]
%s
"""


def job_cluster(spec: str, annotations: str = "", status: str = "") -> Cluster:
    return start(NODE % "n1" + "---\n" + JOB % (spec, annotations, status))


def conditions(cluster: Cluster) -> list[str]:
    job = cluster.get("Job", "j")
    return [c["type"] for c in job.manifest.get("status", {}).get("conditions", [])]


def finish_all(cluster: Cluster, phase: str = POD_SUCCEEDED) -> None:
    for pod in cluster.pods():
        if pod.phase not in (POD_SUCCEEDED, POD_FAILED):
            cluster.set_phase(pod.name, phase)


@pytest.mark.parametrize(
    ("spec", "active"),
    [
        ("parallelism: 2\n  completions: 5", 2),
        ("parallelism: 5\n  completions: 2", 2),
        ("parallelism: 3", 3),
        ("completions: 1", 1),
    ],
)
def test_a_job_starts_min_of_parallelism_and_completions(spec: str, active: int) -> None:
    assert len(job_cluster(spec).pods()) == active


def test_succeeded_pods_are_replaced_until_completions_then_the_job_is_complete() -> None:
    cluster = job_cluster("parallelism: 2\n  completions: 3")
    cluster.bind_all()
    finish_all(cluster)
    active = [p for p in cluster.pods() if p.phase not in (POD_SUCCEEDED, POD_FAILED)]
    assert len(active) == 1  # 3 - 2 succeeded
    cluster.bind_all()
    finish_all(cluster)
    assert conditions(cluster) == ["SuccessCriteriaMet", "Complete"]
    status = cluster.get("Job", "j").manifest["status"]
    assert status["succeeded"] == 3
    assert len(cluster.pods()) == 3


def test_a_job_without_completions_completes_when_one_succeeded_and_none_runs() -> None:
    cluster = job_cluster("parallelism: 2")
    names = cluster.names()
    cluster.set_phase(names[0], POD_SUCCEEDED)
    assert len(cluster.pods()) == 2  # the other keeps running, nothing new
    cluster.set_phase(names[1], POD_SUCCEEDED)
    assert conditions(cluster) == ["SuccessCriteriaMet", "Complete"]


def test_pods_finish_after_their_run_seconds_on_the_virtual_clock() -> None:
    cluster = job_cluster("completions: 2", '"schedviz.io/run-seconds": "30"')
    cluster.bind_all()
    cluster.advance(29)
    assert conditions(cluster) == []
    cluster.advance(1)
    cluster.bind_all()  # the second pod, made when the first succeeded at 30 s
    cluster.advance(30)
    assert conditions(cluster) == ["SuccessCriteriaMet", "Complete"]
    assert cluster.clock.now() == 60


def test_failures_beyond_the_backoff_limit_fail_the_job_after_the_pod_backoff() -> None:
    cluster = job_cluster("backoffLimit: 1")
    cluster.bind_all()
    finish_all(cluster, POD_FAILED)
    # The replacement waits for the pod failure backoff: 10 s after the first failure.
    assert [p.phase for p in cluster.pods()] == [POD_FAILED]
    cluster.advance(10)
    assert len(cluster.pods()) == 2
    cluster.bind_all()
    finish_all(cluster, POD_FAILED)
    assert conditions(cluster) == ["FailureTarget", "Failed"]
    job = cluster.get("Job", "j")
    assert job.manifest["status"]["conditions"][1]["reason"] == "BackoffLimitExceeded"
    cluster.advance(600)
    assert len(cluster.pods()) == 2


COMPLETE = """status:
  succeeded: 1
  conditions: [{type: Complete, status: "True"}]"""


@pytest.mark.parametrize(
    ("spec", "status", "pods"),
    [
        pytest.param("completions: 1", COMPLETE, 0, id="Complete"),
        pytest.param(
            "completions: 1",
            'status: {failed: 7, conditions: [{type: Failed, status: "True"}]}',
            0,
            id="Failed",
        ),
        pytest.param("parallelism: 3\n  completions: 4", "status: {succeeded: 3}", 1, id="3 of 4"),
    ],
)
def test_a_dumped_finished_or_counted_job_makes_no_new_pods(
    spec: str, status: str, pods: int
) -> None:
    assert len(job_cluster(spec, status=status).pods()) == pods
    (job,) = [o for o in load_manifests(JOB % (spec, "", status)).objects if isinstance(o, Job)]
    assert job_active_count(job) == pods  # what the live system's apply creates


def test_an_indexed_job_recreates_only_the_indexes_not_yet_succeeded() -> None:
    cluster = job_cluster("completionMode: Indexed\n  completions: 3\n  parallelism: 3")
    first = next(p for p in cluster.pods() if p.name.startswith("j-0-"))
    cluster.set_phase(first.name, POD_SUCCEEDED)
    cluster.store.delete("Pod", next(p.key for p in cluster.pods() if p.name.startswith("j-1-")))
    indexes = sorted(p.name.split("-")[1] for p in cluster.pods() if p.phase != POD_SUCCEEDED)
    assert indexes == ["1", "2"]


def test_completed_indexes_round_trip() -> None:
    assert parse_indexes("1,3-5") == {1, 3, 4, 5}
    assert format_indexes({1, 3, 4, 5}) == "1,3-5"


@pytest.mark.parametrize(
    ("annotations", "error"),
    [
        ({"schedviz.io/run-seconds": "5"}, ""),
        ({"schedviz.io/run-seconds": "-1"}, "schedviz.io/run-seconds]: must be a non-negative"),
        ({"schedviz.io/run-seconds": "soon"}, "schedviz.io/run-seconds]: must be a non-negative"),
        ({"schedviz.io/run-outcome": "Maybe"}, "schedviz.io/run-outcome]: must be one of"),
    ],
)
def test_run_annotations_are_checked(annotations: dict[str, str], error: str) -> None:
    assert run_error(annotations).startswith(error)
