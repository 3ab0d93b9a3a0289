"""Custom resources that out-of-tree plugins read.

Mirrors kubernetes-sigs/scheduler-plugins apis/scheduling/v1alpha1/types.go (``PodGroup``,
``PodGroupSpec``, ``PodGroupLabel``), the CRD ``podgroups.scheduling.x-k8s.io``. Only the spec the
Coscheduling plugin reads is kept; status is left to a controller schedviz does not run.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from schedviz.kube.quantity import Quantity

SCHEDULING_GROUP = "scheduling.x-k8s.io"
POD_GROUP_API_VERSION = f"{SCHEDULING_GROUP}/v1alpha1"
POD_GROUP_KIND = "PodGroup"
# A pod joins the group named by this label, in its own namespace.
POD_GROUP_LABEL = f"{SCHEDULING_GROUP}/pod-group"


@dataclass(slots=True)
class PodGroup:
    """A gang: ``min_member`` pods of it must be placed together or none is bound."""

    name: str
    namespace: str = "default"
    min_member: int = 0
    # None when the spec has no minResources (upstream's nil *ResourceList).
    min_resources: dict[str, Quantity] | None = None
    # None: the plugin's permitWaitingTimeSeconds applies.
    schedule_timeout_seconds: int | None = None
    creation_timestamp: str = ""
    manifest: dict[str, Any] = field(default_factory=dict, repr=False, compare=False)

    @property
    def key(self) -> str:
        return f"{self.namespace}/{self.name}"
