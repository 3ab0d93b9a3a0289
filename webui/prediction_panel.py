"""What the dashboard's lesson panel and its "Predict, then reveal" panel show, as template
context: built by the dashboard view and the prediction view for a page or an htmx answer, and
by the consumer for the fragment it pushes when a cycle arrives, so all render the same partial
(webui/templates/webui/lessons/predict.html).

Reads go through the selectors of ``schedviz.cluster.predictions`` and
``schedviz.cluster.selectors``; revealing the guesses whose cycle has run is the one write
(``predictions_reveal``), made here so that a reveal shows the moment its cycle is read.
"""

from __future__ import annotations

from typing import Any

from django.template.loader import render_to_string

from schedviz.cluster import lessons, predictions, selectors
from schedviz.cluster.models import Cluster
from schedviz.cluster.models import Node as NodeRow
from schedviz.cluster.queue_state import next_to_pop
from schedviz.cluster.services import ObjectNotFound
from webui.presenters import cycle_path, latest_queue, pod_path

PREDICT_TEMPLATE = "webui/lessons/predict.html"
LESSON_PANEL_TEMPLATE = "webui/lessons/panel.html"
# Pods and nodes offered in the form; a larger cluster offers the first ones by name.
PODS_OFFERED = 100
NODES_OFFERED = 500
# Up to this many nodes are radio buttons; more are a list box.
NODE_RADIOS = 16
# The form's value for the guess "unschedulable": not a node name ('/' is never in one).
UNSCHEDULABLE_CHOICE = "/unschedulable"


def lesson_context(*, cluster: Cluster, oob: bool = False) -> dict[str, Any]:
    """The lesson the cluster was loaded from (None for any other cluster), with its progress:
    the steps whose cycle has run, each with its text and cycle (the text that tells what
    happens is shown only then), the step to come, and whether the lesson is complete."""
    if not cluster.lesson:
        return {"lesson": None}
    try:
        info = lessons.lesson_get(cluster.lesson).info
    except ObjectNotFound:
        return {"lesson": None}
    progress = lessons.lesson_progress(cluster=cluster, info=info)
    done = [
        {"number": index, "step": step, "cycle": cycle, "url": cycle_path(cluster.pk, cycle)}
        for index, (step, cycle) in enumerate(progress.done, start=1)
    ]
    return {
        "cluster": cluster,
        "lesson": info,
        "lesson_oob": oob,
        "lesson_progress": {
            "done": done,
            "latest": done[-1] if done else None,
            "earlier": list(reversed(done[:-1])),
            "count": len(done),
            "total": progress.total,
            "next": progress.next,
            "next_number": len(done) + 1,
            "complete": progress.complete,
            "pending": [pod.removeprefix("default/") for pod in info.pending],
        },
    }


def lesson_fragment(*, cluster_id: int) -> str:
    """The lesson panel as an out-of-band fragment for the websocket ("" for no lesson)."""
    cluster = Cluster.objects.filter(pk=cluster_id).first()
    if cluster is None or not cluster.lesson:
        return ""
    context = lesson_context(cluster=cluster, oob=True)
    return render_to_string(f"{LESSON_PANEL_TEMPLATE}#lesson_panel", context)


def _next_pod(cluster: Cluster, pending: list[str], active_head: str | None) -> tuple[str, str]:
    """The pod the queue pops next as far as the page can tell, and how it knows: the head of
    activeQ the runner published; else the pod the queue a runner saved (or the first runner's
    queue, before any ran) pops next, which is the queue the next runner resumes."""
    if active_head and active_head in pending:
        return active_head, "activeQ"
    queue, _, _ = latest_queue(cluster=cluster)
    head = next_to_pop(queue or {})
    if head and head in pending:
        return head, "activeQ" if (queue or {}).get("activeQ") else "backoffQ"
    return "", ""


def predict_context(
    *,
    cluster: Cluster,
    active_head: str | None = None,
    errors: list[str] | None = None,
    chosen: dict[str, str] | None = None,
    oob: bool = False,
) -> dict[str, Any]:
    """The prediction panel: the form (when paused), the open guesses, the latest reveal and
    the tally. Reveals first the guesses whose cycle has run."""
    predictions.predictions_reveal(cluster=cluster)
    paused = cluster.run_state == Cluster.RunState.PAUSED
    pending: list[str] = []
    nodes: list[str] = []
    next_pod = known_from = ""
    if paused:
        pending_pods = (
            selectors.pod_list(cluster=cluster, bound=False)
            .exclude(phase__in=["Succeeded", "Failed"])
            .values_list("namespace", "name")
        )
        pending = [f"{ns}/{name}" for ns, name in pending_pods[:PODS_OFFERED]]
        nodes = list(
            NodeRow.objects.filter(cluster=cluster)
            .order_by("name")
            .values_list("name", flat=True)[:NODES_OFFERED]
        )
        next_pod, known_from = _next_pod(cluster, pending, active_head)
        if next_pod and next_pod not in pending:
            pending.insert(0, next_pod)
    chosen = chosen or {}
    open_guesses = list(predictions.predictions_open(cluster=cluster))
    pod = chosen.get("pod") or next_pod
    node = chosen.get("node")
    if node is None:
        # The learner's open guess about the pod offered, so that it can be changed.
        node = next(
            (
                g.node or UNSCHEDULABLE_CHOICE
                for g in open_guesses
                if f"{g.pod_namespace}/{g.pod_name}" == pod
            ),
            None,
        )
    history = predictions.predictions_history(cluster=cluster)
    latest = predictions.prediction_reveal_get(prediction=history[0]) if history else None
    return {
        "cluster": cluster,
        "oob": oob,
        "predict": {
            "paused": paused,
            "pods": pending,
            "pod": pod,
            "next_pod": next_pod,
            "known_from": known_from,
            "nodes": nodes,
            "more_nodes": len(nodes) == NODES_OFFERED
            and NodeRow.objects.filter(cluster=cluster).count() > NODES_OFFERED,
            "radios": len(nodes) <= NODE_RADIOS,
            "unschedulable": UNSCHEDULABLE_CHOICE,
            "node": node,
            "errors": errors or [],
            "open": [
                {"prediction": p, "pod": f"{p.pod_namespace}/{p.pod_name}"} for p in open_guesses
            ],
            "latest": latest,
            "latest_url": (
                cycle_path(cluster.pk, latest.prediction.revealed_cycle or 0) if latest else ""
            ),
            "latest_bound_url": (
                cycle_path(cluster.pk, latest.bound_cycle) if latest and latest.bound_cycle else ""
            ),
            "latest_pod_url": (
                pod_path(
                    cluster.pk,
                    f"{latest.prediction.pod_namespace}/{latest.prediction.pod_name}",
                )
                if latest
                else ""
            ),
            "history": [
                {
                    "prediction": p,
                    "pod": f"{p.pod_namespace}/{p.pod_name}",
                    "url": cycle_path(cluster.pk, p.revealed_cycle or 0),
                }
                for p in history
            ],
            "tally": predictions.prediction_tally(cluster=cluster),
        },
    }


def predict_fragment(*, cluster_id: int, active_head: str | None, always: bool = False) -> str:
    """The panel as an out-of-band fragment for the websocket, and the lesson's panel after it
    (each cycle may reveal a step); the prediction panel is left out when nothing in it can
    have changed: a running cluster without open guesses shows only the tally (unless
    ``always``)."""
    cluster = Cluster.objects.filter(pk=cluster_id).first()
    if cluster is None:
        return ""
    lesson = lesson_fragment(cluster_id=cluster_id) if cluster.lesson else ""
    paused = cluster.run_state == Cluster.RunState.PAUSED
    if not (always or paused or predictions.predictions_open(cluster=cluster).exists()):
        return lesson
    # No request here, so no CSRF field: htmx sends the page's token in a header.
    context = predict_context(cluster=cluster, active_head=active_head, oob=True)
    return render_to_string(f"{PREDICT_TEMPLATE}#predict", context) + lesson


def active_head(queue: dict[str, Any] | None) -> str | None:
    """The pod at the head of activeQ in a queue snapshot (docs/trace-format.md ``queue``)."""
    entries = (queue or {}).get("activeQ") or []
    return str(entries[0].get("pod")) if entries and isinstance(entries[0], dict) else None
