"""JSON API routes, mounted under ``api/``."""

from django.urls import path

from schedviz.cluster import api

app_name = "api"
urlpatterns = [
    path("clusters", api.clusters, name="clusters"),
    path("clusters/<int:cluster_id>", api.cluster_detail, name="cluster"),
    path("clusters/<int:cluster_id>/apply", api.cluster_apply, name="apply"),
    path("clusters/<int:cluster_id>/export", api.cluster_export, name="export"),
    path("clusters/<int:cluster_id>/pods", api.pods, name="pods"),
    path("clusters/<int:cluster_id>/pods/<str:namespace>/<str:name>", api.pod_detail, name="pod"),
    path("clusters/<int:cluster_id>/workloads", api.workloads, name="workloads"),
    path(
        "clusters/<int:cluster_id>/workloads/<str:kind>/<str:namespace>/<str:name>",
        api.workload_detail,
        name="workload",
    ),
    path(
        "clusters/<int:cluster_id>/workloads/<str:kind>/<str:namespace>/<str:name>/scale",
        api.workload_scale,
        name="workload_scale",
    ),
    path("clusters/<int:cluster_id>/cycles", api.cycles, name="cycles"),
    path("clusters/<int:cluster_id>/debug", api.cluster_debug, name="debug"),
    path(
        "clusters/<int:cluster_id>/pods/<str:namespace>/<str:name>/diagnosis",
        api.pod_diagnosis,
        name="pod_diagnosis",
    ),
    path(
        "clusters/<int:cluster_id>/pods/<str:namespace>/<str:name>/diff",
        api.pod_attempt_diff,
        name="pod_attempt_diff",
    ),
    path("clusters/import", api.cluster_import, name="import"),
    path("clusters/review", api.cluster_review, name="review"),
    path("lessons", api.lesson_list, name="lessons"),
    path("lessons/<slug:slug>/load", api.lesson_load, name="lesson_load"),
]
