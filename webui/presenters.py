"""What the dashboard shows, as plain template context: built by the views for a page and by
the consumer for the fragments it pushes, so both render the same partials from the same data.

Reads go through ``schedviz.cluster.selectors``; the few reads the selectors do not offer yet
(the newest cycles, a node by name) are plain ORM reads, never writes.
"""

from __future__ import annotations

import functools
import json
import zlib
from collections import defaultdict
from dataclasses import dataclass, field
from typing import Any

from django.core.paginator import Page, Paginator

from schedviz.cluster import selectors
from schedviz.cluster.models import Cluster, Cycle, PendingPods
from schedviz.cluster.models import Node as NodeRow
from schedviz.cluster.services import scheduler_config_document
from schedviz.kube.decode import decode_object
from schedviz.kube.objects import (
    POD_FAILED,
    POD_SUCCEEDED,
    RESOURCE_CPU,
    RESOURCE_MEMORY,
    RESOURCE_PODS,
)
from schedviz.kube.objects import Node as KubeNode
from schedviz.kube.objects import Pod as KubePod
from schedviz.kube.resources import pod_requests, to_int
from schedviz.scheduler.apis.config.v1 import ConfigError, decode_configuration
from schedviz.scheduler.clock import VirtualClock
from schedviz.scheduler.framework.plugins.registry import new_in_tree_registry
from schedviz.scheduler.framework.types import ActionType, ClusterEvent
from schedviz.scheduler.scheduler import Scheduler
from schedviz.scheduler.store import ClusterStore

NODES_PER_PAGE = 48
CHIPS_PER_NODE = 16
PENDING_SHOWN = 100
FEED_LENGTH = 30
NAMESPACE_COLOURS = 8

# ---------------------------------------------------------------------------------------------
# Paths of the trace pages (another part of the UI; plain paths keep this module independent of
# whether their routes are registered yet).


def cycle_path(cluster_id: int, number: int) -> str:
    return f"/clusters/{cluster_id}/cycles/{number}/"


def pod_path(cluster_id: int, key: str) -> str:
    namespace, _, name = key.partition("/")
    return f"/clusters/{cluster_id}/pods/{namespace}/{name}/"


def namespace_colour(namespace: str) -> int:
    """A stable colour index per namespace, so chips of one namespace look alike."""
    return zlib.crc32(namespace.encode()) % NAMESPACE_COLOURS


# Pods coloured by priority: below zero, zero (the default), user classes, system classes
# (system-cluster-critical and system-node-critical are 2e9 and more).
COLOUR_BY = ("namespace", "priority")
PRIORITY_BANDS = ((0, "below zero"), (1, "0"), (1_000_000_000, "1 to 999999999"))
PRIORITY_LEGEND = [label for _, label in PRIORITY_BANDS] + ["system (1e9 and more)"]


def chip_colour(namespace: str, priority: int, colour_by: str) -> str:
    """The chip's colour class: by namespace (ns-0 .. ns-7) or by priority band (prio-0 ..)."""
    if colour_by == "priority":
        band = next(
            (i for i, (below, _) in enumerate(PRIORITY_BANDS) if priority < below),
            len(PRIORITY_BANDS),
        )
        return f"prio-{band}"
    return f"ns-{namespace_colour(namespace)}"


def colour_mode(value: str | None) -> str:
    return value if value in COLOUR_BY else COLOUR_BY[0]


# ---------------------------------------------------------------------------------------------
# Nodes


@dataclass(slots=True)
class Bar:
    label: str
    requested: str
    allocatable: str
    percent: int


@dataclass(slots=True)
class PodChip:
    key: str
    name: str
    namespace: str
    colour: str
    priority: int
    url: str


@dataclass(slots=True)
class NodeCard:
    name: str
    labels: dict[str, str]
    taints: list[dict[str, Any]]
    cordoned: bool
    bars: list[Bar]
    pods: list[PodChip] = field(default_factory=list)
    more_pods: int = 0


def _cpu(milli: int) -> str:
    return f"{milli}m" if milli < 1000 and milli % 1000 else f"{milli / 1000:g}"


def _memory(amount: int) -> str:
    for unit, size in (("Gi", 1 << 30), ("Mi", 1 << 20), ("Ki", 1 << 10)):
        if amount >= size:
            return f"{amount / size:.3g}{unit}"
    return str(amount)


def _bar(label: str, requested: int, allocatable: int, show: Any) -> Bar:
    percent = min(100, round(100 * requested / allocatable)) if allocatable else 0
    return Bar(label, show(requested), show(allocatable), percent)


def _page_summaries(cluster: Cluster, names: list[str]) -> list[selectors.NodeSummary]:
    """``selectors.node_list``'s totals for the named nodes only: a page of a large cluster
    decodes its own nodes' pods, not every pod of the cluster."""
    summaries = [
        selectors.NodeSummary(row=row, allocatable=_amounts(row.manifest))
        for row in NodeRow.objects.filter(cluster=cluster, name__in=names).order_by("name")
    ]
    by_name = {summary.name: summary for summary in summaries}
    bound = (
        selectors.pod_list(cluster=cluster)
        .filter(node_name__in=names)
        .exclude(phase__in=[POD_SUCCEEDED, POD_FAILED])
        .values_list("node_name", "manifest")
    )
    for node_name, manifest in bound.iterator():
        summary = by_name[node_name]
        pod = decode_object(manifest)
        assert isinstance(pod, KubePod)
        summary.pod_count += 1
        for resource, amount in pod_requests(pod).items():
            summary.requested[resource] = summary.requested.get(resource, 0) + to_int(
                resource, amount
            )
    for summary in summaries:
        if summary.pod_count:
            summary.requested[RESOURCE_PODS] = summary.pod_count
    return summaries


def _amounts(manifest: dict[str, Any]) -> dict[str, int]:
    node = decode_object(manifest)
    assert isinstance(node, KubeNode)
    return {name: to_int(name, quantity.amount) for name, quantity in node.allocatable.items()}


def node_page(
    *, cluster: Cluster, page: int | str | None, colour_by: str = "namespace"
) -> tuple[Page[Any], list[NodeCard]]:
    """One page of node cards, in name order, with their bars and pod chips."""
    names = NodeRow.objects.filter(cluster=cluster).order_by("name").values_list("name", flat=True)
    current = Paginator(names, NODES_PER_PAGE).get_page(page)
    shown = list(current.object_list)
    chips: dict[str, list[PodChip]] = defaultdict(list)
    counts: dict[str, int] = defaultdict(int)
    bound = (
        selectors.pod_list(cluster=cluster)
        .filter(node_name__in=shown)
        .values_list("namespace", "name", "node_name", "priority")
    )
    for namespace, name, node_name, priority in bound.iterator():
        counts[node_name] += 1
        if counts[node_name] <= CHIPS_PER_NODE:
            key = f"{namespace}/{name}"
            chips[node_name].append(
                PodChip(
                    key,
                    name,
                    namespace,
                    chip_colour(namespace, priority, colour_by),
                    priority,
                    pod_path(cluster.pk, key),
                )
            )
    cards = []
    for summary in _page_summaries(cluster, shown):
        row = summary.row
        cards.append(
            NodeCard(
                name=row.name,
                labels=row.labels,
                taints=row.taints,
                cordoned=row.unschedulable,
                bars=[
                    _bar(
                        "CPU",
                        summary.requested.get(RESOURCE_CPU, 0),
                        summary.allocatable.get(RESOURCE_CPU, 0),
                        _cpu,
                    ),
                    _bar(
                        "Memory",
                        summary.requested.get(RESOURCE_MEMORY, 0),
                        summary.allocatable.get(RESOURCE_MEMORY, 0),
                        _memory,
                    ),
                    _bar(
                        "Pods",
                        summary.pod_count,
                        summary.allocatable.get(RESOURCE_PODS, 0),
                        str,
                    ),
                ],
                pods=chips[row.name],
                more_pods=max(0, counts[row.name] - CHIPS_PER_NODE),
            )
        )
    return current, cards


def node_get(*, cluster: Cluster, name: str) -> NodeRow | None:
    return NodeRow.objects.filter(cluster=cluster, name=name).first()


def node_names_taken(*, cluster: Cluster, names: list[str]) -> list[str]:
    return list(
        NodeRow.objects.filter(cluster=cluster, name__in=names).values_list("name", flat=True)
    )


def pod_names_taken(*, cluster: Cluster, namespace: str, names: list[str]) -> list[str]:
    pods = selectors.pod_list(cluster=cluster, namespace=namespace).filter(name__in=names)
    return list(pods.values_list("name", flat=True))


# ---------------------------------------------------------------------------------------------
# Pending pods


@dataclass(slots=True)
class PendingPod:
    key: str
    namespace: str
    name: str
    colour: str
    priority: int
    reason: str
    nominated: str
    url: str


def _unschedulable_message(conditions: list[dict[str, Any]]) -> str:
    for condition in conditions:
        if condition.get("type") == "PodScheduled" and condition.get("status") == "False":
            return str(condition.get("message") or condition.get("reason") or "")
    return ""


def pending_pods(*, cluster: Cluster, colour_by: str = "namespace") -> tuple[list[PendingPod], int]:
    """The first pending pods (with the scheduler's last word on each) and how many there are."""
    pods = selectors.pod_list(cluster=cluster, bound=False).exclude(
        phase__in=["Succeeded", "Failed"]
    )
    shown = [
        PendingPod(
            key=pod.key,
            namespace=pod.namespace,
            name=pod.name,
            colour=chip_colour(pod.namespace, pod.priority, colour_by),
            priority=pod.priority,
            reason=_unschedulable_message(pod.conditions),
            nominated=pod.nominated_node_name,
            url=pod_path(cluster.pk, pod.key),
        )
        for pod in pods.only("namespace", "name", "priority", "conditions", "nominated_node_name")[
            :PENDING_SHOWN
        ]
    ]
    total = len(shown) if len(shown) < PENDING_SHOWN else pods.count()
    return shown, total


# ---------------------------------------------------------------------------------------------
# The cycle feed


def feed_entry(cluster_id: int, summary: dict[str, Any]) -> dict[str, Any]:
    """A cycle summary (schedviz.cluster.live.cycle_summary's fields) with its trace page's path."""
    return {**summary, "url": cycle_path(cluster_id, int(summary["cycle"]))}


def recent_cycles(*, cluster: Cluster, limit: int = FEED_LENGTH) -> list[dict[str, Any]]:
    """The newest cycles, newest first, as feed entries."""
    rows = (
        Cycle.objects.filter(cluster=cluster)
        .defer("body")
        .order_by("-number")
        .values("number", "pod_namespace", "pod_name", "result", "node", "message", "attempt")[
            :limit
        ]
    )
    return [
        feed_entry(
            cluster.pk,
            {
                "cycle": row["number"],
                "pod": f"{row['pod_namespace']}/{row['pod_name']}",
                "result": row["result"],
                "node": row["node"] or None,
                "message": row["message"],
                "attempt": row["attempt"],
            },
        )
        for row in rows
    ]


# ---------------------------------------------------------------------------------------------
# The scheduling queue


def _event_text(event: ClusterEvent) -> str:
    if event.custom_label:
        return event.custom_label
    if event.action_type == ActionType.All:
        return f"any {event.resource} change"
    actions = []
    mask = event.action_type
    if mask & ActionType.Update == ActionType.Update:
        actions.append("update")
        mask &= ~ActionType.Update
    for action in ActionType:
        if action.name and action & mask and action.bit_count() == 1:
            actions.append(
                action.name.removeprefix("UpdateNode").removeprefix("UpdatePod").lower()
                if action.name.startswith("Update")
                else action.name.lower()
            )
    return f"{event.resource} {'/'.join(actions)}"


@functools.lru_cache(maxsize=64)
def _requeue_events_for(document_json: str) -> dict[str, list[str]]:
    registry = new_in_tree_registry()
    try:
        config = decode_configuration(json.loads(document_json), known_plugins=set(registry))
        scheduler = Scheduler(config, registry, ClusterStore(), VirtualClock())
    except (ConfigError, ValueError):
        return {}
    events: dict[str, list[str]] = {}
    for framework in scheduler.profiles.values():
        for plugin, registered in framework.enqueue_extensions():
            texts = events.setdefault(plugin, [])
            for event_with_hint in registered:
                text = _event_text(event_with_hint.event)
                if text not in texts:
                    texts.append(text)
    return events


def requeue_events(*, cluster: Cluster) -> dict[str, list[str]]:
    """Per rejecting plugin of the cluster's profiles, the cluster events it registered: what
    may move a pod it rejected back to activeQ/backoffQ (upstream EventsToRegister)."""
    document = scheduler_config_document(cluster=cluster)
    return _requeue_events_for(json.dumps(document, sort_keys=True))


def queue_view(
    *,
    cluster_id: int,
    queue: dict[str, Any] | None,
    pending: int | None,
    now: float,
    events: dict[str, list[str]],
    as_of: str,
) -> dict[str, Any]:
    """The queue lists of a snapshot (docs/trace-format.md ``queue``) ready to render."""
    queue = queue or {}

    def with_url(entry: dict[str, Any]) -> dict[str, Any]:
        return {**entry, "url": pod_path(cluster_id, str(entry.get("pod", "")))}

    backoff = []
    for entry in queue.get("backoffQ") or []:
        expiry = entry.get("backoffExpiration")
        countdown = None if expiry is None else max(0.0, float(expiry) - now)
        backoff.append({**with_url(entry), "countdown": countdown})
    unschedulable = []
    for entry in queue.get("unschedulablePods") or []:
        plugins = list(entry.get("unschedulablePlugins") or []) + list(
            entry.get("pendingPlugins") or []
        )
        moves = []
        for plugin in plugins:
            for text in events.get(plugin, []):
                if text not in moves:
                    moves.append(text)
        unschedulable.append({**with_url(entry), "plugins": plugins, "moves": moves})
    active = [with_url(e) for e in queue.get("activeQ") or []]
    gated = [with_url(e) for e in queue.get("gated") or []]
    in_flight = [with_url(e) for e in queue.get("inFlight") or []]
    return {
        "active": active,
        "backoff": backoff,
        "unschedulable": unschedulable,
        "gated": gated,
        "in_flight": in_flight,
        "pending": pending,
        "as_of": as_of,
        "now": now,
    }


def latest_queue(*, cluster: Cluster) -> tuple[dict[str, Any] | None, float, str]:
    """The queue as the runner last left it, the scheduler time then, and when that was
    ("after cycle N"); (None, scheduler time, "") before any runner wrote it.

    The runner writes its queue with every batch of Cycle rows (``PendingPods``); a queue a
    cycle recorded is the one before its pop, one pod out of date, and is only the fallback
    for clusters whose cycles were imported rather than run."""
    recorded = PendingPods.objects.filter(cluster=cluster).first()
    if recorded is not None and recorded.queue is not None:
        after = f"after cycle {recorded.last_cycle}" if recorded.last_cycle else "before any cycle"
        return recorded.queue, recorded.scheduler_time, after
    row = Cycle.objects.filter(cluster=cluster).order_by("-number").first()
    if row is None:
        return None, cluster.scheduler_time, ""
    trace = row.trace()
    return trace.get("queue"), float(trace.get("time") or 0.0), f"before cycle {row.number}"


# ---------------------------------------------------------------------------------------------
# The runner


def runner_state(*, cluster_id: int) -> dict[str, Any]:
    """What the page says about the runner before the websocket tells, read from the lease:
    "running", "offline" (held but not renewed in time) or "idle" (the ``cluster.status``
    message's fields)."""
    state = selectors.lease_state(cluster_id=cluster_id)
    if state == selectors.RUNNER_OFFLINE:
        return {"runner": state, "stopped": "the runner stopped renewing its lease"}
    return {"runner": state}


# ---------------------------------------------------------------------------------------------
# The whole dashboard


def live_context(
    *,
    cluster: Cluster,
    page: int | str | None = None,
    colour_by: str | None = None,
    oob: bool = False,
) -> dict[str, Any]:
    """What the node cards and the pending list need (re-read after every batch of cycles)."""
    colour_by = colour_mode(colour_by)
    node_page_, cards = node_page(cluster=cluster, page=page, colour_by=colour_by)
    pending, pending_total = pending_pods(cluster=cluster, colour_by=colour_by)
    return {
        "colour_by": colour_by,
        "priority_legend": PRIORITY_LEGEND,
        "cluster": cluster,
        "node_page": node_page_,
        "cards": cards,
        "pending": pending,
        "pending_total": pending_total,
        "oob": oob,
    }


def dashboard_context(
    *, cluster: Cluster, page: int | str | None = None, colour_by: str | None = None
) -> dict[str, Any]:
    queue, now, as_of = latest_queue(cluster=cluster)
    context = live_context(cluster=cluster, page=page, colour_by=colour_by)
    context.update(
        feed=recent_cycles(cluster=cluster),
        queue=queue_view(
            cluster_id=cluster.pk,
            queue=queue,
            pending=None,
            now=now,
            events=requeue_events(cluster=cluster),
            as_of=as_of,
        ),
        runner=runner_state(cluster_id=cluster.pk),
    )
    return context
