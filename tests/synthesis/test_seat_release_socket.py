"""A released seat stops its player's private stream at once (issue 7, §6): releasing a
seat over the API closes every socket of that player with 4403 (docs/realtime.md, "A
kicked or released seat's player is revoked from the frame's groups"), the seat's stream
goes on to the GM only, and the other player and the GM keep theirs."""

import pytest
from channels.db import database_sync_to_async
from channels.testing import WebsocketCommunicator

from synthesis.events import notify_narrative_token
from synthesis.models import Narrative
from tests.synthesis.test_frame_socket import frame_socket, hears_nothing, next_event, ready, scene

pytestmark = pytest.mark.django_db(transaction=True)


async def closes_with(communicator: WebsocketCommunicator, timeout: float = 5) -> int:
    """The close code the socket gets within `timeout` (seat.changed may come first)."""
    output = await communicator.receive_output(timeout=timeout)
    while output["type"] != "websocket.close":
        assert output["type"] == "websocket.send"
        output = await communicator.receive_output(timeout=timeout)
    return output["code"]


def delta(frame, seat, text: str) -> None:
    """A delta of `seat`'s private narrative, published at once as a worker does."""
    notify_narrative_token(Narrative(frame_id=frame.id, seat_id=seat.id), index=0, delta=text)


async def test_a_released_seat_stops_its_players_stream_at_once_and_the_others_keep_theirs():
    frame, seats, gm, alice, bob = await scene()
    gm_socket = await ready(frame_socket(frame.id, gm))
    alice_socket = await ready(frame_socket(frame.id, alice))
    alice_tab = await ready(frame_socket(frame.id, alice))  # a second tab of hers
    bob_socket = await ready(frame_socket(frame.id, bob))

    # Before: her seat's stream reaches both her tabs and the GM, not Bob.
    delta(frame, seats[0], "A-BEFORE")
    for communicator in (alice_socket, alice_tab, gm_socket):
        assert (await next_event(communicator))["delta"] == "A-BEFORE"
    assert await hears_nothing(bob_socket, 0.3)

    left = await database_sync_to_async(alice.post)(
        f"/api/frames/{frame.id}/leave", {"seat": str(seats[0].id)}, format="json"
    )
    assert left.status_code == 204
    assert await closes_with(alice_socket) == 4403
    assert await closes_with(alice_tab) == 4403

    # After: the seat's stream goes on to the GM only; Bob's own stream still reaches him.
    delta(frame, seats[0], "A-AFTER")
    delta(frame, seats[1], "B-AFTER")
    gm_heard = [await next_event(gm_socket) for _ in range(4)]
    assert sorted(e.get("delta", e["type"]) for e in gm_heard) == [
        "A-AFTER",
        "B-AFTER",
        "seat.changed",
        "talk.created",  # the table reads that she left
    ]
    bob_heard = [await next_event(bob_socket) for _ in range(3)]
    assert sorted(e.get("delta", e["type"]) for e in bob_heard) == [
        "B-AFTER",
        "seat.changed",
        "talk.created",
    ]
    changed = next(e for e in bob_heard if e["type"] == "seat.changed")
    assert changed["seat"]["id"] == str(seats[0].id) and changed["seat"]["user"] is None
    for communicator in (alice_socket, alice_tab):
        assert await communicator.receive_nothing(timeout=0.5)  # not A-AFTER, nothing
    assert await hears_nothing(bob_socket, 0.3)  # never her seat's stream

    # She cannot come back to it either: a new socket is refused.
    again = frame_socket(frame.id, alice)
    await again.connect()
    assert (await again.receive_output(timeout=5))["code"] == 4403

    await bob_socket.send_json_to({"type": "ping"})
    assert await next_event(bob_socket) == {"type": "pong"}
    for communicator in (gm_socket, bob_socket):
        await communicator.disconnect()
