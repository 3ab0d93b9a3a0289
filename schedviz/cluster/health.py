"""Probes and metrics: what kube-scheduler serves on its secure port (/healthz, /readyz, /metrics).

``/healthz`` (liveness) answers as long as the process serves requests, touching nothing else;
``/readyz`` (readiness) checks the database and, in distributed mode (``REDIS_URL``), Redis,
which carries the channel layer and Celery; ``/metrics`` is schedviz.cluster.metrics.
"""

from __future__ import annotations

import logging
from collections.abc import Callable

import redis
from django.conf import settings
from django.db import connection
from django.http import HttpRequest, HttpResponse, JsonResponse
from django.views.decorators.cache import never_cache
from django.views.decorators.http import require_safe

from schedviz.cluster.metrics import CONTENT_TYPE, metrics_text

logger = logging.getLogger(__name__)

# Seconds a readiness check waits for Redis before calling it down.
REDIS_TIMEOUT = 2.0


def _database() -> None:
    with connection.cursor() as cursor:
        cursor.execute("SELECT 1")
        cursor.fetchone()


def _redis() -> None:
    client = redis.Redis.from_url(
        settings.REDIS_URL, socket_timeout=REDIS_TIMEOUT, socket_connect_timeout=REDIS_TIMEOUT
    )
    try:
        client.ping()
    finally:
        client.close()


def _checks() -> dict[str, Callable[[], None]]:
    checks = {"database": _database}
    if settings.REDIS_URL:
        checks["redis"] = _redis
    return checks


@never_cache
@require_safe
def healthz(request: HttpRequest) -> HttpResponse:
    return HttpResponse("ok", content_type="text/plain; charset=utf-8")


@never_cache
@require_safe
def readyz(request: HttpRequest) -> JsonResponse:
    """200 with every check "ok", or 503 naming the checks that failed (details in the log)."""
    results: dict[str, str] = {}
    for name, check in _checks().items():
        try:
            check()
        except Exception:
            logger.exception("readyz: the %s check failed", name)
            results[name] = "failed"
        else:
            results[name] = "ok"
    failed = [name for name, result in results.items() if result != "ok"]
    body = {"status": "unavailable" if failed else "ok", "checks": results, "failed": failed}
    return JsonResponse(body, status=503 if failed else 200)


@never_cache
@require_safe
def metrics(request: HttpRequest) -> HttpResponse:
    return HttpResponse(metrics_text(), content_type=CONTENT_TYPE)
