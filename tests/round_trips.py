"""Round trips to PostgreSQL, counted from libpq's own trace of the protocol."""

import tempfile
from collections.abc import Iterator
from contextlib import contextmanager

from django.db import connection


@contextmanager
def round_trips() -> Iterator[list[int]]:
    """Counts the round trips to PostgreSQL in the block, from libpq's own trace of the
    protocol: each time the server answers what the client sent since its last answer."""
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
        sides = [line[0] for line in trace if line[:1] in ("F", "B")]
    counted.append(sum(1 for a, b in zip(sides, sides[1:], strict=False) if (a, b) == ("F", "B")))
