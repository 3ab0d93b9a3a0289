from django.apps import AppConfig


class WorkerConfig(AppConfig):
    name = "worker"

    def ready(self) -> None:
        # Create the Celery app in the web process too, so tasks sent from it use our settings.
        import schedviz.celery  # noqa: F401
