"""Table talk: out-of-character messages everyone at the table reads and no pass ever does."""

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
        assert [t["text"] for t in view["talk"]] == ["brb, coffee", "Ten minutes, everyone."]
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
