"""Export: the scheduler configuration document and the whole cluster as YAML, which applied to
an empty cluster reproduces it.
"""

from __future__ import annotations

import copy
import itertools
from collections.abc import Iterator
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


def object_manifests(*, cluster: Cluster) -> Iterator[dict[str, Any]]:
    """Every stored manifest, in the order that applies cleanly (``KIND_ORDER``), read in
    chunks as they are consumed."""
    for kind in KIND_ORDER:
        model = KIND_MODELS[kind]
        order = ["namespace", "name"] if issubclass(model, NamespacedResource) else ["name"]
        rows = _manager(model).filter(cluster=cluster).order_by(*order)
        yield from rows.values_list("manifest", flat=True).iterator(chunk_size=500)


def cluster_export_yaml_stream(*, cluster: Cluster) -> Iterator[str]:
    """``cluster_export_yaml`` in pieces, an object at a time: the same text, without holding
    every object (or all of the text) at once."""
    yield "apiVersion: v1\nkind: List\n"
    items = object_manifests(cluster=cluster)
    first = next(items, None)
    if first is None:
        yield "items: []\n"
    else:
        yield "items:\n"
        for manifest in itertools.chain([first], items):
            # A one-item sequence at column 0 is the item as the whole List prints it.
            yield _yaml([manifest])
    yield "---\n" + _yaml(scheduler_config_document(cluster=cluster))


def cluster_export_yaml(*, cluster: Cluster) -> str:
    """A ``kind: List`` of every object (manifests as stored), then the scheduler configuration.

    Applying it to an empty cluster reproduces this one.
    """
    return "".join(cluster_export_yaml_stream(cluster=cluster))


def _yaml(document: Any) -> str:
    dumper = getattr(yaml, "CSafeDumper", yaml.SafeDumper)  # libyaml when built with it
    text: str = yaml.dump(document, Dumper=dumper, sort_keys=False, default_flow_style=False)
    return text
