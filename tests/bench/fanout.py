"""`python -m tests.bench.fanout`: group fan-out of channels_redis's two layers, side by side.

For the core layer (`RedisChannelLayer`) and the pub/sub layer (`RedisPubSubChannelLayer`)
and a group of 1, 10 and 100 channels: a sender layer and a receiver layer (as a worker and
a daphne process would hold them, here on one loop) exchange ~100-byte token events.

- paced: BENCH_PACED events at 200/s (a fast model); the time `group_send` takes the
  sender, and the delay until the last channel of the group has the event;
- burst: BENCH_BURST events sent back to back (as the outbox drains a backlog); events per
  second, deliveries per second, the cost per delivered message, and events lost.

Needs REDIS_URL; uses the host options of the configured layer (settings.CHANNEL_LAYERS).
"""

import asyncio
import json
import os
import statistics
import sys
import time
import uuid
from typing import Any

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings")

import django  # noqa: E402

django.setup()

from channels_redis.core import RedisChannelLayer  # noqa: E402
from channels_redis.pubsub import RedisPubSubChannelLayer  # noqa: E402
from django.conf import settings  # noqa: E402

RATE = 200  # events per second in the paced run
SIZES = [int(n) for n in os.environ.get("BENCH_GROUP_SIZES", "1,10,100").split(",")]
PACED = int(os.environ.get("BENCH_PACED", "400"))
BURST = int(os.environ.get("BENCH_BURST", "2000"))
MEASURE_TIMEOUT = 180.0  # seconds for one row; a healthy row takes under a minute


def event(index: int) -> dict[str, Any]:
    """A streamed delta as productions send it (~100 bytes of JSON)."""
    payload = {
        "type": "turn.token",
        "turn": "3f2b8c1e-5d4a-4f7b-9c2e-1a6d8e0f4b3c",
        "index": index,
        "delta": " and then she said",
    }
    return {"type": "group.event", "payload": payload}


class Receivers:
    """One receiving task per channel, recording when each event index arrived."""

    def __init__(self, layer: Any, channels: list[str]) -> None:
        self.arrivals: dict[int, list[float]] = {}
        self.count = 0
        self.tasks = [asyncio.create_task(self._receive(layer, name)) for name in channels]

    async def _receive(self, layer: Any, channel: str) -> None:
        while True:
            message = await layer.receive(channel)
            self.arrivals.setdefault(message["payload"]["index"], []).append(time.perf_counter())
            self.count += 1

    async def wait_for(self, total: int, timeout: float) -> None:
        deadline = time.perf_counter() + timeout
        while self.count < total and time.perf_counter() < deadline:
            await asyncio.sleep(0.001)

    async def stop(self) -> None:
        for task in self.tasks:
            task.cancel()
        await asyncio.gather(*self.tasks, return_exceptions=True)


def pct(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(len(ordered) * q))] if ordered else float("nan")


async def measure(kind: str, make: Any, size: int) -> dict[str, float]:
    group = f"bench.{uuid.uuid4().hex[:8]}"
    sender, receiver = make(), make()
    channels = [await receiver.new_channel() for _ in range(size)]
    for name in channels:
        await receiver.group_add(group, name)
    receivers = Receivers(receiver, channels)
    await sender.group_send(group, event(-1))  # connect both sides first
    await receivers.wait_for(size, 5)
    receivers.arrivals.clear()
    receivers.count = 0

    # Paced: one event every 5 ms, as a 200 tokens/s model streams.
    sent: dict[int, float] = {}
    send_times = []
    start = time.perf_counter()
    for index in range(PACED):
        await asyncio.sleep(max(0.0, start + index / RATE - time.perf_counter()))
        sent[index] = time.perf_counter()
        await sender.group_send(group, event(index))
        send_times.append(time.perf_counter() - sent[index])
    await receivers.wait_for(PACED * size, 10)
    delays = [
        max(receivers.arrivals[i]) - sent[i]
        for i in sent
        if len(receivers.arrivals.get(i, [])) == size
    ]
    paced_lost = PACED * size - receivers.count

    # Burst: back to back, each send awaited (the outbox's drain loop).
    receivers.arrivals.clear()
    receivers.count = 0
    start = time.perf_counter()
    for index in range(BURST):
        await sender.group_send(group, event(PACED + index))
    sent_in = time.perf_counter() - start
    await receivers.wait_for(BURST * size, 30)
    elapsed = time.perf_counter() - start
    burst_lost = BURST * size - receivers.count

    await receivers.stop()
    for name in channels:
        await receiver.group_discard(group, name)
    await sender.flush()
    await receiver.flush()
    return {
        "send_med": statistics.median(send_times) * 1e3,
        "send_p95": pct(send_times, 0.95) * 1e3,
        "delay_med": statistics.median(delays) * 1e3 if delays else float("nan"),
        "delay_p95": pct(delays, 0.95) * 1e3,
        "events_s": BURST / sent_in,
        "deliveries_s": receivers.count / elapsed,
        "us_per_delivery": elapsed / max(receivers.count, 1) * 1e6,
        "lost": paced_lost + burst_lost,
    }


def layers() -> dict[str, Any]:
    configured = settings.CHANNEL_LAYERS["default"].get("CONFIG", {})
    hosts = configured.get("hosts") or [os.environ["REDIS_URL"]]
    prefix = f"bench{os.getpid()}"
    return {
        "core": lambda: RedisChannelLayer(hosts=hosts, prefix=prefix),
        "pubsub": lambda: RedisPubSubChannelLayer(hosts=hosts, prefix=prefix),
    }


async def run() -> None:
    size_bytes = len(json.dumps(event(123)["payload"]))
    print(
        f"group fan-out, {size_bytes}-byte events; paced {PACED} at {RATE}/s, burst {BURST}"
        f" back to back (sender and receiver on one loop, one core)"
    )
    header = (
        f"{'layer':<7}{'sockets':>8}{'send med':>10}{'send p95':>10}{'deliv med':>11}"
        f"{'deliv p95':>11}{'events/s':>10}{'deliv/s':>10}{'µs/deliv':>10}{'lost':>6}"
    )
    print(header)
    print(f"{'':<15}{'ms':>10}{'ms':>10}{'ms':>11}{'ms':>11}")
    for kind, make in layers().items():
        for size in SIZES:
            try:  # a layer that stops answering must not hang `make bench`
                r = await asyncio.wait_for(measure(kind, make, size), MEASURE_TIMEOUT)
            except TimeoutError:
                print(f"{kind:<7}{size:>8}  no answer within {MEASURE_TIMEOUT:.0f} s: stopped")
                continue
            print(
                f"{kind:<7}{size:>8}{r['send_med']:>10.3f}{r['send_p95']:>10.3f}"
                f"{r['delay_med']:>11.3f}{r['delay_p95']:>11.3f}{r['events_s']:>10.0f}"
                f"{r['deliveries_s']:>10.0f}{r['us_per_delivery']:>10.1f}{r['lost']:>6}"
            )


def main() -> None:
    if not os.environ.get("REDIS_URL"):
        sys.exit("set REDIS_URL: this compares the two Redis channel layers")
    asyncio.run(run())


if __name__ == "__main__":
    main()
