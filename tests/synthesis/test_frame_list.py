"""GET /api/frames (synthesis/frame_selectors.py `frame_summaries`): the dashboard's list of
the frames one runs or sits in, with one's character, whom a running round waits for, and
when each was last active; in a fixed number of queries."""

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext

from synthesis.gm_voice import gm_narrate
from synthesis.models import Frame
from tests.conftest import logged_in_client
from tests.synthesis.conftest import Scene, make_frame, seat_player

pytestmark = pytest.mark.django_db


def listed(client) -> dict[str, dict]:
    answer = client.get("/api/frames")
    assert answer.status_code == 200, answer.content
    return {row["id"]: row for row in answer.json()}


def test_a_player_sees_their_character_and_the_gm_none(api, user):
    frame = make_frame(user, open_seats=2)
    _, alice = seat_player(frame, 0)
    mine = listed(alice)[str(frame.id)]
    seat = frame.seats.get(position=0)
    assert mine["is_gm"] is False
    assert mine["my_seat"] == {
        "id": str(seat.id),
        "name": seat.persona.name,
        "avatar_url": seat.persona.avatar_url,
    }
    gm = listed(api)[str(frame.id)]
    assert gm["is_gm"] is True and gm["my_seat"] is None


def test_a_running_round_says_whom_it_waits_for_and_whose_turn_it_is(api, user):
    scene = Scene(user)
    frame = scene.frame
    quiet = listed(api)[str(frame.id)]
    assert quiet["waiting_for"] == [] and quiet["my_turn"] is False  # no round yet
    scene.window(scene.alice, status="open")
    alice_row = listed(logged_in_client(scene.alice_player))[str(frame.id)]
    bob_row = listed(logged_in_client(scene.bob_player))[str(frame.id)]
    assert alice_row["waiting_for"] == [scene.bob.persona.name]  # Tony, an AI, is not awaited
    assert alice_row["my_turn"] is False and bob_row["my_turn"] is True
    scene.commit(scene.bob, "I wait.")
    assert listed(api)[str(frame.id)]["waiting_for"] == []
    Frame.objects.filter(pk=frame.pk).update(status="paused")
    assert listed(logged_in_client(scene.bob_player))[str(frame.id)]["my_turn"] is False


def test_the_last_outcome_makes_a_frame_active(api, user):
    older, newer = make_frame(user), make_frame(user)
    before = listed(api)
    gm_narrate(frame=older, text="Thunder.")
    after = listed(api)
    assert after[str(older.id)]["active_at"] > before[str(older.id)]["active_at"]
    assert after[str(older.id)]["active_at"] > after[str(newer.id)]["active_at"]


def test_the_list_takes_the_same_queries_for_one_frame_or_many(api, user):
    make_frame(user)
    with CaptureQueriesContext(connection) as one:
        listed(api)
    for _ in range(3):
        Scene(user)
    with CaptureQueriesContext(connection) as many:
        assert len(listed(api)) == 4
    assert len(many) == len(one)
