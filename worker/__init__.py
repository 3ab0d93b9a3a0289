"""Celery tasks: the per-cluster scheduler runner and batch experiments."""
