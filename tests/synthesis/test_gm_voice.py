"""The GM's voice: a narration everyone sees and every character witnesses, and a private
note only one character (its player and the GM) learns."""

import pytest

from synthesis.models import GM_TEXT_MAX, Pass
from tests.synthesis.conftest import make_frame, seat_player
from tests.waiting import wait_for

pytestmark = pytest.mark.django_db(transaction=True)


def narrate(client, frame, text):
    return client.post(f"/api/frames/{frame.id}/narration", {"text": text}, format="json")


def note(client, frame, seat, text):
    body = {"seat": str(seat.id), "text": text}
    return client.post(f"/api/frames/{frame.id}/notes", body, format="json")


def test_the_gm_narrates_to_everyone_as_an_outcome_no_seat_acted(api, user, other_api):
    frame = make_frame(user, open_seats=2)
    _, alice = seat_player(frame, 0)
    _, bob = seat_player(frame, 1)
    seq = bob.get(f"/api/frames/{frame.id}").json()["seq"]
    told = narrate(api, frame, "The lights go out all over the harbour.")
    assert told.status_code == 201, told.content
    outcome = told.json()
    assert outcome["seat"] is None and outcome["seq"] == seq + 1
    assert outcome["world_facts"] == ["The lights go out all over the harbour."]
    assert sorted(outcome["witnesses"]) == sorted(str(s.id) for s in frame.seats.all())
    for client in (api, alice, bob):
        view = client.get(f"/api/frames/{frame.id}").json()
        assert [o["id"] for o in view["outcomes"]] == [outcome["id"]]


def test_only_the_gm_narrates_and_says_something(api, user, other_api):
    frame = make_frame(user, open_seats=1)
    _, alice = seat_player(frame, 0)
    seat = frame.seats.get(position=0)
    assert narrate(alice, frame, "I decide the ship sinks.").status_code == 403
    assert note(alice, frame, seat, "psst").status_code == 403
    assert narrate(other_api, frame, "Hello?").status_code == 404
    blank = narrate(api, frame, "   ")
    assert blank.status_code == 400 and "text" in blank.json()["errors"]
    long = narrate(api, frame, "x" * (GM_TEXT_MAX + 1))
    assert long.status_code == 400 and "text" in long.json()["errors"]
    elsewhere = make_frame(user, open_seats=1).seats.first()
    foreign = note(api, frame, elsewhere, "Wrong table.")
    assert foreign.status_code == 400 and "seat" in foreign.json()["errors"]
    api.post(f"/api/frames/{frame.id}/close")
    closed = narrate(api, frame, "Too late.")
    assert closed.status_code == 409 and "closed" in closed.json()["detail"]


def test_a_private_note_reaches_its_character_alone(api, user):
    frame = make_frame(user, open_seats=2)
    _, alice = seat_player(frame, 0)
    _, bob = seat_player(frame, 1)
    seat = frame.seats.get(position=0)
    sent = note(api, frame, seat, "NOTE-MARKER: you recognise the stranger.")
    assert sent.status_code == 201, sent.content
    assert sent.json()["trigger"] == "gm" and sent.json()["status"] == "done"
    mine = alice.get(f"/api/frames/{frame.id}").json()["narratives"]
    assert [n["text"] for n in mine] == ["NOTE-MARKER: you recognise the stranger."]
    assert "NOTE-MARKER" in str(api.get(f"/api/frames/{frame.id}").json()["narratives"])
    assert "NOTE-MARKER" not in str(bob.get(f"/api/frames/{frame.id}").json())


@pytest.mark.usefixtures("celery_worker")
def test_the_next_pass_reads_the_narration_and_never_another_characters_note(api, user):
    frame = make_frame(user, open_seats=2, tempo=0)
    _, alice = seat_player(frame, 0)
    alice_seat, bob_seat = frame.seats.get(position=0), frame.seats.get(position=1)
    narrate(api, frame, "NARRATION-MARKER: a bell tolls across the water.")
    note(api, frame, bob_seat, "BOB-NOTE-MARKER: the bell is your signal.")
    liquid = alice.post(
        f"/api/frames/{frame.id}/liquid",
        {"seat": str(alice_seat.id), "content": "I look toward the bell."},
        format="json",
    ).json()
    wait_for(lambda: Pass.objects.filter(liquid_id=liquid["id"], status="done").exists())
    assert alice.post(f"/api/liquid/{liquid['id']}/commit").status_code == 200
    medium = wait_for(lambda: Pass.objects.filter(kind="medium", status="done").first())
    assert "NARRATION-MARKER" in str(medium.messages)
    assert "BOB-NOTE-MARKER" not in str(medium.messages)


def test_an_ai_character_the_narration_names_answers_it(api, user, monkeypatch):
    from synthesis import ai_seats

    acting: list[str] = []
    monkeypatch.setattr(ai_seats, "_enqueue", lambda seats, outcome_id: acting.extend(seats))
    frame = make_frame(user, open_seats=1)  # Alice played by a person; Bob and Tony by AI
    seat_player(frame, 0)
    tony = frame.seats.get(position=2)
    narrate(api, frame, "The lights go out.")
    assert acting == []  # nobody named, nobody answers
    narrate(api, frame, "A stranger asks for Tony at the door.")
    assert acting == [str(tony.id)]
