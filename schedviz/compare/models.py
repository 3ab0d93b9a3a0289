"""A comparison run: a frozen workload, and one row per variant with its progress and result.

The workload is copied when the run is created (the cluster may change afterwards), or the
scenario its variants run from an empty cluster (``schedviz.compare.scenarios``); each variant
keeps the KubeSchedulerConfiguration v1 document it runs. No business logic here:
writes go through ``schedviz.compare.services``, reads through ``schedviz.compare.selectors``.
"""

from __future__ import annotations

from django.conf import settings
from django.db import models

from schedviz.cluster.models import Cluster


class CompareRun(models.Model):
    class Source(models.TextChoices):
        CLUSTER = "cluster", "The cluster's objects"
        MANIFESTS = "manifests", "Pasted manifests"
        SCENARIO = "scenario", "A scenario over time"

    cluster = models.ForeignKey(Cluster, on_delete=models.CASCADE, related_name="compare_runs")
    created_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    source = models.CharField(max_length=10, choices=Source.choices)
    seed = models.BigIntegerField(default=0)
    # The workload's objects, as manifests, in the order they are listed to the scheduler.
    manifests = models.JSONField(default=list)
    # A scenario run (source "scenario"): the Scenario document (docs/scenarios.md).
    scenario = models.JSONField(default=dict, blank=True)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["-id"]


class CompareVariant(models.Model):
    class Status(models.TextChoices):
        PENDING = "pending", "Pending"
        RUNNING = "running", "Running"
        SUCCEEDED = "succeeded", "Succeeded"
        FAILED = "failed", "Failed"

    run = models.ForeignKey(CompareRun, on_delete=models.CASCADE, related_name="variants")
    position = models.PositiveIntegerField()
    name = models.CharField(max_length=100)
    # The profile (schedulerName) every pending pod is given to; "" for a configuration variant.
    profile = models.CharField(max_length=253, blank=True, default="")
    configuration = models.JSONField(default=dict)
    status = models.CharField(max_length=10, choices=Status.choices, default=Status.PENDING)
    pods_done = models.PositiveIntegerField(default=0)
    pods_total = models.PositiveIntegerField(default=0)
    result = models.JSONField(null=True, blank=True)
    error = models.TextField(blank=True, default="")
    # The execution that owns the variant: a retried or duplicate task takes it over, and the
    # writes of the one it replaced are ignored.
    attempt = models.CharField(max_length=64, blank=True, default="")
    # The process that ran (or runs) it: host:pid.
    worker = models.CharField(max_length=200, blank=True, default="")
    started_at = models.DateTimeField(null=True, blank=True)
    finished_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["run", "position"], name="variant_unique_position"),
            models.UniqueConstraint(fields=["run", "name"], name="variant_unique_name"),
        ]
        ordering = ["run", "position"]
