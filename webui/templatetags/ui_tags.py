"""Small filters of the pages: internal identifiers said for people."""

from __future__ import annotations

import hashlib

from django import template

register = template.Library()


@register.filter
def worker_label(worker: str) -> str:
    """A worker's ``host:pid`` (worker/compare.py ``process_name``) as "worker process PID on
    HOST"; anything else as it is."""
    host, sep, pid = worker.rpartition(":")
    if not sep or not host or not pid.isdigit():
        return worker
    return f"worker process {pid} on {host}"


@register.filter
def dom_id(key: str) -> str:
    """An element id for any text (a workload's ``kind/namespace/name``): the same text always
    gives the same id, two texts never share one in practice, and it needs no escaping in a CSS
    selector, as htmx's out-of-band swaps look elements up by ``#id``."""
    return "k" + hashlib.sha1(str(key).encode(), usedforsecurity=False).hexdigest()[:16]
