"""Model usage per budget key (a frame's, say) over a rolling minute: calls and tokens,
counted in the Django cache, which is Redis in services mode (shared by every web and
worker process) and in-process in embedded mode (where the worker runs in the web
process). Counting costs two cache increments per call and no database query; reading is
one `get_many`. Whoever owns a key decides what its use allows (synthesis/budget.py).

The minute rolls as a sliding-window counter: this minute's bucket plus the part of the
previous one the last 60 seconds still cover. It is an estimate (bursts are assumed
spread evenly over the previous minute), exact enough for a budget, and needs no list of
timestamps. A cache that is down or flushed counts nothing: the budget then admits work
(it fails open) rather than stop a frame."""

import logging
import time
from collections.abc import Callable
from dataclasses import dataclass
from functools import cache as memoized

from django.conf import settings
from django.core.cache import cache
from django.utils.module_loading import import_string

log = logging.getLogger("lmix.llm")
MINUTE = 60
# A bucket outlives the two minutes that read it.
BUCKET_TTL = 3 * MINUTE

# Seconds since the epoch; tests travel in time by replacing it.
clock: Callable[[], float] = time.time


@dataclass(frozen=True)
class Metered:
    """The use of a key over the last minute."""

    calls: int
    tokens: int
    # Seconds until this minute's bucket closes (the previous one then stops counting).
    rolls_in: float


def _bucket_key(key: str, field: str, bucket: int) -> str:
    return f"meter:{key}:{field}:{bucket}"


def meter_add(key: str, *, calls: int = 0, tokens: int = 0) -> None:
    """Count `calls` and `tokens` for `key` now. Never raises: a lost count must not fail
    the model call it counts."""
    bucket = int(clock() // MINUTE)
    try:
        for field, amount in (("calls", calls), ("tokens", tokens)):
            if amount <= 0:
                continue
            name = _bucket_key(key, field, bucket)
            try:
                cache.incr(name, amount)
            except ValueError:  # the minute's first count
                cache.add(name, 0, timeout=BUCKET_TTL)
                cache.incr(name, amount)
    except Exception:
        log.warning("Could not count model usage for %s", key, exc_info=True)


def meter_read(key: str) -> Metered:
    """The key's calls and tokens over the last minute (see the module's docstring)."""
    now = clock()
    bucket = int(now // MINUTE)
    elapsed = now - bucket * MINUTE
    names = {
        (field, age): _bucket_key(key, field, bucket - age)
        for field in ("calls", "tokens")
        for age in (0, 1)
    }
    try:
        found = cache.get_many(list(names.values()))
    except Exception:
        log.warning("Could not read model usage for %s", key, exc_info=True)
        found = {}
    weight = 1 - elapsed / MINUTE

    def used(field: str) -> int:
        current = int(found.get(names[(field, 0)]) or 0)
        previous = int(found.get(names[(field, 1)]) or 0)
        return current + int(previous * weight)

    return Metered(calls=used("calls"), tokens=used("tokens"), rolls_in=MINUTE - elapsed)


@memoized
def _resolver() -> Callable[[str], str | None] | None:
    path = getattr(settings, "LMIX_LLM_BUDGET_KEY", "")
    return import_string(path) if path else None


def budget_key(subject: str) -> str | None:
    """The budget key a call on `subject` counts against (LMIX_LLM_BUDGET_KEY names the
    function that says: synthesis maps a frame's pass or seat to its frame), or None."""
    resolve = _resolver()
    if resolve is None or not subject:
        return None
    try:
        return resolve(subject)
    except Exception:
        log.warning("Could not find the budget of %s", subject[:64], exc_info=True)
        return None
