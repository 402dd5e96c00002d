"""`python -m tests.bench.idle_sockets`: many idle websockets on one real daphne process.

Starts `manage.py serve --worker no` on a free port (on a scratch database and the configured
channel layer: set DATABASE_URL / REDIS_URL to bench PostgreSQL + Redis), opens BENCH_SOCKETS
authenticated production sockets (default 1000), holds them idle for BENCH_SECONDS (default
60), then pings each one. Prints the drops (sockets closed meanwhile, pings unanswered)
and the server's memory per socket.
"""

import asyncio
import json
import os
import resource
import socket
import subprocess
import sys
import time
import uuid
from pathlib import Path

from tests.bench.scratch import scratch_database

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings")
scratch_database()

import django  # noqa: E402

django.setup()

from django.conf import settings  # noqa: E402
from django.core.management import call_command  # noqa: E402
from websockets.asyncio.client import ClientConnection, connect  # noqa: E402
from websockets.exceptions import ConnectionClosed  # noqa: E402

ROOT = Path(__file__).resolve().parents[2]
HOST = "127.0.0.1"


def free_port(start: int = 18400, end: int = 18999) -> int:
    for port in range(start, end):
        with socket.socket() as probe:
            try:
                probe.bind((HOST, port))
            except OSError:
                continue
            return port
    raise RuntimeError("no free port in 18xxx")


def rss_bytes(pid: int) -> int:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) * 1024
    raise RuntimeError("no VmRSS")


def raise_open_files_limit(needed: int) -> int:
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    wanted = hard if hard != resource.RLIM_INFINITY else max(soft, needed)
    if soft < wanted:
        resource.setrlimit(resource.RLIMIT_NOFILE, (wanted, hard))
    return resource.getrlimit(resource.RLIMIT_NOFILE)[0]


def owner_session() -> tuple[str, str]:
    """A user with one production, and a session cookie for them."""
    from django.test import Client

    from tests.factories import UserFactory
    from tests.productions.conftest import make_production

    owner = UserFactory(username=f"idle-sockets-{uuid.uuid4().hex[:12]}")  # reruns on one DB
    production = make_production(owner)
    client = Client()
    client.force_login(owner)
    name = settings.SESSION_COOKIE_NAME
    return f"{name}={client.cookies[name].value}", str(production.pk)


def start_server(port: int, log: Path) -> subprocess.Popen:
    command = [sys.executable, "manage.py", "serve", "--worker", "no", "--quiet"]
    server = subprocess.Popen(
        [*command, "--host", HOST, "--port", str(port)],
        cwd=ROOT,
        stdout=log.open("wb"),
        stderr=subprocess.STDOUT,
        # One owner holds every socket here: the per-user cap (docs/realtime.md) is lifted.
        env={**os.environ, "LMIX_SOCKETS_PER_USER_PER_FRAME": "1000000"},
    )
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        if server.poll() is not None:
            raise RuntimeError(f"the server exited: {log.read_text()[-2000:]}")
        try:
            socket.create_connection((HOST, port), timeout=1).close()
            return server
        except OSError:
            time.sleep(0.2)
    server.kill()
    raise RuntimeError("the server did not start")


async def ping_all(sockets: list[ClientConnection], timeout: float) -> int:
    """Ping every socket; how many answered with a pong in time."""

    async def one(ws: ClientConnection) -> bool:
        try:
            await ws.send(json.dumps({"type": "ping"}))
            async with asyncio.timeout(timeout):
                while json.loads(await ws.recv()).get("type") != "pong":
                    pass
            return True
        except (ConnectionClosed, TimeoutError):
            return False

    return sum(await asyncio.gather(*(one(ws) for ws in sockets)))


async def hold(port: int, pid: int, cookie: str, path: str, count: int, seconds: float) -> None:
    url = f"ws://{HOST}:{port}{path}"
    # The page's own origin, as a browser sends it; websockets answers the server's pings.
    headers = {"Cookie": cookie, "Origin": f"http://{HOST}:{port}"}

    async def open_one() -> ClientConnection:
        ws = await connect(url, additional_headers=headers, ping_interval=None, open_timeout=60)
        ready = json.loads(await asyncio.wait_for(ws.recv(), 60))
        if ready.get("type") != "ready":
            raise ConnectionError(f"no ready frame: {ready}")
        return ws

    await (await open_one()).close()  # the first socket loads the code
    await asyncio.sleep(1)
    before = rss_bytes(pid)

    gate = asyncio.Semaphore(50)

    async def gated() -> ClientConnection:
        async with gate:
            return await open_one()

    started = time.monotonic()
    sockets = await asyncio.gather(*(gated() for _ in range(count)))
    opened = time.monotonic() - started
    after = rss_bytes(pid)
    print(f"opened {count} sockets in {opened:.1f} s; holding them idle for {seconds:.0f} s")

    await asyncio.sleep(seconds)
    closed = [ws.close_code for ws in sockets if ws.close_code is not None]
    answered = await ping_all(sockets, timeout=30)
    unanswered = count - len(closed) - answered
    print(f"closed while idle     {len(closed):>8}   codes {sorted(set(closed)) or '-'}")
    print(f"pings unanswered      {unanswered:>8}")
    print(f"drops                 {len(closed) + unanswered:>8}   (goal 0)")
    print(f"server RSS            {before / 2**20:8.1f} MiB -> {after / 2**20:.1f} MiB")
    print(f"memory per socket     {(after - before) / count / 1024:8.1f} KiB")
    await asyncio.gather(*(ws.close() for ws in sockets))


def main() -> None:
    count = int(os.environ.get("BENCH_SOCKETS", "1000"))
    seconds = float(os.environ.get("BENCH_SECONDS", "60"))
    limit = raise_open_files_limit(count * 2 + 256)
    if limit < count + 64:
        sys.exit(f"open files limit {limit} is too low for {count} sockets")

    call_command("migrate", verbosity=0)
    cookie, production_id = owner_session()
    port = free_port()
    log = Path(settings.DATA_DIR) / f"idle-sockets-{port}.log"
    layer = settings.CHANNEL_LAYERS["default"]["BACKEND"].rsplit(".", 1)[-1]
    database = django.db.connection.vendor
    print(f"{count} idle sockets, {seconds:.0f} s, daphne :{port}; {layer} on {database}")
    server = start_server(port, log)
    try:
        asyncio.run(
            hold(port, server.pid, cookie, f"/ws/productions/{production_id}/", count, seconds)
        )
    finally:
        server.terminate()
        try:
            server.wait(10)
        except subprocess.TimeoutExpired:
            server.kill()
    errors = log.read_text(errors="replace").count("Exception inside application")
    print(f"server errors         {errors:>8}   (log: {log})")


if __name__ == "__main__":
    main()
