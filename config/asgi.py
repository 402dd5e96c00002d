"""ASGI entry point: HTTP through Django, websockets through Channels (session-authenticated)."""

import os
from collections.abc import AsyncIterator
from concurrent.futures import ThreadPoolExecutor
from contextlib import asynccontextmanager

import django
from asgiref.sync import ThreadSensitiveContext, sync_to_async
from django.core.handlers.asgi import ASGIHandler

from lmix.heap import collector

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings")


class OneHopASGIHandler(ASGIHandler):
    """Django's ASGI handler, with each request's middleware and view run in one call on
    the sync thread.

    Our views are sync, and so is WhiteNoise. Django's own handler builds an async chain
    around them, so every hook of every middleware went to the sync thread and back
    through the event loop: 15 hops a request, each waiting behind the sockets that loop
    serves. The sync chain called once is one hop (`tests.bench.frames`, 200 sockets open:
    the commit POST took 31 → 25 ms p50).
    """

    def __init__(self) -> None:
        super().__init__()
        self.threads = RequestThreads()

    def load_middleware(self, is_async: bool = False) -> None:
        super().load_middleware(is_async=False)
        self._middleware_chain = sync_to_async(self._middleware_chain, thread_sensitive=True)

    async def __call__(self, scope, receive, send) -> None:
        if scope["type"] != "http":
            raise ValueError(f"Django serves HTTP here, not {scope['type']}.")
        async with self.threads.lend():
            await self.handle(scope, receive, send)


class RequestThreads:
    """Each request's thread, kept for the next request once it is answered.

    Django gives every request a new thread, and a second one to join the first when it
    ends: two thread starts a request, each blocking the event loop that serves the
    sockets until the new thread runs. Here a request borrows an idle thread, or starts
    one when none is idle; its sync code still runs on that one thread, and requests in
    flight together still run on threads of their own.
    """

    def __init__(self, keep: int = 32) -> None:
        self.keep = keep  # idle threads kept at most; a burst beyond it starts and ends more
        self._idle: list[ThreadPoolExecutor] = []  # touched only on the event loop

    @asynccontextmanager
    async def lend(self) -> AsyncIterator[None]:
        executor = self._idle.pop() if self._idle else ThreadPoolExecutor(1, "lmix-request")
        answered = False
        collector.requests += 1
        try:
            async with ThreadSensitiveContext(executor=executor):
                yield
            answered = True
        finally:
            collector.requests -= 1
            # A cancelled request may leave its sync code running: its thread is not lent.
            if answered and len(self._idle) < self.keep:
                self._idle.append(executor)
            else:
                executor.shutdown(wait=False)


django.setup(set_prefix=False)
django_asgi_app = OneHopASGIHandler()

from channels.auth import AuthMiddlewareStack  # noqa: E402
from channels.routing import ProtocolTypeRouter, URLRouter  # noqa: E402

from config.routing import websocket_urlpatterns  # noqa: E402
from lmix.realtime.origin import OriginValidator  # noqa: E402

application = ProtocolTypeRouter(
    {
        "http": django_asgi_app,
        # Scheme, host and port of the page must match (lmix/realtime/origin.py).
        "websocket": OriginValidator(AuthMiddlewareStack(URLRouter(websocket_urlpatterns))),
    }
)
