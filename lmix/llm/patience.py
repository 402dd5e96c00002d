"""How long a model call may take and how often it is tried again: retries and paced streams."""

import queue
import random
import threading
import time
from collections import Counter
from collections.abc import Callable, Iterator

from django.conf import settings
from django.db import connection

from .base import LLMEmptyAnswer, LLMError, LLMRateLimited, LLMTimeout, LLMUnavailable
from .failures import failed

# The first wait before trying again a failed call; it doubles each time, up to the cap.
BACKOFF_SECONDS = 0.5
BACKOFF_CAP_SECONDS = 8.0


class Retries:
    """One call's retry budget. A server that is busy or failing (429, 5xx, a dropped
    connection) gets LLM_MAX_RETRIES more tries; one that timed out or answered nothing gets
    one: a hung server must not hold a turn for minutes, and an empty answer (a prompt over
    the model's context) mostly stays empty."""

    def __init__(self) -> None:
        self.used: Counter[str] = Counter()

    def again(self, error: LLMError) -> bool:
        """Whether to try again after `error`; waits the backoff first when it says yes."""
        if isinstance(error, LLMTimeout | LLMEmptyAnswer):
            allowed, wait = 1, 0.0
        elif isinstance(error, LLMRateLimited | LLMUnavailable):
            allowed = settings.LLM_MAX_RETRIES
            told = getattr(error, "retry_after", None)
            backoff = min(BACKOFF_CAP_SECONDS, BACKOFF_SECONDS * 2 ** self.used[error.reason])
            wait = told if told is not None else backoff * random.uniform(0.75, 1.0)  # noqa: S311
        else:
            return False
        if self.used[error.reason] >= allowed:
            return False
        self.used[error.reason] += 1
        if wait:
            time.sleep(wait)
        return True


def paced(
    open_stream: Callable[[], Iterator[str]],
    *,
    first: float,
    between: float,
    where: str,
    provider: str,
) -> Iterator[str]:
    """The deltas of `open_stream()`, failing with LLMTimeout when the first one takes
    longer than `first` seconds or a later one longer than `between`.

    An HTTP read timeout cannot tell the two apart, and servers that send keep-alive
    comments while they think would never trip it; so the stream is read in a thread and
    the deltas are waited for here. Abandoned, the reader stops at its next delta or when
    its own (longer) read timeout ends it.
    """
    box: queue.Queue[tuple[str, object]] = queue.Queue()
    stop = threading.Event()

    def pump() -> None:
        try:
            deltas = open_stream()
            try:
                for delta in deltas:
                    box.put(("delta", delta))
                    if stop.is_set():
                        return
            finally:
                close = getattr(deltas, "close", None)
                if close is not None:
                    close()  # in this thread, the one iterating it: ends the HTTP response
        except BaseException as error:  # handed over, raised in the caller's thread
            box.put(("error", error))
            return
        box.put(("end", None))

    threading.Thread(target=pump, name="llm-stream", daemon=True).start()
    wait, seen = first, False
    try:
        while True:
            if box.empty():
                release_database()
            try:
                kind, value = box.get(timeout=wait)
            except queue.Empty:
                if seen:
                    why = (
                        f"The provider at {where} stopped sending text for {between:g} s "
                        "mid-answer (between-token timeout)."
                    )
                else:
                    why = (
                        f"The provider at {where} sent no text within {first:g} s "
                        "(first-token timeout)."
                    )
                raise failed(provider, "stream", LLMTimeout(why)) from None
            if kind == "end":
                return
            if kind == "error":
                assert isinstance(value, BaseException)
                raise value
            assert isinstance(value, str)
            yield value
            wait, seen = between, True
    finally:
        stop.set()


def release_database() -> None:
    """While this thread waits on a model, its database connection goes back to the pool.

    A stream worker runs hundreds of streams in threads, each idle on its socket most of the
    time; held across the waits, their connections would exhaust the pool (and PostgreSQL's
    max_connections). The next query takes one again. A connection inside a transaction
    (the bones' last try holds the frame's lock across its call) stays where it is.
    """
    pooled = connection.vendor == "postgresql" and connection.pool is not None
    if pooled and connection.connection is not None and not connection.in_atomic_block:
        connection.close()
