"""Cluster list, dashboard, forms and controls."""

from django.urls import path

from webui import export_views, views, workload_views

urlpatterns = [
    path("", views.index, name="index"),
    path("clusters/import/", export_views.trace_import, name="trace_import"),
    path("clusters/<int:cluster_id>/", views.dashboard, name="dashboard"),
    path(
        "clusters/<int:cluster_id>/export/<slug:export_format>/",
        export_views.export,
        name="export",
    ),
    path("clusters/<int:cluster_id>/domains/", views.domains, name="domains"),
    path("clusters/<int:cluster_id>/delete/", views.cluster_delete, name="cluster_delete"),
    path("clusters/<int:cluster_id>/reset/", views.cluster_reset, name="cluster_reset"),
    path("clusters/<int:cluster_id>/control/<slug:action>/", views.control, name="control"),
    path("clusters/<int:cluster_id>/debug/", views.debug, name="debug"),
    path("clusters/<int:cluster_id>/pods/new/", views.pod_new, name="pod_new"),
    path(
        "clusters/<int:cluster_id>/pods/<str:namespace>/<str:name>/delete/",
        views.pod_delete,
        name="pod_delete",
    ),
    path(
        "clusters/<int:cluster_id>/workloads/<str:kind>/<str:namespace>/<str:name>/scale/",
        workload_views.workload_scale,
        name="workload_scale",
    ),
    path(
        "clusters/<int:cluster_id>/workloads/<str:kind>/<str:namespace>/<str:name>/delete/",
        workload_views.workload_delete,
        name="workload_delete",
    ),
    path("clusters/<int:cluster_id>/nodes/new/", views.node_new, name="node_new"),
    path("clusters/<int:cluster_id>/nodes/<str:name>/", views.node_detail, name="node"),
    path(
        "clusters/<int:cluster_id>/nodes/<str:name>/cordon/",
        views.node_cordon,
        name="node_cordon",
    ),
    path(
        "clusters/<int:cluster_id>/nodes/<str:name>/delete/",
        views.node_delete,
        name="node_delete",
    ),
    path("clusters/<int:cluster_id>/apply/", views.manifests_apply, name="apply"),
]
