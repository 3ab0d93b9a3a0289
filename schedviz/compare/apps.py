from django.apps import AppConfig


class CompareConfig(AppConfig):
    name = "schedviz.compare"
    label = "compare"
    default_auto_field = "django.db.models.BigAutoField"
