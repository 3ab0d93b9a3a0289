"""JSON API routes of comparison runs, mounted under ``api/``."""

from django.urls import path

from schedviz.compare import api

app_name = "compare_api"
urlpatterns = [
    path("clusters/<int:cluster_id>/compare", api.compare_create, name="create"),
    path("compare/<int:run_id>", api.compare_detail, name="detail"),
    path("clusters/<int:cluster_id>/scenarios", api.scenario_create, name="scenario_create"),
    path("scenarios/<int:run_id>", api.compare_detail, name="scenario_detail"),
]
