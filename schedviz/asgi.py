"""ASGI entry point: HTTP through Django, websockets through Channels, authenticated by an API
token or by the session (webui/ws_auth.py). Each connection tells the worker which event loop
serves it (embedded mode: runner threads publish into that loop's in-memory channel layer)."""

import asyncio
import os
from typing import Any

from django.core.asgi import get_asgi_application

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "schedviz.settings")

# Django must be set up before the consumers (and their models) are imported.
django_asgi_app = get_asgi_application()

from channels.auth import AuthMiddlewareStack  # noqa: E402
from channels.routing import ProtocolTypeRouter, URLRouter  # noqa: E402

from webui.routing import websocket_urlpatterns  # noqa: E402
from webui.ws_auth import SameOriginValidator, TokenAuthMiddleware  # noqa: E402
from worker.dispatch import serving_loop_seen  # noqa: E402

websockets = URLRouter(websocket_urlpatterns)


class ServingLoop:
    """Tells the worker the event loop this connection is served in, then serves it."""

    def __init__(self, app: Any) -> None:
        self.app = app

    async def __call__(self, scope: Any, receive: Any, send: Any) -> None:
        serving_loop_seen(asyncio.get_running_loop())
        await self.app(scope, receive, send)


routes = ProtocolTypeRouter(
    {
        "http": django_asgi_app,
        "websocket": TokenAuthMiddleware(
            token_app=websockets,
            session_app=SameOriginValidator(AuthMiddlewareStack(websockets)),
        ),
    }
)

application = ServingLoop(routes)
