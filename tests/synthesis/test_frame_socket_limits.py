"""The frame socket under abuse: typing sent as fast as a client can is coalesced per socket,
and a socket that ends badly still tells the others its seat is gone."""

import asyncio

import pytest
from autobahn.exception import Disconnected
from channels.db import database_sync_to_async
from channels.testing import WebsocketCommunicator

from config.asgi import application
from tests.productions.conftest import session_cookie
from tests.synthesis.conftest import make_frame, seat_player

pytestmark = pytest.mark.django_db(transaction=True)


@database_sync_to_async
def seated(user):
    frame = make_frame(user, open_seats=1)
    _, client = seat_player(frame, 0)
    return frame, str(frame.seats.get(position=0).pk), session_cookie(client)


def frame_socket(frame_id, cookie: bytes, send_fails: asyncio.Event | None = None):
    """A player's socket; once `send_fails` is set, every send raises what daphne passes
    on from autobahn while the connection is closing."""

    async def app(scope, receive, send):
        async def guarded(message):
            if send_fails is not None and send_fails.is_set():
                raise Disconnected("Attempt to send on a closed protocol")
            await send(message)

        return await application(scope, receive, guarded)

    headers = [(b"origin", b"http://localhost"), (b"host", b"localhost"), (b"cookie", cookie)]
    return WebsocketCommunicator(app, f"/ws/frames/{frame_id}/", headers=headers)


async def ready(communicator: WebsocketCommunicator) -> WebsocketCommunicator:
    assert (await communicator.connect(timeout=5))[0]
    while (await communicator.receive_json_from(timeout=5))["type"] != "ready":
        pass
    return communicator


def typing(events, seat: str) -> list[bool]:
    return [e["typing"] for _, e in events if e.get("seat") == seat and "typing" in e]


async def test_typing_faster_than_the_rate_is_published_once_per_interval(user, settings, events):
    settings.LMIX_VAPOR_PER_SECOND = 0.01  # one per 100 s: only the first goes out here
    frame, seat, cookie = await seated(user)
    socket = await ready(frame_socket(frame.pk, cookie))
    for _ in range(30):
        await socket.send_json_to({"type": "vapor", "seat": seat})
    await socket.send_json_to({"type": "ping"})
    while (await socket.receive_json_from(timeout=5))["type"] != "pong":
        pass  # every vapor before the ping was handled
    assert typing(events, seat) == [True]  # before: 30 presence events, one per keystroke
    await socket.disconnect()
    assert typing(events, seat) == [True]  # what waited is dropped with the socket


async def test_a_socket_that_ends_while_closing_still_says_its_seat_is_gone(user, events):
    frame, seat, cookie = await seated(user)
    send_fails = asyncio.Event()
    socket = await ready(frame_socket(frame.pk, cookie, send_fails))
    assert {"type": "presence", "seat": seat, "online": True, "hello": True} in [
        e for _, e in events
    ]
    send_fails.set()  # the client's close is under way: what the socket sends fails
    await socket.send_json_to({"type": "ping"})
    await socket.disconnect(timeout=5)  # before: the consumer crashed on the pong
    assert [e for _, e in events][-1] == {"type": "presence", "seat": seat, "online": False}
