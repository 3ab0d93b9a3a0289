"""The built-in lessons: small clusters that each show one thing the scheduler does.

A lesson is a folder ``schedviz/lessons/<slug>/`` with ``lesson.yaml`` and ``manifests.yaml`` (the
objects, maybe a KubeSchedulerConfiguration), and maybe ``scenario.yaml``: the lesson over time, a
Scenario run from an empty cluster (docs/scenarios.md). ``lesson.yaml`` holds the title, summary,
teaches, the explanation (how the scheduler works here, never what will happen), things to try, and
the lesson's **steps**: one per scheduling cycle the lesson's cluster runs, in the order it runs
them, each with its claims as data (``expect``: the result, the node, the tie if there is one, the
nodes rejected and why, totals, raw scores, the nomination and its victims) and the text that tells
and explains it (``reveal``, shown once that cycle has run). ``end`` says which pods stay Pending
and what the lesson taught. ``claims_problems`` compares every claim with the traces of a run
(tests/lessons run each lesson through the engine and through the app's runner).

Loading a lesson makes a new cluster named after it, in virtual time, with the manifests applied
through ``services.manifests_apply``; the cluster remembers the lesson (``Cluster.lesson``), so
its dashboard can show the lesson beside it, with its progress (``lesson_progress``), and
``lesson_restart`` loads the lesson's objects into it again.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from importlib import resources
from importlib.resources.abc import Traversable
from typing import Any

import yaml
from django.contrib.auth.models import User
from django.db import transaction

from schedviz.cluster import services
from schedviz.cluster.exports import free_cluster_name
from schedviz.cluster.models import Cluster, Cycle
from schedviz.cluster.services import ObjectNotFound
from schedviz.kube.errors import go_quote
from schedviz.kube.load import load_manifests

LESSON_FILE = "lesson.yaml"
MANIFESTS_FILE = "manifests.yaml"
SCENARIO_FILE = "scenario.yaml"
# A configuration without profiles: applied, it leaves the cluster on the default profile.
DEFAULT_CONFIGURATION = (
    "apiVersion: kubescheduler.config.k8s.io/v1\nkind: KubeSchedulerConfiguration\n"
)
# What a step may claim (``expect``), each compared with the trace by ``claims_problems``.
CLAIM_KEYS = frozenset(
    {
        "result",
        "node",
        "tie",
        "profile",
        "rejected",
        "totals",
        "raw",
        "nominated",
        "victims",
        "message",
    }
)
RESULTS = ("Scheduled", "Unschedulable")
_BOLD = re.compile(r"\*\*(.+?)\*\*")


class LessonFileError(ValueError):
    """A lesson.yaml that does not say what a lesson must (the message names the field)."""


@dataclass(frozen=True, slots=True)
class LessonStep:
    """One scheduling cycle of the lesson: the pod popped, what happens, and the text telling it.

    ``attempt`` counts the pod's cycles (1 for its first); ``expect`` holds the claims."""

    pod: str
    attempt: int
    expect: Mapping[str, Any]
    reveal: str

    @property
    def outcome_nodes(self) -> frozenset[str]:
        """The nodes the step names as its outcome: where the pod lands (or any of a tie),
        where it is nominated."""
        nodes = {self.expect.get("node") or "", self.expect.get("nominated") or ""}
        nodes.update(self.expect.get("tie") or ())
        return frozenset(nodes - {""})

    def to_json(self) -> dict[str, Any]:
        """The step without its outcome (what a learner predicts)."""
        return {"pod": self.pod, "attempt": self.attempt}


@dataclass(frozen=True, slots=True)
class LessonInfo:
    slug: str
    title: str
    summary: str
    explanation: str
    things_to_try: tuple[str, ...]
    # What the lesson teaches, in a few words each (plugins, extension points, settings).
    teaches: tuple[str, ...] = ()
    # The lessons' order in a list (lesson.yaml's ``order``).
    order: int = 0
    steps: tuple[LessonStep, ...] = ()
    # Pods that stay Pending when every step has run, and what the lesson taught.
    pending: tuple[str, ...] = ()
    learnt: str = ""

    def to_json(self) -> dict[str, Any]:
        return {
            "slug": self.slug,
            "title": self.title,
            "summary": self.summary,
            "explanation": self.explanation,
            "thingsToTry": list(self.things_to_try),
            "teaches": list(self.teaches),
            "steps": [step.to_json() for step in self.steps],
            "pending": list(self.pending),
        }


@dataclass(frozen=True, slots=True)
class Lesson:
    info: LessonInfo
    manifests: str
    # The lesson over time, as a Scenario (``scenario.yaml``, docs/scenarios.md); "" without.
    scenario: str = ""


def _lessons_dir() -> Traversable:
    return resources.files("schedviz").joinpath("lessons")


def _pod_key(name: Any) -> str:
    text = str(name)
    return text if "/" in text else f"default/{text}"


def _steps(slug: str, data: Any) -> tuple[LessonStep, ...]:
    if not isinstance(data, list):
        raise LessonFileError(f"lessons/{slug}: steps: must be a list")
    steps: list[LessonStep] = []
    attempts: Counter[str] = Counter()
    for index, entry in enumerate(data):
        field = f"lessons/{slug}: steps[{index}]"
        if not isinstance(entry, dict) or "pod" not in entry:
            raise LessonFileError(f"{field}.pod: Required value")
        expect = entry.get("expect")
        if not isinstance(expect, dict) or expect.get("result") not in RESULTS:
            raise LessonFileError(f"{field}.expect.result: must be one of {', '.join(RESULTS)}")
        unknown = sorted(set(expect) - CLAIM_KEYS)
        if unknown:
            raise LessonFileError(f"{field}.expect: unknown claim {unknown[0]!r}")
        reveal = str(entry.get("reveal") or "").strip()
        if not reveal:
            raise LessonFileError(f"{field}.reveal: Required value")
        pod = _pod_key(entry["pod"])
        attempts[pod] += 1
        steps.append(LessonStep(pod=pod, attempt=attempts[pod], expect=expect, reveal=reveal))
    return tuple(steps)


def _info(slug: str, folder: Traversable) -> LessonInfo:
    data = yaml.safe_load(folder.joinpath(LESSON_FILE).read_text(encoding="utf-8"))
    end = data.get("end") or {}
    return LessonInfo(
        slug=slug,
        title=str(data["title"]),
        summary=str(data["summary"]).strip(),
        explanation=str(data["explanation"]).strip(),
        things_to_try=tuple(str(t).strip() for t in data.get("things_to_try") or []),
        teaches=tuple(str(t).strip() for t in data.get("teaches") or []),
        order=int(data.get("order", 0)),
        steps=_steps(slug, data.get("steps") or []),
        pending=tuple(_pod_key(p) for p in end.get("pending") or []),
        learnt=str(end.get("learnt") or "").strip(),
    )


def lesson_list() -> list[LessonInfo]:
    """Every lesson, in teaching order."""
    infos = [
        _info(folder.name, folder)
        for folder in _lessons_dir().iterdir()
        if folder.is_dir() and folder.joinpath(LESSON_FILE).is_file()
    ]
    return sorted(infos, key=lambda info: (info.order, info.slug))


def lesson_get(slug: str) -> Lesson:
    """The lesson and its manifests' text; ObjectNotFound if there is none of that slug."""
    folder = _lessons_dir().joinpath(slug)
    if "/" in slug or slug.startswith(".") or not folder.joinpath(LESSON_FILE).is_file():
        raise ObjectNotFound([f"lessons {go_quote(slug)} not found"])
    scenario = folder.joinpath(SCENARIO_FILE)
    return Lesson(
        info=_info(slug, folder),
        manifests=folder.joinpath(MANIFESTS_FILE).read_text(encoding="utf-8"),
        scenario=scenario.read_text(encoding="utf-8") if scenario.is_file() else "",
    )


# ---------------------------------------------------------------- claims against traces


def _rejections(trace: Mapping[str, Any]) -> dict[str, list[str]]:
    """Per node rejected at Filter (or cut at PreFilter), the reasons of its rejecting entry."""
    rejected: dict[str, list[str]] = {}
    for node, entries in (trace.get("filter") or {}).items():
        for entry in entries:
            if entry.get("code") != "Success" and not entry.get("hypothetical"):
                rejected[node] = list(entry.get("reasons") or [])
    return rejected


def step_problems(step: LessonStep, trace: Mapping[str, Any]) -> list[str]:
    """Where the step's claims and the cycle's trace (docs/trace-format.md) disagree."""
    where = f"{step.pod} (cycle {trace.get('cycle')})"
    expect = step.expect
    problems: list[str] = []

    def differ(claim: str, claimed: Any, actual: Any) -> None:
        if claimed != actual:
            problems.append(f"{where}: {claim}: the lesson says {claimed!r}, the trace {actual!r}")

    if trace.get("pod") != step.pod:
        return [
            f"{where}: the lesson expects a cycle of {step.pod}, the trace is of {trace.get('pod')}"
        ]
    differ("result", expect["result"], trace.get("result"))
    tie = sorted((trace.get("selected") or {}).get("tieSet") or [])
    if "node" in expect:
        if len(tie) > 1:
            # Decided at random among the tied nodes: only a claim of the tie is right.
            if sorted(expect.get("tie") or []) != tie or expect["node"] not in tie:
                problems.append(
                    f"{where}: node: the lesson says {expect['node']!r}, but the trace chose "
                    f"{trace.get('node')!r} at random among the {len(tie)} nodes tied "
                    f"({', '.join(tie)}): claim the tie or change the cluster so the scores decide"
                )
        else:
            differ("node", expect["node"], trace.get("node"))
    if "tie" in expect and len(tie) <= 1:
        problems.append(f"{where}: tie: the lesson claims a tie, the trace has none")
    if "profile" in expect:
        differ("profile", expect["profile"], trace.get("profile"))
    if "rejected" in expect:
        actual = _rejections(trace)
        differ("rejected nodes", sorted(expect["rejected"]), sorted(actual))
        for node, reason in expect["rejected"].items():
            if node in actual and reason not in actual[node]:
                problems.append(
                    f"{where}: rejected[{node}]: the lesson says {reason!r}, "
                    f"the trace {actual[node]!r}"
                )
    if "totals" in expect:
        differ("totals", dict(expect["totals"]), trace.get("totals"))
    for plugin, per_node in (expect.get("raw") or {}).items():
        actual_raw = {
            node: scores[plugin]["raw"]
            for node, scores in (trace.get("scores") or {}).items()
            if plugin in scores
        }
        differ(f"raw {plugin}", dict(per_node), actual_raw)
    if "nominated" in expect:
        differ("nominated", expect["nominated"], trace.get("nominatedNode"))
    if "victims" in expect:
        victims = (trace.get("preemption") or {}).get("victims") or []
        differ("victims", [_pod_key(v) for v in expect["victims"]], victims)
    if "message" in expect and not str(trace.get("message") or "").startswith(expect["message"]):
        differ("message", expect["message"], trace.get("message"))
    return problems


def text_problems(step: LessonStep, names: Iterable[str]) -> list[str]:
    """A step's text must name its outcome, and in bold only its outcome: every ``**node**``
    of the reveal (a name among ``names``, the lesson's nodes) is one the claims name."""
    nodes = set(names)
    bold = {m.group(1) for m in _BOLD.finditer(step.reveal)} & nodes
    problems = [
        f"{step.pod}: the text shows **{node}** as the outcome; the claims say "
        f"{', '.join(sorted(step.outcome_nodes)) or 'no node'}"
        for node in sorted(bold - step.outcome_nodes)
    ]
    problems += [
        f"{step.pod}: the text does not name {node} in bold, the outcome the claims give"
        for node in sorted(step.outcome_nodes - bold)
    ]
    return problems


def claims_problems(
    info: LessonInfo,
    traces: list[Mapping[str, Any]],
    placements: Mapping[str, str],
    nodes: Iterable[str],
) -> list[str]:
    """Every disagreement between the lesson's claims and a run of it: its cycles' traces in
    the order they ran, where each pod ended (``""``: Pending) and the cluster's nodes. One
    step per cycle, in order; the pods ``end.pending`` names unbound, every other pod bound."""
    problems: list[str] = []
    names = list(nodes)
    if len(traces) != len(info.steps):
        ran = ", ".join(str(t.get("pod")) for t in traces)
        problems.append(
            f"{info.slug}: the lesson has {len(info.steps)} steps, "
            f"the run {len(traces)} cycles ({ran})"
        )
    for step, trace in zip(info.steps, traces, strict=False):
        problems += step_problems(step, trace)
    for step in info.steps:
        problems += text_problems(step, names)
    pending = sorted(pod for pod, node in placements.items() if not node)
    if pending != sorted(info.pending):
        problems.append(
            f"{info.slug}: end.pending: the lesson says {sorted(info.pending)}, "
            f"the run left {pending}"
        )
    return problems


# ---------------------------------------------------------------- the lesson in a cluster


@dataclass(frozen=True, slots=True)
class LessonProgress:
    """How far a lesson's cluster has come: the steps whose cycle has run (in order, each
    with its cycle number), and the step to come."""

    done: tuple[tuple[LessonStep, int], ...]
    total: int
    next: LessonStep | None

    @property
    def complete(self) -> bool:
        return self.total > 0 and len(self.done) >= self.total


def lesson_progress(*, cluster: Cluster, info: LessonInfo) -> LessonProgress:
    """Step k is done when the cluster has run the k-th cycle of its pod's (a learner who
    changed the cluster may see the steps done out of order; each is told once it has run)."""
    seen: Counter[str] = Counter()
    cycle_of: dict[tuple[str, int], int] = {}
    rows = Cycle.objects.filter(cluster=cluster).order_by("number")
    for namespace, name, number in rows.values_list("pod_namespace", "pod_name", "number"):
        key = f"{namespace}/{name}"
        seen[key] += 1
        cycle_of.setdefault((key, seen[key]), number)
    done = tuple(
        (step, cycle_of[(step.pod, step.attempt)])
        for step in info.steps
        if (step.pod, step.attempt) in cycle_of
    )
    upcoming = next((step for step in info.steps if (step.pod, step.attempt) not in cycle_of), None)
    return LessonProgress(done=done, total=len(info.steps), next=upcoming)


def lesson_load(*, slug: str, owner: User | None = None, paused: bool = False) -> Cluster:
    """A new virtual-clock cluster named after the lesson, holding its manifests. ``paused``:
    no cycle runs until asked for (step by step, to predict each placement)."""
    lesson = lesson_get(slug)
    with transaction.atomic():
        cluster = services.cluster_create(
            name=free_cluster_name(owner=owner, base=lesson.info.title),
            owner=owner,
            clock_mode=Cluster.ClockMode.VIRTUAL,
            run_state=Cluster.RunState.PAUSED if paused else Cluster.RunState.RUNNING,
        )
        Cluster.objects.filter(pk=cluster.pk).update(lesson=slug)
        cluster.lesson = slug
        services.manifests_apply(
            cluster=cluster, text=lesson.manifests, source=f"lessons/{slug}/{MANIFESTS_FILE}"
        )
    return cluster


def lesson_restart(*, cluster: Cluster) -> Cluster:
    """The lesson's cluster as it was loaded: every object, cycle and guess deleted, the
    lesson's manifests applied again, paused at step 1 (the scheduler configuration kept)."""
    if not cluster.lesson:
        raise services.ServiceError([f"cluster {go_quote(cluster.name)} holds no lesson"])
    lesson = lesson_get(cluster.lesson)
    text = lesson.manifests
    if not load_manifests(text, MANIFESTS_FILE).scheduler_configs:
        # The profiles as a new cluster has them (none stored: the default), whatever the
        # learner changed since.
        text += "\n---\n" + DEFAULT_CONFIGURATION
    with transaction.atomic():
        services.cluster_reset(cluster=cluster)
        services.cluster_set_run_state(cluster=cluster, run_state=Cluster.RunState.PAUSED)
        services.manifests_apply(
            cluster=cluster, text=text, source=f"lessons/{cluster.lesson}/{MANIFESTS_FILE}"
        )
    return cluster


__all__ = [
    "Lesson",
    "LessonFileError",
    "LessonInfo",
    "LessonProgress",
    "LessonStep",
    "claims_problems",
    "lesson_get",
    "lesson_list",
    "lesson_load",
    "lesson_progress",
    "lesson_restart",
    "step_problems",
    "text_problems",
]
