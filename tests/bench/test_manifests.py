"""The benchmark's objects written as manifests decode back to the same objects, so the e2e mode
schedules what the engine mode schedules."""

from __future__ import annotations

import pytest

from schedviz.bench.manifests import UnsupportedObjectError, to_list_json, to_manifest
from schedviz.bench.workloads import WORKLOADS
from schedviz.kube.decode import decode_object
from schedviz.kube.objects import KubeObject, Namespace, Pod, Taint
from schedviz.kube.quantity import Quantity


def _objects(name: str) -> list[KubeObject]:
    workload = WORKLOADS[name].build(6, 7, 8, 0)
    churn = [workload.churn(0)] if workload.churn is not None else []
    return [*workload.init_objects, *workload.measured_pods, *churn]


@pytest.mark.parametrize("name", list(WORKLOADS))
def test_every_workload_object_decodes_back_to_itself(name: str) -> None:
    for obj in _objects(name):
        decoded = decode_object(to_manifest(obj))
        if isinstance(obj, Namespace):
            # The API server labels every namespace with its name.
            assert decoded == Namespace(obj.name, {"kubernetes.io/metadata.name": obj.name})
        else:
            assert decoded == obj


def test_a_list_holds_every_object_in_order() -> None:
    objects = _objects("SchedulingBasic")
    document = to_list_json(objects)
    assert (document["apiVersion"], document["kind"]) == ("v1", "List")
    assert [item["metadata"]["name"] for item in document["items"]] == [o.name for o in objects]


def test_fields_the_encoder_does_not_write_are_refused_not_dropped() -> None:
    pod = Pod(name="p", node_selector={"disk": "ssd"})
    with pytest.raises(UnsupportedObjectError):
        to_manifest(pod)
    node = decode_object(
        {
            "apiVersion": "v1",
            "kind": "Node",
            "metadata": {"name": "n"},
            "status": {"allocatable": {"cpu": "1"}},
        }
    )
    node.taints = (Taint("dedicated", "NoSchedule"),)
    node.capacity = {"cpu": Quantity.parse("1")}
    with pytest.raises(UnsupportedObjectError):
        to_manifest(node)
