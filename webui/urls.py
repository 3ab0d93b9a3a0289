"""Routes of the web UI: cluster pages and dashboard, the trace pages, the lessons."""

from django.urls import include, path

app_name = "webui"
urlpatterns = [
    path("", include("webui.dashboard_urls")),
    path("", include("webui.trace_urls")),
    path("", include("webui.compare_urls")),
    path("", include("webui.scenario_urls")),
    path("", include("webui.lesson_urls")),
    path("", include("webui.share_urls")),
    path("", include("webui.review_urls")),
]
