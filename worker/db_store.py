"""The informer cache of one cluster, fed by the database's change log.

Upstream's scheduler lists the cluster through informers, then watches; its writes go to the API
server and come back through the same watch. ``DatabaseStore`` does that over the database:
``list_cluster`` loads every object row, ``follow`` reads the ``Change`` rows after the last one
seen and applies each to the in-memory maps, so the watchers (the Scheduler's handlers) hear
ADDED/MODIFIED/DELETED with the old and new objects. The scheduler's writes (bind, pod status,
victims' deletion, PV/PVC binding) go to ``schedviz.cluster.services`` and are not applied here:
they come back through ``follow``. Events are kept until the runner writes them in a batch.

Every write runs in one transaction with the runner's lease check (``fence``): a runner that lost
its lease (paused past its expiry, say, while another took over) writes nothing, not even the
bind of a cycle it was in the middle of; ``fenced_off`` tells it to stop. A write whose
connection failed may or may not have committed; the framework turns a failed bind into a
status, so ``connection_failed`` keeps the error for the runner, which starts over.

The runner's own binds come back through ``follow`` too; the store remembers what each one
wrote (``services.PodBinding``), so that when its row arrives and the cached pod is still the
version the bind started from, the bound pod is the cached one with its node and PodScheduled
condition set, without decoding the manifest again (it is not even read). Any other change of the
pod, and a bind whose pod changed in between, is decoded from the row as before.

Several binds may share one transaction (``group``, the runner's group commit): the lease is
checked once when it begins and its lock held until it commits, as for a single write; each bind
in it is a savepoint of its own, so one that fails leaves the others.

Change ids come from one sequence, but writers that do not lock the cluster (a bind) may commit
out of id order; ``follow`` therefore looks back over the last ``LATE_COMMIT_SECONDS`` for rows
that became visible after a later one, and applies any it missed.

A row is applied only when it is newer than what the cache has of its object (ids are
resourceVersions): a row delivered twice, or one older than a change already applied, even a
deletion (remembered for as long as an older row could still arrive late), changes nothing.
"""

from __future__ import annotations

import dataclasses
import functools
import json
import logging
import time
from collections import deque
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any, ClassVar

from django.db import InterfaceError, OperationalError, connection, transaction
from django.db.models import Field

from schedviz.cluster import services
from schedviz.cluster.models import KIND_MODELS, Change, Cluster, NamespacedResource
from schedviz.kube.decode import decode_object
from schedviz.kube.errors import DocumentError, InvalidObjectError
from schedviz.kube.objects import KubeObject, Pod, PodCondition
from schedviz.scheduler.framework.interface import Code, Status
from schedviz.scheduler.store import (
    ClusterStore,
    Event,
    NotFoundError,
)

logger = logging.getLogger(__name__)

# What a dropped or restarted database raises (psycopg and sqlite3, as Django wraps them).
DATABASE_ERRORS = (OperationalError, InterfaceError)
# How long a Change row may become visible after one with a higher id (a slow transaction).
LATE_COMMIT_SECONDS = 2.0
# How often to look for such rows.
LATE_COMMIT_CHECK_SECONDS = 0.2
# Manifests of followed rows are read this many rows per query.
MANIFEST_CHUNK = 500


class LeaseLostError(services.ServiceError):
    """A write refused because the runner no longer holds the cluster's lease."""

    def __init__(self, cluster_id: int) -> None:
        super().__init__([f"the runner no longer holds the lease of cluster {cluster_id}"])


def object_key(kind: str, namespace: str, name: str) -> str:
    model = KIND_MODELS.get(kind)
    if model is not None and issubclass(model, NamespacedResource):
        return f"{namespace or 'default'}/{name}"
    return name


POD_SCHEDULED = PodCondition("PodScheduled", "True")


def _with_condition(
    conditions: tuple[PodCondition, ...], condition: PodCondition
) -> tuple[PodCondition, ...]:
    """The conditions with ``condition`` replacing the one of its type (or appended), as
    ``services`` sets it in the manifest."""
    for i, existing in enumerate(conditions):
        if existing.type == condition.type:
            return (*conditions[:i], condition, *conditions[i + 1 :])
    return (*conditions, condition)


def _condition_dict(condition: PodCondition) -> dict[str, Any]:
    """The condition as the manifest's status has it (empty reason and message left out)."""
    return {name: value for name, value in dataclasses.asdict(condition).items() if value}


@dataclass(slots=True)
class _ChangeRow:
    """What ``follow`` reads of a Change row (values, not a model instance: a live run reads
    every bind's row back)."""

    HEAD: ClassVar[tuple[str, ...]] = ("id", "kind", "namespace", "name", "type")

    id: int
    kind: str
    namespace: str
    name: str
    type: str
    manifest: Any = None


@dataclass(frozen=True, slots=True)
class _FollowSql:
    head: str
    ids: str
    manifests: str


# ``follow``'s queries are SQL written once per process: it runs every FOLLOW_INTERVAL of a live
# run, and building its statements with the ORM each time cost more than running them.
@functools.cache
def _follow_sql() -> _FollowSql:
    q = connection.ops.quote_name
    table = q(Change._meta.db_table)

    def column(name: str) -> str:
        field = Change._meta.get_field(name)
        assert isinstance(field, Field) and field.column
        return q(field.column)

    ident, cluster = column("id"), column("cluster")
    head = ", ".join(column(name) for name in _ChangeRow.HEAD)
    return _FollowSql(
        head=f"SELECT {head} FROM {table} WHERE {cluster} = %s AND {ident} > %s ORDER BY {ident}",
        ids=f"SELECT {ident} FROM {table} WHERE {cluster} = %s AND {ident} > %s AND {ident} <= %s",
        manifests=f"SELECT {ident}, {column('manifest')} FROM {table} WHERE {ident} IN ",
    )


def _manifests(ids: list[int]) -> Iterator[tuple[int, Any]]:
    """The manifests of Change rows, decoded as the ORM's JSONField decodes them (the backends
    hand JSON over as text), ``MANIFEST_CHUNK`` rows per query."""
    sql = _follow_sql().manifests
    with connection.cursor() as cursor:
        for start in range(0, len(ids), MANIFEST_CHUNK):
            chunk = ids[start : start + MANIFEST_CHUNK]
            cursor.execute(f"{sql}({', '.join(['%s'] * len(chunk))})", chunk)
            for change_id, value in cursor.fetchall():
                yield change_id, json.loads(value) if isinstance(value, str | bytes) else value


class DatabaseStore(ClusterStore):
    def __init__(self, cluster: Cluster, *, fence: Callable[[], bool] | None = None) -> None:
        super().__init__()
        self.cluster = cluster
        # Called inside each write's transaction: whether this runner still holds the lease.
        self._fence = fence
        self.fenced_off = False
        self.connection_failed: Exception | None = None
        self.last_change_id = 0
        # (kind, key) -> the id of the Change the cached object came from.
        self._versions: dict[tuple[str, str], int] = {}
        # (kind, key) -> the id of the Change that deleted the object, while a late row with a
        # lower id could still arrive and must not bring it back.
        self._deleted: dict[tuple[str, str], int] = {}
        # Ids applied recently, and the low ends of the reads that found rows: a row committed
        # late has an id above one of these, and below the highest seen.
        self._applied_recently: set[int] = set()
        self._reads: deque[tuple[float, int]] = deque()
        self._next_late_check = 0.0
        # The Change id of each bind of this runner not followed yet -> what it wrote.
        self._own_binds: dict[int, services.PodBinding] = {}
        # Inside ``group``: the lease was checked when its transaction began.
        self._grouped = False
        # Inside ``group``: the rows of the pods it binds, by (namespace, name), read at once.
        self._bind_rows: dict[tuple[str, str], services.BindRow] = {}

    # ------------------------------------------------------------------ list and watch

    def list_cluster(self) -> None:
        """The informers' list: every object of the cluster, without notifying anyone."""
        # The log position first: rows written after it are listed and also followed, and
        # following skips a change the listed object already has.
        last = Change.objects.filter(cluster=self.cluster).order_by("-id").first()
        self.last_change_id = last.id if last is not None else 0
        self._reads.append((time.monotonic(), self.last_change_id))
        for kind, model in KIND_MODELS.items():
            bucket = self._objects.setdefault(kind, {})
            for row in model._default_manager.filter(cluster=self.cluster).order_by("id"):
                obj = self._decode(row.manifest, kind)
                if obj is not None:
                    bucket[obj.key] = obj
                    self._versions[(kind, obj.key)] = row.resource_version

    def list_cluster_at(self, position: int) -> None:
        """The informers' list as it was at change ``position`` (a watch resumed from there):
        the rows of now, with every object changed since put back as it was then (its last
        Change row up to ``position``; absent when that is a deletion or there is none).
        ``follow`` then delivers the later changes as the events they are."""
        self.list_cluster()
        if position >= self.last_change_id:
            return
        # (kind, namespace) -> the names of the objects changed since the position.
        touched: dict[tuple[str, str], set[str]] = {}
        for kind, namespace, name in (
            Change.objects.filter(cluster=self.cluster, id__gt=position)
            .order_by()
            .values_list("kind", "namespace", "name")
            .distinct()
        ):
            touched.setdefault((kind, namespace), set()).add(name)
        # Their last Change rows up to the position (id, type), read for many names of a kind
        # and namespace at once: a query per object read the log once per object (minutes for
        # the thousands of pods created while no runner was alive).
        before: dict[tuple[str, str, str], tuple[int, str]] = {}
        for (kind, namespace), names in touched.items():
            ordered = sorted(names)
            for start in range(0, len(ordered), MANIFEST_CHUNK):
                for change_id, name, change_type in Change.objects.filter(
                    cluster=self.cluster,
                    kind=kind,
                    namespace=namespace,
                    name__in=ordered[start : start + MANIFEST_CHUNK],
                    id__lte=position,
                ).values_list("id", "name", "type"):
                    last = before.get((kind, namespace, name))
                    if last is None or last[0] < change_id:
                        before[(kind, namespace, name)] = (change_id, change_type)
        manifests = dict(
            _manifests(
                [i for i, change_type in before.values() if change_type != Change.Type.DELETED]
            )
        )
        for (kind, namespace), names in touched.items():
            bucket = self._objects.setdefault(kind, {})
            for name in names:
                key = object_key(kind, namespace, name)
                last = before.get((kind, namespace, name))
                obj = (
                    None
                    if last is None or last[1] == Change.Type.DELETED
                    else self._decode(manifests[last[0]], kind)
                )
                if obj is None or last is None:
                    bucket.pop(key, None)
                    self._versions.pop((kind, key), None)
                else:
                    bucket[key] = obj
                    self._versions[(kind, key)] = last[0]
        self.last_change_id = position
        self._reads = deque([(time.monotonic(), position)])

    def follow(self) -> int:
        """Applies the Change rows written since the last call; returns how many."""
        now = time.monotonic()
        sql = _follow_sql()
        with connection.cursor() as cursor:
            cursor.execute(sql.head, [self.cluster.pk, self.last_change_id])
            rows = [_ChangeRow(*values) for values in cursor.fetchall()]
        self._load_manifests(rows)
        if rows:
            self._reads.append((now, self.last_change_id))
            self.last_change_id = rows[-1].id
        for row in rows:
            self._apply_change(row)
        applied = len(rows)
        if now >= self._next_late_check:
            self._next_late_check = now + LATE_COMMIT_CHECK_SECONDS
            for row in self._late_rows(now):
                self._apply_change(row)
                applied += 1
        return applied

    def _load_manifests(self, rows: list[_ChangeRow]) -> None:
        """Reads the manifests ``_apply_change`` needs: not a deletion's, not an own bind's."""
        needed = {
            row.id: row
            for row in rows
            if row.type != Change.Type.DELETED and row.id not in self._own_binds
        }
        for change_id, manifest in _manifests(list(needed)):
            needed[change_id].manifest = manifest

    def _late_rows(self, now: float) -> list[_ChangeRow]:
        while self._reads and self._reads[0][0] < now - LATE_COMMIT_SECONDS:
            self._reads.popleft()
        if not self._reads:
            self._applied_recently.clear()
            self._deleted.clear()
            return []
        low = min(start for _, start in self._reads)
        self._applied_recently = {i for i in self._applied_recently if i > low}
        self._deleted = {ref: i for ref, i in self._deleted.items() if i > low}
        with connection.cursor() as cursor:
            cursor.execute(_follow_sql().ids, [self.cluster.pk, low, self.last_change_id])
            missed = [i for (i,) in cursor.fetchall() if i not in self._applied_recently]
        if not missed:
            return []
        logger.info("cluster %s: %d change(s) committed late", self.cluster.pk, len(missed))
        rows = [
            _ChangeRow(*values)
            for values in Change.objects.filter(id__in=missed)
            .order_by("id")
            .values_list(*_ChangeRow.HEAD)
        ]
        self._load_manifests(rows)
        return rows

    def _apply_change(self, row: _ChangeRow | Change) -> None:
        self._applied_recently.add(row.id)
        ref = (row.kind, object_key(row.kind, row.namespace, row.name))
        own_bind = self._own_binds.pop(row.id, None)
        if max(self._versions.get(ref, 0), self._deleted.get(ref, 0)) >= row.id:
            # The cache has this change or a newer one (listed after it was written, delivered
            # twice, or a row committed late behind a newer change of the same object).
            return
        if row.type == Change.Type.DELETED:
            self._versions.pop(ref, None)
            self._deleted[ref] = row.id
            if self.get(*ref) is not None:
                ClusterStore.delete(self, *ref)
            return
        if own_bind is not None:
            obj = self._bound_pod(ref, own_bind)
        else:
            obj = self._decode(row.manifest, row.kind)
        if obj is not None:
            self._versions[ref] = row.id
            self._deleted.pop(ref, None)
            ClusterStore.apply(self, obj)

    def _bound_pod(self, ref: tuple[str, str], binding: services.PodBinding) -> KubeObject | None:
        """The pod as this runner's bind left it: the cached pod with its node and PodScheduled
        condition when the bind started from the cached version (what decoding the manifest
        would give), else the manifest decoded."""
        cached = self.get(*ref)
        if (
            isinstance(cached, Pod)
            and self._versions.get(ref) == binding.bound_from
            and not cached.scheduling_gates
        ):
            return dataclasses.replace(
                cached,
                node_name=binding.manifest["spec"]["nodeName"],
                conditions=_with_condition(cached.conditions, POD_SCHEDULED),
                manifest=binding.manifest,
            )
        return self._decode(binding.manifest, "Pod")

    def _decode(self, manifest: dict[str, Any], kind: str) -> KubeObject | None:
        try:
            return decode_object(manifest)
        except (InvalidObjectError, DocumentError):
            # Services store only what decodes; a row that does not is skipped, not fatal.
            logger.exception("cluster %s: a stored %s does not decode", self.cluster.pk, kind)
            return None

    # ------------------------------------------------------------------ writes, to the database

    @contextmanager
    def write(self, *, savepoint: bool = True) -> Iterator[None]:
        """One transaction for a write of the runner, refused with ``LeaseLostError`` when the
        lease is no longer this runner's. Inside a group, a savepoint, unless the write leaves
        nothing to take back when it fails (``savepoint=False``: an exception leaving the block
        would doom the whole group)."""
        if self.connection_failed is not None:
            # Nothing more in a cycle whose write failed: its outcome is unknown.
            raise self.connection_failed
        try:
            with transaction.atomic(savepoint=savepoint or not self._grouped):
                if not self._grouped and (
                    self.fenced_off or (self._fence is not None and not self._fence())
                ):
                    self.fenced_off = True
                    raise LeaseLostError(self.cluster.pk)
                yield
        except DATABASE_ERRORS as error:
            self.connection_failed = self.connection_failed or error
            raise

    @contextmanager
    def group(self, pods: Sequence[Pod] = ()) -> Iterator[None]:
        """One transaction for several writes (the runner's group commit of binds), fenced by
        the lease once; each ``write`` inside is a savepoint. ``LeaseLostError`` when the lease
        is no longer this runner's: then nothing inside runs. The rows of ``pods`` (those the
        group binds) are read at once, and each bind takes its own (``services.pod_bind``'s
        compare-and-set includes the resourceVersion read, so a row changed meanwhile is read
        again)."""
        with self.write():
            self._grouped = True
            try:
                if pods:
                    self._bind_rows = services.pods_for_bind(
                        cluster=self.cluster,
                        keys={(pod.namespace, pod.name) for pod in pods},
                        known=self._known_manifests(pods),
                    )
                yield
            finally:
                self._grouped = False
                self._bind_rows = {}

    def _known_manifests(
        self, pods: Sequence[Pod]
    ) -> dict[tuple[str, str], tuple[int, dict[str, Any]]]:
        """The cached pods' manifests, with the change they came from: the pod's row at that
        resourceVersion stores the same, so a bind need not decode it again."""
        known = {}
        for pod in pods:
            ref = ("Pod", object_key("Pod", pod.namespace, pod.name))
            cached, version = self.get(*ref), self._versions.get(ref)
            if isinstance(cached, Pod) and cached.manifest and version is not None:
                known[(pod.namespace, pod.name)] = (version, cached.manifest)
        return known

    def apply(self, obj: KubeObject) -> None:
        with self.write():
            services.objects_apply_from_scheduler(cluster=self.cluster, objects=[obj])

    def delete(self, kind: str, key: str) -> Any:
        old = self.get(kind, key)
        if old is None:
            raise NotFoundError(f'{kind.lower()}s "{key}" not found')
        namespace = getattr(old, "namespace", "")
        try:
            with self.write():
                services.objects_delete(
                    cluster=self.cluster, refs=[services.ObjectRef(kind, old.name, namespace)]
                )
        except services.ObjectNotFound as error:
            raise NotFoundError(str(error)) from None
        return old

    def bind(self, pod: Pod, node_name: str) -> Status | None:
        """The pods/binding subresource, as a compare-and-set on the pod's row. A bind that
        fails writes nothing (``services.pod_bind``), so a group's binds need no savepoints."""
        failure: services.ServiceError | None = None
        with self.write(savepoint=False):
            try:
                binding = services.pod_bind(
                    cluster=self.cluster,
                    namespace=pod.namespace,
                    name=pod.name,
                    node_name=node_name,
                    row=self._bind_rows.pop((pod.namespace, pod.name), None),
                )
            except services.ServiceError as error:
                failure = error  # caught inside: it must not leave the group's block
        if failure is not None:
            message = str(failure)
            return Status(Code.Error, (message,), error=message)
        self._own_binds[binding.change_id] = binding
        return None

    def update_pod_status(
        self, pod: Pod, condition: PodCondition | None, nominated_node_name: str | None
    ) -> Pod | None:
        try:
            with self.write():
                row = services.pod_update_status(
                    cluster=self.cluster,
                    namespace=pod.namespace,
                    name=pod.name,
                    condition=_condition_dict(condition) if condition is not None else None,
                    nominated_node_name=nominated_node_name,
                )
        except LeaseLostError:
            return None  # as for a pod gone: this runner stops before it matters
        if row is None:
            return None
        updated = self._decode(row.manifest, "Pod")
        return updated if isinstance(updated, Pod) else None

    def take_events(self) -> list[Event]:
        events, self.events = self.events, []
        return events
