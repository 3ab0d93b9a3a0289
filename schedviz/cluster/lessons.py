"""The built-in lessons: small clusters that each show one thing the scheduler does.

A lesson is a folder ``schedviz/lessons/<slug>/`` with ``lesson.yaml`` (title, summary,
teaches, explanation, things_to_try) and ``manifests.yaml`` (the objects, maybe a
KubeSchedulerConfiguration). Loading one makes a new cluster named after it, in virtual time,
with the manifests applied through ``services.manifests_apply``; the cluster remembers the
lesson (``Cluster.lesson``), so its dashboard can show the lesson beside it.
"""

from __future__ import annotations

from dataclasses import dataclass
from importlib import resources
from importlib.resources.abc import Traversable
from typing import Any

import yaml
from django.contrib.auth.models import User
from django.db import transaction

from schedviz.cluster import services
from schedviz.cluster.exports import free_cluster_name
from schedviz.cluster.models import Cluster
from schedviz.cluster.services import ObjectNotFound
from schedviz.kube.errors import go_quote

LESSON_FILE = "lesson.yaml"
MANIFESTS_FILE = "manifests.yaml"


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

    def to_json(self) -> dict[str, Any]:
        return {
            "slug": self.slug,
            "title": self.title,
            "summary": self.summary,
            "explanation": self.explanation,
            "thingsToTry": list(self.things_to_try),
            "teaches": list(self.teaches),
        }


@dataclass(frozen=True, slots=True)
class Lesson:
    info: LessonInfo
    manifests: str


def _lessons_dir() -> Traversable:
    return resources.files("schedviz").joinpath("lessons")


def _info(slug: str, folder: Traversable) -> LessonInfo:
    data = yaml.safe_load(folder.joinpath(LESSON_FILE).read_text(encoding="utf-8"))
    return LessonInfo(
        slug=slug,
        title=str(data["title"]),
        summary=str(data["summary"]).strip(),
        explanation=str(data["explanation"]).strip(),
        things_to_try=tuple(str(t).strip() for t in data.get("things_to_try") or []),
        teaches=tuple(str(t).strip() for t in data.get("teaches") or []),
        order=int(data.get("order", 0)),
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
    return Lesson(
        info=_info(slug, folder),
        manifests=folder.joinpath(MANIFESTS_FILE).read_text(encoding="utf-8"),
    )


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


__all__ = ["Lesson", "LessonInfo", "lesson_get", "lesson_list", "lesson_load"]
