"""Sockets under load and abuse, in services mode: a real daphne web process on PostgreSQL +
Redis (tests/live_processes.py), real websocket clients. Tabs opened and closed in storms
leave no subscription and no group member behind, and later events cost the web nothing;
a client that stops reading is closed with 4408 and the web's memory stays bounded; a
message over the limit gets the error frame and close 1009, not a dropped connection.

Needs REDIS_URL (the pub/sub layer's subscriptions are counted on Redis); skipped without.
"""

import asyncio
import json
import time
import uuid
from pathlib import Path

import pytest
import redis
from channels_redis.pubsub import RedisPubSubChannelLayer
from django.conf import settings
from websockets.asyncio.client import ClientConnection, connect
from websockets.exceptions import ConnectionClosed

from synthesis.frame_events import frame_group
from tests.live_processes import child_env, free_port, web_process
from tests.productions.conftest import session_cookie
from tests.synthesis.conftest import make_frame, seat_player

pytestmark = [
    pytest.mark.django_db(transaction=True),
    pytest.mark.skipif(not settings.REDIS_URL, reason="services mode: needs REDIS_URL"),
]


def rss_bytes(pid: int) -> int:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) * 1024
    raise RuntimeError("no VmRSS")


def subscriptions(prefix: str) -> list[str]:
    """The web process's channel-layer subscriptions on Redis: one per open socket's own
    channel (`…specific…`) and one per group that still has a member (`…__group__…`)."""
    client = redis.Redis.from_url(settings.REDIS_URL)
    try:
        return sorted(name.decode() for name in client.pubsub_channels(f"{prefix}*"))
    finally:
        client.close()


def settled(prefix: str, seconds: float = 20) -> list[str]:
    """The subscriptions left once closing sockets had time to end (daphne kills an app
    that has not ended 10 s after its connection closed)."""
    deadline = time.monotonic() + seconds
    while (left := subscriptions(prefix)) and time.monotonic() < deadline:
        time.sleep(0.2)
    return left


async def publish(prefix: str, group: str, count: int, size: int) -> None:
    """`count` events of about `size` bytes to `group`, as a worker publishes them."""
    layer = RedisPubSubChannelLayer(hosts=[settings.REDIS_URL], prefix=prefix)
    try:
        for index in range(count):
            payload = {"type": "bench.note", "index": index, "pad": "x" * size}
            await layer.group_send(group, {"type": "group.event", "payload": payload})
            if index % 20 == 19:  # paced: Redis drops a subscriber 32 MB behind
                await asyncio.sleep(0.05)
    finally:
        await layer.flush()


def frame_with_player(user):
    frame = make_frame(user, open_seats=1, tempo=0)
    _, client = seat_player(frame, 0)
    return frame, session_cookie(client).decode()


async def open_tab(port: int, frame_id, cookie: str, **options) -> ClientConnection:
    return await connect(
        f"ws://127.0.0.1:{port}/ws/frames/{frame_id}/",
        additional_headers={"Cookie": cookie, "Origin": f"http://127.0.0.1:{port}"},
        open_timeout=30,
        **options,
    )


async def storm(port: int, frame_id, cookie: str, tabs: int = 20, rounds: int = 3) -> None:
    """A player opens `tabs` tabs at once and closes them 20 ms apart, `rounds` times. Like
    a browser's, each tab reads all that comes (max_queue=None): unread presence would hold
    back the server's answer to its close."""
    for _ in range(rounds):
        opening = (open_tab(port, frame_id, cookie, max_queue=None) for _ in range(tabs))
        sockets = await asyncio.gather(*opening)
        for ws in sockets:
            await ws.close()
            await asyncio.sleep(0.02)


def test_tab_storms_leave_no_subscription_and_later_events_cost_the_web_nothing(user):
    frame, cookie = frame_with_player(user)
    prefix = f"h{uuid.uuid4().hex[:12]}"  # this web process's subscriptions alone
    port = free_port()
    with web_process(child_env(LMIX_CHANNEL_PREFIX=prefix), port=port, worker=False) as web:
        asyncio.run(storm(port, frame.pk, cookie))
        assert settled(prefix) == []  # before: 51 of 60 left, dead consumers in the groups

        # A watcher's socket, so the events are delivered in the web process.
        async def thousand_events() -> int:
            async with await open_tab(port, frame.pk, cookie) as watcher:
                while json.loads(await watcher.recv())["type"] != "ready":
                    pass
                before = rss_bytes(web.pid)

                async def read_all() -> None:
                    while json.loads(await watcher.recv()).get("index") != 999:
                        pass

                reading = asyncio.create_task(read_all())
                await publish(prefix, frame_group(frame.pk), count=1000, size=20_000)
                await asyncio.wait_for(reading, 60)
                return rss_bytes(web.pid) - before

        growth = asyncio.run(thousand_events())
        # 20 MB went through; each dead consumer used to keep all of it.
        assert growth < 8 * 2**20, f"the web grew {growth / 2**20:.1f} MiB"
        assert settled(prefix) == []


def test_a_client_that_stops_reading_is_closed_with_4408_and_the_web_stays_bounded(user):
    frame, cookie = frame_with_player(user)
    prefix = f"h{uuid.uuid4().hex[:12]}"
    port = free_port()
    env = child_env(LMIX_CHANNEL_PREFIX=prefix, LMIX_SOCKET_MAX_QUEUED_BYTES=str(256 * 1024))

    async def slow_reader(pid: int) -> tuple[int | None, int]:
        # max_queue=1: the client stops reading its socket as soon as one frame waits.
        ws = await open_tab(port, frame.pk, cookie, max_queue=1, ping_interval=None)
        while json.loads(await ws.recv())["type"] != "ready":
            pass
        before = rss_bytes(pid)
        await publish(prefix, frame_group(frame.pk), count=400, size=64_000)  # 25 MB
        await asyncio.sleep(1)  # the web handles what Redis still holds for it
        growth = rss_bytes(pid) - before
        try:  # reading again: what was queued, then the close
            while True:
                await asyncio.wait_for(ws.recv(), 30)
        except ConnectionClosed as closed:
            return (closed.rcvd.code if closed.rcvd else None), growth

    with web_process(env, port=port, worker=False) as web:
        code, growth = asyncio.run(slow_reader(web.pid))
        assert code == 4408
        assert growth < 12 * 2**20, f"the web grew {growth / 2**20:.1f} MiB"
        assert settled(prefix) == []


@pytest.mark.parametrize("size", [100_000, 2 * 2**20], ids=["100-KB", "2-MiB"])
def test_a_message_over_the_limit_gets_the_error_frame_and_close_1009(user, size):
    frame, cookie = frame_with_player(user)
    port = free_port()

    async def oversized() -> tuple[dict, int | None]:
        async with await open_tab(port, frame.pk, cookie) as ws:
            while json.loads(await ws.recv())["type"] != "ready":
                pass
            await ws.send(json.dumps({"type": "ping", "pad": "x" * size}))
            while (message := json.loads(await ws.recv()))["type"] != "error":
                pass  # presence may come first
            with pytest.raises(ConnectionClosed) as closed:
                while True:
                    await asyncio.wait_for(ws.recv(), 30)
            return message, closed.value.rcvd.code if closed.value.rcvd else None

    with web_process(child_env(), port=port, worker=False):
        error, code = asyncio.run(oversized())
    assert error["code"] == "too_large" and "65536 bytes" in error["detail"]
    assert code == 1009  # before: 1006 (no close frame) above 1 MiB; open below it
