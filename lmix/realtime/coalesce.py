"""Rate-limiting a socket's ephemeral messages (typing presence) by coalescing them."""

import asyncio
import time
from collections.abc import Callable
from typing import Any


class Coalescer:
    """Publishes at most `per_second` values per key; values that come faster are coalesced
    into the latest one, published when its interval ends. Nothing is dropped for good:
    the last value a client sent always goes out, at most 1 / `per_second` late.

    Use one per socket, on the event loop, and `cancel` it when the socket ends.
    """

    def __init__(self, publish: Callable[[str, Any], None], per_second: float) -> None:
        self.publish = publish
        self.interval = 1 / per_second if per_second > 0 else 0.0
        self.sent_at: dict[str, float] = {}
        self.pending: dict[str, Any] = {}
        self.timers: dict[str, asyncio.TimerHandle] = {}

    def put(self, key: str, value: Any) -> None:
        if key in self.timers:  # an interval is running: this value replaces the waiting one
            self.pending[key] = value
            return
        wait = self.sent_at.get(key, float("-inf")) + self.interval - time.monotonic()
        if wait <= 0:
            self._send(key, value)
            return
        self.pending[key] = value
        self.timers[key] = asyncio.get_running_loop().call_later(wait, self._flush, key)

    def _flush(self, key: str) -> None:
        self.timers.pop(key, None)
        if key in self.pending:
            self._send(key, self.pending.pop(key))

    def _send(self, key: str, value: Any) -> None:
        self.sent_at[key] = time.monotonic()
        self.publish(key, value)

    def cancel(self) -> None:
        """Forget what waits: the socket ended."""
        for timer in self.timers.values():
            timer.cancel()
        self.timers.clear()
        self.pending.clear()
