"""Small helpers shared by plugins.

Mirrors pkg/scheduler/util/utils.go where plugins need the same thing.
"""

from __future__ import annotations

from typing import TypeVar, cast

T = TypeVar("T")


def as_objects(kind: type[T], old_obj: object, new_obj: object) -> tuple[T | None, T | None] | None:
    """An event's old and new objects as ``kind`` (upstream ``util.As``).

    None where upstream returns an error: one of them is something else. A queueing hint then
    answers Queue, as the queue does with a hint's error.
    """
    if any(obj is not None and not isinstance(obj, kind) for obj in (old_obj, new_obj)):
        return None
    return cast("T | None", old_obj), cast("T | None", new_obj)
