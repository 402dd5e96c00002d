"""`make bench`: the knowledge compiler, the turn loop's own overhead, and (tests/bench/live.py)
real processes: pass-through to a websocket and recovery from `kill -9`.

Runs on a scratch database: SQLite in a temporary folder, or, when DATABASE_URL names
PostgreSQL, a fresh `<name>_bench` database beside it (never the configured one), with the
offline narrator unpaced, so what is measured is LMiX's work.
"""

import asyncio
import os
import statistics
import threading
import time

from tests.bench.scratch import scratch_database

os.environ["LMIX_OFFLINE_STREAM_DELAY"] = "0"
os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings")
scratch_database()

import django  # noqa: E402

django.setup()

from django.core.management import call_command  # noqa: E402

from lmix.realtime.publish import flush  # noqa: E402


def timed(fn, repeat: int) -> list[float]:
    samples = []
    for _ in range(repeat):
        start = time.perf_counter()
        fn()
        samples.append(time.perf_counter() - start)
    return samples


def report(label: str, samples: list[float], unit: float = 1e3, suffix: str = "ms") -> None:
    ordered = sorted(samples)
    p95 = ordered[max(0, int(len(ordered) * 0.95) - 1)]
    print(
        f"{label:<44} median {statistics.median(samples) * unit:8.2f} {suffix}"
        f"   p95 {p95 * unit:8.2f} {suffix}   n={len(samples)}"
    )


def main() -> None:
    call_command("migrate", verbosity=0)
    from productions.generation import turn_generate
    from productions.knowledge import knowledge_text
    from productions.selectors import cast_load
    from productions.services import turn_request
    from tests.factories import UserFactory
    from tests.productions.conftest import make_production

    owner = UserFactory()
    production = make_production(owner)
    personas = [member.persona for member in cast_load(production=production)]

    def compile_all() -> None:
        for speaker in personas:
            knowledge_text(
                speaker=speaker,
                cast=personas,
                world=production.world,
                scenario=production.scenario,
            )

    report("compile 3 prompts (cast of 3)", timed(compile_all, 2000), 1e6, "µs")

    listen_to_production(production)
    durations = []
    for _ in range(int(os.environ.get("BENCH_TURNS", "30"))):
        turn = turn_request(production=production)
        start = time.perf_counter()
        turn_generate(turn_id=turn.pk)
        flush()  # every delta handed to the channel layer
        elapsed = time.perf_counter() - start
        durations.append(elapsed)
    report("generate one turn (offline, unpaced)", durations)
    report_delta_cost(production)
    print(f"(database: {django.db.connection.vendor}; layer: {layer_name()})")

    if os.environ.get("BENCH_LIVE", "1") == "1":
        from tests.bench.live import passthrough, worker_death

        passthrough(owner)
        worker_death(owner)

        from tests.bench.sockets import sockets

        sockets(owner)


def listen_to_production(production) -> None:
    """One socket's channel in the production's group, as with a page open: the in-memory
    layer is served by a loop standing in for daphne's."""
    from channels.layers import get_channel_layer

    from lmix.realtime.publish import remember_server_loop
    from productions.events import production_group

    loop = asyncio.new_event_loop()
    threading.Thread(target=loop.run_forever, daemon=True).start()

    async def join() -> None:
        remember_server_loop()
        layer = get_channel_layer()
        await layer.group_add(production_group(production.pk), await layer.new_channel())

    asyncio.run_coroutine_threadsafe(join(), loop).result(10)


def report_delta_cost(production) -> None:
    """LMiX's own cost per delta a provider streams: keeping it, publishing a batch when one
    is due (lmix/realtime/stream.py) and, every 250 ms, checkpointing the text; the wait
    for the outbox to drain is spread over the deltas."""
    from django.utils import timezone

    from lmix.realtime.leases import worker_id
    from productions.generation import StreamWriter
    from productions.models import Turn

    turn = Turn.objects.create(
        production=production,
        speaker_kind="assistant",
        speaker_name="Bench",
        status="streaming",
        lease_owner=worker_id(),
        heartbeat_at=timezone.now(),
        attempts=1,
    )
    writer = StreamWriter(turn)
    samples = []
    begin = time.perf_counter()
    for index in range(5000):
        start = time.perf_counter()
        writer.add(f"word{index} ")
        samples.append(time.perf_counter() - start)
    flush()
    total = time.perf_counter() - begin
    report("cost per provider delta (batch, publish, checkpoint)", samples, 1e6, "µs")
    print(f"{'  with the outbox drained, mean':<44} {total / 5000 * 1e6:8.2f} µs")
    Turn.objects.filter(pk=turn.pk).update(status="stopped")


def layer_name() -> str:
    from channels.layers import get_channel_layer

    return type(get_channel_layer()).__name__


if __name__ == "__main__":
    main()
