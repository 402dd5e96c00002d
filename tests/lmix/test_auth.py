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
