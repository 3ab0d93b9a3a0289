"""Node.allocatable and Pod.requests: the figures the zones table totals, kept beside the
manifests (filled here for the rows already stored)."""

from __future__ import annotations

from typing import Any

from django.db import migrations, models

from schedviz.kube.decode import decode_object
from schedviz.kube.objects import Node, Pod
from schedviz.kube.resources import pod_requests, to_int


def fill(apps: Any, schema_editor: Any) -> None:
    node_model = apps.get_model("cluster", "Node")
    pod_model = apps.get_model("cluster", "Pod")
    nodes = []
    for row in node_model.objects.only("pk", "manifest").iterator(chunk_size=1000):
        node = decode_object(row.manifest)
        if isinstance(node, Node):
            row.allocatable = {
                name: to_int(name, quantity.amount) for name, quantity in node.allocatable.items()
            }
            nodes.append(row)
    node_model.objects.bulk_update(nodes, ["allocatable"], batch_size=1000)
    pods = []
    for row in pod_model.objects.only("pk", "manifest").iterator(chunk_size=1000):
        pod = decode_object(row.manifest)
        if isinstance(pod, Pod):
            row.requests = {
                name: to_int(name, amount) for name, amount in pod_requests(pod).items()
            }
            pods.append(row)
    pod_model.objects.bulk_update(pods, ["requests"], batch_size=1000)


class Migration(migrations.Migration):
    dependencies = [("cluster", "0009_workloads_and_services")]

    operations = [
        migrations.AddField(
            model_name="node", name="allocatable", field=models.JSONField(default=dict)
        ),
        migrations.AddField(
            model_name="pod", name="requests", field=models.JSONField(default=dict)
        ),
        migrations.RunPython(fill, migrations.RunPython.noop),
    ]
