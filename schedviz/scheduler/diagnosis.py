"""Why is this pod Pending: a failed cycle's trace read back, and what would change the answer.

Upstream has no such module; it follows the pieces kube-scheduler uses to explain a failure:

- ``FitError`` and ``Diagnosis`` (pkg/scheduler/framework/types.go): the "0/N nodes are
  available: ..." message counts every rejected node's reasons (nodes PreFilter cut share one
  status), sorts the "<count> <reason>" strings, and appends PostFilter's message; a PreFilter
  rejection replaces the histogram with its own message. ``aggregate`` rebuilds it from the
  trace (docs/trace-format.md) and checks it against the message the cycle recorded.
- ``findNodesThatFitPod`` / ``findNodesThatPassFilters`` (pkg/scheduler/schedule_one.go): per
  node, the filter plugins in order until the first rejection; nodes cut by PreFilter are never
  filtered.
- Each plugin's ``EventsToRegister`` as ``buildQueueingHintMap`` (pkg/scheduler/scheduler.go)
  turns them into the queue's map: the cluster events that may move the pod out of
  unschedulablePods are those registered by the plugins that rejected it
  (``isPodWorthRequeuing`` in backend/queue/scheduling_queue.go).

The suggestions are computed on the cluster as it is now, with the plugins' own code where it is
reusable (``noderesources.fits``, the taint helpers, ``RequiredNodeAffinity``, the topology
spread PreFilter counts, ``HostPortInfo``), and only for reasons the plugins give: nothing here
invents a reason.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import asdict, dataclass, field
from typing import Any

from schedviz.kube.nodeaffinity import NodeSelectorMatcher
from schedviz.kube.objects import (
    POD_FAILED,
    POD_SUCCEEDED,
    RESOURCE_CPU,
    RESOURCE_EPHEMERAL_STORAGE,
    RESOURCE_MEMORY,
    RESOURCE_PODS,
    KubeObject,
    Namespace,
    Node,
    NodeSelector,
    NodeSelectorRequirement,
    NodeSelectorTerm,
    PersistentVolume,
    PersistentVolumeClaim,
    Pod,
    StorageClass,
    Taint,
)
from schedviz.kube.taints import tolerations_tolerate_taint
from schedviz.scheduler.apis.config.types import KubeSchedulerConfiguration
from schedviz.scheduler.framework.plugins import names
from schedviz.scheduler.framework.plugins.helper.taint import do_not_schedule_taints_filter
from schedviz.scheduler.framework.plugins.interpodaffinity.plugin import required_terms
from schedviz.scheduler.framework.plugins.nodeports import get_host_ports
from schedviz.scheduler.framework.plugins.noderesources.fit import (
    InsufficientResource,
    compute_pod_resource_request,
    fits,
)
from schedviz.scheduler.framework.plugins.nodeunschedulable import tolerates_unschedulable
from schedviz.scheduler.framework.plugins.podtopologyspread.common import (
    DO_NOT_SCHEDULE,
    filter_topology_spread_constraints,
)
from schedviz.scheduler.framework.plugins.podtopologyspread.filtering import (
    calculate_pre_filter_state,
)
from schedviz.scheduler.framework.plugins.volumezone import (
    get_pv_topologies,
    translate_to_ga_label,
)
from schedviz.scheduler.framework.runtime.framework import Framework
from schedviz.scheduler.framework.types import (
    NO_NODE_AVAILABLE_MSG,
    ActionType,
    AffinityTerm,
    ClusterEvent,
    EventResource,
    HostPortInfo,
    NodeInfo,
)

CODE_SUCCESS = "Success"
STAGE_PRE_FILTER = "PreFilter"
STAGE_EXTENDER = "Extender"
# upstream framework.ExtenderName: a pod an extender rejected may be requeued by any event.
EXTENDER_PLUGIN = "Extender"

VERDICT_FEASIBLE = "feasible"
VERDICT_REJECTED = "rejected"
VERDICT_CUT = "cut by PreFilter"
VERDICT_NOT_EVALUATED = "not evaluated"
VERDICT_NEW = "added since the attempt"

# Extension points after Filter whose rejection fails a cycle that had found a node.
_LATE_POINTS = ("Reserve", "Permit", "PreBind", "Bind")

_ACTION_WORDS = {
    ActionType.Add: "added",
    ActionType.Delete: "deleted",
    ActionType.UpdateNodeAllocatable: "allocatable changed",
    ActionType.UpdateNodeLabel: "labels changed",
    ActionType.UpdateNodeTaint: "taints changed (or uncordoned)",
    ActionType.UpdateNodeCondition: "conditions changed",
    ActionType.UpdateNodeAnnotation: "annotations changed",
    ActionType.UpdatePodLabel: "labels changed",
    ActionType.UpdatePodScaleDown: "requests lowered",
    ActionType.UpdatePodToleration: "tolerations changed",
    ActionType.UpdatePodSchedulingGatesEliminated: "scheduling gates removed",
    ActionType.UpdatePodGeneratedResourceClaim: "generated resource claim changed",
    ActionType.UpdatePodOther: "other fields changed",
}
_RESOURCE_WORDS = {
    EventResource.Pod: "a pod",
    EventResource.AssignedPod: "a bound pod",
    EventResource.UnschedulablePod: "an unscheduled pod",
    EventResource.Node: "a node",
    EventResource.WildCard: "any object",
}


# ---------------------------------------------------------------------------------------------
# The result


@dataclass(frozen=True, slots=True)
class ReasonCount:
    """One "<count> <reason>" of the FitError message, with the nodes and plugins behind it."""

    reason: str
    count: int
    plugins: tuple[str, ...]
    nodes: tuple[str, ...]

    @property
    def text(self) -> str:
        return f"{self.count} {self.reason}"


@dataclass(frozen=True, slots=True)
class PluginVerdict:
    plugin: str
    code: str
    reasons: tuple[str, ...] = ()
    stage: str = ""
    hypothetical: bool = False

    @property
    def passed(self) -> bool:
        return self.code == CODE_SUCCESS


@dataclass(slots=True)
class NodeDiagnosis:
    """One node in the attempt: each filter plugin's verdict, in execution order."""

    node: str
    verdict: str
    rejected_by: str = ""
    reasons: tuple[str, ...] = ()
    plugins: list[PluginVerdict] = field(default_factory=list)
    exists_now: bool = True


@dataclass(frozen=True, slots=True)
class RequeueEvent:
    """A cluster event the plugin registered: the queue asks its hint when one happens."""

    resource: str
    actions: tuple[str, ...]
    text: str


@dataclass(slots=True)
class PluginAdvice:
    """A plugin that rejected the pod: where, why, what would requeue it, what would help."""

    plugin: str
    nodes: tuple[str, ...]
    reasons: tuple[str, ...]
    events: list[RequeueEvent] = field(default_factory=list)
    suggestions: list[str] = field(default_factory=list)


@dataclass(slots=True)
class Aggregate:
    """The FitError message taken apart."""

    total_nodes: int
    reasons: list[ReasonCount]
    pre_filter_message: str
    # FitError's message up to PostFilter's part, rebuilt from the per-node statuses.
    fit_error: str
    post_filter_message: str
    # Whether the rebuilt message is the one the cycle recorded (False: it failed elsewhere).
    matches_message: bool


@dataclass(slots=True)
class PendingDiagnosis:
    pod: str
    cycle: int
    attempt: int
    result: str
    message: str
    aggregate: Aggregate
    nodes: list[NodeDiagnosis]
    advice: list[PluginAdvice]
    # A failure after Filter (Reserve, Permit, PreBind, Bind): "point plugin: reasons".
    failed_after_filter: str = ""
    preemption: dict[str, Any] | None = None
    pod_exists: bool = True

    def to_json(self) -> dict[str, Any]:
        data = asdict(self)
        data["aggregate"]["reasons"] = [
            {**asdict(r), "text": r.text} for r in self.aggregate.reasons
        ]
        camel: dict[str, Any] = camel_keys(data)
        return camel


def camel_keys(value: Any) -> Any:
    """A dataclass's asdict() with the keys as the trace format writes them (camelCase)."""
    if isinstance(value, dict):
        return {_camel_key(str(k)): camel_keys(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [camel_keys(v) for v in value]
    return value


def _camel_key(key: str) -> str:
    head, *rest = key.split("_")
    return head + "".join(part.capitalize() for part in rest)


# ---------------------------------------------------------------------------------------------
# The message and the nodes, from the trace


def _rejected_at_pre_filter(trace: Mapping[str, Any]) -> bool:
    pre_filter = trace.get("preFilter") or {}
    return bool(pre_filter.get("status")) and not pre_filter.get("nodes")


def _rejection(entries: Sequence[Mapping[str, Any]]) -> Mapping[str, Any] | None:
    return next((e for e in entries if e.get("code") != CODE_SUCCESS), None)


def _rejecting_plugin(entry: Mapping[str, Any]) -> str:
    if entry.get("stage") == STAGE_EXTENDER:
        return EXTENDER_PLUGIN
    return str(entry.get("plugin") or "")


def aggregate(trace: Mapping[str, Any]) -> Aggregate:
    """The FitError message rebuilt from the trace's per-node statuses, as upstream counts it."""
    filter_entries: Mapping[str, Sequence[Mapping[str, Any]]] = trace.get("filter") or {}
    total = int(trace.get("totalNodes") or len(filter_entries))
    head = NO_NODE_AVAILABLE_MSG.format(total) + ":"
    pre_filter_message = ""
    counts: dict[str, int] = {}
    plugins: dict[str, list[str]] = {}
    nodes: dict[str, list[str]] = {}
    if _rejected_at_pre_filter(trace):
        status = trace["preFilter"]["status"]
        pre_filter_message = ", ".join(status.get("reasons") or [])
        head += f" {pre_filter_message}."
    else:
        for node, entries in filter_entries.items():
            rejection = _rejection(entries)
            if rejection is None or rejection.get("hypothetical"):
                continue
            plugin = _rejecting_plugin(rejection)
            for reason in rejection.get("reasons") or []:
                counts[reason] = counts.get(reason, 0) + 1
                nodes.setdefault(reason, []).append(node)
                if plugin and plugin not in plugins.setdefault(reason, []):
                    plugins[reason].append(plugin)
        texts = sorted(f"{count} {reason}" for reason, count in counts.items())
        if texts:
            head += f" {', '.join(texts)}."
    reasons = sorted(
        (
            ReasonCount(r, c, tuple(plugins.get(r, ())), tuple(nodes.get(r, ())))
            for r, c in counts.items()
        ),
        key=lambda r: r.text,
    )
    message = str(trace.get("message") or "")
    matches = message == head or message.startswith(head + " ")
    post_filter = message[len(head) :].strip() if matches else ""
    return Aggregate(total, reasons, pre_filter_message, head, post_filter, matches)


def node_diagnoses(trace: Mapping[str, Any], current_nodes: Iterable[str]) -> list[NodeDiagnosis]:
    """Every node of the attempt with its verdicts (rejected first), then nodes added since."""
    current = set(current_nodes)
    filter_entries: Mapping[str, Sequence[Mapping[str, Any]]] = trace.get("filter") or {}
    result: list[NodeDiagnosis] = []
    for node, entries in filter_entries.items():
        verdicts = [
            PluginVerdict(
                plugin=str(e.get("plugin") or ""),
                code=str(e.get("code") or ""),
                reasons=tuple(e.get("reasons") or ()),
                stage=str(e.get("stage") or ""),
                hypothetical=bool(e.get("hypothetical")),
            )
            for e in entries
        ]
        rejection = next((v for v in verdicts if not v.passed), None)
        if rejection is None:
            verdict = VERDICT_FEASIBLE
        elif rejection.stage == STAGE_PRE_FILTER:
            verdict = VERDICT_CUT
        else:
            verdict = VERDICT_REJECTED
        by = ""
        if rejection is not None:
            by = EXTENDER_PLUGIN if rejection.stage == STAGE_EXTENDER else rejection.plugin
        result.append(
            NodeDiagnosis(
                node=node,
                verdict=verdict,
                rejected_by=by,
                reasons=rejection.reasons if rejection is not None else (),
                plugins=verdicts,
                exists_now=node in current,
            )
        )
    seen = set(filter_entries)
    for node in trace.get("notEvaluated") or []:
        if node not in seen:
            seen.add(node)
            result.append(NodeDiagnosis(node, VERDICT_NOT_EVALUATED, exists_now=node in current))
    order = {VERDICT_CUT: 0, VERDICT_REJECTED: 0, VERDICT_FEASIBLE: 1, VERDICT_NOT_EVALUATED: 2}
    result.sort(key=lambda n: order[n.verdict])
    result += [NodeDiagnosis(n, VERDICT_NEW) for n in sorted(current - seen)]
    return result


def _late_failure(trace: Mapping[str, Any]) -> str:
    for point in trace.get("points") or []:
        if point.get("point") in _LATE_POINTS and point.get("code") != CODE_SUCCESS:
            reasons = "; ".join(point.get("reasons") or []) or str(point.get("code"))
            return f"{point['point']} {point.get('plugin', '')}: {reasons}"
    return ""


# ---------------------------------------------------------------------------------------------
# The events that may requeue the pod


def registered_events(framework: Framework) -> dict[str, list[ClusterEvent]]:
    """Each plugin's events as the queue holds them (``buildQueueingHintMap``, with upstream's
    Node/UpdateNodeTaint addition for plugins waiting on new nodes)."""
    from schedviz.scheduler.scheduler import build_queueing_hint_map

    events: dict[str, list[ClusterEvent]] = {}
    for event, functions in build_queueing_hint_map(framework).items():
        for function in functions:
            plugin_events = events.setdefault(function.plugin_name, [])
            if event not in plugin_events:
                plugin_events.append(event)
    return events


def profile_events(
    config: KubeSchedulerConfiguration, profile: str
) -> dict[str, list[ClusterEvent]]:
    """The registered events of a profile's plugins, with the framework built as the scheduler
    builds it ({} for a profile the configuration does not have)."""
    from schedviz.scheduler.clock import VirtualClock
    from schedviz.scheduler.framework.plugins.registry import new_in_tree_registry
    from schedviz.scheduler.scheduler import Scheduler
    from schedviz.scheduler.store import ClusterStore

    clock = VirtualClock()
    scheduler = Scheduler(
        config, new_in_tree_registry(), ClusterStore([], now=clock.now), clock, capture_queue=False
    )
    framework = scheduler.profiles.get(profile)
    return registered_events(framework) if framework is not None else {}


def describe_event(event: ClusterEvent) -> RequeueEvent:
    if event.is_wildcard():
        label = event.custom_label or "any cluster event"
        return RequeueEvent(event.resource, ("All",), label)
    actions = tuple(
        a.name for a in ActionType if a.name and a in _ACTION_WORDS and a & event.action_type
    )
    words = [_ACTION_WORDS[ActionType[a]] for a in actions]
    subject = _RESOURCE_WORDS.get(event.resource, f"a {event.resource}")
    return RequeueEvent(event.resource, actions, f"{subject}: {' or '.join(words)}")


# ---------------------------------------------------------------------------------------------
# The cluster now


@dataclass(slots=True)
class _Cluster:
    nodes: dict[str, Node]
    node_infos: dict[str, NodeInfo]
    pods: list[Pod]
    namespaces: dict[str, dict[str, str]]
    claims: dict[str, PersistentVolumeClaim]
    storage_classes: dict[str, StorageClass]
    volumes: dict[str, PersistentVolume]


def _cluster(objects: Iterable[KubeObject]) -> _Cluster:
    nodes: dict[str, Node] = {}
    pods: list[Pod] = []
    namespaces: dict[str, dict[str, str]] = {}
    claims: dict[str, PersistentVolumeClaim] = {}
    classes: dict[str, StorageClass] = {}
    volumes: dict[str, PersistentVolume] = {}
    for obj in objects:
        if isinstance(obj, Node):
            nodes[obj.name] = obj
        elif isinstance(obj, Pod):
            pods.append(obj)
        elif isinstance(obj, Namespace):
            namespaces[obj.name] = dict(obj.labels)
        elif isinstance(obj, PersistentVolumeClaim):
            claims[obj.key] = obj
        elif isinstance(obj, StorageClass):
            classes[obj.name] = obj
        elif isinstance(obj, PersistentVolume):
            volumes[obj.name] = obj
    infos = {name: NodeInfo(node) for name, node in nodes.items()}
    for pod in pods:
        info = infos.get(pod.node_name)
        # Terminated pods hold nothing, as in the scheduler's cache.
        if info is not None and pod.phase not in (POD_SUCCEEDED, POD_FAILED):
            info.add_pod(pod)
    return _Cluster(nodes, infos, pods, namespaces, claims, classes, volumes)


def format_amount(resource: str, amount: int) -> str:
    """An amount as a person writes it: cpu from millicores, bytes with a binary suffix."""
    if resource == RESOURCE_CPU:
        return str(amount // 1000) if amount % 1000 == 0 else f"{amount}m"
    if resource in (RESOURCE_MEMORY, RESOURCE_EPHEMERAL_STORAGE):
        for suffix, size in (("Gi", 2**30), ("Mi", 2**20), ("Ki", 2**10)):
            if amount and amount % size == 0:
                return f"{amount // size}{suffix}"
    return str(amount)


def _resource_advice(pod: Pod, cluster: _Cluster, rejected: Sequence[str]) -> list[str]:
    """Per resource, the smallest shortfall on the nodes the plugin rejected, as the plugin's
    own ``fits`` computes it on the cluster now."""
    request = compute_pod_resource_request(pod)
    considered = [n for n in rejected if n in cluster.node_infos]
    if not considered:
        return ["the nodes it rejected no longer exist"]
    lacking: dict[str, list[tuple[str, InsufficientResource]]] = {}
    roomy: list[str] = []
    for name in considered:
        missing = fits(pod, cluster.node_infos[name])
        if not missing:
            roomy.append(name)
        for item in missing:
            lacking.setdefault(item.resource_name, []).append((name, item))
    suggestions: list[str] = []
    for resource, items in lacking.items():
        if resource == RESOURCE_PODS:
            full = ", ".join(n for n, _ in items)
            suggestions.append(
                f"{full} already run(s) as many pods as allowed: delete a pod there or add a node"
            )
            continue
        amount = f"{format_amount(resource, request.get(resource))} {resource}"
        resolvable = [(n, i) for n, i in items if not i.unresolvable]
        if resolvable:
            node, item = min(
                resolvable, key=lambda pair: pair[1].requested + pair[1].used - pair[1].capacity
            )
            short = item.requested + item.used - item.capacity
            suggestions.append(
                f"{node} needs {format_amount(resource, short)} more {resource}: free it (its "
                f"pods request {format_amount(resource, item.used)} of "
                f"{format_amount(resource, item.capacity)}) or add a node with at least "
                f"{amount} allocatable"
            )
        largest_node, largest = max(
            ((n, i.allocatable.get(resource)) for n, i in cluster.node_infos.items()),
            key=lambda pair: pair[1],
        )
        if largest < request.get(resource):
            suggestions.append(
                f"the request of {amount} exceeds every node's allocatable (the largest is "
                f"{largest_node} with {format_amount(resource, largest)} {resource}): no "
                f"deletion or preemption can make room; add a node with at least {amount} "
                "allocatable or lower the request"
            )
        elif not resolvable:
            small = ", ".join(n for n, _ in items)
            suggestions.append(
                f"{small} can never fit the request of {amount} (allocatable below it): add a "
                f"node with at least {amount} allocatable"
            )
    if roomy:
        suggestions.append(
            f"now {', '.join(roomy)} has room for the pod's requests (the cluster changed since "
            "this attempt)"
        )
    return suggestions


def _taint_text(taint: Taint) -> str:
    value = f"={taint.value}" if taint.value else ""
    return f"{taint.key}{value}:{taint.effect}"


def _taint_advice(pod: Pod, cluster: _Cluster) -> list[str]:
    by_taint: dict[tuple[str, str, str], tuple[Taint, list[str]]] = {}
    for name, node in cluster.nodes.items():
        for taint in node.taints:
            if do_not_schedule_taints_filter(taint) and not tolerations_tolerate_taint(
                pod.tolerations, taint
            ):
                key = (taint.key, taint.value, taint.effect)
                by_taint.setdefault(key, (taint, []))[1].append(name)
    suggestions = []
    for taint, nodes in by_taint.values():
        value = f", value: {taint.value}" if taint.value else ""
        operator = "Equal" if taint.value else "Exists"
        suggestions.append(
            f"untolerated taint {{{taint.key}: {taint.value}}} ({taint.effect}) on "
            f"{', '.join(nodes)}: add the toleration {{key: {taint.key}, operator: {operator}"
            f"{value}, effect: {taint.effect}}} to the pod, or remove the taint "
            f"(kubectl taint nodes {nodes[0]} {_taint_text(taint)}-)"
        )
    if not by_taint:
        suggestions.append("no node has a taint the pod does not tolerate now")
    return suggestions


def requirement_text(requirement: NodeSelectorRequirement) -> str:
    values = ", ".join(requirement.values)
    if requirement.operator in ("Exists", "DoesNotExist"):
        return f"{requirement.key} {requirement.operator}"
    return f"{requirement.key} {requirement.operator} ({values})"


def _requirement_holds(node: Node, requirement: NodeSelectorRequirement, field: bool) -> bool:
    term = (
        NodeSelectorTerm(match_fields=(requirement,))
        if field
        else NodeSelectorTerm(match_expressions=(requirement,))
    )
    return NodeSelectorMatcher(NodeSelector((term,))).match(node)


def _affinity_advice(pod: Pod, cluster: _Cluster, reasons: Iterable[str]) -> list[str]:
    suggestions: list[str] = []
    if pod.node_selector:
        wanted = " ".join(f"{k}={v}" for k, v in pod.node_selector.items())
        gaps = []
        for name, node in cluster.nodes.items():
            wrong = [
                f"{k}={node.labels[k]}" if k in node.labels else f"no {k}"
                for k in _selector_gaps(pod, node)
            ]
            if wrong:
                gaps.append(f"{name} has {', '.join(wrong)}")
        text = f"nodeSelector: a node needs the labels {wanted}"
        if gaps:
            text += f" ({'; '.join(gaps)})"
        matching = [n for n, node in cluster.nodes.items() if not _selector_gaps(pod, node)]
        if matching:
            text += f"; now {', '.join(matching)} match(es)"
        elif cluster.nodes:
            text += f"; e.g. kubectl label nodes {next(iter(cluster.nodes))} {wanted} --overwrite"
        suggestions.append(text)
    node_affinity = pod.affinity.node_affinity if pod.affinity is not None else None
    required = node_affinity.required if node_affinity is not None else None
    if required is not None:
        terms = []
        for index, term in enumerate(required.node_selector_terms):
            requirements = [(r, False) for r in term.match_expressions] + [
                (r, True) for r in term.match_fields
            ]
            described = " and ".join(requirement_text(r) for r, _ in requirements) or "(empty)"
            failing = {
                name: [
                    requirement_text(r)
                    for r, f in requirements
                    if not _requirement_holds(node, r, f)
                ]
                for name, node in cluster.nodes.items()
            }
            closest = sorted(failing.items(), key=lambda item: (len(item[1]), item[0]))
            detail = ""
            if closest and closest[0][1]:
                nearest, failed = closest[0]
                detail = f" (closest: {nearest}, failing {', '.join(failed)})"
            elif closest:
                detail = f" (now {closest[0][0]} matches)"
            terms.append(f"term {index + 1}: {described}{detail}")
        suggestions.append(
            "required node affinity: a node needs labels matching one of the terms: "
            + "; ".join(terms)
        )
    if any("scheduler-enforced" in r for r in reasons):
        suggestions.append(
            "the profile's NodeAffinity addedAffinity (pluginConfig) excludes these nodes"
        )
    return suggestions


def _selector_gaps(pod: Pod, node: Node) -> list[str]:
    return [k for k, v in pod.node_selector.items() if node.labels.get(k) != v]


def _unschedulable_advice(pod: Pod, cluster: _Cluster) -> list[str]:
    cordoned = [n for n, node in cluster.nodes.items() if node.unschedulable]
    if not cordoned:
        return ["no node is cordoned now"]
    if tolerates_unschedulable(pod):
        return [f"the pod tolerates the cordon of {', '.join(cordoned)} now"]
    return [
        f"uncordon {', '.join(cordoned)} (kubectl uncordon {cordoned[0]}), or tolerate "
        "node.kubernetes.io/unschedulable:NoSchedule"
    ]


def _ports_advice(pod: Pod, cluster: _Cluster) -> list[str]:
    wanted = get_host_ports(pod)
    suggestions = []
    for name, info in cluster.node_infos.items():
        for other in info.pods:
            used = HostPortInfo()
            for port in get_host_ports(other.pod):
                used.add(port.host_ip, port.protocol, port.host_port)
            for port in wanted:
                if used.check_conflict(port.host_ip, port.protocol, port.host_port):
                    suggestions.append(
                        f"hostPort {port.host_port}/{port.protocol or 'TCP'} is taken on {name} "
                        f"by {other.pod.key}"
                    )
    if not suggestions:
        suggestions.append("no node has a conflicting host port now")
    else:
        suggestions.append(
            "free the port (delete or move those pods), choose another hostPort, or add a node"
        )
    return suggestions


def _spread_advice(pod: Pod, cluster: _Cluster) -> list[str]:
    constraints = filter_topology_spread_constraints(
        pod.topology_spread_constraints, pod.labels, DO_NOT_SCHEDULE
    )
    if not constraints:
        return []
    state = calculate_pre_filter_state(pod, constraints, list(cluster.node_infos.values()))
    suggestions = []
    for index, constraint in enumerate(constraints):
        counts = state.tp_value_to_match_num[index]
        minimum = state.min_match_num(index, constraint.min_domains)
        self_match = 1 if constraint.selector.matches(pod.labels) else 0
        shown = ", ".join(f"{k}={counts[k]}" for k in sorted(counts)) or "no eligible domain"
        allowed = sorted(
            v for v, c in counts.items() if c + self_match - minimum <= constraint.max_skew
        )
        blocked = sorted(set(counts) - set(allowed))
        unlabelled = sorted(
            n for n, node in cluster.nodes.items() if constraint.topology_key not in node.labels
        )
        text = (
            f"topologyKey {constraint.topology_key}, maxSkew {constraint.max_skew}: matching "
            f"pods per domain {shown}; global minimum {minimum}"
        )
        if len(counts) < constraint.min_domains:
            text += (
                f" (fewer than minDomains {constraint.min_domains} eligible domains, so the "
                "minimum counts as 0)"
            )
        if blocked:
            text += (
                f"; placing the pod in {', '.join(blocked)} would exceed maxSkew: it needs a "
                f"node in {', '.join(allowed) if allowed else 'a less loaded domain'}, or fewer "
                "matching pods in the others"
            )
        if unlabelled:
            text += (
                f"; {', '.join(unlabelled)} lack(s) the label {constraint.topology_key} and can "
                "never host the pod"
            )
        suggestions.append(text)
    return suggestions


def _term_text(term: AffinityTerm) -> str:
    return f"topologyKey {term.topology_key}"


def _inter_pod_advice(pod: Pod, cluster: _Cluster) -> list[str]:
    bound = [
        p
        for p in cluster.pods
        if p.node_name in cluster.nodes
        and p.key != pod.key
        and p.phase not in (POD_SUCCEEDED, POD_FAILED)
    ]
    suggestions: list[str] = []

    def domain(p: Pod, key: str) -> str:
        value = cluster.nodes[p.node_name].labels.get(key)
        return f"{key}={value}" if value is not None else f"{p.node_name} (no {key} label)"

    for term in required_terms(pod, anti=True):
        blockers = [p for p in bound if term.matches(p, cluster.namespaces.get(p.namespace))]
        if blockers:
            suggestions.append(
                f"anti-affinity ({_term_text(term)}) is blocked by "
                + ", ".join(f"{p.key} in {domain(p, term.topology_key)}" for p in blockers)
            )
    for term in required_terms(pod, anti=False):
        matches = [p for p in bound if term.matches(p, cluster.namespaces.get(p.namespace))]
        if matches:
            domains = sorted({domain(p, term.topology_key) for p in matches})
            suggestions.append(
                f"affinity ({_term_text(term)}): matching pods run in {', '.join(domains)}; the "
                "pod can only go to a node of those domains"
            )
        else:
            itself = term.matches(pod, cluster.namespaces.get(pod.namespace))
            suggestions.append(
                f"affinity ({_term_text(term)}): no running pod matches the term"
                + ("" if itself else "; the pod does not match it itself, so it waits for one")
            )
    for other in bound:
        for term in required_terms(other, anti=True):
            if term.matches(pod, cluster.namespaces.get(pod.namespace)):
                suggestions.append(
                    f"{other.key}'s anti-affinity ({_term_text(term)}) excludes the pod from "
                    f"{domain(other, term.topology_key)}"
                )
    return suggestions


def _volume_advice(pod: Pod, cluster: _Cluster) -> list[str]:
    suggestions = []
    for volume in pod.volumes:
        if volume.pvc_claim_name is None:
            continue
        key = f"{pod.namespace}/{volume.pvc_claim_name}"
        claim = cluster.claims.get(key)
        if claim is None:
            suggestions.append(f"claim {key} does not exist: create it")
            continue
        if claim.volume_name:
            suggestions.append(_bound_claim_text(key, claim.volume_name, cluster))
            continue
        storage_class = cluster.storage_classes.get(claim.storage_class_name or "")
        mode = storage_class.volume_binding_mode if storage_class else "no StorageClass"
        suggestions.append(
            f"claim {key} is {claim.phase}, unbound (storageClassName "
            f"{claim.storage_class_name or '-'}, volumeBindingMode {mode}): bind it or create a "
            "matching PersistentVolume"
        )
    return suggestions


def _bound_claim_text(claim: str, volume_name: str, cluster: _Cluster) -> str:
    """Where a bound claim's volume can be used: its zone labels (VolumeZone) and its node
    affinity (VolumeBinding), with the nodes that qualify now."""
    text = f"claim {claim} is bound to PersistentVolume {volume_name}"
    volume = cluster.volumes.get(volume_name)
    if volume is None:
        return text + ", which does not exist"
    places = []
    for topology in get_pv_topologies(volume):
        ga_key = translate_to_ga_label(topology.key)
        nodes = [
            name
            for name, node in cluster.nodes.items()
            if node.labels.get(topology.key, node.labels.get(ga_key)) in topology.values
        ]
        zones = ", ".join(sorted(topology.values))
        places.append(f"{topology.key} in ({zones}), where {', '.join(nodes) or 'no node'} is")
    if volume.node_affinity is not None:
        matcher = NodeSelectorMatcher(volume.node_affinity)
        nodes = [name for name, node in cluster.nodes.items() if matcher.match(node)]
        places.append(f"its node affinity admits {', '.join(nodes) or 'no node'}")
    if places:
        text += (
            f": {'; '.join(places)}; the pod can only run where the volume is (add a node there, "
            "or give the pod a claim on a volume where the nodes are)"
        )
    return text


def _suggestions(
    plugin: str, pod: Pod, cluster: _Cluster, nodes: Sequence[str], reasons: Sequence[str]
) -> list[str]:
    if plugin == names.NODE_RESOURCES_FIT:
        return _resource_advice(pod, cluster, nodes)
    if plugin == names.TAINT_TOLERATION:
        return _taint_advice(pod, cluster)
    if plugin == names.NODE_AFFINITY:
        return _affinity_advice(pod, cluster, reasons)
    if plugin == names.NODE_UNSCHEDULABLE:
        return _unschedulable_advice(pod, cluster)
    if plugin == names.NODE_PORTS:
        return _ports_advice(pod, cluster)
    if plugin == names.POD_TOPOLOGY_SPREAD:
        return _spread_advice(pod, cluster)
    if plugin == names.INTER_POD_AFFINITY:
        return _inter_pod_advice(pod, cluster)
    if plugin in (
        names.VOLUME_BINDING,
        names.VOLUME_ZONE,
        names.VOLUME_RESTRICTIONS,
        names.NODE_VOLUME_LIMITS,
    ):
        return _volume_advice(pod, cluster)
    if plugin == names.NODE_NAME:
        return [f"spec.nodeName is {pod.node_name or '-'}: only that node may take the pod"]
    return []


# ---------------------------------------------------------------------------------------------
# The whole


def _rejectors(
    trace: Mapping[str, Any], nodes: Sequence[NodeDiagnosis]
) -> dict[str, tuple[list[str], list[str]]]:
    """plugin -> (nodes it rejected, its reasons), in first-seen order."""
    found: dict[str, tuple[list[str], list[str]]] = {}
    if _rejected_at_pre_filter(trace):
        status = trace["preFilter"]["status"]
        plugin = str(status.get("plugin") or "")
        found[plugin] = ([n.node for n in nodes if n.verdict == VERDICT_CUT], [])
        found[plugin][1].extend(status.get("reasons") or [])
        return found
    for node in nodes:
        if node.verdict not in (VERDICT_REJECTED, VERDICT_CUT):
            continue
        if any(v.hypothetical for v in node.plugins):
            continue
        plugins = [node.rejected_by]
        if node.verdict == VERDICT_CUT:
            # The cut status names the plugins in its reason ("didn't satisfy plugin(s) [X]").
            plugins = [p for p in _named_plugins(node.reasons)] or [node.rejected_by]
        for plugin in plugins:
            entry = found.setdefault(plugin, ([], []))
            entry[0].append(node.node)
            entry[1].extend(r for r in node.reasons if r not in entry[1])
    return found


def _named_plugins(reasons: Iterable[str]) -> list[str]:
    result = []
    for reason in reasons:
        start, end = reason.find("["), reason.find("]")
        if start >= 0 and end > start:
            result += [p for p in reason[start + 1 : end].split() if p]
    return result


def diagnose(
    trace: Mapping[str, Any],
    *,
    objects: Iterable[KubeObject],
    plugin_events: Mapping[str, Sequence[ClusterEvent]],
) -> PendingDiagnosis:
    """Explains a failed cycle (``trace``, docs/trace-format.md) against the cluster as it is now
    (``objects``); ``plugin_events``: the profile's registered events (``profile_events``)."""
    cluster = _cluster(objects)
    pod_key = str(trace.get("pod") or "")
    pod = next((p for p in cluster.pods if p.key == pod_key), None)
    nodes = node_diagnoses(trace, cluster.nodes)
    advice = []
    added = [n.node for n in nodes if n.verdict == VERDICT_NEW]
    for plugin, (rejected, reasons) in _rejectors(trace, nodes).items():
        events = [describe_event(e) for e in plugin_events.get(plugin, ())]
        if plugin == EXTENDER_PLUGIN:
            events = [RequeueEvent(EventResource.WildCard, ("All",), "any cluster event")]
        # Nodes added since the attempt may be the answer: the resource advice looks at them too.
        candidates = [*rejected, *added]
        suggestions = _suggestions(plugin, pod, cluster, candidates, reasons) if pod else []
        advice.append(PluginAdvice(plugin, tuple(rejected), tuple(reasons), events, suggestions))
    preemption = trace.get("preemption")
    return PendingDiagnosis(
        pod=pod_key,
        cycle=int(trace.get("cycle") or 0),
        attempt=int(trace.get("attempt") or 0),
        result=str(trace.get("result") or ""),
        message=str(trace.get("message") or ""),
        aggregate=aggregate(trace),
        nodes=nodes,
        advice=advice,
        failed_after_filter=_late_failure(trace),
        preemption=dict(preemption) if isinstance(preemption, Mapping) else None,
        pod_exists=pod is not None,
    )
