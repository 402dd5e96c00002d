"""Spectators: a link the GM allows shows the outcomes, seats and windows, never anyone's
intentions, narratives or table talk; stopping the link closes their sockets at once."""

import pytest
from channels.db import database_sync_to_async
from channels.testing import WebsocketCommunicator

from config.asgi import application
from synthesis.events import notify_narrative_token, notify_outcome, notify_window
from synthesis.frame_selectors import frame_access
from synthesis.frames import spectators_set
from synthesis.liquid import liquid_submit
from synthesis.models import Narrative, Outcome, Window
from synthesis.talk import talk_post
from tests.conftest import logged_in_client
from tests.factories import UserFactory
from tests.productions.conftest import session_cookie
from tests.synthesis.conftest import make_frame, seat_player

pytestmark = pytest.mark.django_db(transaction=True)


def test_the_gm_allows_spectators_who_see_the_outcomes_and_nothing_private(api, user, other_api):
    frame = make_frame(user, open_seats=2)
    alice_user, alice = seat_player(frame, 0)
    allow = {"enabled": True}
    assert alice.post(f"/api/frames/{frame.id}/spectators", allow, format="json").status_code == 403
    code = api.post(f"/api/frames/{frame.id}/spectators", {"enabled": True}, format="json").json()[
        "spectator_code"
    ]
    assert code and api.get(f"/api/frames/{frame.id}").json()["spectator_code"] == code
    assert alice.get(f"/api/frames/{frame.id}").json()["spectator_code"] is None

    seat = frame.seats.get(position=0)
    liquid_submit(frame=frame, seat=seat, content="LIQUID-MARKER", user=alice_user)
    Narrative.objects.create(frame=frame, seat=seat, text="NARRATIVE-MARKER", trigger="commit")
    talk_post(
        access=frame_access(user=alice_user, frame_id=frame.id), user=alice_user, text="TALK-MARKER"
    )
    Outcome.objects.create(frame=frame, seq=99, seat=seat, world_facts=["The bell tolls."])

    watched = other_api.get(f"/api/spectate/{code}")
    assert watched.status_code == 200, watched.content
    body = watched.json()
    assert [o["world_facts"] for o in body["outcomes"]] == [["The bell tolls."]]
    assert len(body["seats"]) == 3 and {"liquid", "narratives", "talk"}.isdisjoint(body)
    assert "MARKER" not in watched.content.decode()

    api.post(f"/api/frames/{frame.id}/spectators", {"enabled": False}, format="json")
    gone = other_api.get(f"/api/spectate/{code}")
    assert gone.status_code == 404 and "not valid" in gone.json()["detail"]


def spectator_socket(code, client) -> WebsocketCommunicator:
    headers = [
        (b"origin", b"http://localhost"),
        (b"host", b"localhost"),
        (b"cookie", session_cookie(client)),
    ]
    return WebsocketCommunicator(application, f"/ws/spectate/{code}/", headers=headers)


async def test_a_spectator_socket_hears_public_events_only_and_closes_when_stopped():
    @database_sync_to_async
    def scene():
        gm = UserFactory()
        frame = make_frame(gm, open_seats=2, mode="shared")
        alice, _ = seat_player(frame, 0)
        code = spectators_set(frame=frame, enabled=True).spectator_code
        return frame, alice, code, logged_in_client(UserFactory())

    frame, alice, code, watcher = await scene()
    socket = spectator_socket(code, watcher)
    connected, _ = await socket.connect()
    assert connected and (await socket.receive_json_from(timeout=5))["type"] == "ready"

    @database_sync_to_async
    def things_happen():
        seat = frame.seats.get(position=0)
        liquid_submit(frame=frame, seat=seat, content="LIQUID-MARKER", user=alice)
        talk_post(
            access=frame_access(user=alice, frame_id=frame.id), user=alice, text="TALK-MARKER"
        )
        shared = Narrative(frame_id=frame.id, seat_id=seat.id, shared=True)
        notify_narrative_token(shared, index=0, delta="NARRATIVE-MARKER")
        window = Window.objects.create(frame=frame, seat=seat, status="open")
        notify_window("window.opened", window)
        notify_outcome(
            Outcome.objects.create(
                frame=frame, seq=frame.seq + 50, seat=seat, world_facts=["Rain."]
            )
        )

    await things_happen()
    heard = [await socket.receive_json_from(timeout=5) for _ in range(2)]
    assert [e["type"] for e in heard] == ["window.opened", "outcome.created"]
    assert await socket.receive_nothing(timeout=0.5)  # no liquid, talk or narrative

    await database_sync_to_async(spectators_set)(frame=frame, enabled=False)
    closed = await socket.receive_output(timeout=5)
    assert closed["type"] == "websocket.close" and closed["code"] == 4403
