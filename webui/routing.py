"""Websocket routes of the web UI."""

from django.urls import path

from webui.consumers import ClusterConsumer

websocket_urlpatterns = [
    path("ws/clusters/<int:cluster_id>/", ClusterConsumer.as_asgi()),
]
