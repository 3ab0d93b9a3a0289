"""WSGI entry point (HTTP only)."""

import os

from django.core.wsgi import get_wsgi_application

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "schedviz.settings")

application = get_wsgi_application()
