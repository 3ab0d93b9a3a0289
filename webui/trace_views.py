"""The pages that explain a decision: a cycle's trace and a pod's attempts (the scheduler profiles
are webui/profile_views.py).

Views parse input, call the selectors (reads), and render. The trace is laid out as rows and
cells by webui/trace_tables.py.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import yaml
from django.http import Http404, HttpRequest, HttpResponse
from django.shortcuts import render
from django.views.decorators.http import require_http_methods
from django_htmx.middleware import HtmxDetails

from schedviz.cluster import attempts as pod_attempts
from schedviz.cluster import selectors
from schedviz.cluster.models import Cluster
from schedviz.cluster.services import ObjectNotFound
from schedviz.scheduler.backend.queue.scheduling_queue import (
    DEFAULT_POD_MAX_IN_UNSCHEDULABLE_PODS_DURATION,
)
from webui import access
from webui.trace_tables import (
    extender_calls,
    filter_matrix,
    point_rows,
    queue_parts,
    score_table,
    split_key,
)


def _cluster(request: HttpRequest, cluster_id: int) -> Cluster:
    """The page's cluster: read with a share link too, written by its owner alone."""
    return access.cluster_for(request, cluster_id)


def _htmx_target(request: HttpRequest) -> str | None:
    """The id of the element an htmx request will swap (None for a plain request)."""
    htmx: HtmxDetails | None = getattr(request, "htmx", None)
    return htmx.target if htmx else None


def _int_param(request: HttpRequest, name: str, default: int = 1) -> int:
    try:
        return max(1, int(request.GET.get(name, default)))
    except ValueError:
        return default


# ---------------------------------------------------------------------------------------------
# The cycle page


@require_http_methods(["GET", "HEAD"])
def cycle(request: HttpRequest, cluster_id: int, number: int) -> HttpResponse:
    """One scheduling cycle: every extension point, the filter matrix, the scores, preemption."""
    cluster = _cluster(request, cluster_id)
    try:
        trace = selectors.cycle_get(cluster=cluster, number=number)
    except ObjectNotFound as error:
        raise Http404(error.errors[0]) from None
    later = selectors.cycle_list(cluster=cluster, after=number, limit=1)
    namespace, name = split_key(str(trace.get("pod", "")))
    preemption = trace.get("preemption") or None
    context = {
        "cluster": cluster,
        "trace": trace,
        "pod_namespace": namespace,
        "pod_name": name,
        "points": point_rows(trace),
        "matrix": filter_matrix(
            trace, page=_int_param(request, "fpage"), reason=request.GET.get("reason", "")
        ),
        "scores": score_table(
            trace, sort=request.GET.get("sort", ""), page=_int_param(request, "spage")
        ),
        "queue": queue_parts(trace),
        "extenders": extender_calls(trace),
        "preemption": preemption,
        "victims": [split_key(v) for v in (preemption or {}).get("victims") or []],
        "previous_number": number - 1 if number > 1 else None,
        "next_number": next((c.number for c in later), None),
    }
    template = "webui/trace/cycle.html"
    target = _htmx_target(request)
    if target in ("scores", "filter-matrix"):
        template += "#" + target
    return render(request, template, context)


# ---------------------------------------------------------------------------------------------
# The pod page


def _diff_choice(request: HttpRequest, attempts: Sequence[Mapping[str, Any]]) -> tuple[int, int]:
    """The two attempts to compare: ?a=&b= (cycle numbers), else the last two."""
    numbers = [int(a["cycle"]) for a in attempts]
    defaults = (numbers[-2], numbers[-1]) if len(numbers) > 1 else (0, 0)
    try:
        chosen = (int(request.GET["a"]), int(request.GET["b"]))
    except (KeyError, ValueError):
        return defaults
    return chosen if all(n in numbers for n in chosen) else defaults


@require_http_methods(["GET", "HEAD"])
def pod(request: HttpRequest, cluster_id: int, namespace: str, name: str) -> HttpResponse:
    """A pod: its manifest and status, every scheduling attempt (two compared side by side),
    why it is Pending, its events."""
    cluster = _cluster(request, cluster_id)
    try:
        row = selectors.pod_get(cluster=cluster, namespace=namespace, name=name)
    except ObjectNotFound:
        row = None
    attempts = selectors.cycles_for_pod(cluster=cluster, namespace=namespace, name=name)
    if row is None and not attempts:
        raise Http404(f'pods "{name}" not found')
    why = None
    if row is not None and not row.node_name:
        why = pod_attempts.pod_diagnosis(cluster=cluster, namespace=namespace, name=name)
    diff_a, diff_b = _diff_choice(request, attempts)
    diff = None
    if diff_a and diff_b:
        diff = pod_attempts.pod_attempt_diff(
            cluster=cluster, namespace=namespace, name=name, before=diff_a, after=diff_b
        )
    context = {
        "cluster": cluster,
        "namespace": namespace,
        "name": name,
        "pod": row,
        "manifest": yaml.safe_dump(row.manifest, sort_keys=False) if row is not None else "",
        "attempts": attempts,
        "why": why.diagnosis if why is not None else None,
        "gates": why.scheduling_gates if why is not None else (),
        "max_unschedulable_seconds": DEFAULT_POD_MAX_IN_UNSCHEDULABLE_PODS_DURATION,
        "diff": diff,
        "diff_a": diff_a,
        "diff_b": diff_b,
        "events": selectors.events_for_object(cluster=cluster, namespace=namespace, name=name),
    }
    template = "webui/trace/pod.html"
    if _htmx_target(request) == "attempt-diff":
        template = "webui/trace/pod_history.html#attempt_diff"
    return render(request, template, context)
