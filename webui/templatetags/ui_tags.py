"""Small filters of the pages: internal identifiers said for people."""

from __future__ import annotations

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
