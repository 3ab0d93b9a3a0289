"""``manage.py serve [--host H] [--port P]``: the app, ready to use.

Migrates the database, loads the built-in demo cluster when the database has no cluster yet,
restarts the scheduler of every cluster that has pods waiting (a runner only starts on a change,
and a restarted server has seen none; through the port the worker app registers,
schedviz/cluster/ports.py), watches for changes other processes commit (``manage.py apply``
beside the server: ``ports.watch_for_work``), prints the URL, and serves HTTP and websockets
with Daphne, static files included.
"""

from __future__ import annotations

from typing import Any

from django.conf import settings
from django.core.management import call_command
from django.core.management.base import BaseCommand, CommandParser
from django.db import transaction

from schedviz.cluster import ports, services
from schedviz.cluster.models import Cluster, Pod
from schedviz.demo import DEMO_CLUSTER

DEMO_NAME = "demo"


class Command(BaseCommand):
    help = "Migrate, load the demo cluster on a new database, and serve schedviz."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--host", default="127.0.0.1")
        parser.add_argument("--port", type=int, default=8000)
        parser.add_argument(
            "--no-demo", action="store_true", help="do not load the demo cluster on a new database"
        )

    def handle(self, *args: Any, **options: Any) -> None:
        settings.VAR_DIR.mkdir(parents=True, exist_ok=True)  # the embedded SQLite lives there
        call_command("migrate", interactive=False, verbosity=0)
        if not options["no_demo"] and not Cluster.objects.exists():
            with transaction.atomic():
                cluster = services.cluster_create(name=DEMO_NAME)
                services.manifests_apply_files(cluster=cluster, paths=[str(DEMO_CLUSTER)])
            self.stdout.write(f"Loaded the demo cluster ({cluster.name}).")
        self._resume_waiting_clusters()
        ports.watch_for_work()
        host, port = options["host"], options["port"]
        self.stdout.write(f"schedviz is serving at http://{host}:{port}/")
        call_command("runserver", f"{host}:{port}", use_reloader=False, insecure_serving=True)

    def _resume_waiting_clusters(self) -> None:
        waiting = Pod.objects.filter(node_name="").values_list("cluster_id", flat=True).distinct()
        for cluster_id in waiting:
            ports.start_runner(cluster_id)
