"""URL routes of the schedviz site."""

from django.contrib import admin
from django.urls import include, path

from schedviz.cluster import health

urlpatterns = [
    path("healthz", health.healthz, name="healthz"),
    path("readyz", health.readyz, name="readyz"),
    path("metrics", health.metrics, name="metrics"),
    path("admin/", admin.site.urls),
    path("api/", include("schedviz.cluster.urls")),
    path("api/", include("schedviz.compare.urls")),
    path("", include("webui.urls")),
]
