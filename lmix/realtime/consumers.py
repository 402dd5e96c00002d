"""The shared base of LMiX websocket consumers: joining server-derived groups, a table of
inbound handlers, one error frame, and revocation."""

import json
import time
from collections import Counter
from collections.abc import Awaitable, Callable
from typing import Any, ClassVar

from autobahn.exception import Disconnected
from channels.consumer import get_handler_name
from channels.generic.websocket import AsyncJsonWebsocketConsumer
from django.conf import settings

from lmix.errors import ApplicationError
from lmix.heap import collector
from lmix.throttles import peer_address

from .codes import (
    CLOSE_FORBIDDEN,
    CLOSE_TOO_LARGE,
    CLOSE_TOO_MANY,
    CLOSE_UNAUTHENTICATED,
)
from .layers import release_channel
from .publish import remember_server_loop

__all__ = ["CLOSE_FORBIDDEN", "CLOSE_UNAUTHENTICATED", "GroupConsumer", "Handler"]

# An inbound message handler: (consumer, the decoded message) → None.
Handler = Callable[[Any, dict[str, Any]], Awaitable[None]]

# Sockets open in this process per (user, path): at most LMIX_SOCKETS_PER_USER_PER_FRAME.
open_sockets: Counter[tuple[str, str]] = Counter()


def too_large_error() -> dict[str, str]:
    """The error frame a message over the size limit gets before close 1009 (here and in
    the web server's protocol, lmix/realtime/transport.py, which refuses it unread)."""
    limit = settings.LMIX_SOCKET_MAX_MESSAGE_BYTES
    return {"type": "error", "code": "too_large", "detail": f"Messages are at most {limit} bytes."}


class GroupConsumer(AsyncJsonWebsocketConsumer):
    """Accepts, checks the session's user with `authorize`, joins the groups it returns.

    The groups are derived on the server; a client can never choose what it subscribes to.
    Inbound messages are JSON objects `{"type": ...}` dispatched through `handlers`, which
    subclasses extend:

        async def on_vote(self, message): ...
        handlers = GroupConsumer.handlers | {"vote": on_vote}

    Anything else is answered with one error frame (`send_error`) that never echoes the
    input. A `revoke` published to a joined group makes the matching sockets leave their
    groups and close; a ping older than `recheck_seconds` since the last check asks
    `authorize` again, the backstop for a revocation the layer dropped.

    However a socket ends (a disconnect, a handler's error, daphne cancelling it while a
    handler still waits), `release` runs once: it leaves every group joined, calls `left`,
    and gives the channel back to the layer. Nothing is sent once it is closing.
    """

    recheck_seconds: ClassVar[float] = 30
    # Whether a signed-out visitor may connect (the spectator link only): their sockets
    # are counted per address instead of per user. Every other socket closes 4401.
    allows_anonymous: ClassVar[bool] = False
    groups_joined: list[str]
    live: bool  # joined and ready; False again once it leaves
    closing: bool  # it closed, or its client did: nothing more is sent
    checked_at: float
    slot: tuple[str, str] | None  # its place in `open_sockets`, while it holds one

    async def __call__(self, scope, receive, send) -> None:
        self.groups_joined, self.live, self.closing, self.slot = [], False, False, None
        try:
            await super().__call__(scope, receive, self.guard(send))
        finally:
            await self.release()

    def guard(self, send: Callable[[dict[str, Any]], Awaitable[None]]):
        """The server's `send`, dropping what is sent once the socket is closing."""

        async def guarded(message: dict[str, Any]) -> None:
            if self.closing:  # the protocol may be gone: a send there is dropped, not raised
                return
            if message["type"] == "websocket.close":
                self.closing = True
                self.free_slot()  # a reconnect may take its place at once
            try:
                await send(message)
            except Disconnected:  # daphne hands autobahn's error on a closing socket on
                self.closing = True

        return guarded

    async def release(self) -> None:
        self.closing = True
        await self.leave_groups()
        await self.left()
        self.free_slot()
        if getattr(self, "channel_name", None) is not None:
            await release_channel(self.channel_layer, self.channel_name)

    async def left(self) -> None:
        """Called once when the socket has ended and left its groups."""

    def address(self) -> str:
        """A signed-out visitor's socket slot: their address, as the REST throttles count
        it (behind LMIX_TRUSTED_PROXY_COUNT proxies, from X-Forwarded-For)."""
        client = self.scope.get("client") or ("", 0)
        forwarded = dict(self.scope.get("headers", [])).get(b"x-forwarded-for", b"")
        return f"address:{peer_address(client[0] or '', forwarded.decode('latin-1'))}"

    def free_slot(self) -> None:
        if self.slot is not None:
            open_sockets[self.slot] -= 1
            if open_sockets[self.slot] <= 0:
                del open_sockets[self.slot]
            self.slot = None

    async def authorize(self, user: Any) -> list[str] | None:
        """Return the groups this user may join on this socket, or None to refuse."""
        raise NotImplementedError

    async def connect(self) -> None:
        remember_server_loop()
        self.groups_joined, self.live = [], False
        await self.accept()
        user = self.scope.get("user")
        signed_in = user is not None and user.is_authenticated
        if user is None or not (signed_in or self.allows_anonymous):
            await self.close(code=CLOSE_UNAUTHENTICATED)
            return
        slot = (str(user.pk) if signed_in else self.address(), self.scope.get("path", ""))
        if open_sockets[slot] >= settings.LMIX_SOCKETS_PER_USER_PER_FRAME:
            await self.close(code=CLOSE_TOO_MANY)
            return
        open_sockets[slot] += 1
        self.slot = slot
        groups = await self.authorize(user)
        if groups is None:
            await self.close(code=CLOSE_FORBIDDEN)
            return
        for group in groups:
            self.groups_joined.append(group)  # before the await: a cancel still leaves it
            await self.channel_layer.group_add(group, self.channel_name)
        # A revocation published between the check and the joins missed this socket; one
        # published from now on reaches it. Checking again closes that gap.
        if not await self.still_authorized():
            return
        self.live = True
        await self.send_json({"type": "ready"})

    async def websocket_disconnect(self, message: dict[str, Any]) -> None:
        self.closing = True
        await super().websocket_disconnect(message)

    async def disconnect(self, code: int) -> None:
        await self.leave_groups()

    async def leave_groups(self) -> None:
        self.live = False
        while self.groups_joined:
            group = self.groups_joined.pop()
            await self.channel_layer.group_discard(group, self.channel_name)

    async def still_authorized(self) -> bool:
        """Ask `authorize` again; leave and close with 4403 when a joined group is no
        longer allowed."""
        allowed = await self.authorize(self.scope["user"])
        self.checked_at = time.monotonic()
        if allowed is not None and set(self.groups_joined) <= set(allowed):
            return True
        await self.leave_groups()
        await self.close(code=CLOSE_FORBIDDEN)
        return False

    # Inbound messages.

    async def on_ping(self, message: dict[str, Any]) -> None:
        stale = time.monotonic() - self.checked_at >= self.recheck_seconds
        if stale and not await self.still_authorized():
            return
        await self.send_json({"type": "pong"})

    handlers: ClassVar[dict[str, Handler]] = {"ping": on_ping}

    async def send_error(self, code: str, detail: str) -> None:
        """The one error frame: a stable `code` for programs, a `detail` for people."""
        await self.send_json({"type": "error", "code": code, "detail": detail})

    async def receive(
        self, text_data: str | None = None, bytes_data: bytes | None = None, **kwargs
    ) -> None:
        if not self.live:  # refused or revoked, and closing: nothing more is answered
            return
        limit = settings.LMIX_SOCKET_MAX_MESSAGE_BYTES
        size = len(bytes_data or b"") if text_data is None else len(text_data)
        if size > limit or (
            text_data is not None and len(text_data.encode("utf-8", "surrogatepass")) > limit
        ):
            await self.send_json(too_large_error())
            await self.close(code=CLOSE_TOO_LARGE)
            return
        if text_data is None:
            await self.send_error("invalid_json", "Messages must be JSON text.")
            return
        try:
            content = json.loads(text_data)
            # A lone surrogate (\ud800) parses, but can be neither stored nor sent on.
            json.dumps(content, ensure_ascii=False).encode()
        except (ValueError, RecursionError):  # RecursionError: nested too deeply
            await self.send_error("invalid_json", "Messages must be JSON in valid Unicode.")
            return
        await self.receive_json(content)

    async def receive_json(self, content: Any, **kwargs) -> None:
        kind = content.get("type") if isinstance(content, dict) else None
        handler = self.handlers.get(kind) if isinstance(kind, str) else None
        if handler is None:
            known = ", ".join(sorted(self.handlers))
            await self.send_error(
                "unknown_type", f"Unknown message type; this socket takes: {known}."
            )
            return
        try:
            await handler(self, content)
        except ApplicationError as error:
            await self.send_error("rejected", error.message)

    async def dispatch(self, message: dict[str, Any]) -> None:
        # Channels hops to a thread before every handler to close stale database
        # connections: one hop per socket message, queued behind every other socket's.
        # These handlers reach the database only through database_sync_to_async, which
        # closes them around its own call, so the hop is skipped.
        collector.active_at = time.monotonic()  # garbage is collected when sockets are quiet
        handler = getattr(self, get_handler_name(message), None)
        if handler is None:
            raise ValueError(f"No handler for message type {message['type']}")
        await handler(message)

    # Messages from the channel layer.

    async def group_event(self, event: dict[str, Any]) -> None:
        if self.live:  # events already queued when it left are not sent
            await self.send_json(event["payload"])

    async def group_revoke(self, message: dict[str, Any]) -> None:
        user_id = message.get("user_id")
        if user_id is None or user_id == str(self.scope["user"].pk):
            await self.leave_groups()
            await self.close(code=message.get("close_code", CLOSE_FORBIDDEN))
