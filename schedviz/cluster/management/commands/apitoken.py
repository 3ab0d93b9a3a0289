"""``manage.py apitoken USER``: a new JSON API token for USER (created if needed), printed once."""

from __future__ import annotations

import sys
from typing import Any

from django.core.management.base import BaseCommand, CommandParser

from schedviz.cluster.services import ServiceError, api_token_create


class Command(BaseCommand):
    help = "Print a new API token (Authorization: Token <key>) for USER, creating the user."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("username", metavar="USER")

    def handle(self, *args: Any, **options: Any) -> None:
        try:
            token = api_token_create(username=options["username"])
        except ServiceError as error:
            sys.stderr.write(f"{error}\n")
            sys.exit(2)
        if token.user_created:
            sys.stderr.write(f"user {options['username']} created\n")
        self.stdout.write(token.key)
