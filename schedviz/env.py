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


def envlist(name: str, default: str = "") -> list[str]:
    """A comma-separated list; blanks around and between the commas are dropped."""
    return [item.strip() for item in envstr(name, default).split(",") if item.strip()]


def envhostports(name: str, default: str = "") -> frozenset[str]:
    """Comma-separated ``host:port`` entries (``[v6]:port`` for IPv6), each with its port; as
    ``host:port`` in lower case, IPv6 without brackets and written ``[v6]:port``."""
    entries = set()
    for entry in envlist(name, default):
        written, colon, port = entry.rpartition(":")
        host = written.lower().removeprefix("[").removesuffix("]")
        bracketed = written.startswith("[") and written.endswith("]")
        ipv6_unbracketed = ":" in host and not bracketed
        if (
            not colon
            or not host
            or ipv6_unbracketed
            or not port.isdigit()
            or not 0 < int(port) < 65536
        ):
            raise EnvironmentError_(f"{name}: {entry!r}: expected host:port, e.g. 127.0.0.1:8888")
        entries.add(f"[{host}]:{int(port)}" if ":" in host else f"{host}:{int(port)}")
    return frozenset(entries)


def envorigins(name: str, default: str = "") -> list[str]:
    """Comma-separated origins, each ``scheme://host[:port]`` with no path."""
    origins = []
    for entry in envlist(name, default):
        scheme, sep, rest = entry.partition("://")
        if scheme not in ("http", "https") or not sep or not rest or "/" in rest:
            raise EnvironmentError_(
                f"{name}: {entry!r}: expected an origin, scheme://host[:port], e.g. "
                "https://example.com"
            )
        origins.append(entry.lower())
    return origins
