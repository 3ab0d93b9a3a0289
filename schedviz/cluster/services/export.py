"""Export: the scheduler configuration document and the whole cluster as YAML, which applied to
an empty cluster reproduces it.
"""

from __future__ import annotations

import copy
from typing import Any

import yaml

from schedviz.cluster.models import (
    KIND_MODELS,
    Cluster,
    NamespacedResource,
    Profile,
)
from schedviz.cluster.services.stored import KIND_ORDER, _manager
from schedviz.kube.load import (
    SCHEDULER_CONFIG_API_VERSION,
    SCHEDULER_CONFIG_KIND,
)


def scheduler_config_document(*, cluster: Cluster) -> dict[str, Any]:
    """The cluster's KubeSchedulerConfiguration v1 document, as it was applied."""
    document: dict[str, Any] = {
        "apiVersion": SCHEDULER_CONFIG_API_VERSION,
        "kind": SCHEDULER_CONFIG_KIND,
        **copy.deepcopy(cluster.scheduler_settings),
    }
    profiles = [copy.deepcopy(p.config) for p in Profile.objects.filter(cluster=cluster)]
    if profiles:
        document["profiles"] = profiles
    return document


def cluster_export_yaml(*, cluster: Cluster) -> str:
    """A ``kind: List`` of every object (manifests as stored), then the scheduler configuration.

    Applying it to an empty cluster reproduces this one.
    """
    items: list[dict[str, Any]] = []
    for kind in KIND_ORDER:
        model = KIND_MODELS[kind]
        order = ["namespace", "name"] if issubclass(model, NamespacedResource) else ["name"]
        for manifest in (
            _manager(model)
            .filter(cluster=cluster)
            .order_by(*order)
            .values_list("manifest", flat=True)
        ):
            items.append(manifest)
    documents = [
        {"apiVersion": "v1", "kind": "List", "items": items},
        scheduler_config_document(cluster=cluster),
    ]
    dumper = getattr(yaml, "CSafeDumper", yaml.SafeDumper)  # libyaml when built with it
    text: str = yaml.dump_all(documents, Dumper=dumper, sort_keys=False, default_flow_style=False)
    return text
