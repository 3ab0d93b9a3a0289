"""The controllers beside the runner's scheduler, as kube-controller-manager runs them beside
kube-scheduler: the PV controller after each follow that changed a claim, a volume or a class,
and the StatefulSet controller's next ordinal after a binding (docs/live-system.md)."""

from __future__ import annotations

import contextlib
import logging
from typing import Any

from schedviz.cluster import services
from schedviz.cluster.models import Cluster
from schedviz.controllers.persistentvolume import PersistentVolumeController
from schedviz.kube.objects import PersistentVolume, PersistentVolumeClaim, Pod, StorageClass
from worker.db_store import DatabaseStore, LeaseLostError

logger = logging.getLogger(__name__)


class ControllersSync:
    """The controllers' part of a runner's session (worker/session.py)."""

    cluster: Cluster
    cluster_id: int
    store: DatabaseStore
    volume_controller: PersistentVolumeController
    volumes_changed: bool
    # OrderedReady StatefulSets (namespace, name) whose last pod was bound: the controller's
    # next ordinal is due (services.workload_sync).
    ordinals_due: set[tuple[str, str]]

    def _on_volume_event(self, event_type: str, old: Any, new: Any) -> None:
        if isinstance(new or old, PersistentVolume | PersistentVolumeClaim | StorageClass):
            self.volumes_changed = True

    def _sync_volumes(self) -> None:
        """The PV controller's sync of every claim, its writes to the change log; a write
        refused for the lease sets ``fenced_off``, which stops the loop."""
        if not self.volumes_changed:
            return
        self.volumes_changed = False
        with contextlib.suppress(LeaseLostError):
            self.volume_controller.sync_all()

    def _on_pod_bound(self, event_type: str, old: Any, new: Any) -> None:
        if not isinstance(new, Pod) or not new.node_name or (old is not None and old.node_name):
            return
        for owner in new.owner_references:
            if owner.controller and owner.kind == "StatefulSet":
                self.ordinals_due.add((new.namespace, owner.name))

    def _sync_stateful_sets(self) -> None:
        """The StatefulSet controller's part after a binding: each one's next ordinal, written
        with the runner's lease checked; a refused write sets ``fenced_off``."""
        due, self.ordinals_due = self.ordinals_due, set()
        for namespace, name in sorted(due):
            try:
                with self.store.write():
                    services.workload_sync(
                        cluster=self.cluster, kind="StatefulSet", namespace=namespace, name=name
                    )
            except LeaseLostError:
                return
            except services.ServiceError as error:
                # Deleted meanwhile, or its next pod refused (a limit): nothing to create.
                logger.info(
                    "cluster %s: StatefulSet %s/%s: %s", self.cluster_id, namespace, name, error
                )
