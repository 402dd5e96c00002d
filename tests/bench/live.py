"""Benchmarks against real processes: stream pass-through to a websocket client, and the
recovery time after `kill -9` of a worker mid-stream.

Run from `python -m tests.bench` (which sets up the scratch database), on SQLite with an
embedded server, or on PostgreSQL + Redis with separate web and worker processes.
"""

import asyncio
import json
import time
from contextlib import ExitStack

import httpx
import websockets
from django.conf import settings
from django.test import Client

from lmix.models import LLMModel
from productions.models import Turn
from tests.fakes.llm_server import FakeLLMServer, Reply
from tests.live_processes import (
    child_env,
    free_port,
    kill_9,
    web_process,
    worker_process,
)
from tests.productions.conftest import make_production

PASS_TOKENS = 500
PASS_RATE = 200  # tokens per second


def _session(owner) -> tuple[str, str]:
    client = Client()
    client.force_login(owner)
    return settings.SESSION_COOKIE_NAME, client.cookies[settings.SESSION_COOKIE_NAME].value


def _services(stack: ExitStack, env: dict[str, str]) -> int:
    """A web process and a worker: separate processes on Redis, one embedded on SQLite."""
    port = free_port()
    separate = bool(settings.REDIS_URL)
    stack.enter_context(web_process(env, port=port, worker=not separate))
    if separate:
        stack.enter_context(worker_process(env))
    return port


async def _watch(
    port: int, cookie: tuple[str, str], production_id, start
) -> list[tuple[float, str]]:
    """Connect a real websocket, start a turn, and time each delta's arrival (a delta may
    hold several of the provider's: lmix/realtime/stream.py)."""
    url = f"ws://127.0.0.1:{port}/ws/productions/{production_id}/"
    headers = {"Cookie": f"{cookie[0]}={cookie[1]}", "Origin": f"http://127.0.0.1:{port}"}
    arrivals: list[tuple[float, str]] = []
    async with websockets.connect(url, additional_headers=headers) as ws:
        assert json.loads(await ws.recv())["type"] == "ready"
        await asyncio.to_thread(start)
        async for raw in ws:
            message = json.loads(raw)
            if message["type"] == "turn.token":
                arrivals.append((time.monotonic(), message["delta"]))
            elif message["type"] in {"turn.done", "turn.failed"}:
                return arrivals
    return arrivals


def _start_turn(port: int, cookie: tuple[str, str], production_id) -> None:
    with httpx.Client(base_url=f"http://127.0.0.1:{port}", cookies=dict([cookie])) as http:
        token = http.get("/api/auth/csrf").json()["csrfToken"]
        response = http.post(
            f"/api/productions/{production_id}/turns", json={}, headers={"X-CSRFToken": token}
        )
        response.raise_for_status()


def passthrough(owner) -> None:
    """A fake streams PASS_TOKENS tokens at PASS_RATE/s; the time from the first to the
    last delta at a real websocket client, divided by the fake's own emission time, and
    how many messages carried them."""
    text = " ".join(f"t{i}" for i in range(PASS_TOKENS))
    with FakeLLMServer() as fake, ExitStack() as stack:
        fake.responder = lambda request: Reply(text=text, chunk_delay=1 / PASS_RATE)
        model = LLMModel.objects.create(
            owner=owner,
            name="Fake (pass-through)",
            provider="openai_compatible",
            api_endpoint=fake.base_url,
            model_id="fake",
        )
        production = make_production(owner, model=model)
        port = _services(stack, child_env(LMIX_LLM_ALLOWED_NETWORKS="127.0.0.0/8"))
        cookie = _session(owner)
        ratios, messages = [], []
        for _ in range(3):
            arrivals = asyncio.run(
                _watch(
                    port, cookie, production.pk, lambda: _start_turn(port, cookie, production.pk)
                )
            )
            first, last = fake.emitted[-1]
            ratios.append((arrivals[-1][0] - arrivals[0][0]) / (last - first))
            messages.append(len(arrivals))
            received = "".join(delta for _, delta in arrivals)
            assert received.split() == text.split(), "the tokens did not all arrive, in order"
        print(
            f"{'pass-through 500 tokens at 200/s':<44} ratio {min(ratios):.3f} best, "
            f"{sorted(ratios)[1]:.3f} median of {len(ratios)} (goal <= 1.1), "
            f"in {sorted(messages)[1]} socket messages"
        )


def worker_death(owner) -> None:
    """`kill -9` of the worker mid-stream; seconds from a new worker's start until the turn
    is done again (default lease settings: the lease must lapse first)."""
    text = " ".join(f"w{i}" for i in range(200))
    with FakeLLMServer() as fake:
        fake.responder = lambda request: Reply(text=text, chunk_delay=1 / PASS_RATE)
        model = LLMModel.objects.create(
            owner=owner,
            name="Fake (worker death)",
            provider="openai_compatible",
            api_endpoint=fake.base_url,
            model_id="fake",
        )
        production = make_production(owner, model=model)
        env = child_env(LMIX_LLM_ALLOWED_NETWORKS="127.0.0.0/8", LMIX_PENDING_REQUEUE_SECONDS="0")
        from productions.services import turn_request

        turn = turn_request(production=production)
        with worker_process(env) as first:
            while not Turn.objects.filter(pk=turn.pk, token_count__gte=20).exists():
                time.sleep(0.02)
            kill_9(first)
        started = time.monotonic()
        with worker_process(env):
            while not Turn.objects.filter(pk=turn.pk, status__in=["done", "failed"]).exists():
                time.sleep(0.05)
        elapsed = time.monotonic() - started
        turn.refresh_from_db()
        assert turn.status == "done" and turn.content == text, turn.error
        print(
            f"{'kill -9 mid-stream: new worker start → done':<44} {elapsed:8.2f} s"
            f"   (lease timeout {settings.LMIX_LEASE_TIMEOUT_SECONDS:g} s, sweep every "
            f"{settings.SWEEP_INTERVAL_SECONDS:g} s, rerun of 200 tokens at 200/s ≈ 1 s)"
        )
