"""Compare profiles: the form and the run pages."""

from django.urls import path

from webui import compare_views

urlpatterns = [
    path("clusters/<int:cluster_id>/compare/", compare_views.compare_new, name="compare_new"),
    path("compare/<int:run_id>/", compare_views.compare_run, name="compare_run"),
    path("compare/<int:run_id>/state/", compare_views.compare_state, name="compare_state"),
]
