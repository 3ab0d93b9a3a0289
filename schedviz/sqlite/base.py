"""Django's SQLite backend, with this process's writers of a database file queued on a lock.

SQLite has one writer at a time. A transaction here begins IMMEDIATE (settings.DATABASES), taking
SQLite's write lock at once; one that begins while another connection writes waits in SQLite's
busy handler, which sleeps 1, 2, 5, 10, 15, 20, 25, ... ms between tries, so it wakes up to tens
of milliseconds after the writer committed. The embedded server's requests and the runner
thread are connections of one process: here a transaction first takes the file's lock of this
process, and the next writer starts as the last one commits or rolls back. Writers in other
processes (a management command beside the server) still meet in SQLite's busy handler.
"""

from __future__ import annotations

import threading
from typing import Any

from django.db.backends.sqlite3 import base
from django.db.utils import OperationalError

_locks: dict[str, threading.Lock] = {}
_locks_lock = threading.Lock()

# The modes in which BEGIN takes SQLite's write lock.
_WRITING_MODES = frozenset({"IMMEDIATE", "EXCLUSIVE"})


def _writer_lock(name: str) -> threading.Lock:
    with _locks_lock:
        lock = _locks.get(name)
        if lock is None:
            lock = _locks[name] = threading.Lock()
        return lock


# django-stubs leaves out the private methods overridden here (hence the ignores).
class DatabaseWrapper(base.DatabaseWrapper):
    _writer: threading.Lock | None = None

    def _start_transaction_under_autocommit(self) -> None:
        lock = None
        if getattr(self, "transaction_mode", None) in _WRITING_MODES and not self.is_in_memory_db():
            lock = _writer_lock(str(self.settings_dict["NAME"]))
            timeout = float(self.settings_dict["OPTIONS"].get("timeout", 5))
            if not lock.acquire(timeout=timeout):
                raise OperationalError("database is locked")
        try:
            super()._start_transaction_under_autocommit()  # type: ignore[misc]
        except BaseException:
            if lock is not None:
                lock.release()
            raise
        self._writer = lock

    def _release_writer(self) -> None:
        lock, self._writer = self._writer, None
        if lock is not None:
            lock.release()

    def _commit(self) -> Any:
        try:
            return super()._commit()  # type: ignore[misc]
        finally:
            self._release_writer()

    def _rollback(self) -> Any:
        try:
            return super()._rollback()  # type: ignore[misc]
        finally:
            self._release_writer()

    def _close(self) -> Any:
        try:
            return super()._close()  # type: ignore[misc]
        finally:
            self._release_writer()
