"""The HTTP side of the ASGI application (config/asgi.py): a request's middleware and view
run in one call on the request's thread, which is kept for later requests, and behave as
under Django's own handler."""

import asyncio
import json
import threading
from unittest import mock

import pytest
from asgiref.sync import SyncToAsync, sync_to_async
from channels.testing import HttpCommunicator

from config.asgi import RequestThreads, application

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


def thread_id() -> int:
    return threading.get_ident()


async def test_a_requests_thread_is_lent_to_the_next_request_once_it_is_answered():
    threads = RequestThreads()
    async with threads.lend():
        first = await sync_to_async(thread_id)()
        again = await sync_to_async(thread_id)()
    async with threads.lend():
        later = await sync_to_async(thread_id)()
    assert first == again == later
    assert first != threading.get_ident()


async def test_requests_in_flight_together_run_on_threads_of_their_own():
    threads = RequestThreads()
    both_in = threading.Barrier(2, timeout=5)  # breaks if one waits behind the other

    def meet() -> int:
        both_in.wait()
        return threading.get_ident()

    async def request() -> int:
        async with threads.lend():
            return await sync_to_async(meet)()

    first, second = await asyncio.gather(request(), request())
    assert first != second


async def test_a_cancelled_requests_thread_is_not_lent_while_its_code_may_still_run():
    threads = RequestThreads()
    running, release = threading.Event(), threading.Event()
    stuck: list[int] = []

    def slow() -> None:
        stuck.append(threading.get_ident())
        running.set()
        release.wait(10)

    async def request() -> None:
        async with threads.lend():
            await sync_to_async(slow)()

    task = asyncio.create_task(request())
    assert await asyncio.to_thread(running.wait, 5)
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    try:
        async with threads.lend():
            # On the stuck thread, this would wait for `slow` to end.
            other = await asyncio.wait_for(sync_to_async(thread_id)(), 5)
    finally:
        release.set()
    assert other != stuck[0]
