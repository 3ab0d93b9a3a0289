"""A runner process to be killed: ``python killed_runner.py CLUSTER WHERE MARKER``.

Runs the cluster's runner (SQLite database in SCHEDVIZ_VAR_DIR) and, at its third bind, stops
where the test kills it with SIGKILL: ``inside-bind`` with the bind's transaction open,
``after-bind`` with the bind committed and its cycle not written yet. It writes MARKER first.
"""

from __future__ import annotations

import os
import sys
import time
from pathlib import Path
from typing import Any

import django

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "schedviz.settings")
django.setup()

from schedviz.cluster import services  # noqa: E402
from worker import runner, session  # noqa: E402
from worker.db_store import DatabaseStore  # noqa: E402


def main(cluster_id: int, where: str, marker: Path) -> None:
    calls = {"bind": 0}
    real_pod_bind, real_store_bind = services.pod_bind, DatabaseStore.bind

    def stop_here() -> None:
        marker.write_text(str(os.getpid()))
        while True:
            time.sleep(1)

    def pod_bind(**kwargs: Any) -> services.PodBinding:
        binding = real_pod_bind(**kwargs)
        if calls["bind"] == 3 and where == "inside-bind":
            stop_here()  # the compare-and-set done, its transaction not committed
        return binding

    def store_bind(store: DatabaseStore, pod: Any, node_name: str) -> Any:
        calls["bind"] += 1
        status = real_store_bind(store, pod, node_name)
        if calls["bind"] == 3 and where == "after-bind":
            stop_here()  # committed; cycles 1 to 3 are not written yet
        return status

    services.pod_bind = pod_bind  # type: ignore[assignment]
    DatabaseStore.bind = store_bind  # type: ignore[method-assign]
    session.FLUSH_CYCLES = 1000
    session.FLUSH_INTERVAL = 1000.0
    runner.run_cluster(cluster_id, holder="doomed")


if __name__ == "__main__":
    main(int(sys.argv[1]), sys.argv[2], Path(sys.argv[3]))
