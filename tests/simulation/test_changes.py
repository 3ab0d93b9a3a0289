"""What the simulation's ChangeLog reports beside the trace (schedviz/simulation/changes.py)."""

from __future__ import annotations

import dataclasses

from schedviz.kube.load import load_manifests
from schedviz.kube.objects import PersistentVolumeClaim, Pod
from schedviz.scheduler.store import ClusterStore
from schedviz.simulation.changes import ChangeLog

INPUT = """
apiVersion: v1
kind: Pod
metadata: {name: web, namespace: default}
spec: {containers: [{name: c, image: nginx}]}
---
apiVersion: v1
kind: Pod
metadata: {name: plain, namespace: default}
spec: {containers: [{name: c, image: nginx}]}
---
apiVersion: v1
kind: PersistentVolumeClaim
metadata: {name: data, namespace: default}
spec: {accessModes: [ReadWriteOnce], resources: {requests: {storage: 1Gi}}}
"""


def test_it_reports_admissions_changes_then_the_runs_writes_after_their_cycle() -> None:
    given = load_manifests(INPUT).objects
    web, plain, claim = given
    assert isinstance(web, Pod) and isinstance(plain, Pod)
    # What a mutating admission plugin does: the stored pod's manifest differs from the input.
    defaulted = {**web.manifest, "spec": {**web.manifest["spec"], "overhead": {"cpu": "1"}}}
    admitted_web = dataclasses.replace(web, manifest=defaulted, priority=0)
    admitted_plain = dataclasses.replace(plain, priority=0)
    made = {**plain.manifest, "metadata": {"name": "made", "namespace": "default"}}
    created = dataclasses.replace(plain, name="made", manifest=made)
    loaded = [admitted_web, admitted_plain, claim, created]
    store = ClusterStore(loaded)
    cycle = [0]
    log = ChangeLog(given, loaded, store, lambda: cycle[0])
    cycle[0] = 2
    assert isinstance(claim, PersistentVolumeClaim)
    store.apply(dataclasses.replace(claim, volume_name="pv-1", phase="Bound"))
    store.update_pod_status(admitted_plain, None, "node-a")  # the trace's, not listed
    document = log.document()
    assert [o["metadata"]["name"] for o in document["objects"]] == ["made"]
    assert [(c["after"], c["type"], c["kind"], c["key"]) for c in document["changes"]] == [
        (0, "MODIFIED", "Pod", "default/web"),
        (2, "MODIFIED", "PersistentVolumeClaim", "default/data"),
    ]
    web_object, claim_object = (c["object"] for c in document["changes"])
    assert web_object["spec"]["overhead"] == {"cpu": "1"} and web_object["spec"]["priority"] == 0
    assert claim_object["spec"]["volumeName"] == "pv-1"
    assert claim_object["status"] == {"phase": "Bound"}


RUNS_ONCE = """
apiVersion: v1
kind: Node
metadata: {name: node-a}
status: {allocatable: {cpu: "4", memory: 4Gi, pods: "20"}}
---
apiVersion: v1
kind: Node
metadata: {name: node-b}
status: {allocatable: {cpu: "4", memory: 4Gi, pods: "20"}}
---
apiVersion: batch/v1
kind: Job
metadata: {name: once, namespace: default}
spec:
  template:
    metadata: {annotations: {"schedviz.io/run-seconds": "30"}}
    spec:
      restartPolicy: Never
      containers: [{name: c, image: busybox, resources: {requests: {cpu: "1"}}}]
---
apiVersion: v1
kind: Pod
metadata: {name: stray, namespace: default}
spec:
  nodeName: node-b
  containers: [{name: c, image: nginx}]
"""


def test_the_controllers_pod_updates_and_deletions_are_listed_and_the_schedulers_are_not() -> None:
    # A Job pod finishing its run time frees its node: a reader rebuilding the state needs it,
    # as it needs PodGC's deletion of the pods of a node deleted. The bind of
    # the Job's pod is the scheduler's and stays in the trace only.
    from schedviz.kube.load import load_manifests as load
    from schedviz.simulation.simulator import new_simulation

    sim = new_simulation(load(RUNS_ONCE), seed=1)
    sim.run()
    sim.store.delete("Node", "node-b")  # PodGC deletes its pods after the quarantine
    sim.run()
    assert sim.changes is not None
    changes = sim.changes.document()["changes"]
    pods = [(c["type"], c["key"], c["object"].get("status", {}).get("phase")) for c in changes]
    (job_pod,) = [p.key for p in sim.store.pods() if p.key.startswith("default/once-")]
    assert ("MODIFIED", job_pod, "Succeeded") in pods
    assert ("DELETED", "default/stray") in [(kind, key) for kind, key, _ in pods]
    finished = next(c for c in changes if c["key"] == job_pod and c["type"] == "MODIFIED")
    assert finished["object"]["spec"]["nodeName"] in ("node-a", "node-b")
    assert finished["after"] == 1  # after the cycle that bound it
    assert not [c for c in changes if c["key"] == job_pod and c["type"] == "ADDED"]  # at load
