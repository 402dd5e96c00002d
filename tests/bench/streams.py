"""`python -m tests.bench.streams`: outcomes while hundreds of model streams run (issue 24,
§11), on real processes: `serve --worker no`, a short-queue worker and a streams-queue worker
on PostgreSQL + Redis (tests/bench/frames.py's `services`).

The fan-out of tests/bench/frames.py (BENCH_FRAMES × BENCH_SEATS players on real sockets,
one commit per frame per round) runs twice: first with nothing else to do, then while
BENCH_STREAMS (default 200) turns stream on the one streams worker from a fake
OpenAI-compatible server in its own process at BENCH_STREAM_TOKENS_PER_S (default 20), each
longer than the whole run. Prints commit → `outcome.created` on every socket of the frame
for both, the streams worker's memory per concurrent stream, and whether every stream's
text was stored whole and exactly once. Prints, never asserts. Goal: p99 with streams
within 50 ms of p99 without.
"""

import asyncio
import os
import subprocess
import sys
import time
from contextlib import ExitStack
from pathlib import Path

# isort: off
from tests.bench import frames  # first: it sets up the scratch database and Django
from tests.bench.frames import line, percentile, services, tables_create

import httpx  # noqa: E402
from django.conf import settings  # noqa: E402

from lmix.heap import freeze_startup_objects  # noqa: E402
from lmix.models import LLMModel  # noqa: E402
from productions.models import Turn  # noqa: E402
from tests.factories import UserFactory  # noqa: E402
from tests.live_processes import free_port  # noqa: E402
from tests.productions.conftest import make_production  # noqa: E402

# isort: on

STREAMS = int(os.environ.get("BENCH_STREAMS", "200"))
TOKENS_PER_S = float(os.environ.get("BENCH_STREAM_TOKENS_PER_S", "20"))
WORDS = int(os.environ.get("BENCH_STREAM_WORDS", "3000"))  # 150 s at 20 a second
TEXT = " ".join(f"w{i}" for i in range(WORDS))


def rss_mib(pid: int) -> float:
    for row in Path(f"/proc/{pid}/status").read_text().splitlines():
        if row.startswith("VmRSS:"):
            return int(row.split()[1]) / 1024
    return 0.0


def fake_model_process(stack: ExitStack, log: Path) -> tuple[str, int]:
    """The fake model server in a process of its own (its streams' work is not ours, but it
    shares the host's cores: its CPU is printed too). Returns its URL and pid."""
    port = free_port()
    command = [sys.executable, "-m", "tests.fakes.llm_server", "--port", str(port)]
    command += ["--text", TEXT, "--chunk-delay", str(1 / TOKENS_PER_S)]
    child = stack.enter_context(frames.process(command, dict(os.environ), log))
    frames.wait_for_port(child, port, log)
    return f"http://127.0.0.1:{port}/v1", child.pid


def streams_start(port: int, base_url: str) -> list[str]:
    """STREAMS productions, each asking its assistant (on the fake model) for a turn through
    the web process, as a browser would. Returns the turns' ids."""
    owner = UserFactory()
    model = LLMModel.objects.create(
        owner=owner,
        name="Slow fake",
        provider="openai_compatible",
        api_endpoint=base_url,
        model_id="fake-gpt",
        config={"max_tokens": WORDS * 2},
    )
    productions = [make_production(owner, model=model) for _ in range(STREAMS)]
    name, value = frames.session_cookie(owner).split("=", 1)
    with httpx.Client(base_url=f"http://{frames.HOST}:{port}", cookies={name: value}) as http:
        token = http.get("/api/auth/csrf").json()["csrfToken"]
        return [
            http.post(
                f"/api/productions/{production.pk}/turns", json={}, headers={"X-CSRFToken": token}
            ).json()["id"]
            for production in productions
        ]


def wait_until(predicate, timeout: float) -> bool:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if predicate():
            return True
        time.sleep(0.5)
    return False


def report(label: str, run: frames.Run) -> list[float]:
    reached = [s.everywhere - s.sent for s in run.samples if s.everywhere is not None]
    line(f"{label}: outcome on all {frames.SEATS} sockets", reached)
    missed = len(run.samples) - len(reached)
    if missed:
        print(f"  outcomes that missed a socket: {missed}")
    used = ", ".join(f"{name} {seconds / run.measured:.2f}" for name, seconds in run.cpu.items())
    print(f"  {run.measured:.0f} s; CPU cores busy: {used}")
    tokens = [s.first_token - s.own_outcome for s in run.samples if s.first_token is not None]
    line("  first narrative.token after outcome.created", tokens)
    return reached


def main() -> None:
    if not settings.REDIS_URL:
        print("streams vs outcomes: skipped (services mode needs PostgreSQL + Redis)")
        return
    frames.call_command("migrate", verbosity=0)
    frames.raise_open_files_limit(frames.FRAMES * frames.SEATS * 2 + STREAMS * 4 + 512)
    print(
        f"== streams vs outcomes: {STREAMS} turns at {TOKENS_PER_S:g} tokens/s on one streams "
        f"worker while {frames.FRAMES} frames × {frames.SEATS} seats commit"
    )
    tables = tables_create(frames.FRAMES, frames.SEATS)
    log = Path(settings.DATA_DIR) / "bench-streams.log"
    with ExitStack() as stack:
        base_url, fake_pid = fake_model_process(stack, log)
        port, shape, pids = services(stack, log, LMIX_LLM_ALLOWED_NETWORKS="public,loopback")
        print(f"processes: {shape}")
        freeze_startup_objects()
        watched = {**pids, "fake model": fake_pid, "this client": "self"}

        quiet = asyncio.run(frames.live_run(port, tables, watched))
        streams_worker = pids["streams worker"]
        idle = rss_mib(streams_worker)
        ids = streams_start(port, base_url)
        started = wait_until(
            lambda: Turn.objects.filter(pk__in=ids, status="streaming").count() == STREAMS, 120
        )
        busy = rss_mib(streams_worker)
        print(
            f"{STREAMS} streams {'running' if started else 'NOT all running'}; streams worker "
            f"{idle:.0f} MiB idle, {busy:.0f} MiB with them: "
            f"{(busy - idle) * 1024 / STREAMS:.0f} KiB a stream"
        )
        loaded = asyncio.run(frames.live_run(port, tables, watched))
        streaming = Turn.objects.filter(pk__in=ids, status="streaming").count()
        print(f"streams still running when the loaded run ended: {streaming} of {STREAMS}")
        wait_until(
            lambda: (
                not Turn.objects.filter(pk__in=ids, status__in=["pending", "streaming"]).exists()
            ),
            WORDS / TOKENS_PER_S * 2 + 60,
        )

    without = report("no streams", quiet)
    with_streams = report(f"{STREAMS} streams", loaded)
    if without and with_streams:
        gap = (percentile(with_streams, 0.99) - percentile(without, 0.99)) * 1e3
        print(f"p99 with streams − p99 without: {gap:+.1f} ms   (goal <= 50)")
    done = Turn.objects.filter(pk__in=ids)
    whole = sum(1 for turn in done if turn.status == "done" and turn.content == TEXT)
    once = sum(1 for turn in done if turn.attempts == 1)
    print(f"streams stored whole: {whole} of {STREAMS}; run exactly once: {once} of {STREAMS}")
    text = log.read_text(errors="replace")
    print(f"server errors: {text.count('Traceback')}   (log: {log})")


if __name__ == "__main__":
    try:
        main()
    except KeyboardInterrupt:
        sys.exit(130)
    except subprocess.CalledProcessError as error:
        sys.exit(error.returncode)
