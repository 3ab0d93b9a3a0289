"""Validation of a cluster's settings shared by every way in (the JSON API, the page forms):
one rule each, refused with the field named, in the API server's words ("speed: Invalid value:
...").

- ``speed``: scheduler seconds per wall-clock second of a live cluster, from ``MIN_SPEED`` to
  ``MAX_SPEED``. The bound keeps a runner's clock arithmetic meaningful: at 1e9 a backoff of
  seconds expires in nanoseconds of wall time and the queue's loops run without progress.
- ``seed``: the tie-break seed, a non-negative 64-bit integer (what the database column holds).
- Strings that reach the database as text hold no NUL character: PostgreSQL's text refuses it.
- Manifests sent by a user are loaded within ``manifest_limits()``: an input with more objects
  than ``SCHEDVIZ_MAX_OBJECTS_PER_APPLY``, nodes or pods than a cluster may hold, is refused as
  soon as the loader sees it (schedviz.kube.load), before the rest is parsed or decoded.
"""

from __future__ import annotations

import math

from django.conf import settings

from schedviz.kube.load import Limit, ObjectLimits

MIN_SPEED = 0.01
MAX_SPEED = 10_000.0
MAX_SEED = 2**63 - 1


def speed_errors(speed: object) -> list[str]:
    if isinstance(speed, bool) or not isinstance(speed, int | float):
        return ["speed: Invalid value: must be a number"]
    # Compared as given: an integer too big for a float is simply out of range.
    if (isinstance(speed, float) and math.isnan(speed)) or not MIN_SPEED <= speed <= MAX_SPEED:
        return [f"speed: Invalid value: {speed!r}: must be between {MIN_SPEED:g} and {MAX_SPEED:g}"]
    return []


def _shown(number: float) -> str:
    text = repr(number)
    return text if len(text) <= 30 else f"{text[:12]}... ({len(text)} digits)"


def seed_errors(seed: object) -> list[str]:
    if isinstance(seed, bool) or not isinstance(seed, int):
        return ["seed: Invalid value: must be an integer"]
    if not 0 <= seed <= MAX_SEED:
        # The value itself may have thousands of digits: it is not echoed.
        return [f"seed: Invalid value: must be between 0 and {MAX_SEED}"]
    return []


def text_errors(field: str, value: str) -> list[str]:
    if "\x00" in value:
        return [f"{field}: Invalid value: must not contain NUL characters"]
    return []


def manifest_limits() -> ObjectLimits:
    """The limits of one manifest input from a user (API body or form), from the settings."""
    return ObjectLimits(
        objects=Limit(settings.SCHEDVIZ_MAX_OBJECTS_PER_APPLY, "SCHEDVIZ_MAX_OBJECTS_PER_APPLY"),
        nodes=Limit(settings.SCHEDVIZ_MAX_NODES_PER_CLUSTER, "SCHEDVIZ_MAX_NODES_PER_CLUSTER"),
        pods=Limit(settings.SCHEDVIZ_MAX_PODS_PER_CLUSTER, "SCHEDVIZ_MAX_PODS_PER_CLUSTER"),
    )
