"""URL routes of the schedviz site."""

from typing import cast

from django.contrib import admin
from django.contrib.auth import views as auth_views
from django.templatetags.static import static
from django.urls import include, path
from django.views.generic.base import RedirectView

from schedviz.cluster import health
from schedviz.cluster.ratelimit import View
from webui.limits import limit_page_writes

urlpatterns = [
    path("healthz", health.healthz, name="healthz"),
    path("readyz", health.readyz, name="readyz"),
    path("metrics", health.metrics, name="metrics"),
    # The admin's sign-in, limited as the site's is (its pattern inside admin.site.urls is
    # matched after this one, so this one answers).
    path("admin/login/", limit_page_writes(cast(View, admin.site.login)), name="admin_login"),
    path("admin/", admin.site.urls),
    # Browsers ask for /favicon.ico whatever the page says.
    path("favicon.ico", RedirectView.as_view(url=static("webui/favicon.svg"), permanent=True)),
    path(
        "accounts/login/",
        # Password guesses count against the same write rate as every other post.
        limit_page_writes(
            cast(View, auth_views.LoginView.as_view(template_name="webui/accounts/login.html"))
        ),
        name="login",
    ),
    path("accounts/logout/", auth_views.LogoutView.as_view(), name="logout"),
    path("api/", include("schedviz.cluster.urls")),
    path("api/", include("schedviz.compare.urls")),
    path("", include("webui.urls")),
]
