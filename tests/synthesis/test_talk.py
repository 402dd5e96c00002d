"""Table talk: out-of-character messages everyone at the table reads and no pass ever does;
notices of who joined, left or was removed from a seat, in the same stream."""

import json
from datetime import datetime

import pytest

from synthesis.models import Pass
from tests.synthesis.conftest import make_frame, seat_player
from tests.waiting import wait_for

pytestmark = pytest.mark.django_db(transaction=True)


def say(client, frame, text):
    return client.post(f"/api/frames/{frame.id}/talk", {"text": text}, format="json")


def test_the_table_talks_out_of_character_and_everyone_reads_it(api, user, other_api):
    frame = make_frame(user, open_seats=2)
    alice_user, alice = seat_player(frame, 0)
    _, bob = seat_player(frame, 1)
    seq = bob.get(f"/api/frames/{frame.id}").json()["seq"]
    said = say(alice, frame, "brb, coffee")
    assert said.status_code == 201, said.content
    body = said.json()
    assert body["author"] == alice_user.username and not body["gm"]
    assert body["seat"] == str(frame.seats.get(position=0).id)
    assert say(api, frame, "Ten minutes, everyone.").json()["gm"]

    for client in (api, alice, bob):
        view = client.get(f"/api/frames/{frame.id}").json()
        said = [t for t in view["talk"] if t["kind"] == "say"]
        assert [t["text"] for t in said] == ["brb, coffee", "Ten minutes, everyone."]
        assert all(datetime.fromisoformat(t["created_at"]).tzinfo for t in said)  # shown as a time
        assert view["seq"] == seq + 2  # each message is an event of the frame
    empty = say(bob, frame, "   ")
    assert empty.status_code == 400 and "blank" in empty.json()["detail"]
    assert say(other_api, frame, "hello?").status_code == 404  # not at this table
    api.post(f"/api/frames/{frame.id}/close")
    closed = say(alice, frame, "bye")
    assert closed.status_code == 409 and "closed" in closed.json()["detail"]


@pytest.mark.usefixtures("celery_worker")
def test_no_pass_ever_reads_table_talk(user):
    frame = make_frame(user, open_seats=2, tempo=0)
    _, alice = seat_player(frame, 0)
    say(alice, frame, "TABLE-TALK-MARKER: my character secretly stole the key")
    seat = frame.seats.get(position=0)
    liquid = alice.post(
        f"/api/frames/{frame.id}/liquid",
        {"seat": str(seat.id), "content": "I open the door."},
        format="json",
    ).json()
    wait_for(lambda: Pass.objects.filter(liquid_id=liquid["id"], status="done").exists())
    assert alice.post(f"/api/liquid/{liquid['id']}/commit").status_code == 200
    medium = wait_for(lambda: Pass.objects.filter(kind="medium", status="done").first())
    soft = Pass.objects.get(kind="soft", liquid_id=liquid["id"])
    assert "I open the door." in str(medium.messages) and "I open the door." in str(soft.messages)
    assert "TABLE-TALK-MARKER" not in str(medium.messages) + str(soft.messages)


def notices(client, frame) -> list[tuple[str, str | None, str | None, str]]:
    """(kind, player, seat, text) of every notice in the frame's table talk, oldest first."""
    talk = client.get(f"/api/frames/{frame.id}").json()["talk"]
    return [(t["kind"], t["author"], t["seat"], t["text"]) for t in talk if t["kind"] != "say"]


def test_joining_leaving_and_being_removed_are_notices_in_the_table_talk(api, user):
    frame = make_frame(user, open_seats=2)
    first, second = frame.seats.order_by("position")[:2]
    ana_user, ana = seat_player(frame, 0)
    bob_user, bob = seat_player(frame, 1)
    say(ana, frame, "hi all")
    left = bob.post(f"/api/frames/{frame.id}/leave", {"seat": str(second.id)}, format="json")
    assert left.status_code == 204, left.content
    kicked = api.patch(
        f"/api/frames/{frame.id}/seats/{first.id}", {"controller": "open"}, format="json"
    )
    assert kicked.status_code == 200, kicked.content

    expected = [
        ("join", ana_user.username, str(first.id), ""),
        ("join", bob_user.username, str(second.id), ""),
        ("leave", bob_user.username, str(second.id), ""),
        ("kick", ana_user.username, str(first.id), ""),
    ]
    assert notices(api, frame) == expected  # they survive a reload
    talk = api.get(f"/api/frames/{frame.id}").json()["talk"]
    assert [t["kind"] for t in talk] == ["join", "join", "say", "leave", "kick"]  # in order
    assert not any(t["gm"] for t in talk)
    _, carol = seat_player(frame, 1)
    assert notices(carol, frame)[:4] == expected  # a later player reads them too


def test_a_gm_giving_up_a_seat_they_played_leaves_it(api, user):
    frame = make_frame(user, open_seats=2)
    seat = frame.seats.get(position=0)
    joined = api.post(
        "/api/frames/join", {"invite_code": frame.invite_code, "seat": str(seat.id)}, format="json"
    )
    assert joined.status_code == 200, joined.content
    api.patch(f"/api/frames/{frame.id}/seats/{seat.id}", {"controller": "open"}, format="json")
    assert [kind for kind, *_ in notices(api, frame)] == ["join", "leave"]  # never "removed"


def test_a_notice_never_holds_a_covert_characters_real_name(api, user):
    frame = make_frame(user, open_seats=2)
    seat = frame.seats.get(position=0)
    seat.persona.known_as = "The Stranger"
    seat.persona.save(update_fields=["known_as"])
    _, ana = seat_player(frame, 0)
    api.patch(f"/api/frames/{frame.id}/seats/{seat.id}", {"controller": "open"}, format="json")
    _, bob = seat_player(frame, 1)
    view = bob.get(f"/api/frames/{frame.id}").json()
    assert [kind for kind, *_ in notices(bob, frame)] == ["join", "kick", "join"]
    # The notices name the seat by its id; the page writes the public name the seat shows.
    assert seat.persona.name not in json.dumps(view["talk"])
    assert [s["name"] for s in view["seats"] if s["id"] == str(seat.id)] == ["The Stranger"]
