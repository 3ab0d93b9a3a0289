"""The Celery application: configuration from Django settings under the CELERY_ prefix."""

import os

from celery import Celery

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "schedviz.settings")

app = Celery("schedviz")
app.config_from_object("django.conf:settings", namespace="CELERY")
app.autodiscover_tasks()
