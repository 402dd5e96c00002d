"""Session auth for the SPA: sign up, log in, log out, me, and CSRF on unsafe methods."""

import pytest
from django.contrib.auth import get_user_model

from tests.conftest import CsrfApiClient

pytestmark = pytest.mark.django_db


def test_signup_logs_in_and_me_answers(anon_client):
    response = anon_client.post(
        "/api/auth/signup", {"username": "ada", "password": "correct-horse-9"}, format="json"
    )
    assert response.status_code == 201, response.content
    assert anon_client.get("/api/auth/me").json()["username"] == "ada"


def test_signup_refuses_weak_passwords_and_taken_names(anon_client, user):
    weak = anon_client.post(
        "/api/auth/signup", {"username": "bob", "password": "123"}, format="json"
    )
    assert weak.status_code == 400 and "password" in weak.json()["errors"]
    taken = anon_client.post(
        "/api/auth/signup",
        {"username": user.username.upper(), "password": "correct-horse-9"},
        format="json",
    )
    assert taken.status_code == 400 and "username" in taken.json()["errors"]


def test_login_logout_cycle(anon_client, user):
    wrong = anon_client.post(
        "/api/auth/login", {"username": user.username, "password": "nope"}, format="json"
    )
    assert wrong.status_code == 400 and wrong.json()["detail"] == "Wrong username or password."
    assert anon_client.get("/api/auth/me").status_code == 401

    ok = anon_client.post(
        "/api/auth/login",
        {"username": user.username, "password": "a-good-password-1"},
        format="json",
    )
    assert ok.status_code == 200 and ok.json()["username"] == user.username
    anon_client.csrf()  # login rotates the token
    assert anon_client.get("/api/auth/me").status_code == 200
    assert anon_client.post("/api/auth/logout").status_code == 204
    assert anon_client.get("/api/auth/me").status_code == 401


def test_unsafe_methods_need_the_csrf_header(user):
    client = CsrfApiClient()
    client.force_login(user)
    client.get("/api/auth/csrf")
    token = client.cookies["csrftoken"].value
    without = client.post(
        "/api/worlds", {"name": "w", "description": "d"}, format="json", HTTP_X_CSRFTOKEN=""
    )
    assert without.status_code == 403 and "CSRF" in without.json()["detail"]
    with_header = client.post(
        "/api/worlds", {"name": "w", "description": "d"}, format="json", HTTP_X_CSRFTOKEN=token
    )
    assert with_header.status_code == 201


def test_login_without_csrf_is_refused(user):
    client = CsrfApiClient()
    response = client.post(
        "/api/auth/login",
        {"username": user.username, "password": "a-good-password-1"},
        format="json",
    )
    assert response.status_code == 403
    assert get_user_model().objects.filter(username=user.username).exists()


# --- throttling (lmix/throttles.py) ------------------------------------------------------------

RIGHT = "a-good-password-1"  # tests.factories.UserFactory's


def log_in(client: CsrfApiClient, username: str, password: str, **extra):
    return client.post(
        "/api/auth/login", {"username": username, "password": password}, format="json", **extra
    )


def fresh_client(**extra) -> CsrfApiClient:
    client = CsrfApiClient(**extra)
    client.csrf()
    return client


def assert_throttled(response, *, within: int) -> None:
    assert response.status_code == 429, response.content
    assert 1 <= int(response["Retry-After"]) <= within
    detail = response.json()["detail"]
    assert detail.startswith("Too many") and f"Try again in {response['Retry-After']} " in detail


def test_25_wrong_passwords_lock_the_username_at_the_default_rate(anon_client, user):
    answers = [log_in(anon_client, user.username, "nope").status_code for _ in range(25)]
    assert answers == [400] * 10 + [429] * 15
    assert_throttled(log_in(anon_client, user.username, RIGHT), within=60)
    assert anon_client.get("/api/auth/me").status_code == 401


def test_failed_logins_per_username_then_the_right_password_is_429(anon_client, user, settings):
    settings.LMIX_LOGIN_RATE_PER_USERNAME = "3/min"
    # Variants of the name share its count, and another address does not escape it.
    for variant in (user.username.upper(), f"  {user.username.upper()} ", user.username.title()):
        assert log_in(anon_client, variant, RIGHT).status_code == 400
    assert_throttled(log_in(anon_client, f" {user.username}", RIGHT), within=60)
    elsewhere = fresh_client(REMOTE_ADDR="10.0.0.9")
    assert_throttled(log_in(elsewhere, user.username, RIGHT), within=60)
    assert elsewhere.get("/api/auth/me").status_code == 401


def test_another_username_from_the_same_address_works_until_the_address_limit(
    user, other_user, settings
):
    settings.LMIX_LOGIN_RATE_PER_USERNAME = "3/min"
    settings.LMIX_LOGIN_RATE_PER_ADDRESS = "5/min"
    attacker, neighbour = fresh_client(), fresh_client()
    for _ in range(3):
        assert log_in(attacker, user.username, "nope").status_code == 400
    assert log_in(attacker, user.username, RIGHT).status_code == 429  # not counted again
    assert log_in(neighbour, other_user.username, RIGHT).status_code == 200  # not counted
    neighbour.csrf()  # logging in rotates the token
    for _ in range(2):  # failures 4 and 5 from this address
        assert log_in(neighbour, other_user.username, "nope").status_code == 400
    assert_throttled(log_in(neighbour, other_user.username, RIGHT), within=60)
    assert (
        log_in(fresh_client(REMOTE_ADDR="10.0.0.9"), other_user.username, RIGHT).status_code == 200
    )


def test_successful_logins_do_not_use_up_the_budget(user, settings):
    settings.LMIX_LOGIN_RATE_PER_USERNAME = "2/min"
    settings.LMIX_LOGIN_RATE_PER_ADDRESS = "2/min"
    for _ in range(5):
        assert log_in(fresh_client(), user.username, RIGHT).status_code == 200
    client = fresh_client()
    assert [log_in(client, user.username, "nope").status_code for _ in range(3)] == [400, 400, 429]


def test_x_forwarded_for_is_ignored_unless_proxies_are_trusted(db, settings):
    settings.LMIX_LOGIN_RATE_PER_ADDRESS = "3/min"
    client = fresh_client()
    forged = [
        log_in(client, f"nobody{n}", "nope", HTTP_X_FORWARDED_FOR=f"10.1.0.{n}") for n in range(4)
    ]
    assert [r.status_code for r in forged] == [400, 400, 400, 429]

    settings.LMIX_TRUSTED_PROXY_COUNT = 1  # the proxy's own entry is the last one
    behind = [
        log_in(client, f"somebody{n}", "nope", HTTP_X_FORWARDED_FOR=f"6.6.6.6, 10.2.0.{n}")
        for n in range(4)
    ]
    assert [r.status_code for r in behind] == [400] * 4


def test_signup_is_throttled_per_address(anon_client, user, settings):
    settings.LMIX_SIGNUP_RATE_PER_ADDRESS = "2/hour"
    taken = anon_client.post(
        "/api/auth/signup", {"username": user.username, "password": RIGHT}, format="json"
    )
    assert taken.status_code == 400  # a refused sign-up counts too
    first = fresh_client().post(
        "/api/auth/signup", {"username": "ada", "password": RIGHT}, format="json"
    )
    assert first.status_code == 201
    third = fresh_client().post(
        "/api/auth/signup", {"username": "bob", "password": RIGHT}, format="json"
    )
    assert_throttled(third, within=3600)
    assert not get_user_model().objects.filter(username="bob").exists()
    elsewhere = fresh_client(REMOTE_ADDR="10.0.0.9").post(
        "/api/auth/signup", {"username": "bob", "password": RIGHT}, format="json"
    )
    assert elsewhere.status_code == 201


def test_a_deactivated_or_deleted_user_is_signed_out_of_every_request(anon_client):
    anon_client.post(
        "/api/auth/signup", {"username": "eve", "password": "correct-horse-9"}, format="json"
    )
    assert anon_client.get("/api/auth/me").status_code == 200
    eve = get_user_model().objects.get(username="eve")
    eve.is_active = False
    eve.save()
    assert anon_client.get("/api/auth/me").status_code == 401
    eve.is_active = True
    eve.save()
    assert anon_client.get("/api/auth/me").json()["username"] == "eve"
    eve.delete()
    assert anon_client.get("/api/auth/me").status_code == 401
