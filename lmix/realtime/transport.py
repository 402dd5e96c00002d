"""daphne's websocket protocol with LMiX's limits (docs/realtime.md, "Limits").

- Sends on a socket that is closing are dropped. daphne passes them to autobahn, which
  raises "Attempt to send on a closed protocol" into the consumer: it crashed without
  leaving its groups.
- What waits for a slow client is bounded: once more than LMIX_SOCKET_MAX_QUEUED_BYTES,
  or LMIX_SOCKET_MAX_QUEUED_MESSAGES messages, wait in Twisted's send buffer for the
  kernel to take them, the socket is closed with 4408 and sends nothing more. Before,
  a client that stopped reading made the web process keep everything sent to it.
- A message over LMIX_SOCKET_MAX_MESSAGE_BYTES is refused before it is read: the client
  gets the error frame and close 1009 (autobahn dropped the TCP connection: 1006).
"""

import json
from collections import deque
from typing import Any

from daphne.server import Server
from daphne.ws_protocol import WebSocketProtocol
from django.conf import settings

from .codes import CLOSE_TOO_SLOW
from .consumers import too_large_error

# A socket closed for being slow keeps its (bounded) buffer this long for its client to
# read up to the close frame, then the connection is dropped.
SLOW_CLOSE_SECONDS = 30.0


def queued_bytes(transport: Any) -> int:
    """Bytes written to `transport` that the kernel has not taken yet: Twisted's two send
    buffers (`write` appends to the second; each write-ready turn moves it to the first)."""
    if not hasattr(transport, "dataBuffer"):
        inner = getattr(transport, "transport", None)  # TLS wraps the TCP transport
        return queued_bytes(inner) if inner is not None else 0
    return len(transport.dataBuffer) - transport.offset + transport._tempDataLen


class LimitedWebSocketProtocol(WebSocketProtocol):
    too_slow = False

    def onOpen(self) -> None:
        super().onOpen()
        self.failByDrop = False  # a protocol error closes with its code, not a TCP drop
        self.sent_bytes = 0  # written to the transport since it opened
        self.message_ends: deque[int] = deque()  # `sent_bytes` at each queued message's end

    def serverSend(self, content: str | bytes, binary: bool = False) -> None:
        if self.state == self.STATE_CONNECTING:
            self.serverAccept()
        if self.state != self.STATE_OPEN or self.too_slow:
            return  # closing or closed: nothing more goes out, and that is no error
        before = queued_bytes(self.transport)
        super().serverSend(content, binary)
        queued = queued_bytes(self.transport)
        self.sent_bytes += max(0, queued - before)  # the write only buffers: its frame
        self.message_ends.append(self.sent_bytes)
        taken = self.sent_bytes - queued  # what the kernel has taken of our messages
        while self.message_ends and self.message_ends[0] <= taken:
            self.message_ends.popleft()
        if (
            queued > settings.LMIX_SOCKET_MAX_QUEUED_BYTES
            or len(self.message_ends) > settings.LMIX_SOCKET_MAX_QUEUED_MESSAGES
        ):
            self.close_too_slow()

    def close_too_slow(self) -> None:
        """The client reads too slowly: no more messages, and close with 4408 behind what
        is queued (it learns why once it reads again). The consumer leaves its groups when
        the connection ends: at the client's answer, or after SLOW_CLOSE_SECONDS."""
        self.too_slow = True
        self.closeHandshakeTimeout = SLOW_CLOSE_SECONDS
        self.sendClose(code=CLOSE_TOO_SLOW, reason="too slow")

    def serverClose(self, code: int | None = None) -> None:
        if code is not None and 1000 < code < 3000:  # autobahn's sendClose refuses these
            self.sendCloseFrame(code=code, isReply=False)
        else:
            super().serverClose(code=code)

    def _max_message_size_exceeded(self, msg_size: int, max_msg_size: int, reason: str) -> None:
        if self.state == self.STATE_OPEN:
            self.sendMessage(json.dumps(too_large_error()).encode(), False)
        self.failByDrop = False
        super()._max_message_size_exceeded(msg_size, max_msg_size, reason)  # close 1009


def limit_websockets(server: Server) -> None:
    """Make `server` (built, not yet running: call from its `ready_callable`) open its
    websockets with `LimitedWebSocketProtocol`."""
    server.ws_factory.protocol = LimitedWebSocketProtocol


def server_limits() -> dict[str, float]:
    """daphne's `Server` arguments for the inbound size limit (autobahn counts bytes) and
    how long a handshake may take."""
    limit = settings.LMIX_SOCKET_MAX_MESSAGE_BYTES
    return {
        "websocket_max_message_size": limit,
        "websocket_max_frame_size": limit,
        "websocket_handshake_timeout": settings.LMIX_SOCKET_HANDSHAKE_SECONDS,
    }
