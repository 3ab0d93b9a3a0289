"""``manage.py apply -f FILE [-f FILE...] --cluster NAME``: ``kubectl apply`` into a cluster.

The cluster (one without an owner, unless ``--owner``) is created if missing. The files
(or directories of them) are judged together: any error, and nothing is saved, not even the new
cluster; every error goes to stderr and the exit status is 2.

On the embedded database the command migrates it first, as ``serve`` does, and starts no runner:
a runner thread of this process would die with it. A server running beside it (``serve``)
sees the change in the change log and schedules it within a second; with none running, the next
``serve`` does. In the distributed mode the runner's task goes to the workers as from the site.
"""

from __future__ import annotations

import sys
from typing import Any

from django.contrib.auth import get_user_model
from django.core.management.base import BaseCommand, CommandError, CommandParser
from django.db import transaction

from schedviz.cluster import ports
from schedviz.cluster.embedded import embedded_database_ready
from schedviz.cluster.services import ServiceError, cluster_get_or_create, manifests_apply_files


class Command(BaseCommand):
    help = "Apply YAML/JSON manifests to a cluster, creating the cluster if missing."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument(
            "-f",
            "--filename",
            action="append",
            required=True,
            metavar="FILE",
            help="a manifest file or a directory of them (repeatable)",
        )
        parser.add_argument("--cluster", required=True, metavar="NAME")
        parser.add_argument("--owner", metavar="USER", help="the owning user (default: none)")

    def handle(self, *args: Any, **options: Any) -> None:
        embedded_database_ready()
        with ports.runners_elsewhere():
            self._apply(options)

    def _apply(self, options: dict[str, Any]) -> None:
        owner = None
        if options["owner"]:
            owner = get_user_model().objects.filter(username=options["owner"]).first()
            if owner is None:
                raise CommandError(f"no user {options['owner']}")
        try:
            with transaction.atomic():
                cluster, _ = cluster_get_or_create(name=options["cluster"], owner=owner)
                result = manifests_apply_files(cluster=cluster, paths=options["filename"])
        except ServiceError as error:
            for message in error.errors:
                sys.stderr.write(f"error: {message}\n")
            sys.exit(2)
        for line in result.lines:
            self.stdout.write(line)
        if result.skipped_notice:
            sys.stderr.write(f"{result.skipped_notice}\n")
