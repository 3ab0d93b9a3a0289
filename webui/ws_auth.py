"""Who a websocket belongs to: a script's API token, or a browser's session.

A handshake with ``Authorization: Token <key>`` (what ``manage.py apitoken`` prints, as the
JSON API takes it) is the token's user, whatever its Origin: a browser's WebSocket cannot send
that header, so a token connection cannot be a page of another site riding on the user's
cookies, and scripts need not invent an Origin. A handshake without one goes through the
session stack, behind the Origin check that stops cross-site websocket hijacking. A token that
matches no active user connects as nobody, so the consumer refuses every owned cluster.

The Origin check (``SameOriginValidator``) is the one Django's CSRF check makes for a form post:
the page's origin must be the site's own, scheme, host and port as the handshake reached the
server (``https`` behind a proxy whose ``X-Forwarded-Proto`` is trusted), or one of
``CSRF_TRUSTED_ORIGINS`` (``SCHEDVIZ_CSRF_TRUSTED_ORIGINS``); and the Host must be one of
``ALLOWED_HOSTS``. Channels' own ``AllowedHostsOriginValidator`` compares the host alone, so a
page served by anything else on the same host, on another port, could open the socket with the
user's cookies.
"""

from __future__ import annotations

from typing import Any
from urllib.parse import urlsplit

from channels.db import database_sync_to_async
from channels.security.websocket import WebsocketDenier
from django.conf import settings
from django.contrib.auth.models import AnonymousUser
from django.http.request import split_domain_port, validate_host
from django.utils.http import is_same_domain

from schedviz.cluster import selectors


def token_key(scope: dict[str, Any]) -> str | None:
    """The key of an ``Authorization: Token <key>`` header, or None without that header."""
    for name, value in scope.get("headers") or ():
        if name.lower() == b"authorization":
            scheme, _, key = value.decode("latin-1").partition(" ")
            return key.strip() if scheme == "Token" else ""
    return None


class TokenAuthMiddleware:
    """Sends token handshakes to ``token_app`` with ``scope["user"]`` set, the rest to
    ``session_app``."""

    def __init__(self, token_app: Any, session_app: Any) -> None:
        self.token_app = token_app
        self.session_app = session_app

    async def __call__(self, scope: dict[str, Any], receive: Any, send: Any) -> Any:
        key = token_key(scope)
        if key is None:
            return await self.session_app(scope, receive, send)
        user = await database_sync_to_async(selectors.api_token_user)(key=key) if key else None
        scope = {**scope, "user": user or AnonymousUser()}
        return await self.token_app(scope, receive, send)


DEFAULT_PORTS = {"http": 80, "https": 443}


def _header(scope: dict[str, Any], wanted: bytes) -> str | None:
    for name, value in scope.get("headers") or ():
        if name.lower() == wanted:
            return str(value.decode("latin-1"))
    return None


def _origin_key(origin: str) -> tuple[str, str, int | None] | None:
    """(scheme, host, port) of an origin, the port filled in for http and https."""
    try:
        parts = urlsplit(origin.strip().lower())
        port = parts.port
    except ValueError:
        return None
    if not parts.scheme or not parts.hostname:
        return None
    return parts.scheme, parts.hostname, port or DEFAULT_PORTS.get(parts.scheme)


def _own_origin(scope: dict[str, Any]) -> str | None:
    """The site's origin as this handshake reached it, or None when its Host is not allowed."""
    host = _header(scope, b"host")
    if not host:
        return None
    domain, _ = split_domain_port(host)
    allowed = settings.ALLOWED_HOSTS
    if settings.DEBUG and not allowed:
        allowed = [".localhost", "127.0.0.1", "[::1]"]
    if not domain or not validate_host(domain, allowed):
        return None
    secure = scope.get("scheme") == "wss"
    proxy_header = getattr(settings, "SECURE_PROXY_SSL_HEADER", None)
    if proxy_header is not None:
        # ("HTTP_X_FORWARDED_PROTO", "https") names the header as Django's META does.
        name = proxy_header[0].removeprefix("HTTP_").replace("_", "-").lower().encode()
        secure = _header(scope, name) == proxy_header[1]
    return f"{'https' if secure else 'http'}://{host}"


def origin_allowed(scope: dict[str, Any]) -> bool:
    """Whether the handshake's Origin is the site's own or a trusted one (see the module)."""
    origin = _header(scope, b"origin")
    own = _own_origin(scope)
    if origin is None or own is None:
        return False
    key = _origin_key(origin)
    if key is None:
        return False
    if key == _origin_key(own):
        return True
    for trusted in settings.CSRF_TRUSTED_ORIGINS:
        scheme, _, netloc = trusted.lower().partition("://")
        if netloc.startswith("*."):
            pattern = _origin_key(f"{scheme}://{netloc[1:].lstrip('.')}")
            if (
                pattern is not None
                and (key[0], key[2]) == (pattern[0], pattern[2])
                and is_same_domain(key[1], "." + pattern[1])
            ):
                return True
        elif key == _origin_key(trusted):
            return True
    return False


class SameOriginValidator:
    """Passes handshakes from the site's own origin (or a trusted one) on; denies the rest."""

    def __init__(self, application: Any) -> None:
        self.application = application

    async def __call__(self, scope: dict[str, Any], receive: Any, send: Any) -> Any:
        if origin_allowed(scope):
            return await self.application(scope, receive, send)
        return await WebsocketDenier()(scope, receive, send)
