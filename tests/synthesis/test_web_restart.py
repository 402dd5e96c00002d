"""`kill -9` of the web process while a player's frame socket is open: the socket closes,
nothing the player wrote is lost, and once a web process is back the player reconnects,
finds the intention submitted before, commits it and receives its outcome. Separate web
and worker processes on PostgreSQL + Redis; one embedded web process on SQLite."""

import json
from collections.abc import Iterator
from contextlib import ExitStack, contextmanager

import httpx
import pytest
from django.conf import settings
from websockets.exceptions import ConnectionClosed
from websockets.sync.client import ClientConnection

from tests.live_processes import (
    child_env,
    free_port,
    kill_9,
    ready_socket,
    web_process,
    worker_process,
)
from tests.productions.conftest import session_cookie
from tests.synthesis.conftest import make_frame, seat_player

pytestmark = pytest.mark.django_db(transaction=True)

INTENTION = "I lock the door behind me. RESTART-MARKER"


def frame_socket(port: int, frame_id, cookie: str) -> ClientConnection:
    return ready_socket(port, f"/ws/frames/{frame_id}/", cookie)


@contextmanager
def api(port: int, cookie: str) -> Iterator[httpx.Client]:
    name, value = cookie.split("=", 1)
    with httpx.Client(
        base_url=f"http://127.0.0.1:{port}", cookies={name: value}, timeout=30
    ) as http:
        http.headers["X-CSRFToken"] = http.get("/api/auth/csrf").json()["csrfToken"]
        yield http


def outcome_for(ws: ClientConnection, seat_id: str) -> dict:
    """The first `outcome.created` resolving `seat_id`'s action (others may come first)."""
    while True:
        event = json.loads(ws.recv(timeout=60))
        if event["type"] == "outcome.created" and event["outcome"]["seat"] == seat_id:
            return event


def test_a_player_reconnects_after_kill_9_of_the_web_process_and_loses_nothing(user):
    frame = make_frame(user, open_seats=1, tempo=0)
    _, client = seat_player(frame, 0)
    seat_id = str(frame.seats.get(position=0).pk)
    cookie = session_cookie(client).decode()
    port = free_port()
    env = child_env()
    separate = bool(settings.REDIS_URL)

    with ExitStack() as stack:
        if separate:
            stack.enter_context(worker_process(env))
        with web_process(env, port=port, worker=not separate) as web:
            ws = frame_socket(port, frame.pk, cookie)
            with api(port, cookie) as http:
                submitted = http.post(
                    f"/api/frames/{frame.pk}/liquid", json={"seat": seat_id, "content": INTENTION}
                )
            assert submitted.status_code == 201, submitted.text
            kill_9(web)
            with pytest.raises(ConnectionClosed):
                while True:  # whatever was on its way, then the end
                    ws.recv(timeout=10)
            ws.close()

        with web_process(env, port=port, worker=not separate):
            ws = frame_socket(port, frame.pk, cookie)
            with api(port, cookie) as http:
                view = http.get(f"/api/frames/{frame.pk}").json()
                mine = [x for x in view["liquid"] if x["id"] == submitted.json()["id"]]
                assert [x["content"] for x in mine] == [INTENTION]  # nothing lost
                committed = http.post(f"/api/liquid/{mine[0]['id']}/commit")
                assert committed.status_code == 200, committed.text
            event = outcome_for(ws, seat_id)
            assert event["seq"] > view["seq"]
            assert seat_id in [a["seat"] for a in event["outcome"]["actions_resolved"]]
            ws.close()
