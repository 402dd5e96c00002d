"""Sockets know their user from the session cookie, checked as Django checks a request's."""

import pytest
from channels.db import database_sync_to_async

from tests.conftest import logged_in_client
from tests.factories import UserFactory
from tests.productions.conftest import make_production, session_cookie, socket

pytestmark = pytest.mark.django_db(transaction=True)


@database_sync_to_async
def owner_signed_in():
    owner = UserFactory()
    return owner, make_production(owner), logged_in_client(owner)


async def opened(production_id, cookie: bytes | None) -> dict:
    communicator = socket(production_id, cookie)
    await communicator.connect()
    first = await communicator.receive_output(timeout=5)
    await communicator.disconnect()
    return first


async def test_a_socket_is_its_sessions_user_and_without_one_is_told_to_log_in():
    owner, production, client = await owner_signed_in()
    mine = await opened(production.pk, session_cookie(client))
    assert mine["type"] == "websocket.send" and '"ready"' in mine["text"]
    assert (await opened(production.pk, None))["code"] == 4401
    assert (await opened(production.pk, b"sessionid=not-a-session"))["code"] == 4401


async def test_a_session_from_before_a_password_change_opens_no_socket():
    owner, production, client = await owner_signed_in()
    cookie = session_cookie(client)

    @database_sync_to_async
    def change_password():
        owner.set_password("a whole new passphrase")
        owner.save()

    await change_password()
    assert (await opened(production.pk, cookie))["code"] == 4401
