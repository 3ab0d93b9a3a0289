"""Helpers shared by the runner tests (a module, since tests/ keeps one conftest.py)."""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from typing import Any

from django.db import connection

from worker.runner import RunResult, run_cluster

NODE = """
apiVersion: v1
kind: Node
metadata: {name: node-%(i)d}
status: {allocatable: {cpu: "4", memory: 8Gi, pods: "110"}}
"""
POD = """
apiVersion: v1
kind: Pod
metadata: {name: %(prefix)s-%(i)d}
spec: {containers: [{name: c, image: busybox, resources: {requests: {cpu: 100m}}}]}
"""


def manifests(nodes: int, pods: int, prefix: str = "pod") -> str:
    return "\n---\n".join(
        [NODE % {"i": i} for i in range(nodes)]
        + [POD % {"i": i, "prefix": prefix} for i in range(pods)]
    )


def wait_until(condition: Callable[[], bool], timeout: float = 20.0) -> None:
    deadline = time.monotonic() + timeout
    while not condition():
        if time.monotonic() > deadline:
            raise AssertionError("timed out waiting")
        time.sleep(0.02)


class RunnerThread(threading.Thread):
    def __init__(self, cluster_id: int, **kwargs: Any) -> None:
        super().__init__(daemon=True)
        self.cluster_id = cluster_id
        self.kwargs = kwargs
        self.result: RunResult | None = None

    def run(self) -> None:
        try:
            self.result = run_cluster(self.cluster_id, **self.kwargs)
        finally:
            connection.close()
