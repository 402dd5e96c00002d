"""ASGI entry point: HTTP through Django, websockets through Channels (session-authenticated)."""

import os

import django
from asgiref.sync import sync_to_async
from django.core.handlers.asgi import ASGIHandler

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "lmix.settings")


class OneHopASGIHandler(ASGIHandler):
    """Django's ASGI handler, with each request's middleware and view run in one call on
    the sync thread.

    Our views are sync, and so is WhiteNoise. Django's own handler builds an async chain
    around them, so every hook of every middleware went to the sync thread and back
    through the event loop: 15 hops a request, each waiting behind the sockets that loop
    serves. The sync chain called once is one hop (`tests.bench.frames`, 200 sockets open:
    the commit POST took 31 → 25 ms p50).
    """

    def load_middleware(self, is_async: bool = False) -> None:
        super().load_middleware(is_async=False)
        self._middleware_chain = sync_to_async(self._middleware_chain, thread_sensitive=True)


django.setup(set_prefix=False)
django_asgi_app = OneHopASGIHandler()

from channels.auth import AuthMiddlewareStack  # noqa: E402
from channels.routing import ProtocolTypeRouter, URLRouter  # noqa: E402

from lmix.realtime.origin import OriginValidator  # noqa: E402
from lmix.routing import websocket_urlpatterns  # noqa: E402

application = ProtocolTypeRouter(
    {
        "http": django_asgi_app,
        # Scheme, host and port of the page must match (lmix/realtime/origin.py).
        "websocket": OriginValidator(AuthMiddlewareStack(URLRouter(websocket_urlpatterns))),
    }
)
