"""Probes and metrics: what kube-scheduler serves on its secure port (/healthz, /readyz, /metrics).

``/healthz`` (liveness) answers as long as the process serves requests, touching nothing else;
``/readyz`` (readiness) checks the database and, in distributed mode (``REDIS_URL``), Redis,
which carries the channel layer and Celery; ``/metrics`` is schedviz.cluster.metrics.

``/metrics`` names every cluster, so it is not public, as kube-scheduler's own is not (it checks
its callers' credentials): with ``SCHEDVIZ_METRICS_TOKEN`` set, a scrape needs
``Authorization: Bearer <token>`` (401 otherwise); without it, only a caller on the loopback
interface that did not come through a proxy (no ``X-Forwarded-For`` or ``Forwarded``) is served
(403 otherwise).
"""

from __future__ import annotations

import hmac
import ipaddress
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


def _metrics_refusal(request: HttpRequest) -> HttpResponse | None:
    """Why the caller may not scrape /metrics, as the answer to give; None if it may."""
    token = settings.SCHEDVIZ_METRICS_TOKEN
    if token:
        scheme, _, given = request.headers.get("Authorization", "").partition(" ")
        if scheme == "Bearer" and hmac.compare_digest(given.strip().encode(), token.encode()):
            return None
        refused = HttpResponse("Unauthorized\n", status=401, content_type="text/plain")
        refused["WWW-Authenticate"] = 'Bearer realm="metrics"'
        return refused
    try:
        local = ipaddress.ip_address(request.META.get("REMOTE_ADDR", "")).is_loopback
    except ValueError:
        local = False
    proxied = "X-Forwarded-For" in request.headers or "Forwarded" in request.headers
    if local and not proxied:
        return None
    return HttpResponse(
        "Forbidden: /metrics answers loopback callers only unless SCHEDVIZ_METRICS_TOKEN is set\n",
        status=403,
        content_type="text/plain",
    )


@never_cache
@require_safe
def metrics(request: HttpRequest) -> HttpResponse:
    refusal = _metrics_refusal(request)
    if refusal is not None:
        return refusal
    return HttpResponse(metrics_text(), content_type=CONTENT_TYPE)
