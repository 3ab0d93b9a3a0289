"""Where the replay agrees with what the real scheduler did, and why not where it does not.

An attempt agrees when the result is the same and, for a bound pod, the node is the same or is
in the replay's tie set (marked as a tie: the random pick among equal totals may go either
way); when the feasible count, the FailedScheduling message, the victims and every score the
log gives (V(10), weighted) are the same. The feasible count is not compared when the search
stopped early (percentageOfNodesToScore: which nodes a walk of 16 goroutines reaches varies).

A disagreement says why, in the order a reviewer should look:

- ``missing-object``: the dump lacks an object the log names (a preempted victim gone from a
  dump taken afterwards, the node the pod was bound to, the pod itself);
- ``configuration``: the log's V(10) scores are the replay's normalized scores times another
  weight (the weight is inferred), or name plugins the replay's profile does not score with;
- ``drift``: a node's labels or taints in the dump differ from what the scheduler saw: the
  node the log bound the pod to fails a filter in the replay, a node the log rejected passes,
  or a node's score on a label- or taint-driven plugin differs (the node and what it has now
  are named);
- ``difference``: none of these explains it: a real difference to look into.
"""

from __future__ import annotations

import re
from collections import Counter
from dataclasses import dataclass, field
from typing import Any

from schedviz.kube.objects import Node, Pod
from schedviz.review.events import same_message
from schedviz.review.replay import ReplayedCycle, ReplayStep
from schedviz.review.timeline import (
    RESULT_SCHEDULED,
    RESULT_UNKNOWN,
    RESULT_UNSCHEDULABLE,
    Attempt,
)
from schedviz.scheduler.store import ClusterStore

KIND_AGREE = "agree"
KIND_TIE = "tie"
KIND_MISSING = "missing-object"
KIND_CONFIGURATION = "configuration"
KIND_DRIFT = "drift"
KIND_DIFFERENCE = "difference"
KIND_NOT_REPLAYED = "not-replayed"
KIND_NO_OUTCOME = "no-outcome"

# Plugins whose scores follow a node's labels or taints.
_LABEL_PLUGINS = {"NodeAffinity", "PodTopologySpread", "InterPodAffinity"}
_TAINT_PLUGINS = {"TaintToleration"}
# How many nodes a reason names before "and N more".
NAMED_NODES = 5

_REASONS = re.compile(r"^0/\d+ nodes are available: (?P<reasons>.*?)\.(?: |$)", re.S)


@dataclass
class Verdict:
    agree: bool
    kind: str
    why: str
    tie: bool = False
    differences: list[str] = field(default_factory=list)
    # plugin -> the weight the real scheduler's V(10) scores imply, where it differs
    inferred_weights: dict[str, int] = field(default_factory=dict)

    def to_json(self) -> dict[str, Any]:
        return {
            "agree": self.agree,
            "kind": self.kind,
            "tie": self.tie,
            "why": self.why,
            "differences": list(self.differences),
            "inferredWeights": dict(self.inferred_weights),
        }


def reason_counts(message: str) -> Counter[str]:
    """The "N reason" parts of a FitError's "0/N nodes are available: ..." (before the
    preemption part)."""
    match = _REASONS.match(message)
    counts: Counter[str] = Counter()
    if match is None:
        return counts
    for part in match.group("reasons").split(", "):
        number, _, reason = part.partition(" ")
        if number.isdigit():
            counts[reason] += int(number)
    return counts


def _nodes(names: list[str], total: int | None = None) -> str:
    shown = ", ".join(names[:NAMED_NODES])
    more = (len(names) if total is None else total) - min(len(names), NAMED_NODES)
    return f"{shown} and {more} more" if more > 0 else shown


class Reconciler:
    """Compares attempts with their replays, reading the dump's objects from the store."""

    def __init__(self, store: ClusterStore) -> None:
        self.store = store
        # The victims of the attempt being reconciled that the dump lacks.
        self._missing_victims: list[str] = []

    def reconcile(self, step: ReplayStep) -> Verdict:
        attempt, cycle = step.attempt, step.cycle
        self._missing_victims = step.missing_victims
        missing = self._missing(step)
        if cycle is None:
            why = "; ".join([step.skipped, *missing])
            return Verdict(False, KIND_MISSING if missing else KIND_NOT_REPLAYED, why)
        if attempt.result == RESULT_UNKNOWN:
            why = (
                "the log records no outcome for this attempt (the log ends or the process stopped)"
            )
            return Verdict(False, KIND_NO_OUTCOME, why)
        differences, tie = _differences(attempt, cycle)
        if not differences:
            why = (
                f"tie: {attempt.node} is in the replay's tie set of {cycle.tie_count} "
                f"({_nodes(cycle.tie_set, cycle.tie_count)})"
                if tie
                else ""
            )
            return Verdict(True, KIND_TIE if tie else KIND_AGREE, why, tie=tie)
        inferred = _inferred_weights(attempt, cycle)
        explanations: list[tuple[str, str]] = [(KIND_MISSING, text) for text in missing]
        if inferred:
            explanations.append((KIND_CONFIGURATION, _configuration_text(inferred, cycle)))
        unknown = sorted(
            {p for scores in attempt.scores.values() for p in scores} - set(cycle.weights)
        )
        if unknown and cycle.weights:
            explanations.append(
                (
                    KIND_CONFIGURATION,
                    f"the real scheduler scores with {', '.join(unknown)}, which the replay's "
                    "profile does not enable",
                )
            )
        explanations.extend((KIND_DRIFT, text) for text in self._drift(attempt, cycle, inferred))
        if not explanations:
            explanations.append((KIND_DIFFERENCE, "a real difference: " + "; ".join(differences)))
        kinds = [kind for kind, _ in explanations]
        kind = next(
            k for k in (KIND_MISSING, KIND_CONFIGURATION, KIND_DRIFT, KIND_DIFFERENCE) if k in kinds
        )
        why = "; ".join(text for _, text in explanations)
        return Verdict(
            False, kind, why, tie=tie, differences=differences, inferred_weights=inferred
        )

    # ------------------------------------------------------------------ missing objects

    def _missing(self, step: ReplayStep) -> list[str]:
        attempt = step.attempt
        texts = [
            f"the dump lacks {victim}, which the real scheduler preempted"
            + (f" on {attempt.nominated_node}" if attempt.nominated_node else "")
            + " (a dump taken afterwards no longer has it)"
            for victim in step.missing_victims
        ]
        if step.missing_node:
            texts.append(
                f"the dump lacks node {step.missing_node}, where the real scheduler bound the pod"
            )
        return texts

    # ------------------------------------------------------------------ drift

    def _drift(self, attempt: Attempt, cycle: ReplayedCycle, inferred: dict[str, int]) -> list[str]:
        pod = self.store.get("Pod", attempt.pod)
        texts: list[str] = []
        if attempt.result == RESULT_SCHEDULED and attempt.node in cycle.rejections:
            plugin, reasons = cycle.rejections[attempt.node]
            detail = self._node_detail(attempt.node, pod, plugin, reasons)
            texts.append(
                f"{attempt.node} fails {plugin} in the replay ({'; '.join(reasons)}), yet the "
                f"real scheduler bound the pod there: {detail}"
            )
        for name in attempt.scores:
            if name != attempt.node and name in cycle.rejections:
                plugin, reasons = cycle.rejections[name]
                texts.append(
                    f"{name} fails {plugin} in the replay ({'; '.join(reasons)}), yet the real "
                    f"scheduler found it feasible (it scored it): "
                    f"{self._node_detail(name, pod, plugin, reasons)}"
                )
        if attempt.result == RESULT_UNSCHEDULABLE:
            texts.extend(self._passing_nodes(attempt, cycle, pod))
        elif (
            attempt.feasible is not None
            and cycle.feasible > attempt.feasible
            and not _search_stopped(attempt, cycle)
            and cycle.node
        ):
            scored = bool(attempt.scores)
            if not scored or cycle.node not in attempt.scores:
                guess = "was not among the nodes it scored" if scored else "may be one"
                texts.append(
                    f"the replay finds {cycle.feasible} feasible node(s) where the real scheduler "
                    f"found {attempt.feasible}: a node that passes now did not then; "
                    f"{cycle.node}, the replay's choice, {guess} "
                    f"({self._node_state(cycle.node, pod, [])})"
                )
        if (
            not texts
            and attempt.feasible is not None
            and cycle.feasible < attempt.feasible
            and not _search_stopped(attempt, cycle)
        ) or _message_differs(attempt, cycle):
            texts.extend(self._new_rejections(attempt, cycle, pod))
        texts.extend(self._score_drift(attempt, cycle, inferred, pod))
        return texts

    def _new_rejections(self, attempt: Attempt, cycle: ReplayedCycle, pod: Any) -> list[str]:
        """The replay's rejections the real scheduler did not make: by the FitError's reasons
        when both have one, else every kind of rejection the replay made."""
        logged = reason_counts(attempt.message or attempt.event_message)
        replayed = reason_counts(cycle.message) if cycle.result == RESULT_UNSCHEDULABLE else None
        if logged and replayed is not None:
            more = {r: n - logged.get(r, 0) for r, n in replayed.items() if n > logged.get(r, 0)}
            fewer = [
                f"{logged[r] - replayed.get(r, 0)} {r}"
                for r in logged
                if logged[r] > replayed.get(r, 0)
            ]
        else:
            more = Counter(reason for _, reasons in cycle.rejections.values() for reason in reasons)
            fewer = []
        texts = []
        for reason, count in more.items():
            nodes = [
                f"{name} ({self._node_detail(name, pod, plugin, reasons)})"
                for name, (plugin, reasons) in cycle.rejections.items()
                if reason in reasons and name != attempt.node
            ]
            if nodes:
                texts.append(
                    f'{count} more node(s) fail "{reason}" in the replay than in the log, '
                    f"among {'; '.join(nodes[:NAMED_NODES])}"
                )
        if not texts:
            return []
        tail = f"; the real scheduler had {', '.join(fewer)} more" if fewer else ""
        return ["; ".join(texts) + tail]

    def _passing_nodes(self, attempt: Attempt, cycle: ReplayedCycle, pod: Any) -> list[str]:
        """Nodes the replay finds feasible that the real scheduler rejected."""
        feasible = list(cycle.feasible_sample)
        if self._missing_victims:
            # The victims' node passes because the dump lacks them: said already.
            feasible = [name for name in feasible if name != attempt.nominated_node]
        if not feasible or attempt.result != RESULT_UNSCHEDULABLE:
            return []
        logged = reason_counts(attempt.message or attempt.event_message)
        replayed = reason_counts(cycle.message) if cycle.result == RESULT_UNSCHEDULABLE else None
        fewer = [
            reason
            for reason, count in logged.items()
            if replayed is None or replayed.get(reason, 0) < count
        ]
        details = "; ".join(
            f"{name}: {self._node_state(name, pod, fewer)}" for name in feasible[:NAMED_NODES]
        )
        rejected = ", ".join(f"{logged[r]} {r}" for r in fewer) or "every node"
        return [
            f"the real scheduler rejected {rejected}; in the replay "
            f"{_nodes(feasible, cycle.feasible)} "
            f"passes every filter, so the dump differs from what it saw ({details})"
        ]

    def _score_drift(
        self, attempt: Attempt, cycle: ReplayedCycle, inferred: dict[str, int], pod: Any
    ) -> list[str]:
        texts: list[str] = []
        for node, plugins in attempt.scores.items():
            replayed = cycle.scores.get(node)
            if replayed is None:
                continue
            for plugin, score in plugins.items():
                if plugin in inferred or plugin not in replayed or replayed[plugin] == score:
                    continue
                text = (
                    f"{node} scores {score} on {plugin} in the log, {replayed[plugin]} in the "
                    "replay"
                )
                if plugin in _TAINT_PLUGINS | _LABEL_PLUGINS:
                    text += f" ({self._node_detail(node, pod, plugin, ())})"
                texts.append(text)
        return texts

    def _node_detail(self, name: str, pod: Any, plugin: str, reasons: tuple[str, ...]) -> str:
        node = self.store.get("Node", name)
        if not isinstance(node, Node):
            return f"the dump lacks node {name}"
        if plugin in _TAINT_PLUGINS or any("taint" in reason for reason in reasons):
            return f"the dump's {name} has {_taints(node)}: its taints likely changed since"
        if plugin == "NodeUnschedulable":
            return f"the dump's {name} is {'cordoned' if node.unschedulable else 'schedulable'}"
        if plugin in _LABEL_PLUGINS or any("affinity" in reason for reason in reasons):
            return f"{_labels_against(node, pod)}: its labels likely changed since"
        if plugin == "NodeResourcesFit":
            return (
                f"the dump's {name} holds other pods or allocatable than the scheduler saw "
                f"(allocatable {_allocatable(node)})"
            )
        return f"{plugin} judges the dump's {name} otherwise"

    def _node_state(self, name: str, pod: Any, reasons: list[str]) -> str:
        node = self.store.get("Node", name)
        if not isinstance(node, Node):
            return "not in the dump"
        parts = []
        if any("taint" in reason for reason in reasons) or not reasons:
            parts.append(_taints(node))
        if any("affinity" in reason or "selector" in reason for reason in reasons) or not reasons:
            parts.append(_labels_against(node, pod))
        if any("Insufficient" in reason for reason in reasons):
            parts.append(f"allocatable {_allocatable(node)}")
        if any("unschedulable" in reason for reason in reasons):
            parts.append("cordoned" if node.unschedulable else "not cordoned")
        return ", ".join(parts) or "it passes in the replay"


def _taints(node: Node) -> str:
    if not node.taints:
        return "no taints"
    return "taints " + ", ".join(str(taint) for taint in node.taints)


def _labels_against(node: Node, pod: Any) -> str:
    """What the node's labels say to the pod's nodeSelector (all labels when it has none)."""
    selector = pod.node_selector if isinstance(pod, Pod) else {}
    if not selector:
        labels = ", ".join(f"{k}={v}" for k, v in sorted(node.labels.items()))
        return f"the dump's {node.name} has labels {labels or '(none)'}"
    parts = []
    for key, wanted in sorted(selector.items()):
        have = node.labels.get(key)
        have_text = f"{key}={have}" if have is not None else f"no label {key}"
        parts.append(f"the pod needs {key}={wanted}, the dump's {node.name} has {have_text}")
    return "; ".join(parts)


def _allocatable(node: Node) -> str:
    return ", ".join(f"{k}={v}" for k, v in sorted(node.allocatable.items())) or "none"


def _message_differs(attempt: Attempt, cycle: ReplayedCycle) -> bool:
    logged = attempt.message or attempt.event_message
    return (
        attempt.result == RESULT_UNSCHEDULABLE == cycle.result
        and bool(logged)
        and not same_message(cycle.message, logged)
    )


def _search_stopped(attempt: Attempt, cycle: ReplayedCycle) -> bool:
    """Whether either walk stopped before all nodes (percentageOfNodesToScore)."""
    total = cycle.total_nodes
    return cycle.evaluated < total or (attempt.evaluated is not None and attempt.evaluated < total)


def _differences(attempt: Attempt, cycle: ReplayedCycle) -> tuple[list[str], bool]:
    differences: list[str] = []
    tie = False
    if attempt.result != cycle.result:
        where = f" on {cycle.node}" if cycle.node else ""
        logged = f" on {attempt.node}" if attempt.node else ""
        differences.append(
            f"the real scheduler's result is {attempt.result}{logged}, the replay's "
            f"{cycle.result}{where}"
        )
    elif attempt.result == RESULT_SCHEDULED and attempt.node != cycle.node:
        if attempt.node in cycle.tie_set:
            tie = True  # the replay keeps the log's node in its tie set sample when tied
        else:
            logged_total = cycle.totals.get(attempt.node)
            chosen_total = cycle.totals.get(cycle.node)
            scores = (
                f" (replay totals: {attempt.node}={logged_total}, {cycle.node}={chosen_total})"
                if logged_total is not None and chosen_total is not None
                else ""
            )
            differences.append(
                f"the real scheduler chose {attempt.node}, the replay {cycle.node}{scores}"
            )
    if (
        attempt.feasible is not None
        and attempt.feasible != cycle.feasible
        and not _search_stopped(attempt, cycle)
    ):
        differences.append(
            f"feasible nodes: {attempt.feasible} in the log, {cycle.feasible} in the replay"
        )
    logged_message = attempt.message or attempt.event_message
    if (
        attempt.result == RESULT_UNSCHEDULABLE == cycle.result
        and logged_message
        and not same_message(cycle.message, logged_message)
    ):
        differences.append(
            f'the FailedScheduling message differs: log "{logged_message}", replay '
            f'"{cycle.message}"'
        )
    if set(attempt.victims) != set(cycle.victims) and attempt.result != RESULT_SCHEDULED:
        differences.append(
            f"victims: {', '.join(attempt.victims) or 'none'} in the log, "
            f"{', '.join(cycle.victims) or 'none'} in the replay"
        )
    differences.extend(_score_differences(attempt, cycle))
    return differences, tie


def _score_differences(attempt: Attempt, cycle: ReplayedCycle) -> list[str]:
    out: list[str] = []
    for node, plugins in attempt.scores.items():
        replayed = cycle.scores.get(node)
        if replayed is None:
            out.append(f"the log scores {node}, the replay does not")
            continue
        for plugin, score in plugins.items():
            if replayed.get(plugin) != score:
                out.append(
                    f"{plugin} on {node}: {score} in the log, {replayed.get(plugin)} replayed"
                )
    for node, total in attempt.totals.items():
        if node in cycle.totals and cycle.totals[node] != total:
            out.append(f"total on {node}: {total} in the log, {cycle.totals[node]} replayed")
    return out


def _inferred_weights(attempt: Attempt, cycle: ReplayedCycle) -> dict[str, int]:
    """Plugins whose logged (weighted) scores are the replay's normalized scores times one
    other weight on every node where that normalized score is not zero."""
    inferred: dict[str, int] = {}
    for plugin, weight in cycle.weights.items():
        if weight <= 0:
            continue
        ratios: set[int] = set()
        consistent = True
        for node, plugins in attempt.scores.items():
            if plugin not in plugins or node not in cycle.scores:
                continue
            normalized = cycle.scores[node].get(plugin, 0) // weight
            logged = plugins[plugin]
            if normalized == 0:
                consistent &= logged == 0
                continue
            if logged % normalized:
                consistent = False
                continue
            ratios.add(logged // normalized)
        if consistent and len(ratios) == 1:
            (ratio,) = ratios
            if ratio != weight:
                inferred[plugin] = ratio
    return inferred


def _configuration_text(inferred: dict[str, int], cycle: ReplayedCycle) -> str:
    parts = [
        f"{plugin} weight {weight} (the replay's configuration has {cycle.weights[plugin]})"
        for plugin, weight in sorted(inferred.items())
    ]
    return (
        "the configuration differs: the real scheduler's V(10) scores imply "
        + ", ".join(parts)
        + "; give its KubeSchedulerConfiguration with --config"
    )
