from django.apps import AppConfig


class WebuiConfig(AppConfig):
    name = "webui"
