"""A frame that ends for good takes its sockets with it (issue 24, §5): deleting its
production (or its GM's account) or closing it closes every socket on it, the GM's, the
players' and the spectators', with 4404, so no client sits on a dead frame reconnecting.
A closing frame's sockets are sent `frame.closed` first; one opened on a closed frame
closes at once."""

import pytest
from channels.db import database_sync_to_async
from channels.testing import WebsocketCommunicator

from lmix.realtime import publish
from lmix.realtime.codes import CLOSE_GONE
from synthesis.frames import spectators_set
from synthesis.liquid import frame_status_set
from synthesis.models import Frame
from tests.conftest import logged_in_client
from tests.factories import UserFactory
from tests.synthesis.conftest import make_frame, seat_player
from tests.synthesis.test_frame_socket import frame_socket, ready
from tests.synthesis.test_seat_release_socket import closes_with
from tests.synthesis.test_spectators import spectator_socket

pytestmark = pytest.mark.django_db(transaction=True)


@database_sync_to_async
def two_frames():
    """The GM's frame with a seated player and a spectator, a second frame of the same
    production, and a frame of another production: clients for each socket."""
    gm = UserFactory()
    frame = make_frame(gm, open_seats=1)
    _, player = seat_player(frame, 0)
    code = spectators_set(frame=frame, enabled=True).spectator_code
    sibling = Frame.objects.create(production=frame.production, owner=gm, name="Later")
    elsewhere = make_frame(gm, open_seats=1)
    return gm, frame, sibling, elsewhere, logged_in_client(gm), player, code


async def still_answers(communicator: WebsocketCommunicator) -> bool:
    """Whether the socket is open and answers a ping (a GM's socket first hears its own
    `presence.ask`, which asks the players to say they are here)."""
    await communicator.send_json_to({"type": "ping"})
    while (message := await communicator.receive_json_from(timeout=5))["type"] != "pong":
        assert message["type"] == "presence.ask", message
    return True


async def spectating(code, client) -> WebsocketCommunicator:
    communicator = spectator_socket(code, client)
    assert (await communicator.connect())[0]
    assert (await communicator.receive_json_from(timeout=5))["type"] == "ready"
    return communicator


async def test_deleting_a_production_closes_every_socket_of_its_frames_with_4404_and_no_other():
    gm, frame, sibling, elsewhere, gm_client, player, code = await two_frames()
    watcher = await database_sync_to_async(logged_in_client)(
        await database_sync_to_async(UserFactory)()
    )
    doomed = [
        await ready(frame_socket(frame.id, gm_client)),
        await ready(frame_socket(frame.id, player)),
        await ready(frame_socket(sibling.id, gm_client)),
        await spectating(code, watcher),
    ]
    kept = await ready(frame_socket(elsewhere.id, gm_client))

    response = await database_sync_to_async(gm_client.delete)(
        f"/api/productions/{frame.production_id}"
    )
    assert response.status_code == 204

    for communicator in doomed:
        assert await closes_with(communicator) == CLOSE_GONE == 4404
    assert await still_answers(kept)
    await kept.disconnect()


async def test_closing_a_frame_sends_frame_closed_then_closes_its_sockets_and_refuses_new_ones():
    gm, frame, _, elsewhere, gm_client, player, code = await two_frames()
    watcher = await database_sync_to_async(logged_in_client)(
        await database_sync_to_async(UserFactory)()
    )
    sockets = [
        await ready(frame_socket(frame.id, gm_client)),
        await ready(frame_socket(frame.id, player)),
        await spectating(code, watcher),
    ]
    kept = await ready(frame_socket(elsewhere.id, gm_client))

    closed = await database_sync_to_async(gm_client.post)(f"/api/frames/{frame.id}/close")
    assert closed.status_code == 200 and closed.json()["status"] == "closed"

    for communicator in sockets:
        heard = []
        output = await communicator.receive_output(timeout=5)
        while output["type"] == "websocket.send":
            heard.append(output["text"])
            output = await communicator.receive_output(timeout=5)
        assert output == {"type": "websocket.close", "code": 4404}
        assert any('"frame.closed"' in text for text in heard)  # the client knows why

    # A reload or a reconnect: closed at once, before it is ready.
    for again in (frame_socket(frame.id, player), spectator_socket(code, watcher)):
        assert (await again.connect())[0]
        assert await again.receive_output(timeout=5) == {"type": "websocket.close", "code": 4404}

    assert await still_answers(kept)
    await kept.disconnect()


@pytest.fixture
def published(monkeypatch):
    sent: list[tuple[str, dict]] = []
    monkeypatch.setattr(publish, "_put", lambda group, message: sent.append((group, message)))
    return sent


def test_only_closing_revokes_and_after_frame_closed(user, published):
    frame = make_frame(user)
    groups = [f"frame.{frame.pk}", f"frame.{frame.pk}.spectators"]
    for status in ("paused", "open"):
        frame_status_set(frame=frame, status=status)
    assert not [m for _, m in published if m["type"] == "group.revoke"]

    published.clear()
    frame_status_set(frame=frame, status="closed")
    revoke = {"type": "group.revoke", "user_id": None, "close_code": 4404}
    assert [(g, m.get("payload", m)["type"]) for g, m in published] == [
        (groups[0], "frame.closed"),
        (groups[1], "frame.closed"),
        (groups[0], "group.revoke"),
        (groups[1], "group.revoke"),
    ]
    assert [m for _, m in published if m["type"] == "group.revoke"] == [revoke, revoke]


def test_deleting_the_gms_account_closes_their_frames_sockets_with_4404(user, api, published):
    frame = make_frame(user)
    answer = api.delete(
        "/api/auth/me", {"username": user.username, "password": "a-good-password-1"}, format="json"
    )
    assert answer.status_code == 204
    assert not Frame.objects.filter(pk=frame.pk).exists()
    revoked = {(g, m["close_code"]) for g, m in published if m["type"] == "group.revoke"}
    assert {(f"frame.{frame.pk}", 4404), (f"frame.{frame.pk}.spectators", 4404)} <= revoked
