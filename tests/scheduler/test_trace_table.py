from collections.abc import Iterator

from schedviz.kube.load import load_manifests
from schedviz.scheduler.trace import CycleTrace
from schedviz.scheduler.trace_table import render_table
from schedviz.simulation.simulator import new_simulation

CLUSTER = """
apiVersion: v1
kind: Node
metadata: {name: node-a}
status:
  allocatable: {cpu: "1", memory: 1Gi, pods: "10"}
---
apiVersion: v1
kind: Pod
metadata: {name: small, namespace: default}
spec:
  containers: [{name: c, image: busybox, resources: {requests: {cpu: 100m}}}]
---
apiVersion: v1
kind: Pod
metadata: {name: huge, namespace: default}
spec:
  containers: [{name: c, image: busybox, resources: {requests: {cpu: "4"}}}]
"""


def test_the_table_reads_an_encoded_log_once_holding_one_decoded_trace_at_a_time() -> None:
    simulation = new_simulation(load_manifests(CLUSTER, "<test>"), encoded_traces=True)
    simulation.run()
    passes: list[int] = []

    def once() -> Iterator[CycleTrace]:
        passes.append(1)
        yield from simulation.log

    table = render_table(once(), simulation.store.pods())
    assert passes == [1]
    assert table == render_table(simulation.traces, simulation.store.pods())
    assert "default/small" in table and "Scheduled" in table
    assert "Messages" in table and "Insufficient cpu" in table
