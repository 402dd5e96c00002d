"""The frame socket: who may connect, which groups each reader is in, typing presence, and
a kicked player's socket closing at once."""

import asyncio

import pytest
from channels.db import database_sync_to_async
from channels.testing import WebsocketCommunicator

from config.asgi import application
from synthesis.events import notify_narrative_token
from synthesis.frames import seat_update
from synthesis.models import Narrative
from tests.conftest import logged_in_client
from tests.factories import UserFactory
from tests.productions.conftest import session_cookie
from tests.synthesis.conftest import make_frame, seat_player

pytestmark = pytest.mark.django_db(transaction=True)


def frame_socket(frame_id, client=None) -> WebsocketCommunicator:
    headers = [(b"origin", b"http://localhost"), (b"host", b"localhost")]
    if client is not None:
        headers.append((b"cookie", session_cookie(client)))
    return WebsocketCommunicator(application, f"/ws/frames/{frame_id}/", headers=headers)


@database_sync_to_async
def scene():
    """A frame with its GM and two seated players (and their clients)."""
    gm = UserFactory()
    frame = make_frame(gm, open_seats=2)
    alice, alice_client = seat_player(frame, 0)
    bob, bob_client = seat_player(frame, 1)
    seats = list(frame.seats.order_by("position"))
    return frame, seats, logged_in_client(gm), alice_client, bob_client


def online(message: dict) -> bool:
    """Who-is-here chatter: a seat online or gone, or a seatless reader asking."""
    kind = message.get("type")
    return (kind == "presence" and "online" in message) or kind == "presence.ask"


async def next_event(communicator: WebsocketCommunicator, timeout: float = 5) -> dict:
    """The next message that is not online presence (sockets greet each other meanwhile)."""
    while True:
        message = await communicator.receive_json_from(timeout=timeout)
        if not online(message):
            return message


async def hears_nothing(communicator: WebsocketCommunicator, timeout: float = 0.5) -> bool:
    """Nothing but online presence arrives within `timeout`."""
    deadline = asyncio.get_running_loop().time() + timeout
    while (left := deadline - asyncio.get_running_loop().time()) > 0:
        if await communicator.receive_nothing(timeout=left):
            return True
        if not online(await communicator.receive_json_from()):
            return False
    return True


async def ready(communicator: WebsocketCommunicator) -> WebsocketCommunicator:
    connected, _ = await communicator.connect()
    assert connected
    assert (await communicator.receive_json_from(timeout=5))["type"] == "ready"
    return communicator


async def test_outsiders_are_refused_and_anonymous_sockets_told_to_log_in():
    frame, *_ = await scene()
    stranger = await database_sync_to_async(logged_in_client)(
        await database_sync_to_async(UserFactory)()
    )
    refused = frame_socket(frame.id, stranger)
    await refused.connect()
    assert (await refused.receive_output(timeout=5))["code"] == 4403
    anonymous = frame_socket(frame.id)
    await anonymous.connect()
    assert (await anonymous.receive_output(timeout=5))["code"] == 4401


async def test_a_private_stream_reaches_its_player_and_the_gm_only():
    frame, seats, gm, alice, bob = await scene()
    sockets = [await ready(frame_socket(frame.id, c)) for c in (gm, alice, bob)]
    gm_socket, alice_socket, bob_socket = sockets
    narrative = Narrative(frame_id=frame.id, seat_id=seats[0].id)
    notify_narrative_token(narrative, index=0, delta="A-ONLY")
    delta = await next_event(alice_socket)
    assert delta["delta"] == "A-ONLY" and delta["seat"] == str(seats[0].id)
    assert not delta["shared"]
    assert await next_event(gm_socket) == delta
    assert await hears_nothing(bob_socket, 0.5)
    for communicator in sockets:
        await communicator.disconnect()


async def test_a_shared_narrative_streams_to_everyone_once():
    frame, seats, gm, alice, bob = await scene()
    sockets = [await ready(frame_socket(frame.id, c)) for c in (gm, alice, bob)]
    narrative = Narrative(frame_id=frame.id, seat_id=seats[0].id, shared=True)
    notify_narrative_token(narrative, index=0, delta="FOR-ALL")
    for communicator in sockets:
        delta = await next_event(communicator)
        assert delta["delta"] == "FOR-ALL" and delta["shared"]
        assert await hears_nothing(communicator, 0.3)  # not twice (frame + GM)
    for communicator in sockets:
        await communicator.disconnect()


async def test_typing_shows_presence_to_others_never_the_text_and_only_for_ones_own_seat():
    frame, seats, gm, alice, bob = await scene()
    alice_socket = await ready(frame_socket(frame.id, alice))
    bob_socket = await ready(frame_socket(frame.id, bob))
    await alice_socket.send_json_to({"type": "vapor", "seat": str(seats[0].id), "text": "SECRET"})
    presence = await next_event(bob_socket)
    assert presence == {"type": "presence", "seat": str(seats[0].id), "typing": True}
    await next_event(alice_socket)  # her own presence comes back too
    await alice_socket.send_json_to({"type": "vapor", "seat": str(seats[1].id)})
    error = await next_event(alice_socket)
    assert error["type"] == "error" and error["code"] == "rejected"
    assert await hears_nothing(bob_socket, 0.3)
    for communicator in (alice_socket, bob_socket):
        await communicator.disconnect()


async def test_a_kicked_player_socket_closes_at_once_and_the_others_stay():
    frame, seats, gm, alice, bob = await scene()
    alice_socket = await ready(frame_socket(frame.id, alice))
    bob_socket = await ready(frame_socket(frame.id, bob))
    await database_sync_to_async(seat_update)(frame=frame, seat=seats[0], controller="open")
    # At once: the kick itself closes it (nothing else would within seconds: no ping is
    # sent). The bound is for a loaded host, not a speed to meet.
    closed = await alice_socket.receive_output(timeout=5)
    while closed["type"] != "websocket.close":  # the seat.changed event may come first
        closed = await alice_socket.receive_output(timeout=5)
    assert closed["code"] == 4403
    changed = await next_event(bob_socket)
    assert changed["type"] == "seat.changed" and changed["seat"]["controller"] == "open"
    notice = await next_event(bob_socket)  # the table reads that the GM removed her
    assert notice["type"] == "talk.created" and notice["talk"]["kind"] == "kick"
    await bob_socket.send_json_to({"type": "ping"})
    assert await next_event(bob_socket) == {"type": "pong"}
    await bob_socket.disconnect()


async def test_players_see_who_is_here_even_with_a_second_tab_closing():
    frame, seats, gm, alice, bob = await scene()
    alice_seat, bob_seat = str(seats[0].id), str(seats[1].id)
    alice_socket = await ready(frame_socket(frame.id, alice))
    assert await alice_socket.receive_json_from(timeout=5) == {
        "type": "presence",
        "seat": alice_seat,
        "online": True,
        "hello": True,
    }
    bob_socket = await ready(frame_socket(frame.id, bob))
    greeted = [await alice_socket.receive_json_from(timeout=5) for _ in range(2)]
    assert {"type": "presence", "seat": bob_seat, "online": True, "hello": True} in greeted
    # Bob learns that Alice is here: her socket answers his hello.
    heard = [await bob_socket.receive_json_from(timeout=5) for _ in range(2)]
    assert {"type": "presence", "seat": alice_seat, "online": True} in heard

    second_tab = await ready(frame_socket(frame.id, alice))
    await second_tab.disconnect()
    # The closing tab says Alice is gone; her first tab answers that she is still here.
    gone = {"type": "presence", "seat": alice_seat, "online": False}
    while (message := await bob_socket.receive_json_from(timeout=5)) != gone:
        assert online(message)  # the second tab's hello and the answers to it
    here = {"type": "presence", "seat": alice_seat, "online": True}
    while (message := await bob_socket.receive_json_from(timeout=5)) != here:
        assert online(message)

    await alice_socket.disconnect()
    while (message := await bob_socket.receive_json_from(timeout=5)) != gone:
        assert message["type"] == "presence"
    assert await bob_socket.receive_nothing(timeout=0.5)  # nobody answers for her now
    await bob_socket.disconnect()


async def test_the_gm_without_a_seat_learns_who_is_already_here():
    frame, seats, gm, alice, bob = await scene()
    alice_seat = str(seats[0].id)
    alice_socket = await ready(frame_socket(frame.id, alice))
    assert (await alice_socket.receive_json_from(timeout=5))["hello"] is True  # her own hello
    gm_socket = await ready(frame_socket(frame.id, gm))
    # The GM has no seat to greet with: their socket asks, and Alice's answers.
    here = {"type": "presence", "seat": alice_seat, "online": True}
    heard = []
    while here not in heard:
        heard.append(await gm_socket.receive_json_from(timeout=5))
    assert all(m["type"] in ("presence", "presence.ask") for m in heard)
    # Bob has no socket open: nobody says he is here.
    assert not any(m.get("seat") == str(seats[1].id) for m in heard)
    for communicator in (alice_socket, gm_socket):
        await communicator.disconnect()
