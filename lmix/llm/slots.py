"""Each model server's slots, shared by every process: a call waits its turn before it is
sent, so the server never holds more than it serves and its timeouts never run in a queue.

A local model server (llama.cpp, Ollama, KoboldCpp) answers one request, or a few, at a
time; the rest wait in the server's own queue while the client's timeout runs, and a
request that timed out there keeps its slot busy while the client retries behind it. So
LMiX sends an endpoint no more requests at once than it has slots, across every web and
worker process, and lets those waiting go in the order people wait for them (`rank`): a
committed window's outcome first, then narratives, AI seats' acts, soft analyses, and last
the background passes; among equals, the first to ask.

An endpoint's slots (`slots_for`): the model's `concurrency` setting; else what a llama.cpp
server reports (`GET /props`: `total_slots`); else LMIX_LOCAL_MODEL_SLOTS for a server on a
local network (0: not limited); a hosted API is not limited (its own rate limits answer 429,
which the client's retries already wait out).

Shared through the cache's Redis in services mode: per endpoint a sorted set of holders
(score: when the hold lapses; the process's heartbeat renews what it holds, so a killed
process frees its slots within LMIX_LEASE_TIMEOUT_SECONDS) and one of waiters (score: rank,
then arrival; a waiter that stopped asking is dropped), moved in one Lua script. In
embedded mode (one process, no Redis) the same rules run in memory.
"""

import itertools
import json
import logging
import threading
import time
import uuid
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any, Protocol

from django.conf import settings
from django.core.cache import cache

from lmix.realtime.leases import lease_held, on_heartbeat

from .base import LLMCancelled
from .endpoints import looks_local, normalize_endpoint

log = logging.getLogger("lmix.llm")
POLL_SECONDS = 0.1  # how often a waiter asks again
WANTED_EVERY_SECONDS = 1.0  # how often a waiter asks whether its work still wants it
STALE_SECONDS = 5.0  # a waiter silent this long is gone (its process died)
PROPS_TTL_SECONDS = 300.0  # how long a server's reported slots are believed
RANK_DEFAULT = 2

# Who waits for a call, by its purpose: lower goes first.
RANKS = {
    "synthesis.bones": 0,  # a committed window's outcome: every player at the table waits
    "synthesis.guard": 0,  # its second opinion, on the same path
    "synthesis.flesh": 1,  # a waiting player's narrative
    "production.turn": 1,
    "production.impersonate": 1,
    "synthesis.ai_act": 2,
    "synthesis.soft": 3,
    "synthesis.state": 4,
    "synthesis.significance": 4,
    "synthesis.scene": 4,
    "synthesis.epilogue": 4,
}


def rank(purpose: str) -> int:
    return RANKS.get(purpose, RANK_DEFAULT)


@dataclass(frozen=True)
class Ticket:
    """One call's place: at an endpoint, in its rank."""

    endpoint: str
    slots: int
    order: float  # rank, then arrival
    id: str
    about: str  # JSON: purpose, subject, since (the GM's diagnostics)


class Store(Protocol):
    def try_take(self, ticket: Ticket, now: float) -> int:
        """Take a slot if the ticket's turn has come: -1 when taken, else how many calls
        go before it (running or waiting)."""
        ...

    def release(self, ticket: Ticket) -> None: ...

    def renew(self, tickets: list[Ticket], now: float) -> None: ...

    def queue(self, endpoint: str, now: float) -> dict[str, list[dict[str, Any]]]: ...


_TAKE = """
local holders, waiters, seen, about = KEYS[1], KEYS[2], KEYS[3], KEYS[4]
local ticket, slots, now = ARGV[1], tonumber(ARGV[2]), tonumber(ARGV[3])
local hold, order, stale = tonumber(ARGV[4]), tonumber(ARGV[5]), tonumber(ARGV[6])
redis.call('ZREMRANGEBYSCORE', holders, '-inf', now)
for _, gone in ipairs(redis.call('ZRANGEBYSCORE', seen, '-inf', now - stale)) do
  redis.call('ZREM', waiters, gone)
  redis.call('ZREM', seen, gone)
  redis.call('HDEL', about, gone)
end
if redis.call('ZSCORE', holders, ticket) then return -1 end
if redis.call('ZADD', waiters, 'NX', order, ticket) == 1 then
  redis.call('HSET', about, ticket, ARGV[7])
end
redis.call('ZADD', seen, now, ticket)
local busy = redis.call('ZCARD', holders)
local ahead = redis.call('ZRANK', waiters, ticket)
if ahead < slots - busy then
  redis.call('ZREM', waiters, ticket)
  redis.call('ZREM', seen, ticket)
  redis.call('ZADD', holders, now + hold, ticket)
  return -1
end
return busy + ahead
"""


class RedisStore:
    """The slots of every process, in the cache's Redis."""

    def __init__(self, client: Any) -> None:
        self.client = client
        self.take = client.register_script(_TAKE)

    @staticmethod
    def keys(endpoint: str) -> list[str]:
        base = f"lmix:slots:{endpoint}"
        return [f"{base}:holders", f"{base}:waiters", f"{base}:seen", f"{base}:about"]

    def try_take(self, ticket: Ticket, now: float) -> int:
        hold = settings.LMIX_LEASE_TIMEOUT_SECONDS
        args = [ticket.id, ticket.slots, now, hold, ticket.order, STALE_SECONDS, ticket.about]
        return int(self.take(keys=self.keys(ticket.endpoint), args=args))

    def release(self, ticket: Ticket) -> None:
        holders, waiters, seen, about = self.keys(ticket.endpoint)
        pipe = self.client.pipeline()
        for key in (holders, waiters, seen):
            pipe.zrem(key, ticket.id)
        pipe.hdel(about, ticket.id)
        pipe.execute()

    def renew(self, tickets: list[Ticket], now: float) -> None:
        pipe = self.client.pipeline()
        for ticket in tickets:
            lapse = now + settings.LMIX_LEASE_TIMEOUT_SECONDS
            pipe.zadd(self.keys(ticket.endpoint)[0], {ticket.id: lapse}, xx=True)
        pipe.execute()

    def queue(self, endpoint: str, now: float) -> dict[str, list[dict[str, Any]]]:
        holders, waiters, _, about = self.keys(endpoint)
        running = [t.decode() for t in self.client.zrangebyscore(holders, now, "+inf")]
        waiting = [t.decode() for t in self.client.zrange(waiters, 0, -1)]
        found = self.client.hmget(about, running + waiting) if running or waiting else []
        told = [json.loads(x) if x else {} for x in found]
        return {"running": told[: len(running)], "waiting": told[len(running) :]}


class MemoryStore:
    """The same rules in one process (embedded mode, the SQLite suite)."""

    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.holders: dict[str, dict[str, float]] = {}
        self.waiters: dict[str, dict[str, tuple[float, float]]] = {}  # id → (order, seen)
        self.about: dict[str, str] = {}

    def try_take(self, ticket: Ticket, now: float) -> int:
        with self.lock:
            holders = self.holders.setdefault(ticket.endpoint, {})
            waiters = self.waiters.setdefault(ticket.endpoint, {})
            for gone in [t for t, lapse in holders.items() if lapse <= now]:
                del holders[gone]
            for gone in [t for t, (_, seen) in waiters.items() if seen < now - STALE_SECONDS]:
                del waiters[gone]
            if ticket.id in holders:
                return -1
            waiters[ticket.id] = (waiters.get(ticket.id, (ticket.order, 0.0))[0], now)
            self.about[ticket.id] = ticket.about
            ahead = sorted(waiters.items(), key=lambda w: (w[1][0], w[0])).index(
                (ticket.id, waiters[ticket.id])
            )
            if ahead < ticket.slots - len(holders):
                del waiters[ticket.id]
                holders[ticket.id] = now + settings.LMIX_LEASE_TIMEOUT_SECONDS
                return -1
            return len(holders) + ahead

    def release(self, ticket: Ticket) -> None:
        with self.lock:
            self.holders.get(ticket.endpoint, {}).pop(ticket.id, None)
            self.waiters.get(ticket.endpoint, {}).pop(ticket.id, None)
            self.about.pop(ticket.id, None)

    def renew(self, tickets: list[Ticket], now: float) -> None:
        with self.lock:
            for ticket in tickets:
                holders = self.holders.get(ticket.endpoint, {})
                if ticket.id in holders:
                    holders[ticket.id] = now + settings.LMIX_LEASE_TIMEOUT_SECONDS

    def queue(self, endpoint: str, now: float) -> dict[str, list[dict[str, Any]]]:
        with self.lock:
            running = [t for t, lapse in self.holders.get(endpoint, {}).items() if lapse > now]
            waiting = sorted(self.waiters.get(endpoint, {}).items(), key=lambda w: w[1][0])
            return {
                "running": [json.loads(self.about.get(t, "{}")) for t in running],
                "waiting": [json.loads(self.about.get(t, "{}")) for t, _ in waiting],
            }


_memory = MemoryStore()
_redis: RedisStore | None = None
_held: dict[str, Ticket] = {}  # this process's holds, for the heartbeat
_held_lock = threading.Lock()
_arrivals = itertools.count()


def store() -> Store:
    """Redis when the cache is Redis (every process shares it), else this process's."""
    global _redis
    client_of = getattr(getattr(cache, "_cache", None), "get_client", None)
    if client_of is None:
        return _memory
    if _redis is None:
        _redis = RedisStore(client_of(write=True))
    return _redis


_reported: dict[str, tuple[float, int | None]] = {}  # endpoint → (asked at, slots)
_asking = threading.Lock()  # one probe at a time: calls starting together ask once


def slots_for(
    provider: str,
    endpoint: str,
    config: dict[str, Any],
    api_key: Callable[[], str],
    *,
    ask: bool = True,
) -> int:
    """How many calls `endpoint` takes at once; 0: not limited (see the module's docstring).
    Without `ask`, a server that was not asked yet is not asked now (a page being read)."""
    configured = config.get("concurrency")
    if configured:
        return int(configured)
    endpoint = normalize_endpoint(endpoint)
    local = provider in ("openai_compatible", "ollama") and looks_local(endpoint)
    if not local or settings.LMIX_LOCAL_MODEL_SLOTS <= 0:
        return 0
    asked = _reported.get(endpoint)
    if ask and (asked is None or time.monotonic() - asked[0] > PROPS_TTL_SECONDS):
        from .discovery import server_slots  # it probes over the network policy

        with _asking:
            asked = _reported.get(endpoint)
            if asked is None or time.monotonic() - asked[0] > PROPS_TTL_SECONDS:
                found = server_slots(provider, endpoint, api_key())
                asked = _reported[endpoint] = (time.monotonic(), found)
    return (asked[1] if asked else None) or settings.LMIX_LOCAL_MODEL_SLOTS


@contextmanager
def slot_held(
    *,
    endpoint: str,
    slots: int,
    purpose: str,
    subject: str = "",
    waiting: Callable[[int], None] | None = None,
    wanted: Callable[[], bool] | None = None,
) -> Iterator[None]:
    """Hold one of `endpoint`'s `slots` for the block, waiting for it first in `purpose`'s
    rank (`slots` 0: at once). `waiting(ahead)` is told how many calls go before this one
    whenever that changes, and 0 once it is sent.

    Raises:
        LLMCancelled: `wanted()`, asked every second while the call waits, said no (its
            work was done, restarted or undone elsewhere): it leaves the queue unsent.
    """
    if slots <= 0:
        yield
        return
    about = json.dumps({"purpose": purpose, "subject": subject, "since": time.time()})
    arrival = time.time() * 1000 + next(_arrivals) % 1000 / 1000
    ticket = Ticket(
        normalize_endpoint(endpoint), slots, rank(purpose) * 1e14 + arrival, uuid.uuid4().hex, about
    )
    slots_store = store()
    told = None
    asked = time.monotonic()
    try:
        while (ahead := slots_store.try_take(ticket, time.time())) >= 0:
            if waiting is not None and ahead != told:
                waiting(ahead)
            told = ahead
            if wanted is not None and time.monotonic() - asked >= WANTED_EVERY_SECONDS:
                asked = time.monotonic()
                if not wanted():
                    raise LLMCancelled()
            time.sleep(POLL_SECONDS)
        if waiting is not None and told is not None:
            waiting(0)
        with _held_lock:
            _held[ticket.id] = ticket
        with lease_held():  # the heartbeat renews the hold while the call runs
            yield
    finally:
        with _held_lock:
            _held.pop(ticket.id, None)
        try:
            slots_store.release(ticket)
        except Exception:  # its hold lapses by itself
            log.warning("could not give a model slot back", exc_info=True)


@on_heartbeat
def slots_renew(owner: str, now: Any) -> int:
    """The heartbeat's: this process still holds its slots (a killed one's lapse)."""
    with _held_lock:
        tickets = list(_held.values())
    if tickets:
        store().renew(tickets, time.time())
    return 0


def endpoint_queue(endpoint: str) -> dict[str, list[dict[str, Any]]]:
    """What runs on `endpoint` and what waits for it, in order: the GM's diagnostics."""
    return store().queue(normalize_endpoint(endpoint), time.time())
