"""ASGI entry point: HTTP through Django, websockets through Channels, authenticated by an API
token or by the session (webui/ws_auth.py)."""

import os

from django.core.asgi import get_asgi_application

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "schedviz.settings")

# Django must be set up before the consumers (and their models) are imported.
django_asgi_app = get_asgi_application()

from channels.auth import AuthMiddlewareStack  # noqa: E402
from channels.routing import ProtocolTypeRouter, URLRouter  # noqa: E402

from webui.routing import websocket_urlpatterns  # noqa: E402
from webui.ws_auth import SameOriginValidator, TokenAuthMiddleware  # noqa: E402

websockets = URLRouter(websocket_urlpatterns)

application = ProtocolTypeRouter(
    {
        "http": django_asgi_app,
        "websocket": TokenAuthMiddleware(
            token_app=websockets,
            session_app=SameOriginValidator(AuthMiddlewareStack(websockets)),
        ),
    }
)
