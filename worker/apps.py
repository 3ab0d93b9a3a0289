from django.apps import AppConfig


class WorkerConfig(AppConfig):
    name = "worker"

    def ready(self) -> None:
        # Create the Celery app in the web process too, so tasks sent from it use our settings.
        import schedviz.celery  # noqa: F401
        from schedviz.cluster import ports as cluster_ports
        from schedviz.compare import ports as compare_ports
        from worker import compare, dispatch

        # The worker runs what the cluster and the comparisons announce (their ports): the
        # dependency points from here down, never back.
        cluster_ports.register_runner_starter(dispatch.ensure_runner)
        cluster_ports.register_work_watcher(dispatch.watch_for_work)
        compare_ports.register_run_starter(compare.start_run)
