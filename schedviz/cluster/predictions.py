"""Predict, then reveal: a learner's guesses of where pods land, kept per cluster.

Before a cycle runs (the cluster paused) the learner guesses the node a pending pod lands on, or
that it fits nowhere (``prediction_create``). Once the pod's next cycle has run, the guess is
revealed against that cycle's trace (``predictions_reveal``): the cycle's number and whether the
guess was right are stored, and ``schedviz.scheduler.prediction.reveal`` says where it went wrong.
Writes are services (one transaction each), reads are selectors, as in ``services`` and
``selectors.py``.
"""

from __future__ import annotations

from dataclasses import dataclass

from django.db import transaction
from django.db.models import Count, Max, Q, QuerySet
from django.utils import timezone

from schedviz.cluster.models import Cluster, Cycle, Node, Pod, Prediction
from schedviz.cluster.services import ServiceError
from schedviz.kube.errors import go_quote
from schedviz.scheduler.prediction import (
    RESULT_SCHEDULED,
    RESULT_WAITING,
    UNSCHEDULABLE,
    Reveal,
    reveal,
)

# Shown in the dashboard's history of guesses.
HISTORY_LENGTH = 10


def _validate(cluster: Cluster, namespace: str, name: str, node: str) -> list[str]:
    errors = []
    if cluster.run_state != Cluster.RunState.PAUSED:
        errors.append("cluster: pause the scheduler first: a guess is made before the pod's cycle")
    elif cluster.pending_steps:
        errors.append("cluster: a step is still running; guess once it has finished")
    pod = Pod.objects.filter(cluster=cluster, namespace=namespace, name=name).first()
    if pod is None:
        errors.append(f"pod: pods {go_quote(name)} not found in namespace {go_quote(namespace)}")
    elif pod.node_name:
        errors.append(f"pod: {namespace}/{name} is bound to {pod.node_name} already")
    if node != UNSCHEDULABLE and not Node.objects.filter(cluster=cluster, name=node).exists():
        errors.append(f"node: nodes {go_quote(node)} not found")
    return errors


def prediction_create(*, cluster: Cluster, namespace: str, name: str, node: str) -> Prediction:
    """The learner's guess that the pod lands on ``node`` (``UNSCHEDULABLE``: nowhere) in its
    next cycle. The cluster must be paused with no step running, the pod pending and the node
    one of the cluster's. A guess about the same pod not revealed yet is replaced."""
    with transaction.atomic():
        current = Cluster.objects.get(pk=cluster.pk)
        errors = _validate(current, namespace, name, node)
        if errors:
            raise ServiceError(errors)
        after = Cycle.objects.filter(cluster=cluster).aggregate(m=Max("number"))["m"] or 0
        open_guess = Prediction.objects.filter(
            cluster=cluster, pod_namespace=namespace, pod_name=name, revealed_cycle__isnull=True
        ).first()
        if open_guess is None:
            return Prediction.objects.create(
                cluster=cluster,
                pod_namespace=namespace,
                pod_name=name,
                node=node,
                after_cycle=after,
            )
        open_guess.node, open_guess.after_cycle = node, after
        open_guess.created_at = timezone.now()
        open_guess.save(update_fields=["node", "after_cycle", "created_at"])
        return open_guess


def _next_cycle(prediction: Prediction) -> Cycle | None:
    return (
        Cycle.objects.filter(
            cluster_id=prediction.cluster_id,
            pod_namespace=prediction.pod_namespace,
            pod_name=prediction.pod_name,
            number__gt=prediction.after_cycle,
        )
        .order_by("number")
        .first()
    )


def predictions_reveal(*, cluster: Cluster) -> list[Prediction]:
    """Reveals every open guess whose pod's next cycle has run (and is not waiting at Permit):
    stores the cycle's number and whether the guess was right. Returns those revealed now.
    Safe to call from several places at once: a guess is revealed once."""
    open_guesses = list(Prediction.objects.filter(cluster=cluster, revealed_cycle__isnull=True))
    due: list[tuple[Prediction, Cycle]] = []
    for prediction in open_guesses:
        cycle = _next_cycle(prediction)
        if cycle is not None and cycle.result != RESULT_WAITING:
            due.append((prediction, cycle))
    if not due:
        return []
    revealed = []
    with transaction.atomic():
        for prediction, cycle in due:
            correct = reveal(cycle.trace(), prediction.node).correct
            updated = Prediction.objects.filter(
                pk=prediction.pk, revealed_cycle__isnull=True
            ).update(revealed_cycle=cycle.number, correct=correct)
            if updated:
                prediction.revealed_cycle, prediction.correct = cycle.number, correct
                revealed.append(prediction)
    return revealed


# ---------------------------------------------------------------------------------------------
# Selectors


@dataclass(frozen=True, slots=True)
class Tally:
    right: int
    wrong: int

    @property
    def total(self) -> int:
        return self.right + self.wrong


def prediction_tally(*, cluster: Cluster) -> Tally:
    """How many revealed guesses were right and wrong."""
    counts = Prediction.objects.filter(cluster=cluster, revealed_cycle__isnull=False).aggregate(
        right=Count("id", filter=Q(correct=True)), wrong=Count("id", filter=Q(correct=False))
    )
    return Tally(right=counts["right"], wrong=counts["wrong"])


def predictions_open(*, cluster: Cluster) -> QuerySet[Prediction]:
    """The guesses still waiting for their pod's cycle, oldest first."""
    return Prediction.objects.filter(cluster=cluster, revealed_cycle__isnull=True).order_by("id")


@dataclass(frozen=True, slots=True)
class Revealed:
    prediction: Prediction
    # None when the cycle is no longer kept (trace retention).
    reveal: Reveal | None
    # After a preemption: the later cycle that bound the pod, once it has run.
    bound_cycle: int | None = None
    bound_node: str = ""


def predictions_history(*, cluster: Cluster, limit: int = HISTORY_LENGTH) -> list[Prediction]:
    """The latest revealed guesses, newest first."""
    return list(
        Prediction.objects.filter(cluster=cluster, revealed_cycle__isnull=False).order_by(
            "-revealed_cycle", "-id"
        )[:limit]
    )


def prediction_reveal_get(*, prediction: Prediction) -> Revealed:
    """A revealed guess with its reveal, read from the trace of the cycle it was revealed
    against (None when that cycle is no longer kept)."""
    number = prediction.revealed_cycle
    row = None
    if number is not None:
        row = Cycle.objects.filter(cluster_id=prediction.cluster_id, number=number).first()
    if row is None:
        return Revealed(prediction, None)
    found = reveal(row.trace(), prediction.node)
    if not found.nominated_node:
        return Revealed(prediction, found)
    bound = (
        Cycle.objects.filter(
            cluster_id=prediction.cluster_id,
            pod_namespace=prediction.pod_namespace,
            pod_name=prediction.pod_name,
            number__gt=row.number,
            result=RESULT_SCHEDULED,
        )
        .order_by("number")
        .values_list("number", "node")
        .first()
    )
    if bound is None:
        return Revealed(prediction, found)
    return Revealed(prediction, found, bound_cycle=bound[0], bound_node=bound[1])


__all__ = [
    "Revealed",
    "Tally",
    "prediction_create",
    "prediction_reveal_get",
    "prediction_tally",
    "predictions_history",
    "predictions_open",
    "predictions_reveal",
]
