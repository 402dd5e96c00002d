"""A held outcome over real frame and spectator sockets (channels' communicators, the
in-memory layer): the GM's socket reads it whole, each player's socket the empty
placeholder, a spectator's nothing; once the GM releases it, everyone's socket reads it."""

import pytest
from channels.db import database_sync_to_async
from django.db import transaction

from synthesis.events import notify_outcome
from synthesis.frame_events import next_seq
from synthesis.frames import spectators_set
from synthesis.models import Outcome
from synthesis.outcomes import outcome_release
from tests.conftest import logged_in_client
from tests.factories import UserFactory
from tests.synthesis.conftest import make_frame, seat_player
from tests.synthesis.test_frame_socket import frame_socket, hears_nothing, next_event, ready
from tests.synthesis.test_spectators import spectator_socket

pytestmark = pytest.mark.django_db(transaction=True)

MARKER = "HELD-SOCKET-MARKER-4410"


@database_sync_to_async
def scene():
    gm = UserFactory()
    frame = make_frame(gm, open_seats=2)
    _, alice = seat_player(frame, 0)
    _, bob = seat_player(frame, 1)
    code = spectators_set(frame=frame, enabled=True).spectator_code
    return gm, frame, logged_in_client(gm), alice, bob, code, logged_in_client(UserFactory())


@database_sync_to_async
def hold(frame) -> Outcome:
    """An outcome the guard flagged in a frame that holds, announced as `_store` does."""
    with transaction.atomic():
        seat = frame.seats.get(position=0)
        outcome = Outcome.objects.create(
            frame=frame,
            seq=next_seq(frame.pk),
            seat=seat,
            actions_resolved=[{"seat": str(seat.pk), "action": MARKER, "result": "success"}],
            world_facts=[MARKER],
            witnesses=[str(s.pk) for s in frame.seats.all()],
            flags=[{"kind": "internal_truth", "owner": "Bob Wilson", "excerpt": "x"}],
            held=True,
        )
        notify_outcome(outcome)
    return outcome


async def test_a_held_outcome_reaches_the_gms_socket_alone_until_released():
    gm, frame, gm_client, alice, bob, code, someone = await scene()
    gm_socket = await ready(frame_socket(frame.id, gm_client))
    players = [await ready(frame_socket(frame.id, c)) for c in (alice, bob)]
    watcher = spectator_socket(code, someone)
    assert (await watcher.connect())[0]
    assert (await watcher.receive_json_from(timeout=5))["type"] == "ready"

    outcome = await hold(frame)
    whole = await next_event(gm_socket)
    assert whole["type"] == "outcome.created" and MARKER in str(whole)
    flagged = await next_event(gm_socket)
    assert flagged["type"] == "outcome.flagged"
    for socket in players:
        placeholder = await next_event(socket)
        assert placeholder["seq"] == whole["seq"] and placeholder["outcome"]["held"] is True
        assert MARKER not in str(placeholder) and placeholder["outcome"]["seat"] is None
        assert await hears_nothing(socket, 0.3)  # once: not again through the frame group
    assert await watcher.receive_nothing(timeout=0.5)

    await database_sync_to_async(outcome_release)(outcome=outcome, user=gm)
    for socket in (gm_socket, *players, watcher):
        released = await next_event(socket)
        assert released["type"] == "outcome.released" and MARKER in str(released)
        assert released["seq"] > whole["seq"] and released["outcome"]["held"] is False
    for socket in (gm_socket, *players, watcher):
        await socket.disconnect()
