"""The runner's lease (leader election) and its database connection's limits.

Mirrors the role of client-go's leaderelection (staging/src/k8s.io/client-go/tools/leaderelection):
one holder per cluster at a time, taken by a compare-and-set, renewed while the holder works,
and every write of the holder fenced by it (docs/live-system.md, "Faults").
"""

from __future__ import annotations

import contextlib
import functools
import os
import socket
import threading
import uuid
from datetime import datetime
from typing import Any

from django.db import IntegrityError, OperationalError, connection, transaction
from django.db.models import Field
from django.utils import timezone

from schedviz.cluster import selectors
from schedviz.cluster.models import Lease
from worker.db_store import DATABASE_ERRORS


def default_holder() -> str:
    """Who holds a lease: host, process, thread and a nonce (a restarted thread is new)."""
    return (f"{socket.gethostname()}:{os.getpid()}:{threading.get_ident()}:{uuid.uuid4().hex[:8]}")[
        :200
    ]


def lease_acquire(*, cluster_id: int, holder: str) -> bool:
    """Takes the cluster's lease if it is free, expired or ours: a compare-and-set on
    (holder, renewed_at), so of two runners racing for it exactly one wins. A lease row locked
    by another (a frozen holder inside a write, until the server ends its transaction) is not
    waited for beyond the runner's lock timeout: not taken this time; nor is the lease of a
    cluster deleted meanwhile (its row refused by the foreign key)."""
    try:
        lease, _ = Lease.objects.get_or_create(cluster_id=cluster_id)
    except IntegrityError:
        return False
    except OperationalError as error:
        if not _lock_not_available(error):
            raise
        return False
    now = timezone.now()
    if lease.holder and lease.holder != holder and not selectors.lease_expired(lease, now):
        return False
    try:
        won = Lease.objects.filter(
            cluster_id=cluster_id, holder=lease.holder, renewed_at=lease.renewed_at
        ).update(holder=holder, renewed_at=now)
    except OperationalError as error:
        if not _lock_not_available(error):
            raise
        return False
    return won == 1


def lease_renew(*, cluster_id: int, holder: str) -> bool:
    """False when someone else has taken the lease over (this runner must stop at once), or is
    taking it (the row locked by another past the lock timeout)."""
    try:
        renewed = Lease.objects.filter(cluster_id=cluster_id, holder=holder).update(
            renewed_at=timezone.now()
        )
    except OperationalError as error:
        if not _lock_not_available(error):
            raise
        return False
    return renewed == 1


def lease_fence(*, cluster_id: int, holder: str) -> bool:
    """Inside a write's transaction: whether ``holder`` still holds the lease and it has not
    expired (the fencing check: the holder names one tenure, its nonce included). The lease row
    is locked until the write commits, so a takeover does not happen in the middle of it and
    the next holder lists the cluster with that write in it; a row another has locked (a
    takeover under way) is not waited for (NOWAIT): the write is refused."""
    try:
        # A savepoint: a refused lock leaves the write's transaction.
        with transaction.atomic(), connection.cursor() as cursor:
            cursor.execute(_fence_sql(), [cluster_id, holder])
            row = cursor.fetchone()
    except OperationalError as error:
        if not _lock_not_available(error):
            raise
        return False
    if row is None:
        return False
    lease = Lease(
        cluster_id=cluster_id,
        holder=holder,
        renewed_at=_renewed_at_value(row[0]),
        duration_seconds=row[1],
    )
    return not selectors.lease_expired(lease, timezone.now())


# The fence runs before every write of the runner (each batch of Cycle rows, each group of
# binds): its statement is SQL written once per process, as the ORM writes it (the lock where
# the database has one; SQLite serializes writers anyway), not built per write.
@functools.cache
def _fence_sql() -> str:
    q = connection.ops.quote_name
    meta = Lease._meta

    def column(name: str) -> str:
        field = meta.get_field(name)
        assert isinstance(field, Field) and field.column
        return q(field.column)

    lock = (
        " FOR UPDATE NOWAIT"
        if connection.features.has_select_for_update
        and connection.features.has_select_for_update_nowait
        else ""
    )
    return (
        f"SELECT {column('renewed_at')}, {column('duration_seconds')} FROM {q(meta.db_table)} "
        f"WHERE {column('cluster')} = %s AND {column('holder')} = %s{lock}"
    )


def _renewed_at_value(value: Any) -> datetime | None:
    """``renewed_at`` as the ORM reads it (SQLite hands a datetime over as text)."""
    field = Lease._meta.get_field("renewed_at")
    assert isinstance(field, Field)
    column = field.get_col(Lease._meta.db_table)
    for convert in connection.ops.get_db_converters(column):
        value = convert(value, column, connection)
    assert value is None or isinstance(value, datetime)
    return value


def _lock_not_available(error: OperationalError) -> bool:
    """PostgreSQL's lock_not_available (55P03): NOWAIT refused, or lock_timeout ran out."""
    cause = error.__cause__
    return getattr(cause, "sqlstate", None) == "55P03" or getattr(cause, "pgcode", None) == "55P03"


# PostgreSQL limits on a runner's connection, so that a frozen or cut-off runner cannot hold
# anyone up: its transaction is ended by the server after RUNNER_IDLE_IN_TRANSACTION seconds
# idle (its locks, the lease row's among them, go with it), a lock is waited for at most
# RUNNER_LOCK_TIMEOUT seconds, a statement runs at most RUNNER_STATEMENT_TIMEOUT seconds.
RUNNER_IDLE_IN_TRANSACTION = 5.0
RUNNER_LOCK_TIMEOUT = 2.0
RUNNER_STATEMENT_TIMEOUT = 30.0
_RUNNER_SESSION_LIMITS = {
    "idle_in_transaction_session_timeout": RUNNER_IDLE_IN_TRANSACTION,
    "lock_timeout": RUNNER_LOCK_TIMEOUT,
    "statement_timeout": RUNNER_STATEMENT_TIMEOUT,
}


def limit_database_session(limited: bool) -> None:
    """Sets the runner's limits on this connection (PostgreSQL), or takes them off again (the
    worker process's connection serves other tasks too)."""
    if connection.vendor != "postgresql":
        return
    with connection.cursor() as cursor:
        for name, seconds in _RUNNER_SESSION_LIMITS.items():
            if limited:
                cursor.execute("SELECT set_config(%s, %s, false)", [name, f"{int(seconds * 1000)}"])
            else:
                cursor.execute(f"RESET {name}")


def lease_release(*, cluster_id: int, holder: str) -> None:
    """Gives the lease up; ``renewed_at`` keeps when, for ``ran_since``."""
    Lease.objects.filter(cluster_id=cluster_id, holder=holder).update(
        holder="", renewed_at=timezone.now()
    )


def drop_connection() -> None:
    """Closes a broken connection; Django opens a new one at the next query."""
    with contextlib.suppress(*DATABASE_ERRORS):
        connection.close()
