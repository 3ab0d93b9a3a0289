"""The models in Django's admin, read-mostly: writes belong to the services.

Everything can be looked at; clusters, objects, cycles and events can be deleted (a deleted
object leaves no DELETED change: use the services or the API for changes a runner must see);
the change log cannot be touched.
"""

from __future__ import annotations

from typing import Any

from django.contrib import admin
from django.http import HttpRequest

from schedviz.cluster import models


class ReadOnlyAdmin(admin.ModelAdmin):  # type: ignore[type-arg]
    def has_add_permission(self, request: HttpRequest) -> bool:
        return False

    def has_change_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return False


@admin.register(models.Cluster)
class ClusterAdmin(ReadOnlyAdmin):
    list_display = ["name", "owner", "clock_mode", "run_state", "speed", "created_at"]
    list_filter = ["clock_mode", "run_state"]
    search_fields = ["name"]


@admin.register(models.Profile)
class ProfileAdmin(ReadOnlyAdmin):
    list_display = ["scheduler_name", "cluster", "position"]
    list_filter = ["cluster"]


class KubeResourceAdmin(ReadOnlyAdmin):
    list_display = ["name", "cluster", "resource_version"]
    list_filter = ["cluster"]
    search_fields = ["name"]


class NamespacedResourceAdmin(KubeResourceAdmin):
    list_display = ["name", "namespace", "cluster", "resource_version"]
    search_fields = ["name", "namespace"]


@admin.register(models.Node)
class NodeAdmin(KubeResourceAdmin):
    list_display = ["name", "cluster", "unschedulable", "resource_version"]


@admin.register(models.Pod)
class PodAdmin(NamespacedResourceAdmin):
    list_display = ["name", "namespace", "cluster", "node_name", "phase", "priority"]
    list_filter = ["cluster", "phase"]


admin.site.register(
    [
        models.Namespace,
        models.PriorityClass,
        models.PersistentVolume,
        models.StorageClass,
        models.CSINode,
    ],
    KubeResourceAdmin,
)
admin.site.register(
    [models.PodDisruptionBudget, models.PersistentVolumeClaim], NamespacedResourceAdmin
)


@admin.register(models.Change)
class ChangeAdmin(ReadOnlyAdmin):
    list_display = ["id", "cluster", "type", "kind", "namespace", "name", "created_at"]
    list_filter = ["cluster", "type", "kind"]

    def has_delete_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return False  # the watch stream is append-only


@admin.register(models.Cycle)
class CycleAdmin(ReadOnlyAdmin):
    list_display = ["number", "cluster", "pod_namespace", "pod_name", "result", "node"]
    list_filter = ["cluster", "result"]
    exclude = ["body", "node_order"]


@admin.register(models.Event)
class EventAdmin(ReadOnlyAdmin):
    list_display = ["id", "cluster", "type", "reason", "object_namespace", "object_name"]
    list_filter = ["cluster", "type", "reason"]


@admin.register(models.Lease)
class LeaseAdmin(ReadOnlyAdmin):
    list_display = ["cluster", "holder", "renewed_at", "duration_seconds"]


@admin.register(models.ApiToken)
class ApiTokenAdmin(ReadOnlyAdmin):
    list_display = ["user", "created_at"]
    exclude = ["key_hash"]
