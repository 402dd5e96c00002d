"""An ordered, non-blocking outbox to the channel layer, so a streaming worker never waits
on the network per token.

Callers hand messages over in microseconds; one coroutine per process sends them in the
order they were handed over. It runs on the ASGI server's loop when the in-memory layer is
in use (that layer's queues live there and are not thread-safe), otherwise on a loop of its
own in a daemon thread, which keeps one Redis connection pool for the process's lifetime
instead of one per `async_to_sync` call.
"""

import asyncio
import logging
import threading
from typing import Any

from channels.layers import InMemoryChannelLayer, get_channel_layer

logger = logging.getLogger(__name__)

Message = tuple[str, dict[str, Any]]  # (group, layer message)


class Outbox:
    """FIFO of (group, message) sent by one drain task on one event loop."""

    def __init__(self, loop: asyncio.AbstractEventLoop) -> None:
        self.loop = loop
        self._queue: asyncio.Queue[Message | threading.Event] = asyncio.Queue()
        self._started = threading.Event()
        loop.call_soon_threadsafe(self._start)

    def _start(self) -> None:
        self._task = self.loop.create_task(self._drain())
        self._started.set()

    def put(self, group: str, message: dict[str, Any]) -> None:
        """Queue `message` for `group`; returns at once, from any thread."""
        self.loop.call_soon_threadsafe(self._queue.put_nowait, (group, message))

    def flush(self, timeout: float = 5) -> bool:
        """Wait until everything queued before this call was sent (or `timeout` passed)."""
        if not self.loop.is_running() or _running_loop() is self.loop:
            return False  # waiting on the loop's own thread would deadlock it
        done = threading.Event()
        self.loop.call_soon_threadsafe(self._queue.put_nowait, done)
        return done.wait(timeout)

    async def _drain(self) -> None:
        while True:
            item = await self._queue.get()
            if isinstance(item, threading.Event):
                item.set()
                continue
            group, message = item
            try:
                layer = get_channel_layer()
                if layer is not None:
                    await layer.group_send(group, message)
            except Exception:  # a lost message is recovered by the client; keep draining
                logger.warning("could not publish to %s", group, exc_info=True)
            # Let the sockets' own tasks read what was queued for them: on daphne's loop,
            # a burst must not fill the in-memory layer's queues before anyone drains them.
            await asyncio.sleep(0)


def _running_loop() -> asyncio.AbstractEventLoop | None:
    try:
        return asyncio.get_running_loop()
    except RuntimeError:
        return None


_lock = threading.Lock()
_outboxes: dict[int, Outbox] = {}  # id(loop) → outbox
_own_loop: asyncio.AbstractEventLoop | None = None
_server_loop: asyncio.AbstractEventLoop | None = None


def remember_server_loop() -> None:
    """Called from a consumer: remember the loop the in-memory layer's queues live on."""
    global _server_loop
    with _lock:
        _server_loop = asyncio.get_running_loop()


def _own_thread_loop() -> asyncio.AbstractEventLoop:
    global _own_loop
    if _own_loop is None or not _own_loop.is_running():
        loop = asyncio.new_event_loop()
        ready = threading.Event()

        def run() -> None:
            asyncio.set_event_loop(loop)
            loop.call_soon(ready.set)
            loop.run_forever()

        threading.Thread(target=run, name="lmix-outbox", daemon=True).start()
        ready.wait()
        _own_loop = loop
    return _own_loop


def outbox() -> Outbox | None:
    """This process's outbox for the configured layer, or None when nobody can listen (the
    in-memory layer before any socket connected to this process)."""
    layer = get_channel_layer()
    if layer is None:
        return None
    with _lock:
        if isinstance(layer, InMemoryChannelLayer):
            loop = _server_loop
            if loop is None or not loop.is_running():
                return None
        else:
            loop = _own_thread_loop()
        box = _outboxes.get(id(loop))
        if box is None or box.loop is not loop:
            for key in [k for k, old in _outboxes.items() if old.loop.is_closed()]:
                del _outboxes[key]  # loops of finished test runs
            box = _outboxes[id(loop)] = Outbox(loop)
        return box
