"""The consumer base (lmix/realtime/consumers.py) on the configured channel layer: idle
sockets stay, inbound messages go through the handler table, errors never echo the input,
and a revocation closes exactly the sockets it names."""

import asyncio
import uuid
from collections.abc import Callable
from types import SimpleNamespace
from typing import Any

import pytest
from channels.testing import WebsocketCommunicator
from channels_redis.core import RedisChannelLayer
from django.conf import settings

from lmix.errors import ApplicationError
from lmix.realtime.consumers import GroupConsumer
from lmix.realtime.publish import group_send, revoke

ON_REDIS = bool(settings.REDIS_URL)

# user → the groups the user may join on this socket, or None.
Access = Callable[[Any], list[str] | None]


class RoomConsumer(GroupConsumer):
    """A consumer for tests: access comes from the scope; one extra inbound type."""

    async def authorize(self, user: Any) -> list[str] | None:
        return self.scope["access"](user)

    async def on_shout(self, message: dict[str, Any]) -> None:
        if not isinstance(message.get("text"), str):
            raise ApplicationError("Say something.")
        await self.send_json({"type": "shouted", "text": message["text"].upper()})

    handlers = GroupConsumer.handlers | {"shout": on_shout}


class CoreLayerRoomConsumer(RoomConsumer):
    channel_layer_alias = "core"


class RecheckingRoomConsumer(RoomConsumer):
    recheck_seconds = 0


def user(pk: int) -> SimpleNamespace:
    return SimpleNamespace(pk=pk, is_authenticated=True)


def members(group: str, *user_ids: int) -> Access:
    return lambda u: [group] if u.pk in user_ids else None


def app_for(access: Access, who: SimpleNamespace, consumer: type[GroupConsumer] = RoomConsumer):
    inner = consumer.as_asgi()

    async def app(scope, receive, send):
        return await inner({**scope, "user": who, "access": access}, receive, send)

    return app


async def open_socket(
    access: Access, who: SimpleNamespace, consumer: type[GroupConsumer] = RoomConsumer
) -> WebsocketCommunicator:
    communicator = WebsocketCommunicator(app_for(access, who, consumer), "/ws/test/")
    connected, _ = await communicator.connect(timeout=5)
    assert connected
    assert await communicator.receive_json_from(timeout=5) == {"type": "ready"}
    return communicator


def room() -> str:
    return f"room.{uuid.uuid4().hex[:12]}"  # Redis runs share a server with other runs


async def pong(communicator: WebsocketCommunicator) -> bool:
    await communicator.send_json_to({"type": "ping"})
    return await communicator.receive_json_from(timeout=5) == {"type": "pong"}


async def test_an_idle_socket_outlasts_the_layers_blocking_reads_then_answers_a_ping(
    settings, monkeypatch
):
    consumers: list[type[GroupConsumer]] = [RoomConsumer]
    if ON_REDIS:
        # The list-based layer too: its idle read blocks 5 s in BZPOPMIN, which is what a
        # 5 s socket_timeout cut with 1011 (channels_redis#422): the configured read timeout
        # must outlast the blocking read. Both are scaled down by the same factor, so the
        # socket idles through two blocking reads in a second instead of fifteen.
        default = settings.CHANNEL_LAYERS["default"]
        hosts = default["CONFIG"]["hosts"]
        assert all(host["socket_timeout"] > RedisChannelLayer.brpop_timeout for host in hosts)
        scale = 0.1
        monkeypatch.setattr(
            RedisChannelLayer, "brpop_timeout", RedisChannelLayer.brpop_timeout * scale
        )
        scaled = [{**host, "socket_timeout": host["socket_timeout"] * scale} for host in hosts]
        core = {
            "BACKEND": "channels_redis.core.RedisChannelLayer",
            "CONFIG": {**default["CONFIG"], "hosts": scaled},
        }
        settings.CHANNEL_LAYERS = {**settings.CHANNEL_LAYERS, "core": core}
        consumers.append(CoreLayerRoomConsumer)
    group = room()
    sockets = [await open_socket(members(group, 1), user(1), c) for c in consumers]

    await asyncio.sleep(1)

    for communicator in sockets:
        assert await pong(communicator)  # a crashed consumer raises its error here
        await communicator.disconnect()


async def test_the_handler_table_dispatches_and_subclasses_extend_it():
    communicator = await open_socket(members(room(), 1), user(1))
    assert await pong(communicator)
    await communicator.send_json_to({"type": "shout", "text": "hello"})
    assert await communicator.receive_json_from(timeout=5) == {"type": "shouted", "text": "HELLO"}
    await communicator.send_json_to({"type": "shout"})  # the handler refuses: a service error
    assert await communicator.receive_json_from(timeout=5) == {
        "type": "error",
        "code": "rejected",
        "detail": "Say something.",
    }
    await communicator.disconnect()


async def test_events_and_messages_reach_handlers_without_a_thread_hop_each(monkeypatch):
    # Channels hops to a thread to close stale database connections before every handler;
    # these consumers reach the database only in database_sync_to_async, so they skip it.
    hops = []

    async def counted_hop() -> None:
        hops.append(1)

    monkeypatch.setattr("channels.consumer.aclose_old_connections", counted_hop)
    group = room()
    communicator = await open_socket(members(group, 1), user(1))
    for n in range(5):
        group_send(group, {"type": "note", "n": n})
    for n in range(5):
        assert await communicator.receive_json_from(timeout=5) == {"type": "note", "n": n}
    assert await pong(communicator)
    assert hops == []
    await communicator.disconnect()


@pytest.mark.parametrize(
    ("sent", "code"),
    [
        ('{"type": "subscribe", "group": "MARKER-7731"}', "unknown_type"),
        ('{"kind": "MARKER-7731"}', "unknown_type"),
        ('["MARKER-7731"]', "unknown_type"),
        ('{"type": ["MARKER-7731"]}', "unknown_type"),
        ("MARKER-7731 is not JSON", "invalid_json"),
        ('{"type": "ping", "MARKER-7731": ' + "[" * 20_000, "invalid_json"),
        ("[" * 20_000 + "]" * 20_000, "invalid_json"),  # valid JSON, too deep to parse
        ('{"type": "shout", "text": "MARKER-7731 \\ud800"}', "invalid_json"),  # lone surrogate
    ],
    ids=[
        "unknown",
        "no-type",
        "not-an-object",
        "type-not-text",
        "not-json",
        "cut",
        "deep",
        "surrogate",
    ],
)
async def test_a_bad_message_gets_one_error_frame_that_does_not_echo_it(sent, code):
    communicator = await open_socket(members(room(), 1), user(1))
    await communicator.send_to(text_data=sent)
    error = await communicator.receive_json_from(timeout=5)
    assert error["type"] == "error" and error["code"] == code
    assert error["detail"] and "MARKER" not in error["detail"]
    assert await communicator.receive_nothing(timeout=0.2)
    assert await pong(communicator)  # the socket stays usable
    await communicator.disconnect()


async def test_a_binary_message_gets_an_error_frame():
    communicator = await open_socket(members(room(), 1), user(1))
    await communicator.send_to(bytes_data=b'{"type": "ping"}')
    assert (await communicator.receive_json_from(timeout=5))["code"] == "invalid_json"
    await communicator.disconnect()


async def closed_with(communicator: WebsocketCommunicator, timeout: float = 1) -> int | None:
    """The close code the socket gets within `timeout` (other output is skipped)."""
    loop = asyncio.get_running_loop()
    deadline = loop.time() + timeout
    while (remaining := deadline - loop.time()) > 0:
        try:
            output = await communicator.receive_output(timeout=remaining)
        except TimeoutError:
            return None
        if output["type"] == "websocket.close":
            return output["code"]
    return None


async def test_revoking_a_user_closes_that_users_sockets_in_the_group_only():
    group, elsewhere = room(), room()
    mine = await open_socket(members(group, 1, 2), user(1))
    theirs = await open_socket(members(group, 1, 2), user(2))
    mine_elsewhere = await open_socket(members(elsewhere, 1), user(1))

    revoke(group, user_id=1)

    assert await closed_with(mine) == 4403  # within a second
    assert await pong(theirs) and await pong(mine_elsewhere)
    group_send(group, {"type": "note", "n": 1})
    assert await theirs.receive_json_from(timeout=5) == {"type": "note", "n": 1}
    assert await mine.receive_nothing(timeout=0.3)  # it left the group: nothing more
    for communicator in (theirs, mine_elsewhere):
        await communicator.disconnect()


async def test_revoking_a_group_closes_every_socket_in_it_and_no_other():
    group, elsewhere = room(), room()
    first = await open_socket(members(group, 1, 2), user(1))
    second = await open_socket(members(group, 1, 2), user(2))
    other = await open_socket(members(elsewhere, 2), user(2))

    revoke(group, close_code=4403)

    assert await closed_with(first) == 4403 and await closed_with(second) == 4403
    assert await pong(other)
    await other.disconnect()


async def test_access_lost_while_joining_closes_the_socket_before_ready():
    group = room()
    answers = iter([[group], None])  # allowed at the check, revoked before the joins ended

    app = app_for(lambda u: next(answers), user(1))
    communicator = WebsocketCommunicator(app, "/ws/test/")
    connected, _ = await communicator.connect(timeout=5)
    assert connected  # accepted first, so the browser sees the close code
    assert await communicator.receive_output(timeout=5) == {
        "type": "websocket.close",
        "code": 4403,
    }


async def test_a_ping_checks_access_again_and_closes_a_socket_that_lost_it():
    group = room()
    allowed = {1}
    communicator = await open_socket(
        lambda u: [group] if u.pk in allowed else None, user(1), RecheckingRoomConsumer
    )
    assert await pong(communicator)
    allowed.clear()  # access ends, and the revocation was lost on the way
    await communicator.send_json_to({"type": "ping"})
    assert await closed_with(communicator) == 4403
