"""The lessons and predict-then-reveal."""

from django.urls import path

from webui import lesson_views

urlpatterns = [
    path("lessons/", lesson_views.lesson_index, name="lessons"),
    path("lessons/<slug:slug>/", lesson_views.lesson_detail, name="lesson"),
    path("lessons/<slug:slug>/load/", lesson_views.lesson_load, name="lesson_load"),
    path("lessons/<slug:slug>/scenario/", lesson_views.lesson_scenario, name="lesson_scenario"),
    path(
        "clusters/<int:cluster_id>/lesson/restart/",
        lesson_views.lesson_restart,
        name="lesson_restart",
    ),
    path("clusters/<int:cluster_id>/predict/", lesson_views.predict, name="predict"),
]
