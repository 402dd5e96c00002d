"""Frames over REST: created from a production, joined with an invite code, steered by the
GM; a user who is neither GM nor seated learns nothing, not even that the frame exists."""

import pytest

from synthesis.models import Frame, Seat
from tests.synthesis.conftest import make_frame, seat_player

pytestmark = pytest.mark.django_db


def test_the_owner_starts_a_frame_whose_cast_become_seats(api, user, production_factory):
    production = production_factory(user)
    personas = [m.assistant.persona_id for m in production.cast.all()]
    response = api.post(
        f"/api/productions/{production.id}/frames",
        {"name": "Night", "tempo": 0.5, "open_seats": [str(personas[0])]},
        format="json",
    )
    assert response.status_code == 201, response.content
    body = response.json()
    assert body["is_gm"] and body["invite_code"] and body["seq"] == 0
    assert [s["controller"] for s in body["seats"]] == ["open", "ai", "ai"]
    assert body["seats"][0]["persona"] == str(personas[0])
    assert body["seats"][1]["assistant"] and body["seats"][0]["assistant"] is None
    frame = Frame.objects.get(pk=body["id"])
    assert frame.tempo == 0.5 and frame.owner == user
    # No model chosen: both stay unset and every pass plays on the cast's own model.
    assert frame.medium_model is None and frame.soft_model is None
    cast_model = production.cast.first().assistant.model
    played = {"id": str(cast_model.pk), "name": cast_model.name}
    assert {k: body["models"]["soft"][k] for k in played} == played
    assert body["models"]["soft_model"] is None and body["models"]["medium_model"] is None
    assert set(body["models"]["medium"]) == {s["id"] for s in body["seats"]}


def test_open_seats_must_be_of_the_cast(api, user, production_factory, other_user):
    production = production_factory(user)
    stranger = production_factory(other_user).cast.first().assistant.persona_id
    response = api.post(
        f"/api/productions/{production.id}/frames",
        {"name": "Night", "open_seats": [str(stranger)]},
        format="json",
    )
    assert response.status_code == 400 and "cast" in response.json()["detail"]
    assert not Frame.objects.exists()


def test_another_users_production_gets_no_frame(other_api, user, production_factory):
    production = production_factory(user)
    response = other_api.post(
        f"/api/productions/{production.id}/frames", {"name": "Mine now"}, format="json"
    )
    assert response.status_code == 404
    assert not Frame.objects.exists()


def test_a_player_joins_an_open_seat_with_the_invite_code(user, other_api, other_user):
    frame = make_frame(user)
    seat = frame.seats.get(position=0)
    response = other_api.post(
        "/api/frames/join", {"invite_code": frame.invite_code, "seat": str(seat.id)}, format="json"
    )
    assert response.status_code == 200, response.content
    body = response.json()
    assert body["my_seats"] == [str(seat.id)] and not body["is_gm"]
    assert body["invite_code"] is None  # only the GM reads it
    seat.refresh_from_db()
    assert seat.controller == "human" and seat.user == other_user
    assert body["seq"] == 2  # seat.changed, and its notice in the table talk


@pytest.mark.parametrize("case", ["wrong code", "taken seat", "ai seat", "second seat"])
def test_joining_is_refused_clearly(user, other_api, other_user, case):
    frame = make_frame(user)
    seats = list(frame.seats.all())
    code, seat = frame.invite_code, seats[0]
    if case == "wrong code":
        code = "not-the-code"
    elif case == "taken seat":
        seat_player(frame, 0)
    elif case == "ai seat":
        seat = seats[2]
    else:
        other_api.post(
            "/api/frames/join", {"invite_code": code, "seat": str(seats[1].id)}, format="json"
        )
    response = other_api.post(
        "/api/frames/join", {"invite_code": code, "seat": str(seat.id)}, format="json"
    )
    assert response.status_code == (404 if case == "wrong code" else 409), response.content
    assert response.json()["detail"]
    assert Seat.objects.filter(frame=frame, user=other_user).count() == (
        1 if case == "second seat" else 0
    )


def test_outsiders_get_404_for_the_frame_and_a_player_403_for_gm_actions(
    user, other_api, client_for
):
    frame = make_frame(user)
    _, player = seat_player(frame, 0)
    seat = frame.seats.get(position=1)
    assert other_api.get(f"/api/frames/{frame.id}").status_code == 404
    assert other_api.post(f"/api/frames/{frame.id}/invite").status_code == 404
    kick = {"controller": "open"}
    path = f"/api/frames/{frame.id}/seats/{seat.id}"
    assert other_api.patch(path, kick, format="json").status_code == 404
    assert player.get(f"/api/frames/{frame.id}").status_code == 200
    assert player.post(f"/api/frames/{frame.id}/invite").status_code == 403
    assert other_api.get("/api/frames").json() == []
    assert [f["id"] for f in player.get("/api/frames").json()] == [str(frame.id)]


def test_the_gm_rotates_the_invite_and_the_old_code_joins_nothing(api, user, other_api):
    frame = make_frame(user)
    old = frame.invite_code
    new = api.post(f"/api/frames/{frame.id}/invite").json()["invite_code"]
    assert new != old
    seat = frame.seats.get(position=0)
    join = "/api/frames/join"
    refused = other_api.post(join, {"invite_code": old, "seat": str(seat.id)}, format="json")
    assert refused.status_code == 404
    joined = other_api.post(join, {"invite_code": new, "seat": str(seat.id)}, format="json")
    assert joined.status_code == 200


def test_the_gm_kicks_a_player_and_gives_a_seat_to_an_assistant(api, user):
    frame = make_frame(user)
    kicked, player = seat_player(frame, 0)
    seat = frame.seats.get(position=0)
    response = api.patch(
        f"/api/frames/{frame.id}/seats/{seat.id}", {"controller": "open"}, format="json"
    )
    assert response.status_code == 200 and response.json()["controller"] == "open"
    assert player.get(f"/api/frames/{frame.id}").status_code == 404  # no longer seated
    assistant = frame.production.cast.get(assistant__persona=seat.persona).assistant
    wrong = frame.production.cast.exclude(assistant=assistant).first().assistant
    refused = api.patch(
        f"/api/frames/{frame.id}/seats/{seat.id}",
        {"controller": "ai", "assistant": str(wrong.id)},
        format="json",
    )
    assert refused.status_code == 400 and "another character" in refused.json()["detail"]
    given = api.patch(
        f"/api/frames/{frame.id}/seats/{seat.id}",
        {"controller": "ai", "assistant": str(assistant.id)},
        format="json",
    )
    assert given.status_code == 200 and given.json()["assistant"] == str(assistant.id)


def test_an_invite_shows_its_seats_public_faces_and_nothing_secret(user, other_api, other_user):
    frame = make_frame(user)
    bob, _ = seat_player(frame, 1)
    preview = other_api.get(f"/api/frames/invite/{frame.invite_code}")
    assert preview.status_code == 200, preview.content
    body = preview.json()
    assert body["frame"]["id"] == str(frame.id) and body["my_seat"] is None
    by_position = {s["id"]: s for s in body["seats"]}
    seats = list(frame.seats.order_by("position"))
    assert by_position[str(seats[0].id)]["controller"] == "open"
    assert by_position[str(seats[1].id)]["player"] == bob.username
    assert by_position[str(seats[2].id)]["controller"] == "ai"
    assert "SECRET-MARKER" not in preview.content.decode()  # internal truths stay home
    assert seats[0].persona.universal_truth in preview.content.decode()

    joined = other_api.post(
        "/api/frames/join",
        {"invite_code": frame.invite_code, "seat": str(seats[0].id)},
        format="json",
    )
    assert joined.status_code == 200
    again = other_api.get(f"/api/frames/invite/{frame.invite_code}").json()
    assert again["my_seat"] == str(seats[0].id)
    assert other_api.get("/api/frames/invite/not-a-code").status_code == 404
    rotated = frame.invite_code
    Frame.objects.filter(pk=frame.pk).update(invite_code="fresh-code")
    gone = other_api.get(f"/api/frames/invite/{rotated}")
    assert gone.status_code == 404 and "not valid" in gone.json()["detail"]


def test_a_player_leaves_their_seat_and_only_their_own(user, other_api, other_user):
    frame = make_frame(user)
    seats = list(frame.seats.order_by("position"))
    other_api.post(
        "/api/frames/join",
        {"invite_code": frame.invite_code, "seat": str(seats[0].id)},
        format="json",
    )
    bob, _ = seat_player(frame, 1)
    leave = f"/api/frames/{frame.id}/leave"
    refused = other_api.post(leave, {"seat": str(seats[1].id)}, format="json")
    assert refused.status_code == 400 and "not your seat" in refused.json()["detail"]
    assert other_api.post(leave, {"seat": str(seats[0].id)}, format="json").status_code == 204
    seats[0].refresh_from_db(), seats[1].refresh_from_db()
    assert seats[0].controller == "open" and seats[0].user is None
    assert seats[1].user == bob  # the other seat is untouched
    assert other_api.get(f"/api/frames/{frame.id}").status_code == 404  # no longer seated


def test_the_gm_says_when_an_ai_seat_acts_and_a_player_cannot(api, user):
    frame = make_frame(user)  # seats 0 and 1 open, Tony played by his assistant
    _, player = seat_player(frame, 0)
    tony = frame.seats.get(position=2)
    path = f"/api/frames/{frame.id}/seats/{tony.id}"
    assert api.get(f"/api/frames/{frame.id}").json()["seats"][2]["ai_reacts"] == "addressed"
    refused = player.patch(path, {"ai_reacts": "always"}, format="json")
    assert refused.status_code == 403
    tony.refresh_from_db()
    assert tony.ai_reacts == "addressed"
    changed = api.patch(path, {"ai_reacts": "gm"}, format="json")
    assert changed.status_code == 200, changed.content
    # Only the setting changed: still played by the same assistant.
    assert changed.json()["ai_reacts"] == "gm" and changed.json()["controller"] == "ai"
    tony.refresh_from_db()
    assert tony.ai_reacts == "gm" and tony.assistant_id is not None
    assert player.get(f"/api/frames/{frame.id}").json()["seats"][2]["ai_reacts"] == "gm"


def test_a_bad_ai_reacts_or_an_empty_change_is_a_clear_400(api, user):
    frame = make_frame(user)
    tony = frame.seats.get(position=2)
    path = f"/api/frames/{frame.id}/seats/{tony.id}"
    bad = api.patch(path, {"ai_reacts": "sometimes"}, format="json")
    assert bad.status_code == 400
    assert "addressed" in str(bad.json()) and "ai_reacts" in str(bad.json())
    empty = api.patch(path, {}, format="json")
    assert empty.status_code == 400 and "Nothing to change" in empty.json()["detail"]
    tony.refresh_from_db()
    assert tony.ai_reacts == "addressed"
