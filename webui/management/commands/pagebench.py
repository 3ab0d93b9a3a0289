"""``manage.py pagebench [--nodes N] [--bound-per-node N] [--pending N] [--repeats N]
[--cluster ID] [--output json|table]``: how long the dashboard and a trace page take at scale,
and how big the dashboard's websocket frames are (webui/pagebench.py).

Builds the cluster in the configured database (or measures ``--cluster``, an existing one); a
measurement, never a test: the figures depend on the machine."""

from __future__ import annotations

import json
from typing import Any

from django.core.management.base import BaseCommand, CommandError, CommandParser

from schedviz.cluster.models import Cluster, Node
from webui.pagebench import BenchError, build_cluster, frame_sizes, time_pages


class Command(BaseCommand):
    help = "Time the dashboard and a trace page at scale; measure the websocket frames."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--nodes", type=int, default=5000)
        parser.add_argument("--bound-per-node", type=int, default=2)
        parser.add_argument("--pending", type=int, default=20)
        parser.add_argument("--repeats", type=int, default=5)
        parser.add_argument("--cluster", type=int, help="measure this existing cluster instead")
        parser.add_argument("--output", choices=("json", "table"), default="table")

    def handle(self, *args: Any, **options: Any) -> None:
        if options["repeats"] < 1 or options["nodes"] < 1:
            raise CommandError("--repeats and --nodes must be at least 1")
        built = None
        if options["cluster"] is not None:
            cluster = Cluster.objects.filter(pk=options["cluster"]).first()
            if cluster is None:
                raise CommandError(f"no cluster {options['cluster']}")
        else:
            try:
                cluster, built = build_cluster(
                    nodes=options["nodes"],
                    bound_per_node=options["bound_per_node"],
                    pending=options["pending"],
                )
            except BenchError as error:
                raise CommandError(str(error)) from None
        pages = time_pages(cluster=cluster, repeats=options["repeats"])
        frames = frame_sizes(cluster=cluster)
        result: dict[str, Any] = {
            "cluster": cluster.pk,
            "nodes": Node.objects.filter(cluster=cluster).count(),
            "buildSeconds": None if built is None else round(built, 1),
            "pages": [page.to_json() for page in pages],
            "frames": frames,
        }
        if options["output"] == "json":
            self.stdout.write(json.dumps(result, indent=2))
            return
        self.stdout.write(f"cluster {result['cluster']}: {result['nodes']} nodes")
        for page in result["pages"]:
            self.stdout.write(
                f"  {page['page']:<32} median {page['medianSeconds'] * 1000:7.1f} ms, "
                f"slowest {page['maxSeconds'] * 1000:7.1f} ms, "
                f"first {page['firstSeconds'] * 1000:7.1f} ms, {page['bytes'] / 1024:6.1f} KiB "
                f"(HTTP {page['status']})"
            )
        self.stdout.write(
            "  websocket frames: whole grid {fullFrameBytes} B, nothing changed "
            "{unchangedFrameBytes} B, one pod bound {onePodBoundFrameBytes} B".format(**frames)
        )
