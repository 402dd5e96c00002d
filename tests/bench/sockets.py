"""Sockets under load and abuse on a real web process (docs/realtime.md, "Limits"): the bound
on what waits for one socket, the web's memory after tab storms, its growth over 1,000
events, and a client that stops reading. Run from `python -m tests.bench`; the events and
the slow reader need the Redis layer (events are published from outside the web process,
as a worker publishes them).
"""

import asyncio
import json
import time
import uuid

from django.conf import settings
from django.test import Client

from synthesis.frame_events import frame_group
from synthesis.frames import frame_join
from tests.factories import UserFactory
from tests.live_processes import child_env, free_port, web_process
from tests.lmix.test_sockets_live import open_tab, publish, rss_bytes, settled, storm
from tests.synthesis.conftest import make_frame

MiB = 2**20


async def _ready(port: int, frame_id, cookie: str, **options):
    ws = await open_tab(port, frame_id, cookie, **options)
    while json.loads(await ws.recv())["type"] != "ready":
        pass
    return ws


async def _events(port: int, pid: int, frame_id, cookie: str, prefix: str) -> int:
    """RSS growth while 1,000 events of 20 KB reach one watcher that reads them all."""
    async with await _ready(port, frame_id, cookie, max_queue=None) as watcher:
        before = rss_bytes(pid)

        async def read_all() -> None:
            while json.loads(await watcher.recv()).get("index") != 999:
                pass

        reading = asyncio.create_task(read_all())
        await publish(prefix, frame_group(frame_id), count=1000, size=20_000)
        await asyncio.wait_for(reading, 120)
        return rss_bytes(pid) - before


async def _slow_reader(port: int, pid: int, frame_id, cookie: str, prefix: str):
    """RSS growth while 25 MB are sent to a socket whose client stopped reading; its close."""
    ws = await _ready(port, frame_id, cookie, max_queue=1, ping_interval=None)
    before = rss_bytes(pid)
    await publish(prefix, frame_group(frame_id), count=400, size=64_000)
    await asyncio.sleep(1)
    growth = rss_bytes(pid) - before
    try:
        while True:
            await asyncio.wait_for(ws.recv(), 60)
    except Exception as closed:  # noqa: BLE001 - ConnectionClosed, or a timeout (no close)
        rcvd = getattr(closed, "rcvd", None)
        return growth, rcvd.code if rcvd else type(closed).__name__


def sockets(owner) -> None:
    frame = make_frame(owner, open_seats=1, tempo=0)
    player = UserFactory()
    frame_join(user=player, invite_code=frame.invite_code, seat_id=frame.seats.get(position=0).pk)
    client = Client()
    client.force_login(player)
    cookie = f"{settings.SESSION_COOKIE_NAME}={client.cookies[settings.SESSION_COOKIE_NAME].value}"
    prefix = f"bench{uuid.uuid4().hex[:10]}"
    on_redis = bool(settings.REDIS_URL)
    port = free_port()
    print(
        f"{'per-socket send buffer bound':<44} {settings.LMIX_SOCKET_MAX_QUEUED_BYTES / 1024:8.0f}"
        f" KiB or {settings.LMIX_SOCKET_MAX_QUEUED_MESSAGES} messages, then close 4408"
    )
    with web_process(child_env(LMIX_CHANNEL_PREFIX=prefix), port=port, worker=False) as web:

        async def warm_up() -> None:
            await (await _ready(port, frame.pk, cookie)).close()

        asyncio.run(warm_up())
        time.sleep(1)
        before = rss_bytes(web.pid)
        started = time.monotonic()
        asyncio.run(storm(port, frame.pk, cookie))
        left = settled(prefix) if on_redis else []
        took = time.monotonic() - started
        after = rss_bytes(web.pid)
        subscriptions = f"; subscriptions left {len(left)}" if on_redis else ""
        print(
            f"{'web RSS after 3 storms of 20 tabs':<44} {after / MiB:8.1f} MiB"
            f"   ({(after - before) / MiB:+.1f} MiB, {took:.1f} s{subscriptions})"
        )
        if not on_redis:
            print(f"{'events and a slow reader':<44} need the Redis layer: skipped")
            return
        growth = asyncio.run(_events(port, web.pid, frame.pk, cookie, prefix))
        print(f"{'web RSS growth over 1,000 events of 20 KB':<44} {growth / MiB:+8.1f} MiB")
        growth, code = asyncio.run(_slow_reader(port, web.pid, frame.pk, cookie, prefix))
        print(
            f"{'a client stops reading; 25 MB sent to it':<44} {growth / MiB:+8.1f} MiB"
            f"   (closed with {code})"
        )
