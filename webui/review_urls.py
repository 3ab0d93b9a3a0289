"""The review of a real scheduler's logs, events and dump."""

from django.urls import path

from webui import review_views

urlpatterns = [path("review/", review_views.review, name="review")]
