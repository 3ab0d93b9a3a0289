"""Traces out of a cluster and back in: JSON lines, and kube-scheduler-simulator annotations.

JSON lines (``trace_export_jsonl``): a header line, then one cycle per line, each exactly the
trace of docs/trace-format.md::

    {"schemaVersion": 1, "kind": "schedviz-trace", "cluster": "demo", "exportedAt": "...",
     "objects": [...], "schedulerConfiguration": {...}}
    {"cycle": 1, "pod": "default/web-1", ...}

``objects`` (the manifests as stored) and ``schedulerConfiguration`` are optional; with them an
import holds the cluster as it is now, without them only the pods and nodes the traces name.

kube-scheduler-simulator (``trace_export_kss``): a ``v1 List`` of the cluster's nodes and pods,
each pod with the annotations the simulator's result store writes
(kubernetes-sigs/kube-scheduler-simulator, ``simulator/scheduler/plugin/resultstore/store.go``,
keys in ``plugin/annotation/annotation.go`` and ``storereflector/annotation.go``): the results
of the pod's last cycle, and
``result-history`` with every cycle's, oldest first. Values are JSON strings as Go's
``json.Marshal`` writes them (keys sorted, ``<>&`` escaped), made by ``kss_text``: the streamed
text (``trace_export_kss_text``) straight from each cycle's stored trace, the List as data from
the documented JSON.

``trace_import`` reads either back into a new cluster, for review: clock virtual, run state
paused, so nothing is scheduled again until someone asks. A kss List keeps less than a trace;
``KSS_IMPORT_LOSSES`` says what.
"""

from __future__ import annotations

import datetime
import json
from collections.abc import Iterator, Mapping
from typing import Any

import yaml
from django.contrib.auth.models import User
from django.db import transaction

from schedviz.cluster import kss_text, services
from schedviz.cluster.kss_text import (
    KSS_BIND,
    KSS_FILTER,
    KSS_FINALSCORE,
    KSS_PASSED,
    KSS_PERMIT,
    KSS_PERMIT_TIMEOUT,
    KSS_POSTFILTER,
    KSS_PREBIND,
    KSS_PREEMPTION_VICTIM,
    KSS_PREFILTER,
    KSS_PREFILTER_STATUS,
    KSS_PREFIX,
    KSS_PRESCORE,
    KSS_RESERVE,
    KSS_RESULT_HISTORY,
    KSS_SCORE,
    KSS_SELECTED_NODE,
    KSS_STATUS_POINTS,
    KSS_SUCCESS,
    KSS_WAIT,
    go_json,
    kss_annotations,
)
from schedviz.cluster.models import KIND_MODELS, Cluster, Cycle, decode_body, decode_body_trace
from schedviz.cluster.models import Pod as PodRow
from schedviz.cluster.services import ServiceError
from schedviz.kube.load import parse_json_int, unstorable_value
from schedviz.scheduler.apis.config.v1 import default_configuration
from schedviz.scheduler.store import Event as SchedulerEvent
from schedviz.scheduler.trace import (
    RESULT_ERROR,
    RESULT_SCHEDULED,
    RESULT_UNSCHEDULABLE,
    SCHEMA_VERSION,
)

TRACE_KIND = "schedviz-trace"
# The largest cycle number or attempt count a Cycle row holds (PositiveIntegerField).
MAX_STORED_INT = 2**31 - 1

KSS_IMPORT_LOSSES = (
    "the order of cycles across pods (cycles are numbered pod by pod, attempts in order)",
    "times, durations and the scheduling queue",
    "the FailedScheduling message and events",
    "filter codes: a rejection reads Unschedulable (not UnschedulableAndUnresolvable)",
    "the order filter plugins ran in (the default profile's order is assumed)",
    "score weights (the default profile's are assumed) and so normalized scores",
    "nodes cut by PreFilter, nodes never evaluated, the walk order of the tie set, preemption "
    "victims",
    "the nodes, unless the List holds them (a List of pods alone gives nodes by name, without "
    "allocatable)",
    "extender requests",
)


# ---------------------------------------------------------------------------------------------
# Export


def trace_export_jsonl(*, cluster: Cluster) -> Iterator[str]:
    """The header line, then every cycle's trace, one per line (each ends with a newline).

    Everything is read in chunks as the text is consumed, the header's objects too, so an
    export of any size streams: each cycle is written as text straight from its stored body."""
    header = {
        "schemaVersion": SCHEMA_VERSION,
        "kind": TRACE_KIND,
        "cluster": cluster.name,
        "exportedAt": datetime.datetime.now(datetime.UTC).isoformat(timespec="seconds"),
        "objects": _OBJECTS,
        "schedulerConfiguration": services.scheduler_config_document(cluster=cluster),
    }
    # Split at the member itself: quotes inside a name are escaped, so this text is only it.
    before, after = _compact(header).split('"objects":' + _compact(_OBJECTS), 1)
    yield before + '"objects":['
    for index, manifest in enumerate(services.object_manifests(cluster=cluster)):
        yield ("," if index else "") + _compact(manifest)
    yield "]" + after + "\n"
    rows = Cycle.objects.filter(cluster=cluster).order_by("number")
    for row in rows.only("body", "node_order_id").iterator(chunk_size=200):
        yield row.trace_text() + "\n"


# Stands in for the header's objects, which are written one at a time.
_OBJECTS = "\x00objects\x00"


def _compact(value: Any) -> str:
    return json.dumps(value, separators=(",", ":"))


def _kss_pod(manifest: Mapping[str, Any], traces: list[dict[str, Any]]) -> dict[str, Any]:
    pod = json.loads(json.dumps(manifest))
    pod.setdefault("apiVersion", "v1")
    pod.setdefault("kind", "Pod")
    if not traces:
        return dict(pod)
    history = [kss_annotations(trace) for trace in traces]
    metadata = pod.setdefault("metadata", {})
    annotations = dict(metadata.get("annotations") or {})
    annotations.update(history[-1])
    annotations[KSS_RESULT_HISTORY] = go_json(history)
    metadata["annotations"] = annotations
    return dict(pod)


def _kss_nodes(cluster: Cluster) -> Iterator[dict[str, Any]]:
    nodes = KIND_MODELS["Node"]._default_manager.filter(cluster=cluster).order_by("name")
    for manifest in nodes.values_list("manifest", flat=True).iterator(chunk_size=500):
        yield {"apiVersion": "v1", "kind": "Node", **manifest}


def _kss_pods(cluster: Cluster) -> Iterator[tuple[dict[str, Any], list[tuple[bytes, int | None]]]]:
    """Each pod's manifest and its cycles' bodies (with their node order), the pods and their
    cycles read side by side, both in the pods' order, so only one pod's cycles are held at
    once."""
    cycles = (
        Cycle.objects.filter(cluster=cluster)
        .order_by("pod_namespace", "pod_name", "number")
        .values_list("pod_namespace", "pod_name", "body", "node_order_id")
        .iterator(chunk_size=200)
    )
    pending = next(cycles, None)
    pods = PodRow.objects.filter(cluster=cluster).order_by("namespace", "name")
    for namespace, name, manifest in pods.values_list("namespace", "name", "manifest").iterator(
        chunk_size=500
    ):
        key = (namespace, name)
        # Cycles of pods deleted since sort before the next pod still here: skipped.
        while pending is not None and pending[:2] < key:
            pending = next(cycles, None)
        bodies: list[tuple[bytes, int | None]] = []
        while pending is not None and pending[:2] == key:
            bodies.append((bytes(pending[2]), pending[3]))
            pending = next(cycles, None)
        yield manifest, bodies


def trace_export_kss(*, cluster: Cluster) -> dict[str, Any]:
    """A ``v1 List`` of the cluster's nodes, then its pods annotated as kube-scheduler-simulator
    annotates them (what ``kubectl get nodes,pods -o json`` lists in the simulator's cluster).

    A pod's annotations hold its last cycle; ``result-history`` every cycle (a cycle held at
    Permit appears once, with its outcome). Pods never tried carry no annotation. The nodes come
    as stored, so that an import reads their allocatable. Made from each cycle's documented
    JSON: the definition ``trace_export_kss_text`` writes faster."""
    items: list[dict[str, Any]] = list(_kss_nodes(cluster))
    for manifest, bodies in _kss_pods(cluster):
        items.append(_kss_pod(manifest, [decode_body(*body) for body in bodies]))
    return {**_KSS_LIST, "items": items}


def trace_export_kss_text(*, cluster: Cluster) -> Iterator[str]:
    """``trace_export_kss`` as compact JSON text, an item at a time, byte for byte: each
    cycle's annotations are written straight from its stored body."""
    yield _compact(_KSS_LIST)[:-1] + ',"items":['
    index = 0
    for index, node in enumerate(_kss_nodes(cluster), 1):
        yield ("," if index > 1 else "") + _compact(node)
    for manifest, bodies in _kss_pods(cluster):
        history = [_kss_annotation_forms(*body) for body in bodies]
        yield ("," if index else "") + kss_text.pod_text(manifest, history)
        index += 1
    yield "]}"


def _kss_annotation_forms(body: bytes, node_order_id: int | None) -> dict[str, tuple[str, str]]:
    trace = decode_body_trace(body, node_order_id)
    if trace is None:  # stored as the documented JSON (an imported cluster's)
        return kss_text.annotation_forms(decode_body(body, node_order_id))
    return kss_text.annotation_forms(trace)


_KSS_LIST = {"apiVersion": "v1", "kind": "List", "metadata": {"resourceVersion": ""}}


# ---------------------------------------------------------------------------------------------
# Import


def _bad(message: str) -> ServiceError:
    return ServiceError([message])


def _parse_jsonl(text: str) -> tuple[dict[str, Any], list[dict[str, Any]]] | None:
    """(header, traces) of a JSON-lines trace file, or None when the text is not one."""
    lines = [(n, line) for n, line in enumerate(text.splitlines(), 1) if line.strip()]
    if not lines:
        return None
    try:
        header = json.loads(lines[0][1], parse_int=parse_json_int)
    except json.JSONDecodeError:
        return None
    if not isinstance(header, dict) or header.get("kind") != TRACE_KIND:
        return None
    if header.get("schemaVersion") != SCHEMA_VERSION:
        raise _bad(
            f"line {lines[0][0]}: schemaVersion: Unsupported value: "
            f"{header.get('schemaVersion')!r}: supported values: {SCHEMA_VERSION}"
        )
    traces: list[dict[str, Any]] = []
    seen: set[int] = set()
    for number, line in lines[1:]:
        try:
            trace = json.loads(line, parse_int=parse_json_int)
        except json.JSONDecodeError as error:
            raise _bad(f"line {number}: not JSON: {error}") from None
        unstorable = unstorable_value(trace)
        if unstorable is not None:
            raise _bad(f"line {number}: {unstorable[0]}: Invalid value: {unstorable[1]}")
        if not isinstance(trace, dict) or not isinstance(trace.get("pod"), str):
            raise _bad(f"line {number}: a cycle must be a JSON object with a pod")
        for name in ("cycle", "attempt"):
            value = trace.get(name) if name == "cycle" else trace.get(name) or 0
            if isinstance(value, bool) or not isinstance(value, int):
                raise _bad(f"line {number}: {name}: Required value: an integer")
            if not 0 <= value <= MAX_STORED_INT:
                raise _bad(
                    f"line {number}: {name}: Invalid value: must be between 0 and {MAX_STORED_INT}"
                )
        if trace["cycle"] in seen:
            raise _bad(f"line {number}: cycle: Duplicate value: {trace['cycle']}")
        seen.add(trace["cycle"])
        traces.append(trace)
    return header, traces


def _skeleton_node(name: str) -> dict[str, Any]:
    return {"apiVersion": "v1", "kind": "Node", "metadata": {"name": name}}


def _skeleton_pod(key: str, profile: str, node: str) -> dict[str, Any]:
    namespace, _, name = key.rpartition("/")
    spec: dict[str, Any] = {"containers": [{"name": "main", "image": "unknown"}]}
    if profile:
        spec["schedulerName"] = profile
    if node:
        spec["nodeName"] = node
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": name, "namespace": namespace or "default"},
        "spec": spec,
    }


def _skeletons(traces: list[dict[str, Any]], objects: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """What the input lacks, from what the traces name: nodes (names only) when it has no Node,
    pods (name, profile, node) when it has no Pod, and the PriorityClasses its pods name.

    An input that holds some pods holds all there are: a pod it lacks was deleted since."""
    have = {
        (
            o.get("kind"),
            (o.get("metadata") or {}).get("namespace") or "default",
            o["metadata"]["name"],
        )
        for o in objects
        if isinstance(o.get("metadata"), dict) and o["metadata"].get("name")
    }
    kinds = {kind for kind, _, _ in have}
    made: list[dict[str, Any]] = []
    if "Node" not in kinds:
        node_names: dict[str, None] = {}
        for trace in traces:
            node_names.update(
                dict.fromkeys([*(trace.get("filter") or {}), *(trace.get("scores") or {})])
            )
        made.extend(_skeleton_node(name) for name in node_names)
    if "Pod" not in kinds:
        last = {trace["pod"]: trace for trace in traces}
        for key, trace in last.items():
            bound = trace.get("node") if trace.get("result") == RESULT_SCHEDULED else ""
            made.append(_skeleton_pod(key, str(trace.get("profile") or ""), bound or ""))
    made.extend(_missing_priority_classes([*objects, *made], have))
    return made


def _missing_priority_classes(
    objects: list[dict[str, Any]], have: set[tuple[Any, str, Any]]
) -> list[dict[str, Any]]:
    """PriorityClasses the pods name but the input lacks (a kss List holds only pods), with the
    value and preemption policy admission gave the pods, so that it accepts them unchanged."""
    classes: dict[str, dict[str, Any]] = {}
    for obj in objects:
        spec = (obj.get("spec") if obj.get("kind") == "Pod" else None) or {}
        name = spec.get("priorityClassName")
        unknown = isinstance(name, str) and ("PriorityClass", "default", name) not in have
        if unknown and not str(name).startswith("system-"):
            priority_class = {
                "apiVersion": "scheduling.k8s.io/v1",
                "kind": "PriorityClass",
                "metadata": {"name": name},
                "value": int(spec.get("priority") or 0),
            }
            if spec.get("preemptionPolicy"):
                priority_class["preemptionPolicy"] = spec["preemptionPolicy"]
            classes.setdefault(str(name), priority_class)
    return list(classes.values())


def _default_profile_plugins() -> tuple[dict[str, int], dict[str, int]]:
    """The default profile's plugins: their order, and their score weights (unset: 1)."""
    enabled = default_configuration().profiles[0].plugins.multi_point.enabled
    return (
        {p.name: i for i, p in enumerate(enabled)},
        {p.name: p.weight or 1 for p in enabled},
    )


def _kss_json(annotations: Mapping[str, str], key: str) -> Any:
    raw = annotations.get(key)
    if not raw:
        return {}
    try:
        return json.loads(raw)
    except ValueError:  # not JSON, or an integer over Python's digit limit
        raise _bad(f"annotation {key}: not JSON") from None


def _kss_points(point: str, results: Mapping[str, Any] | None) -> list[dict[str, Any]]:
    """Point records from a kss map: plugin -> status word, or (Filter, Score) -> run counts.

    The simulator writes a status's message, ``success`` for Success: a Skip (a PreFilter or
    PreScore with nothing to do for the pod) has no message, so an empty word is a Skip."""
    points = []
    for plugin, word in (results or {}).items():
        record: dict[str, Any] = {"point": point, "plugin": plugin}
        if isinstance(word, dict) or word == KSS_SUCCESS:
            record["code"] = "Success"
        elif word == KSS_WAIT:
            record["code"] = "Wait"
        elif word == "":
            record["code"] = "Skip"
        else:
            record.update(code="Unschedulable", reasons=[word] if word else [])
        record["durationMs"] = 0.0
        if isinstance(word, dict) and word.get("calls", 1) != 1:
            record["calls"] = word["calls"]
        points.append(record)
    return points


def _trace_from_kss(
    annotations: Mapping[str, str], pod: str, profile: str, cycle: int, attempt: int, total: int
) -> dict[str, Any]:
    """One attempt's trace rebuilt from its kss annotations (see KSS_IMPORT_LOSSES)."""
    order, weights = _default_profile_plugins()
    filter_json: dict[str, list[dict[str, Any]]] = {}
    for node, per_plugin in (_kss_json(annotations, KSS_FILTER) or {}).items():
        entries = []
        for plugin in sorted(per_plugin, key=lambda p: (order.get(p, len(order)), p)):
            result = per_plugin[plugin]
            if result == KSS_PASSED:
                entries.append({"plugin": plugin, "code": "Success"})
            else:
                entries.append({"plugin": plugin, "code": "Unschedulable", "reasons": [result]})
        filter_json[node] = entries
    feasible = [n for n, e in filter_json.items() if all(x["code"] == "Success" for x in e)]
    scores: dict[str, dict[str, dict[str, int]]] = {}
    final = _kss_json(annotations, KSS_FINALSCORE) or {}
    for node, per_plugin in (_kss_json(annotations, KSS_SCORE) or {}).items():
        for plugin, raw in per_plugin.items():
            weight = weights.get(plugin, 1)
            weighted = int((final.get(node) or {}).get(plugin, raw))
            scores.setdefault(node, {})[plugin] = {
                "raw": int(raw),
                "normalized": weighted // weight if weight else weighted,
                "weight": weight,
                "weighted": weighted,
            }
    point_maps = {point: _kss_json(annotations, key) for key, point in KSS_STATUS_POINTS.items()}
    ran: dict[str, list[list[str]]] = {
        "Filter": [[e["plugin"] for e in entries] for entries in filter_json.values()],
        "Score": [list(per_plugin) for per_plugin in scores.values()],
    }
    for point, plugins_per_node in ran.items():
        runs: dict[str, dict[str, Any]] = {}
        for plugins in plugins_per_node:
            for plugin in plugins:
                runs.setdefault(plugin, {"calls": 0})["calls"] += 1
        point_maps[point] = runs
    nominated = None
    post_filter: dict[str, dict[str, Any]] = {}
    for node, per_plugin in (_kss_json(annotations, KSS_POSTFILTER) or {}).items():
        for plugin, word in per_plugin.items():
            if word == KSS_PREEMPTION_VICTIM:
                nominated = node
                post_filter[plugin] = {}
    point_maps["PostFilter"] = post_filter
    points: list[dict[str, Any]] = []
    for point in ("PreFilter", "Filter", "PostFilter", "PreScore", "Score", "Reserve", "Permit"):
        points.extend(_kss_points(point, point_maps[point]))
    for point in ("PreBind", "Bind"):
        points.extend(_kss_points(point, point_maps[point]))
    selected = annotations.get(KSS_SELECTED_NODE) or None
    bind = point_maps["Bind"] or {}
    if selected and bind and all(word == KSS_SUCCESS for word in bind.values()):
        result = RESULT_SCHEDULED
    elif selected:
        result = RESULT_ERROR
    else:
        result = RESULT_UNSCHEDULABLE
    pre_filter_nodes = None
    for nodes in (_kss_json(annotations, KSS_PREFILTER) or {}).values():
        names = set(nodes)
        pre_filter_nodes = names if pre_filter_nodes is None else pre_filter_nodes & names
    totals = {node: sum(v["weighted"] for v in per.values()) for node, per in scores.items()}
    # Every node with the top total, as selectHost's reservoir sampling saw them (the walk
    # order is not kept: by name, the selected one first).
    top = max(totals.values(), default=None)
    tied = sorted(n for n, total in totals.items() if total == top and n != selected)
    tie_set = ([selected] if selected else []) + (tied if selected in totals else [])
    skipped = [p["plugin"] for p in points if p["point"] == "PreFilter" and p["code"] == "Skip"]
    return {
        "cycle": cycle,
        "pod": pod,
        "profile": profile,
        "attempt": attempt,
        "time": 0.0,
        "wallTime": 0.0,
        "result": result,
        "node": selected,
        "message": "",
        "feasibleNodes": len(feasible),
        "evaluatedNodes": len(filter_json),
        "totalNodes": total,
        "startIndex": 0,
        "nominatedNodeTried": None,
        "preFilter": {
            "nodes": sorted(pre_filter_nodes) if pre_filter_nodes is not None else None,
            "status": None,
        },
        "skippedFilterPlugins": skipped,
        "filter": filter_json,
        "notEvaluated": [],
        "scores": scores,
        "totals": totals,
        "selected": {"node": selected, "tieSet": tie_set},
        "points": points,
        "queue": {},
        "nominatedNode": nominated,
        "preemption": {
            "nominatedNode": nominated,
            "victims": [],
            "candidates": None,
            "criterion": None,
        }
        if nominated
        else None,
        "extenders": [],
        "events": [],
        "imported": "kube-scheduler-simulator",
    }


def _parse_kss(text: str) -> tuple[list[dict[str, Any]], list[dict[str, Any]]] | None:
    """(objects with kss annotations removed, traces) of a kss-annotated List, or None."""
    try:
        document = yaml.safe_load(text)
    except (yaml.YAMLError, ValueError):  # ValueError: an integer over Python's digit limit
        return None
    if not isinstance(document, dict) or not isinstance(document.get("items"), list):
        return None
    items = [i for i in document["items"] if isinstance(i, dict)]
    total = sum(1 for i in items if i.get("kind") == "Node")
    objects: list[dict[str, Any]] = []
    traces: list[dict[str, Any]] = []
    found = False
    for item in items:
        metadata: dict[str, Any] = (
            item["metadata"] if isinstance(item.get("metadata"), dict) else {}
        )
        annotations = dict(metadata.get("annotations") or {})
        kss = {k: v for k, v in annotations.items() if k.startswith(KSS_PREFIX)}
        if item.get("kind") == "Pod" and kss:
            found = True
            history = _kss_json(kss, KSS_RESULT_HISTORY) or [kss]
            if not isinstance(history, list):
                raise _bad(f"annotation {KSS_RESULT_HISTORY}: must be a JSON array")
            key = f"{metadata.get('namespace') or 'default'}/{metadata.get('name')}"
            profile = (item.get("spec") or {}).get("schedulerName") or "default-scheduler"
            for attempt, entry in enumerate(history, 1):
                nodes = total or len(_kss_json(entry, KSS_FILTER) or {})
                traces.append(_trace_from_kss(entry, key, profile, len(traces) + 1, attempt, nodes))
            item = json.loads(json.dumps(item))
            rest = {k: v for k, v in annotations.items() if k not in kss}
            if rest:
                item["metadata"]["annotations"] = rest
            else:
                item["metadata"].pop("annotations", None)
        objects.append(item)
    return (objects, traces) if found else None


def _events(traces: list[dict[str, Any]]) -> list[SchedulerEvent]:
    """The events the cycles recorded (Scheduled, FailedScheduling, and their Preempted)."""
    return [
        SchedulerEvent(
            type=e.get("type", ""),
            reason=e.get("reason", ""),
            object=e.get("object", ""),
            message=e.get("message", ""),
            time=float(trace.get("time") or 0.0),
        )
        for trace in traces
        for e in [
            *(trace.get("events") or []),
            *((trace.get("preemption") or {}).get("events") or []),
        ]
        if isinstance(e, dict)
    ]


def free_cluster_name(*, owner: User | None, base: str) -> str:
    """``base``, or ``base (2)``, ``base (3)``... whichever the owner has no cluster called."""
    base = base.strip()[: services.CLUSTER_NAME_MAX_LENGTH - 5] or "imported"
    taken = set(Cluster.objects.filter(owner=owner).values_list("name", flat=True))
    name, number = base, 1
    while name in taken:
        number += 1
        name = f"{base} ({number})"
    return name


def import_name(*, owner: User | None, text: str) -> str:
    """A free name for an import: the exported cluster's (from a JSON-lines header)."""
    first = next((line for line in text.splitlines() if line.strip()), "")
    try:
        header = json.loads(first, parse_int=parse_json_int)
    except json.JSONDecodeError:
        header = None
    base = "imported"
    if isinstance(header, dict) and isinstance(header.get("cluster"), str):
        base = header["cluster"]
    return free_cluster_name(owner=owner, base=base)


def trace_import(*, name: str, owner: User | None, text: str) -> Cluster:
    """A new cluster holding what a JSON-lines trace file or a kss-annotated List holds.

    The cluster is virtual and paused: its pods and nodes are there to look at with the cycles
    that placed them, and nothing runs until someone resumes it. All or nothing: bad input
    raises ServiceError and writes nothing.
    """
    parsed = _parse_jsonl(text)
    config: dict[str, Any] | None = None
    if parsed is not None:
        header, traces = parsed
        objects = [o for o in header.get("objects") or [] if isinstance(o, dict)]
        if isinstance(header.get("schedulerConfiguration"), dict):
            config = header["schedulerConfiguration"]
    else:
        kss = _parse_kss(text)
        if kss is None:
            raise _bad(
                "expected a schedviz trace (JSON lines after a header with "
                f'"kind": "{TRACE_KIND}") or a List of pods annotated by kube-scheduler-simulator'
            )
        objects, traces = kss
    objects = [*objects, *_skeletons(traces, objects)]
    documents: list[Any] = [{"apiVersion": "v1", "kind": "List", "items": objects}]
    if config is not None:
        documents.append(config)
    with transaction.atomic():
        cluster = services.cluster_create(
            name=name,
            owner=owner,
            clock_mode=Cluster.ClockMode.VIRTUAL,
            run_state=Cluster.RunState.PAUSED,
        )
        if objects or config is not None:
            services.manifests_apply(
                cluster=cluster, text="\n---\n".join(json.dumps(d) for d in documents)
            )
        if traces:
            services.cycles_create(cluster=cluster, traces=traces)
            services.events_create(cluster=cluster, events=_events(traces))
            last_time = max(float(t.get("time") or 0.0) for t in traces)
            Cluster.objects.filter(id=cluster.id).update(scheduler_time=last_time)
            cluster.scheduler_time = last_time
    return cluster


# The annotation keys are kss_text's, named here as well for the export's readers.
__all__ = [
    "KSS_BIND",
    "KSS_FILTER",
    "KSS_FINALSCORE",
    "KSS_IMPORT_LOSSES",
    "KSS_PASSED",
    "KSS_PERMIT",
    "KSS_PERMIT_TIMEOUT",
    "KSS_POSTFILTER",
    "KSS_PREBIND",
    "KSS_PREEMPTION_VICTIM",
    "KSS_PREFILTER",
    "KSS_PREFILTER_STATUS",
    "KSS_PREFIX",
    "KSS_PRESCORE",
    "KSS_RESERVE",
    "KSS_RESULT_HISTORY",
    "KSS_SCORE",
    "KSS_SELECTED_NODE",
    "KSS_SUCCESS",
    "KSS_WAIT",
    "TRACE_KIND",
    "free_cluster_name",
    "import_name",
    "kss_annotations",
    "trace_export_jsonl",
    "trace_export_kss",
    "trace_export_kss_text",
    "trace_import",
]
