"""The account settings endpoints: change the password, delete the account."""

import pytest
from django.contrib.auth import get_user_model

from authoring.models import Persona, World
from lmix.models import LLMCall, LLMModel
from productions.models import Production
from synthesis.frames import frame_join
from synthesis.models import Frame, Liquid, Seat, SeatController
from tests.conftest import CsrfApiClient, logged_in_client
from tests.factories import UserFactory
from tests.synthesis.conftest import make_frame

pytestmark = pytest.mark.django_db

RIGHT = "a-good-password-1"  # tests.factories.UserFactory's


def change(client: CsrfApiClient, old: str, new: str):
    return client.post(
        "/api/auth/password", {"old_password": old, "new_password": new}, format="json"
    )


def delete(client: CsrfApiClient, username: str, password: str):
    return client.delete(
        "/api/auth/me", {"username": username, "password": password}, format="json"
    )


def log_in(username: str, password: str) -> int:
    client = CsrfApiClient()
    client.csrf()
    answer = client.post(
        "/api/auth/login", {"username": username, "password": password}, format="json"
    )
    return answer.status_code


# --- password ------------------------------------------------------------------------------


def test_wrong_old_password_is_a_400_and_keeps_the_password(api, user):
    response = change(api, "not-it", "another-good-pass-7")
    assert response.status_code == 400
    assert response.json()["errors"] == {"old_password": ["That is not your current password."]}
    user.refresh_from_db()
    assert user.check_password(RIGHT)


@pytest.mark.parametrize(
    ("new", "message"),
    [
        ("short", "This password is too short. It must contain at least 8 characters."),
        ("password123", "This password is too common."),
    ],
)
def test_weak_new_password_is_a_400_with_the_validators_message(api, user, new, message):
    response = change(api, RIGHT, new)
    assert response.status_code == 400
    assert message in response.json()["errors"]["new_password"]
    assert response.json()["detail"] == response.json()["errors"]["new_password"][0]
    user.refresh_from_db()
    assert user.check_password(RIGHT)


def test_password_change_keeps_this_session_and_ends_the_others(api, user):
    elsewhere = logged_in_client(user)
    response = change(api, RIGHT, "a-brand-new-secret-9")
    assert response.status_code == 204, response.content
    assert api.get("/api/auth/me").json()["username"] == user.username
    assert elsewhere.get("/api/auth/me").status_code in (401, 403)
    assert log_in(user.username, "a-brand-new-secret-9") == 200
    assert log_in(user.username, RIGHT) == 400


def test_password_change_needs_a_session(anon_client):
    assert change(anon_client, RIGHT, "a-brand-new-secret-9").status_code in (401, 403)


def test_wrong_old_passwords_are_throttled_but_weak_new_ones_are_not(api, settings):
    settings.LMIX_LOGIN_RATE_PER_USERNAME = "3/min"
    assert [change(api, RIGHT, "short").status_code for _ in range(5)] == [400] * 5
    assert [change(api, "nope", "a-brand-new-9").status_code for _ in range(4)] == [400] * 3 + [429]
    assert delete(api, "x", "nope").status_code == 429  # one budget for both


# --- delete -------------------------------------------------------------------------------


def test_delete_with_the_wrong_password_deletes_nothing(api, user):
    make_frame(user)
    before = {m: m.objects.filter(owner=user).count() for m in (Frame, Production, Persona)}
    response = delete(api, user.username, "not-it")
    assert response.status_code == 400
    assert response.json()["errors"] == {"password": ["That is not your current password."]}
    assert get_user_model().objects.filter(pk=user.pk).exists()
    assert {m: m.objects.filter(owner=user).count() for m in before} == before
    assert api.get("/api/auth/me").status_code == 200


def test_delete_needs_the_username_typed_exactly(api, user):
    response = delete(api, user.username.upper(), RIGHT)
    assert response.status_code == 400 and "username" in response.json()["errors"]
    assert get_user_model().objects.filter(pk=user.pk).exists()


def test_delete_removes_everything_owned_and_ends_the_session(api, user, other_user):
    frame = make_frame(user)
    player = UserFactory()
    frame_join(user=player, invite_code=frame.invite_code, seat_id=frame.seats.first().pk)
    LLMCall.objects.create(owner=user, provider="offline", model_id="narrator", purpose="t")
    kept = World.objects.create(owner=other_user, name="Theirs", description="d")

    response = delete(api, user.username, RIGHT)
    assert response.status_code == 204, response.content
    assert not get_user_model().objects.filter(pk=user.pk).exists()
    for model in (Frame, Production, Persona, World, LLMModel, LLMCall):
        assert not model.objects.filter(owner_id=user.pk).exists(), model
    assert World.objects.filter(pk=kept.pk).exists()
    assert get_user_model().objects.filter(pk=player.pk).exists()  # the player stays
    assert api.get("/api/auth/me").status_code in (401, 403)
    assert log_in(user.username, RIGHT) == 400


def test_seats_played_in_other_peoples_frames_become_open(api, user, other_user):
    frame = make_frame(other_user)
    seat = frame.seats.get(position=0)
    frame_join(user=user, invite_code=frame.invite_code, seat_id=seat.pk)
    line = Liquid.objects.create(frame=frame, seat=seat, author=user, content="I wave.")

    assert delete(api, user.username, RIGHT).status_code == 204
    seat.refresh_from_db()
    assert seat.controller == SeatController.OPEN and seat.user_id is None
    # The frame goes on: its other seats are untouched, and a newcomer can take the seat.
    assert Seat.objects.filter(frame=frame, controller=SeatController.AI).count() == 1
    assert logged_in_client(other_user).get(f"/api/frames/{frame.pk}").status_code == 200
    frame_join(user=UserFactory(), invite_code=frame.invite_code, seat_id=seat.pk)
    # What they wrote there stays, without an author.
    assert Liquid.objects.get(pk=line.pk).author_id is None
