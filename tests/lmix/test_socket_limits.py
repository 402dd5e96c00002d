"""A socket's end and its limits (lmix/realtime/consumers.py) on the configured channel
layer: however a socket ends it leaves its groups and gives its channel back, a send on a
closing socket never crashes it, a user's sockets per page are capped, and a message over
the size limit gets the error frame and close 1009."""

import asyncio
from types import SimpleNamespace
from typing import Any

import pytest
from autobahn.exception import Disconnected
from channels.layers import get_channel_layer
from channels.testing import WebsocketCommunicator

from lmix.realtime.coalesce import Coalescer
from lmix.realtime.consumers import open_sockets
from lmix.realtime.publish import group_send
from tests.lmix.test_realtime_consumers import (
    RoomConsumer,
    app_for,
    closed_with,
    members,
    open_socket,
    room,
    user,
)


class TrackedConsumer(RoomConsumer):
    """Remembers its instances (for their channel names); a `group.boom` is a handler's bug."""

    instances: list["TrackedConsumer"] = []

    async def connect(self) -> None:
        TrackedConsumer.instances.append(self)
        await super().connect()

    async def group_boom(self, message: dict[str, Any]) -> None:
        raise RuntimeError("a handler's bug")


def held_by_layer(channel: str) -> list[str]:
    """Where this process's layer still holds `channel`: its queue, and the groups it is in."""
    layer = get_channel_layer()
    inner = layer._get_layer() if hasattr(layer, "_get_layer") else layer  # pub/sub: per loop
    held = ["channel"] if channel in inner.channels else []
    return held + [group for group, members in inner.groups.items() if channel in members]


async def tracked_socket(group: str, send_fails: asyncio.Event | None = None):
    """A socket in `group`; once `send_fails` is set, every send raises what daphne passes on
    from autobahn when the protocol is closing."""
    inner = app_for(members(group, 1), user(1), TrackedConsumer)

    async def app(scope, receive, send):
        async def guarded_send(message):
            if send_fails is not None and send_fails.is_set():
                raise Disconnected("Attempt to send on a closed protocol")
            await send(message)

        return await inner(scope, receive, guarded_send)

    communicator = WebsocketCommunicator(app, "/ws/test/")
    assert (await communicator.connect(timeout=5))[0]
    assert await communicator.receive_json_from(timeout=5) == {"type": "ready"}
    return communicator, TrackedConsumer.instances[-1]


async def test_a_send_on_a_closing_socket_is_dropped_and_the_socket_still_leaves_its_groups():
    group, send_fails = room(), asyncio.Event()
    communicator, consumer = await tracked_socket(group, send_fails)
    assert held_by_layer(consumer.channel_name)  # joined
    send_fails.set()  # the client's close is under way
    group_send(group, {"type": "note"})
    await communicator.send_to(text_data='{"type": "ping"}')  # answered into the closed socket
    await communicator.disconnect(timeout=5)  # raised the consumer's error before the fix
    assert held_by_layer(consumer.channel_name) == []


async def test_a_socket_whose_handler_fails_still_leaves_its_groups_and_gives_its_channel_back():
    group = room()
    communicator, consumer = await tracked_socket(group)
    await get_channel_layer().group_send(group, {"type": "group.boom"})
    with pytest.raises(RuntimeError):
        await communicator.wait(timeout=5)
    # Before: still in the group, and (pub/sub) still subscribed, queueing every later event.
    assert held_by_layer(consumer.channel_name) == []


async def test_a_user_may_hold_only_so_many_sockets_on_one_page(settings):
    settings.LMIX_SOCKETS_PER_USER_PER_FRAME = 3
    group = room()
    sockets = [await open_socket(members(group, 1, 2), user(1)) for _ in range(3)]
    one_more = WebsocketCommunicator(app_for(members(group, 1, 2), user(1)), "/ws/test/")
    assert (await one_more.connect(timeout=5))[0]
    assert await closed_with(one_more, timeout=5) == 4429
    # Another user is not counted with them; a closed socket frees its place.
    other = await open_socket(members(group, 1, 2), user(2))
    await sockets.pop().disconnect()
    sockets.append(await open_socket(members(group, 1, 2), user(1)))
    for communicator in [*sockets, other]:
        await communicator.disconnect()
    assert not [slot for slot in open_sockets if slot[1] == "/ws/test/"]


class OpenRoomConsumer(RoomConsumer):
    allows_anonymous = True  # like the spectator link's socket


def visitor_app(address: str, consumer: type[RoomConsumer] = OpenRoomConsumer):
    """A signed-out visitor (no session) from `address`, on a socket anyone may join."""
    anonymous = SimpleNamespace(pk=None, is_authenticated=False)
    inner = app_for(lambda _: ["open-room"], anonymous, consumer)

    async def app(scope, receive, send):
        return await inner({**scope, "client": (address, 40000)}, receive, send)

    return app


async def test_a_signed_out_visitor_is_refused_unless_the_socket_allows_them():
    refused = WebsocketCommunicator(visitor_app("10.1.1.1", RoomConsumer), "/ws/test/")
    assert (await refused.connect(timeout=5))[0]
    assert await closed_with(refused, timeout=5) == 4401


async def test_signed_out_visitors_hold_only_so_many_sockets_per_address(settings):
    settings.LMIX_SOCKETS_PER_USER_PER_FRAME = 2
    sockets = [WebsocketCommunicator(visitor_app("10.1.1.1"), "/ws/test/") for _ in range(3)]
    for communicator in sockets[:2]:
        assert (await communicator.connect(timeout=5))[0]
        assert await communicator.receive_json_from(timeout=5) == {"type": "ready"}
    assert (await sockets[2].connect(timeout=5))[0]
    assert await closed_with(sockets[2], timeout=5) == 4429
    elsewhere = WebsocketCommunicator(visitor_app("10.2.2.2"), "/ws/test/")
    assert (await elsewhere.connect(timeout=5))[0]
    assert await elsewhere.receive_json_from(timeout=5) == {"type": "ready"}
    for communicator in [*sockets[:2], elsewhere]:
        await communicator.disconnect()
    assert not [slot for slot in open_sockets if slot[1] == "/ws/test/"]


@pytest.mark.parametrize(
    "text",
    [
        '{"type": "ping", "pad": "' + "x" * 70_000 + '"}',
        '{"type": "ping", "pad": "' + "é" * 33_000 + '"}',
    ],
    ids=["ascii", "two-byte-characters"],
)
async def test_a_message_over_the_limit_gets_the_error_frame_and_close_1009(settings, text):
    settings.LMIX_SOCKET_MAX_MESSAGE_BYTES = 65536
    communicator = await open_socket(members(room(), 1), user(1))
    await communicator.send_to(text_data=text)
    error = await communicator.receive_json_from(timeout=5)
    assert error == {"type": "error", "code": "too_large", "detail": error["detail"]}
    assert "65536 bytes" in error["detail"]
    assert await closed_with(communicator, timeout=5) == 1009
    await communicator.disconnect()


async def test_typing_sent_faster_than_the_rate_is_coalesced_into_its_latest_state():
    published: list[tuple[str, Any]] = []
    vapor = Coalescer(lambda seat, typing: published.append((seat, typing)), per_second=20)
    for _ in range(30):
        vapor.put("a", True)
    vapor.put("a", False)
    vapor.put("b", True)
    assert published == [("a", True), ("b", True)]  # the first of each at once
    await asyncio.sleep(0.2)  # the interval ends: the latest state goes out, once
    assert published == [("a", True), ("b", True), ("a", False)]
    vapor.put("a", True)  # the interval is over: at once
    vapor.put("a", False)
    vapor.cancel()  # the socket ended: what waited is forgotten
    await asyncio.sleep(0.2)
    assert published[3:] == [("a", True)]


def test_daphne_waits_for_a_handshake_as_long_as_the_setting_says(settings):
    from lmix.realtime.transport import server_limits

    settings.LMIX_SOCKET_HANDSHAKE_SECONDS = 42.0
    assert server_limits()["websocket_handshake_timeout"] == 42.0
