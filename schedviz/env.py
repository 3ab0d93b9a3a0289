"""Settings from the environment, read strictly: nonsense is refused, not guessed at.

Modelled on healthchecks' ``hc/settings.py`` helpers (``envbool``, ``envint``).
"""

from __future__ import annotations

import os


class EnvironmentError_(ValueError):
    """A variable is set to something its setting cannot take."""


def envstr(name: str, default: str = "") -> str:
    return os.environ.get(name, default)


def envbool(name: str, default: bool) -> bool:
    value = os.environ.get(name)
    if value is None or value == "":
        return default
    lowered = value.strip().lower()
    if lowered in ("1", "true", "yes", "on"):
        return True
    if lowered in ("0", "false", "no", "off"):
        return False
    raise EnvironmentError_(f"{name}={value!r}: expected true or false")


def envint(name: str, default: int, minimum: int | None = None) -> int:
    value = os.environ.get(name)
    if value is None or value == "":
        return default
    try:
        number = int(value)
    except ValueError:
        raise EnvironmentError_(f"{name}={value!r}: expected an integer") from None
    if minimum is not None and number < minimum:
        raise EnvironmentError_(f"{name}={value!r}: must be at least {minimum}")
    return number
