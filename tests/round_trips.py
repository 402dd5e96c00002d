"""Round trips to PostgreSQL, counted from libpq's own trace of the protocol."""

import tempfile
from collections.abc import Iterator
from contextlib import contextmanager

from django.db import connection

# psycopg keeps each connection's cache of prepared statements in exchanges of their own:
# it prepares a statement at its third run (prepare_threshold 2), and past `prepared_max`
# statements closes the oldest. When either happens depends on what earlier tests ran on
# the connection, so neither is counted.
CACHE_UPKEEP = (
    ({"Parse", "Sync"}, {"ParseComplete", "ReadyForQuery"}),
    ({"Close", "Sync"}, {"CloseComplete", "ReadyForQuery"}),
)


@contextmanager
def round_trips() -> Iterator[list[int]]:
    """Counts the round trips to PostgreSQL in the block, from libpq's own trace of the
    protocol: each time the server answers what the client sent since its last answer
    (but the upkeep of its prepared statements, `CACHE_UPKEEP`)."""
    from psycopg import pq

    connection.ensure_connection()
    pgconn = connection.connection.pgconn
    counted: list[int] = []
    with tempfile.TemporaryFile("w+") as trace:
        pgconn.trace(trace.fileno())
        pgconn.set_trace_flags(pq.Trace.SUPPRESS_TIMESTAMPS)
        try:
            yield counted
        finally:
            pgconn.untrace()
        trace.seek(0)
        messages = [line.split("\t") for line in trace if line[:1] in ("F", "B")]
    exchanges = _exchanges(messages)
    counted.append(sum(1 for exchange in exchanges if exchange not in CACHE_UPKEEP))


def _exchanges(messages: list[list[str]]) -> list[tuple[set[str], set[str]]]:
    """The trace as exchanges: what the client sent, then what the server answered."""
    exchanges: list[tuple[set[str], set[str]]] = []
    for side, _length, kind, *_ in messages:
        kind = kind.strip()
        if side == "F" and (not exchanges or exchanges[-1][1]):
            exchanges.append((set(), set()))
        if exchanges:
            exchanges[-1][0 if side == "F" else 1].add(kind)
    return [(sent, answered) for sent, answered in exchanges if answered]
