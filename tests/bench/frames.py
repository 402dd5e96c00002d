"""`python -m tests.bench.frames`: the frames engine under a full table of players, on real
processes, and the medium prompt's size as a frame's history grows.

1. Commit → outcome fan-out. BENCH_FRAMES frames (default 25) × BENCH_SEATS seats (default
   8), one player per seat with a real websocket (the `websockets` library, session
   cookies) on `/ws/frames/<id>/`; one daphne process (`manage.py serve --worker no`) and
   one Celery worker (`--pool threads`) on PostgreSQL + Redis, or on SQLite the embedded
   shape (`serve --worker yes`), whose in-memory broker only a worker in the same process
   can read. Offline narrator unpaced, tempo 0 (a commit fires its window at once). After
   one unmeasured round, in each of BENCH_ROUNDS rounds (default 4) one player per frame
   submits, waits for the soft pass, then commits, the frames BENCH_STAGGER_MS apart
   (default 200: 5 commits/s, as if each of 200 players committed every 40 s); the time until
   `outcome.created` reached every socket of the frame, then to the committer's first
   `narrative.token`; the stages in between, from the rows' own timestamps.
2. Where a commit's time goes, in this process (no server): the queries, time and events
   of the commit, the window's firing and the medium pass.
3. Prompt size vs history: the bones and flesh messages of a medium pass after 10, 100 and
   1,000 outcomes (written with the ORM, 5 s apart), compiled without calling a model: their
   tokens, and the queries of `gather`.

Runs on a scratch database (tests/bench/scratch.py). Prints, never asserts. Goals: fan-out
p99 <= 50 ms, first token p99 <= 20 ms, prompt tokens flat and within the budget.
"""

import asyncio
import gc
import json
import math
import os
import resource
import signal
import socket
import ssl
import statistics
import subprocess
import sys
import time
import uuid
from collections import Counter
from collections.abc import Callable, Iterator
from contextlib import ExitStack, contextmanager
from dataclasses import dataclass, field
from datetime import timedelta
from pathlib import Path
from typing import Any
from unittest import mock

from tests.bench.scratch import scratch_database

os.environ["LMIX_OFFLINE_STREAM_DELAY"] = "0"
os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings")
scratch_database()

import django  # noqa: E402

django.setup()

import httpx  # noqa: E402
from django.conf import settings  # noqa: E402
from django.contrib.auth import get_user_model  # noqa: E402
from django.core.management import call_command  # noqa: E402
from django.db import connection, transaction  # noqa: E402
from django.test import Client  # noqa: E402
from django.test.utils import CaptureQueriesContext  # noqa: E402
from django.utils import timezone  # noqa: E402
from websockets.asyncio.client import ClientConnection, connect  # noqa: E402
from websockets.exceptions import ConnectionClosed  # noqa: E402

from lmix.heap import freeze_startup_objects  # noqa: E402
from lmix.llm.tokens import count_message_tokens  # noqa: E402
from lmix.models import LLMModel  # noqa: E402
from productions.services import production_create  # noqa: E402
from synthesis.frames import frame_create, frame_join  # noqa: E402
from synthesis.models import Frame, Seat  # noqa: E402
from tests.factories import (  # noqa: E402
    AssistantFactory,
    ScenarioFactory,
    WorldFactory,
)
from tests.live_processes import ROOT, child_env, free_port  # noqa: E402

HOST = "127.0.0.1"
FRAMES = int(os.environ.get("BENCH_FRAMES", "25"))
SEATS = int(os.environ.get("BENCH_SEATS", "8"))
ROUNDS = int(os.environ.get("BENCH_ROUNDS", "4"))
STAGGER = float(os.environ.get("BENCH_STAGGER_MS", "200")) / 1e3
THREADS = int(os.environ.get("BENCH_WORKER_THREADS", "4"))
STREAM_THREADS = int(os.environ.get("BENCH_STREAM_THREADS", "256"))
HISTORY = [int(n) for n in os.environ.get("BENCH_HISTORY", "10,100,1000").split(",")]
LIVE_SECONDS = float(os.environ.get("BENCH_LIVE_SECONDS", "150"))  # the whole live part
WAIT = 30.0  # one event, at most
INTENTION = "I cross the room, open the shutters and look down into the street."


# --- figures ----------------------------------------------------------------------------


def percentile(samples: list[float], share: float) -> float:
    ordered = sorted(samples)
    return ordered[max(0, math.ceil(share * len(ordered)) - 1)]


def line(label: str, samples: list[float], goal: str = "") -> None:
    if not samples:
        print(f"{label:<46} no samples")
        return
    p50, p99 = statistics.median(samples) * 1e3, percentile(samples, 0.99) * 1e3
    print(f"{label:<46} p50 {p50:8.1f} ms   p99 {p99:8.1f} ms   n={len(samples)}{goal}")


# --- data -------------------------------------------------------------------------------


def quick_user(prefix: str):
    """A user with an unusable password (sessions come from force_login): the factory's
    hashing would take ~0.3 s a user, longer than the benchmark for 200 players."""
    username = f"{prefix}-{uuid.uuid4().hex[:10]}"
    return get_user_model().objects.create(username=username, password="!")


def session_cookie(user) -> str:
    client = Client()
    client.force_login(user)
    name = settings.SESSION_COOKIE_NAME
    return f"{name}={client.cookies[name].value}"


@dataclass
class Player:
    user_id: int
    seat_id: str
    cookie: str


@dataclass
class Table:
    frame_id: str
    players: list[Player]


def table_create(gm, *, seats: int, join: bool = True, **options) -> tuple[Frame, list]:
    """A frame of a new production whose cast is `seats` personas, every seat open, and
    (with `join`) a new user seated in each. Returns the frame and the users, by position."""
    model = LLMModel.objects.get(owner=gm, provider="offline")
    assistants = [AssistantFactory(owner=gm, model=model) for _ in range(seats)]
    production = production_create(
        owner=gm,
        name="Bench",
        world=WorldFactory(owner=gm),
        scenario=ScenarioFactory(owner=gm),
        assistants=assistants,
    )
    frame = frame_create(
        production=production,
        name="Scene",
        tempo=0,
        open_seats=[a.persona_id for a in assistants],
        **options,
    )
    users = []
    for seat in frame.seats.order_by("position") if join else []:
        user = quick_user("player")
        frame_join(user=user, invite_code=frame.invite_code, seat_id=seat.pk)
        users.append(user)
    return frame, users


@transaction.atomic  # one commit, not thousands: SQLite syncs each to disk
def tables_create(frames: int, seats: int) -> list[Table]:
    gm = quick_user("gm")
    tables = []
    for _ in range(frames):
        frame, users = table_create(gm, seats=seats)
        by_user = {s.user_id: str(s.pk) for s in frame.seats.all()}
        players = [Player(u.pk, by_user[u.pk], session_cookie(u)) for u in users]
        tables.append(Table(str(frame.pk), players))
    return tables


# --- processes --------------------------------------------------------------------------


def raise_open_files_limit(needed: int) -> int:
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    wanted = hard if hard != resource.RLIM_INFINITY else max(soft, needed)
    if soft < wanted:
        resource.setrlimit(resource.RLIMIT_NOFILE, (wanted, hard))
    return resource.getrlimit(resource.RLIMIT_NOFILE)[0]


@contextmanager
def process(command: list[str], env: dict[str, str], log: Path) -> Iterator[subprocess.Popen]:
    """A child process logging to `log`; stopped (then killed) when the block exits, also
    on Ctrl-C."""
    with log.open("ab") as out:
        child = subprocess.Popen(command, cwd=ROOT, env=env, stdout=out, stderr=subprocess.STDOUT)
    try:
        yield child
    finally:
        if child.poll() is None:
            child.terminate()
        try:
            child.wait(10)
        except subprocess.TimeoutExpired:
            child.kill()
            child.wait(10)


def wait_for_port(child: subprocess.Popen, port: int, log: Path) -> None:
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        if child.poll() is not None:
            raise RuntimeError(f"the web process exited: {log.read_text()[-2000:]}")
        try:
            socket.create_connection((HOST, port), timeout=1).close()
            return
        except OSError:
            time.sleep(0.1)
    raise RuntimeError("the web process did not start")


def cpu_seconds(pid: int | str = "self") -> float:
    """User + system CPU time a process has used so far."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def services(stack: ExitStack, log: Path, **env_overrides: str) -> tuple[int, str, dict[str, int]]:
    """One web process and the two workers (short and streams queues): separate on Redis; on
    SQLite one embedded process, as the in-memory broker cannot be shared between processes.
    Returns the port, what runs, and their pids."""
    env = child_env(LOG_LEVEL="WARNING", **env_overrides)
    port = free_port()
    separate = bool(settings.REDIS_URL)
    web = [sys.executable, "manage.py", "serve", "--host", HOST, "--port", str(port), "--quiet"]
    web += ["--worker", "no" if separate else "yes"]
    child = stack.enter_context(process(web, env, log))
    wait_for_port(child, port, log)
    if not separate:
        shape = "embedded: `serve --worker yes` (daphne + both workers' threads, memory broker)"
        return port, shape, {"web + worker": child.pid}
    pids = {"web": child.pid}
    for queue, threads in [("short", THREADS), ("streams", STREAM_THREADS)]:
        # As docker-compose.yml runs them: the streams worker niced (docs/tasks.md).
        nice = ["nice", "-n", "10"] if queue == "streams" else []
        worker = [*nice, sys.executable, "-m", "celery", "-A", "config", "worker"]
        worker += ["--pool", "threads", "--queues", queue, "--hostname", f"{queue}@bench"]
        worker += ["--concurrency", str(threads), "--loglevel", "WARNING"]
        worker += ["--without-mingle", "--without-gossip"]
        pids[f"{queue} worker"] = stack.enter_context(process(worker, env, log)).pid
    shape = (
        "`serve --worker no` + `celery worker --pool threads`: short queue "
        f"{THREADS} threads, streams queue {STREAM_THREADS} (niced)"
    )
    return port, shape, pids


# --- the live part ----------------------------------------------------------------------


class Listener:
    """One player's socket: stamps (wall clock) the events the benchmark looks at."""

    def __init__(self, ws: ClientConnection) -> None:
        self.ws = ws
        self.outcomes: list[tuple[float, str]] = []  # (arrival, the outcome's seat)
        self.first_tokens: list[float] = []  # arrival of each narrative's delta 0
        self.done = 0
        self.analyzed: set[str] = set()
        self.received = 0  # every frame the server sent
        self.task = asyncio.create_task(self._read())

    async def _read(self) -> None:
        try:
            async for raw in self.ws:
                now = time.time()
                self.received += 1
                head = raw[:32]  # events are `{"type": ...` first: no parsing for most
                if head.startswith('{"type": "narrative.token"'):
                    if '"index": 0,' in raw:
                        self.first_tokens.append(now)
                elif head.startswith('{"type": "outcome.created"'):
                    self.outcomes.append((now, json.loads(raw)["outcome"]["seat"]))
                elif head.startswith('{"type": "narrative.done"'):
                    self.done += 1
                elif head.startswith('{"type": "liquid.analyzed"'):
                    self.analyzed.add(json.loads(raw)["liquid"]["id"])
        except ConnectionClosed:
            pass


async def until(predicate: Callable[[], Any], timeout: float = WAIT) -> Any:
    """The predicate's value once truthy (polled; arrivals are stamped by the readers), or
    None after `timeout`."""
    deadline = time.monotonic() + timeout
    while not (value := predicate()):
        if time.monotonic() > deadline:
            return None
        await asyncio.sleep(0.005)
    return value


@dataclass
class Sample:
    liquid_id: str
    sent: float
    returned: float
    everywhere: float | None = None  # outcome.created on the frame's last socket
    own_outcome: float | None = None  # … on the committer's socket
    first_token: float | None = None


@dataclass
class Live:
    port: int
    listeners: dict[str, Listener] = field(default_factory=dict)  # seat id → socket
    clients: dict[int, tuple[httpx.AsyncClient, str]] = field(default_factory=dict)
    tls: ssl.SSLContext = field(default_factory=ssl.create_default_context)

    async def open(self, tables: list[Table]) -> float:
        url = f"ws://{HOST}:{self.port}/ws/frames"
        gate = asyncio.Semaphore(50)

        async def one(table: Table, player: Player) -> None:
            headers = {"Cookie": player.cookie, "Origin": f"http://{HOST}:{self.port}"}
            async with gate:
                ws = await connect(
                    f"{url}/{table.frame_id}/",
                    additional_headers=headers,
                    ping_interval=None,
                    open_timeout=60,
                )
                ready = json.loads(await asyncio.wait_for(ws.recv(), 60))
            if ready.get("type") != "ready":
                raise ConnectionError(f"no ready frame: {ready}")
            self.listeners[player.seat_id] = Listener(ws)
            await self.client(player)  # now, not in a measured round: a client costs CPU

        started = time.monotonic()
        await asyncio.gather(*(one(t, p) for t in tables for p in t.players))
        return time.monotonic() - started

    async def close(self) -> None:
        await asyncio.gather(*(x.ws.close() for x in self.listeners.values()))
        await asyncio.gather(*(c.aclose() for c, _ in self.clients.values()))

    async def client(self, player: Player) -> tuple[httpx.AsyncClient, str]:
        if player.user_id not in self.clients:
            name, value = player.cookie.split("=", 1)
            http = httpx.AsyncClient(
                base_url=f"http://{HOST}:{self.port}",
                cookies={name: value},
                timeout=WAIT,
                verify=self.tls,  # plain HTTP: one context shared, not one built per client
            )
            token = (await http.get("/api/auth/csrf")).json()["csrfToken"]
            self.clients[player.user_id] = (http, token)
        return self.clients[player.user_id]

    async def submit(self, table: Table, player: Player) -> str:
        http, token = await self.client(player)
        response = await http.post(
            f"/api/frames/{table.frame_id}/liquid",
            json={"seat": player.seat_id, "content": INTENTION},
            headers={"X-CSRFToken": token},
        )
        response.raise_for_status()
        return response.json()["id"]

    async def commit(self, table: Table, player: Player, liquid_id: str, delay: float) -> Sample:
        await asyncio.sleep(delay)
        http, token = await self.client(player)
        sockets = [self.listeners[p.seat_id] for p in table.players]
        mine = self.listeners[player.seat_id]
        marks = [len(s.outcomes) for s in sockets]
        token_mark, done_mark = len(mine.first_tokens), mine.done
        sent = time.time()
        response = await http.post(
            f"/api/liquid/{liquid_id}/commit", headers={"X-CSRFToken": token}
        )
        sample = Sample(liquid_id, sent, time.time())
        response.raise_for_status()

        def arrivals() -> list[float] | None:
            found = []
            for listener, mark in zip(sockets, marks, strict=True):
                hits = [t for t, seat in listener.outcomes[mark:] if seat == player.seat_id]
                if not hits:
                    return None
                found.append(hits[0])
            return found

        arrived = await until(arrivals)
        if arrived is not None:
            sample.everywhere = max(arrived)
            sample.own_outcome = arrived[table.players.index(player)]
            first = await until(lambda: mine.first_tokens[token_mark:])
            sample.first_token = first[0] if first else None
        await until(lambda: mine.done > done_mark)
        return sample

    async def round(self, tables: list[Table], index: int) -> list[Sample]:
        """One player per frame (the next seat each round) submits, waits for the soft pass,
        and commits, the frames STAGGER apart."""
        turn = [(t, t.players[index % len(t.players)]) for t in tables]
        liquids = await asyncio.gather(*(self.submit(t, p) for t, p in turn))
        pairs = list(zip(turn, liquids, strict=True))
        await until(lambda: all(lq in self.listeners[p.seat_id].analyzed for (_, p), lq in pairs))
        return list(
            await asyncio.gather(
                *(self.commit(t, p, lq, delay=i * STAGGER) for i, ((t, p), lq) in enumerate(pairs))
            )
        )


@dataclass
class Run:
    samples: list[Sample]
    warm: float  # seconds of the warm-up round
    measured: float  # seconds of the measured rounds
    cpu: dict[str, float]  # CPU seconds each process used in them
    delivered: int  # websocket messages the sockets received in them


async def live_run(port: int, tables: list[Table], pids: dict[str, int | str]) -> Run:
    live = Live(port)
    try:
        opened = await live.open(tables)
        print(f"{len(live.listeners)} sockets ready in {opened:.1f} s")
        started = time.monotonic()
        await live.round(tables, 0)  # warms every process, thread and connection
        warm = time.monotonic() - started
        samples: list[Sample] = []
        cpu = {name: cpu_seconds(pid) for name, pid in pids.items()}
        received = sum(x.received for x in live.listeners.values())
        started = time.monotonic()
        # This client stands in for 200 browsers: its own collections (up to 22 ms full,
        # 15 ms middle, with 200 sockets open) would delay the arrivals it stamps, so it
        # collects between rounds, when nothing is in flight.
        gc.disable()
        try:
            for index in range(1, ROUNDS + 1):
                samples += await live.round(tables, index)
                gc.collect()
        finally:
            gc.enable()
        measured = time.monotonic() - started
        cpu = {name: cpu_seconds(pid) - cpu[name] for name, pid in pids.items()}
        received = sum(x.received for x in live.listeners.values()) - received
        return Run(samples, warm, measured, cpu, received)
    finally:
        await live.close()


def stages(samples: list[Sample]) -> dict[str, list[float]]:
    """Each commit's path, from the timestamps its rows got in the processes that wrote
    them (one machine, one clock): liquid committed, medium pass created (in the same
    transaction at tempo 0), claimed by the worker, bones call started (its LLMCall row),
    outcome stored, on every socket."""
    from lmix.models import LLMCall
    from synthesis.models import Liquid, Outcome, Pass

    out: dict[str, list[float]] = {
        "POST sent → liquid committed": [],
        "→ medium pass created (its window born firing)": [],
        "→ pass claim sent by the worker (commit, enqueue, Celery hop)": [],
        "→ bones call started (claim and read, gather, compile, record)": [],
        "→ outcome stored (offline call, store)": [],
        "→ on every socket (commit, outbox, layer)": [],
    }
    for sample in samples:
        liquid = Liquid.objects.get(pk=sample.liquid_id)
        pass_ = Pass.objects.filter(window_id=liquid.window_id, kind="medium").first()
        outcome = Outcome.objects.filter(source_pass=pass_).first() if pass_ else None
        call = (
            LLMCall.objects.filter(subject=f"pass:{pass_.pk}", purpose="synthesis.bones")
            .order_by("created_at")
            .first()
            if pass_
            else None
        )
        if not (outcome and call and sample.everywhere and pass_.heartbeat_at):
            continue
        marks = [
            sample.sent,
            liquid.committed_at.timestamp(),
            pass_.created_at.timestamp(),
            pass_.heartbeat_at.timestamp(),  # set as the claim is sent; not renewed this soon
            call.created_at.timestamp(),
            outcome.created_at.timestamp(),
            sample.everywhere,
        ]
        for values, a, b in zip(out.values(), marks, marks[1:], strict=False):
            values.append(b - a)
    return out


def host_speed() -> float:
    """Milliseconds this host takes for a fixed pure-Python workload: the same code gives
    other figures on a slower or busier host (shared machines drift by a third and more
    within an hour), so runs are compared with this beside them."""
    started = time.perf_counter()
    total = 0
    for i in range(2_000_000):
        total += i % 7
    return (time.perf_counter() - started) * 1e3


def fan_out() -> None:
    sockets = FRAMES * SEATS
    limit = raise_open_files_limit(sockets * 2 + 512)
    if limit < sockets + 128:
        sys.exit(f"open files limit {limit} is too low for {sockets} sockets")
    started = time.monotonic()
    tables = tables_create(FRAMES, SEATS)
    print(f"{FRAMES} frames × {SEATS} seats created in {time.monotonic() - started:.1f} s")
    log = Path(settings.DATA_DIR) / "bench-frames.log"
    load = os.getloadavg()[0]
    speed = host_speed()
    with ExitStack() as stack:
        port, shape, pids = services(stack, log)
        print(f"processes: {shape}")
        freeze_startup_objects()  # this client's own full collections stay out of the figures
        try:
            run = asyncio.run(
                asyncio.wait_for(
                    live_run(port, tables, {**pids, "this client": "self"}), LIVE_SECONDS
                )
            )
        except TimeoutError:
            print(f"the live part was stopped after {LIVE_SECONDS:.0f} s (BENCH_LIVE_SECONDS)")
            return
    samples = run.samples
    print(
        f"warm-up round {run.warm:.1f} s; {ROUNDS} rounds of {FRAMES} commits "
        f"{STAGGER * 1e3:.0f} ms apart ({1 / STAGGER:.1f}/s) in {run.measured:.1f} s"
    )
    used = ", ".join(
        f"{name} {seconds / run.measured:.2f} ({seconds / len(samples) * 1e3:.0f} ms a commit)"
        for name, seconds in run.cpu.items()
    )
    print(f"CPU cores busy: {used}; load average before: {load:.2f} on {os.cpu_count()} cores")
    print(
        f"host speed: a fixed pure-Python workload took {speed:.0f} ms before the run, "
        f"{host_speed():.0f} ms after (lower is faster)"
    )
    print(
        f"messages the sockets received: {run.delivered / len(samples):.0f} a commit "
        "(its liquid, window, outcome and narrative events)"
    )
    reached = [s for s in samples if s.everywhere is not None]
    line("commit POST round trip", [s.returned - s.sent for s in samples])
    line(
        f"outcome on all {SEATS} sockets, from POST sent",
        [s.everywhere - s.sent for s in reached],
        "   (goal p99 <= 50)",
    )
    line("  … from the POST's response", [s.everywhere - s.returned for s in reached])
    tokens = [s.first_token - s.own_outcome for s in reached if s.first_token is not None]
    line("first narrative.token after outcome.created", tokens, "   (goal p99 <= 20)")
    print(
        "  (the committer's socket; the offline narrator's first token is instant, so this "
        "is LMiX's own\n   time from the outcome to a provider's first token reaching the "
        "owner: narrative row,\n   flesh prompt, recorded messages, publish)"
    )
    lost = len(samples) - len(reached)
    print(f"outcomes that missed a socket within {WAIT:.0f} s: {lost}")
    print("where a commit's time went (the rows' timestamps):")
    for name, values in stages(samples).items():
        line(f"  {name}", values)
    text = log.read_text(errors="replace")
    errors = text.count("Traceback") + text.count("Exception inside application")
    print(f"server errors: {errors}   (log: {log})")


# --- one commit in this process ---------------------------------------------------------


@contextmanager
def counted(events: Counter) -> Iterator[CaptureQueriesContext]:
    """Queries made, and events published (by type; not sent anywhere)."""

    def put(group: str, message: dict) -> None:
        events[message.get("payload", {}).get("type", message["type"])] += 1

    with mock.patch("lmix.realtime.publish._put", put), CaptureQueriesContext(connection) as q:
        yield q


def one_commit_profile(runs: int = 7) -> None:
    """A commit's two steps run here, each on its own: their queries, events and time
    (no server: tasks are caught instead of enqueued, events counted instead of sent), and
    how many of the medium pass's queries come before its outcome is published. The
    first run warms caches up; the median of the others is printed."""
    from synthesis import medium
    from synthesis.liquid import liquid_commit, liquid_submit
    from synthesis.models import Pass

    gm = quick_user("gm")
    frame, users = table_create(gm, seats=SEATS)
    seat = Seat.objects.get(frame=frame, position=0)
    names = ["liquid_commit (the POST)", "medium_pass_run", "medium_flesh_run"]
    times: dict[str, list[float]] = {name: [] for name in names}
    queries: dict[str, int] = {}
    published: dict[str, Counter] = {}
    before_outcome: list[int] = []
    real_notify = medium.bones.notify_outcome

    @contextmanager
    def step(name: str) -> Iterator[CaptureQueriesContext]:
        published[name] = Counter()
        with counted(published[name]) as q:
            start = time.perf_counter()
            yield q
            times[name].append(time.perf_counter() - start)
        queries[name] = len(q)

    for _ in range(runs):
        with mock.patch("synthesis.tasks.soft_pass_task.delay"):
            liquid = liquid_submit(frame=frame, seat=seat, content=INTENTION, user=users[0])
        with mock.patch("synthesis.tasks.medium_pass_task.delay") as delay, step(names[0]):
            liquid_commit(liquid=liquid, user=users[0])
        pass_id = delay.call_args.args[0]
        with step(names[1]) as q:

            def notify_outcome(outcome, q=q, **audiences) -> None:
                before_outcome.append(len(q))
                real_notify(outcome, **audiences)

            with (
                mock.patch.object(medium.bones, "notify_outcome", notify_outcome),
                mock.patch("synthesis.tasks.flesh_task.delay"),
            ):
                medium.medium_pass_run(pass_id=pass_id)
        with step(names[2]):
            medium.medium_flesh_run(pass_id=pass_id)
        assert Pass.objects.get(pk=pass_id).status == "done"
    print(f"one commit's steps in this process (a frame of {SEATS} seated players, tempo 0):")
    for name in names:
        events = ", ".join(f"{k} {v}" for k, v in sorted(published[name].items()))
        median = statistics.median(times[name][1:]) * 1e3
        print(f"  {name:<28} {queries[name]:4d} queries {median:8.1f} ms   {events}")
    print(f"  queries before the outcome is published: {before_outcome[-1]}")


# --- prompt size vs history -------------------------------------------------------------

NARRATIVE = " ".join(["The rain keeps on against the glass while the others talk."] * 8)


@contextmanager
def pass_for(frame: Frame, seat: Seat, *, at) -> Iterator:
    """A medium pass of `seat` with one intention committed `at`, in its firing window;
    deleted again afterwards (a seat has one live window)."""
    from synthesis.models import Liquid, Pass, Trigger, Window

    window = Window.objects.create(
        frame=frame, seat=seat, status="firing", expires_at=at, trigger=Trigger.COMMIT
    )
    liquid = Liquid.objects.create(
        frame=frame, seat=seat, content=INTENTION, status="committed", committed_at=at
    )
    Liquid.objects.filter(pk=liquid.pk).update(window=window)
    pass_ = Pass.objects.create(
        frame=frame, seat=seat, kind="medium", trigger=Trigger.COMMIT, window=window
    )
    try:
        yield pass_
    finally:
        Liquid.objects.filter(pk=liquid.pk).delete()
        Window.objects.filter(pk=window.pk).delete()  # and its pass


def history_add(frame: Frame, seats: list[Seat], start: int, stop: int, t0) -> None:
    """Outcomes start+1…stop, one every 5 s from t0, acted in turn by every seat but the
    last (which stays silent); each acting seat's narrative of its outcome, 1 s later."""
    from synthesis.models import Narrative, Outcome, Trigger

    actors = seats[:-1]
    witnesses = [str(s.pk) for s in seats]
    outcomes, narratives = [], []
    for seq in range(start + 1, stop + 1):
        actor = actors[seq % len(actors)]
        outcome = Outcome(
            frame=frame,
            seq=seq,
            seat=actor,
            actions_resolved=[
                {"seat": str(actor.pk), "action": f"{INTENTION} ({seq})", "result": "success"}
            ],
            world_facts=[f"The shutters of window {seq} stand open."],
            witnesses=witnesses,
        )
        outcomes.append(outcome)
        narratives.append(
            Narrative(
                frame=frame,
                seat=actor,
                text=NARRATIVE,
                outcome_ids=[str(outcome.pk)],
                trigger=Trigger.COMMIT,
                status="done",
            )
        )
    Outcome.objects.bulk_create(outcomes)
    Narrative.objects.bulk_create(narratives)
    for outcome, narrative in zip(outcomes, narratives, strict=True):
        outcome.created_at = t0 + timedelta(seconds=5 * outcome.seq)
        narrative.created_at = outcome.created_at + timedelta(seconds=1)
    Outcome.objects.bulk_update(outcomes, ["created_at"])  # auto_now_add set them to now
    Narrative.objects.bulk_update(narratives, ["created_at"])
    Frame.objects.filter(pk=frame.pk).update(seq=stop)


def prompt_sizes() -> None:
    from lmix.llm.tokens import context_window
    from synthesis.medium import compile_bones, compile_flesh, gather
    from synthesis.medium.prompts import BONES_REPLY_TOKENS, reply_cap
    from synthesis.models import Outcome

    gm = quick_user("gm")
    frame, _ = table_create(gm, seats=SEATS, join=False)
    seats = list(frame.seats.order_by("position"))
    actors = seats[:-1]
    model = LLMModel.objects.get(owner=gm, provider="offline")
    window = context_window(model.model_id)
    t0 = timezone.now() - timedelta(seconds=5 * (max(HISTORY) + 1))
    print(
        f"medium prompt tokens vs history ({SEATS} seats, one outcome every 5 s; budget: "
        f"bones {window - BONES_REPLY_TOKENS}, flesh {window} minus the reply):\n"
        f"  acting: the seat whose turn is next (it narrated {len(actors) - 1} outcomes ago); "
        "silent: a seat that never narrated"
    )
    print(
        f"  {'outcomes':>8} {'seat':<7} {'bones':>6} {'flesh':>6} {'in ctx':>6} "
        f"{'gather queries':>14} {'gather ms':>9} {'compile ms':>10}"
    )
    written, pscale = 0, None
    for size in HISTORY:
        history_add(frame, seats, written, size, t0)
        written = size
        now = t0 + timedelta(seconds=5 * size + 2)  # just after the newest outcome
        for label, seat in (("acting", actors[(size + 1) % len(actors)]), ("silent", seats[-1])):
            with pass_for(frame, seat, at=now) as pass_:
                times = []
                for _ in range(3):  # the median: the first read after a bulk write is slow
                    with CaptureQueriesContext(connection) as q:
                        start = time.perf_counter()
                        ctx = gather(pass_)
                        times.append(time.perf_counter() - start)
                gathered = statistics.median(times)
                start = time.perf_counter()
                bones = compile_bones(ctx, model)
                outcome = Outcome(
                    frame=frame,
                    seq=ctx.horizon + 1,
                    seat=ctx.seat,
                    actions_resolved=[
                        {"seat": str(ctx.seat.pk), "action": INTENTION, "result": "success"}
                    ],
                    world_facts=["The street below is empty."],
                    liquid_ids=[str(x.pk) for x in ctx.own],
                )
                flesh = compile_flesh(ctx, outcome, model)
                compiled = time.perf_counter() - start
            pscale = ctx.pscale
            print(
                f"  {size:>8} {label:<7} {count_message_tokens(bones):>6} "
                f"{count_message_tokens(flesh):>6} {len(ctx.outcomes):>6} {len(q):>14} "
                f"{gathered * 1e3:>9.1f} {compiled * 1e3:>10.1f}"
            )
    print(f"  (the flesh reply is capped at {reply_cap(pscale)} tokens at pscale {pscale})")


def main() -> None:
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(143))  # children stopped on the way out
    call_command("migrate", verbosity=0)
    layer = settings.CHANNEL_LAYERS["default"]["BACKEND"].rsplit(".", 1)[-1]
    print(f"== frames: {connection.vendor}, {layer}, offline narrator unpaced, tempo 0")
    fan_out()
    one_commit_profile()
    prompt_sizes()


if __name__ == "__main__":
    try:
        main()
    except KeyboardInterrupt:  # the processes were stopped on the way out
        sys.exit(130)
