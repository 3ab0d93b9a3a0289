"""Read-only share links."""

from django.urls import path

from webui import share_views

urlpatterns = [
    path("clusters/<int:cluster_id>/share/", share_views.share_create, name="share_create"),
    path(
        "clusters/<int:cluster_id>/share/<int:link_id>/revoke/",
        share_views.share_revoke,
        name="share_revoke",
    ),
    path("share/<str:key>/", share_views.share_open, name="share_open"),
]
