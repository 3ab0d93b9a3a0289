"""schedviz/sqlite: this process's writers of an SQLite file queue on a lock held from BEGIN to
COMMIT or ROLLBACK."""

from __future__ import annotations

import threading
from collections.abc import Iterator

import pytest
from django.db import OperationalError, connection, transaction

from schedviz.cluster.models import Cluster
from schedviz.sqlite.base import _writer_lock

pytestmark = pytest.mark.django_db(transaction=True)


@pytest.fixture
def writer_lock(file_database: None) -> Iterator[threading.Lock]:
    if connection.vendor != "sqlite":
        pytest.skip("the lock is the SQLite backend's")
    yield _writer_lock(str(connection.settings_dict["NAME"]))


def test_a_transaction_holds_the_files_lock_until_it_commits(writer_lock: threading.Lock) -> None:
    assert not writer_lock.locked()
    with transaction.atomic():
        Cluster.objects.create(name="a")
        assert writer_lock.locked()
        with transaction.atomic():  # a savepoint takes nothing more
            Cluster.objects.create(name="b")
    assert not writer_lock.locked()
    assert Cluster.objects.filter(name__in=["a", "b"]).count() == 2


def test_a_transaction_rolled_back_lets_the_lock_go(writer_lock: threading.Lock) -> None:
    with pytest.raises(RuntimeError), transaction.atomic():
        Cluster.objects.create(name="a")
        raise RuntimeError
    assert not writer_lock.locked()
    assert not Cluster.objects.filter(name="a").exists()


def test_a_second_writer_waits_for_the_first_and_then_writes(writer_lock: threading.Lock) -> None:
    began, done = threading.Event(), threading.Event()
    errors: list[BaseException] = []

    def second() -> None:
        try:
            began.wait()
            with transaction.atomic():
                Cluster.objects.create(name="second")
            done.set()
        except BaseException as error:  # pragma: no cover - reported below
            errors.append(error)
        finally:
            connection.close()

    thread = threading.Thread(target=second)
    thread.start()
    with transaction.atomic():
        Cluster.objects.create(name="first")
        began.set()
        assert not done.wait(0.3)  # the second waits while the first is open
    thread.join(timeout=10)
    assert not errors and done.is_set()
    assert set(Cluster.objects.values_list("name", flat=True)) >= {"first", "second"}


def test_a_writer_waiting_past_the_timeout_is_told_the_database_is_locked(
    writer_lock: threading.Lock, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setitem(connection.settings_dict["OPTIONS"], "timeout", 0.2)
    assert writer_lock.acquire()  # another writer of this process, in its transaction
    try:
        with pytest.raises(OperationalError, match="database is locked"), transaction.atomic():
            Cluster.objects.create(name="late")
    finally:
        writer_lock.release()
    with transaction.atomic():
        Cluster.objects.create(name="late")
    assert not writer_lock.locked()
