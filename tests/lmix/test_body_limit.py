"""A body over DATA_UPLOAD_MAX_MEMORY_SIZE is a JSON 413 that names the limit, under Django's
test handler and the real ASGI application alike, and nothing is logged at ERROR (Django's
own answer was an HTML 400 and a SuspiciousOperation traceback)."""

import json
import logging

import pytest
from channels.testing import HttpCommunicator

from authoring.models import World
from config.asgi import application

LIMIT = 1000
MESSAGE = f"The request body is larger than {LIMIT} bytes."


@pytest.fixture(autouse=True)
def small_limit(settings):
    settings.DATA_UPLOAD_MAX_MEMORY_SIZE = LIMIT
    settings.ALLOWED_HOSTS = ["localhost", "testserver"]


def world(size: int) -> dict:
    return {"name": "Mars", "description": "x" * size}


def errors_logged(caplog) -> list[logging.LogRecord]:
    return [record for record in caplog.records if record.levelno >= logging.ERROR]


@pytest.mark.django_db
def test_a_body_over_the_limit_is_a_json_413_and_no_error_is_logged(api, caplog):
    caplog.set_level(logging.INFO)
    response = api.post("/api/worlds", world(2 * LIMIT), format="json")
    assert response.status_code == 413
    assert response["Content-Type"] == "application/json"
    assert response.json() == {"detail": MESSAGE}
    assert errors_logged(caplog) == []
    assert not any(record.exc_info for record in caplog.records)
    assert not World.objects.exists()
    # Under the limit the same request is served.
    assert api.post("/api/worlds", world(LIMIT // 2), format="json").status_code == 201


@pytest.mark.django_db(transaction=True)
async def test_through_the_asgi_application_too(caplog):
    caplog.set_level(logging.INFO)
    body = json.dumps({"username": "x" * (2 * LIMIT), "password": "p"}).encode()
    communicator = HttpCommunicator(
        application,
        "POST",
        "/api/auth/login",
        body=body,
        headers=[
            (b"host", b"localhost"),
            (b"content-type", b"application/json"),
            (b"content-length", str(len(body)).encode()),
        ],
    )
    response = await communicator.get_response(timeout=10)
    # Before CSRF is even checked: the login throttle reads the body first.
    assert response["status"] == 413, response["body"]
    assert json.loads(response["body"]) == {"detail": MESSAGE}
    assert errors_logged(caplog) == []
