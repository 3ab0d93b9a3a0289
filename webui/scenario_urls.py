"""Scenarios over time: the form and the run pages."""

from django.urls import path

from webui import scenario_views

urlpatterns = [
    path("clusters/<int:cluster_id>/scenario/", scenario_views.scenario_new, name="scenario_new"),
    path("scenarios/<int:run_id>/", scenario_views.scenario_run, name="scenario_run"),
    path("scenarios/<int:run_id>/state/", scenario_views.scenario_state, name="scenario_state"),
    path("scenarios/<int:run_id>/step/", scenario_views.scenario_step, name="scenario_step"),
]
