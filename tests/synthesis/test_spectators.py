"""Spectators: a link the GM allows shows the outcomes, seats and windows, never anyone's
intentions, narratives or table talk; stopping the link closes their sockets at once. The
link is the credential: a signed-out visitor watches too, and reaches nothing else."""

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


def test_a_signed_out_visitor_watches_with_the_link_and_sees_nothing_private(
    api, user, anon_client
):
    frame = make_frame(user, open_seats=2)
    alice_user, _ = seat_player(frame, 0)
    code = spectators_set(frame=frame, enabled=True).spectator_code
    seat = frame.seats.get(position=0)
    liquid_submit(frame=frame, seat=seat, content="LIQUID-MARKER", user=alice_user)
    Narrative.objects.create(frame=frame, seat=seat, text="NARRATIVE-MARKER", trigger="commit")
    talk_post(
        access=frame_access(user=alice_user, frame_id=frame.id), user=alice_user, text="TALK-MARKER"
    )
    Outcome.objects.create(frame=frame, seq=99, seat=seat, world_facts=["The bell tolls."])

    watched = anon_client.get(f"/api/spectate/{code}")
    assert watched.status_code == 200, watched.content
    body = watched.json()
    assert [o["world_facts"] for o in body["outcomes"]] == [["The bell tolls."]]
    assert {"liquid", "narratives", "talk", "invite_code", "spectator_code"}.isdisjoint(body)
    assert "MARKER" not in watched.content.decode()
    assert anon_client.get("/api/spectate/not-a-code").status_code == 404

    spectators_set(frame=frame, enabled=False)
    assert anon_client.get(f"/api/spectate/{code}").status_code == 404


def test_a_signed_out_visitor_reaches_no_frame_api(user, anon_client):
    frame = make_frame(user, open_seats=2)
    spectators_set(frame=frame, enabled=True)
    seat = frame.seats.get(position=0)
    f = f"/api/frames/{frame.id}"
    refused = [
        anon_client.get(f),
        anon_client.get("/api/frames"),
        anon_client.get(f"/api/frames/invite/{frame.invite_code}"),
        anon_client.post(f"{f}/talk", {"text": "hi"}, format="json"),
        anon_client.post(f"{f}/liquid", {"seat": str(seat.id), "content": "x"}, format="json"),
        anon_client.post(f"{f}/spectators", {"enabled": False}, format="json"),
        anon_client.post(
            "/api/frames/join",
            {"invite_code": frame.invite_code, "seat": str(seat.id)},
            format="json",
        ),
    ]
    assert [r.status_code for r in refused] == [401] * len(refused)
    assert not frame.table_talk.exists() and not frame.seats.filter(user__isnull=False).exists()


def test_a_signed_out_visitors_lookups_are_throttled_per_address(user, settings, anon_client):
    settings.LMIX_CODE_LOOKUP_RATE_PER_ADDRESS = "2/min"
    code = spectators_set(frame=make_frame(user), enabled=True).spectator_code
    assert [anon_client.get(f"/api/spectate/{code}").status_code for _ in range(3)] == [
        200,
        200,
        429,
    ]
    elsewhere = anon_client.get(f"/api/spectate/{code}", REMOTE_ADDR="10.9.9.9")
    assert elsewhere.status_code == 200  # another address has its own count


def spectator_socket(code, client=None, path="spectate") -> WebsocketCommunicator:
    """A socket on the spectator link; `client` None: a signed-out visitor (no cookie)."""
    headers = [(b"origin", b"http://localhost"), (b"host", b"localhost")]
    if client is not None:
        headers.append((b"cookie", session_cookie(client)))
    return WebsocketCommunicator(application, f"/ws/{path}/{code}/", headers=headers)


@pytest.mark.parametrize("signed_in", [True, False], ids=["signed-in", "signed-out"])
async def test_a_spectator_socket_hears_public_events_only_and_closes_when_stopped(signed_in):
    @database_sync_to_async
    def scene():
        gm = UserFactory()
        frame = make_frame(gm, open_seats=2, mode="shared")
        alice, _ = seat_player(frame, 0)
        code = spectators_set(frame=frame, enabled=True).spectator_code
        return frame, alice, code, logged_in_client(UserFactory()) if signed_in else None

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


async def test_a_signed_out_socket_is_refused_everywhere_but_the_spectator_link():
    @database_sync_to_async
    def scene():
        frame = make_frame(UserFactory(), open_seats=2)
        return frame, spectators_set(frame=frame, enabled=True).spectator_code

    frame, code = await scene()
    frame_socket = spectator_socket(frame.id, path="frames")
    connected, _ = await frame_socket.connect()
    closed = await frame_socket.receive_output(timeout=5)
    assert closed["type"] == "websocket.close" and closed["code"] == 4401

    # A link that is no longer valid (renewed here) refuses a visitor, as anyone else.
    await database_sync_to_async(spectators_set)(frame=frame, enabled=True)
    stale = spectator_socket(code)
    await stale.connect()
    closed = await stale.receive_output(timeout=5)
    assert closed["type"] == "websocket.close" and closed["code"] == 4403


async def test_a_renewed_link_ends_a_signed_out_visitors_socket():
    @database_sync_to_async
    def scene():
        frame = make_frame(UserFactory(), open_seats=2)
        return frame, spectators_set(frame=frame, enabled=True).spectator_code

    frame, code = await scene()
    socket = spectator_socket(code)
    connected, _ = await socket.connect()
    assert connected and (await socket.receive_json_from(timeout=5))["type"] == "ready"
    await database_sync_to_async(spectators_set)(frame=frame, enabled=True)  # a new link
    closed = await socket.receive_output(timeout=5)
    assert closed["type"] == "websocket.close" and closed["code"] == 4403
