"""A frame's sockets close with 4404 across real processes (issue 24, §5): the GM closes
one frame over HTTP and its player's socket hears `frame.closed`, then closes; the GM
deletes the production and the player's and spectator's sockets on its other frame close.
Separate web and worker processes on PostgreSQL + Redis (the pub/sub layer between them);
one embedded web process on SQLite."""

import json
from contextlib import ExitStack

import pytest
from django.conf import settings
from websockets.exceptions import ConnectionClosed
from websockets.sync.client import ClientConnection

from synthesis.frames import frame_create, frame_join, spectators_set
from tests.conftest import logged_in_client
from tests.factories import UserFactory
from tests.live_processes import (
    child_env,
    free_port,
    ready_socket,
    web_process,
    worker_process,
)
from tests.productions.conftest import session_cookie
from tests.synthesis.conftest import make_frame, seat_player
from tests.synthesis.test_web_restart import api

pytestmark = pytest.mark.django_db(transaction=True)


def heard_until_closed(ws: ClientConnection) -> tuple[list[str], int | None]:
    """The event types a socket receives until the server closes it, and its close code."""
    heard = []
    with pytest.raises(ConnectionClosed) as closed:
        while True:
            heard.append(json.loads(ws.recv(timeout=30))["type"])
    return heard, closed.value.rcvd.code if closed.value.rcvd else None


def test_closing_a_frame_and_deleting_its_production_close_the_real_sockets_with_4404(user):
    closing = make_frame(user, open_seats=1)
    player, player_client = seat_player(closing, 0)
    persona = closing.seats.get(position=0).persona_id
    other = frame_create(production=closing.production, name="Next", open_seats=[persona])
    frame_join(user=player, invite_code=other.invite_code, seat_id=other.seats.get(position=0).pk)
    code = spectators_set(frame=other, enabled=True).spectator_code
    gm = session_cookie(logged_in_client(user)).decode()
    mine = session_cookie(player_client).decode()
    watcher = session_cookie(logged_in_client(UserFactory())).decode()
    port = free_port()
    env = child_env()
    separate = bool(settings.REDIS_URL)

    with ExitStack() as stack:
        if separate:
            stack.enter_context(worker_process(env))
        stack.enter_context(web_process(env, port=port, worker=not separate))
        on_closing = ready_socket(port, f"/ws/frames/{closing.pk}/", mine)
        on_other = ready_socket(port, f"/ws/frames/{other.pk}/", mine)
        watching = ready_socket(port, f"/ws/spectate/{code}/", watcher)

        with api(port, gm) as http:
            assert http.post(f"/api/frames/{closing.pk}/close").status_code == 200
            heard, closed = heard_until_closed(on_closing)
            assert "frame.closed" in heard and closed == 4404
            assert http.delete(f"/api/productions/{closing.production_id}").status_code == 204
        for ws in (on_other, watching):
            assert heard_until_closed(ws)[1] == 4404
