"""Routes of the web UI: cluster pages and dashboard, and the trace pages."""

from django.urls import include, path

app_name = "webui"
urlpatterns = [
    path("", include("webui.dashboard_urls")),
    path("", include("webui.trace_urls")),
    path("", include("webui.compare_urls")),
]
