"""Trace retention: a cluster keeps its newest ``SCHEDVIZ_MAX_CYCLES_KEPT`` cycle traces.

Cycle numbers are unique per cluster and grow, so the oldest cycles have the lowest numbers.
A node order no kept cycle refers to any more goes with the last one that did.
"""

from __future__ import annotations

from django.conf import settings
from django.db.models import Exists, OuterRef

from schedviz.cluster.models import Cluster, Cycle, NodeOrder


def cycles_prune(*, cluster: Cluster, incoming: int = 0) -> int:
    """Deletes the cluster's oldest cycles beyond the limit, leaving room for ``incoming`` more
    (called before they are stored); returns how many were deleted."""
    keep = max(settings.SCHEDVIZ_MAX_CYCLES_KEPT - incoming, 0)
    cycles = Cycle.objects.filter(cluster=cluster)
    numbers = cycles.order_by("-number").values_list("number", flat=True)
    newest = numbers.first()
    # More than `keep` distinct numbers up to the newest means one at most newest - keep: two
    # index lookups decide that nothing is to be pruned, the common case on every batch.
    if newest is None or not cycles.filter(number__lte=newest - keep).exists():
        return 0
    if keep == 0:
        deleted, _ = cycles.delete()
    else:
        (oldest_kept,) = numbers[keep - 1 : keep]
        deleted, _ = cycles.filter(number__lt=oldest_kept).delete()
    referred = Cycle.objects.filter(node_order=OuterRef("pk"))
    NodeOrder.objects.filter(cluster=cluster).exclude(Exists(referred)).delete()
    return deleted
