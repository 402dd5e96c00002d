"""The HTTP side of the ASGI application (lmix/asgi.py): a request's middleware and view
run in one call on the sync thread, and behave as under Django's own handler."""

import json
from unittest import mock

import pytest
from asgiref.sync import SyncToAsync
from channels.testing import HttpCommunicator

from lmix.asgi import application

pytestmark = pytest.mark.django_db(transaction=True)


async def request(method: str, path: str) -> tuple[dict, int]:
    """The response to one request through `application`, and how many times it went to
    a thread and back."""
    hops = 0
    real = SyncToAsync.__call__

    async def counted(self: SyncToAsync, *args: object, **kwargs: object) -> object:
        nonlocal hops
        hops += 1
        return await real(self, *args, **kwargs)

    communicator = HttpCommunicator(application, method, path, headers=[(b"host", b"localhost")])
    with mock.patch.object(SyncToAsync, "__call__", counted):
        response = await communicator.get_response(timeout=10)
    return response, hops


@pytest.fixture(autouse=True)
def hosts(settings):
    settings.ALLOWED_HOSTS = ["localhost"]


async def test_a_request_goes_to_the_sync_thread_once_for_its_middleware_and_view():
    response, hops = await request("GET", "/api/auth/csrf")
    assert response["status"] == 200
    assert json.loads(response["body"])["csrfToken"]
    cookies = [v for k, v in response["headers"] if k.lower() == b"set-cookie"]
    assert any(c.startswith(b"csrftoken=") for c in cookies)  # CsrfViewMiddleware ran
    # The chain is one hop; Django's request_started, request_finished and response.close
    # take one each. Django's own handler took a dozen and more (a hop per middleware hook).
    assert hops <= 4


async def test_a_refused_request_still_passes_through_every_middleware():
    response, _ = await request("POST", "/api/auth/login")  # no CSRF token
    assert response["status"] == 403
    headers = {k.lower(): v for k, v in response["headers"]}
    assert headers[b"x-content-type-options"] == b"nosniff"  # the outermost (security)
    assert headers[b"x-frame-options"] == b"DENY"  # the innermost
