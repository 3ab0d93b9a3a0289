"""The embedded database (SQLite under ``SCHEDVIZ_VAR_DIR``), made ready by whichever command
touches it first: ``manage.py serve``, ``apply`` or ``bench --mode e2e`` on a fresh clone."""

from __future__ import annotations

from django.conf import settings
from django.core.management import call_command


def embedded_database_ready() -> None:
    """Creates and migrates the embedded database, as ``serve`` does. A configured
    ``DATABASE_URL`` is the operator's: migrated once per release (README, "Operations"), not
    by every command."""
    if settings.DATABASE_URL:
        return
    settings.VAR_DIR.mkdir(parents=True, exist_ok=True)
    call_command("migrate", interactive=False, verbosity=0)
