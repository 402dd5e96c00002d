"""Round trips to PostgreSQL, counted from libpq's own trace of the protocol."""

import tempfile
from collections.abc import Iterator
from contextlib import contextmanager

from django.db import connection

# A round trip ends where the client must wait for the server: a Sync (the extended
# protocol, a pipeline's end) or a simple Query. Counted from what the client sent, not
# from how the server's answers interleave with it: a pipeline whose first answers arrive
# before its last statements were sent (a busy host, answers over a packet) is one wait.
WAITS = {"Sync", "Query"}
# psycopg keeps each connection's cache of prepared statements in exchanges of their own:
# it prepares a statement at its third run (prepare_threshold 2), and past `prepared_max`
# statements closes the oldest. When either happens depends on what earlier tests ran on
# the connection, so neither is counted.
CACHE_UPKEEP = ({"Parse", "Sync"}, {"Close", "Sync"})


@contextmanager
def round_trips() -> Iterator[list[int]]:
    """Counts the round trips to PostgreSQL that this thread's connection makes in the
    block, from libpq's own trace of the protocol: each time the client waits for the
    server (but the upkeep of its prepared statements, `CACHE_UPKEEP`). Another thread's
    work (the suite's worker) is on another connection and never counted."""
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
        counted.append(counted_in(list(trace)))


def counted_in(trace: list[str]) -> int:
    """The round trips in a libpq trace (one message a line, "F" or "B", its length, its
    kind, …): what the client sent, cut where it waited, but the cache's upkeep."""
    waits: list[set[str]] = []
    pending: set[str] = set()
    for line in trace:
        fields = line.split("\t")
        if fields[0] != "F" or len(fields) < 3:
            continue
        kind = fields[2].strip()
        pending.add(kind)
        if kind in WAITS:
            waits.append(pending)
            pending = set()
    return sum(1 for kinds in waits if kinds not in CACHE_UPKEEP)
