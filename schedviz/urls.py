"""URL routes of the schedviz site."""

from django.contrib import admin
from django.contrib.auth import views as auth_views
from django.urls import include, path

from schedviz.cluster import health

urlpatterns = [
    path("healthz", health.healthz, name="healthz"),
    path("readyz", health.readyz, name="readyz"),
    path("metrics", health.metrics, name="metrics"),
    path("admin/", admin.site.urls),
    path(
        "accounts/login/",
        auth_views.LoginView.as_view(template_name="webui/accounts/login.html"),
        name="login",
    ),
    path("accounts/logout/", auth_views.LogoutView.as_view(), name="logout"),
    path("api/", include("schedviz.cluster.urls")),
    path("api/", include("schedviz.compare.urls")),
    path("", include("webui.urls")),
]
