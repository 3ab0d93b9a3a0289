"""A token bucket per client on writes, kept in Django's cache (locmem, or Redis when shared).

Each client (the user, or the address of an anonymous one) has a bucket of
``SCHEDVIZ_WRITE_RATE_PER_MINUTE`` tokens that refills at that rate; a write takes one, and a
write that finds the bucket empty is answered 429 with ``Retry-After``, the seconds until a token
is back. Reads are never limited. The bucket is read and written without a lock, so clients that
race may get a few writes more than the rate: a brake on floods, not an exact quota.

In distributed mode the buckets live in Redis. While Redis cannot be reached, writes are refused
with 503 and ``Retry-After: UNAVAILABLE_RETRY_SECONDS`` (the limiter does not fail open): Redis
is also the Celery broker and the channel layer, so a write then would be saved but neither
scheduled nor shown live until it is back, and ``/readyz`` says 503 meanwhile too.
"""

from __future__ import annotations

import functools
import logging
import math
import time
from collections.abc import Callable
from typing import Any

from django.conf import settings
from django.contrib.auth.models import AbstractBaseUser, AnonymousUser
from django.core.cache import cache
from django.http import HttpRequest, HttpResponse, JsonResponse
from redis.exceptions import RedisError

logger = logging.getLogger(__name__)

READ_METHODS = frozenset({"GET", "HEAD", "OPTIONS"})
KEY_PREFIX = "ratelimit:writes:"
# Retry-After of the 503 a write gets while the limiter's store is unreachable.
UNAVAILABLE_RETRY_SECONDS = 5

View = Callable[..., HttpResponse]


def _client_key(request: HttpRequest, args: tuple[Any, ...]) -> str:
    # The JSON API passes the user it authenticated (token or session) after the request.
    user = args[0] if args and isinstance(args[0], AbstractBaseUser | AnonymousUser) else None
    user = user or getattr(request, "user", None)
    if user is not None and user.is_authenticated:
        # With the account's creation time: SQLite hands a deleted user's id to the next one
        # (test databases do so all day), and the bucket belongs to the account, not the number.
        joined = getattr(user, "date_joined", None)
        since = f":{joined.timestamp():.6f}" if joined is not None else ""
        return f"{KEY_PREFIX}user:{user.pk}{since}"
    return f"{KEY_PREFIX}ip:{request.META.get('REMOTE_ADDR', '')}"


def take_token(key: str, rate_per_minute: int, now: float | None = None) -> float:
    """Takes a token from the bucket ``key``: 0.0 if there was one, else the seconds to wait."""
    now = time.time() if now is None else now
    per_second = rate_per_minute / 60
    tokens, stamp = cache.get(key) or (float(rate_per_minute), now)
    tokens = min(float(rate_per_minute), tokens + max(now - stamp, 0.0) * per_second)
    if tokens < 1:
        cache.set(key, (tokens, now), timeout=120)
        return (1 - tokens) / per_second
    # A full bucket needs at most a minute to refill, so the entry may expire after that.
    cache.set(key, (tokens - 1, now), timeout=120)
    return 0.0


def limit_writes(view: View) -> View:
    """Refuses a client's writes beyond ``SCHEDVIZ_WRITE_RATE_PER_MINUTE`` with 429."""

    @functools.wraps(view)
    def wrapper(request: HttpRequest, *args: Any, **kwargs: Any) -> HttpResponse:
        rate = settings.SCHEDVIZ_WRITE_RATE_PER_MINUTE
        if rate and request.method not in READ_METHODS:
            try:
                wait = take_token(_client_key(request, args), rate)
            except RedisError:
                logger.warning("write refused: the rate limiter's Redis is unreachable")
                response = JsonResponse(
                    {
                        "errors": [
                            "service unavailable: the rate limiter's store (Redis) cannot be "
                            f"reached; retry after {UNAVAILABLE_RETRY_SECONDS} seconds"
                        ]
                    },
                    status=503,
                )
                response["Retry-After"] = str(UNAVAILABLE_RETRY_SECONDS)
                return response
            if wait:
                seconds = max(math.ceil(wait), 1)
                response = JsonResponse(
                    {
                        "errors": [
                            f"too many writes: at most {rate} a minute "
                            "(SCHEDVIZ_WRITE_RATE_PER_MINUTE); "
                            f"retry after {seconds} seconds"
                        ]
                    },
                    status=429,
                )
                response["Retry-After"] = str(seconds)
                return response
        return view(request, *args, **kwargs)

    return wrapper
