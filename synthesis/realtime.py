"""The one way server code publishes to websocket groups, from a request or a worker.

The in-memory channel layer (embedded mode) lives on the ASGI server's event loop and is
not thread-safe, so a worker thread hands its message to that loop; with Redis any thread
can send directly.
"""

import asyncio
import logging
import threading
from typing import Any

from asgiref.sync import async_to_sync
from channels.layers import InMemoryChannelLayer, get_channel_layer
from django.db import transaction

logger = logging.getLogger(__name__)

_server_loop: asyncio.AbstractEventLoop | None = None
_loop_lock = threading.Lock()


def remember_server_loop() -> None:
    """Called from a consumer: remember the loop the in-memory layer's queues live on."""
    global _server_loop
    with _loop_lock:
        _server_loop = asyncio.get_running_loop()


def group_send(group: str, payload: dict[str, Any]) -> None:
    """Send `payload` to every socket in `group` now. The layer may drop it; clients
    detect gaps by sequence number and re-read over REST."""
    layer = get_channel_layer()
    if layer is None:
        return
    message = {"type": "group.event", "payload": payload}
    loop = _server_loop
    try:
        if isinstance(layer, InMemoryChannelLayer) and loop is not None and loop.is_running():
            # Called from sync code (a request thread or a worker), never on the loop itself.
            asyncio.run_coroutine_threadsafe(layer.group_send(group, message), loop).result(5)
        else:
            async_to_sync(layer.group_send)(group, message)
    except Exception:  # a lost message is recovered by the client; never fail the caller
        logger.warning("could not publish to %s", group, exc_info=True)


def group_send_on_commit(group: str, payload: dict[str, Any]) -> None:
    """Publish after the current transaction commits (at once outside a transaction)."""
    transaction.on_commit(lambda: group_send(group, payload))
