"""Who a websocket belongs to: a script's API token, or a browser's session.

A handshake with ``Authorization: Token <key>`` (what ``manage.py apitoken`` prints, as the
JSON API takes it) is the token's user, whatever its Origin: a browser's WebSocket cannot send
that header, so a token connection cannot be a page of another site riding on the user's
cookies, and scripts need not invent an Origin. A handshake without one goes through the
session stack, behind the Origin check that stops cross-site websocket hijacking. A token that
matches no active user connects as nobody, so the consumer refuses every owned cluster.
"""

from __future__ import annotations

from typing import Any

from channels.db import database_sync_to_async
from django.contrib.auth.models import AnonymousUser

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
