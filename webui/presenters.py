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
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import urlencode

from django.core.paginator import Page, Paginator
from django.db.models.fields.json import KeyTransform

from schedviz.cluster import selectors
from schedviz.cluster.clock import cluster_clock_time
from schedviz.cluster.models import Cluster, Cycle, PendingPods
from schedviz.cluster.models import Node as NodeRow
from schedviz.cluster.queue_state import queue_before_first_run
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
from webui import quantities

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
    zone: str = ""
    verdict: str = ""
    focused: bool = False


def _bar(label: str, requested: int, allocatable: int, show: Any) -> Bar:
    percent = min(100, round(100 * requested / allocatable)) if allocatable else 0
    return Bar(label, show(requested), show(allocatable), percent)


# Decoding a stored manifest is the slow part of a summary (about a millisecond each): what a
# node offers and what a pod requests are kept per stored version of the object, in this
# process, for the next page that shows it.
AMOUNTS_KEPT = 200_000
_node_amounts: dict[tuple[int, int], dict[str, int]] = {}
_pod_amounts: dict[tuple[int, int], dict[str, int]] = {}


def forget_amounts() -> None:
    """Empties the kept amounts (tests whose rolled-back rows give their pks out again)."""
    _node_amounts.clear()
    _pod_amounts.clear()


def _manifests(rows: Any, wanted: list[int]) -> dict[int, dict[str, Any]]:
    """The manifests of the rows whose pk is wanted, in one read (of them all when many)."""
    if not wanted:
        return {}
    if len(wanted) <= 500:
        rows = rows.filter(pk__in=wanted)
    return dict(rows.values_list("pk", "manifest").iterator(chunk_size=1000))


def _kept_amounts(
    cache: dict[tuple[int, int], dict[str, int]],
    rows: Any,
    amounts: Callable[[dict[str, Any]], dict[str, int]],
) -> dict[int, dict[str, int]]:
    """Per pk of the rows, ``amounts`` of its manifest: from the cache, or decoded and kept."""
    versions = list(rows.values_list("pk", "resource_version"))
    manifests = _manifests(rows, [pk for pk, v in versions if (pk, v) not in cache])
    found = {}
    for pk, version in versions:
        key = (pk, version)
        if key not in cache:
            if len(cache) >= AMOUNTS_KEPT:
                cache.clear()
            cache[key] = amounts(manifests[pk])
        found[pk] = cache[key]
    return found


def _requests(manifest: dict[str, Any]) -> dict[str, int]:
    pod = decode_object(manifest)
    assert isinstance(pod, KubePod)
    return {resource: to_int(resource, amount) for resource, amount in pod_requests(pod).items()}


def _page_summaries(cluster: Cluster, names: list[str] | None) -> list[selectors.NodeSummary]:
    """``selectors.node_list``'s totals for the named nodes only (None: every node): a page of
    a large cluster reads its own nodes' pods, not every pod of the cluster."""
    nodes = NodeRow.objects.filter(cluster=cluster).order_by("name")
    if names is not None:
        nodes = nodes.filter(name__in=names)
    offered = _kept_amounts(_node_amounts, nodes, _amounts)
    summaries = [
        selectors.NodeSummary(row=row, allocatable=offered[row.pk])
        for row in nodes.defer("manifest")
    ]
    by_name = {summary.name: summary for summary in summaries}
    bound = selectors.pod_list(cluster=cluster).exclude(node_name="")
    if names is not None:
        bound = bound.filter(node_name__in=names)
    bound = bound.exclude(phase__in=[POD_SUCCEEDED, POD_FAILED]).order_by()
    requested = _kept_amounts(_pod_amounts, bound, _requests)
    for pk, node_name in bound.values_list("pk", "node_name"):
        summary = by_name.get(node_name)
        if summary is None or pk not in requested:
            continue
        summary.pod_count += 1
        for resource, amount in requested[pk].items():
            summary.requested[resource] = summary.requested.get(resource, 0) + amount
    for summary in summaries:
        if summary.pod_count:
            summary.requested[RESOURCE_PODS] = summary.pod_count
    return summaries


def _amounts(manifest: dict[str, Any]) -> dict[str, int]:
    node = decode_object(manifest)
    assert isinstance(node, KubeNode)
    return {name: to_int(name, quantity.amount) for name, quantity in node.allocatable.items()}


ZONE_LABEL = "topology.kubernetes.io/zone"
REGION_LABEL = "topology.kubernetes.io/region"
HOSTNAME_LABEL = "kubernetes.io/hostname"
VERDICTS = ("chosen", "feasible", "rejected", "not evaluated")


@dataclass(frozen=True, slots=True)
class NodeQuery:
    """What the node grid shows: the filters (name part, label ``key`` or ``key=value``, taint
    text, verdict of the latest cycle), the node to jump to, the label key to group by."""

    name: str = ""
    label: str = ""
    taint: str = ""
    verdict: str = ""
    node: str = ""
    group: str = ""

    @classmethod
    def of(cls, params: Any) -> NodeQuery:
        def get(key: str) -> str:
            value = params.get(key) if params is not None else None
            return value.strip()[:253] if isinstance(value, str) else ""

        verdict = get("verdict")
        return cls(
            name=get("q"),
            label=get("label"),
            taint=get("taint"),
            verdict=verdict if verdict in VERDICTS else "",
            node=get("node"),
            group=get("group"),
        )

    @property
    def filtered(self) -> bool:
        return bool(self.name or self.label or self.taint or self.verdict)

    def params(self, **changes: str) -> dict[str, str]:
        """The query's non-empty URL parameters, with ``changes`` applied ("" removes one)."""
        values = {
            "q": self.name,
            "label": self.label,
            "taint": self.taint,
            "verdict": self.verdict,
            "group": self.group,
        }
        values.update(changes)
        return {key: value for key, value in values.items() if value}


def taint_text(taint: dict[str, Any]) -> str:
    """``key[=value]:Effect``, as kubectl taint writes it."""
    value = taint.get("value")
    return f"{taint.get('key', '')}{'=' + str(value) if value else ''}:{taint.get('effect', '')}"


def latest_verdicts(*, cluster: Cluster) -> dict[str, str]:
    """Per node, its verdict in the newest cycle: chosen, feasible (passed every filter),
    rejected, or not evaluated (nodes the cycle never looked at, and nodes added since)."""
    row = Cycle.objects.filter(cluster=cluster).order_by("-number").first()
    if row is None:
        return {}
    trace = row.trace()
    verdicts: dict[str, str] = {}
    for node, entries in (trace.get("filter") or {}).items():
        real = [e for e in entries if not e.get("hypothetical")]
        if not real:
            continue
        rejected = any(e.get("code") != "Success" for e in real)
        verdicts[node] = "rejected" if rejected else "feasible"
    chosen = (trace.get("selected") or {}).get("node") or trace.get("node")
    if chosen and verdicts.get(chosen) != "rejected":
        verdicts[chosen] = "chosen"
    return verdicts


def _node_names(cluster: Cluster, query: NodeQuery, verdicts: dict[str, str]) -> list[str]:
    """The names of the nodes the query keeps, in name order."""
    rows = NodeRow.objects.filter(cluster=cluster).order_by("name")
    if query.name:
        rows = rows.filter(name__icontains=query.name)
    if query.label:
        # In the database: JSON reads in SQL, not 5000 rows decoded here.
        key, sep, value = query.label.partition("=")
        if sep:
            rows = rows.alias(label_value=KeyTransform(key.strip(), "labels")).filter(
                label_value=value.strip()
            )
        else:
            rows = rows.filter(labels__has_key=key)
    if not (query.taint or query.verdict):
        return list(rows.values_list("name", flat=True))
    names = []
    for name, taints in rows.values_list("name", "taints").iterator():
        if query.taint and not any(query.taint in taint_text(t) for t in taints or []):
            continue
        if query.verdict and verdicts.get(name, "not evaluated") != query.verdict:
            continue
        names.append(name)
    return names


def node_page(
    *,
    cluster: Cluster,
    page: int | str | None,
    colour_by: str = "namespace",
    query: NodeQuery | None = None,
) -> tuple[Page[Any], list[NodeCard]]:
    """One page of node cards, in name order, with their bars and pod chips: of every node, or
    of those the query keeps; the page holding ``query.node`` when it names one."""
    query = query or NodeQuery()
    # The newest trace is read only to filter by its verdicts (at 5000 nodes it is a big read).
    verdicts = latest_verdicts(cluster=cluster) if query.verdict else {}
    names: Any
    if query.filtered:
        names = _node_names(cluster, query, verdicts)
    else:
        names = (
            NodeRow.objects.filter(cluster=cluster).order_by("name").values_list("name", flat=True)
        )
    if query.node:
        if isinstance(names, list):
            before = names.index(query.node) if query.node in names else 0
        else:
            before = names.filter(name__lt=query.node).count()
        page = before // NODES_PER_PAGE + 1
    current = Paginator(names, NODES_PER_PAGE).get_page(page)
    shown = list(current.object_list)
    chips: dict[str, list[PodChip]] = defaultdict(list)
    counts: dict[str, int] = defaultdict(int)
    # The most recently written first (a pod just bound among them), so a full card's chips
    # always show the pod just placed and "+N more" counts older ones.
    bound = (
        selectors.pod_list(cluster=cluster)
        .filter(node_name__in=shown)
        .order_by("-resource_version", "namespace", "name")
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
                        quantities.cpu,
                    ),
                    _bar(
                        "Memory",
                        summary.requested.get(RESOURCE_MEMORY, 0),
                        summary.allocatable.get(RESOURCE_MEMORY, 0),
                        quantities.memory,
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
                zone=" · ".join(
                    row.labels[key] for key in (REGION_LABEL, ZONE_LABEL) if row.labels.get(key)
                ),
                verdict=verdicts.get(row.name, ""),
                focused=row.name == query.node,
            )
        )
    return current, cards


@dataclass(slots=True)
class Domain:
    """One value of a topology label: its nodes, the pods bound to them, and what is free there
    (allocatable minus requested, summed over its nodes)."""

    value: str
    nodes: int = 0
    pods: int = 0
    allocatable: dict[str, int] = field(default_factory=dict)
    requested: dict[str, int] = field(default_factory=dict)

    def free(self, resource: str) -> int:
        return self.allocatable.get(resource, 0) - self.requested.get(resource, 0)

    @property
    def free_cpu(self) -> str:
        return quantities.cpu(self.free(RESOURCE_CPU))

    @property
    def free_memory(self) -> str:
        return quantities.memory(self.free(RESOURCE_MEMORY))

    @property
    def free_pods(self) -> int:
        return self.free(RESOURCE_PODS)


def label_keys(*, cluster: Cluster) -> list[str]:
    """Every label key of the cluster's nodes: the zone, region and hostname keys first."""
    keys: set[str] = set()
    for labels in NodeRow.objects.filter(cluster=cluster).values_list("labels", flat=True):
        keys.update(labels or {})
    first = [k for k in (ZONE_LABEL, REGION_LABEL, HOSTNAME_LABEL) if k in keys]
    return first + sorted(keys - set(first))


def topology_domains(*, cluster: Cluster, key: str) -> list[Domain]:
    """The nodes grouped by the value of label ``key`` (nodes without it under ""), each domain
    with its pod count and free cpu, memory and pods, by domain value.

    Reads the figures kept beside the manifests (Node.allocatable, Pod.requests), not the
    manifests: at 5000 nodes and 10000 pods decoding them took seconds."""
    nodes = NodeRow.objects.filter(cluster=cluster).order_by()
    bound = (
        selectors.pod_list(cluster=cluster)
        .exclude(node_name="")
        .exclude(phase__in=[POD_SUCCEEDED, POD_FAILED])
        .order_by()
    )
    domains: dict[str, Domain] = {}
    domain_of: dict[str, Domain] = {}
    rows = nodes.values_list("name", "labels", "allocatable").iterator(chunk_size=2000)
    for name, labels, allocatable in rows:
        value = (labels or {}).get(key, "")
        domain = domains.setdefault(value, Domain(value))
        domain_of[name] = domain
        domain.nodes += 1
        domain.allocatable = _summed(domain.allocatable, allocatable or {})
    resources = (RESOURCE_CPU, RESOURCE_MEMORY)
    for node_name, requests in bound.values_list("node_name", "requests").iterator(chunk_size=2000):
        found = domain_of.get(node_name)
        if found is None:
            continue
        found.pods += 1
        for resource in resources:
            amount = (requests or {}).get(resource, 0)
            found.requested[resource] = found.requested.get(resource, 0) + amount
    for domain in domains.values():
        domain.requested[RESOURCE_PODS] = domain.pods
    return [domains[value] for value in sorted(domains)]


def _summed(total: dict[str, int], amounts: dict[str, int]) -> dict[str, int]:
    """cpu, memory and pods of ``total`` plus ``amounts`` (a new dict)."""
    return {
        resource: total.get(resource, 0) + amounts.get(resource, 0)
        for resource in (RESOURCE_CPU, RESOURCE_MEMORY, RESOURCE_PODS)
    }


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


# A move's ``queue`` (upstream's queue names, as it logs them) as the panel names the lists.
MOVE_DESTINATIONS = {"Active": "activeQ", "Backoff": "backoffQ"}


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
    # Older snapshots have no moves.
    moved = [
        {**with_url(e), "to": MOVE_DESTINATIONS.get(str(e.get("queue")), str(e.get("queue")))}
        for e in queue.get("moves") or []
    ]
    return {
        "active": active,
        "backoff": backoff,
        "unschedulable": unschedulable,
        "gated": gated,
        "in_flight": in_flight,
        "moved": moved,
        "pending": pending,
        "as_of": as_of,
        "now": now,
    }


# As many pods per queue list as a runner's snapshot holds (worker.publish.QUEUE_LIST_LIMIT).
QUEUE_PANEL_LIMIT = 50


def latest_queue(*, cluster: Cluster) -> tuple[dict[str, Any] | None, float, str]:
    """The queue as the runner last left it, the scheduler time (a live cluster's clock now,
    else the time then), and when that was ("after cycle N"); before any runner ran, the queue
    the first one starts with.

    The runner writes its queue with every batch of Cycle rows (``PendingPods``); a queue a
    cycle recorded is the one before its pop, one pod out of date, and is only the fallback
    for clusters whose cycles were imported rather than run."""
    recorded = PendingPods.objects.filter(cluster=cluster).first()
    if recorded is not None and recorded.queue is not None:
        after = f"after cycle {recorded.last_cycle}" if recorded.last_cycle else "before any cycle"
        # A live clock has run on since (runner or not): backoff countdowns count from now.
        now = (
            cluster_clock_time(cluster=cluster)
            if cluster.clock_mode == Cluster.ClockMode.LIVE
            else recorded.scheduler_time
        )
        return recorded.queue, now, after
    row = Cycle.objects.filter(cluster=cluster).order_by("-number").first()
    if row is None:
        # No runner has run: the queue the first one starts with.
        queue = queue_before_first_run(cluster=cluster, limit=QUEUE_PANEL_LIMIT)
        return queue, cluster_clock_time(cluster=cluster), "before any cycle"
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
    query: NodeQuery | None = None,
) -> dict[str, Any]:
    """What the node cards and the pending list need (re-read after every batch of cycles)."""
    colour_by = colour_mode(colour_by)
    query = query or NodeQuery()
    node_page_, cards = node_page(cluster=cluster, page=page, colour_by=colour_by, query=query)
    pending, pending_total = pending_pods(cluster=cluster, colour_by=colour_by)
    return {
        "colour_by": colour_by,
        "priority_legend": PRIORITY_LEGEND,
        "cluster": cluster,
        "node_page": node_page_,
        "cards": cards,
        "node_query": query,
        "verdicts": VERDICTS,
        # URL parameters the node grid's links keep: the filters and colours (page links), the
        # filters alone (colour links).
        "grid_params": urlencode({**query.params(), "colour": colour_by}),
        "filter_params": urlencode(query.params()),
        "pending": pending,
        "pending_total": pending_total,
        "oob": oob,
    }


def dashboard_context(
    *,
    cluster: Cluster,
    page: int | str | None = None,
    colour_by: str | None = None,
    query: NodeQuery | None = None,
) -> dict[str, Any]:
    queue, now, as_of = latest_queue(cluster=cluster)
    context = live_context(cluster=cluster, page=page, colour_by=colour_by, query=query)
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
