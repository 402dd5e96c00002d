"""Kicks (issue 24, item 14): a kicked player takes no seat of the frame again until the GM
lets them back; their pending intentions are withdrawn; the seat's next player reads the
character's story so far, marked as the previous player's, and never the previous
player's intentions, over REST or a socket (docs/security.md, "Kicks and new players")."""

import json

import pytest
from channels.db import database_sync_to_async
from django.db import transaction

from lmix.realtime import publish
from synthesis.events import notify_liquid
from synthesis.frame_events import frame_group, gm_group, seat_group
from synthesis.models import FrameBan, Liquid, Narrative, Window
from synthesis.windows import window_cancel
from tests.conftest import logged_in_client
from tests.factories import UserFactory
from tests.synthesis.conftest import make_frame, seat_player
from tests.synthesis.test_frame_socket import frame_socket, online, ready

pytestmark = pytest.mark.django_db


@pytest.fixture
def published(monkeypatch):
    """(group, layer message) for everything published, in order."""
    sent: list[tuple[str, dict]] = []
    monkeypatch.setattr(publish, "_put", lambda group, message: sent.append((group, message)))
    return sent


def kick(api, frame, seat, **body):
    response = api.patch(
        f"/api/frames/{frame.id}/seats/{seat.id}", body or {"controller": "open"}, format="json"
    )
    assert response.status_code == 200, response.content
    return response


def join(client, frame, seat):
    return client.post(
        "/api/frames/join", {"invite_code": frame.invite_code, "seat": str(seat.id)}, format="json"
    )


@pytest.mark.parametrize("how", ["open", "ai"])
def test_a_kicked_player_takes_no_seat_of_the_frame_until_the_gm_allows_it(api, user, how):
    frame = make_frame(user, open_seats=2)
    kicked, client = seat_player(frame, 0)
    first, second = frame.seats.order_by("position")[:2]
    if how == "ai":  # giving the seat to an assistant removes its player too
        assistant = frame.production.cast.get(assistant__persona=first.persona).assistant
        kick(api, frame, first, controller="ai", assistant=str(assistant.id))
        first.refresh_from_db()
        kick(api, frame, first)  # open again, for anyone but them
    else:
        kick(api, frame, first)

    for seat in (first, second):  # their old seat and any other open one
        refused = join(client, frame, seat)
        assert refused.status_code == 403
        assert "until they allow you back" in refused.json()["detail"]
    # A new invite code changes nothing: the ban is the frame's, not the code's.
    api.post(f"/api/frames/{frame.id}/invite")
    frame.refresh_from_db()
    assert join(client, frame, second).status_code == 403
    assert client.get(f"/api/frames/{frame.id}").status_code == 404

    bans = api.get(f"/api/frames/{frame.id}/bans")
    assert bans.status_code == 200
    assert [(b["user"], b["player"]) for b in bans.json()] == [(kicked.id, kicked.username)]

    lifted = api.delete(f"/api/frames/{frame.id}/bans/{kicked.id}")
    assert lifted.status_code == 204
    assert api.get(f"/api/frames/{frame.id}/bans").json() == []
    assert api.delete(f"/api/frames/{frame.id}/bans/{kicked.id}").status_code == 404
    back = join(client, frame, second)
    assert back.status_code == 200, back.content
    assert back.json()["my_seats"] == [str(second.id)]


def test_only_the_gm_lists_and_lifts_bans(api, user):
    frame = make_frame(user, open_seats=2)
    kicked, _ = seat_player(frame, 0)
    kick(api, frame, frame.seats.get(position=0))
    _, player = seat_player(frame, 1)
    outsider = logged_in_client(UserFactory())
    bans = f"/api/frames/{frame.id}/bans"
    assert player.get(bans).status_code == 403
    assert player.delete(f"{bans}/{kicked.id}").status_code == 403
    assert outsider.get(bans).status_code == 404
    assert outsider.delete(f"{bans}/{kicked.id}").status_code == 404
    assert logged_in_client(kicked).get(bans).status_code == 404  # no longer in the frame
    assert FrameBan.objects.filter(frame=frame, user=kicked).exists()


def test_a_gm_playing_a_seat_of_their_own_frame_is_never_banned(api, user):
    frame = make_frame(user, open_seats=1)
    seat = frame.seats.get(position=0)
    assert join(api, frame, seat).status_code == 200
    kick(api, frame, seat)
    assert not FrameBan.objects.exists()
    assert join(api, frame, seat).status_code == 200


def test_kicking_withdraws_the_players_pending_intentions_and_keeps_the_committed_ones(
    api, user, published, django_capture_on_commit_callbacks
):
    frame = make_frame(user, open_seats=2, liquid_visibility="own")
    kicked, _ = seat_player(frame, 0)
    seat = frame.seats.get(position=0)
    pending = Liquid.objects.create(frame=frame, seat=seat, author=kicked, content="pending")
    committed = Liquid.objects.create(
        frame=frame, seat=seat, author=kicked, content="in a window", status="committed"
    )
    with django_capture_on_commit_callbacks(execute=True):
        kick(api, frame, seat)
    pending.refresh_from_db()
    committed.refresh_from_db()
    assert pending.status == "withdrawn"
    assert committed.status == "committed"  # its window's medium pass narrates it
    withdrawn = [
        (group, m["payload"]["liquid"]["id"])
        for group, m in published
        if m["type"] == "group.event" and m["payload"]["type"] == "liquid.withdrawn"
    ]
    assert withdrawn == [(gm_group(frame.id), str(pending.id))]  # the seat has no player now


MARKERS = ("PREV-SUBMITTED", "PREV-COMMITTED", "PREV-CONSUMED", "PREV-WITHDRAWN")


def plant(frame, seat, author) -> list[Liquid]:
    """The previous player's intentions, one per status, a marker in every text field."""
    return [
        Liquid.objects.create(
            frame=frame,
            seat=seat,
            author=author,
            status=marker.removeprefix("PREV-").lower(),
            content=f"{marker} content",
            refined=f"{marker} refined",
            analysis_note=f"{marker} note",
            capable_reason=f"{marker} reason",
        )
        for marker in MARKERS
    ]


def leaked(text: str) -> list[str]:
    return [marker for marker in MARKERS if marker in text]


@pytest.mark.parametrize("visibility", ["all", "own", "gm"])
def test_a_new_player_reads_the_seats_story_as_the_previous_players_and_none_of_their_intentions(
    api, user, published, django_capture_on_commit_callbacks, visibility
):
    frame = make_frame(user, open_seats=2, liquid_visibility=visibility)
    previous, _ = seat_player(frame, 0)
    seat = frame.seats.get(position=0)
    submitted, committed, consumed, withdrawn = plant(frame, seat, previous)
    window = Window.objects.create(frame=frame, seat=seat, status="open")
    Liquid.objects.filter(pk=committed.pk).update(window=window)
    story = Narrative.objects.create(
        frame=frame, seat=seat, user=previous, trigger="expiry", text="The story so far."
    )
    kick(api, frame, seat)

    newcomer = UserFactory()
    client = logged_in_client(newcomer)
    joined = join(client, frame, seat)
    assert joined.status_code == 200, joined.content
    for answer in (joined.json(), client.get(f"/api/frames/{frame.id}").json()):
        assert leaked(json.dumps(answer)) == []
        assert answer["liquid"] == []  # not even the rows
        [narrative] = answer["narratives"]
        assert narrative["id"] == str(story.id) and narrative["text"] == "The story so far."
        # Marked as the previous player's: written while someone else played the seat.
        assert narrative["user"] == previous.id != newcomer.id
        assert answer["narrators"] == {str(previous.id): previous.username}
    # The GM still reads everything, and knows whose story it was.
    gm_view = api.get(f"/api/frames/{frame.id}").json()
    assert {x["content"] for x in gm_view["liquid"]} >= {"PREV-COMMITTED content"}
    assert gm_view["narrators"] == {str(previous.id): previous.username}

    # What reaches the new player's sockets afterwards: the GM sends the window's
    # intention back (submitted again), then it and another are consumed by a pass.
    published.clear()
    with django_capture_on_commit_callbacks(execute=True):
        window_cancel(window=window)
        for liquid in (committed, consumed):
            liquid.refresh_from_db()
            notify_liquid("liquid.consumed", liquid, frame=frame)  # as a pass's route does
    theirs = {frame_group(frame.id), seat_group(frame.id, seat.id)}
    heard = [m for group, m in published if group in theirs]
    assert heard, "the window's cancellation reaches them"
    assert leaked(json.dumps(heard)) == []
    assert not any(str(committed.id) in json.dumps(m) for m in heard)
    gm_heard = json.dumps([m for group, m in published if group not in theirs])
    assert "PREV-COMMITTED" in gm_heard  # the GM was told, with the text


def test_a_player_still_reads_their_own_intentions_and_narratives_unmarked(user):
    frame = make_frame(user, open_seats=2, liquid_visibility="own")
    player, client = seat_player(frame, 0)
    seat = frame.seats.get(position=0)
    Liquid.objects.create(frame=frame, seat=seat, author=player, content="MINE")
    Narrative.objects.create(frame=frame, seat=seat, user=player, trigger="expiry", text="Mine")
    view = client.get(f"/api/frames/{frame.id}").json()
    assert [x["content"] for x in view["liquid"]] == ["MINE"]
    assert [n["user"] for n in view["narratives"]] == [player.id]


async def heard_until_quiet(communicator, quiet: float = 0.5) -> list[dict]:
    """Every message (but online presence) until none comes for `quiet` seconds."""
    heard = []
    while not await communicator.receive_nothing(timeout=quiet):
        message = await communicator.receive_json_from()
        if not online(message):
            heard.append(message)
    return heard


@pytest.mark.django_db(transaction=True)
@pytest.mark.parametrize("visibility", ["all", "own"])
async def test_the_new_players_socket_never_carries_the_previous_players_intentions(visibility):
    """Through a real socket: the GM sends the previous player's committed intention back
    (its window cancelled) and a pass consumes another; the new player hears the window,
    never the intentions."""

    @database_sync_to_async
    def setup():
        gm = UserFactory()
        frame = make_frame(gm, open_seats=2, liquid_visibility=visibility)
        previous, _ = seat_player(frame, 0)
        seat = frame.seats.get(position=0)
        _, committed, consumed, _ = plant(frame, seat, previous)
        window = Window.objects.create(frame=frame, seat=seat, status="open")
        Liquid.objects.filter(pk=committed.pk).update(window=window)
        api = logged_in_client(gm)
        kick(api, frame, seat)
        newcomer = logged_in_client(UserFactory())
        assert join(newcomer, frame, seat).status_code == 200
        return frame, api, newcomer, window, consumed

    frame, api, newcomer, window, consumed = await setup()
    socket = await ready(frame_socket(frame.id, newcomer))

    @database_sync_to_async
    def act():
        assert api.post(f"/api/windows/{window.id}/cancel").status_code == 200
        with transaction.atomic():
            notify_liquid("liquid.consumed", consumed, frame=frame)

    await act()
    heard = await heard_until_quiet(socket)
    await socket.disconnect()
    assert [m["type"] for m in heard if "window" in m] == ["window.cancelled"]
    assert leaked(json.dumps(heard)) == []
    assert not [m for m in heard if m["type"].startswith("liquid.")]
