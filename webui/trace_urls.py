"""Cycle trace viewer, pod detail, profiles."""

from django.urls import path

from webui import profile_views, score_views, trace_views

urlpatterns = [
    path("clusters/<int:cluster_id>/cycles/<int:number>/", trace_views.cycle, name="cycle"),
    path(
        "clusters/<int:cluster_id>/cycles/<int:number>/scores/<str:node>/<str:plugin>/",
        score_views.score_cell,
        name="score_cell",
    ),
    path(
        "clusters/<int:cluster_id>/pods/<str:namespace>/<str:name>/",
        trace_views.pod,
        name="pod",
    ),
    path("clusters/<int:cluster_id>/profiles/", profile_views.profiles, name="profiles"),
]
